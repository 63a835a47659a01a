"""np.fft's functions with numpy's arguments: fft ifft rfft irfft (n, axis, norm), fft2 ifft2
fftn ifftn (s, axes, norm), fftshift ifftshift (axes). Each resolves numpy's arguments as numpy
does (n or s: the lengths along the axes, by default the input's own, irfft's 2(m-1); axes: the
last one, two or len(s); norm: None is "backward") and calls its table entry (core/rules/fft.py).
fftfreq and rfftfreq (n, d) are composites: numpy's k * (1 / (n d)), differentiable in d.
rfft2 rfftn irfft2 irfftn hfft ihfft are composites of the entries, as numpy defines them (its
own code is these steps, so the values are numpy's to the bit): rfftn is rfft along the last of
its axes then fft along the others (the last first), irfftn ifft along all but the last (the
first first) then irfft along it (its length by default 2(m-1)); hfft is irfft of the conjugate,
ihfft the conjugate of rfft, each at the other direction's norm (backward and forward swapped).
Their derivatives are the entries' rules."""
from __future__ import annotations

from .. import ops
from ..backend import xp
from ..primitives import check_elements, ndim, run_dtype, shape
from .axes import ArgumentError, one_axis, whole

NORMS = ("backward", "ortho", "forward")


def _norm(name, norm):
    spelled = ops.read(norm)
    if spelled is None:
        return "backward"
    if spelled not in NORMS:
        raise ArgumentError(f"{name}(): norm must be one of 'backward', 'ortho' or 'forward', not {spelled!r}")
    return spelled


def _length(name, n, default):
    if n is None or ops.read(n) is None:
        return default
    length = whole(n, f"{name}()'s n")
    if length < 1:
        raise ArgumentError(f"{name}(): invalid number of data points ({length}) specified: n must be at least 1")
    return length


def _array(name, a):
    if not shape(a):
        raise ArgumentError(f"{name}() needs an array of at least one dimension, not a number")
    return a


def _one(name, entry, a, n, axis, norm, half=False):
    a = _array(name, a)
    ax = one_axis(axis, ndim(a))
    own = shape(a)[ax]
    length = _length(name, n, 2 * (own - 1) if half else own)
    return entry(a, (length,), (ax,), _norm(name, norm))


def fft(a, n=None, axis=-1, norm=None):
    return _one("fft", ops.fft, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    return _one("ifft", ops.ifft, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    return _one("rfft", ops.rfft, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    return _one("irfft", ops.irfft, a, n, axis, norm, half=True)


def _listed(value):
    v = ops.read(value)
    if getattr(v, "ndim", 0):                  # a list literal the language made an array
        return v.tolist()
    return list(v) if isinstance(v, (tuple, list)) else [v]


def _axes_and_lengths(name, a, s, axes):
    """numpy's (s, axes) of fftn, fft2 and the real forms: the axes (axes=None: every axis, or
    the last len(s) where s is given; fft2's default (-2, -1) is its signature's), made
    non-negative, and the length along each."""
    dims = ndim(a)
    if axes is None or ops.read(axes) is None:
        count = len(_listed(s)) if s is not None and ops.read(s) is not None else dims
        if count > dims:
            raise ArgumentError(f"{name}(): s names {count} axes, the array has {dims}")
        resolved = tuple(range(dims - count, dims))
    else:
        resolved = tuple(one_axis(x, dims) for x in _listed(axes))
    if len(set(resolved)) != len(resolved):
        raise ArgumentError(f"{name}(): an axis appears twice in axes (a transform applied twice along one "
                            "axis is not supported)")
    if s is None or ops.read(s) is None:
        return resolved, tuple(shape(a)[x] for x in resolved)
    lengths = tuple(_length(name, v, None) for v in _listed(s))
    if len(lengths) != len(resolved):
        raise ArgumentError(f"{name}(): s and axes must have the same length ({len(lengths)} and {len(resolved)})")
    return resolved, lengths


def _many(name, entry, a, s, axes, norm):
    a = _array(name, a)
    resolved, lengths = _axes_and_lengths(name, a, s, axes)
    if not resolved:
        return a
    return entry(a, lengths, resolved, _norm(name, norm))


def _real_many(name, a, s, axes, norm, inverse=False):
    """rfftn (the transforms' order numpy's) and, `inverse`, irfftn."""
    a = _array(name, a)
    resolved, lengths = _axes_and_lengths(name, a, s, axes)
    if not resolved:
        raise ArgumentError(f"{name}() needs at least one axis")
    if inverse and (s is None or ops.read(s) is None):
        lengths = lengths[:-1] + (2 * (shape(a)[resolved[-1]] - 1),)
        if lengths[-1] < 1:
            raise ArgumentError(f"{name}(): invalid number of data points ({lengths[-1]}) specified: give s")
    norm = _norm(name, norm)
    steps = list(zip(resolved, lengths))
    if inverse:
        for axis, n in steps[:-1]:
            a = ops.ifft(a, (n,), (axis,), norm)
        return ops.irfft(a, (steps[-1][1],), (steps[-1][0],), norm)
    a = ops.rfft(a, (steps[-1][1],), (steps[-1][0],), norm)
    for axis, n in reversed(steps[:-1]):
        a = ops.fft(a, (n,), (axis,), norm)
    return a


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _real_many("rfft2", a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _real_many("irfft2", a, s, axes, norm, inverse=True)


def rfftn(a, s=None, axes=None, norm=None):
    return _real_many("rfftn", a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _real_many("irfftn", a, s, axes, norm, inverse=True)


SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None):
    """numpy's: irfft of the conjugate at the other direction's norm (n by default 2(m-1))."""
    return _one("hfft", lambda x, lengths, axes, scale: ops.irfft(ops.conj(x), lengths, axes, SWAPPED[scale]),
                a, n, axis, norm, half=True)


def ihfft(a, n=None, axis=-1, norm=None):
    """numpy's: the conjugate of rfft at the other direction's norm."""
    return _one("ihfft", lambda x, lengths, axes, scale: ops.conj(ops.rfft(x, lengths, axes, SWAPPED[scale])),
                a, n, axis, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _many("fft2", ops.fft2, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _many("ifft2", ops.ifft2, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    return _many("fftn", ops.fftn, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _many("ifftn", ops.ifftn, a, s, axes, norm)


def _shift(name, entry, x, axes):
    dims = ndim(x)
    if axes is None or ops.read(axes) is None:
        resolved = tuple(range(dims))
    else:
        resolved = tuple(one_axis(v, dims) for v in _listed(axes))
    if not dims:
        return x
    return entry(x, resolved)


def fftshift(x, axes=None):
    return _shift("fftshift", ops.fftshift, x, axes)


def ifftshift(x, axes=None):
    return _shift("ifftshift", ops.ifftshift, x, axes)


def _frequencies(name, n, d, counts):
    """numpy's k * (1 / (n d)) for the whole numbers k that counts(n) gives, in the run's dtype."""
    count = _length(name, n, None)
    check_elements((count,), f"{name}()")
    k = xp().asarray(counts(count), dtype=run_dtype[0])
    return ops.mul(k, ops.div(1.0, ops.mul(float(count), d)))


def fftfreq(n, d=1.0):
    return _frequencies("fftfreq", n, d, lambda count: list(range(0, (count - 1) // 2 + 1)) +
                        list(range(-(count // 2), 0)))


def rfftfreq(n, d=1.0):
    return _frequencies("rfftfreq", n, d, lambda count: list(range(0, count // 2 + 1)))
