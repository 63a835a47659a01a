"""`emit`: a target (engine/lang/target.py) as the text of a Python module that needs only
numpy: the primal `f`, and `f_vjp` (adjoint mode) and/or `f_jvp` (tangent mode), with the
helpers each reaches; a header says what was differentiated with respect to what. A function
with the program's own rule (custom_vjp, custom_jvp) is written by its rule (emit/custom.py), an
in-program derivative (grad(h)(x), jvp, vjp) as a helper running h's sweeps (emit/derivatives.py)."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError, option
from ..core.backend import np
from ..core.complexes import is_complex, is_integer_data, point_value
from ..lang.names import walk
from ..lang.target import bind_inputs
from ..diff.common import integer_wrt
from .activity import analyse, walk_ir
from .examples import Examples
from .liveness import tidied
from .closures import lifted, named_derivatives
from .adjoint import Adjoint, binding, unbound_saves
from .custom import adjoint_sweeps, program_rules, reached, tangent_sweep
from .derivatives import (check_derivatives, derivative_helpers, derivatives_in, inner_functions, second_order_lines,
                          tangent_name, tangent_program)
from .lower import DERIVATIVES, DIRECTIONAL, OUT, Call, Derivative, Lowering, Plain, refuse
from .rule_text import NotEmitted, with_scipy_import
from .sweeps import INDENT, NeedsShapes, Writer, inlinable, no_shapes, read_by_rules, zeros_of
from .tangent import Tangent, tan
from .records import flattened_records
from .tuple_helpers import split_tuple_helpers

MODES = ("adjoint", "tangent", "both")


def program_functions(target) -> tuple:
    """(FunctionDefs by name, the name of the one to emit, top-level statements)."""
    return program_parts(target)[:3]


def program_parts(target) -> tuple:
    """program_functions' three, and the program's custom rules by function (emit/custom.py):
    their statements leave the top level, a custom_jvp rule's tangent function joins the defs."""
    if target.kind == "expression":
        body = (nodes.Return(target.node.body, target.node.span),)
        return {"f": nodes.FunctionDef("f", tuple(target.inputs), body, target.node.span)}, "f", [], {}
    module = target.node
    defs = {s.name: s for s in module.body if isinstance(s, nodes.FunctionDef)}
    rules, statements, derived = program_rules(module.body, defs)
    defs.update(derived)
    defs = flattened_records(defs)          # a dict of constant string keys: one name per key
    defs = split_tuple_helpers(defs)        # a helper returning a tuple whose items are unpacked: one per item
    top = [s for s in statements if not isinstance(s, (nodes.FunctionDef, nodes.Import))]
    if target.kind == "function":
        return defs, target.fn_name, top, rules
    exprs = [s for s in top if isinstance(s, nodes.ExprStmt)]
    body = [s for s in top if not isinstance(s, nodes.ExprStmt)]
    out = nodes.Name(target.output_name, module.span) if target.output_name else exprs[-1].value
    body.append(nodes.Return(out, module.span))
    return {"f": nodes.FunctionDef("f", tuple(target.inputs), tuple(body), module.span)}, "f", [], rules


def lowered(defs: dict, top: list, target_name=None, at=None, complex_run=False) -> tuple:
    """`at`: the point, whose arrays' ranks the target's parameters have (a norm's ord reads them)."""
    global_names = {t.id for s in top if isinstance(s, nodes.Assign) for t in s.targets}
    defs, closures = lifted(named_derivatives(defs, DERIVATIVES + DIRECTIONAL), global_names)
    ranks = {p: np().ndim(v) for p, v in (at or {}).items()}
    shapes = {p: np().shape(v) for p, v in (at or {}).items()}
    glob = Lowering(defs, global_names)
    statements = []
    for s in top:
        if not isinstance(s, nodes.Assign):
            refuse("a top-level statement other than an assignment", s.span)
        statements += glob.statement(s)
    for s in statements:
        if isinstance(s, (Call, Derivative)):       # the module's top runs before its functions are defined
            refuse("a call of a function of the program at the top level", s.span if isinstance(s, Derivative) else
                   nodes.Span(s.line, 1, s.line, 1), "call it inside the function emitted")
    constants = constant_ranks(statements, global_names) if at is not None else {}
    functions = {name: Lowering(defs, global_names, closures.get(name, {}), ranks if name == target_name else None,
                                shapes if name == target_name else None, constants,
                                complex_run).function(d, name == target_name)
                 for name, d in defs.items()}
    return functions, statements


