"""np.fft: fft ifft fft2 ifft2 fftn ifftn rfft irfft fftshift ifftshift, one entry each, with
numpy's values (the forward calls the backend's own function). The library (core/library/fft.py)
reads numpy's arguments and gives every entry the same resolved parameters: `lengths` (numpy's
n or s, one per axis), `axes` (distinct, non-negative) and `norm` ("backward", "ortho" or
"forward"); the shifts take `axes` only.

Every transform is linear, so its JVP is the entry itself on the tangent, and its VJP its
transpose in the sweep's convention (core/complexes.py: the plain transpose of the real-linear
derivative, as JAX's fft transpose rules). The DFT matrix is symmetric, so fft's transpose is fft
of the adjoint (ifft's is ifft), at the same norm's scale; numpy's n pads the input with zeros or
cuts it, whose transpose cuts the result back or pads it (`_resized`). rfft is fft's first
n//2+1 outputs of a real input: its transpose is the real part of fft of the adjoint padded with
zeros to n. irfft reads the Hermitian half-spectrum y (imag(y[0]) and, for an even n,
imag(y[n/2]) unread): x = scale * (y0 + 2 sum_k Re(y_k w^{jk}) + y_{n/2} (-1)^j), so its
transpose is conj of rfft of the adjoint, weighted 1 at k = 0 (and n/2 for an even n) and 2
elsewhere (the Hermitian weighting), times the norm's scale 1/n, 1/sqrt(n) or 1. fftshift is a
roll; its transpose is ifftshift, and the other way round."""
from __future__ import annotations

import math

from ..backend import xp
from ..complexes import is_complex
from ..primitives import defprim, params_op, plain_scalar, shape
from ..tape import strip
from .complexes import conj, real
from .linalg import float_dtype
from .shapes import getitem, untake

TRANSFORM = params_op("lengths", "axes", "norm", shapes=("lengths", "axes"))


def _resized(v, axes, lengths):
    """v cut to, or padded with zeros to, `lengths` along `axes` (numpy's n and s)."""
    cut = tuple(slice(0, min(n, shape(v)[a])) for a, n in zip(axes, lengths))
    index = [slice(None)] * len(shape(v))
    for a, s in zip(axes, cut):
        index[a] = s
    index = tuple(index)
    if any(shape(v)[a] > n for a, n in zip(axes, lengths)):
        v = getitem(v, index)
    if any(shape(v)[a] < n for a, n in zip(axes, lengths)):
        target = list(shape(v))
        for a, n in zip(axes, lengths):
            target[a] = n
        v = untake(v, index, tuple(target))
    return v


def _own_lengths(x, axes):
    return tuple(shape(x)[a] for a in axes)


def _complex_transform(name, numpy_call):
    """An entry for a complex-to-complex transform; numpy_call(m, x, lengths, axes, norm)."""
    def impl(x, lengths, axes, norm):
        return plain_scalar(numpy_call(xp(), x, lengths, axes, norm))
    impl.__name__ = name

    def vjp(g, ans, x, lengths, axes, norm):
        back = _resized(op(g, lengths, axes, norm), axes, _own_lengths(x, axes))
        return back if is_complex(x) else real(back)

    def jvp(t, ans, x, lengths, axes, norm):
        return op(t, lengths, axes, norm)

    op = defprim(name, impl, needs_args=False, make_op=TRANSFORM, vjp=(vjp,), jvp=(jvp,), complex_values=True,
                 emits_at_shapes=True)
    return op


fft = _complex_transform("fft", lambda m, x, n, a, norm: m.fft.fft(x, n[0], a[0], norm))
ifft = _complex_transform("ifft", lambda m, x, n, a, norm: m.fft.ifft(x, n[0], a[0], norm))
fft2 = _complex_transform("fft2", lambda m, x, s, a, norm: m.fft.fft2(x, s, a, norm))
ifft2 = _complex_transform("ifft2", lambda m, x, s, a, norm: m.fft.ifft2(x, s, a, norm))
fftn = _complex_transform("fftn", lambda m, x, s, a, norm: m.fft.fftn(x, s, a, norm))
ifftn = _complex_transform("ifftn", lambda m, x, s, a, norm: m.fft.ifftn(x, s, a, norm))


def inverse_scale(norm: str, n: int) -> float:
    """The factor an inverse transform of length n applies at numpy's `norm`."""
    return {"backward": 1.0 / n, "ortho": 1.0 / math.sqrt(n), "forward": 1.0}[norm]


def _half(n: int) -> int:
    """The length of the half-spectrum of n real values (rfft's output, irfft's input)."""
    return n // 2 + 1


def _rfft_vjp(g, ans, x, lengths, axes, norm):
    (n,) = lengths
    full = _resized(g, axes, (n,))                      # the unread upper half: zeros
    return _resized(real(fft(full, lengths, axes, norm)), axes, _own_lengths(x, axes))


def _hermitian_weights(n: int, like):
    """1 at k = 0 (and at n/2 for an even n), 2 at the other k < n//2 + 1."""
    w = xp().full(_half(n), 2.0, dtype=like)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def _irfft_vjp(g, ans, x, lengths, axes, norm):
    (n,), (a,) = lengths, axes
    spectrum = rfft(real(g), lengths, axes, "backward")     # the output is real: g's real part is read
    w = _hermitian_weights(n, float_dtype(strip(g))) * inverse_scale(norm, n)
    w = w.reshape((-1,) + (1,) * (len(shape(g)) - a - 1))
    back = _resized(conj(spectrum * w), axes, _own_lengths(x, axes))
    return back if is_complex(x) else real(back)


rfft = defprim("rfft", lambda x, lengths, axes, norm: plain_scalar(xp().fft.rfft(x, lengths[0], axes[0], norm)),
               needs_args=False, make_op=TRANSFORM, vjp=(_rfft_vjp,), emits_at_shapes=True,
               jvp=(lambda t, ans, x, lengths, axes, norm: rfft(t, lengths, axes, norm),))
irfft = defprim("irfft", lambda x, lengths, axes, norm: plain_scalar(xp().fft.irfft(x, lengths[0], axes[0], norm)),
                needs_args=False, make_op=TRANSFORM, vjp=(_irfft_vjp,), emits_at_shapes=True,
                jvp=(lambda t, ans, x, lengths, axes, norm: irfft(t, lengths, axes, norm),), complex_values=True)

SHIFT = params_op("axes", shapes=("axes",))
fftshift = defprim("fftshift", lambda x, axes: xp().fft.fftshift(x, axes), needs_args=False, make_op=SHIFT,
                   vjp=(lambda g, ans, x, axes: ifftshift(g, axes),),
                   jvp=(lambda t, ans, x, axes: fftshift(t, axes),), complex_values=True, emits_at_shapes=True)
ifftshift = defprim("ifftshift", lambda x, axes: xp().fft.ifftshift(x, axes), needs_args=False, make_op=SHIFT,
                    vjp=(lambda g, ans, x, axes: fftshift(g, axes),),
                    jvp=(lambda t, ans, x, axes: ifftshift(t, axes),), complex_values=True, emits_at_shapes=True)
