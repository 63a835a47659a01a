"""More of numpy's elementwise functions: log1p expm1 exp2 cbrt, the inverse hyperbolics,
arctan2 hypot logaddexp fmod mod (the `%` operator), and the integer-valued ceil trunc round and
floor_divide (the `//` operator; no gradient). Same shape
of entry as elementwise.py, made by its unary_entry and binary_entry (the strong zero included):
forward, VJP and JVP together, derivatives in engine ops."""
from __future__ import annotations

import math

from ..backend import np, xp
from ..complexes import is_complex
from ..notes import NOTES
from ..primitives import float_fallback, nondiff, plain_scalar, run_dtype
from .arithmetic import div
from .comparisons import eq, ne, share, sign, where
from .elementwise import LN2, binary_entry, exp, has_zero, note_ties, sqrt, unary_entry


# numexpr has the inverse hyperbolics and arctan2 too: not fused until checked to numpy's bits
UNCHECKED = "numexpr's {0} is not checked against numpy's {0} to the bit"
log1p = unary_entry("log1p", math.log1p, lambda ans, x: div(1.0, 1.0 + x), numexpr="log1p", dear=True, complex_values=True)
expm1 = unary_entry("expm1", math.expm1, lambda ans, x: ans + 1.0, needs_ans=True, numexpr="expm1", dear=True, complex_values=True)
exp2 = unary_entry("exp2", lambda x: 2.0 ** x, lambda ans, x: ans * LN2, needs_ans=True,
                   no_fusion="numexpr has no exp2", complex_values=True)
# cbrt'(0) = +inf, as sqrt's
cbrt = unary_entry("cbrt", math.cbrt, lambda ans, x: div(1.0, 3.0 * (ans * ans)), needs_ans=True,
                   no_fusion="numexpr has no cbrt")
# hypot(x, 1), not sqrt(x*x + 1): no overflow for |x| > 1e154; for a complex z (hypot takes no
# complex values) 1/sqrt((1 + iz)(1 - iz)), exact near z = ±i, the principal root as numpy's
# arcsinh = log(z + sqrt(1 + z²)) takes it (1 + z² crosses the negative reals only on its cuts)
arcsinh = unary_entry("arcsinh", math.asinh, lambda ans, x: div(1.0, sqrt((1.0 + 1j * x) * (1.0 - 1j * x)))
                      if is_complex(x) else div(1.0, hypot(x, 1.0)), alias="asinh",
                      no_fusion=UNCHECKED.format("arcsinh"), complex_values=True)
# sqrt(x - 1) sqrt(x + 1), not sqrt(x*x - 1): exact near 1, no overflow for large x
arccosh = unary_entry("arccosh", math.acosh, lambda ans, x: div(1.0, sqrt(x - 1.0) * sqrt(x + 1.0)),
                      alias="acosh", no_fusion=UNCHECKED.format("arccosh"), complex_values=True)
# (1 - x)(1 + x), not 1 - x*x: exact near |x| = 1
arctanh = unary_entry("arctanh", math.atanh, lambda ans, x: div(1.0, (1.0 - x) * (1.0 + x)),
                      alias="atanh", no_fusion=UNCHECKED.format("arctanh"), complex_values=True)


def _binary(npname, mathfn):
    """Forward of a binary elementwise function: math for two floats, the backend otherwise."""
    def impl(x, y):
        if x.__class__ is float and y.__class__ is float:
            try:
                return mathfn(x, y)
            except (ValueError, OverflowError, ZeroDivisionError):
                return float_fallback(getattr(xp(), npname), x, y)
        return plain_scalar(getattr(xp(), npname)(x, y))
    impl.__name__ = npname
    return impl


arctan2 = binary_entry("arctan2", _binary("arctan2", math.atan2),
                       lambda ans, y, x: div(x, x * x + y * y),
                       lambda ans, y, x: div(-y, x * x + y * y), alias="atan2",
                       no_fusion=UNCHECKED.format("arctan2"))


def _hypot_share(ans, x):
    # x / hypot; at the origin taken as 0 (the norm convention)
    return where(eq(ans, 0.0), 0.0, div(x, where(eq(ans, 0.0), 1.0, ans)))