def constant_ranks(statements, global_names) -> dict:
    """The ranks of the module's constants (its top-level names), its statements run as they are
    where the point is given (emit/examples.py): np.dot(X, w) of a constant X reads X's."""
    ex = Examples({})
    ex.run_globals(statements)
    return {n: np().ndim(v) for n, v in ex.globals.items() if n in global_names}


def emit_module(target, wrt: list | None = None, mode: str = "adjoint", explain: bool = False,
                version: str = "", at: dict | None = None) -> str:
    """The module's text; SourceError (exit 2) for what is not emitted yet, naming it and its line.
    `at`: a point (name -> value); where it holds an array, the rules are written at the shapes the
    program's values take there (emit/examples.py), and the emitted functions check those shapes."""
    try:
        try:
            return _emit(target, wrt, mode, explain, version, at)
        except NeedsShapes:
            if at is None:
                raise
            return _emit(target, wrt, mode, explain, version, at, shaped=True)   # at the point's shapes
    except NotEmitted as exc:
        raise SourceError("not emitted", f"emit: {exc}; it is not emitted yet", None,
                          "differentiate it with `autodiff grad` instead", source=target.source,
                          filename=target.filename) from None
    except SourceError as exc:
        raise exc.with_source(target.source, target.filename)


def _emit(target, wrt, mode, explain, version, at, shaped=False) -> str:
    defs, name, top, rules = program_parts(target)
    complex_run = complex_values(target, at)
    functions, globals_ = lowered(defs, top, name, at, complex_run)
    params, defaults = functions[name].params, functions[name].defaults
    inputs = [p for p in params if p not in defaults or (at is not None and p in at)]
    for w in wrt or ():
        if w in defaults and w not in inputs:       # as `autodiff grad` says it (diff/common.py's check_wrt)
            raise SourceError("unknown input", f"{option('wrt')} {w}: a parameter with a default is an input only "
                              "when given", None, f"give it with {option('at')} {w}=...")
    if at is not None:          # a defaulted parameter not given keeps its default (a constant), as `grad` runs it
        at = {**{p: v for p, v in defaults.items() if p not in at}, **at}
    wrt = differentiated(wrt, inputs, at)
    unknown = [w for w in wrt if w not in params]
    if unknown:
        raise SourceError("usage", f"--wrt {unknown[0]}: {name} has no parameter {unknown[0]!r} "
                          f"(its parameters: {', '.join(params)})")
    missing = [p for p in params if at is not None and p not in at]
    if missing:
        raise SourceError("usage", f"--at: no value for {missing[0]} (the point gives every input of "
                          f"{name}: {', '.join(params)})")
    if at is not None:
        bind_inputs(target.given(at), at)       # a name the target has no input of is refused, as `grad` refuses it
    check_derivatives(functions, name, rules)
    facts = analyse(functions, name, wrt, rules)
    if complex_run:
        refuse_complex_slogdet_sign(target)
    shapes = shaped_at(functions, name, globals_, at, shaped or complex_run, rules)
    written = (functions, name, globals_, wrt, facts, mode, explain, rules)
    lines = _written(*written, shapes)
    longer = None if shapes is None else other_lengths(functions, name, globals_, at, rules)
    if shapes is None:
        guard = same_shapes(params)
    elif longer is not None and not any(f.point_shapes for f in functions.values()) and \
            _written(*written, longer) == lines:
        guard = same_ranks(params, at)          # the text is the same at other lengths
    else:
        guard = fixed_shapes(params, at)
    complex_at = [p for p in params if shapes is not None and is_complex(shapes.inputs[p])]
    guard = guard + real_only([p for p in params if p not in complex_at]) + as_complex(complex_at)
    lines = [x for line in lines for x in (guard if line == GUARD else [line])]
    lines = header(target, name, params, wrt, mode, version) + lines
    complex_wrt = [w for w in wrt if shapes is not None and is_complex(shapes.inputs[w])]
    if complex_wrt and mode != "tangent":        # the convention stated where the module says what it returns
        lines.insert(lines.index("import numpy as np"), f"# the gradient of a complex input ({', '.join(complex_wrt)}): "
                     "dL/dx + i dL/dy, as `autodiff grad` reports it (PyTorch's convention; JAX's is its conjugate)")
    if complex_output(shapes) and mode != "tangent":
        lines.insert(lines.index("import numpy as np"), COMPLEX_OUTPUT_NOTE)
    if any("operator." in line for line in lines):     # a rule's in-place operator (a scatter's +=)
        lines.insert(lines.index("import numpy as np"), "import operator")
    return "\n".join(with_scipy_import(lines)).rstrip() + "\n"


