"""Batched tangents: forward mode carrying a stack of k tangents per value, of shape (k,) + shape,
so one pass gives k Jacobian columns or k Hessian rows.

A level is batched while `batched(level, k)` is active: `bind` then hands its forward-mode step
here. The JVP rules are the table's own; this module only lifts them over the leading axis:
- elementwise primitives (`Primitive.elementwise`): the tangent is aligned to the output's rank
  ((k,) + ones + shape) and the rule runs once, numpy broadcasting over the stack (`bcast`
  broadcasts a stacked tangent to (k,) + the output's shape);
- the shape primitives whose parameters name a shape or an axis get it shifted past the stack;
- any other primitive (matmul, stack, fancy indexing, one added later) runs its rule once per
  tangent of the stack and stacks the results: slower, never wrong.
"""
from __future__ import annotations

from contextlib import contextmanager

from .primitives import shape
from .rules import reductions, shapes
from .tape import BATCHED, push_tangents


@contextmanager
def batched(level: int, k: int):
    """While active, Duals of `level` carry k stacked tangents."""
    BATCHED[level] = lambda prim, args, params: batched_bind(prim, args, params, level, k)
    try:
        yield
    finally:
        del BATCHED[level]


def batched_bind(prim, args, params, level, k):
    """bind's forward-mode step for a batched level: tape.push_tangents with the stacked JVP."""
    return push_tangents(prim, args, params, level,
                         lambda p, i, t, ans, primals, ps: lifted_jvp(p, i, t, ans, primals, ps or {}, k))


def lifted_jvp(prim, i, t, ans, primals, params, k):
    out_shape = shape(ans)
    rule = prim.jvps[i]
    if prim.elementwise:
        r = rule(align(t, shape(primals[i]), len(out_shape), k), ans, *primals, **params)
    else:
        lift = LIFTS.get(prim.name)
        r = lift(t, ans, primals, params, k) if lift is not None else None
        if r is None:
            return per_tangent(rule, t, ans, primals, params, k)
    return full(r, k, out_shape)


def align(t, arg_shape, out_ndim, k):
    """(k,) + arg_shape -> (k,) + ones + arg_shape, so it broadcasts against the output's rank."""
    pad = out_ndim - len(arg_shape)
    return shapes.reshape(t, (k,) + (1,) * pad + tuple(arg_shape)) if pad > 0 else t


def full(t, k, out_shape):
    want = (k,) + tuple(out_shape)
    if shape(t) == want:
        return t
    return shapes.broadcast_to(align(t, shape(t)[1:], len(out_shape), k), want)


def per_tangent(rule, t, ans, primals, params, k):
    """The rule once per stacked tangent: any primitive, at k calls' cost."""
    out_shape = shape(ans)
    rows = []
    for j in range(k):
        r = rule(shapes.getitem(t, j), ans, *primals, **params)
        rows.append(r if shape(r) == out_shape else shapes.broadcast_to(r, out_shape))
    return shapes.stack(rows)


def shift_axis(axis):
    return axis + 1 if axis >= 0 else axis


def _lift_sum(t, ans, primals, params, k):
    axis = params.get("axis")
    if axis is None:
        return reductions.sum(t, tuple(range(1, len(shape(t)))))
    if isinstance(axis, int):
        return reductions.sum(t, shift_axis(axis))
    return None


def _lift_sum_to(t, ans, primals, params, k):
    target = tuple(params["shape_"])
    pad = len(shape(t)) - 1 - len(target)
    return shapes.reshape(shapes.sum_to(t, (k,) + (1,) * pad + target), (k,) + target)


def _lift_getitem(t, ans, primals, params, k):
    index = params["index"]
    parts = index if isinstance(index, tuple) else (index,)
    if not all(isinstance(p, (int, slice)) and not isinstance(p, bool) for p in parts):
        return None                                    # fancy indexing: once per tangent
    return shapes.getitem(t, (slice(None),) + tuple(parts))


def _lift_expand_dims(t, ans, primals, params, k):
    axis = params["axis"]
    return shapes.expand_dims(t, shift_axis(axis)) if isinstance(axis, int) else None


LIFTS = {
    "broadcast_to": lambda t, ans, primals, params, k: shapes.broadcast_to(
        align(t, shape(primals[0]), len(params["shape_"]), k), (k,) + tuple(params["shape_"])),
    "sum_to": _lift_sum_to,
    "reshape": lambda t, ans, primals, params, k: shapes.reshape(t, (k,) + tuple(shape(ans))),
    "sum": _lift_sum,
    "getitem": _lift_getitem,
    "expand_dims": _lift_expand_dims,
}
