"""Fused VJP kernels for large float64 arrays, generated from the rules table with numexpr.

Each elementwise primitive's VJP rule is traced once per argument layout with `Symbol`s in place
of arrays: the rule runs as written (its engine ops reach numpy's ufuncs, which hand a Symbol to
`__array_ufunc__`), and what comes out is one numexpr expression, e.g. sin's `g * cos(x)` or
div's `-g * x / (y * y)`. numexpr evaluates it blocked and multi-threaded, without one temporary
array of n per op. So the table stays the one source of derivatives: nothing here restates a
rule. A rule that does anything a kernel cannot (sum a broadcast, branch on values, call a
function numexpr lacks) raises `Unfusable` while tracing and keeps its ordinary path, as do small
arrays, scalars, float32, boxes (a recorded sweep) and graph tapes.

tape.bind records an elementwise primitive over arrays with `FUSED_RULES[name]`: a copy of the
table entry whose VJPs try the kernel first.
"""
from __future__ import annotations

import math
import re

from .backend import np, on_device, xp
from .primitives import Primitive
from .rules import TABLE
from .tape import FUSED_RULES, Shape

FUSE_MIN_ELEMENTS = 1 << 16        # below this numpy's per-op cost is small and numexpr's start-up is not
MIN_FUSED_OPS = 2                  # operations (each writes one parenthesis) a kernel must fuse to pay
# numpy ufunc's __name__ -> numexpr's spelling of it: each table entry's `numexpr` fact under the
# `ufuncs` its forward applies, read off the table once, here
UFUNCS = {ufunc: prim.numexpr for prim in TABLE.values() if prim.numexpr is not None for ufunc in prim.ufuncs}
_numexpr = None


class Unfusable(Exception):
    """A rule that a numexpr kernel cannot express: it keeps its ordinary path."""


# what a rule raises when it does with a Symbol what only an array can (a sum, a branch on values,
# float(), Python's arithmetic of a constant): the rule keeps its ordinary path
TRACE_ERRORS = (Unfusable, TypeError, ValueError, AttributeError, ArithmeticError)
DECLINED: dict = {}        # what a fast path left to the rules -> why (decline)
MAX_DECLINED = 256


class Symbol:
    """Stands in for an array (or a number) while a rule is traced into an expression."""
    __slots__ = ("expr", "shape", "boolean")
    __array_priority__ = 1000

    def __init__(self, expr, shape, boolean=False):
        self.expr, self.shape, self.boolean = expr, tuple(shape), boolean

    @property
    def ndim(self):
        return len(self.shape)

    def holds(self) -> str:
        """"number" (a Python float, baked in), "one" (an array of one element: numpy's loop
        sees one value for all, strides 0) or "array"."""
        if is_number(self.expr):
            return "number"
        return "one" if math.prod(self.shape) == 1 else "array"

    def __bool__(self):
        raise Unfusable("the rule branches on values")

    def astype(self, dtype):
        if not self.boolean:
            raise Unfusable("astype of a number")
        return derive("where({}, 1.0, 0.0)", (self,), self.shape)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        op = UFUNCS.get(ufunc.__name__)
        if method != "__call__" or kwargs or op is None:
            raise Unfusable(f"numexpr has no {ufunc.__name__}")
        if len(inputs) == 1:
            return combine(op, inputs[0]) if op == "-" else call(op, inputs[0])
        return combine(op, inputs[0], inputs[1])

    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ != "where" or kwargs or len(args) != 3:
            raise Unfusable(f"numexpr has no {func.__name__}")
        if args[0].__class__ is bool:                 # a constant's mask (factor == 0.0): folded
            return as_symbol(args[1] if args[0] else args[2])
        cond, yes, no = (as_symbol(a) for a in args)
        if not cond.boolean or yes.boolean or no.boolean:
            raise Unfusable("where on non-boolean condition")
        shp = np().broadcast_shapes(cond.shape, yes.shape, no.shape)
        return derive("where({}, {}, {})", (cond, yes, no), shp)

    def __add__(self, other): return combine("+", self, other)
    def __radd__(self, other): return combine("+", other, self)
    def __sub__(self, other): return combine("-", self, other)
    def __rsub__(self, other): return combine("-", other, self)
    def __mul__(self, other): return combine("*", self, other)
    def __rmul__(self, other): return combine("*", other, self)
    def __truediv__(self, other): return combine("/", self, other)
    def __rtruediv__(self, other): return combine("/", other, self)
    def __pow__(self, other): return combine("**", self, other)
    def __rpow__(self, other): return combine("**", other, self)
    def __neg__(self): return combine("-", self)
    def __gt__(self, other): return combine(">", self, other)
    def __ge__(self, other): return combine(">=", self, other)
    def __lt__(self, other): return combine("<", self, other)
    def __le__(self, other): return combine("<=", self, other)
    def __eq__(self, other): return combine("==", self, other)
    def __ne__(self, other): return combine("!=", self, other)
    __hash__ = object.__hash__


