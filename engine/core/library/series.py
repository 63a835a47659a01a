"""Functions of sampled series with numpy's arguments, as composites of the table's entries:
diff (n-th differences along an axis), convolve (full, same, valid), interp (piecewise linear,
differentiable in the points x and the values fp) and searchsorted (positions: no gradient)."""
from __future__ import annotations

from .. import ops
from ..backend import xp
from ..primitives import ndim, run_dtype, shape, size
from .axes import ArgumentError, one_axis, whole


def _along(axis, dims, index):
    return (slice(None),) * axis + (index,) + (slice(None),) * (dims - axis - 1)


def _joined(part, a, axis):
    """diff's prepend/append: a number is broadcast to a's shape with length 1 along axis."""
    if not shape(part):
        part = ops.broadcast_to(part, tuple(1 if i == axis else d for i, d in enumerate(shape(a))))
    return part


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """numpy's diff: the n-th differences a[1:] - a[:-1] along axis, n times."""
    count = whole(n, "diff(): n")
    if count < 0:
        raise ArgumentError(f"diff(): order must be non-negative but got {count}")
    if count == 0:
        return a
    if not shape(a):
        raise ArgumentError("diff requires input that is at least one dimensional")
    ax = one_axis(axis, ndim(a))
    if prepend is not None or append is not None:
        parts = ([_joined(prepend, a, ax)] if prepend is not None else []) + [a] \
            + ([_joined(append, a, ax)] if append is not None else [])
        a = ops.concatenate(parts, ax)
    dims = ndim(a)
    for _ in range(count):
        a = ops.getitem(a, _along(ax, dims, slice(1, None))) - ops.getitem(a, _along(ax, dims, slice(None, -1)))
    return a


def convolve(a, v, mode="full"):
    """numpy's convolve of two vectors: the sum over j of a[k - j] v[j], as a product of the
    zero-padded a's sliding windows with v; mode 'full', 'same' (the centre, max(n, m) long) or
    'valid' (where they overlap fully)."""
    spelled = ops.read(mode)
    if spelled not in ("full", "same", "valid"):
        raise ArgumentError(f"convolve(): mode must be 'full', 'same' or 'valid', not {spelled!r}")
    a = ops.reshape(a, (-1,)) if ndim(a) != 1 else a
    v = ops.reshape(v, (-1,)) if ndim(v) != 1 else v
    if size(a) == 0 or size(v) == 0:
        raise ArgumentError(f"convolve(): {'a' if size(a) == 0 else 'v'} cannot be empty")
    if size(v) > size(a):
        a, v = v, a
    n, m = size(a), size(v)
    padded = ops.untake(a, slice(m - 1, m - 1 + n), (n + 2 * m - 2,))
    grid = xp().arange(n + m - 1)[:, None] - xp().arange(m)[None, :] + (m - 1)
    full = ops.matmul(ops.getitem(padded, grid), v)
    if spelled == "same":
        start = (m - 1) // 2
        return ops.getitem(full, slice(start, start + n))
    if spelled == "valid":
        return ops.getitem(full, slice(m - 1, n))
    return full


def _sorted_points(xp_raw, what):
    if xp_raw.ndim != 1 or xp_raw.size == 0:
        raise ArgumentError(f"{what}: the sample points must be a non-empty vector")
    return xp_raw


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy's interp: piecewise linear between the points (xp, fp), fp[0] (or left) below xp[0],
    fp[-1] (or right) above xp[-1]; differentiable in x, xp and fp. At a sample point the
    derivative in x is the right-hand piece's."""
    if period is not None:
        raise ArgumentError("interp(): period= is not supported")
    m = _backend()
    points = _sorted_points(m.asarray(ops.read(xp)), "interp()")
    if size(fp) != points.size or ndim(fp) != 1:
        raise ArgumentError("interp(): fp and xp are not of the same length")
    at = m.asarray(ops.read(x))
    low = ops.getitem(fp, 0) if left is None else left
    high = ops.getitem(fp, -1) if right is None else right
    if points.size == 1:
        inside = ops.broadcast_to(ops.getitem(fp, 0), at.shape) if at.ndim else ops.getitem(fp, 0)
    else:
        j = m.clip(m.searchsorted(points, at, side="right") - 1, 0, points.size - 2)
        j = int(j) if j.ndim == 0 else j
        x0, x1 = ops.getitem(xp, j), ops.getitem(xp, j + 1)
        f0, f1 = ops.getitem(fp, j), ops.getitem(fp, j + 1)
        inside = f0 + (x - x0) / (x1 - x0) * (f1 - f0)
    return ops.where(at < points[0], low, ops.where(at > points[-1], high, inside))


def _backend():
    return xp()


def searchsorted(a, v, side="left", sorter=None):
    """numpy's searchsorted: where v's elements would go in the sorted a, as numbers (positions
    carry no gradient)."""
    m = xp()
    spelled = ops.read(side)
    if spelled not in ("left", "right"):
        raise ArgumentError(f"searchsorted(): side must be 'left' or 'right', not {spelled!r}")
    order = None if sorter is None else m.asarray(ops.read(sorter)).astype(int)
    raw = m.asarray(ops.read(a))
    found = m.searchsorted(raw, m.asarray(ops.read(v)), side=spelled, sorter=order)
    dtype = raw.dtype if raw.dtype.kind == "f" else m.float64
    return float(found) if found.ndim == 0 else found.astype(dtype)



def polyval(p, x):
    """numpy's polyval: Horner's steps y = y * x + p[i] from y = 0 (numpy's, to the bit),
    differentiable in the coefficients and in x."""
    if not shape(p):
        raise ArgumentError("polyval(): p must be a sequence of coefficients, not one number")
    y = xp().zeros(shape(x), dtype=run_dtype[0]) if shape(x) else 0.0
    for i in range(shape(p)[0]):
        y = y * x + ops.getitem(p, i)
    return y


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """numpy's trapezoid (numpy 1's trapz): sum(d * (y[1:] + y[:-1]) / 2.0) along axis with numpy's
    steps, d the differences of the sample points x (a 1-D x along axis) or the spacing dx."""
    if not shape(y):
        raise ArgumentError("trapezoid(): y must have at least one dimension")
    dims = ndim(y)
    ax = one_axis(axis, dims)
    if x is None:
        d = dx
    elif ndim(x) == 1:
        d = diff(x)
        d = ops.reshape(d, tuple(shape(d)[0] if i == ax else 1 for i in range(dims)))
    else:
        d = diff(x, axis=ax)
    pairs = ops.getitem(y, _along(ax, dims, slice(1, None))) + ops.getitem(y, _along(ax, dims, slice(None, -1)))
    return ops.sum(d * pairs / 2.0, ax)
