"""The fusion lowering: a rule body recorded by the one tracer (core/rule_tracer.py) lowered into
the fused IR, from which the kernels are printed: numexpr's text (core/fused_ir.py), CUDA source
(core/device_kernels.py), both from the same equations, no text read back.

The fused IR is a tree: a number's text ("2.0"), an array's name ("g", "a0", a region's step
"t3"), or a node (template, *operands) whose template is numexpr's spelling with a {} per
operand: "({} * {})", "(-{})", "cos({})", "where({}, {}, {})". A `Fused` is a value while the
equations are lowered (its tree, shape and whether it is boolean); a builder makes the nodes: a
`Tree` for one kernel (core/fused.py's VJP kernels), a region's `Program` (core/region_program.py,
which names each step and rewrites it exactly).

The recording is the rule run on probes of the arrays (`FusionRecorder`): the rules see no numpy
array type of theirs (their general, branch-free paths, as over any array-like), every decision
on a value is refused but `(x == 0).any()` before a kink's note (a guard the builder keeps,
taken as False), and an equation numexpr has no spelling for (by the table's `numexpr` fact of
the ufunc the equation applies) is `Unfusable`: the rule keeps its op-by-op path.
"""
from __future__ import annotations

import math

from .backend import np
from .fused_ir import UFUNCS, Unfusable, complex_constant, complex_refusal, is_number
from .rule_tracer import PROBES, Recorder, Untraceable, probe_of

COMPARISONS = (">", ">=", "<", "<=", "==", "!=")
BINARY = frozenset(("+", "-", "*", "/", "**") + COMPARISONS)
WHERE = "where({}, {}, {})"
# what gives a real value of a complex one (the rest of a complex operand's steps are complex)
REAL_PARTS = frozenset(("real({})", "imag({})", "abs({})"))


def is_complex_step(template, operands, boolean) -> bool:
    """Whether a step of `template` over these Fused operands holds complex values."""
    return not boolean and template not in REAL_PARTS and any(operand.complex for operand in operands)


class Fused:
    """A value of the fused IR while a rule body is lowered: its tree, shape, whether boolean,
    whether complex (complex128: issue 32)."""
    __slots__ = ("expr", "shape", "boolean", "complex")

    def __init__(self, expr, shape, boolean=False, complex=False):
        self.expr, self.shape, self.boolean, self.complex = expr, tuple(shape), boolean, complex


class Tree:
    """The builder of one kernel: each node nests its operands' trees."""

    @staticmethod
    def derive(template, operands, shape, boolean=False) -> Fused:
        if any(complex_constant(operand.expr) is not None for operand in operands):
            raise Unfusable("a complex constant: numexpr's kernels take real ones")
        return Fused((template, *(operand.expr for operand in operands)), shape, boolean,
                     is_complex_step(template, operands, boolean))

    @staticmethod
    def complex_refusal(spelling) -> str | None:
        """Why numexpr's kernel of `spelling` over complex values is not numpy's (None: it is)."""
        return complex_refusal(spelling)

    @staticmethod
    def holds(value) -> str:
        """"number" (a Python float, baked in), "one" (an array of one element: numpy's loop
        sees one value for all, strides 0) or "array"."""
        if is_number(value.expr):
            return "number"
        return "one" if math.prod(value.shape) == 1 else "array"

    @staticmethod
    def guard(condition) -> None:
        raise Unfusable("the rule branches on values")


class Guard:
    """`condition.any()`, asked before a kink's note (sqrt's): a branch on it is a guard."""
    __slots__ = ("condition",)

    def __init__(self, condition):
        self.condition = condition


class FusionRecorder(Recorder):
    """The one tracer's recorder for the fusion lowering: no numpy type is the probes' (the rules
    take their general paths), a decision is refused but on an `.any()` (a guard, taken False)."""

    def __init__(self):
        super().__init__(types={})
        self.defined: dict = {}     # name -> its equation

    def let(self, equation, example):
        probe = super().let(equation, example)
        self.defined[probe.name] = equation
        return probe

    def decide(self, probe) -> bool:
        equation = self.defined.get(probe.name)
        if equation is None or equation.op != ("method", "any"):
            raise Untraceable("the rule branches on values")
        self.items.append(("if", probe.name, False))
        return False

    def forget(self) -> None:
        """Drop the recorded equations once lowered: they and their probes, which refer to the
        recorder, would otherwise wait for the cycle collector (memory the first sweep keeps);
        its numpy stand-in refers to it too."""
        self.items, self.defined, self.numpy = [], {}, None

    def fact(self, probe, attr):
        """A kernel's facts of an array are its shape and ndim alone (of the example's miniature
        shape: the rules compare shapes, never read their sizes); its size, dtype and strides
        are no fact of an elementwise kernel, but for a complex value's dtype, which the rules
        ask (core/complexes.py's is_complex) to take their complex forms."""
        if attr in ("shape", "ndim") or (attr == "dtype" and probe.example.dtype.kind == "c"):
            return getattr(probe.example, attr)
        raise AttributeError(attr)

    def leaf(self, name, shape, boolean=False, complex=False):
        """A probe of an array of `shape` (its example: ones of its miniature, complex128 ones
        for a complex leaf; no value is read, decisions are refused)."""
        numpy = self.numpy._module        # numpy itself, also while a body is recorded (a region's seed)
        dtype = bool if boolean else numpy.complex128 if complex else numpy.float64
        return probe_of(name, numpy.ones(miniature(shape), dtype=dtype), self)


