"""Sums across a tall, thin array (many rows of 2 to 8 numbers), as kmeans and gmm make them: numpy
runs its reduction machinery once per row there (18 µs for a (1000, 4) array either way), where a
few whole-column operations do the same adds in 4 to 7 µs."""
from __future__ import annotations

from ..backend import np

ROWS_PER_COLUMN_MIN = 64        # below this many rows per column numpy's one call is quicker
ROW_WIDTH_MAX = 7               # numpy adds rows of up to 7 one after the other (row_sums)
COLUMN_WIDTH_MAX = 8            # the transposed copy pays up to 8 columns (column_sums)


def thin(x, widest: int) -> bool:
    """A C-contiguous 2-d or wider float64 or float32 array whose last axis is 2 to `widest` long,
    with many rows (numpy sums float16 in float32, rounding once: column adds would round at every
    add)."""
    if x.ndim < 2 or x.dtype.char not in "df" or not x.flags.c_contiguous:
        return False
    width = x.shape[-1]
    return 2 <= width <= widest and x.size >= ROWS_PER_COLUMN_MIN * width * width


def row_sums(x):
    """numpy's add.reduce(x, axis=-1), to the bit, for a thin x of width 2 to 7: numpy adds such
    a row one element after the other from +0.0 (((0.0 + x0) + x1) + x2 ...), which whole-column
    adds repeat in the same order. Width 8 and up it sums in eight lanes: left to numpy
    (thin(x, ROW_WIDTH_MAX) says which).
    tests/test_thin_sums.py pins the order against numpy itself."""
    total = x[..., 0] + 0.0                   # +0.0 first, as numpy starts: -0.0 rows sum to +0.0
    for column in range(1, x.shape[-1]):
        total += x[..., column]
    return total


def column_sums(x):
    """The sums down the columns of a 2-d x, thin(x, COLUMN_WIDTH_MAX) (a broadcast adjoint summed
    back to a row): each column's own contiguous sum, numpy's pairwise one, where
    add.reduce(x, axis=0) adds the rows one after the other (the same sums to rounding, pairwise
    the closer)."""
    return np().add.reduce(np().ascontiguousarray(x.T), axis=1)
