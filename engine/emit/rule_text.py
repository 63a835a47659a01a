"""The one seam between `autodiff emit` and the rule tracer: `rule_text` turns one rule of the
table (a primitive's forward, or the VJP or JVP of one argument) into numpy statements over
given names. The rules stay the only source of derivatives: the text is what the rule does when
it is run on stand-ins (diff/rule_tracer.py, the one tracer of the rules: its probes of arrays
are the array type the rule sees, its per-product finiteness tests are taken as passed, so a rule
takes its array path, its generic form (the table's `generic_vjps`), and
each numpy call or operator it applies becomes a line). A rule that decides on a value, or that
does what a line cannot show, is refused (`NotEmitted`): emit never calls a rule as it is.

Without examples the rules are traced on arrays of one made-up shape for every operand: the text
is the elementwise one (no broadcasting sum), which is right for numbers and for operands of the
output's shape. With examples (the values each operand takes at a point, emit/examples.py) each
operand's stand-in has its shape (a number a numpy float64, a whole number itself, as an index
is): the text is the rule's at those shapes (broadcasting summed back, reductions, indexing),
right at those shapes, which the emitted function checks at entry."""
from __future__ import annotations

import math
import operator
import re

from ..core.backend import np
from ..core.rules import TABLE
from ..core.rule_tracer import Equation
from ..diff.rule_tracer import PROBES, Tracer, probe_of

EXAMPLE_SHAPE = (3,)
EXAMPLE_VALUE = 0.6180339887        # no 0, 1 or kink: a rule takes its general path
EXAMPLE_COMPLEX = 0.6180339887 + 0.3819660113j      # a complex operand's: off both axes
PLACE = re.compile(r"@[art][0-9]*|\bk[0-9]+\b")


class NotEmitted(Exception):
    """A rule (or a construct) emit cannot write as text yet: `what` says which."""


def complex_text(value: complex) -> str:
    """A complex constant's text (a rule's -1j, a program's 1+2j): a numpy complex number of its
    parts, as the run's complex constants are (numpy's imag of it a numpy float, not Python's)."""
    value = complex(value)
    return f"np.complex128({_number(value.real)}, {_number(value.imag)})"


def _number(value) -> str:
    if value.__class__ is complex:
        return complex_text(value)
    if value != value:
        return "np.nan"
    if value in (math.inf, -math.inf):
        return "np.inf" if value > 0 else "-np.inf"
    text = repr(float(value)) if value.__class__ is not bool else repr(value)
    return f"({text})" if text.startswith("-") else text


def scipy_spelling(ufunc) -> str:
    """scipy.special's text for one of its ufuncs (the emitted module then imports scipy.special)."""
    import scipy.special
    if getattr(scipy.special, ufunc.__name__, None) is not ufunc:
        raise NotEmitted(f"the ufunc {ufunc.__name__} (neither numpy's nor scipy.special's)")
    return f"scipy.special.{ufunc.__name__}"


def with_scipy_import(lines: list) -> list:
    """The module's lines with `import scipy.special` after numpy's where a line calls it."""
    if not any("scipy.special." in line for line in lines) or "import scipy.special" in lines:
        return lines
    at = lines.index("import numpy as np") + 1
    return lines[:at] + ["import scipy.special"] + lines[at:]


def spelled(value) -> str:
    """numpy's text for a value a traced line binds: a ufunc, a numpy function, a constant."""
    numpy = np()
    if isinstance(value, numpy.ufunc):      # scipy.special's functions are ufuncs too (erf, xlogy)
        return f"np.{value.__name__}" if getattr(numpy, value.__name__, None) is value else scipy_spelling(value)
    owner = getattr(value, "__self__", None)
    if isinstance(owner, numpy.ufunc):
        head = f"np.{owner.__name__}" if getattr(numpy, owner.__name__, None) is owner else scipy_spelling(owner)
        return head if value.__name__ == "__call__" else f"{head}.{value.__name__}"
    if callable(value) and getattr(numpy, getattr(value, "__name__", ""), None) is value:
        return f"np.{value.__name__}"
    for sub in ("linalg", "fft"):           # numpy.linalg's and numpy.fft's functions (np.fft.fft in fft's rules)
        if callable(value) and getattr(getattr(numpy, sub), getattr(value, "__name__", "") or "_", None) is value:
            return f"np.{sub}.{value.__name__}"
    if callable(value) and getattr(operator, getattr(value, "__name__", "") or "_", None) is value:     # a += b in a rule: operator.iadd
        return f"operator.{value.__name__}"
    if value is None or value.__class__ in (int, str, slice) or value is Ellipsis:
        return repr(value)
    if value.__class__ in (float, bool, complex) or isinstance(value, numpy.generic):
        return _number(value.item() if isinstance(value, numpy.generic) else value)
    if isinstance(value, numpy.dtype):
        return f"np.{value.name}"
    if isinstance(value, numpy.ndarray) and value.ndim == 0:
        return f"np.asarray({_number(value.item())})"
    raise NotEmitted(f"a {value.__class__.__name__} in a rule")


