"""Sequences as numpy reads them: a tuple (or list) of numbers and arrays, nested or not, is the
array np.asarray makes of it, wherever an array is expected (an operand of `+` or `<`, the
argument of sin or sum, each array of concatenate). Traced elements are stacked, so the
gradient reaches each; elements of different shapes are numpy's ragged-sequence error, named
with both shapes."""
from __future__ import annotations

import math
import operator

from . import ops
from .backend import is_array, np, xp
from .complexes import complex_dtype, is_complex
from .errors import EngineError
from .primitives import check_elements, run_dtype, shape
from .tape import BOXES, strip

SEQUENCES = (tuple, list)       # a tuple, or a list literal whose elements numpy could not stack


def is_sequence(v) -> bool:
    return isinstance(strip(v), (tuple, list))


def sequence_array(items, dtype=None):
    """np.asarray(items) of a tuple or list, its boxes stacked (a box when any element is one).
    The float type is `dtype`, else the run's; truth values alone make numpy's boolean array."""
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
    if dtype is None and all(_truth_values(strip(v)) for v in items):
        dtype = "bool"                  # [True, False]: numpy's boolean array (a mask where it indexes)
    dtype = dtype or run_dtype[0]
    if any(is_complex(v) for v in items) and not is_complex(xp().zeros(0, dtype=dtype)):
        dtype = complex_dtype(xp().dtype(dtype).name)      # [1, 2j]: complex, as numpy reads it
    if any(v.__class__ in BOXES for v in items):
        return ops.stack([v if v.__class__ in BOXES else xp().asarray(v, dtype=dtype) for v in items])
    if not first:
        return xp().asarray([strip(v) for v in items], dtype=dtype)
    return xp().stack([xp().asarray(v, dtype=dtype) for v in items])


def _truth_values(raw) -> bool:
    """Whether a sequence's item is a truth value or an array of them (numpy's bool dtype)."""
    return raw.__class__ is bool or getattr(getattr(raw, "dtype", None), "kind", None) == "b"


def as_array(v):
    """v, or the array numpy reads a tuple or list as (the one conversion every array
    argument takes)."""
    return sequence_array(v) if v.__class__ in (tuple, list) else v


def numpy_reading(v):
    """A list (a list literal's value) where numpy functions read it: the array np.asarray
    makes of it where its items (each read so first) share one shape, else the list itself
    (ragged: concatenate and its kind read it item by item; elsewhere numpy's error). Anything
    else as it is."""
    if v.__class__ is not list:
        return v
    if not v:
        return xp().zeros((0,), dtype=run_dtype[0])
    items = [numpy_reading(x) if x.__class__ is list else (sequence_array(x) if x.__class__ is tuple else x)
             for x in v]
    if any(x.__class__ is list for x in items):
        return items
    first = shape(items[0])
    if any(shape(x) != first for x in items) or not all(is_array(strip(x)) or isinstance(strip(x), (bool, int, float))
                                                        for x in items):
        return items
    return sequence_array(items)


def read_lists(values: list) -> list:
    """The arguments of a builtin or a derivative transform: each list as numpy reads it;
    user functions take lists as they are."""
    return [numpy_reading(v) if v.__class__ is list else v for v in values]


def elements_in(v, counted=None) -> int:
    """How many numbers a value holds, its lists' items counted through (each list once: `x =
    [x, x]` doubles the count each time without copying)."""
    if v.__class__ is list or v.__class__ is tuple:
        counted = {} if counted is None else counted
        if id(v) not in counted:
            counted[id(v)] = sum(elements_in(x, counted) for x in v)
        return counted[id(v)]
    return int(math.prod(shape(v)))


def list_operation(op: str, a, b, repeats: bool = False):
    """Python's `+` and `*` of sequences: `[a] + [b]` and `(a,) + (b,)` join them (a list and a
    tuple: Python's error); a list or tuple times a whole number written in the source (`[0.0] * 3`,
    `3 * (x, y)`) repeats it. None for any other operands: numpy reads a sequence as an array there
    (`[1.0, 2.0] + x` and `[1.0, 2.0] * x[0]` are elementwise, as numpy's scalars make them; the
    language's numbers are all floats, so a computed count is such a number: write
    [v for _ in range(n)] to repeat)."""
    if op == "+" and a.__class__ in SEQUENCES and b.__class__ in SEQUENCES:
        if a.__class__ is b.__class__:
            return a + b
        raise EngineError("type error", f'can only concatenate {a.__class__.__name__} (not '
                          f'"{b.__class__.__name__}") to {a.__class__.__name__}, as in Python')
    if op == "*" and repeats:
        seq, n = (a, b) if a.__class__ in SEQUENCES else (b, a)
        if seq.__class__ in SEQUENCES and n.__class__ in (int, float) and float(n).is_integer():
            return seq * int(n)
    return None


_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
          "!=": operator.ne}


def sequence_comparison(op: str, a, b) -> bool:
    """Python's comparison of two sequences (lists, tuples): equal when of one kind and length
    with equal items, ordered by their first unequal items, then by length (a list against a
    tuple: unequal, and not ordered). Items are numbers (a traced one read as a number, which a
    replay checks), sequences, or arrays of one element, as Python's truth of `==` takes them."""
    if a.__class__ is not b.__class__:
        if op in ("==", "!="):
            return op == "!="
        raise EngineError("type error", f"`{op}` between a {a.__class__.__name__} and a {b.__class__.__name__}: "
                          "Python does not order them")
    for x, y in zip(a, b):
        if not _item_equal(x, y):
            if op in ("==", "!="):
                return op == "!="
            if x.__class__ in SEQUENCES and y.__class__ in SEQUENCES:
                return sequence_comparison(op, x, y)
            return bool(_ORDER[op](_number(x), _number(y)))
    return _ORDER[op](len(a), len(b))


def _item_equal(x, y) -> bool:
    if x.__class__ in SEQUENCES and y.__class__ in SEQUENCES:
        return sequence_comparison("==", x, y)
    return bool(_number(x) == _number(y))


def _number(v):
    """An item of a compared sequence as Python's comparison reads it: a number, or an array of
    one element (numpy's truth of an array of several is its error)."""
    if v.__class__ in SEQUENCES:
        raise EngineError("type error", "a sequence compared with a number inside compared sequences")
    raw = ops.read(v)
    if is_array(raw) and raw.size != 1:
        raise EngineError("type error", "compared sequences hold arrays of several elements: Python's truth of "
                          "their `==` is numpy's error (ambiguous)")
    return raw


def items_of(arrays):
    """The arrays of concatenate/stack: each item of a tuple or list (itself an array if it is a
    sequence, as numpy reads it), or an array's rows."""
    if is_sequence(arrays):
        return [as_array(v) for v in arrays]
    return [ops.getitem(arrays, i) for i in range(shape(arrays)[0])] if shape(arrays) else [arrays]


def side_by_side(blocks, rows: int):
    """Blocks of shape out.shape + in.shape (a Jacobian's per input, a Hessian's row per input),
    each as a (rows, its entries) matrix (as_rows), side by side: a float64 numpy array of
    (rows, all their entries), where `rows` is the output's entries."""
    if not blocks:
        return np().zeros((rows, 0))
    return np().concatenate([as_rows(np().asarray(b, dtype=np().float64), rows) for b in blocks], axis=1)


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
