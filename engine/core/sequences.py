"""Sequences as numpy reads them: a tuple (or list) of numbers and arrays, nested or not, is the
array np.asarray makes of it, wherever an array is expected (an operand of `+` or `<`, the
argument of sin or sum, each array of concatenate). Traced elements are stacked, so the
gradient reaches each; elements of different shapes are numpy's ragged-sequence error, named
with both shapes."""
from __future__ import annotations

from . import ops
from .backend import is_array, xp
from .complexes import complex_dtype, is_complex
from .errors import EngineError
from .primitives import check_elements, run_dtype, shape
from .tape import BOXES, strip

SEQUENCES = (tuple, list)       # a tuple, or a list literal whose elements numpy could not stack


def is_sequence(v) -> bool:
    return isinstance(strip(v), (tuple, list))


def sequence_array(items, dtype=None):
    """np.asarray(items) of a tuple or list, its boxes stacked (a box when any element is one).
    The float type is `dtype`, else the run's (truth values are numbers, as in a list)."""
    items = [sequence_array(v, dtype) if v.__class__ in (tuple, list) else v for v in items]
    if not items:
        return xp().zeros((0,), dtype=dtype or run_dtype[0])
    first = shape(items[0])
    for v in items:
        raw = strip(v)
        if not (is_array(raw) or isinstance(raw, (bool, int, float, complex))):
            what = "a function" if callable(raw) else "nothing" if raw is None else f"a {type(raw).__name__}"
            raise TypeError(f"a sequence read as an array holds {what}, not a number or an array")
        if shape(v) != first:
            raise EngineError("shape mismatch", f"a sequence read as an array holds elements of shapes {first} "
                              f"and {shape(v)}: numpy makes an array only of elements of one shape")
    check_elements((len(items),) + first, "a sequence read as an array")
    dtype = dtype or run_dtype[0]
    if any(is_complex(v) for v in items) and not is_complex(xp().zeros(0, dtype=dtype)):
        dtype = complex_dtype(xp().dtype(dtype).name)      # [1, 2j]: complex, as numpy reads it
    if any(v.__class__ in BOXES for v in items):
        return ops.stack([v if v.__class__ in BOXES else xp().asarray(v, dtype=dtype) for v in items])
    if not first:
        return xp().asarray([strip(v) for v in items], dtype=dtype)
    return xp().stack([xp().asarray(v, dtype=dtype) for v in items])


def as_array(v):
    """v, or the array numpy reads a tuple or list as (the one conversion every array
    argument takes)."""
    return sequence_array(v) if v.__class__ in (tuple, list) else v


def items_of(arrays):
    """The arrays of concatenate/stack: each item of a tuple or list (itself an array if it is a
    sequence, as numpy reads it), or an array's rows."""
    if is_sequence(arrays):
        return [as_array(v) for v in arrays]
    return [ops.getitem(arrays, i) for i in range(shape(arrays)[0])] if shape(arrays) else [arrays]


def as_rows(a, rows: int):
    """A block of shape out.shape + in.shape as a (rows, entries per row) matrix, where `rows`
    is the output's entries. numpy's reshape(rows, -1) is ambiguous once there are no entries
    (--at x=[]): with no rows, a row's entries are those after the output's first empty axis."""
    if rows:
        return a.reshape(rows, a.size // rows)
    shape = tuple(a.shape)
    first = next((i for i, n in enumerate(shape) if n == 0), len(shape) - 1)
    columns = 1
    for n in shape[first + 1:]:
        columns *= n
    return a.reshape(0, columns)