def _stand(value, tracer, name, example=None, parameter=False):
    """The stand-in of an operand: a probe for a name (of the example's shape where one is
    given; a parameter's, such as an index, the example itself), the number itself for a constant.
    A parameter whose value at the point is a string or a tuple of whole numbers (np.fft's norm,
    lengths and axes, emit/library_calls.py's AtPoint) is that constant: the text holds at the point's shapes."""
    if value.__class__ is slice:        # x[i:i + 2]: its bounds that are names probes of their values
        return slice(*[probe_of(b, e, tracer) if b.__class__ is str else b for b, e in
                       zip((value.start, value.stop, value.step), (example.start, example.stop, example.step))])
    if value.__class__ is tuple and any(b.__class__ is str for b in value):    # x[a, b]: names probes of their values
        return tuple(probe_of(b, e, tracer) if b.__class__ is str else b for b, e in zip(value, example))
    if value.__class__ is not str:
        return value
    numpy = np()
    if example is None:
        return probe_of(name, numpy.full(EXAMPLE_SHAPE, EXAMPLE_VALUE), tracer)
    if isinstance(example, tuple) and not parameter:        # eigh(A)[0]: what a builtin returns, a tuple
        raise NotEmitted("an item of the tuple a builtin returns (eigh's, svd's, qr's), taken by indexing or "
                         "into a table entry")
    if parameter and (example.__class__ is str or example.__class__ is tuple and all(
            isinstance(v, (int, numpy.integer)) for v in example)):    # np.fft's lengths, axes, norm: constants
        return example if example.__class__ is str else tuple(int(v) for v in example)
    return probe_of(name, example if parameter else stand_in(example), tracer)


def stand_in(example):
    """A value of the example's shape with no 0, 1 or kink (a square matrix: invertible); of a
    complex example complex, off both axes (a rule takes its complex path, issue 32 item 2)."""
    numpy = np()
    if isinstance(example, numpy.ndarray) and example.ndim and example.dtype.kind == "b":
        return example
    complex_ = getattr(example, "dtype", None) is not None and example.dtype.kind == "c" or example.__class__ is complex
    if isinstance(example, numpy.ndarray) and example.ndim:
        value = numpy.full(example.shape, EXAMPLE_COMPLEX if complex_ else EXAMPLE_VALUE)
        if example.ndim >= 2 and example.shape[-1] == example.shape[-2]:   # a square matrix: invertible,
            value = value + numpy.eye(example.shape[-1])                     # symmetric positive definite
        return value
    return numpy.complex128(EXAMPLE_COMPLEX) if complex_ else numpy.float64(EXAMPLE_VALUE)


def rule_text(primitive, which, operand_names, fresh, known=None, examples=None) -> tuple:
    """(statements, result expression) of one rule of `primitive` applied to `operand_names`
    (names, or numbers for constants). `which`: "impl" (the forward, operands its arguments),
    ("vjp", i) or ("jvp", i) (operands: the adjoint or tangent, ans or None, the arguments).
    `fresh()` gives a new name for each temporary; `known` (expression text -> name), where given,
    holds the temporaries already computed that the statements may reuse, and gains theirs.
    `examples` (one per operand, None for an absent one): the values the operands take at a point."""
    if which == "impl":
        rule = primitive.impl
    else:
        kind, position = which
        rules = primitive.generic_vjps if kind == "vjp" else primitive.jvps
        rule = rules[position]
        if rule is None:
            raise NotEmitted(f"{primitive.name} has no {kind.upper()} rule for argument {position + 1}")
    first = 0 if which == "impl" else 2         # the operands after (g or t, ans)
    known = {} if known is None else known
    trace = _traced(rule, primitive, first, operand_names, examples, spread=False)
    writes = any(e is not None for e in examples or ())
    if examples is None or not any(line.startswith("if ") for line in trace[0]):
        return _rendered(*trace, rule, primitive, fresh, known, allow_writes=writes)
    # a rule that decides on a value (a fast path where no two operands tie): traced again on
    # stand-ins of distinct values, the decision's other outcome, both sides written as an if
    other = _traced(rule, primitive, first, operand_names, examples, spread=True)
    return _branched(trace, other, rule, primitive, fresh, known, writes)


