"""Special functions, scipy.special's: erf erfc gammaln gamma polygamma (digamma is its order 0)
beta logit xlogy and the Bessel functions J_n, I_n. Each derivative is written in engine ops,
through the family itself (polygamma(n)' = polygamma(n + 1), J_n' = (J_{n-1} - J_{n+1}) / 2), so
every order works. scipy is imported on the first evaluation, not when the table loads."""
from __future__ import annotations

import math

from ..backend import np, special_functions, xp
from ..complexes import is_complex
from ..notes import NOTES
from ..primitives import defprim, params_op, plain_scalar
from .arithmetic import div
from .comparisons import le, lt, sign, tangent_times, where
from .elementwise import binary_entry, exp, has_zero, log, sigmoid, unary_entry
from .numeric import hypot, log1p

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
SQRT_TWO_PI = math.sqrt(2.0 * math.pi)


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


# ---- the statistics functions of scipy.special: each its derivative in engine ops --------------
# the inverses of erf, erfc and the normal CDF: 1 / f'(ans)
erfinv = _special("erfinv", lambda ans, x: SQRT_PI_OVER_TWO * exp(ans * ans), needs_ans=True)
erfcinv = _special("erfcinv", lambda ans, x: -SQRT_PI_OVER_TWO * exp(ans * ans), needs_ans=True)
ndtri = _special("ndtri", lambda ans, x: SQRT_TWO_PI * exp(0.5 * (ans * ans)), needs_ans=True)
# the normal CDF and its log: the density, over the CDF for the log (exp(-x²/2 - ans), no 0/0 far left)
ndtr = _special("ndtr", lambda ans, x: exp(-0.5 * (x * x)) * (1.0 / SQRT_TWO_PI))
log_ndtr = _special("log_ndtr", lambda ans, x: exp(-0.5 * (x * x) - ans) * (1.0 / SQRT_TWO_PI),
                    needs_ans=True, needs_args=True)
# exp(x²) erfc(x): 2x erfcx(x) - 2/sqrt(pi)
erfcx = _special("erfcx", lambda ans, x: 2.0 * x * ans - TWO_OVER_SQRT_PI, needs_ans=True, needs_args=True)
# log(gamma(x)) of a real x (scipy's loggamma; gammaln is log|gamma|): digamma
loggamma = _special("loggamma", lambda ans, x: polygamma(x, 0))
# -x log x (0 at 0, -inf below): -(log x + 1)
entr = _special("entr", lambda ans, x: -(log(x) + 1.0))
# x log(x / y) and x log(x / y) - x + y (scipy's conventions at 0 and outside the domain)
rel_entr = binary_entry("rel_entr", _scipy("rel_entr"), lambda ans, x, y: log(div(x, y)) + 1.0,
                        lambda ans, x, y: -div(x, y), no_fusion="numexpr has no rel_entr (scipy.special's)")
kl_div = binary_entry("kl_div", _scipy("kl_div"), lambda ans, x, y: log(div(x, y)),
                      lambda ans, x, y: 1.0 - div(x, y), no_fusion="numexpr has no kl_div (scipy.special's)")


def _huber(delta, r):
    m = xp()
    if bool(m.any(m.abs(m.asarray(r)) == m.asarray(delta))):
        NOTES.kink("huber", "huber at |r| = delta: the second derivative taken as the quadratic side's")
    return _same_dtype(scipy_special().huber(delta, r), delta, r)


def _huber_inside(delta, r):
    return le(r * r, delta * delta)


def _magnitude(r):
    return where(lt(r, 0.0), -r, r)           # |r| without abs's note at 0 (no kink of huber there)


# r²/2 where |r| <= delta, delta (|r| - delta/2) outside: r or delta sign(r) in r, 0 or |r| - delta in delta
huber = binary_entry("huber", _huber, lambda ans, d, r: where(_huber_inside(d, r), 0.0, _magnitude(r) - d),
                     lambda ans, d, r: where(_huber_inside(d, r), r, d * sign(r)), kink="huber''(|r| = delta) is the quadratic side's",
                     side="difference", no_fusion="numexpr has no huber (scipy.special's)")


def _pseudo_huber_root(delta, r):
    return hypot(1.0, div(r, delta))         # sqrt(1 + (r/delta)²) without overflow


# delta² (sqrt(1 + (r/delta)²) - 1): r / root in r, (2 ans - r² / root) / delta in delta
pseudo_huber = binary_entry("pseudo_huber", _scipy("pseudo_huber"),
                            lambda ans, d, r: div(2.0 * ans - div(r * r, _pseudo_huber_root(d, r)), d),
                            lambda ans, d, r: div(r, _pseudo_huber_root(d, r)), needs_ans=True,
                            no_fusion="numexpr has no pseudo_huber (scipy.special's)")


def _bessel_ie(x, n):
    sp = scipy_special()
    if n == 0 and has_zero(x):
        NOTES.kink("bessel_ie", "i0e at 0: derivative taken as 0 (exp(-|x|)'s kink: the slopes beside it are -1 and 1)")
    value = sp.i0e(x) if n == 0 else sp.i1e(x) if n == 1 else sp.ive(n, x)
    return _same_dtype(value, x)


def _bessel_ie_slope(x, n):
    return 0.5 * (bessel_ie(x, abs(n - 1)) + bessel_ie(x, n + 1)) - sign(x) * bessel_ie(x, n)


# exp(-|x|) I_n(x), scipy's i0e i1e (ive beyond), the order a parameter: (I_{n-1} + I_{n+1})/2 scaled,
# less sign(x) times itself (sign(0) = 0: i0e's kink at 0, noted)
bessel_ie = defprim("bessel_ie", _bessel_ie, make_op=params_op("n"), elementwise_values=True,
                    kink="i0e'(0) = 0", side="sign",
                    vjp=(lambda g, ans, x, n: tangent_times(g, _bessel_ie_slope(x, n)),),
                    jvp=(lambda t, ans, x, n: tangent_times(t, _bessel_ie_slope(x, n)),))