GUARD = "<the check of the inputs' shapes>"


def differentiated(wrt, inputs, at) -> list:
    """--wrt, or every input but integer data (labels, indices: a constant of the run, taken by
    the emitted function as given), as `autodiff grad` takes them (diff/common.py's check_wrt)."""
    integers = [p for p in inputs if at is not None and p in at and is_integer_data(at[p])]
    for w in wrt or ():
        if w in integers:
            raise integer_wrt(w)
    return list(wrt or [p for p in inputs if p not in integers])


def real_only(names) -> list:
    """The check that inputs real at the point are real when called: their rules were written for
    real values (a complex one would take none of its complex paths and give a wrong number)."""
    if not names:
        return []
    items = "".join(f"{n}, " for n in names)
    return [f"{INDENT}if any(np.iscomplexobj(v) for v in ({items})):",
            f"{INDENT}{INDENT}raise TypeError('emitted for real inputs ({', '.join(names)}): emit again at a point "
            "where they are complex')"]


def as_complex(names) -> list:
    """The lines that take each of `names` (inputs complex at the point, or their tangents) as
    numpy's complex values, as the rules' text was traced at (numpy's imag of Python's 1+2j, or of
    a real direction, is Python's float, which the complex path's text does not take)."""
    return [f"{INDENT}{n} = np.asarray({n}, dtype=complex)[()]" for n in names]


def complex_values(target, at) -> bool:
    """Whether the point gives a complex value or the program writes a complex constant (1+2j,
    complex(a, b)): then the rules are traced at the values the point's run meets (complex ones
    complex, so each rule takes its complex path: emit/rule_text.py's stand-ins), which the
    elementwise text, traced on real stand-ins, is not; without a point that is refused there."""
    written = next((n for n in walk(target.node, bindings=False) if n.__class__ is nodes.Num and
                    n.value.__class__ is complex or n.__class__ is nodes.Call and
                    getattr(n.func, "id", None) == "complex"), None)
    if written is not None and at is None:
        raise NeedsShapes("not emitted", "emit: the rules of a complex value are written at the values it meets "
                          "(their complex forms), and no point was given", written.span,
                          "give the point to emit at with --at NAME=VALUE,...")
    return written is not None or any(is_complex(v) for v in (at or {}).values())


def refuse_complex_slogdet_sign(target) -> None:
    """A complex run's slogdet other than its log|det| (`slogdet(A)[1]`): the sign of a complex
    det is det/|det|, a function of A with a derivative, which emit's slogdet writes as a
    constant (the sign of a real det is one)."""
    logs = {id(n.value) for n in walk(target.node, bindings=False) if n.__class__ is nodes.Subscript and
            len(n.index) == 1 and n.index[0].__class__ is nodes.Num and n.index[0].value == 1}
    for n in walk(target.node, bindings=False):
        if n.__class__ is nodes.Call and getattr(n.func, "id", None) == "slogdet" and id(n) not in logs:
            refuse("the sign of slogdet of complex values (det/|det|, whose derivative emit does not write)", n.span,
                   "take slogdet(A)[1] alone, or differentiate it with `autodiff grad`")


COMPLEX_OUTPUT_NOTE = ("# the output is complex: f_vjp(..., cotangent=v) returns J^H v, Re<J u, v> = Re<u, J^H v> "
                       "with Re<a, b> = Re sum(a conj(b)) (the real transpose of the real blocks `autodiff jacobian` "
                       "prints; PyTorch's convention); JAX's vjp is conj(J^H conj(v))")


