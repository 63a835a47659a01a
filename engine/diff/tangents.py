"""Stacks of basis tangents for the batched drivers (Jacobian by forward mode, Hessian by
forward-over-reverse): one pass carries k tangents (core/batch.py), k chosen so that a stacked
tangent stays under a memory budget. A basis of raw numpy float64 values with enough rows is
seeded as a TangentStack (core/tangent_stack.py): the identity as a diagonal, which the
elementwise steps keep structured."""
from __future__ import annotations

from ..core import backend
from ..core.backend import np, xp
from ..core.tangent_stack import TangentStack, structured_seed
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
    for start in range(0, n, step):
        stop = min(n, start + step)
        yield start, stop, basis_stack(value, stop - start, -start)


def basis_stack(value, rows: int, offset: int):
    """`rows` basis tangents of `value`'s space, row i + offset being e_i (the rows outside
    0..rows-1 left out): a TangentStack where core/tangent_stack.py's structured_seed says so."""
    shp = tuple(shape_of(value))
    if value.__class__ is np().ndarray and shp and structured_seed(rows, str(dtype()), backend.name()):
        return TangentStack.identity(rows, shp, offset)
    n = size_of(value)
    columns = xp().arange(max(0, -offset), min(n, rows - offset))
    stack = xp().zeros((rows, n), dtype=dtype())
    stack[columns + offset, columns] = 1.0
    return stack.reshape((rows,) + shp)


def is_structured(tangents) -> bool:
    """Whether a basis from basis_stack is structured (core/batch.py's `batched` is told so)."""
    return tangents.__class__ is TangentStack


def stacked_tangent_of(out, level, shp, k, by_columns=False):
    """The output's k tangents at `level` as (k, size) (None: no dependence); `by_columns`: to be
    read transposed (a Jacobian's columns), a structured stack is assembled in that order."""
    if out.__class__ is not Dual or out.level != level:
        return None
    t = strip(out.tangent)
    want = (k,) + tuple(shp)
    if t.__class__ is TangentStack:    # the one O(k x size) assembly of a structured pass
        spread = t.broadcast(want)
        if spread is not None:
            return spread.dense_columns().T if by_columns else spread.dense().reshape(k, -1)
        t = t.dense()
    if shape_of(t) != want:
        t = xp().broadcast_to(t, want)
    return t.reshape(k, -1)