def miniature(shape) -> tuple:
    """A shape of at most 2 along each axis that broadcasts as `shape` does with the others of
    one kernel (1 stays 1, 0 stays 0): what a rule computes on the examples costs no memory of n."""
    return tuple(min(d, 2) for d in shape)


def record(recorder, fn, args):
    """fn(*args) recorded (the items are the recorder's), and what it returned; Unfusable where
    the rule does what no equation shows. What a rule raises on a probe the callers take as a
    refusal where it is one of fused.TRACE_ERRORS (a probe's missing attribute, a value check);
    anything else is a bug, and raises."""
    try:
        with np().errstate(all="ignore"):        # the examples' values are never read
            return recorder.record(fn, args, {})
    except Untraceable as e:
        raise Unfusable(f"{e}") from None


def lower(items, values: dict, builder) -> None:
    """Lower recorded items into the builder's fused IR: `values` maps each probe's name to its
    Fused (the leaves' given; each equation's added)."""
    for kind, name, what in items:
        if kind == "if":
            condition = values.get(name)
            if condition.__class__ is not Guard:
                raise Unfusable("the rule branches on values")
            builder.guard(condition.condition)
        elif kind == "do":
            raise Unfusable("a write into an array")
        else:
            values[name] = lower_equation(what, values, builder)


def operand(value, values):
    return values[value.name] if type(value) in PROBES else value


def lower_equation(equation, values, b):
    op, kwargs = equation.op, equation.kwargs
    args = [operand(a, values) for a in equation.args]
    if any(a.__class__ is Guard for a in args):
        raise Unfusable("an any() as a value")
    kind = op[0]
    if kind == "binary" and op[1] in BINARY:
        return combine(op[1], args[0], args[1], b)
    if kind == "unary" and op[1] == "-":
        return combine("-", args[0], None, b)
    if kind == "ufunc" or (kind == "function" and len(args) == 1 and op[1].__name__ in UFUNCS):
        name = UFUNCS.get(op[1].__name__)      # (numpy's real and imag are functions, no ufuncs)
        if (kind == "ufunc" and op[2] != "__call__") or kwargs or name is None:
            raise Unfusable(f"numexpr has no {op[1].__name__}")
        if len(args) == 1:
            return combine(name, args[0], None, b) if name == "-" else call(name, args[0], b)
        return combine(name, args[0], args[1], b)
    if kind == "method" and op[1] == "copy" and len(args) == 1 and not kwargs and args[0].__class__ is Fused:
        return args[0]                                   # a copy: the same bits (real(z).copy())
    if kind == "function" and op[1].__name__ == "where" and not kwargs and len(args) == 3:
        return where(*args, b)
    if kind == "method" and op[1] == "astype" and len(args) == 2 and not kwargs and args[0].boolean \
            and args[1].__class__ is not Fused and np().dtype(args[1]) == np().float64:
        return b.derive(WHERE, (args[0], as_fused(1.0), as_fused(0.0)), args[0].shape)     # a mask's numbers
    if kind == "method" and op[1] == "any" and len(args) == 1 and not kwargs and args[0].boolean:
        return Guard(args[0])
    what = kind if len(op) == 1 else op[1] if op[1].__class__ is str else getattr(op[1], "__name__", kind)
    raise Unfusable(f"numexpr has no {what}")


def as_fused(v) -> Fused:
    if v.__class__ is Fused:
        return v
    if v.__class__ in (float, int) and math.isfinite(v):
        if v == 0.0 and math.copysign(1.0, v) < 0.0:
            raise Unfusable("a constant -0.0: numexpr keeps one register for 0.0 and -0.0")
        return Fused(repr(float(v)), ())
    if isinstance(v, complex) and math.isfinite(v.real) and math.isfinite(v.imag):    # (numpy's complex128 too)
        return Fused(f"complex({float(v.real)!r}, {float(v.imag)!r})", (), complex=True)
    raise Unfusable(f"a constant {v!r} in a rule")


def where(condition, yes, no, b):
    if condition.__class__ is bool:                 # a constant's mask (factor == 0.0): folded
        return as_fused(yes if condition else no)
    condition, yes, no = as_fused(condition), as_fused(yes), as_fused(no)
    if not condition.boolean or yes.boolean or no.boolean:
        raise Unfusable("where on non-boolean condition")
    shape = np().broadcast_shapes(condition.shape, yes.shape, no.shape)
    return b.derive(WHERE, (condition, yes, no), shape)