def complex_output(shapes) -> bool:
    """Whether the target's value at the point is complex: its adjoint's seed is the cotangent's
    conjugate, so that f_vjp returns J^H v (with the reported gradient's conjugate at the
    return, `reported`): the cotangent 1.0 of a real output reads the same."""
    return shapes is not None and is_complex(shapes.output)


def _written(functions, name, globals_, wrt, facts, mode, explain, rules, shapes) -> list:
    """The module's functions, their rules written at `shapes` (None: elementwise), each
    differentiated function's check of its inputs' shapes left as the line GUARD."""
    p = Parts(functions, name, wrt, facts, explain, shapes, rules, sweep_names(functions))
    recursive = any(isinstance(s, Call) and s.function == name for f in facts for s in walk_ir(functions[f].body))
    if recursive:           # its own calls run its sweeps, named apart from its _vjp and _jvp
        base = f"{p.sweeps.get(name, name)}_sweep"
        while any(f"{base}_{x}" in functions for x in ("fwd", "rev", "jvp")):
            base += "_sweep"
        p.sweeps[name] = base
    w = Writer()
    w.examples = shapes
    lines = w.primal(globals_, "") + ([""] if globals_ else [])
    for fname in reached(functions, [n for n in functions if n in facts or n == name], rules):
        lines += plain_function(functions[fname], set(), shapes, [GUARD] if fname == name and shapes is not None else [])
    derivatives = derivatives_in(functions, reached(functions, list(facts), rules))
    inner = inner_functions(functions, facts, [d for d in derivatives if d[1] not in ("jvp", "hessian")], rules)
    inner_tangents = [n for n in functions if n in reached(functions, [h for h, k, _ in derivatives if k == "jvp"],
                                                           rules, through_derivatives=False) and n in facts]
    for fname in inner:                 # the sweeps the in-program derivatives run, in every mode
        lines += function_sweeps(p, fname)
    for fname in inner_tangents:
        lines += tangent_function(p, fname)
    lines += derivative_helpers(functions, derivatives, p.grads, lambda f: p.sweeps.get(f, f), p.facts,
                                lambda key: p.tangent_of(first_derivative(functions, key)))
    if mode in ("adjoint", "both"):
        lines += (function_sweeps(p, name) if recursive else []) + adjoint_functions(p, [GUARD], skip=set(inner))
    if mode in ("tangent", "both"):
        lines += (tangent_function(p, name, helper=True) if recursive else []) + \
            tangent_functions(p, [GUARD], skip=set(inner_tangents))
    return lines + [line for key in sorted(p.second) for line in p.second[key][0]]


def other_lengths(functions, name, globals_, at, rules=None):
    """The values each statement meets at the point made longer (each length n > 1 of the
    inputs' axes n + 1, so lengths equal at the point stay equal, and 1 stays 1), or None where
    the program does not run there (its text is then checked at the point's shapes only)."""
    numpy = np()
    longer = {}
    for p, v in at.items():
        shape = tuple(n + 1 if n > 1 else n for n in numpy.shape(v))
        longer[p] = v if not shape else numpy.resize(v, shape) if is_integer_data(v) else \
            numpy.resize(numpy.asarray(point_value(v)), shape) * (1.0 + 0.01 * numpy.arange(
                numpy.prod(shape)).reshape(shape))
    try:
        return shaped_at(functions, name, globals_, longer, True, rules)
    except (SourceError, NotEmitted):
        return None




