"""The reads a run that records a trace makes of traced values, logged as they happen so that a
replay can check each again (diff/replay_guards.py), as a tracer meeting concretization does.

A value computed from the inputs leaves the tape only where it is read as a plain Python number:
a branch's truth (if, elif, while, a conditional expression, and/or/not, bool()), a comparison
(which carries no gradient), a loop's range(), an index or a slice bound, int(), a composite's
count, order, mask or shift (core/tape.py's `read`), a primitive without a derivative applied to
a box (sign, floor, argmax...), the condition of where(). Each such read reaches `READS.hook`
(core/notes.py) while a run records; `recording_decisions` logs it here with the tape's length
at that moment (the guard equation's position among the Program's equations, core/program.py),
what the run took from the value and how to take it again. No analysis of the
program decides what is static: whatever the run did not read as a number was recorded on the
tape, and whatever it read is checked by a guard. A read a guard cannot state (a value of a
forward-mode derivative, of another tape) is logged with its reason: the run keeps no trace."""
from __future__ import annotations

from contextlib import contextmanager

from ..core.notes import NOTES, READS
from ..core.tape import Dual, Var


class Read:
    """One logged read: `position` the recording tape's length then (None: no guard can state it,
    `reason` says why), `value` the box (or a tuple or list holding boxes) read, `result` what the
    run took, `take` how (core/notes.py's Reads), `opname` "truth", "range", a comparison or "",
    `tie` (or None), `span` where."""
    __slots__ = ("position", "value", "result", "take", "opname", "tie", "span", "reason")

    def __init__(self, position, value, result, take, opname, tie, span, reason=None):
        self.position, self.value, self.result, self.take = position, value, result, take
        self.opname, self.tie, self.span, self.reason = opname, tie, span, reason


class DecisionLog:
    """Where a run that records a trace logs its reads of traced values: `entries` is a list of
    `Read` while such a run goes on (None otherwise); `watching` the tape of a run that watches
    the inputs only to record them, no derivative taken in them (None otherwise)."""
    __slots__ = ("entries", "watching")

    def __init__(self):
        self.entries = None
        self.watching = None


DECISIONS = DecisionLog()


@contextmanager
def recording_decisions(watching=None):
    """Log the reads of traced values the runs inside make (the list is handed out); the log is
    off after. `watching`: the tape of a run that watches the inputs only to record them (a
    value's recording run), where a count read from one of its boxes is a constant of the path
    (`constant_of_path`); None where the run differentiates its inputs (a gradient's)."""
    before, DECISIONS.entries = DECISIONS.entries, []
    watched, DECISIONS.watching = DECISIONS.watching, watching
    hook, READS.hook = READS.hook, _log_read
    try:
        yield DECISIONS.entries
    finally:
        DECISIONS.entries = before
        DECISIONS.watching = watched
        READS.hook = hook


def constant_of_path(v) -> bool:
    """Whether `v` is a box of a run that watches the inputs only to record them, and read where a
    derivative cannot follow it (a count, a shape, arange's bounds: lang/builtins.py): the value
    a plain run, which does not box it, takes as a number. It is then read as one (a guard), and
    logged as read so ("constant"): a run differentiating an input it depends on refuses it, so
    a replay of such a derivative is refused too (diff/replay_guards.py, diff/function.py)."""
    tape = DECISIONS.watching
    if tape is None or v.__class__ is not Var or v.tape is not tape:
        return False
    DECISIONS.entries.append(Read(len(tape.entries), v, None, None, "constant", None, NOTES.span))
    return True


def unguardable(reason: str, span=None) -> None:
    """A recording run did something no guard can state: it keeps no trace, for `reason`."""
    if DECISIONS.entries is not None:
        DECISIONS.entries.append(Read(None, None, None, None, "", None, span, reason))


def nested_derivative(span) -> None:
    """A recording run took a derivative inside the program (lang/transforms.py): no guard, but
    only its gradient in every input may replay (diff/function.py)."""
    if DECISIONS.entries is not None:
        DECISIONS.entries.append(Read(None, None, None, None, "nested", None, span))


def _log_read(value, result, take, opname, tie) -> None:
    """READS.hook while a run records: the read, with the recording tape's length at it."""
    entries = DECISIONS.entries
    if entries is None:
        return
    base, dual = _lowest(value, None, False)
    if base is not None:
        entries.append(Read(len(base.tape.entries), value, result, take, opname, tie, NOTES.span))
    elif dual:
        entries.append(Read(None, value, result, take, opname, tie, NOTES.span,
                            "a value of a forward-mode derivative read as a number"))


def _lowest(v, base, dual):
    """(the Var of the lowest level `v` holds, whether it holds a Dual): a nested derivative's
    box holds the outer level's, and the lowest level reached is the recording tape's."""
    c = v.__class__
    if c is tuple or c is list:
        for x in v:
            base, dual = _lowest(x, base, dual)
        return base, dual
    while c is Var or c is Dual:
        if c is Dual:
            dual = True
            v = v.primal
        else:
            if base is None or v.level < base.level:
                base = v
            v = v.value
        c = v.__class__
    return base, dual
