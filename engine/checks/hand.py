"""Hand-derived gradients, as people write them (issue 29 item 4): formulas in the language
(compiled once, run at each point; they may call the program's own functions), numbers and arrays,
a function of the program (`hand = "loss_grad"`, `--hand loss_grad`) or a Python callable, each
taking the target's parameters and returning the gradient as a tuple in the order of the inputs
checked, a dict by name, or one array for one input."""
from __future__ import annotations

from dataclasses import replace

from ...parser import nodes, parse_expression
from ...parser.nodes import Span
from ...parser.errors import SourceError, option
from ..core.backend import np, to_device, to_host_value
from ..core.tape import strip
from ..lang.builtins import builtin_names
from ..lang.names import loaded_names, walk
from ..diff.function import ReplayRunner
from ..lang.target import Runner, Target
from ..lang.values import as_input, shape_of

CLAIM_FUNCTION = "__claimed__"     # a formula calling the program's functions, as a function of the program


class HandGradient:
    """Hand-derived gradient entries for the inputs `input_names` (those checked). `spec`: a dict
    of formulas, numbers and arrays by input name; the name of a function of `program` (the target
    being checked); or a Python callable. `variables`: every input of the target, in order (what
    formulas may read; the arguments of a callable, by position)."""

    def __init__(self, spec, input_names, limits=None, what="grad", variables=None, program=None):
        self.names, self.what = list(input_names), what
        self.variables = list(variables or input_names)
        self.parts, self.whole = {}, None
        if callable(spec):
            self.whole = ("callable", spec)
        elif isinstance(spec, str):
            self.whole = ("function", Runner(program_function(program, spec, what), limits))
        else:
            for name, item in spec.items():
                if name not in input_names:
                    raise SourceError("unknown input", f"{what} gives {name!r}, which is not an input "
                                      f"(the inputs: {', '.join(input_names) or 'none'})")
                self.parts[name] = _part(item, name, what, self.variables, program, limits)

    def at(self, inputs: dict) -> dict:
        if self.whole is not None:
            got = self._whole_at(inputs)
        else:
            got = {name: (runner({k: to_device(inputs[k]) for k in item.inputs}) if kind == "formula" else
                          as_input(np().asarray(item, dtype=np().float64)) if isinstance(item, (list, tuple))
                          else as_input(item)) for name, (kind, item, runner) in self.parts.items()}
        return {name: _shaped(v, inputs[name], name, self.what) for name, v in got.items()}

    def _whole_at(self, inputs: dict) -> dict:
        kind, fn = self.whole
        if kind == "callable":            # its own copies: numpy code may change its arguments in place
            out = fn(*[np().array(inputs[n]) if hasattr(inputs[n], "shape") else inputs[n] for n in self.variables])
        else:
            out = call_in_order(fn, [inputs[n] for n in self.variables])
        return by_name(out, self.names, f"the hand-derived {self.what}" + ("" if kind == "callable" else
                                                                            f" {fn.target.fn_name}"))


def call_in_order(runner, values) -> object:
    """Run a function of the program on `values` by position (a hand function names its parameters
    as it likes: `loss_grad(weights, bias)` for `loss(W, b)`); the output as computed (a tuple stays one)."""
    return strip(runner.run({p: to_device(v) for p, v in zip(runner.parameters, values)}))


def by_name(out, names, what) -> dict:
    """A hand function's result as name -> value: a dict by name, a tuple or list in the order of
    `names`, or one value for one name."""
    out = strip(out)
    if isinstance(out, dict):
        unknown = [k for k in out if k not in names]
        if unknown:
            raise SourceError("unknown input", f"{what} returned a value for {unknown[0]!r}, which is not an input "
                              f"checked (those: {', '.join(names)})")
        missing = [n for n in names if n not in out]
        if missing:
            raise SourceError("missing input", f"{what} returned no value for {', '.join(missing)}")
        return {n: strip(out[n]) for n in names}
    if isinstance(out, (tuple, list)) and not (len(names) == 1 and not isinstance(out, tuple)):
        if len(out) != len(names):
            raise SourceError("bad output", f"{what} returned {len(out)} value{'s' if len(out) != 1 else ''} for "
                              f"{len(names)} input{'s' if len(names) != 1 else ''} ({', '.join(names)})", None,
                              "return one value per input checked, in this order (or a dict by name), or name the "
                              f"inputs it returns with {option('wrt')}")
        return {n: strip(v) for n, v in zip(names, out)}
    if len(names) != 1:
        raise SourceError("bad output", f"{what} returned one value for {len(names)} inputs ({', '.join(names)})",
                          None, f"return a tuple in this order, or a dict by name, or name the input with {option('wrt')}")
    return {names[0]: out}


