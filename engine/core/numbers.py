"""Facts about plain numbers that several layers state in words: the one place that names a
non-finite float and the one whole-number test (graph labels, builtins, reports, JSON)."""
from __future__ import annotations

import math


def nonfinite_word(x: float) -> str | None:
    """'nan', 'inf' or '-inf' for a non-finite float; None for a finite one."""
    if x != x:
        return "nan"
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return None


def is_whole(x: float) -> bool:
    """Whether x is a finite whole number (3.0 yes; 3.5, nan and inf no)."""
    if isinstance(x, int):
        return True                    # bools too; and huge ints, which float() cannot hold
    return math.isfinite(x) and float(x).is_integer()
