"""The tests replays and their compiled forms are held to: the same numbers to the bit, and
every number finite."""
from __future__ import annotations

import math

from ..core.backend import np, to_host


def same_bits(a, b) -> bool:
    """The same number to the bit (nan equal to itself), or the same array: type, shape, bytes."""
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b) or (a != a and b != b)
    return getattr(a, "shape", None) == getattr(b, "shape", None) and \
        np().asarray(to_host(a)).tobytes() == np().asarray(to_host(b)).tobytes()


def all_finite(values) -> bool:
    """Whether every number of the values is finite. A host float array in one pass where its
    sum is finite (a nan or inf anywhere makes the sum not; a finite sum that overflows is asked
    again, entry by entry)."""
    numpy = np()
    for v in values:
        if v.__class__ is float:
            if not math.isfinite(v):
                return False
            continue
        if v.__class__ is numpy.ndarray and v.dtype.kind == "f":
            total = numpy.add.reduce(v, None)
            if total - total == 0.0:
                continue
        if not numpy.isfinite(to_host(v)).all():            # a device array: checked on the host
            return False
    return True
