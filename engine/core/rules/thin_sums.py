"""Sums across a tall, thin array (many rows of 2 to 8 numbers), as kmeans and gmm make them: numpy
runs its reduction machinery once per row there (18 µs for a (1000, 4) array either way), where a
few whole-column operations do the same adds in 4 to 7 µs. And sums along an axis followed by a
short row (an (n, k, d) adjoint summed over k, kmeans' broadcast difference unbroadcast), which
numpy adds one row after the other, once per (n, k): k whole-slab adds do the same adds."""
from __future__ import annotations

import math

from ..backend import np

ROWS_PER_COLUMN_MIN = 64        # below this many rows per column numpy's one call is quicker
ROW_WIDTH_MAX = 8               # numpy adds rows of up to 7 one after the other, 8 in eight lanes (row_sums)
COLUMN_WIDTH_MAX = 8            # the transposed copy pays up to 8 columns (column_sums)
# slab_sums: a row after the summed axis of 2 to SLAB_ROW_MAX numbers, and at least SLABS_MIN
# rows before it (below, numpy's one call was quicker: k calls of ~1 µs each against n * k of
# its per-row ~10 ns; (1000, 100, 8) summed over its middle axis 1175 -> 607 µs, (100, 100, 8)
# 114 -> 127 µs, left to numpy)
SLAB_ROW_MAX = 32
SLABS_MIN = 256


def thin(x, widest: int) -> bool:
    """A C-contiguous 2-d or wider float64 or float32 array whose last axis is 2 to `widest` long,
    with many rows (numpy sums float16 in float32, rounding once: column adds would round at every
    add)."""
    if x.ndim < 2 or x.dtype.char not in "df" or not x.flags.c_contiguous:
        return False
    width = x.shape[-1]
    return 2 <= width <= widest and x.size >= ROWS_PER_COLUMN_MIN * width * width


def row_sums(x):
    """numpy's add.reduce(x, axis=-1), to the bit, for a thin x of width 2 to 8 (thin(x,
    ROW_WIDTH_MAX)). numpy adds a row of up to 7 one element after the other from +0.0
    (((0.0 + x0) + x1) + x2 ...), which whole-column adds repeat in the same order; a row of 8 in
    eight lanes (its pairwise sum's block): +0.0 + (((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 +
    x7))), which three adds of every other element repeat (each a view numpy walks as one strided
    run: 1.3 ms -> 0.2 ms for (100000, 8); columns one by one took 0.37 ms). Wider rows sum
    their lanes' columns first: left to numpy. tests/test_thin_sums.py pins the order against
    numpy itself."""
    if x.shape[-1] == 8:
        pairs = x[..., 0::2] + x[..., 1::2]         # x0 + x1, x2 + x3, x4 + x5, x6 + x7
        quads = pairs[..., 0::2] + pairs[..., 1::2]
        total = quads[..., 0] + quads[..., 1]
        total += 0.0                              # numpy's start: a row of -0.0 sums to +0.0
        return total
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


_AGREES: list = []


def numpy_order() -> bool:
    """Whether this process's numpy adds in the orders row_sums and slab_sums repeat: asked of
    numpy itself once (rows of 2 to 8 and a middle axis, float64 and float32, with -0.0, inf, nan
    and numbers of every magnitude among them); where it does not (another numpy, another build),
    numpy's own reduction runs and the bits stay numpy's."""
    if not _AGREES:
        numpy = np()

        def sample(shape, dtype):                   # numbers of every sign and magnitude (no RNG to load)
            i = numpy.arange(math.prod(shape), dtype=numpy.float64)
            return (numpy.sin(i * 1.7) * 10.0 ** (i % 17 - 8)).reshape(shape).astype(dtype)
        agrees = True
        for dtype in (numpy.float64, numpy.float32):
            for width in range(2, ROW_WIDTH_MAX + 1):
                x = sample((ROWS_PER_COLUMN_MIN * width, width), dtype)
                x.reshape(-1)[:6] = [-0.0, 0.0, numpy.inf, -numpy.inf, numpy.nan, -0.0]
                x[-3:] = -0.0
                agrees = agrees and row_sums(x).tobytes() == numpy.add.reduce(x, axis=-1).tobytes()
            x = sample((SLABS_MIN, 5, 4), dtype)
            x[0, 0, 0], x[1, :, 1], x[2, 3, 2] = numpy.nan, -0.0, numpy.inf
            agrees = agrees and slab_sums(x, 1).tobytes() == numpy.add.reduce(x, axis=1, keepdims=True).tobytes()
        _AGREES.append(agrees)
    return _AGREES[0]


def slabbed(x, axis: int) -> bool:
    """x C-contiguous float64 or float32 whose `axis` (not the first, not the last) is followed by
    a row of 2 to SLAB_ROW_MAX numbers and preceded by at least SLABS_MIN rows: numpy adds such
    an axis one slab after the other (slab_sums)."""
    if x.dtype.char not in "df" or not x.flags.c_contiguous or not 0 < axis < x.ndim - 1 or x.shape[axis] < 2:
        return False
    return 2 <= math.prod(x.shape[axis + 1:]) <= SLAB_ROW_MAX and math.prod(x.shape[:axis]) >= SLABS_MIN \
        and numpy_order()


def slab_sums(x, axis: int):
    """numpy's add.reduce(x, axis=axis, keepdims=True), to the bit, for slabbed(x, axis): numpy's
    innermost loop runs along the short row after `axis`, so each sum is ((0.0 + x[0]) + x[1]) +
    ... down `axis`, one slab x[:, k] after the other, which whole-slab adds repeat in the same
    order. tests/test_thin_sums.py pins the order against numpy itself."""
    lead = (slice(None),) * axis
    total = x[lead + (slice(0, 1),)] + 0.0       # +0.0 first, as numpy starts
    for k in range(1, x.shape[axis]):
        total += x[lead + (slice(k, k + 1),)]
    return total