def _hypot(x, y):
    if x.__class__ is float and y.__class__ is float:
        if x == 0.0 and y == 0.0:
            NOTES.kink("hypot", "hypot at the origin: gradient taken as 0")
        return math.hypot(x, y)
    m = xp()
    if bool(m.any((m.asarray(x) == 0) & (m.asarray(y) == 0))):
        NOTES.kink("hypot", "hypot at the origin: gradient taken as 0")
    return plain_scalar(m.hypot(x, y))


hypot = binary_entry("hypot", _hypot, lambda ans, x, y: _hypot_share(ans, x),
                     lambda ans, x, y: _hypot_share(ans, y), needs_ans=True,
                     kink="hypot'(0, 0) = 0", side="sign")


def _logaddexp(x, y):
    if x.__class__ is float and y.__class__ is float:
        big = x if x >= y else y
        if big == -math.inf:
            return -math.inf
        if big == math.inf:
            return math.inf
        return big + math.log1p(math.exp(-math.fabs(x - y)))
    return plain_scalar(xp().logaddexp(x, y))


logaddexp = binary_entry("logaddexp", _logaddexp, lambda ans, x, y: exp(x - ans), lambda ans, x, y: exp(y - ans),
                         needs_ans=True, no_fusion="numexpr has no logaddexp")


def _integral(name, mathfn, complex_values=False):
    """An integer-valued function: a step function to AD (no gradient), inf and nan kept, and the
    sign of a zero (math's integer results have none: ceil(-0.5) is -0.0, as numpy's). numpy
    rounds a complex number part by part with rint only (ceil, floor and trunc refuse it)."""
    def impl(x):
        if x.__class__ is float and math.isfinite(x):
            return math.copysign(float(mathfn(x)), x)
        return plain_scalar(getattr(xp(), name)(x))
    impl.__name__ = name
    return nondiff(name, impl, builtin=name, elementwise_values=True, complex_values=complex_values)


ceil = _integral("ceil", math.ceil)
trunc = _integral("trunc", math.trunc)
rint = _integral("rint", round, complex_values=True)   # Python's round is numpy's: half to even


def _fmod(x, y):
    if x.__class__ is float and y.__class__ is float:
        try:
            return math.fmod(x, y)
        except ValueError:
            return float_fallback(xp().fmod, x, y)
    return plain_scalar(xp().fmod(x, y))


# x - q y with q the whole quotient toward 0: 1 for x, -q for y (a constant to AD). q is
# rint((x - fmod) / y), exact, where trunc(x / y) takes the rounded quotient's: at 1 and 0.1 it is
# 9, trunc(1 / 0.1) is 10
fmod = binary_entry("fmod", _fmod, lambda ans, x, y: 1.0, lambda ans, x, y: -rint(div(x - ans, y)), needs_ans=True,
                    no_fusion="numexpr has no fmod (nor rint, its derivative's)")


def _real(v):
    """A truth value or mask as a number of the run's dtype (numpy would make bool // bool int8)."""
    if v.__class__ is bool:
        return float(v)
    return v.astype(run_dtype[0]) if getattr(v, "dtype", None) == bool else v


def _floor_divide(x, y):
    """numpy's floor_divide, Python's // where y is not 0: `1 // 0.1` is 9 (floor(1 / 0.1) is 10),
    `inf // 2` nan; at y = 0 IEEE's x / 0 (inf, -inf or nan)."""
    if x.__class__ is float and y.__class__ is float:
        return x // y if y != 0.0 else float_fallback(np().floor_divide, x, y)
    return plain_scalar(xp().floor_divide(_real(x), _real(y)))


def _mod(x, y):
    """numpy's mod, Python's % where y is not 0 (`1 % 0.1` is 0.0999...95), nan at y = 0."""
    if x.__class__ is float and y.__class__ is float:
        return x % y if y != 0.0 else float_fallback(np().mod, x, y)
    return plain_scalar(xp().mod(_real(x), _real(y)))