def is_number(text) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def as_symbol(v) -> Symbol:
    if isinstance(v, Symbol):
        return v
    if v.__class__ in (float, int) and math.isfinite(v):
        if v == 0.0 and math.copysign(1.0, v) < 0.0:
            raise Unfusable("a constant -0.0: numexpr keeps one register for 0.0 and -0.0")
        return Symbol(repr(float(v)), ())
    raise Unfusable(f"a constant {v!r} in a rule")


COMPARISONS = (">", ">=", "<", "<=", "==", "!=")


def call(function, a) -> Symbol:
    a = as_symbol(a)
    if a.boolean:
        raise Unfusable("a function of a boolean")
    return derive(function + "({})", (a,), a.shape)


# numpy's power loop, where one exponent serves every element of an array (a number, or an array
# of one element: strides 0), computes these exponents without pow: sqrt(-0.0) is -0.0 and
# sqrt(-inf) nan where pow gives 0.0 and inf; 1 / x and x * x round once. The kernels do the
# same. numexpr runs with its optimization "none", which rewrites no power (its own rewrites,
# 1 / sqrt(x) for x ** -0.5 and products for integral powers, differ from numpy's at -0.0, at
# infinities and in rounding): every other power is pow, as in numpy's loop and Python's float
# power (C99's pow: the same special values; numpy's SIMD pow may round an ulp apart).
FAST_POWERS = {2.0: lambda a: combine("*", a, a), 0.5: lambda a: call("sqrt", a),
               -1.0: lambda a: combine("/", 1.0, a), 1.0: lambda a: a}


def power(base, exponent) -> Symbol:
    """base ** exponent as the op-by-op rule computes it: Python's pow for two numbers, numpy's
    pow for an array exponent, numpy's fast path (FAST_POWERS) where one exponent serves every
    element of an array base; a traced exponent tests for them. A number to the power of an
    array of one element, or two such arrays, numpy computes either way by their strides:
    Unfusable."""
    base, constant = as_symbol(base), exponent.__class__ in (float, int)
    exponent = as_symbol(exponent)
    held = (base.holds(), exponent.holds())
    if held[1] == "array" or held == ("number", "number"):
        return combine_general("**", base, exponent)
    if held[0] != "array" and held != ("one", "number"):
        raise Unfusable("a power of numpy arrays of one element: pow or its fast path by their strides")
    if constant:
        fast = FAST_POWERS.get(float(exponent.expr))
        return combine_general("**", base, exponent) if fast is None else fast(base)
    general = combine_general("**", base, exponent)
    for value in (-1.0, 0.5, 2.0):      # (pow gives x ** 1.0 and x ** 0.0 as numpy's loop does)
        general = derive("where({}, {}, {})", (combine("==", exponent, value), FAST_POWERS[value](base), general),
                         general.shape)
    return general


def combine(op, a, b=None) -> Symbol:
    if op == "**":
        return power(a, b)
    return combine_general(op, a, b)


def combine_general(op, a, b=None) -> Symbol:
    a = as_symbol(a)
    if b is None:
        if a.boolean:
            raise Unfusable("arithmetic on a boolean")
        return derive("(-{})", (a,), a.shape)
    b = as_symbol(b)
    if a.boolean or b.boolean:
        raise Unfusable("arithmetic on a boolean")
    shp = np().broadcast_shapes(a.shape, b.shape)
    return derive("({} " + op + " {})", (a, b), shp, boolean=op in COMPARISONS)


def derive(template, operands, shape, boolean=False) -> Symbol:
    """The Symbol of `template` (an expression with a {} per operand) over the operands. A
    subclass operand (core/regions.py's, which names each step instead of nesting the text)
    makes the result."""
    for operand in operands:
        if operand.__class__ is not Symbol:
            return operand.derive(template, operands, shape, boolean)
    return Symbol(template.format(*(operand.expr for operand in operands)), shape, boolean)


def layout(v):
    """What a kernel depends on about one value: its kind and shape (floats are variables)."""
    c = v.__class__
    if v is None:
        return None
    if c is float:
        return ("float", v, math.copysign(1.0, v))  # baked in: rules branch on constants (y != 0);
                                                     # -0.0 == 0.0, but its kernel is not 0.0's
    if c is Shape:
        return ("shape", v.shape)
    if (c is np().ndarray or c is xp().ndarray) and v.dtype in (np().float64, np().bool_):
        return (v.dtype.kind, v.shape)                   # numpy's, or the device's (cupy's)
    raise Unfusable("not a float64 array")


def decline(what: str, why) -> None:
    """Note why a fast path left `what` (a primitive's VJP, a region) to the rules, which run it
    op by op: DECLINED keeps the newest MAX_DECLINED reasons, one for each thing."""
    DECLINED.pop(what, None)
    if len(DECLINED) >= MAX_DECLINED:
        del DECLINED[next(iter(DECLINED))]
    DECLINED[what] = why if why.__class__ is str else f"{why.__class__.__name__}: {why}"


