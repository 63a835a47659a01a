"""Elementwise primitives: the math functions, powers, abs/relu and maximum/minimum (with their
kinks noted as they are evaluated). One entry each: forward, VJP and JVP stand together, and
`builtin=` names the language builtin that exposes it. `unary_entry` and `binary_entry` make every
elementwise entry of this table but the operators' (arithmetic.py) and pow: one rule of products,
the strong zero of tangent_times, for all of them (numeric.py and special.py use them too)."""
from __future__ import annotations

import math

from ..backend import np, xp
from ..notes import NOTES
from ..tape import Dual, Var, strip
from ..primitives import defprim, float_fallback, plain_scalar, unary, zeros_like
from ..complexes import is_complex
from .arithmetic import div
from .complexes import abs_derivative, abs_tangent, with_a_zero
from .comparisons import eq, share, sign, step, tangent_times, where, zero_where_zero
from .shapes import bcast, unbroadcast


def _pow(x, y):
    try:
        r = x ** y
    except (ZeroDivisionError, OverflowError):
        return float_fallback(np().power, x, y)
    if r.__class__ is complex:                  # (-8) ** (1/3): nan, as in numpy
        return math.nan
    return r


def _pow_dy(g, ans, x, y):
    # d/dy x**y = x**y log x; at x == 0 the term is 0 (x**y is 0 there), not nan
    return g * ans * log(where(eq(x, 0.0), 1.0, x))


def _pow_dx(ans, x, y):
    # y x**(y-1); where y == 0 it is +0 exactly (x**0 is constant, 1 even at nan), for a number y
    # and an array alike (a fused region traces a number as an array): the base is swapped for 1
    # where x is 0 or nan (0 * 0**-1 and 0 * nan are nan) and + 0.0 turns y's or a negative x's
    # -0 into +0, through y, so the derivative in y, x**(y-1) = 1/x at y == 0, stays right
    if y.__class__ is float:                    # the usual case, `x**2`: no where() needed
        return y * pow(x, y - 1.0) if y != 0.0 else zeros_like(x)
    zero = eq(y, 0.0)
    d = y * pow(where(zero, where(eq(x, x), where(eq(x, 0.0), 1.0, x), 1.0), x), y - 1.0)
    return where(zero, d + 0.0, d)


# taped and plannable with a constant exponent only: its VJP in y applies where() to a traced one
pow = defprim("pow", _pow, elementwise=True, needs_ans=True, reads=("x y", "ans x"),
              numexpr="**", ufuncs=("power",), taped_vjp=True, plannable=True, constant_args=(1,),
              vjp=(lambda g, ans, x, y: unbroadcast(tangent_times(g, _pow_dx(ans, x, y)), x),
                   lambda g, ans, x, y: unbroadcast(zero_where_zero(g, _pow_dy(g, ans, x, y)), y)),
              float_vjp=(lambda g, ans, x, y: tangent_times(g, _pow_dx(ans, x, y)),
                         lambda g, ans, x, y: _pow_dy(g, ans, x, y) if g != 0.0 else 0.0),
              jvp=(lambda t, ans, x, y: bcast(tangent_times(t, _pow_dx(ans, x, y)), ans),
                   lambda t, ans, x, y: bcast(tangent_times(t, _pow_dy(1.0, ans, x, y)), ans)), complex_values=True)


LN2, LN10 = math.log(2.0), math.log(10.0)


