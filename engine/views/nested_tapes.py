"""Nested tapes kept whole, as `derivative` builds them, for the views that read them again
(derivative --explain, NaN provenance of n-th derivatives).

Reverse mode nests N tapes. The tape swept for f^(k) recorded f's computation and then the
sweeps for f', ..., f^(k-1) (the rules are engine ops, so each sweep run while it was active was
itself taped). Here every tape is persistent and keeps its values, so a view can read or sweep any
of them afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.tape import Entry, strip
from ..diff.common import run, sweep
from ..diff.higher import watched_on_tapes
from ..lang.values import as_input


def derivative_name(order: int) -> str:
    """f, f', f'', f''', f^(4), ...: the function a stage differentiates, or its result."""
    return "f" + "'" * order if order <= 3 else f"f^({order})"


@dataclass
class NestedTapes:
    """tapes[0] is the outermost (swept for f^(order)); outputs[k-1] is f^(k-1), the output the
    sweep for f^(k) starts from; marks[i] holds tapes[i]'s length after f's run, then after each
    sweep (which part of a tape recorded what)."""
    tapes: list
    outputs: list
    marks: list
    derivative: object                  # f^(order), as the last sweep gave it (None: zero)


def record_nested(target, values: dict, name: str, order: int, limits) -> NestedTapes:
    """Nested persistent tapes in input `name` (the other inputs held), swept as `derivatives`
    sweeps them: the innermost first."""
    tapes, boxes, v = watched_on_tapes(values[name], order, persistent=True, keep_values=True)
    held = {k: x for k, x in values.items() if k != name}
    out, _ = run(target, {**held, name: v}, limits)
    marks = [[len(tape)] for tape in tapes]
    outputs, g = [], out
    for k in range(order):
        tape, box = tapes[order - 1 - k], boxes[order - 1 - k]
        outputs.append(g)
        g = sweep(tape, g, as_input(1.0), target)[box.index] if g is not None else None
        for tape_marks, t in zip(marks, tapes):
            tape_marks.append(len(t))
    return NestedTapes(tapes=tapes, outputs=outputs, marks=marks, derivative=g)


class CopiedTape:
    """A tape's entries with every value unboxed (`value_of` each entry's value; strip by default):
    re-running the rules on them records nothing. A view sweeps it as often as it likes."""
    persistent = True

    def __init__(self, tape, value_of=strip):
        self.entries = [None if e is None else
                        Entry(e.prim, e.parents, tuple(strip(a) for a in e.args), strip(e.ans), e.params, e.span,
                              value_of(e.value)) for e in tape.entries]


__all__ = ["NestedTapes", "record_nested", "CopiedTape", "derivative_name"]