def _traced(rule, primitive, first, operand_names, examples, spread) -> tuple:
    """(lines, the operands' names by placeholder, namespace) of the rule traced on stand-ins;
    `spread`: each operand's stand-in of its own value (no two tie)."""
    namespace: dict = {}
    tracer = ShapeNaming(namespace, set(), assume_finite=True, scalars_as_values=examples is not None,
                         notes_dropped=examples is not None)
    examples = examples or [None] * len(operand_names)
    differentiable = len(primitive.generic_vjps)    # the arguments after them are parameters (an index)
    stands = [None if v is None else _stand(v, tracer, f"@a{i}", e, i - first >= differentiable)
              for i, (v, e) in enumerate(zip(operand_names, examples))]
    if spread and primitive.other_side is not None:
        stands = _other_side(primitive, first, stands, tracer)
    elif spread:
        stands = [probe_of(s.name, s.example * (1.0 + 0.25 * i), tracer)
                  if type(s) in PROBES and s.example.dtype.kind in "fc" else s for i, s in enumerate(stands)]
    names: dict = {}
    for s in stands:
        if type(s) in PROBES:
            names.setdefault(id(s), len(names))
    # the probes' placeholders are given by `trace` itself: number them as it will; an argument's
    # shape is written as numpy's shape of it (its own first, then the adjoint's or the result's)
    for s in stands[first:] + stands[:first]:
        shape = getattr(s.example, "shape", ()) if type(s) in PROBES else ()
        if shape and max(shape) > 1:
            tracer.shapes.setdefault(shape, f"np.shape(@a{names[id(s)]})")
    example = rule(*[tracer.real(s) for s in stands])
    lines, _ = tracer.trace(rule, stands, {}, names, example)
    rule_names = {f"@a{names[id(s)]}": operand_names[i] for i, s in enumerate(stands) if type(s) in PROBES}
    return lines, rule_names, namespace


def _other_side(primitive, first, stands, tracer) -> list:
    """The stand-ins on the other side of the rule's decision on its argument's values (the
    table's `other_side`: a zero, a singular matrix), ans (a rule's second operand) its forward's
    value there."""
    numpy = np()
    stands = list(stands)
    x = stands[first]
    other = primitive.other_side(numpy.array(x.example))
    stands[first] = probe_of(x.name, other, tracer)
    if first == 2 and type(stands[1]) in PROBES:
        ans = primitive.impl(other, *[tracer.real(s) for s in stands[first + len(primitive.generic_vjps):]])
        stands[1] = probe_of(stands[1].name, numpy.asarray(ans) if numpy.ndim(ans) else numpy.float64(ans), tracer)
    return stands


class ShapeNaming(Tracer):
    """The rule tracer, a tuple that is the shape of one of the rule's operands written as
    `np.shape(operand)` (`shapes`: shape -> that text): the text of a rule that broadcasts, sums
    back or makes zeros of an operand's shape holds at other lengths (emit/module.py checks by
    writing the module at a second point of other lengths)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.shapes: dict = {}

    def constant(self, value) -> str:
        if value.__class__ is tuple and all(v.__class__ is int for v in value) and value in self.shapes:
            return self.shapes[value]
        if value.__class__ is slice and any(type(b) in PROBES for b in (value.start, value.stop, value.step)):
            return f"slice({', '.join(self.text(b) for b in (value.start, value.stop, value.step))})"
        return super().constant(value)

    def real(self, value):
        """A slice's bounds that are probes (x[i:i + 2]) their values too."""
        if value.__class__ is slice:
            return slice(*[Tracer.real(b) for b in (value.start, value.stop, value.step)])
        if value.__class__ is tuple:        # several indices (x[a, b]), probes among them
            return tuple(Tracer.real(b) for b in value)
        return Tracer.real(value)

    def function(self, func, args, kwargs):
        """A numpy function of several arrays (svd's U, S, Vh; slogdet's sign and log|det| of one
        matrix, numbers): a line for each, indexing the call."""
        result = self._result(func, args, kwargs)
        numpy = self.numpy._module
        if result.__class__ is not tuple and isinstance(result, tuple) and \
                all(r.__class__ is numpy.ndarray or isinstance(r, numpy.generic) for r in result):
            call = self._call_text(self.bind(func), args, kwargs)
            return tuple(self.let(Equation(("text", f"{call}[{k}]"), ()), r) for k, r in enumerate(result))
        return super().function(func, args, kwargs)

    def call_method(self, probe, attr, args, kwargs):
        """`x.reshape(shape with a 1 put in at k)` (expand_dims' one reshape) as np.expand_dims(x, k)."""
        shape = getattr(probe.example, "shape", None)
        if attr == "reshape" and len(args) == 1 and not kwargs and args[0].__class__ is tuple and shape is not None:
            for k in range(len(shape) + 1):
                if args[0] == shape[:k] + (1,) + shape[k:]:
                    return self.let(Equation(("text", f"np.expand_dims({probe.name}, {k})"), ()),
                                    probe.example.reshape(args[0]))
        return super().call_method(probe, attr, args, kwargs)