class Parts:
    """What the sweeps of one emitted module are written from: the lowered functions, the one
    emitted, the activity facts, the custom rules, the sweeps' names; `grads[f]`: the parameters
    whose adjoints f's reverse sweep returns (of a custom function: every active one, its rule's)."""

    def __init__(self, functions, name, wrt, facts, explain, shapes, rules, sweeps):
        self.functions, self.name, self.wrt, self.facts = functions, name, wrt, facts
        self.explain, self.shapes, self.rules, self.sweeps = explain, shapes, rules, sweeps
        self.grads = {n: [p for p in functions[n].params if p in facts[n][1] and (n in rules or p in facts[n][2])]
                      for n in facts}
        self.second: dict = {}          # h -> (the lines of h's tangent program and its adjoint, h_tan's tangents)

    def second_order(self, s, refusal) -> tuple:
        """(`h_tan`, the parameters whose tangents it takes after h's) for the derivative `s`
        takes of h: `h_tan_vjp(args, d..., cotangent)[1]` is the Hessian of h times d, one entry
        per parameter of h (reverse over forward: the adjoint of h's tangent program, both
        written by emit, emit/derivatives.py); `refusal()` raises where it is not a grad's."""
        if s.kind == "hessian":
            raise SourceError("not emitted", f"emit: the derivative of `{s.name}`'s value (a third-order derivative: "
                              "the output's derivative goes through the Hessian) is not emitted yet",
                              s.span or nodes.Span(s.line, 1, s.line, 1), "differentiate it with `autodiff grad`, or "
                              "cut it with stop_gradient(hessian(h)(x)) where its own derivative is not wanted")
        if s.kind != "grad":
            refusal()
        return self.tangent_of(s)

    def tangent_of(self, s) -> tuple:
        """(`h_tan`, the parameters it takes tangents of) for the derivative `s` takes of h."""
        h = s.function
        if h not in self.second:
            self.second[h] = self.tangent_adjoint(s)
        return tangent_name(h, h), self.second[h][1]

    def tangent_adjoint(self, s) -> tuple:
        """(the lines of h's tangent program's adjoint, the parameters h_tan takes tangents of)."""
        h = s.function
        params = self.functions[h].params

        def refusal(why, hint="differentiate it with `autodiff grad`, or cut it with stop_gradient(...) where its "
                               "own derivative is not wanted", error=SourceError):
            what = f"`{s.name}`" if s.kind == "hessian" else f"the derivative of `{s.name}`'s value (a " \
                "second-order derivative: the output's derivative goes through this in-program derivative)"
            hint = "take the Hessian with `autodiff hessian` instead" if s.kind == "hessian" else hint
            raise error("not emitted", f"emit: {what} is not emitted yet: {why}", s.span or nodes.Span(s.line, 1, s.line, 1),
                        hint)
        facts = analyse(self.functions, h, list(params), self.rules, through=True)
        custom = next((n for n in self.functions if n in facts and n in self.rules), None)
        if custom is not None:
            refusal(f"`{custom}` has a custom rule, whose own derivative emit does not write")
        base = tangent_name(h, h)
        if any(g == base or g.startswith(base + "_") for g in self.functions):
            refusal(f"its helpers would be named `{base}...`, as a function of the program is", "rename that function")
        values = dict(zip(params, self.shapes.calls.get(id(s), ()))) if self.shapes is not None else {}
        elementwise = len({np().shape(v) for v in values.values()}) <= 1 and not (self.shapes is not None and self.shapes.complex)
        tries = ([None] if elementwise else []) + ([self.shapes] if self.shapes is not None else [])
        for k, shapes in enumerate(tries):      # elementwise where it can be (its text the plainer), else at shapes
            try:
                text, given, prefix = tangent_program(self.functions, h, facts, shapes, refusal)
                at = None if shapes is None else {**values, **{f"{prefix}{q}": values[q] for q in given if q in values}}
                try:
                    return second_order_lines(text, h, list(params), emit_module, at), given
                except NeedsShapes:
                    raise
                except SourceError as exc:
                    refusal(f"{exc.message} (in the tangent program of `{h}` it is differentiated through)")
            except NeedsShapes as exc:
                if k + 1 == len(tries):
                    refusal(exc.message, exc.hint, NeedsShapes)


def first_derivative(functions, key):
    """The first in-program derivative statement that takes `key` (h, kind, argnum)."""
    return next(s for f in functions.values() for s in walk_ir(f.body)
                if isinstance(s, Derivative) and (s.function, s.kind, s.argnum) == key)


def sweep_names(functions) -> dict:
    """A function whose sweeps' names (`f_fwd`, `f_rev`, `f_jvp`) a function of the program takes
    (JAX's `f_fwd` rule) has its sweeps named `f_sweep_fwd`..."""
    out = {}
    for n in functions:
        base = n
        while any(f"{base}_{s}" in functions for s in ("fwd", "rev", "jvp")):
            base += "_sweep"
        if base != n:
            out[n] = base
    return out


