"""Item assignment as a value: `index_update(x, v, index)` is a copy of x with x[index] = v
(numpy's broadcasting of v), never x changed in place, so an alias of x keeps its value and the
tape keeps every version. The adjoint of x is g with the assigned items cut out; the adjoint of v
is g at those items, summed down to v's shape. Where an integer index repeats a position, numpy
keeps the last write, and only that write gets the position's adjoint."""
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


def _last_writes(x, index):
    """Where an index array may repeat a position: a mask over x[index] of the writes that last
    (numpy's rule for repeated assignment). None for indices without arrays, which cannot repeat."""
    m = xp()
    parts = index if isinstance(index, tuple) else (index,)
    if not any(getattr(p, "ndim", 0) > 0 and getattr(p, "dtype", None) != bool for p in parts):
        return None
    slots = m.full(shape(x), -1, dtype=m.int64)
    writes = m.arange(slots[index].size).reshape(slots[index].shape)
    slots[index] = writes
    return slots[index] == writes


def _value_vjp(g, ans, x, v, index):
    picked = getitem(g, index)
    last = _last_writes(x, index)
    return unbroadcast(picked if last is None else picked * last, v)


def _zeros_as(x):
    """Zeros of x's shape and dtype (x is the Shape stand-in the rules are given)."""
    m = xp()
    return m.zeros(shape(x), dtype=getattr(x, "dtype", None) or m.float64)


index_update = defprim(
    "index_update", _index_update, needs_args=False, make_op=_with_index,
    vjp=(lambda g, ans, x, v, index: index_update(g, 0.0, index),
         _value_vjp),
    jvp=(lambda t, ans, x, v, index: index_update(t, 0.0, index),
         lambda t, ans, x, v, index: index_update(_zeros_as(x), t, index)), complex_values=True)
