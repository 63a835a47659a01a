"""Facts about numbers that several layers state: the one place that names a non-finite float,
writes a number as the output shows it, the one whole-number test (graph labels, builtins,
reports, JSON), and the one test of whether numbers are finite (replays, fused regions, tangent
stacks, NaN provenance, data inputs, the output)."""
from __future__ import annotations

import cmath
import math

from .backend import module_of, np

ONES_CACHED_MAX = 4096       # elements of the ones vector kept for finite_array's dot (32 KiB)
_ones: list = []             # [that vector], made on first use; a prefix serves every smaller size
_ones_of_size: dict = {}     # those prefixes by size, each view made once


def finite(v) -> bool:
    """Whether every number `v` holds is finite: a Python or numpy number, a host or a device
    array. Only float and complex numbers can be nan or inf (an integer, bool or object array is
    finite here). An array in one pass where its sum is finite (a nan or inf anywhere makes the
    sum not finite), entry by entry only where it is not (a sum that overflowed: the array is
    finite); a device array sends one number back, or one more where the sum is not finite."""
    c = v.__class__
    if c is float:
        return v - v == 0.0
    if c is int or c is bool:
        return True                             # (numpy not imported for a plain number)
    numpy = np()
    if c is numpy.ndarray:
        return v.dtype.kind not in "fc" or finite_array(v)
    if isinstance(v, (float, complex)):         # complex, and numpy's float64 and complex128
        return cmath.isfinite(v)
    dtype = getattr(v, "dtype", None)
    if dtype is None:
        return finite(numpy.asarray(v))         # a list of numbers
    if dtype.kind not in "fc":
        return True
    xp = module_of(v)                           # numpy's other scalars; a device array
    total = v.sum()
    return bool(total - total == 0.0) or bool(xp.isfinite(v).all())


def all_finite(values) -> bool:
    """Whether every number of the values is finite (`finite` of each; a float inline)."""
    for v in values:
        if v.__class__ is float:
            if v - v != 0.0:
                return False
        elif not finite(v):
            return False
    return True


def finite_array(a) -> bool:
    """`finite` of a host (numpy) array, for a caller that knows it holds one: no dispatch on its
    type (a structured tangent stack tests every term it makes, core/tangent_stack.py). The sum
    as BLAS's dot with ones where the array has up to ONES_CACHED_MAX numbers: a third of
    numpy's reduction's cost at a few hundred."""
    size = a.size
    ones = _ones_of_size.get(size)
    if ones is None:
        if size > ONES_CACHED_MAX:
            total = np().add.reduce(a, None)
            return total - total == 0.0 or bool(np().isfinite(a).all())
        if not _ones:
            _ones.append(np().ones(ONES_CACHED_MAX))
        ones = _ones_of_size[size] = _ones[0][:size]
    total = (a if a.ndim == 1 else a.reshape(-1)).dot(ones)
    return total - total == 0.0 or bool(np().isfinite(a).all())


def nonfinite_word(x: float) -> str | None:
    """'nan', 'inf' or '-inf' for a non-finite float; None for a finite one."""
    if x != x:
        return "nan"
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return None


def number_text(x) -> str:
    """A number as the output shows it: the shortest text that reads back as the same float, 3
    not 3.0, nan/inf/-inf."""
    word = nonfinite_word(x)
    if word:
        return word
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def is_whole(x: float) -> bool:
    """Whether x is a finite whole number (3.0 yes; 3.5, nan and inf no)."""
    if isinstance(x, int):
        return True                    # bools too; and huge ints, which float() cannot hold
    return math.isfinite(x) and float(x).is_integer()