def shaped_at(functions, name, globals_, at, shaped=False, rules=None):
    """The values each statement meets at `at` (emit/examples.py) where the point holds an array
    (or `shaped`), else None (the rules written elementwise, for inputs of any one shape); a
    construct whose text needs shapes (a reduction, indexing, matmul, an array constant) then
    raises NeedsShapes with its line."""
    numpy = np()
    if at is None or not (shaped or any(numpy.ndim(v) for v in at.values())):
        for s in [*globals_, *(x for f in functions.values() for x in walk_ir(f.body))]:
            if isinstance(s, Plain) and s.text.startswith("np.array("):
                no_shapes(s.line, "an array constant's derivatives are written at its shape")
        return None
    ex = Examples(functions, rules)
    ex.run_globals(globals_)
    fn = functions[name]
    inputs = {p: point_value(at[p]) for p in fn.params}
    output = ex.call(name, list(inputs.values()))
    out = Shapes(ex.of)
    out.inputs, out.output, out.calls = inputs, output, ex.calls
    out.complex = any(is_complex(v) for v in out.inputs.values()) or \
        any(is_complex(v) for met in ex.of.values() for v in met)
    return out


class Shapes(dict):
    """The values each statement met at the point (id(statement) -> values), and `output`: the
    target's value there (complex: it has no adjoint emitted), `inputs` the point's values,
    `complex`: whether any value is complex (the reported gradient's convention applies, `reported`)."""
    output = None
    inputs: dict = {}
    calls: dict = {}            # id(an in-program derivative) -> the values of its arguments at the point
    complex = False


def fixed_shapes(params, at) -> list:
    """The emitted derivatives hold at the shapes they were written at: checked at entry."""
    numpy = np()
    shapes = [numpy.shape(at[p]) for p in params]
    said = ", ".join(f"{p} {s}" for p, s in zip(params, shapes))
    return [f"{INDENT}if ({''.join(f'np.shape({p}), ' for p in params)}) != ({''.join(f'{s}, ' for s in shapes)}):",
            f"{INDENT}{INDENT}raise ValueError('emitted for the shapes {said}: emit again at a point of the new shapes')"]


def same_ranks(params, at) -> list:
    """The emitted derivatives hold at other lengths of the same ranks (their text named each
    operand's shape, and was the same at other lengths), where the lengths equal at the point
    stay equal and those of 1 stay 1 (which broadcasting and the rules' paths read): checked at entry."""
    numpy = np()
    shapes = [numpy.shape(at[p]) for p in params]
    ranks = tuple(len(s) for s in shapes)
    lengths = [n for s in shapes for n in s]
    pattern = [lengths.index(n) if n != 1 else -1 for n in lengths]
    said = ", ".join(f"{p} {s}" for p, s in zip(params, shapes))
    args = "".join(f"{p}, " for p in params)
    return [f"{INDENT}_lengths = {' + '.join(f'np.shape({p})' for p in params)}",
            f"{INDENT}if tuple(np.ndim(v) for v in ({args})) != {ranks!r} or "
            f"[_lengths.index(n) if n != 1 else -1 for n in _lengths] != {pattern!r}:",
            f"{INDENT}{INDENT}raise ValueError('emitted for the shapes {said} and others of these ranks whose "
            "lengths equal there are equal (and those of 1 are 1): emit again at a point of the new shapes')"]


def same_shapes(params) -> list:
    """The emitted derivatives are elementwise (emit/rule_text.py): every input one shape, checked."""
    if len(params) < 2:
        return []
    first, rest = params[0], ", ".join(params[1:]) + ("," if len(params) == 2 else "")
    return [f"{INDENT}if any(np.shape(v) != np.shape({first}) for v in ({rest})):",
            f"{INDENT}{INDENT}raise ValueError('emitted for inputs of one shape (numbers, or arrays of one shape)')"]


def header(target, name, params, wrt, mode, version) -> list:
    source = target.filename or f"the expression {target.source!r}"
    fn = f"function {name}({', '.join(params)})" if target.kind == "function" else \
        ("the expression as f(" + ", ".join(params) + ")" if target.kind == "expression" else
         f"the script as f({', '.join(params)})")
    outputs = [f"{name}(...) -> the value"]
    if mode in ("adjoint", "both"):
        outputs.append(f"{name}_vjp(..., cotangent=1.0) -> (value, ({', '.join('d/d' + w for w in wrt)}) "
                       "times cotangent)")
    if mode in ("tangent", "both"):
        outputs.append(f"{name}_jvp(..., {', '.join('d_' + w for w in wrt)}) -> (value, directional derivative)")
    tool = f"autodiff {version}" if version else "autodiff"
    return [f"# Generated by `autodiff emit` ({tool}): derivative source code.",
            f"# source: {source}, {fn}",
            f"# mode: {mode}",
            f"# differentiated inputs: {', '.join(wrt)}",
            *[f"# output: {o}" for o in outputs],
            "# Each statement ends with the source line it comes from. Regenerate rather than edit.",
            "import numpy as np", "", ""]


