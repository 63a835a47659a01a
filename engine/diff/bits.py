"""The test replays and their compiled forms are held to: the same numbers to the bit (every
number finite is core/numbers.all_finite)."""
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
