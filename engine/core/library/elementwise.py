"""Elementwise functions that are composites of table entries (numpy's second spellings, clip,
round with decimals, scipy's expit/betaln/digamma and the Bessel orders)."""
from __future__ import annotations

import math

from .. import ops
from ..backend import xp
from ..complexes import as_complex_number, is_complex
from ..primitives import run_dtype, shape, size
from .axes import ArgumentError, whole

DEG = math.pi / 180.0


def square(x):
    return x * x


def reciprocal(x):
    return ops.div(1.0, x)


def negative(x):
    return ops.neg(x)


def power(x1, x2):
    return ops.pow(x1, x2)


def complex_(real, imag):
    """complex(a, b) = a + 1j*b, elementwise and broadcast as numpy's, in the complex dtype that
    pairs with the run's float dtype (complex64 for float32, complex128 for float64)."""
    if is_complex(real) or is_complex(imag):
        raise TypeError("complex(a, b) takes real a and b; for complex ones write a + 1j*b")
    unit = as_complex_number(1j, run_dtype[0])
    return ops.add(real, ops.mul(unit, imag))


def sign(x):
    """numpy's sign: -1, 0 or 1 for a real x (no gradient); for a complex z = a + ib numpy 2's
    z/|z| as its loop computes it, a/hypot(a, b) + i b/hypot(a, b) (numpy's bits), 0 at z = 0.
    Its derivative is PyTorch's sgn's ((g - conj(s)² conj(g)) / 2|z| in this engine's adjoint
    convention), taken as 0 at z = 0 where it has none: hypot's kink, hypot'(0, 0) = 0, noted.
    Where a part is infinite numpy's sign is ±1 or ±1j (nan where both are), a constant."""
    if not is_complex(x):
        return ops.sign(x)
    a, b = ops.real(x), ops.imag(x)
    size_ = ops.hypot(a, b)
    zero = ops.eq(size_, 0.0)
    safe = ops.where(zero, 1.0, size_)
    unit = as_complex_number(1j, run_dtype[0])
    out = ops.where(zero, 0.0, ops.add(ops.div(a, safe), ops.mul(unit, ops.div(b, safe))))
    if ops.read(x, lambda v: bool(xp().isinf(v).any())):      # an infinite part: numpy's own value there
        infinite = ops.read(x, lambda v: xp().isinf(v))
        out = ops.where(infinite, ops.read(x, lambda v: xp().sign(v)), out)
    return out


def _real_angle(x, name):
    """x, refused where complex: numpy's deg2rad and rad2deg are for real numbers only."""
    if is_complex(x):
        raise TypeError(f"{name}() takes real values (numpy's {name} has no complex form); convert "
                        "angle(z), real(z) or imag(z)")
    return x


def deg2rad(x):
    return _real_angle(x, "deg2rad") * DEG


def rad2deg(x):
    return _real_angle(x, "rad2deg") * (1.0 / DEG)


def clip(a, a_min=None, a_max=None):
    """a where a_min <= a <= a_max, else the bound (which then gets the gradient)."""
    if a_min is None and a_max is None:
        raise ArgumentError("clip(): give a_min, a_max or both")
    out = a
    if a_min is not None:
        out = ops.where(ops.lt(out, a_min), a_min, out)     # masks no derivative follows (guards' reads)
    if a_max is not None:
        out = ops.where(ops.gt(out, a_max), a_max, out)
    return out


def round_(a, decimals=0):
    """Half to even, as numpy (a complex number part by part); no gradient."""
    places = whole(decimals, "decimals")
    if places == 0:
        return ops.rint(ops.read(a, ops.rint))              # read as the rounded number (its guard's)
    if is_complex(a):       # numpy's rounds the parts apart (a complex product with the scale mixes them)
        return ops.read(a, lambda v: xp().round(v, places))
    scale = 10.0 ** places
    return ops.div(ops.read(a, lambda v: ops.rint(v * scale)), scale)


def expit(x):
    return ops.sigmoid(x)


def digamma(x):
    return ops.polygamma(x, 0)


def polygamma(n, x):
    order = whole(n, "the order of polygamma")
    if order < 0:
        raise ArgumentError("polygamma(): the order must not be negative")
    return ops.polygamma(x, order)


def betaln(a, b):
    return ops.gammaln(a) + ops.gammaln(b) - ops.gammaln(a + b)


def i0(x):
    return ops.bessel_i(x, 0)


def i1(x):
    return ops.bessel_i(x, 1)


def i0e(x):
    return ops.bessel_ie(x, 0)


def i1e(x):
    return ops.bessel_ie(x, 1)


def j0(x):
    return ops.bessel_j(x, 0)


def j1(x):
    return ops.bessel_j(x, 1)


def int_(x):
    """Python's int(): toward zero, a whole number (no gradient). A traced value is read as the
    whole number it gives (a replay's guard compares that number, not the value)."""
    return ops.read(x, _truncated)


def _truncated(v):
    if hasattr(v, "size"):
        if v.size != 1:
            raise TypeError("int() takes one number, not an array of several")
        v = v.reshape(()).item()
    if v != v or v in (math.inf, -math.inf):
        raise ArgumentError(f"int(): {v} is not a finite number")
    return float(math.trunc(v))


def float_(x):
    """Python's float(): the number itself (the gradient flows; only its shape is read)."""
    if shape(x) and size(x) != 1:
        raise TypeError("float() takes one number, not an array of several")
    return ops.reshape(x, ()) if shape(x) else x