def kept(fn, fact, shaped=False) -> set:
    """The temporaries a sweep reads again (not inlined)."""
    if fact is None:
        return set()
    _, active, useful = fact
    return read_by_rules(fn.body, active, useful, shaped) | useful


def plain_function(fn, keep, shapes=None, guard=()) -> list:
    """The primal: the source's computation as numpy (its result returned where it is made);
    `guard`: its check of the inputs' shapes first."""
    w = Writer(inline=inlinable(fn, keep))
    w.examples = shapes
    body = [*guard, *w.primal(fn.body, INDENT)]
    last = body[-1] if body else ""
    if last.startswith(f"{INDENT}{OUT} = ") and sum(line.lstrip().startswith(f"{OUT} = ") for line in body) == 1:
        body[-1] = f"{INDENT}return {last[len(INDENT) + len(OUT) + 3:]}"
        return [f"def {fn.name}({fn.signature()}):", *body, "", ""]
    return [f"def {fn.name}({fn.signature()}):", *body, f"{INDENT}return {OUT}", "", ""]


def adjoint_writer(p: Parts, fname):
    fn, fact = p.functions[fname], p.facts[fname]
    shaped = p.shapes is not None
    a = Adjoint(fn, fact[1], fact[2], p.grads, p.explain, inlinable(fn, kept(fn, fact, shaped)), shaped)
    a.fn_params, a.examples, a.sweeps = {n: f.params for n, f in p.functions.items()}, p.shapes, p.sweeps
    a.second_order = p.second_order
    return a


def function_sweeps(p: Parts, fname) -> list:
    """A helper's `_fwd` and `_rev` (a custom function's by its rule, emit/custom.py)."""
    if fname in p.rules:
        return adjoint_sweeps(p.rules[fname], p.functions[fname].params, p.grads, lambda f: p.sweeps.get(f, f))
    return helper_adjoint(p.functions[fname], adjoint_writer(p, fname), p.grads[fname])


def adjoint_functions(p: Parts, guard=(), skip=frozenset()) -> list:
    name, wrt = p.name, p.wrt
    lines = []
    for fname in p.facts:
        if fname in skip:
            continue
        if fname != name:
            lines += function_sweeps(p, fname)
            continue
        fn = p.functions[fname]
        a = adjoint_writer(p, fname)
        forward = a.forward(fn.body, INDENT)
        reverse = a.reverse(fn.body, INDENT)
        result = ", ".join(reported(p.shapes, w, a.result(w)) for w in wrt)
        stack = [f"{INDENT}_stack = []"] if any("_stack" in line for line in forward + reverse) else []
        seed = f"{INDENT}_out_b = {seed_text(p.shapes)}"
        lines += [f"def {name}_vjp({fn.signature()}, cotangent=1.0):", *stack, *guard,
                  *a.undefined(INDENT), *forward, *tidied([seed, *a.initial(INDENT), *reverse,
                                                           f"{INDENT}return {OUT}, ({result}{',' if len(wrt) == 1 else ''})"]),
                  "", ""]
    return lines


def seed_text(shapes) -> str:
    """The reverse sweep's seed: the cotangent (of the output's shape); where the point holds
    complex values numpy's complex value of it (as the rules' text was traced at, emit/sweeps.py's
    `adjoint_example`), of a complex output its conjugate: f_vjp returns J^H v, the sweep (the plain
    transpose) of conj(v), conjugated at the return (`reported`)."""
    given = "np.broadcast_to(cotangent, np.shape(_out)) if np.ndim(_out) else cotangent"
    if shapes is None or not shapes.complex:
        return given
    if complex_output(shapes):
        return f"np.conj(np.asarray({given}, dtype=complex))[()]"
    return f"np.asarray({given}, dtype=complex)[()]"