def unary_entry(name, mathfn, deriv, needs_ans=False, impl=None, needs_args=None, complex_rule=None, **kw):
    """THE elementwise function of one argument: the builtin `name`, numpy's function of that
    name (`impl`, or math's `mathfn` for floats and the backend's `name` for arrays); deriv(ans,
    x) is f'(x) in engine ops, and VJP and JVP are both g * f'(x) with the strong zero
    (tangent_times): a zero adjoint or tangent times an inf or nan f'(x) is 0, in both modes. A
    derivative written in `ans` alone (exp, tanh) keeps no argument on the tape: needs_ans
    implies the argument is not read, unless `needs_args` says it is. A function that is not
    holomorphic on complex numbers (abs) gives `complex_rule`: (VJP, JVP) of (g or t, x) for a
    complex x (rules/complexes.py states the convention)."""
    def float_vjp(g, ans, x):                   # the scalar sweep's float g: no call added
        if complex_rule is not None and is_complex(x):
            return complex_rule[0](g, x)
        d = deriv(ans, x)
        if g == 0.0:
            return 0.0                          # a zero adjoint (a branch not taken) stays zero
        r = g * d                               # the strong zero; an outer level's box is never masked
        return r if (c := r.__class__) is Var or c is Dual or r == r or d != 0.0 else 0.0

    def vjp(g, ans, x):
        if complex_rule is not None and is_complex(x):
            return complex_rule[0](g, x)
        return tangent_times(g, deriv(ans, x))

    def jvp(t, ans, x):
        if complex_rule is not None and is_complex(x):
            return complex_rule[1](t, x)
        return tangent_times(t, deriv(ans, x))

    return defprim(name, impl or unary(mathfn, name), needs_ans=needs_ans,
                   needs_args=not needs_ans if needs_args is None else needs_args, builtin=name,
                   elementwise=True, vjp=(vjp,), float_vjp=(float_vjp,), jvp=(jvp,), **kw)


def binary_entry(name, impl, dx, dy, needs_ans=False, **kw):
    """THE elementwise function of two arguments (broadcast as numpy's): dx(ans, x, y) and dy(ans,
    x, y) its partial derivatives in engine ops; each VJP is g times its partial summed to the
    argument's shape, each JVP t times it broadcast to the output's, with the strong zero. The
    builtin is `name` unless `builtin=` says otherwise."""
    kw.setdefault("builtin", name)
    return defprim(name, impl, needs_ans=needs_ans, elementwise=True,
                   vjp=(lambda g, ans, x, y: unbroadcast(tangent_times(g, dx(ans, x, y)), x),
                        lambda g, ans, x, y: unbroadcast(tangent_times(g, dy(ans, x, y)), y)),
                   jvp=(lambda t, ans, x, y: bcast(tangent_times(t, dx(ans, x, y)), ans),
                        lambda t, ans, x, y: bcast(tangent_times(t, dy(ans, x, y)), ans)), **kw)


sin = unary_entry("sin", math.sin, lambda ans, x: cos(x),
                  numexpr="sin", dear=True, numpy_loop="probe", taped_vjp=True, plannable=True, complex_values=True)
cos = unary_entry("cos", math.cos, lambda ans, x: -sin(x),
                  numexpr="cos", dear=True, numpy_loop="probe", taped_vjp=True, plannable=True, complex_values=True)
tan = unary_entry("tan", math.tan, lambda ans, x: 1.0 + ans * ans, needs_ans=True,
                  numexpr="tan", dear=True, taped_vjp=True, plannable=True, complex_values=True)
# (1 - x)(1 + x), not 1 - x*x: near |x| = 1 the subtraction is exact, the derivative keeps its digits
arcsin = unary_entry("arcsin", math.asin, lambda ans, x: div(1.0, sqrt((1.0 - x) * (1.0 + x))),
                      alias="asin", numexpr="arcsin", c_name="asin", dear=True, taped_vjp=True, complex_values=True)
arccos = unary_entry("arccos", math.acos, lambda ans, x: div(-1.0, sqrt((1.0 - x) * (1.0 + x))),
                      alias="acos", numexpr="arccos", c_name="acos", dear=True, taped_vjp=True, complex_values=True)
arctan = unary_entry("arctan", math.atan, lambda ans, x: div(1.0, 1.0 + x * x), alias="atan",
                     numexpr="arctan", c_name="atan", dear=True, taped_vjp=True, plannable=True, complex_values=True)
sinh = unary_entry("sinh", math.sinh, lambda ans, x: cosh(x),
                   numexpr="sinh", dear=True, taped_vjp=True, plannable=True, complex_values=True)
