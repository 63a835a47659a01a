"""Reductions and scans with numpy's arguments: prod over axes, var/std with ddof, logsumexp,
average with weights, argmax/argmin (no gradient), the cumulative ops, sort and top-k (gathers:
the gradient goes back through the permutation). Composites of table entries only."""
from __future__ import annotations

import math

from .. import ops
from ..backend import np, xp
from ..complexes import is_complex, refuse_ordering
from ..primitives import ndim, shape
from .axes import ArgumentError, axes_last, axes_of, gathered, keep_dims, one_axis, reduced_count, whole


def reduce_over(op, x, axis, keepdims):
    """op(x, one_axis_or_None) over any axes: several axes are merged into one first."""
    axes = axes_of(axis, ndim(x))
    if x.__class__ is float or not shape(x):
        return x * 1.0
    if axes is None or len(axes) == ndim(x):
        result = op(ops.reshape(x, (-1,)), 0) if axes is not None else op(x, None)
        return keep_dims(result, x, None) if keepdims else result
    result = op(x, axes[0]) if len(axes) == 1 else op(axes_last(x, axes), ndim(x) - len(axes))
    return keep_dims(result, x, axes) if keepdims else result


def prod(a, axis=None, keepdims=False):
    return reduce_over(ops.prod, a, axis, keepdims)


def mean(a, axis=None, keepdims=False):
    axes = axes_of(axis, ndim(a))
    total = ops.sum(a, axes) if shape(a) else a
    result = ops.div(total, float(reduced_count(a, axes)))
    return keep_dims(result, a, axes) if keepdims and shape(a) else result


def var(a, axis=None, ddof=0, keepdims=False):
    """numpy's var: the squares about the mean over max(n - ddof, 0), inf where that count is 0
    (nan where every element is the mean, or there is none). There the gradient is the formula's
    2 (x - mean) / 0 element by element: the mean is a constant to AD, as its own term (a sum of
    x - mean, which is 0, times inf) would make every entry nan in reverse mode, not forward."""
    axes = axes_of(axis, ndim(a))
    count = max(reduced_count(a, axes) - whole(ddof, "ddof"), 0)
    centre = mean(a, axis, keepdims=True)
    centred = a - (centre if count else ops.read(centre))
    squares = ops.sum(squared_magnitude(centred), axes) if shape(a) else squared_magnitude(centred)
    result = ops.div(squares, float(count))
    return keep_dims(result, a, axes) if keepdims and shape(a) else result


def squared_magnitude(c):
    """|c|² as numpy's var takes it: c * c, or re² + im² (a real number) of a complex c, its two
    squares added as numpy adds them (never the complex c * c)."""
    if is_complex(c):
        re, im = ops.real(c), ops.imag(c)
        return re * re + im * im
    return c * c


def std(a, axis=None, ddof=0, keepdims=False):
    return ops.sqrt(var(a, axis, ddof, keepdims))


def _stable_shift(x, axes, finite=True):
    """The largest element (a constant to AD), 0 where it is not finite (unless finite=False,
    scipy's softmax's shift): exp(x - shift) <= 1.
    Of complex values the largest real part: the imaginary parts stay in the sum, whose principal
    log is scipy's logsumexp's (its imaginary part in (-pi, pi])."""
    m = xp()
    raw = m.asarray(ops.read(x))
    parts = raw.real if raw.dtype.kind == "c" else raw
    top = m.max(parts, axis=axes, keepdims=True) if raw.size else m.zeros((1,) * raw.ndim, parts.dtype)
    return (m.where(m.isfinite(top), top, 0) if finite else top).astype(raw.dtype)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """scipy.special.logsumexp: log(sum(b * exp(a))), stable: the largest element is taken out
    before exp (of complex values the largest real part). b= weighs each exp(a) (broadcast with a;
    where b is 0 the element adds nothing, even an inf or nan one, as scipy's); a negative sum is
    nan unless return_sign=True, which gives (log|sum|, its sign), the sign a constant."""
    if b is None and not return_sign and not shape(a) and not is_complex(a):
        return a * 1.0                   # (a complex one's log(exp(z)): its imaginary part wrapped, below)
    if b is not None:
        if ops.read(b, lambda v: xp().asarray(v).dtype.kind == "b"):
            b = ops.read(b, lambda v: xp().asarray(v, dtype=float))
        wide = np().broadcast_shapes(shape(a), shape(b)) or (1,)
        a, b = (ops.broadcast_to(v, wide) if shape(v) != wide else v for v in (a, b))
    elif not shape(a):
        a = ops.reshape(a, (1,))
    axes = axes_of(axis, ndim(a))
    if b is None:
        shift = _stable_shift(a, axes)
    else:       # the shift over the elements b keeps; an inf or nan one b drops is dropped (0 * inf is nan)
        m, dropped = xp(), xp().asarray(ops.read(b)) == 0
        shift = _stable_shift(m.where(dropped, -math.inf, ops.read(a)), axes)
        a = ops.where(dropped & ~m.isfinite(ops.read(a)), -math.inf, a)
    terms = ops.exp(a - shift)
    summed = ops.sum(terms if b is None else b * terms, axes)
    back = ops.reshape(shift, shape(summed)) if axes else shift.reshape(()).item()
    if not return_sign:
        result = ops.log(summed) + back
        return keep_dims(result, a, axes) if keepdims else result
    sign = ops.read(summed, lambda v: xp().sign(v))
    result = ops.log(ops.abs(summed)) + back
    if keepdims:
        result, sign = keep_dims(result, a, axes), keep_dims(sign, a, axes)
    return result, sign