def _shaped(v, x, name, what):
    """v as the host array (or float) of x's shape; a number fills the shape."""
    if isinstance(v, (list, tuple)):
        v = np().asarray(v, dtype=np().float64)
    elif not isinstance(v, float) and hasattr(v, "dtype") and v.dtype.kind in "iub":
        v = np().asarray(v, dtype=np().float64)
    want, got = shape_of(x), shape_of(v)
    if got != want:
        if got != ():
            transposed = len(want) == 2 and got == want[::-1]
            raise SourceError("shape mismatch", f"the hand-derived {what} for {name} has shape {got}, "
                              f"but {name} has shape {want}", None,
                              f"the claim has the shape of {name}'s transpose: transpose it (.T)" if transposed else None)
        v = np().full(want, float(v))
    return to_host_value(v)       # compared on the host with the AD gradient


def _part(item, name, what, variables, program, limits):
    """One entry of a `grad = {...}` table: ("formula", its target, its runner) or ("value", item, None)."""
    if not isinstance(item, str):
        return ("value", item, None)
    target = expression_target(item, f"{what} {name}")
    functions = [f for f in getattr(program, "functions", ()) if f in called_names(target.node)]
    unknown = [v for v in target.inputs if v not in variables and v not in functions]
    if unknown:
        import difflib
        close = difflib.get_close_matches(unknown[0], list(variables) + list(getattr(program, "functions", ())), n=1)
        hint = f"did you mean {close[0]!r}?" if close else None
        if hint is None and (program is None or program.kind != "function"):
            hint = "a formula reads the inputs; in a check file of a program it may call the program's functions"
        raise SourceError("unknown name", f"{what} {name} = {item!r} uses {unknown[0]!r}, which is "
                          "not an input" + (" nor a function of the program" if program is not None and
                                            program.kind == "function" else ""), None, hint, source=item,
                          filename=f"{what} {name}")
    if functions:                 # run as a function of the program, so that its functions are defined
        return ("formula", *formula_function(program, target, variables, limits))
    return ("formula", target, ReplayRunner(target, limits))


def called_names(node) -> set:
    return {x.func.id for x in walk(node) if isinstance(x, nodes.Call) and isinstance(x.func, nodes.Name)}


def formula_function(program: Target, formula: Target, variables, limits) -> tuple:
    """(the target, its runner) of a formula that calls the program's functions: the program with
    one more function, `__claimed__(inputs...)`, returning the formula. The formula's lines follow
    the program's, so an error in it is told in the formula's own words (FormulaRunner)."""
    offset = program.source.count("\n") + 1
    body = parse_expression("\n" * offset + formula.source, filename=formula.filename).body   # below the program
    fn = nodes.FunctionDef(CLAIM_FUNCTION, tuple(variables), (nodes.Return(body, body.span),), body.span)
    called = [f for f in program.functions if f in called_names(formula.node)]
    reached = program.reaching(called)                  # the target's and the called functions' statements
    module = nodes.Module(tuple(reached.body) + (fn,), reached.span)
    target = replace(program, node=module, fn_name=CLAIM_FUNCTION, inputs=list(variables), defaulted=[],
                     functions=list(program.functions) + [CLAIM_FUNCTION], source=program.source + "\n" + formula.source)
    return target, FormulaRunner(target, limits, offset, formula)


class FormulaRunner(ReplayRunner):
    """A formula's runner as a function of the program: an error on the formula's lines is told
    at its place in the formula (the program's own are told in the program)."""

    def __init__(self, target, limits, offset, formula):
        super().__init__(target, limits)
        self.offset, self.formula = offset, formula

    def __call__(self, values):
        try:
            return super().__call__(values)
        except SourceError as e:
            span = e.span
            if span is not None and span.line > self.offset:
                e.span = Span(span.line - self.offset, span.column, span.end_line - self.offset, span.end_column)
                e.source, e.filename = self.formula.source, self.formula.filename
            raise


def program_function(program, name: str, what="grad") -> Target:
    """The function `name` of the program being checked, as a target taking the same inputs."""
    if program is None or program.kind != "function":
        kind = "an expression" if program is not None and program.kind == "expression" else "a script"
        raise SourceError("usage", f"the hand-derived {what} {name!r} names a function of the program, but the target "
                          f"is {kind}" if program is not None else
                          f"the hand-derived {what} {name!r} names a function, but there is no program to find it in",
                          None, "write the hand-derived gradient as formulas, or check a program (.py) that "
                          f"defines {name}")
    if name not in program.functions:
        import difflib
        close = difflib.get_close_matches(name, program.functions, n=1)
        raise SourceError("unknown name", f"the hand-derived {what} {name!r} is not a function of "
                          f"{program.filename or 'the program'} (it defines {', '.join(program.functions)})", None,
                          f"did you mean {close[0]!r}?" if close else None)
    return replace(program, node=program.reaching([name]), fn_name=name)   # what `name` reaches is compiled too


def expression_target(text: str, what: str | None = None):
    """An expression as a target, never taken for a file name (formulas in check files)."""
    try:
        node = parse_expression(text, filename=what)
    except SourceError as e:
        if e.filename is None:
            e.filename = what
        raise
    names = builtin_names()
    return Target(text, what, "expression", [v for v in loaded_names(node) if v not in names], node)