def _branched(trace, other, rule, primitive, fresh, known, writes) -> tuple:
    """One decision's two sides as an if: the lines before it once, then each side's, its result
    bound to one name."""
    def split(lines):
        k = next(i for i, line in enumerate(lines) if line.startswith("if "))
        side = [line[4:] for line in lines[k + 3:]]
        if any(not line.startswith("    ") for line in lines[k + 3:]) or any(x.startswith(("if ", " ")) for x in side):
            raise NotEmitted(f"{primitive.name}'s rule decides on values more than once")
        return lines[:k], lines[k].startswith("if not "), lines[k].split()[-1].rstrip(":"), side
    (before, outcome, test, side), (before_b, outcome_b, test_b, side_b) = split(trace[0]), split(other[0])
    if before != before_b or test != test_b or outcome == outcome_b:
        raise NotEmitted(f"{primitive.name}'s rule decides on a value")
    result = fresh()
    statements, temps = _rendered(before + [f"@r = {test}"], *trace[1:], rule, primitive, fresh, known,
                                  allow_writes=writes, with_temps=True)
    condition = statements.pop()
    out = list(statements)
    sides = {outcome: (side, trace), outcome_b: (side_b, other)}
    for k, value in enumerate((True, False)):
        lines, (_, names, namespace) = sides[value]
        body, rhs = _rendered(lines, names, namespace, rule, primitive, fresh, {}, allow_writes=True,
                              temps=dict(temps))
        out += [f"if {condition}:" if k == 0 else "else:", *("    " + b for b in body), f"    {result} = {rhs}"]
    return out, result


FOLDS = (re.compile(r"^(\S+) \*\* 1\.0$"), re.compile(r"^(\S+) \* 1\.0$"), re.compile(r"^1\.0 \* (\S+)$"),
         re.compile(r"^(\S+) \+ 0\.0$"), re.compile(r"^([A-Za-z_][A-Za-z_0-9.]*|[0-9.]+)$"))


def folded(rhs: str):
    """The one name or number `rhs` comes to (x ** 1.0, x * 1.0, 1.0 * x, x + 0.0, x), or None."""
    for pattern in FOLDS:
        m = pattern.match(rhs)
        if m:
            return m[1]
    return None


def _rendered(lines, rule_names, namespace, rule, primitive, fresh, known, allow_writes=False, temps=None,
              with_temps=False) -> tuple:
    """The traced lines with numpy's names and the operands' names, constants folded and a
    temporary whose expression `known` (text -> name) already holds named once (CSE). `temps`:
    the names of the temporaries lines before these made; `with_temps`: the result expression is
    given as a last statement, and the temporaries' names returned in place of it."""
    temps = {} if temps is None else temps

    def name(match):
        text = match[0]
        if text in rule_names:
            return rule_names[text]
        if text.startswith("@t"):
            return temps[text]
        if text.startswith("k"):
            value = namespace[text]
            if value is rule:
                raise NotEmitted(f"{primitive.name}'s rule does what a line cannot show")
            return spelled(value)
        return text

    writes = any("out=" in line or not line.startswith("@") or "[" in line.partition(" = ")[0] for line in lines)
    if writes and not allow_writes:
        raise NotEmitted(f"{primitive.name}'s rule writes into an array it made (out=, copyto, add.at): "
                         "its text would hold for arrays only")
    statements = []
    for line in lines:
        if line.startswith(("if ", "else", " ")):
            raise NotEmitted(f"{primitive.name}'s rule decides on a value")
        head, _, rhs = line.partition(" = ")
        if writes and head != "@r":         # an array written into: each line as it is, none shared
            if rhs and PLACE.fullmatch(head):
                temps[head] = fresh()
            statements.append(PLACE.sub(name, line))
            continue
        rhs = PLACE.sub(name, rhs)
        if head == "@r":
            if with_temps:
                return statements + [folded(rhs) or rhs], temps
            return statements, folded(rhs) or rhs
        atom = folded(rhs) or known.get(rhs)
        if atom is None:
            atom = known[rhs] = fresh()
            statements.append(f"{atom} = {rhs}")
        temps[head] = atom
    raise NotEmitted(f"{primitive.name}'s rule ends in no value")


def primitive(name: str):
    return TABLE[name]
