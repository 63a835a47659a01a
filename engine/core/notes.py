"""What the engine notices while it runs: the source span of the op being executed (set by the
interpreter), the ties, kinks and equal comparisons it evaluated (reported by the CLI), and the
places where a traced value went through stop_gradient (a check's finite differences see through
them, AD does not)."""
from __future__ import annotations


class Notes:
    __slots__ = ("span", "kinks", "detached", "limit")

    def __init__(self):
        self.span = None          # the span of the expression the interpreter is evaluating
        self.kinks = []           # (op, span, detail) for each kink or tie evaluated
        self.detached = []        # the span of each stop_gradient applied to a traced value
        self.limit = 10_000       # keep at most this many kink notes

    def kink(self, op: str, detail: str) -> None:
        if len(self.kinks) < self.limit:
            self.kinks.append((op, self.span, detail))

    def detach(self) -> None:
        if len(self.detached) < self.limit:
            self.detached.append(self.span)


NOTES = Notes()          # the one record of the running computation (a run is single-threaded)


class Reads:
    """Who hears of a traced value read as a plain number (core/tape.py's `read`): a count, an
    order, a selection or a shift a composite takes out of a box, which no tape records. `hook`
    is None, or, while a run records a trace for replay, a callable given the value read
    (lang/recorded_decisions.py: such a run keeps no trace, whose replay would reuse the number)."""
    __slots__ = ("hook",)

    def __init__(self):
        self.hook = None


READS = Reads()


def reset() -> Notes:
    NOTES.span = None
    NOTES.kinks = []
    NOTES.detached = []
    return NOTES
