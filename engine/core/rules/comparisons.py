"""Primitives without a gradient (comparisons, sign, step, floor, the share of a tie) and `where`,
whose condition carries none."""
from __future__ import annotations

import math
import operator
from threading import get_ident

from ..backend import np, xp
from ..numbers import finite
from ..primitives import defprim, nondiff, plain_scalar, run_dtype
from ..tangent_stack import TangentStack
from ..tape import Dual, Var
from .shapes import bcast, unbroadcast


def _compare(name, pyop, numexpr, ufunc, complex_values="ordering"):
    def impl(x, y):
        r = pyop(x, y)
        return r if r.__class__ is bool else plain_scalar(r)
    impl.__name__ = name
    return nondiff(name, impl, float_impl=pyop, numexpr=numexpr, ufuncs=(ufunc,), elementwise_values=True,
                   complex_values=complex_values, complex_bits=complex_values is True)


lt = _compare("lt", operator.lt, "<", "less")
le = _compare("le", operator.le, "<=", "less_equal")
gt = _compare("gt", operator.gt, ">", "greater")
ge = _compare("ge", operator.ge, ">=", "greater_equal")
eq = _compare("eq", operator.eq, "==", "equal", complex_values=True)
ne = _compare("ne", operator.ne, "!=", "not_equal", complex_values=True)
def _floor(x):
    if x.__class__ is float:
        # floor(inf) is inf, floor(nan) nan, floor(-0.0) -0.0 (math's integer result has no sign)
        return math.copysign(float(math.floor(x)), x) if math.isfinite(x) else x
    if x.__class__ is bool or getattr(x, "dtype", None) == bool:   # floor(x > 1): numbers, not float16
        return plain_scalar(xp().asarray(x, dtype=run_dtype[0]))
    return plain_scalar(xp().floor(x))


floor = nondiff("floor", _floor, builtin="floor", elementwise_values=True)


def _sign(x):
    if x.__class__ is float:
        return (x > 0.0) - (x < 0.0) + 0.0 if x == x else x      # sign(nan) is nan, as numpy
    return plain_scalar(xp().sign(x))


# the builtin sign() is core/library/elementwise.py's: this entry for a real x, z/|z| for a complex z
sign = nondiff("sign", _sign, elementwise_values=True)


def _step(x):
    """1 where x > 0, else 0: relu's derivative (relu'(0) = 0)."""
    if x.__class__ is float:
        return 1.0 if x > 0.0 else (0.0 if x <= 0.0 else x)      # nan in, nan out
    if hasattr(x, "astype"):
        return plain_scalar(xp().heaviside(x, 0.0).astype(x.dtype, copy=False))
    return float(x > 0)


step = nondiff("step", _step, elementwise_values=True)


def _share(x, y):
    """x's share of max(x, y): 1 where x > y, 1/2 at a tie, 0 where x < y."""
    if x.__class__ is float and y.__class__ is float:
        return 1.0 if x > y else (0.5 if x == y else (0.0 if x < y else math.nan))
    m = xp()
    above = x > y                                  # a Python bool where an int meets a number
    if above.__class__ is not bool and (above | (x < y)).all():   # no tie, no nan: 1 or 0 only
        r = above.astype(m.float64)
    else:
        r = m.where(above, 1.0, m.where(x == y, 0.5, m.where(x < y, 0.0, math.nan)))
    dt = m.result_type(x, y)
    if dt.kind == "f" and r.dtype != dt:           # keep float32 gradients float32
        r = r.astype(dt)
    return plain_scalar(r[()] if r.ndim == 0 else r)


share = nondiff("share", _share)


def _where(c, x, y):
    if c.__class__ is bool and x.__class__ is float and y.__class__ is float:
        return x if c else y
    return plain_scalar(xp().where(c, x, y))


