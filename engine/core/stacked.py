"""Stacked values: a primitive applied to arguments some of which carry a leading axis of B points,
as if it were applied to each point in turn (a "vmap" of one table entry). The batched replay of
a trace (diff/batched_replay.py) runs every step through `stacked_apply`.

The lifting is core/batch.py's for stacks of tangents, applied to the values themselves:
- elementwise primitives: each stacked argument is aligned to the output's rank
  ((B,) + ones + its shape per point) and the primitive runs once, numpy broadcasting over B;
- the shape and axis primitives get their parameters shifted past the stack;
- anything else runs once per point and the results are stacked: slower, never wrong.
Everything is written in engine ops, so the arguments may be boxes (nested Duals: a plot's
derivatives over a stacked grid) as well as raw arrays.
"""
from __future__ import annotations

from .primitives import shape
from .rules import joins, shapes
from .tape import bind


def stacked_apply(prim, args: tuple, stacked: list, params, rows: int):
    """`prim` at each of `rows` points: args[i] holds one value per point along its leading axis
    where stacked[i], else the one value all points share. The result has the leading axis."""
    if prim.elementwise_values:         # a fact of the entry: the elementwise ones, comparisons, rounding
        ranks = [len(shape(a)) - (1 if s else 0) for a, s in zip(args, stacked)]
        out_ndim = max(ranks)
        aligned = tuple(align(a, shape(a)[1:], out_ndim, rows) if s else a for a, s in zip(args, stacked))
        return bind(prim, aligned, params)
    if prim.name == "stack":
        return _stacked_stack(args, stacked, rows)
    if prim.name == "matmul":
        out = _stacked_matmul(prim, args, stacked, params, rows)
        if out is not None:
            return out
    lift = STACKED_LIFTS.get(prim.name)
    if lift is not None and stacked[0] and not any(stacked[1:]):
        out = lift(prim, args, params or {}, rows)
        if out is not None:
            return out
    return per_point(prim, args, stacked, params, rows)


def align(t, arg_shape, out_ndim, k):
    """(k,) + arg_shape -> (k,) + ones + arg_shape, so it broadcasts against the output's rank (k
    points here, k tangents in core/batch.py: the lifts below serve both)."""
    pad = out_ndim - len(arg_shape)
    return shapes.reshape(t, (k,) + (1,) * pad + tuple(arg_shape)) if pad > 0 else t


def per_point(prim, args, stacked, params, rows):
    """The primitive once per point, the results stacked: any primitive, at B calls' cost."""
    outs = []
    for r in range(rows):
        point_args = tuple(shapes.getitem(a, r) if s else a for a, s in zip(args, stacked))
        outs.append(bind(prim, point_args, params))
    return shapes.stack(outs)


def _stacked_stack(args, stacked, rows):
    """stack(items) per point: the shared items broadcast over the points, all stacked along a
    new axis 0, then the points' axis moved back to the front."""
    items = [a if s else shapes.broadcast_to(a, (rows,) + tuple(shape(a))) for a, s in zip(args, stacked)]
    out = shapes.stack(items)
    ndim = len(shape(out))
    return joins.permute_dims(out, (1, 0) + tuple(range(2, ndim)))


def shifted_axis(axis, ndim):
    """A per-point axis parameter (None: all axes) as the stacked value's."""
    if axis is None:
        return tuple(range(1, ndim))
    if isinstance(axis, tuple):
        return tuple(a + 1 if a >= 0 else a for a in axis)
    return axis + 1 if axis >= 0 else axis


def _lift_axis(prim, args, params, rows):
    """A reduction or scan over `axis` (an int, a tuple or None): the same over the shifted axes."""
    axis = params.get("axis")
    if axis is None and prim.name in ("cumsum", "cumprod"):
        return None                                    # a flattening scan: once per point
    return bind(prim, args, dict(params, axis=shifted_axis(axis, len(shape(args[0])))))


# ---- a primitive of one value with a leading axis of k (points, or tangents in core/batch.py) -----

def leading_getitem(x, index):
    """x[index] per row; None for fancy indexing (the caller runs it once per row)."""
    if not shapes.basic_index(index):
        return None
    parts = index if isinstance(index, tuple) else (index,)
    return shapes.getitem(x, (slice(None),) + tuple(parts))


def leading_expand_dims(x, axis):
    return shapes.expand_dims(x, shifted_axis(axis, 0)) if isinstance(axis, int) else None


def leading_broadcast_to(x, arg_shape, target, k):
    target = tuple(target)
    return shapes.broadcast_to(align(x, arg_shape, len(target), k), (k,) + target)


def leading_sum_to(x, target, k):
    target = tuple(target)
    pad = len(shape(x)) - 1 - len(target)
    return shapes.reshape(shapes.sum_to(x, (k,) + (1,) * pad + target), (k,) + target)


def _lift_transpose(prim, args, params, rows):
    x = args[0]
    ndim = len(shape(x))
    if ndim <= 1:
        return x                                       # a scalar per point: transposing is the identity
    return joins.permute_dims(x, (0,) + tuple(range(ndim - 1, 0, -1)))


def _lift_permute_dims(prim, args, params, rows):
    return joins.permute_dims(args[0], (0,) + tuple(a + 1 for a in params["axes"]))


def _stacked_matmul(prim, args, stacked, params, rows):
    """x @ y per point, for vectors and matrices: a vector becomes a row (x) or a column (y) matrix,
    numpy's matmul pairs the stacked operands point by point (a shared one broadcasts over the
    points), and the result takes its per-point shape back. None for stacks of matrices."""
    (x, y), (sx, sy) = args, stacked
    rx, ry = len(shape(x)) - sx, len(shape(y)) - sy
    if rx not in (1, 2) or ry not in (1, 2):
        return None
    xs, ys = shape(x), shape(y)
    if rx == 1:
        x = shapes.reshape(x, xs[:-1] + (1, xs[-1]))
    if ry == 1:
        y = shapes.reshape(y, ys[:-1] + (ys[-1], 1))
    out = bind(prim, (x, y), params)
    point_shape = ((xs[-2],) if rx == 2 else ()) + ((ys[-1],) if ry == 2 else ())
    return shapes.reshape(out, (rows,) + point_shape)


STACKED_LIFTS = {
    "getitem": lambda prim, args, params, rows: leading_getitem(args[0], params["index"]),
    "reshape": lambda prim, args, params, rows: shapes.reshape(args[0], (rows,) + tuple(params["shape_"])),
    "expand_dims": lambda prim, args, params, rows: leading_expand_dims(args[0], params["axis"]),
    "broadcast_to": lambda prim, args, params, rows: leading_broadcast_to(args[0], shape(args[0])[1:],
                                                                          params["shape_"], rows),
    "sum_to": lambda prim, args, params, rows: leading_sum_to(args[0], params["shape_"], rows),
    "transpose": _lift_transpose,
    "permute_dims": _lift_permute_dims,
    "sum": _lift_axis,
    "max": _lift_axis,
    "min": _lift_axis,
    "cumsum": _lift_axis,
    "cumprod": _lift_axis,
}
