"""Special functions, scipy.special's: erf erfc gammaln gamma polygamma (digamma is its order 0)
beta logit xlogy and the Bessel functions J_n, I_n. Each derivative is written in engine ops,
through the family itself (polygamma(n)' = polygamma(n + 1), J_n' = (J_{n-1} - J_{n+1}) / 2), so
every order works. scipy is imported on the first evaluation, not when the table loads."""
from __future__ import annotations

import math

from ..backend import np
from ..primitives import defprim, params_op, plain_scalar
from .arithmetic import div
from .elementwise import exp, log
from .shapes import bcast, unbroadcast

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def scipy_special():
    # imported lazily: scipy costs a quarter of a second, and only programs that use it pay
    import scipy.special
    return scipy.special


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
    impl = _scipy(name)
    return defprim(name, lambda x: impl(x), needs_ans=needs_ans, builtin=name,
                   vjp=(lambda g, ans, x: g * deriv(ans, x),),
                   jvp=(lambda t, ans, x: t * deriv(ans, x),), **kw)


erf = _special("erf", lambda ans, x: TWO_OVER_SQRT_PI * exp(-(x * x)))
erfc = _special("erfc", lambda ans, x: -TWO_OVER_SQRT_PI * exp(-(x * x)))
logit = _special("logit", lambda ans, x: div(1.0, x * (1.0 - x)))


def _polygamma(x, n):
    sp = scipy_special()
    return _same_dtype(sp.digamma(x) if n == 0 else sp.polygamma(n, x), x)


# polygamma(x, n) with the order n a parameter: its derivative is the next order
polygamma = defprim("polygamma", _polygamma, make_op=params_op("n"),
                    vjp=(lambda g, ans, x, n: g * polygamma(x, n + 1),),
                    jvp=(lambda t, ans, x, n: t * polygamma(x, n + 1),))
gammaln = _special("gammaln", lambda ans, x: polygamma(x, 0), alias="lgamma")      # math.lgamma
gamma = _special("gamma", lambda ans, x: ans * polygamma(x, 0), needs_ans=True)


def _beta_da(ans, a, b):
    return ans * (polygamma(a, 0) - polygamma(a + b, 0))


_beta = _scipy("beta")
beta = defprim("beta", lambda a, b: _beta(a, b), needs_ans=True, builtin="beta",
               vjp=(lambda g, ans, a, b: unbroadcast(g * _beta_da(ans, a, b), a),
                    lambda g, ans, a, b: unbroadcast(g * _beta_da(ans, b, a), b)),
               jvp=(lambda t, ans, a, b: bcast(t * _beta_da(ans, a, b), ans),
                    lambda t, ans, a, b: bcast(t * _beta_da(ans, b, a), ans)))
_xlogy = _scipy("xlogy")
# x log y, 0 where x is 0 (scipy's convention)
xlogy = defprim("xlogy", lambda x, y: _xlogy(x, y), builtin="xlogy",
                vjp=(lambda g, ans, x, y: unbroadcast(g * log(y), x),
                     lambda g, ans, x, y: unbroadcast(div(g * x, y), y)),
                jvp=(lambda t, ans, x, y: bcast(t * log(y), ans),
                     lambda t, ans, x, y: bcast(div(t * x, y), ans)))


def _bessel_j(x, n):
    return _same_dtype(scipy_special().jv(n, x), x)


def _bessel_i(x, n):
    return _same_dtype(scipy_special().iv(n, x), x)


# J_n and I_n with the integer order n a parameter (i0 i1 j0 j1 are orders 0 and 1)
bessel_j = defprim("bessel_j", _bessel_j, make_op=params_op("n"),
                   vjp=(lambda g, ans, x, n: g * (0.5 * (bessel_j(x, n - 1) - bessel_j(x, n + 1))),),
                   jvp=(lambda t, ans, x, n: t * (0.5 * (bessel_j(x, n - 1) - bessel_j(x, n + 1))),))
bessel_i = defprim("bessel_i", _bessel_i, make_op=params_op("n"),
                   vjp=(lambda g, ans, x, n: g * (0.5 * (bessel_i(x, n - 1) + bessel_i(x, n + 1))),),
                   jvp=(lambda t, ans, x, n: t * (0.5 * (bessel_i(x, n - 1) + bessel_i(x, n + 1))),))
