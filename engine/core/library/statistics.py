"""Order statistics and the nan-ignoring reductions with numpy's arguments, as composites of the
table's entries: median, quantile and percentile (numpy's 'linear' method: the gradient goes to
the one or two sorted entries each result interpolates; a slice holding a nan gives nan, as
numpy's), their nan-ignoring forms nanmedian
nanquantile nanpercentile (the same over the entries that are not nan), and nansum nanmean nanmax
nanmin nanprod nanvar nanstd (a nan gets no gradient; a slice of nans only gives numpy's nan)."""
from __future__ import annotations

from .. import ops
from ..backend import np, xp
from ..complexes import is_complex
from ..primitives import ndim, shape
from ..tape import BOXES
from .axes import ArgumentError, axes_last, axes_of, flag, gathered, keep_dims
from .elementwise import clip
from .reductions import average, prod, reduce_over, sort
from .shapes import diag


def _last_axis(a, axis):
    """a with the axes reduced over merged into its last one (all of them for None)."""
    axes = axes_of(axis, ndim(a))
    if axes is None:
        return ops.reshape(a, (-1,)), axes
    return axes_last(a, axes), axes


def _kept(result, a, axes, keepdims, leading=()):
    """keepdims for a result with `leading` extra axes first (quantile's q)."""
    if not keepdims:
        return result
    dims = tuple(1 if axes is None or i in axes else d for i, d in enumerate(shape(a)))
    return ops.reshape(result, tuple(leading) + dims)


def _lerp(low, high, t):
    """numpy's _lerp to the bit: from below for t < 0.5, from above otherwise."""
    step = high - low
    return ops.where(t >= 0.5, high - step * (1.0 - t), low + step * t)


def _as_supported(name, out, method="linear"):
    """The order statistics' refusals: no out= (the value is returned), numpy's 'linear' method only."""
    if out is not None:
        raise ArgumentError(f"{name}(): out= is not supported: use the returned value")
    if ops.read(method) != "linear":
        raise ArgumentError(f"{name}(): only method 'linear' (numpy's default) is supported, not {method!r}")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """numpy's quantile with the 'linear' method: q in [0, 1] (a number or an array, whose axes
    come first), over axis (None: all of a)."""
    _as_supported("quantile", out, method)
    levels = _levels(a, q, "quantile")
    m = xp()
    x, axes = _last_axis(a, axis)
    n = shape(x)[-1]
    if n == 0:
        raise ArgumentError("quantile(): the array is empty along the axis")
    ordered = ops.permute_dims(sort(x, -1), (ndim(x) - 1,) + tuple(range(ndim(x) - 1)))
    position = levels * (n - 1)
    below = m.floor(position).astype(int)
    above = m.minimum(below + 1, n - 1)
    t = (position - below).reshape(levels.shape + (1,) * (ndim(x) - 1))
    low, high = ops.getitem(ordered, int(below) if below.ndim == 0 else below), \
        ops.getitem(ordered, int(above) if above.ndim == 0 else above)
    result = _lerp(low, high, t if levels.ndim else float(t.reshape(())))
    return _kept(_nan_where_any(result, x), a, axes, keepdims, levels.shape)


def _levels(a, q, name):
    """q as an array of a's dtype, a constant in [0, 1] (numpy's checks and messages)."""
    if isinstance(q, BOXES):
        raise ArgumentError(f"{name}(): q depends on an input being differentiated; pass it as a constant "
                            "(stop_gradient(q))")
    m = xp()
    levels = m.asarray(q, dtype=m.asarray(ops.read(a)).dtype)
    if ((levels < 0) | (levels > 1)).any() or m.isnan(levels).any():
        raise ArgumentError("Quantiles must be in the range [0, 1]")
    return levels