cosh = unary_entry("cosh", math.cosh, lambda ans, x: sinh(x),
                   numexpr="cosh", dear=True, taped_vjp=True, plannable=True, complex_values=True)
tanh = unary_entry("tanh", math.tanh, lambda ans, x: 1.0 - ans * ans, needs_ans=True,
                   numexpr="tanh", dear=True, taped_vjp=True, plannable=True, complex_values=True)
exp = unary_entry("exp", math.exp, lambda ans, x: ans, needs_ans=True,
                  numexpr="exp", dear=True, taped_vjp=True, plannable=True, complex_values=True)
log = unary_entry("log", math.log, lambda ans, x: div(1.0, x),
                  numexpr="log", dear=True, taped_vjp=True, plannable=True, complex_values=True)
log2 = unary_entry("log2", math.log2, lambda ans, x: div(1.0, x * LN2),
                   taped_vjp=True, plannable=True, no_fusion="numexpr has no log2", complex_values=True)
log10 = unary_entry("log10", math.log10, lambda ans, x: div(1.0, x * LN10),
                    numexpr="log10", dear=True, taped_vjp=True, plannable=True, complex_values=True)
_sqrt_value = unary(math.sqrt, "sqrt")


def has_zero(x) -> bool:
    """Whether x, a number (Python's: a complex slogdet's sign is one) or an array, boxed or not,
    is or holds a zero: a kink's test (sqrt's, abs's, copysign's, heaviside's, i0e's, cumprod's)."""
    c = x.__class__
    if c is float or c is complex or c is int:              # (the scalar path: no call)
        return x == 0
    if c is Var or c is Dual:
        return has_zero(strip(x))
    return bool((x == 0).any())                # (a traced region reads this very test as a guard)


def _sqrt(x):
    if has_zero(x):
        NOTES.kink("sqrt", "sqrt at 0: derivative taken as +inf")
    return _sqrt_value(x)


sqrt = unary_entry("sqrt", None, lambda ans, x: div(0.5, ans), needs_ans=True, impl=_sqrt,
                   kink="sqrt'(0) = +inf", guarded_kink=True, numexpr="sqrt", dear=True, taped_vjp=True, complex_values=True)


def _abs(x):
    if x.__class__ is float:
        if x == 0.0:
            NOTES.kink("abs", "abs at 0: derivative taken as 0")
        return math.fabs(x)                 # `abs` here is this module's op
    if has_zero(x):
        NOTES.kink("abs", "abs at 0: derivative taken as 0")
    return plain_scalar(xp().abs(x))


abs = unary_entry("abs", None, lambda ans, x: sign(x), impl=_abs, alias="fabs", kink="abs'(0) = 0", side="sign",
                  complex_rule=(abs_derivative, abs_tangent), other_side=with_a_zero,
                  numexpr="abs", ufuncs=("absolute",), c_name="fabs", fused_bits=True, complex_values=True,
                  holomorphic=False)


def _relu(x):
    if x.__class__ is float:
        if x == 0.0:
            NOTES.kink("relu", "relu at 0: derivative taken as 0")
        return 0.0 if x <= 0.0 else x            # nan stays nan, as numpy's maximum(nan, 0)
    if (x == 0).any():
        NOTES.kink("relu", "relu at 0: derivative taken as 0")
    return plain_scalar(xp().maximum(x, 0))


relu = unary_entry("relu", None, lambda ans, x: step(x), impl=_relu, kink="relu'(0) = 0", side="sign")


def _sigmoid(x):
    # exp of a non-positive number only (no overflow), and no 1 - (nearly 1) on the negative
    # tail: sigmoid(-30) keeps all its digits (0.5 * (1 + tanh(x/2)) kept three)
    if x.__class__ is float:
        if x >= 0.0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)
    m = xp()
    if x.__class__ is not m.ndarray or x.ndim == 0:     # a 0-d array, or any value but numpy's array
        # one division, the array branch's bits; sigmoid(-x) in the VJP shares its 1 + e
        e = m.exp(-m.abs(x))
        return plain_scalar(m.where(x >= 0, 1.0, e) / (1.0 + e))
    return sigmoid_of_array(x)