def call(function, a, b) -> Fused:
    a = as_fused(a)
    if a.boolean:
        raise Unfusable("a function of a boolean")
    refuse_complex(function, (a,), b)
    return b.derive(function + "({})", (a,), a.shape)


def refuse_complex(spelling, operands, b) -> None:
    """Unfusable where a complex operand meets an equation whose kernel would not compute numpy's
    bits on complex values (the entry's `complex_bits`; a region's numpy loops are numpy's own)."""
    if any(operand.complex for operand in operands):
        why = b.complex_refusal(spelling)
        if why is not None:
            raise Unfusable(why)


# numpy's power loop, where one exponent serves every element of an array (a number, or an array
# of one element: strides 0), computes these exponents without pow: sqrt(-0.0) is -0.0 and
# sqrt(-inf) nan where pow gives 0.0 and inf; 1 / x and x * x round once. The kernels do the
# same. numexpr runs with its optimization "none", which rewrites no power (its own rewrites,
# 1 / sqrt(x) for x ** -0.5 and products for integral powers, differ from numpy's at -0.0, at
# infinities and in rounding): every other power is pow, as in numpy's loop and Python's float
# power (C99's pow: the same special values; numpy's SIMD pow may round an ulp apart).
FAST_POWERS = {2.0: lambda a, b: combine("*", a, a, b), 0.5: lambda a, b: call("sqrt", a, b),
               -1.0: lambda a, b: combine("/", 1.0, a, b), 1.0: lambda a, b: a}


def power(base, exponent, b) -> Fused:
    """base ** exponent as the op-by-op rule computes it: Python's pow for two numbers, numpy's
    pow for an array exponent, numpy's fast path (FAST_POWERS) where one exponent serves every
    element of an array base; a traced exponent tests for them. A number to the power of an
    array of one element, or two such arrays, numpy computes either way by their strides:
    Unfusable."""
    base, constant = as_fused(base), exponent.__class__ in (float, int)
    exponent = as_fused(exponent)
    refuse_complex("**", (base, exponent), b)
    held = (b.holds(base), b.holds(exponent))
    if held[1] == "array" or held == ("number", "number"):
        return combine_general("**", base, exponent, b)
    if held[0] != "array" and held != ("one", "number"):
        raise Unfusable("a power of numpy arrays of one element: pow or its fast path by their strides")
    if constant:
        fast = FAST_POWERS.get(float(exponent.expr))
        return combine_general("**", base, exponent, b) if fast is None else fast(base, b)
    general = combine_general("**", base, exponent, b)
    for value in (-1.0, 0.5, 2.0):      # (pow gives x ** 1.0 and x ** 0.0 as numpy's loop does)
        general = b.derive(WHERE, (combine("==", exponent, value, b), FAST_POWERS[value](base, b), general),
                           general.shape)
    return general


def combine(op, a, c=None, b=Tree) -> Fused:
    if op == "**":
        return power(a, c, b)
    return combine_general(op, a, c, b)


def combine_general(op, a, c, b) -> Fused:
    a = as_fused(a)
    if c is None:
        if a.boolean:
            raise Unfusable("arithmetic on a boolean")
        refuse_complex("-", (a,), b)
        return b.derive("(-{})", (a,), a.shape)
    c = as_fused(c)
    if a.boolean or c.boolean:
        raise Unfusable("arithmetic on a boolean")
    refuse_complex(op, (a, c), b)
    shape = np().broadcast_shapes(a.shape, c.shape)
    return b.derive("({} " + op + " {})", (a, c), shape, op in COMPARISONS)


def traced(builder, fn, args):
    """fn(*args) recorded on probes of the leaves among `args` (a Fused named by its array:
    its shape and kind; anything else is passed as it is) and lowered into the builder: the
    Fused of what it returns (a tuple or list of them for one)."""
    recorder = FusionRecorder()
    leaves = {arg.expr: arg for arg in args if arg.__class__ is Fused}
    probes = {name: recorder.leaf(name, leaf.shape, leaf.boolean, leaf.complex) for name, leaf in leaves.items()}
    out = record(recorder, fn, [probes[arg.expr] if arg.__class__ is Fused else arg for arg in args])
    values = dict(leaves)
    try:
        lower(recorder.items, values, builder)
    finally:
        recorder.forget()
    if out.__class__ in (tuple, list):
        return out.__class__(lowered(o, values) for o in out)
    return lowered(out, values)


def lowered(value, values):
    """What a traced function gave, lowered: a probe's Fused; a dict of them (a region's
    adjoints), a constant as it is."""
    if value.__class__ is dict:
        return {key: lowered(v, values) for key, v in value.items()}
    value = operand(value, values)
    if value.__class__ is Guard:
        raise Unfusable("an any() as a value")
    return value