# the language's where() checks its arguments first (lang/builtins.py), so no builtin= here
where = defprim("where", _where, elementwise=True, kink="the branch not taken gets no gradient",
                side="condition", reads=("", "c", "c"),
                vjp=(None,
                     lambda g, ans, c, x, y: unbroadcast(where(c, g, 0.0), x),
                     lambda g, ans, c, x, y: unbroadcast(where(c, 0.0, g), y)),
                jvp=(None,
                     lambda t, ans, c, x, y: bcast(where(c, t, 0.0), ans),
                     lambda t, ans, c, x, y: bcast(where(c, 0.0, t), ans)), complex_values=True)


def tangent_times(t, d):
    """A tangent (or adjoint) times a local derivative, 0 wherever either is exactly 0, even where
    the other is nan or inf (a strong zero). Both modes multiply along the same paths from
    opposite ends: reverse mode's adjoint g * a is 0 where a primal factor a is 0, forward mode's
    term is a * t; masking only the running tangent or adjoint would let the modes disagree
    (`x**3*sqrt(x)` at 0: 0 backwards, nan forwards). Boxed values are never masked: a boxed
    zero may still carry higher orders."""
    c = t.__class__
    if c is float:
        if t == 0.0:
            return 0.0
        if d.__class__ is float:
            r = t * d
            return 0.0 if d == 0.0 and r != r else r
        return zero_where_zero(d, t * d)
    if c is Var or c is Dual:        # a boxed tangent that is 0 may still carry higher orders
        return t * d
    r = t * d
    if c is TangentStack and r.__class__ is c:   # a structured product is finite (zero_where_zero's
        return r                                 # own answer for it), without the call
    return zero_where_zero(t, r, d)


# The thread that traces a generated reverse sweep (diff/replay_arrays.py), None otherwise: such
# a sweep tests its adjoints' finiteness once, at its end, and runs the checked sweep where one
# is not finite. A non-finite entry a mask would make 0 is then in the result (every adjoint
# rule is linear in its adjoint: a nan or inf reaches the inputs' adjoints unless a rule drops
# that entry whatever its value, as it would drop the masked 0), so a finite result is the
# checked one. Other threads keep their tests.
ASSUMED_FINITE = [None]


def zero_where_zero(t, r, factor=None):
    """`r`, made from the tangent or adjoint `t` (t * d, g / y, ...), with 0 wherever t (or
    `factor`, the other side of the product, when given) is exactly 0: the convention of
    tangent_times, for the rules that cannot write r as t * d (a division keeps its rounding).
    Reverse mode's mul, div, pow, maximum and minimum use it, so an adjoint of 0 (a where()
    branch not taken) times an inf or nan factor stays 0, as in forward mode."""
    c = t.__class__
    if c is float:
        if t == 0.0:
            return 0.0
        if factor is None:
            return r
        return zero_where_zero(factor, r)           # t is a nonzero number: only the factor can be 0
    if c is Var or c is Dual:
        return r
    numpy = np()
    if r.__class__ is numpy.ndarray:  # on the CPU, mask only when a non-finite entry is there:
        if ASSUMED_FINITE[0] is not None and ASSUMED_FINITE[0] == get_ident():
            return r
        if finite(r):                 # one reduction, where the mask costs two more array passes
            return r
    elif r.__class__ is TangentStack:  # finite by construction (core/tangent_stack.py): as a finite
        return r                       # dense r, nothing to mask
    elif r.__class__ is Dual and c is np().ndarray and r.primal.__class__ is c and not (t == 0.0).any():
        return r if factor is None or factor.__class__ is Dual or factor.__class__ is Var \
            else strong_zero(r, factor == 0.0)  # no zero to mask: a forward step saved, no tape to miss it
    if factor is None or factor.__class__ is Var or factor.__class__ is Dual:
        return strong_zero(r, t == 0.0)
    return strong_zero(r, t == 0.0, factor == 0.0)


def strong_zero(r, *zeros):
    """`r`, 0 where it is nan and one of `zeros` holds (t == 0, factor == 0: a zero factor of the
    product or quotient r, which is +-0 or nan there). A number keeps its bits, a zero its sign,
    so an entry's gradient is the same whether its array was masked (zero_where_zero masks only
    an array with a non-finite entry) or not, whatever its array's other entries."""
    masked = r
    for zero in zeros:
        masked = where(zero, 0.0, masked)
    return where(r == r, r, masked)