def _percents(q, name):
    """numpy's percentile levels: q / 100, checked in [0, 100]."""
    if isinstance(q, BOXES):
        raise ArgumentError(f"{name}(): q depends on an input being differentiated; pass it as a constant "
                            "(stop_gradient(q))")
    levels = xp().true_divide(xp().asarray(q, dtype=float), 100)
    if ((levels < 0) | (levels > 1)).any():
        raise ArgumentError("Percentiles must be in the range [0, 100]")
    return levels


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """numpy's percentile: quantile at q / 100."""
    return quantile(a, _percents(q, "percentile"), axis, out, overwrite_input, method, keepdims)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy's median: the middle sorted entry, or the mean of the two middle ones."""
    _as_supported("median", out)
    x, axes = _last_axis(a, axis)
    n = shape(x)[-1]
    if n == 0:
        raise ArgumentError("median(): the array is empty along the axis")
    ordered = sort(x, -1)
    dims = ndim(x) - 1
    middle = ops.getitem(ordered, (slice(None),) * dims + (n // 2,))
    if n % 2 == 0:
        middle = (ops.getitem(ordered, (slice(None),) * dims + (n // 2 - 1,)) + middle) / 2.0
    return _kept(_nan_where_any(middle, x), a, axes, keepdims)


def _nan_where_any(result, x):
    """numpy's nan for each slice of x (along its last axis) that holds a nan: median's, quantile's
    and percentile's (the sorted nan is last, so the entries picked were numbers). A constant mask,
    read as a guard: a replay checks it at its own point."""
    return _nan_where(ops.read(x, take=lambda raw: xp().isnan(raw).any(axis=-1)), result)


def _nan_where(mask, result):
    """numpy's nan where `mask` (a constant) holds, the result elsewhere (no step where it holds nowhere)."""
    return ops.where(mask, xp().nan, result) if bool(xp().any(mask)) else result


# ---- the nan-ignoring order statistics ----------------------------------------------------------

def _nan_sorted(a, axis, name):
    """a's slices along axis (merged last) sorted, nans last as numpy sorts them, with the count of
    entries that are not nan in each slice and a function picking, for an array of positions
    (shape: any leading axes + the slices' shape), those sorted entries of each slice."""
    x, axes = _last_axis(a, axis)
    if shape(x)[-1] == 0:
        raise ArgumentError(f"{name}(): the array is empty along the axis")
    ordered = sort(x, -1)
    m = xp()
    counts = (~m.isnan(m.asarray(ops.read(x)))).sum(axis=-1)
    batch = shape(x)[:-1]

    def pick(positions):
        rows = tuple(m.arange(d).reshape((d,) + (1,) * (len(batch) - i - 1)) for i, d in enumerate(batch))
        return gathered(ordered, lambda pos: pos[rows + (positions,)])
    return counts, pick, axes


def _no_count_is_nan(result, counts):
    """numpy's nan where a slice is all nans."""
    return _nan_where(counts == 0, result)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """numpy's nanquantile ('linear'): each slice's quantile over its entries that are not nan."""
    _as_supported("nanquantile", out, method)
    levels = _levels(a, q, "nanquantile")
    counts, pick, axes = _nan_sorted(a, axis, "nanquantile")
    m = xp()
    last = m.maximum(counts - 1, 0)
    position = levels.reshape(levels.shape + (1,) * counts.ndim) * last.astype(levels.dtype)
    below = m.floor(position).astype(int)
    above = m.minimum(below + 1, last)
    result = _lerp(pick(below), pick(above), position - below)
    return _kept(_no_count_is_nan(result, counts), a, axes, keepdims, levels.shape)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """numpy's nanpercentile: nanquantile at q / 100."""
    return nanquantile(a, _percents(q, "nanpercentile"), axis, out, overwrite_input, method, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """numpy's nanmedian: each slice's median over its entries that are not nan."""
    _as_supported("nanmedian", out)
    counts, pick, axes = _nan_sorted(a, axis, "nanmedian")
    m = xp()
    high = counts // 2
    low = m.maximum(high - (counts % 2 == 0), 0)
    upper = pick(high)
    result = ops.where(counts % 2 == 1, upper, (pick(low) + upper) / 2.0)
    return _kept(_no_count_is_nan(result, counts), a, axes, keepdims)


# ---- the nan-ignoring reductions ---------------------------------------------------------------

def _nans(a):
    return xp().isnan(xp().asarray(ops.read(a)))


def _filled(a, value):
    """a with its nans replaced by value (they get no gradient)."""
    nans = _nans(a)
    return ops.where(nans, value, a) if nans.any() else a


def nansum(a, axis=None, keepdims=False):
    axes = axes_of(axis, ndim(a))
    clean = _filled(a, 0.0)
    result = ops.sum(clean, axes) if shape(a) else clean * 1.0
    return keep_dims(result, a, axes) if keepdims and shape(a) else result


def nanprod(a, axis=None, keepdims=False):
    return prod(_filled(a, 1.0), axis, keepdims)


def _counts(a, axes, keepdims=False):
    """How many elements that are not nan each result combines (a constant)."""
    kept = ~_nans(a)
    return kept.sum(axis=axes, keepdims=keepdims).astype(xp().asarray(ops.read(a)).real.dtype)   # a real count


def nanmean(a, axis=None, keepdims=False):
    axes = axes_of(axis, ndim(a))
    with np().errstate(invalid="ignore", divide="ignore"):      # a slice of nans: nan, as numpy
        return ops.div(nansum(a, axis, keepdims), _counts(a, axes, keepdims) if shape(a) else
                       float(not _nans(a)))


def _nan_extreme(op, fill, a, axis, keepdims):
    if not shape(a):
        return a * 1.0
    axes = axes_of(axis, ndim(a))
    result = reduce_over(op, _filled(a, fill), axis, keepdims)
    empty = _counts(a, axes, keepdims) == 0
    return ops.where(empty, xp().nan, result) if xp().any(empty) else result


def nanmax(a, axis=None, keepdims=False):
    return _nan_extreme(ops.max, -xp().inf, a, axis, keepdims)


def nanmin(a, axis=None, keepdims=False):
    return _nan_extreme(ops.min, xp().inf, a, axis, keepdims)


def nanvar(a, axis=None, ddof=0, keepdims=False):
    """numpy's nanvar: the squares about the mean of the elements that are not nan, over their
    count less ddof (nan where that is not positive)."""
    axes = axes_of(axis, ndim(a))
    centre = nanmean(a, axis, keepdims=True)
    centred = _filled(a - centre, 0.0)
    squared = ops.real(centred * ops.conj(centred)) if is_complex(centred) else centred * centred   # numpy's nanvar
    squares = ops.sum(squared, axes) if shape(a) else squared
    count = _counts(a, axes, keepdims) - ddof if shape(a) else float(not _nans(a)) - ddof
    count = xp().where(count > 0, count, xp().nan) if shape(a) else (count if count > 0 else float("nan"))
    result = ops.div(keep_dims(squares, a, axes) if keepdims and shape(a) else squares, count)
    return result


def nanstd(a, axis=None, ddof=0, keepdims=False):
    return ops.sqrt(nanvar(a, axis, ddof, keepdims))



def _rows(v, rowvar, what):
    """numpy's cov's array(v, ndmin=2), transposed when rowvar is False (unless one row)."""
    if ndim(v) > 2:
        raise ArgumentError(f"cov(): {what} has more than 2 dimensions")
    rows = ops.reshape(v, (1,) * (2 - ndim(v)) + shape(v)) if ndim(v) < 2 else v
    return ops.transpose(rows) if not flag(rowvar, "cov(): rowvar") and shape(rows)[0] != 1 else rows


def _sample_weights(fweights, aweights, n):
    """numpy's cov's checks of fweights (whole, non-negative counts) and aweights (non-negative),
    and their product: the weight of each of the n observations (None where neither is given)."""
    w = None
    for name, given in (("fweights", fweights), ("aweights", aweights)):
        if given is None:
            continue
        raw = xp().asarray(ops.read(given))
        if name == "fweights" and not bool((raw == xp().around(raw)).all()):
            raise ArgumentError("cov(): fweights must be integer")
        if raw.ndim > 1:
            raise ArgumentError(f"cov(): cannot handle multidimensional {name}")
        if raw.ndim == 0 or raw.shape[0] != n:
            raise ArgumentError(f"cov(): incompatible numbers of samples and {name}")
        if bool((raw < 0).any()):
            raise ArgumentError(f"cov(): {name} cannot be negative")
        w = given if w is None else w * given
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """numpy's cov with numpy's steps: each row a variable (rowvar=False: each column), the
    products of the centred rows over n - ddof (ddof 1, or 0 with bias=True; with weights
    numpy's normalisation), times numpy's 1 / fact; a count <= 0 gives numpy's inf or nan.
    dtype= is the language's: the result cast to it (lang/numpy_builtins.py)."""
    x = _rows(m, rowvar, "m")
    if shape(x)[0] == 0:
        return xp().zeros((0, 0))
    if y is not None:
        x = ops.concatenate([x, _rows(y, rowvar, "y")], 0)
    if ddof is None:
        ddof = 0 if flag(bias, "cov(): bias") else 1
    ddof = float(ops.read(ddof))
    n = shape(x)[1]
    w = _sample_weights(fweights, aweights, n)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    if w is None:
        fact = float(n) - ddof
    elif ddof == 0:
        fact = ops.getitem(w_sum, 0)
    elif aweights is None:
        fact = ops.getitem(w_sum, 0) - ddof
    else:
        fact = ops.getitem(w_sum, 0) - ddof * ops.sum(w * aweights) / ops.getitem(w_sum, 0)
    if ops.read(fact) <= 0:
        fact = 0.0
    x = x - ops.reshape(avg, (-1, 1))
    x_t = ops.transpose(x if w is None else x * w)
    c = ops.matmul(x, ops.conj(x_t) if is_complex(x_t) else x_t)
    c = c * ops.div(1.0, fact)
    return ops.reshape(c, tuple(d for d in shape(c) if d != 1))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """numpy's corrcoef: cov(x, y, rowvar) over the products of the standard deviations, numpy's
    divisions in numpy's order, clipped to [-1, 1] as numpy's (a real result). dtype= as cov's."""
    c = cov(x, y, rowvar)
    if not shape(c):
        return ops.div(c, c)
    if is_complex(c):
        raise ArgumentError("corrcoef() of complex values is not supported: apply it to real(z) and imag(z)")
    stddev = ops.sqrt(diag(c))
    c = ops.div(c, ops.reshape(stddev, (-1, 1)))
    c = ops.div(c, ops.reshape(stddev, (1, -1)))
    return clip(c, -1.0, 1.0)
