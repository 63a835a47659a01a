"""Special functions, scipy.special's: erf erfc gammaln gamma polygamma (digamma is its order 0)
beta logit xlogy and the Bessel functions J_n, I_n. Each derivative is written in engine ops,
through the family itself (polygamma(n)' = polygamma(n + 1), J_n' = (J_{n-1} - J_{n+1}) / 2), so
every order works. scipy is imported on the first evaluation, not when the table loads."""
from __future__ import annotations

import math

from ..backend import np, special_functions
from ..complexes import is_complex
from ..primitives import defprim, params_op, plain_scalar
from .arithmetic import div
from .comparisons import tangent_times
from .elementwise import binary_entry, exp, log, sigmoid, unary_entry
from .numeric import log1p

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def scipy_special():
    """scipy.special's functions on the active device (scipy's or cupyx's)."""
    return special_functions()


def _same_dtype(r, *args):
    """scipy's result in the arguments' float dtype (float32 stays float32), floats as floats."""
    dtypes = [a.dtype for a in args if getattr(a, "dtype", None) is not None]
    if dtypes and getattr(r, "dtype", None) is not None:
        want = np().result_type(*dtypes)
        if want.kind == "f" and r.dtype != want:
            r = r.astype(want)
    return plain_scalar(r[()] if getattr(r, "ndim", 1) == 0 and dtypes else r)


def _scipy(name):
    def impl(*args):
        return _same_dtype(getattr(scipy_special(), name)(*args), *args)
    impl.__name__ = name
    return impl


def _special(name, deriv, needs_ans=False, **kw):
    return unary_entry(name, None, deriv, needs_ans=needs_ans, impl=_scipy(name),
                       no_fusion=f"numexpr has no {name} (scipy.special's)", **kw)


# holomorphic: scipy's erf and erfc take complex values, their derivative the same exp(-z²)
erf = _special("erf", lambda ans, x: TWO_OVER_SQRT_PI * exp(-(x * x)), complex_values=True)
erfc = _special("erfc", lambda ans, x: -TWO_OVER_SQRT_PI * exp(-(x * x)), complex_values=True)
logit = _special("logit", lambda ans, x: div(1.0, x * (1.0 - x)))
# log(expit(x)), scipy's (no underflow to -inf on the negative tail): its derivative expit(-x)
log_expit = _special("log_expit", lambda ans, x: sigmoid(-x))


def _polygamma(x, n):
    sp = scipy_special()
    if n != 0 and is_complex(x):
        # a refusal where the sweep meets it too (digamma's derivative): NotImplementedError, located
        raise NotImplementedError(f"polygamma of order {n} does not take complex values (scipy's polygamma "
                                  "has no complex form; digamma, its order 0, has): apply it to real(z) or imag(z)")
    return _same_dtype(sp.digamma(x) if n == 0 else sp.polygamma(n, x), x)


# polygamma(x, n) with the order n a parameter: its derivative is the next order. Complex values
# at order 0 (digamma, holomorphic, scipy's); its derivative, order 1, refuses them
polygamma = defprim("polygamma", _polygamma, make_op=params_op("n"), elementwise_values=True,
                    vjp=(lambda g, ans, x, n: tangent_times(g, polygamma(x, n + 1)),),
                    jvp=(lambda t, ans, x, n: tangent_times(t, polygamma(x, n + 1)),), complex_values=True)
gammaln = _special("gammaln", lambda ans, x: polygamma(x, 0), alias="lgamma")      # math.lgamma
# holomorphic off the poles: scipy's gamma takes complex values (gammaln does not: loggamma's branch)
gamma = _special("gamma", lambda ans, x: ans * polygamma(x, 0), needs_ans=True, needs_args=True, complex_values=True)


def _beta_da(ans, a, b):
    return ans * (polygamma(a, 0) - polygamma(a + b, 0))


beta = binary_entry("beta", _scipy("beta"), lambda ans, a, b: _beta_da(ans, a, b),
                    lambda ans, a, b: _beta_da(ans, b, a), needs_ans=True, no_fusion="numexpr has no beta (scipy.special's)")
# x log y, 0 where x is 0 (scipy's convention)
xlogy = binary_entry("xlogy", _scipy("xlogy"), lambda ans, x, y: log(y), lambda ans, x, y: div(x, y),
                     no_fusion="numexpr has no xlogy (scipy.special's)", complex_values=True)


# x log1p(y), 0 where x is 0 and y is not nan (scipy's convention, as xlogy's)
xlog1py = binary_entry("xlog1py", _scipy("xlog1py"), lambda ans, x, y: log1p(y), lambda ans, x, y: div(x, 1.0 + y),
                       no_fusion="numexpr has no xlog1py (scipy.special's)", complex_values=True)


def _bessel_j(x, n):
    return _same_dtype(scipy_special().jv(n, x), x)


def _bessel_i(x, n):
    return _same_dtype(scipy_special().iv(n, x), x)


def _bessel_j_slope(x, n):
    return 0.5 * (bessel_j(x, n - 1) - bessel_j(x, n + 1))


def _bessel_i_slope(x, n):
    return 0.5 * (bessel_i(x, n - 1) + bessel_i(x, n + 1))


# J_n and I_n with the integer order n a parameter (i0 i1 j0 j1 are orders 0 and 1)
bessel_j = defprim("bessel_j", _bessel_j, make_op=params_op("n"), elementwise_values=True,
                   vjp=(lambda g, ans, x, n: tangent_times(g, _bessel_j_slope(x, n)),),
                   jvp=(lambda t, ans, x, n: tangent_times(t, _bessel_j_slope(x, n)),))
bessel_i = defprim("bessel_i", _bessel_i, make_op=params_op("n"), elementwise_values=True,
                   vjp=(lambda g, ans, x, n: tangent_times(g, _bessel_i_slope(x, n)),),
                   jvp=(lambda t, ans, x, n: tangent_times(t, _bessel_i_slope(x, n)),))


def _spherical_j(x, n):
    return _same_dtype(scipy_special().spherical_jn(n, x), x)


# the spherical Bessel functions j_n (j_0(z) = sin z / z, sinc's), order n a parameter:
# j_n' = (n j_{n-1} - (n + 1) j_{n+1}) / (2n + 1), no division by z, so every order is right at 0
spherical_j = defprim("spherical_j", _spherical_j, make_op=params_op("n"), elementwise_values=True,
                      vjp=(lambda g, ans, x, n: tangent_times(g, _spherical_j_slope(x, n)),),
                      jvp=(lambda t, ans, x, n: tangent_times(t, _spherical_j_slope(x, n)),))


def _spherical_j_slope(x, n):
    if n == 0:
        return -spherical_j(x, 1)
    return (n * spherical_j(x, n - 1) - (n + 1) * spherical_j(x, n + 1)) * (1.0 / (2 * n + 1))


def _sinc(x):
    return plain_scalar(np().sinc(x)) if x.__class__ is float else _same_dtype(np().sinc(x), x)


# numpy's sinc, sin(pi x) / (pi x) with 1 at 0 (numpy's value): pi j_0'(pi x) = -pi j_1(pi x)
sinc = unary_entry("sinc", None, lambda ans, x: -math.pi * spherical_j(math.pi * x, 1), impl=_sinc,
                   no_fusion="numexpr has no sinc (numpy's where() of sin(pi x) / (pi x))")
