"""numpy's shape functions with numpy's arguments, as composites: concatenate and permute_dims
from the table, the rest gathers (getitem of the flattened array by positions numpy itself
rearranges) or scatters (untake), so every one has its gradient at any order. Also the
constructors, which make constants."""
from __future__ import annotations

from .. import ops
from ..backend import xp
from ..primitives import check_elements, ndim, shape, size
from ..sequences import is_sequence, items_of
from .axes import ArgumentError, axes_of, gathered, one_axis, whole


def concatenate(arrays, axis=0):
    items = items_of(arrays)
    if axis is None:
        items, ax = [ops.reshape(v, (-1,)) for v in items], 0
    else:
        if not items:
            raise ArgumentError("concatenate(): needs at least one array")
        ax = one_axis(axis, max(ndim(items[0]), 1))
    return ops.concatenate(items, ax)


def stack(arrays, axis=0):
    items = items_of(arrays)
    if not items:
        raise ArgumentError("stack(): needs at least one array")
    ax = one_axis(axis, ndim(items[0]) + 1)
    return ops.concatenate([ops.expand_dims(v, ax) for v in items], ax)


def hstack(tup):
    items = [ops.reshape(v, (1,)) if not shape(v) else v for v in items_of(tup)]
    return ops.concatenate(items, 0 if ndim(items[0]) == 1 else 1)


def vstack(tup):
    items = [ops.reshape(v, (1, -1)) if ndim(v) < 2 else v for v in items_of(tup)]
    return ops.concatenate(items, 0)


def append(arr, values, axis=None):
    """np.append: both flattened and joined, or joined along `axis` (each an array numpy reads
    a list or tuple as: arr[] and values[] in SIGNATURES)."""
    if axis is None:
        return ops.concatenate([ops.reshape(v, (-1,)) for v in (arr, values)], 0)
    return concatenate((arr, values), axis)


def split(ary, indices_or_sections, axis=0):
    ax = one_axis(axis, ndim(ary))
    n = shape(ary)[ax]
    if is_sequence(indices_or_sections) or shape(indices_or_sections):
        cuts = [whole(i, "a split index") for i in xp().asarray(ops.read(indices_or_sections)).tolist()]
    else:
        parts = whole(indices_or_sections, "the number of sections")
        if parts <= 0 or n % parts:
            raise ArgumentError(f"split(): {n} elements do not divide into {parts} equal sections")
        cuts = [n // parts * k for k in range(1, parts)]
    bounds = [0] + cuts + [n]
    lead = (slice(None),) * ax
    return tuple(ops.getitem(ary, lead + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:]))


# the modes pad copies the array's own entries in by: numpy's pad of the positions says which
PAD_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")


def _pad_copying(array, widths, mode):
    """pad in a mode that repeats the array's entries: along each axis, the positions numpy's pad
    gives arange(length) in that mode, taken (so each copy's gradient flows back to its entry)."""
    m = xp()
    for axis, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        length = shape(array)[axis]
        if length == 0:
            raise ArgumentError(f"pad(): can't extend an empty axis {axis} in mode {mode!r}")
        positions = m.pad(m.arange(length), (int(lo), int(hi)), mode=mode)
        array = ops.getitem(array, (slice(None),) * axis + (positions,))
    return array


def pad(array, pad_width, mode="constant", constant_values=0.0):
    """numpy's pad: mode 'constant' (with constant_values), 'edge', 'reflect', 'symmetric' or 'wrap'."""
    if mode not in ("constant",) + PAD_COPY_MODES:
        raise ArgumentError(f"pad(): mode {mode!r} is not supported: the modes are 'constant', "
                            + ", ".join(f"'{name}'" for name in PAD_COPY_MODES))
    m = xp()
    widths = m.broadcast_to(m.asarray(ops.read(pad_width), dtype=float), (ndim(array), 2)).astype(int)
    if (widths < 0).any():
        raise ArgumentError("pad(): widths must not be negative")
    padded = tuple(int(d + lo + hi) for d, (lo, hi) in zip(shape(array), widths))
    check_elements(padded, "pad()")
    if mode != "constant":
        return _pad_copying(array, widths, mode)
    region = tuple(slice(int(lo), int(lo) + d) for d, (lo, _) in zip(shape(array), widths))
    out = ops.untake(array, region, padded)
    if ops.read(constant_values) == 0:
        return out
    outside = m.ones(padded, dtype=bool)
    outside[region] = False
    return ops.where(outside, constant_values, out)


def expand_dims(a, axis):
    axes = axis if is_sequence(axis) else (axis,)
    return ops.expand_dims(a, tuple(sorted(one_axis(v, ndim(a) + len(axes)) for v in axes)))


def squeeze(a, axis=None):
    dims = shape(a)
    axes = axes_of(axis, len(dims))
    if axes is None:
        axes = tuple(i for i, d in enumerate(dims) if d == 1)
    if any(dims[i] != 1 for i in axes):
        raise ArgumentError("squeeze(): cannot select an axis to squeeze out which has size not equal to one")
    return ops.reshape(a, tuple(d for i, d in enumerate(dims) if i not in axes))


