"""Facts about plain numbers that several layers state in words: the one place that names a
non-finite float, writes a number as the output shows it, and the one whole-number test (graph
labels, builtins, reports, JSON)."""
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
