"""The paths of one input signature: the traces of a program whose if/while conditions read
traced values, one per decision sequence, and the replay that picks among them.

A replay starts on the path that answered last. Where a guard's outcome differs, it moves to
the kept path that took the same decisions up to that guard and the new one there (the steps
before a decision are the same on every path that took the same earlier decisions), and starts
again on it; where none was kept the call is interpreted and its run becomes another path, up to
MAX_PATHS (past that, new paths are interpreted). A path whose recording was refused (its replay
where it was recorded disagreed with the interpreter: a kink a rule inside a derivative the
program takes notes, which the replay does not make; a gradient replayed apart at large inputs
that differs) is kept as refused: a call whose guards lead along it is interpreted (Unsupported,
its reason), and the other paths keep replaying. A tie met where a path was recorded refuses
nothing: it holds at that point only, so the path is not kept, and a call that takes it at other
values records it."""
from __future__ import annotations

from ..core.notes import NOTES
from .fallbacks import Unsupported
from .replay import Trace, replay_values
from .replay_guards import PathChanged, decisions

MAX_PATHS = 8            # decision sequences kept per input signature


class Paths:
    """The guarded traces of one input signature, by decision sequence."""

    def __init__(self):
        self.traces: dict = {}          # decisions -> Trace (kept and refused ones)
        self.refused: dict = {}         # decisions -> why that path's recording was refused
        self.last = None                # the trace that answered last (a refused one before any did)
        # the inputs a derivative is refused in on any kept path (Trace.undifferentiated)
        self.undifferentiated = frozenset()
        self.grads_interpreted = False  # on any kept path (Trace.grads_interpreted)

    def __len__(self):
        return len(self.traces)

    @property
    def guards(self):
        """Non-empty, like each of its traces' (a caller that replays only unguarded traces asks)."""
        return self.last.guards

    def room(self) -> bool:
        return len(self.traces) < MAX_PATHS

    def add(self, trace: Trace) -> None:
        self.traces[decisions(trace)] = trace
        self.last = trace
        self.undifferentiated |= trace.undifferentiated
        self.grads_interpreted = self.grads_interpreted or trace.grads_interpreted

    def refuse(self, trace: Trace, reason: str) -> None:
        """Keep `trace` as a refused path: its guards tell the calls that take it, which are
        interpreted (counted with `reason`)."""
        path = decisions(trace)
        self.traces[path] = trace
        self.refused[path] = f"a path whose recording was refused: {reason}"
        if self.last is None:
            self.last = trace

    def refuses(self, trace: Trace) -> bool:
        return bool(self.refused) and decisions(trace) in self.refused

    def find(self, prefix: tuple):
        for path, trace in self.traces.items():
            if path[:len(prefix)] == prefix:
                return trace
        return None

    def replay(self, inputs: list, release=None):
        """(the trace whose path the inputs take, its replayed values), or PathChanged if none
        kept takes it (or a comparison met a tie). `release`: replay_values'."""
        trace = self.last
        noted = len(NOTES.kinks)
        for _ in range(len(self.traces)):
            try:
                values = replay_values(trace, inputs, release)
            except PathChanged as change:
                if change.outcome is None:
                    raise
                trace = self.find(decisions(trace)[:change.index] + (change.outcome,))
                if trace is None:
                    raise
                del NOTES.kinks[noted:]       # the notes of the steps replayed on the other path
                continue
            if self.refuses(trace):
                del NOTES.kinks[noted:]
                raise Unsupported(self.refused[decisions(trace)])
            self.last = trace
            return trace, values
        raise PathChanged(0, None)            # not reached: each move takes a longer agreeing prefix


def replay_entry(entry, inputs: list, release=None):
    """(trace, values) from what a signature keeps: one trace, or the paths of a guarded one.
    `release`: the values only a value or a gradient needs (replay_values')."""
    if entry.__class__ is Paths:
        return entry.replay(inputs, release)
    return entry, replay_values(entry, inputs, release)


def new_path(entry, change: PathChanged) -> bool:
    """Whether a replay that raised `change` is to be answered by recording another path."""
    return change.outcome is not None and entry.__class__ is Paths and entry.room()


def refused(entry, trace, reason: str):
    """What a signature keeps after `trace`, recorded on a path, was refused for `reason`: a
    guarded one joins the paths as a refused path (the kept ones keep replaying); an unguarded
    one, the signature's one path, leaves None (filed as not replayable)."""
    if not trace or not trace.guards:
        return None
    trace.seal()
    paths = entry if entry.__class__ is Paths else Paths()
    paths.refuse(trace, reason)
    return paths


def filed(entry, trace):
    """What a signature keeps after `trace` was recorded and verified: a guarded one joins the
    paths kept (a fresh set of them where there were none). The trace's Program is sealed: it
    keeps its constants, not the recorded run's values (core/program.py)."""
    if trace.__class__ is Paths:        # a refused path joined them (`refused`)
        return trace
    trace.seal()
    if not trace.guards:
        return trace
    paths = entry if entry.__class__ is Paths else Paths()
    paths.add(trace)
    return paths