def flip(m, axis=None):
    axes = axes_of(axis, ndim(m))
    if axes is None:
        axes = tuple(range(ndim(m)))
    return ops.getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(ndim(m))))


def roll(a, shift, axis=None):
    steps = [whole(s, "a shift") for s in (shift if is_sequence(shift) else (shift,))]
    axes = None if axis is None else tuple(one_axis(v, ndim(a)) for v in (axis if is_sequence(axis) else (axis,)))
    return gathered(a, lambda pos: xp().roll(pos, steps if len(steps) > 1 else steps[0], axes))


def broadcast_to(array, shape):                    # noqa: F811 -- numpy's parameter name
    dims = tuple(whole(d, "a dimension") for d in (shape if is_sequence(shape) else (shape,)))
    check_elements(dims, "broadcast_to()")
    return ops.broadcast_to(array, dims)


def tile(A, reps):
    counts = tuple(whole(r, "a repetition") for r in (reps if is_sequence(reps) else (reps,)))
    dims = shape(A)
    width = max(len(dims), len(counts))           # numpy pads the shorter of the two with 1s
    check_elements([d * c for d, c in zip((1,) * (width - len(dims)) + dims,
                                           (1,) * (width - len(counts)) + counts)], "tile()")
    return gathered(A, lambda pos: xp().tile(pos, counts))


def repeat(a, repeats, axis=None):
    counts = [whole(r, "a repetition") for r in xp().atleast_1d(xp().asarray(ops.read(repeats))).tolist()]
    ax = None if axis is None else one_axis(axis, ndim(a))
    along = max(shape(a)[ax] if ax is not None else max(size(a), 1), 1)
    total = sum(counts) if len(counts) > 1 else counts[0] * along
    rest = () if ax is None else (max(size(a), 1) // along,)
    check_elements((total,) + rest, "repeat()")
    return gathered(a, lambda pos: xp().repeat(pos, counts if len(counts) > 1 else counts[0], ax))


def permutation(dims, axes):
    if axes is None:
        return tuple(reversed(range(dims)))
    perm = tuple(one_axis(v, dims) for v in axes)
    if sorted(perm) != list(range(dims)):
        raise ArgumentError(f"transpose(): axes {perm} are not a permutation of the array's")
    return perm


def transpose(a, axes=None):
    if axes is None:
        return ops.transpose(a)
    return ops.permute_dims(a, permutation(ndim(a), axes))


def moveaxis(a, source, destination):
    dims = ndim(a)
    src = [one_axis(v, dims) for v in (source if is_sequence(source) else (source,))]
    dst = [one_axis(v, dims) for v in (destination if is_sequence(destination) else (destination,))]
    if len(src) != len(dst):
        raise ArgumentError("moveaxis(): source and destination need the same number of axes")
    order = [n for n in range(dims) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.permute_dims(a, tuple(order))


def swapaxes(a, axis1, axis2):
    order = list(range(ndim(a)))
    i, j = one_axis(axis1, ndim(a)), one_axis(axis2, ndim(a))
    order[i], order[j] = order[j], order[i]
    return ops.permute_dims(a, tuple(order))


def diag(v, k=0):
    offset = whole(k, "a diagonal offset")
    if ndim(v) == 1:
        n = shape(v)[0]
        rows = xp().arange(n) + max(-offset, 0)
        size_ = n + abs(offset)
        return ops.untake(v, (rows, rows - max(-offset, 0) + max(offset, 0)), (size_, size_))
    if ndim(v) != 2:
        raise ArgumentError("diag(): the input must be 1-d or 2-d")
    return gathered(v, lambda pos: xp().diagonal(pos, offset).copy())


def diagonal(a, offset=0, axis1=0, axis2=1):
    return gathered(a, lambda pos: xp().diagonal(pos, whole(offset, "an offset"), whole(axis1, "an axis"),
                                                 whole(axis2, "an axis")).copy())


def trace(a, offset=0, axis1=0, axis2=1):
    return ops.sum(diagonal(a, offset, axis1, axis2), -1)


def _triangle(m, k, upper):
    if ndim(m) < 2:
        raise ArgumentError("triu()/tril(): the input must have at least 2 dimensions")
    ones = xp().ones(shape(m)[-2:], dtype=bool)
    offset = whole(k, "a diagonal offset")
    mask = xp().triu(ones, offset) if upper else xp().tril(ones, offset)
    return ops.where(mask, m, 0.0)


def triu(m, k=0):
    return _triangle(m, k, True)


def tril(m, k=0):
    return _triangle(m, k, False)


def size_(a, axis=None):
    """numpy's size(a, axis): how many elements a has (along axis), a number (no gradient)."""
    if axis is None:
        return float(size(a))
    return float(shape(a)[one_axis(axis, ndim(a))])
