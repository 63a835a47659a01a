"""Shape primitives beyond shapes.py: concatenate (any number of arrays along an axis) and
permute_dims (transpose with axes). The other numpy shape functions are composites of these and
of getitem/untake (engine/core/library/shapes.py)."""
from __future__ import annotations

from ..backend import xp
from ..primitives import PerPosition, defprim, params_op, shape
from ..tape import bind
from .shapes import getitem, untake


def _region(i, axis, xs):
    """The index of argument i's block in the result of concatenating xs along axis."""
    start = 0
    for a in xs[:i]:
        start += shape(a)[axis]
    return (slice(None),) * axis + (slice(start, start + shape(xs[i])[axis]),)


def _concatenate_op(prim):
    def concatenate_op(items, axis=0):
        return bind(prim, tuple(items), {"axis": axis})
    return concatenate_op


def _concatenate_jvp(i):
    def jvp(t, ans, *xs, axis):
        return untake(t, _region(i, axis, xs), shape(ans))
    return jvp


# concatenate(items, axis): axis not negative (the library normalises it)
concatenate = defprim("concatenate", lambda *xs, axis: xp().concatenate([xp().asarray(v) for v in xs], axis),
                      needs_args=False, arity=None, make_op=_concatenate_op, taped_vjp=True,
                      vjp=PerPosition(lambda i: lambda g, ans, *xs, axis: getitem(g, _region(i, axis, xs))),
                      jvp=PerPosition(_concatenate_jvp), complex_values=True)


def _inverse(axes):
    inverse = [0] * len(axes)
    for position, axis in enumerate(axes):
        inverse[axis] = position
    return tuple(inverse)


permute_dims = defprim("permute_dims", lambda x, axes: xp().transpose(x, axes), needs_args=False, emits_at_shapes=True,
                       make_op=params_op("axes", shapes=("axes",)),
                       vjp=(lambda g, ans, x, axes: permute_dims(g, _inverse(axes)),),
                       jvp=(lambda t, ans, x, axes: permute_dims(t, axes),), complex_values=True)