def softmax(x, axis=None):
    """scipy.special.softmax: exp(x - max) / sum(exp(x - max)) over axis (None: all of x), with
    scipy's steps (its bits); the max is a constant to AD (softmax does not change with it)."""
    if not shape(x):
        e = ops.exp(x - _stable_shift(x, None, finite=False).reshape(()).item())
        return ops.div(e, e)
    axes = axes_of(axis, ndim(x))
    e = ops.exp(x - _stable_shift(x, axes, finite=False))
    return ops.div(e, keep_dims(ops.sum(e, axes), x, axes))


def log_softmax(x, axis=None):
    """scipy.special.log_softmax: (x - max) - log(sum(exp(x - max))) over axis, the max 0 where it
    is not finite (scipy's steps, its bits); the max is a constant to AD."""
    if not shape(x):
        tmp = x - _stable_shift(x, None).reshape(()).item()
        return tmp - ops.log(ops.exp(tmp))
    axes = axes_of(axis, ndim(x))
    tmp = x - _stable_shift(x, axes)
    return tmp - ops.log(keep_dims(ops.sum(ops.exp(tmp), axes), x, axes))


def average(a, axis=None, weights=None, returned=False):
    if weights is None:
        result, total = mean(a, axis), float(reduced_count(a, axes_of(axis, ndim(a))))
    else:
        axes = axes_of(axis, ndim(a))
        w = weights
        if shape(w) != shape(a):
            if axes is None or len(axes) != 1 or ndim(w) != 1:
                raise ArgumentError("average(): weights of another shape than the array need one axis "
                                 "and one dimension")
            w = ops.reshape(w, tuple(-1 if d == axes[0] else 1 for d in range(ndim(a))))
        total = ops.sum(ops.broadcast_to(w, shape(a)), axes) if shape(a) else w
        result = ops.div(ops.sum(a * w, axes) if shape(a) else a * w, total)
    return (result, total) if returned else result


def _arg(fn, a, axis, keepdims):
    raw = xp().asarray(ops.read(a))
    refuse_ordering(fn.__name__, raw)
    ax = None if axis is None else one_axis(axis, raw.ndim)
    r = fn(raw, axis=ax, keepdims=keepdims)
    return float(r) if r.ndim == 0 else r.astype(raw.dtype if raw.dtype.kind == "f" else xp().float64)


def argmax(a, axis=None, keepdims=False):
    return _arg(xp().argmax, a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    return _arg(xp().argmin, a, axis, keepdims)


def _scan_input(a, axis):
    """The array a scan runs over and its axis: None flattens, a number is one element."""
    if axis is None or not shape(a):
        return (a, 0) if ndim(a) == 1 else (ops.reshape(a, (-1,)), 0)
    return a, one_axis(axis, ndim(a))


def cumsum(a, axis=None):
    x, ax = _scan_input(a, axis)
    return ops.cumsum(x, ax, False)


def cumprod(a, axis=None):
    x, ax = _scan_input(a, axis)
    return ops.cumprod(x, ax)


def _running_extreme(a, axis, accumulate):
    x, ax = _scan_input(a, axis)
    m = xp()

    def positions_of(pos):
        raw = m.asarray(ops.read(x))
        running = accumulate(raw, axis=ax)
        steps = m.arange(raw.shape[ax]).reshape((-1,) + (1,) * (raw.ndim - ax - 1))
        # the latest position that set the running extreme: the gradient goes to it (a tie: the later)
        where_set = m.maximum.accumulate(m.where(raw == running, steps, 0), axis=ax)
        # a nan is the running extreme from where it appears on, as numpy's accumulate: the first
        # nan along the axis is where the value (and the gradient) comes from after it
        nan = m.isnan(raw)
        if nan.any():
            first_nan = m.argmax(nan, axis=ax)[(slice(None),) * ax + (None,)]
            where_set = m.where(m.logical_or.accumulate(nan, axis=ax), first_nan, where_set)
        return m.take_along_axis(pos, where_set, ax)
    return gathered(x, positions_of)


def cummax(a, axis=None):
    return _running_extreme(a, axis, xp().maximum.accumulate)


def cummin(a, axis=None):
    return _running_extreme(a, axis, xp().minimum.accumulate)


def logcumsumexp(a, axis=None):
    x, ax = _scan_input(a, axis)
    shift = _stable_shift(x, (ax,))
    return ops.log(ops.cumsum(ops.exp(x - shift), ax, False)) + shift


def sort(a, axis=-1):
    x, ax = _scan_input(a, axis)
    refuse_ordering("sort", x)
    order = xp().argsort(xp().asarray(ops.read(x)), axis=ax, kind="stable")
    return gathered(x, lambda pos: xp().take_along_axis(pos, order, ax))


def argsort(a, axis=-1):
    x, ax = _scan_input(a, axis)
    raw = xp().asarray(ops.read(x))
    return xp().argsort(raw, axis=ax, kind="stable").astype(raw.dtype if raw.dtype.kind == "f" else xp().float64)


def topk(a, k, axis=-1):
    """The k largest elements along axis, largest first (torch.topk's values)."""
    x, ax = _scan_input(a, axis)
    count = whole(k, "k")
    if not 0 <= count <= shape(x)[ax]:
        raise ArgumentError(f"topk(): k = {count} is not between 0 and {shape(x)[ax]}")
    order = xp().argsort(-xp().asarray(ops.read(x)), axis=ax, kind="stable")
    order = xp().take(order, xp().arange(count), axis=ax)
    return gathered(x, lambda pos: xp().take_along_axis(pos, order, ax))
