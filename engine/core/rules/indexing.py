"""Item assignment as a value: `index_update(x, v, index)` is a copy of x with x[index] = v
(numpy's broadcasting of v), never x changed in place, so an alias of x keeps its value and the
tape keeps every version. The adjoint of x is g with the assigned items cut out; the adjoint of v
is g at those items, summed down to v's shape. Where an integer index repeats, numpy keeps the
last write; the rules follow the same cut (every written copy of v gets g at its place)."""
from __future__ import annotations

from ..backend import xp
from ..primitives import defprim, plain_scalar, shape
from ..tape import bind
from .shapes import getitem, unbroadcast


def _index_update(x, v, index):
    out = xp().array(x, copy=True)
    out[index] = v
    return plain_scalar(out)


def _with_index(prim):
    def index_update(x, v, index):
        return bind(prim, (x, v), {"index": index})
    return index_update


def _zeros_as(x):
    """Zeros of x's shape and dtype (x is the Shape stand-in the rules are given)."""
    m = xp()
    return m.zeros(shape(x), dtype=getattr(x, "dtype", None) or m.float64)


index_update = defprim(
    "index_update", _index_update, needs_args=False, make_op=_with_index,
    vjp=(lambda g, ans, x, v, index: index_update(g, 0.0, index),
         lambda g, ans, x, v, index: unbroadcast(getitem(g, index), v)),
    jvp=(lambda t, ans, x, v, index: index_update(t, 0.0, index),
         lambda t, ans, x, v, index: index_update(_zeros_as(x), t, index)))
