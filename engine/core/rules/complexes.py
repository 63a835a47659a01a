"""Complex numbers' own primitives: real, imag, conj and angle (complex(a, b) is a + 1j*b, a
composite: core/library/elementwise.py). Each rule is the
transpose of the real-linear derivative (core/complexes.py states the convention): for z = x + iy
the adjoint of z is dL/dx - i dL/dy. An adjoint that reaches a real output here is taken as its
real part (real values that met complex ones along the sweep carry an imaginary part no real
derivative reads; the functions from complex to real are where it would be read, so they drop it).

numexpr spells real, imag and conj as numpy does, componentwise and exact (`complex_bits`): a
fused kernel or region over complex128 arrays computes them (core/fusion.py); a replay's step
replay runs them as the interpreter does (what of a replay takes real values only refuses
complex ones with its reason: diff/fallbacks.py)."""
from __future__ import annotations

import math

from ..backend import xp
from ..complexes import is_complex
from ..notes import NOTES
from ..primitives import defprim, plain_scalar, zeros_like
from ..tape import strip
from .comparisons import eq, where

# imag and angle are constants on real arrays, the only ones a fused kernel takes (real and conj
# are the identity there, and fuse as such)
NO_FUSION = "constant on the real float64 arrays fused kernels take"


def _real(x):
    if x.__class__ is float:
        return x
    if x.__class__ is complex:
        return x.real
    return plain_scalar(xp().real(x).copy()) if is_complex(x) else x


def _imag(x):
    if x.__class__ is float:
        return 0.0
    if x.__class__ is complex:
        return x.imag
    return plain_scalar(xp().imag(x).copy()) if is_complex(x) else zeros_like(x)


def _conj(x):
    if is_complex(x):
        return plain_scalar(xp().conj(x))
    return x.copy() if hasattr(x, "copy") and hasattr(x, "shape") else x      # numpy's conj makes a new array


def _angle(x):
    if x.__class__ is float:
        return math.atan2(0.0, x)                # numpy's angle of a real number: pi for -0.0, nan for nan
    if bool((xp().asarray(x) == 0).any()):
        NOTES.kink("angle", "angle at 0: derivative taken as 0")
    return plain_scalar(xp().angle(x))


real = defprim("real", _real, builtin="real", elementwise=True, needs_args=False, numexpr="real", complex_bits=True,
               vjp=(lambda g, ans, x: real(g),),
               jvp=(lambda t, ans, x: real(t),), complex_values=True, holomorphic=False)
imag = defprim("imag", _imag, builtin="imag", elementwise=True, no_fusion=NO_FUSION, needs_args=True,
               numexpr="imag", complex_bits=True,
               vjp=(lambda g, ans, x: -1j * real(g) if is_complex(x) else zeros_like(x),),
               jvp=(lambda t, ans, x: imag(t) if is_complex(x) else zeros_like(ans),), complex_values=True,
               holomorphic=False)
conj = defprim("conj", _conj, builtin="conj", elementwise=True, alias="conjugate", needs_args=False,
               numexpr="conj", ufuncs=("conjugate",), complex_bits=True,
               vjp=(lambda g, ans, x: conj(g),),
               jvp=(lambda t, ans, x: conj(t),), complex_values=True, holomorphic=False)


def _angle_vjp(g, ans, x):
    """angle(z) = atan2(y, x): dL/dx - i dL/dy = -i g / z (0 at z = 0, and for real z)."""
    if not is_complex(x):
        return zeros_like(x)
    return _at_nonzero(x, lambda z: -1j * real(g) / z)


def _angle_jvp(t, ans, x):
    if not is_complex(x):
        return zeros_like(ans)
    return _at_nonzero(x, lambda z: imag(t / z))


def with_a_zero(x):
    """x with its first element 0: the other side of a rule's test for a zero (prod's rules',
    `_at_nonzero`'s), where emit traces a rule's two sides (the table's `other_side`)."""
    x = x.copy()
    x.flat[0] = 0.0
    return x


def _at_nonzero(x, form):
    """form(z) where z != 0, 0 where z == 0 (angle's kink: its derivative is taken as 0)."""
    zero = eq(x, 0.0)
    if not bool(xp().asarray(strip(zero)).any()):
        return form(x)
    return where(zero, 0.0, form(where(zero, 1.0, x)))


angle = defprim("angle", _angle, builtin="angle", elementwise=True, no_fusion=NO_FUSION, needs_args=True,
                kink="angle'(0) = 0", vjp=(_angle_vjp,), jvp=(_angle_jvp,), complex_values=True,
                holomorphic=False, other_side=with_a_zero)


def abs_derivative(g, z):
    """abs of a complex z, the adjoint or tangent g: for the adjoint dL/dx - i dL/dy =
    real(g) conj(z) / |z|, 0 at z = 0 (abs's kink, abs'(0) = 0)."""
    return _at_nonzero(z, lambda w: real(g) * conj(w) / real(w * conj(w)) ** 0.5)


def abs_tangent(t, z):
    """abs's JVP at a complex z: real(conj(z) t) / |z|, 0 at z = 0."""
    return _at_nonzero(z, lambda w: real(conj(w) * t) / real(w * conj(w)) ** 0.5)


def reported_gradient(g, primal):
    """The gradient reported for an input from its reverse sweep's adjoint g: for a complex input
    the conjugate, dL/dx + i dL/dy (PyTorch's convention; the sweep's own is JAX's, its
    conjugate); for a real input the real part (a complex adjoint of a real value, as x * 1j
    gives, has an imaginary part no real derivative reads)."""
    if is_complex(primal):
        return conj(g) if is_complex(g) else g + 0j * zeros_like(strip(primal))
    return real(g) if is_complex(g) else g


def complex_output_error(what: str) -> str | None:
    """The message for a gradient of a complex output (`what` names it)."""
    return (f"{what} is complex: a gradient needs a real output (a loss). Take real(...), imag(...), "
            "abs(...) or abs(...)**2 of it; for a holomorphic f, `autodiff derivative` gives f'(z)")