_float64_constants = []       # numpy's float64 dtype, 0.0 and 1.0 as 0-d float64 arrays (first use)


def sigmoid_of_array(x, negated=False):
    """sigmoid(x), or with `negated` sigmoid(-x) without making -x (abs(-x) is abs(x), -x >= 0 is
    x <= 0, both false for a nan), of a numpy array of at least one dimension, in two buffers of
    its size. A float64 array takes 0.0 and 1.0 as 0-d float64 arrays: the same results without
    numpy's weak-scalar conversion of a Python float on every call (more than an add of eight
    elements; a float32 array keeps Python floats, which keep it float32)."""
    m = xp()
    if not _float64_constants:
        zero, one = np().zeros(()), np().ones(())
        zero.flags.writeable = one.flags.writeable = False    # shared by every call: never written
        _float64_constants.extend((np().dtype(np().float64), zero, one))
    float64, zero, one = _float64_constants
    if x.dtype is not float64 or m is not np():
        zero, one = 0.0, 1.0
    e = m.abs(x)
    m.negative(e, out=e)
    m.exp(e, out=e)
    denominator = m.add(e, one)
    m.copyto(e, one, where=m.less_equal(x, zero) if negated else m.greater_equal(x, zero))
    return m.divide(e, denominator, out=e)


def _sigmoid_slope(ans, x):
    # sigmoid' = sigmoid(x) sigmoid(-x): accurate on both tails, unlike ans * (1 - ans) for x >> 0
    if x.__class__ is not float and x.__class__ is xp().ndarray and x.ndim:
        return ans * sigmoid_of_array(x, negated=True)    # sigmoid(-x)'s bits, one buffer fewer
    return ans * sigmoid(-x)


# a region computes it as its impl does: numpy's loop for exp, numexpr's IEEE arithmetic and
# selection around it (one rounding each, as numpy's): numpy's bits (`fused_bits`)
sigmoid = unary_entry("sigmoid", None, _sigmoid_slope, needs_ans=True, needs_args=True, impl=_sigmoid,
                      fused_bits=True)


def _softplus(x):
    if x.__class__ is float:                  # log(1 + e^x) without overflow
        return max(x, 0.0) + math.log1p(math.exp(-math.fabs(x)))
    m = xp()
    return plain_scalar(m.maximum(x, 0) + m.log1p(m.exp(-m.abs(x))))


softplus = unary_entry("softplus", None, lambda ans, x: sigmoid(x), impl=_softplus,
                       no_fusion="numexpr has no maximum (its forward's max(x, 0))")


def note_ties(name, x, y):
    """Note a tie of maximum, minimum, fmax or fmin (its gradient split evenly) where x == y."""
    tie = (x == y) if (x.__class__ is float and y.__class__ is float) else bool(xp().any(x == y))
    if tie:
        NOTES.kink(name, f"{name} with equal arguments: the gradient is split evenly")


def _maximum(x, y):
    note_ties("maximum", x, y)
    if x.__class__ is float and y.__class__ is float:
        return x if x >= y or x != x else y       # a nan on either side is the result, as numpy
    return plain_scalar(xp().maximum(x, y))


def _minimum(x, y):
    note_ties("minimum", x, y)
    if x.__class__ is float and y.__class__ is float:
        return x if x <= y or x != x else y
    return plain_scalar(xp().minimum(x, y))


# maximum and minimum: x's share of the larger (smaller) is 1, 1/2 at a tie, 0 below (above)
maximum = binary_entry("maximum", _maximum, lambda ans, x, y: share(x, y), lambda ans, x, y: share(y, x),
                       kink="ties split the gradient evenly", side="difference", complex_values="ordering")
minimum = binary_entry("minimum", _minimum, lambda ans, x, y: share(y, x), lambda ans, x, y: share(x, y),
                       kink="ties split the gradient evenly", side="difference", complex_values="ordering")