# the `//` operator and floor_divide(): a step function (no gradient)
floor_divide = nondiff("floor_divide", _floor_divide, builtin="floor_divide")
# the `%` operator, mod() and remainder(): x - floor_divide(x, y) y, 1 for x and -floor_divide(x, y) for y
mod = binary_entry("mod", _mod, lambda ans, x, y: 1.0, lambda ans, x, y: -floor_divide(x, y),
                   no_fusion="numexpr has no remainder (numpy's %) nor floor_divide")


def _numpy(name):
    """numpy's elementwise function `name` on the backend, its float result a Python float."""
    def impl(*args):
        return plain_scalar(getattr(xp(), name)(*args))
    impl.__name__ = name
    return impl


# log2(2^x + 2^y), numpy's: each partial 2^(x - ans), as logaddexp's e^(x - ans)
logaddexp2 = binary_entry("logaddexp2", _numpy("logaddexp2"), lambda ans, x, y: exp2(x - ans),
                          lambda ans, x, y: exp2(y - ans), needs_ans=True, no_fusion="numexpr has no logaddexp2")


def _nan_ignoring(name):
    """numpy's fmax (fmin): x where x >= y (x <= y) or y is nan, else y. numpy's own loops give
    that x at a tie of +0 and -0 in a short array but y in a long one (its SIMD loop): the short
    one's, whatever the length, as maximum's one answer."""
    def impl(x, y):
        note_ties(name, x, y)
        if x.__class__ is float and y.__class__ is float:
            return x if (x >= y if name == "fmax" else x <= y) or y != y else y
        m = xp()
        keep = (m.greater_equal(x, y) if name == "fmax" else m.less_equal(x, y)) | m.not_equal(y, y)
        return plain_scalar(m.where(keep, x, y))
    impl.__name__ = name
    return impl


def _kept_share(x, y, larger):
    """x's share of fmax(x, y) (larger) or fmin(x, y): maximum's or minimum's share where both are
    numbers, all of it where only y is nan, none where x is nan (numpy's fmax ignores a nan)."""
    return where(ne(x, x), 0.0, where(ne(y, y), 1.0, share(x, y) if larger else share(y, x)))


# numpy's fmax and fmin: maximum and minimum that ignore a nan (nan only where both are)
fmax = binary_entry("fmax", _nan_ignoring("fmax"), lambda ans, x, y: _kept_share(x, y, True),
                    lambda ans, x, y: _kept_share(y, x, True), kink="ties split the gradient evenly",
                    side="difference", no_fusion="numexpr has no fmax")
fmin = binary_entry("fmin", _nan_ignoring("fmin"), lambda ans, x, y: _kept_share(x, y, False),
                    lambda ans, x, y: _kept_share(y, x, False), kink="ties split the gradient evenly",
                    side="difference", no_fusion="numexpr has no fmin")


def _copysign(x1, x2):
    if has_zero(x1):
        NOTES.kink("copysign", "copysign with x1 at 0: derivative in x1 taken as 0 (|x1|'s)")
    if x1.__class__ is float and x2.__class__ is float:
        return math.copysign(x1, x2)
    return plain_scalar(xp().copysign(x1, x2))


# |x1| with x2's sign: sign(x1) sign(ans) in x1 (0 at x1 = 0, abs's convention), nothing in x2
copysign = binary_entry("copysign", _copysign, lambda ans, x, y: sign(x) * sign(ans), lambda ans, x, y: 0.0,
                        needs_ans=True, kink="copysign'(0) = 0 in x1, as abs's", side="sign",
                        no_fusion="numexpr has no copysign")


def _heaviside(x1, x2):
    if has_zero(x1):
        NOTES.kink("heaviside", "heaviside at x1 = 0: derivative in x1 taken as 0")
    return plain_scalar(xp().heaviside(x1, x2))


# a step in x1 (derivative 0, its jump at 0 noted); x2 is the value at x1 = 0, so its derivative
# is 1 there and 0 elsewhere: 1 - sign(x1)², in x1's float type
heaviside = binary_entry("heaviside", _heaviside, lambda ans, x, y: 0.0,
                         lambda ans, x, y: 1.0 - sign(x) * sign(x), kink="heaviside'(0) = 0 in x1",
                         side="sign", no_fusion="numexpr has no heaviside")