def trace(rule, g, ans, args, what="a VJP") -> str | None:
    """The rule as one expression over g, ans, a0, a1..., or None if it is not fusable (the
    reason noted under `what`). A rule that does with a Symbol what only an array can raises one
    of TRACE_ERRORS; anything else is a bug, and raises."""
    def symbol(name, v):
        if v is None or v.__class__ is Shape or v.__class__ is float:
            return v
        return Symbol(name, v.shape, boolean=v.dtype.kind == "b")
    try:
        out = rule(Symbol("g", g.shape), symbol("ans", ans), *(symbol(f"a{i}", a) for i, a in enumerate(args)))
    except TRACE_ERRORS as e:
        return decline(what, e)
    if not isinstance(out, Symbol) or out.boolean:
        return decline(what, "the rule gives no array of numbers")
    if unmasked(out.expr).count("(") < MIN_FUSED_OPS:
        return decline(what, "one operation (g * y) or none: numpy's is as quick")
    if out.shape != tuple(g.shape):
        return decline(what, "the adjoint has another shape than g")
    return out.expr


STRONG_ZERO = re.compile(r"where\(\((.+?) == \1\), \1, (.*)\)")


def unmasked(expr: str) -> str:
    """The expression inside its strong-zero masks (rules.comparisons.strong_zero's
    `where(r == r, r, where(t == 0, 0, r))`): the masks change only nan entries, and the rule's
    numpy path applies them only after one reduction finds a non-finite one, so a kernel that
    evaluates them over every element pays for itself only where r is two operations or more
    (exp's `g * ans` in its masks costs numexpr 3-5x numpy's product and that reduction)."""
    while (inner := STRONG_ZERO.fullmatch(expr)) is not None:
        expr = inner.group(1)
    return expr


def fused_vjp(rule, what="a VJP"):
    kernels = {}

    def vjp(g, ans, *args):
        if g.__class__ is not xp().ndarray or g.size < FUSE_MIN_ELEMENTS:
            return rule(g, ans, *args)            # small: numpy's ops, by design (no decline)
        try:
            key = (layout(g), layout(ans), tuple(layout(a) for a in args))
        except Unfusable as e:
            decline(what, e)
            return rule(g, ans, *args)
        if key not in kernels:
            with on_device("cpu"):     # numpy's ufuncs hand a Symbol to __array_ufunc__; cupy's refuse it
                kernels[key] = trace(rule, g, ans, args, what)
        expr = kernels[key]
        if expr is None:
            return rule(g, ans, *args)
        names = {"g": g, "ans": ans}
        names.update((f"a{i}", a) for i, a in enumerate(args))
        out = evaluate(expr, names)
        if out is None:
            decline(what, "no kernel library: numexpr is not installed, or the device cannot translate it")
            return rule(g, ans, *args)
        return out
    vjp.kernels = kernels
    return vjp


def evaluate(expr, names):
    """The kernel's result, or None where none runs (the rule's path then): on device arrays a
    cupy kernel translated from the expression (core/device_kernels.py), None if it cannot be;
    on numpy arrays numexpr's, None where numexpr is not installed."""
    global _numexpr
    if xp() is not np() and any(v.__class__ is xp().ndarray for v in names.values()):
        from . import device_kernels          # lazy: only a GPU run needs it, start-up stays fast
        return device_kernels.evaluate(expr, names)
    if _numexpr is None:                       # imported on the first large sweep: start-up stays fast
        try:
            import numexpr
        except (ImportError, ValueError):      # missing, or unusable: its import reads NUMEXPR_NUM_THREADS
            _numexpr = False                   # and OMP_NUM_THREADS as ints, and raises on any other text
            return None
        from .region_threads import more_numexpr_workers    # lazy: its thread pool's imports cost start-up 6 ms
        more_numexpr_workers(numexpr)
        _numexpr = numexpr
    if _numexpr is False:
        return None
    used = {k: v for k, v in names.items() if v.__class__ is np().ndarray}
    return _numexpr.evaluate(expr, local_dict=used, optimization="none")


def evaluate_into(expr, names, out):
    """evaluate(expr, names) written into `out` (a float64 buffer of the result's shape that the
    caller owns) when numexpr runs it on numpy arrays: a fresh array of n costs its page faults,
    often more than the kernel. Anything else (no buffer, another backend's arrays) is
    evaluate's."""
    if out is None or not _numexpr or any(v.__class__ is not np().ndarray for v in names.values()):
        return evaluate(expr, names)
    return _numexpr.evaluate(expr, local_dict=names, out=out, optimization="none")


def fused_entry(prim):
    """A copy of the table entry whose VJPs try a kernel first."""
    entry = object.__new__(Primitive)
    for slot in Primitive.__slots__:
        setattr(entry, slot, getattr(prim, slot))
    entry.vjps = tuple(None if rule is None else fused_vjp(rule, f"{prim.name}'s VJP in argument {i}")
                       for i, rule in enumerate(prim.vjps))
    return entry


def install() -> None:
    """Register the fused entries (tape.bind uses them for arrays). Cheap: nothing is imported
    or traced until a sweep over a large array needs a kernel."""
    for name, prim in TABLE.items():
        if prim.elementwise and isinstance(prim.vjps, tuple):
            FUSED_RULES[name] = fused_entry(prim)


def uninstall() -> None:
    FUSED_RULES.clear()