def reported(shapes, w, adjoint: str) -> str:
    """The gradient f_vjp returns for the input `w` from its sweep's adjoint (the text `adjoint`,
    "0.0" where none reached it): as `autodiff grad` reports it (core/rules/complexes.py's
    `reported_gradient`): of a complex input the conjugate, dL/dx + i dL/dy (PyTorch's
    convention; the sweep's own is JAX's), of a real input among complex values the real part."""
    complex_input = shapes is not None and is_complex(shapes.inputs.get(w))
    if adjoint == "0.0":
        return f"np.zeros(np.shape({w}), dtype=complex)" if complex_input else zeros_of(w)
    if complex_input:
        return f"np.conj({adjoint})"
    return f"np.real({adjoint})" if shapes is not None and shapes.complex else adjoint


def helper_adjoint(fn, a, grads) -> list:
    forward = a.forward(fn.body, INDENT)
    reverse = a.reverse(fn.body, INDENT)
    local = set(fn.params) | {getattr(s, "target", None) for s in walk_ir(fn.body)}     # not the module's constants
    kept = sorted(n for n in read_by_rules(fn.body, a.active, a.useful, a.shaped) | {OUT} if n in local)
    unbound = (set(kept) - binding(fn)) | unbound_saves(fn, a.saves)
    undefined = [f"{INDENT}{n} = None" for n in sorted(unbound)]
    pack = f"({', '.join(kept)},)"
    base = a.sweep(fn.name)
    return [f"def {base}_fwd(_stack, {', '.join(fn.params)}):", *undefined, *forward,
            f"{INDENT}_stack.append({pack})", f"{INDENT}return {OUT}", "", "",
            f"def {base}_rev(_stack, _out_b):", *tidied([f"{INDENT}{pack} = _stack.pop()", *a.initial(INDENT), *reverse,
                                                          f"{INDENT}return ({''.join(a.result(p) + ', ' for p in grads)})"]),
            "", ""]


def tangent_functions(p: Parts, guard=(), skip=frozenset()) -> list:
    """The tangents of the target and the functions it calls (not those only an in-program
    gradient runs, nor those `skip` names, written already)."""
    called = reached(p.functions, [p.name], p.rules, through_derivatives=False)
    lines = []
    for fname in [n for n in p.facts if n in called and n not in skip]:
        lines += tangent_function(p, fname, guard)
    return lines


def tangent_function(p: Parts, fname, guard=(), helper=False) -> list:
    """One function's tangent; a custom_jvp function's is its rule's (emit/custom.py), a
    custom_vjp's none (a live call of it is refused), the rules' tangent functions are called as
    they are. `helper`: the target's own as its calls of itself call it (a recursive target)."""
    active_params = {n: p.facts[n][0] for n in p.facts}
    fn, fact = p.functions[fname], p.facts[fname]
    rule = p.rules.get(fname)
    if rule is not None or fname in {r.tangent for r in p.rules.values()}:
        if rule is not None and rule.kind == "custom_jvp":
            return tangent_sweep(rule, fn.params, active_params[fname], lambda f: p.sweeps.get(f, f))
        return []
    public = fname == p.name and not helper
    t = Tangent(fn, fact[1], fact[2], active_params, p.functions, p.explain,
                inlinable(fn, kept(fn, fact, p.shapes is not None)))
    t.examples, t.sweeps, t.rules, t.second_order = p.shapes, p.sweeps, p.rules, p.second_order
    body = t.lines(fn.body, INDENT)
    given = [q for q in fn.params if q in active_params[fname]]
    out = tan(OUT) if t.live(OUT) else "0.0"
    if public:
        signature = f"{fn.signature()}, *, {', '.join(tan(w) for w in p.wrt)}"
    else:
        signature = f"{', '.join(fn.params)}, {', '.join(tan(q) for q in given)}"
    complex_tangents = as_complex(tan(w) for w in p.wrt if p.shapes is not None and is_complex(p.shapes.inputs[w]))
    return [f"def {fname if public else t.sweep(fname)}_jvp({signature}):",
            *(guard if public else ()), *(complex_tangents if public else ()), *body, f"{INDENT}return {OUT}, {out}", "", ""]
