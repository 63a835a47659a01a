"""Stacks of basis tangents for the batched drivers (Jacobian by forward mode, Hessian by
forward-over-reverse): one pass carries k tangents (core/batch.py), k chosen so that a stacked
tangent stays under a memory budget."""
from __future__ import annotations

from ..core.backend import xp
from ..core.tape import Dual, strip
from ..lang.values import dtype, shape_of, size_of

# the most elements one stacked tangent of an input may hold (k x the input's size): 2**22
# float64 elements are 32 MiB; a larger input is taken in chunks of k rows
TANGENT_BUDGET_ELEMENTS = 1 << 22


def chunk_size(value, out_size=0) -> int:
    """k tangents of `value` per pass: k x max(its size, the output's where known) in budget."""
    largest = max(1, size_of(value), out_size)
    return max(1, min(size_of(value), TANGENT_BUDGET_ELEMENTS // largest))


def basis_chunks(value, out_size=0):
    """(start, stop, tangents) covering the basis of `value`'s space: tangents[j] = e_(start+j),
    stacked as (stop - start,) + value.shape."""
    n = size_of(value)
    step = chunk_size(value, out_size)
    shp = shape_of(value)
    for start in range(0, n, step):
        stop = min(n, start + step)
        stack = xp().zeros((stop - start, n), dtype=dtype())
        stack[xp().arange(stop - start), xp().arange(start, stop)] = 1.0
        yield start, stop, stack.reshape((stop - start,) + tuple(shp))


def stacked_tangent_of(out, level, shp, k):
    """The output's k tangents at `level` as (k, size) (None: no dependence)."""
    if out.__class__ is not Dual or out.level != level:
        return None
    t = strip(out.tangent)
    want = (k,) + tuple(shp)
    if shape_of(t) != want:
        t = xp().broadcast_to(t, want)
    return t.reshape(k, -1)
