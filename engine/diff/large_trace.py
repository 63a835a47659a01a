"""Traces of runs over large arrays: whether one is worth keeping, and its sweep made the lean
tape's.

A trace keeps what its recorded run's arguments were, and a replay holds every value of the run
until its sweep ends (the interpreter's lean tape frees them as the sweep passes). For a short
program over a few large arrays that costs a few arrays and saves the interpreter's per-op work;
for a long one it would hold the run's whole history. So a trace whose values and kept arguments
come to more than TRACE_MAX_BYTES is not kept: that signature stays interpreted.

A recording tape (persistent, keeping its values) differs from the lean tape of an interpreted
run in two ways that change numbers over arrays of core/fused.py's FUSE_MIN_ELEMENTS or more: it
records the table's entries, not the fused ones whose VJPs try a numexpr kernel (tape.bind), and
fused regions do not run on it (core/regions.py). `fit_for_replay` gives each large elementwise
equation of the trace's Program (the recording tape's own entries) the fused entry bind would
have recorded, and keeps no large trace of a program in which some
expression may root a fused region (lang/fused_regions.py): its replay would run that region op
by op, and numexpr's functions need not round as numpy's do. A kept large trace's Program is
first passed over for regions across its statements and calls (core/program_regions.py), each
replayed as one region's kernels (diff/program_fusion.py), whose inside it never holds."""
from __future__ import annotations

from ..core import fused
from ..core.tape import FUSED_RULES
from ..lang.fused_regions import MIN_REGION_OPS, ROOTS, NotRegion, RegionFinder
from ..lang.names import walk
from .trace_cache import Unkept, distinct_bytes

TRACE_MAX_BYTES = 1 << 25     # 32 MiB: a few dozen arrays of 10^5 float64


def held_bytes(tape) -> int:
    """The bytes of the arrays a trace of `tape` holds while it replays: every value of the run,
    and the arguments its steps keep (each array counted once), but those inside a fused region
    of its Program (diff/program_fusion.py), which its replay never makes."""
    from .program_fusion import FUSED_AWAY      # lazy: a plain run (the CLI's) never loads the fusing of traces
    return distinct_bytes(value for entry in tape.entries if entry.prim is not FUSED_AWAY
                          for value in (entry.value, *entry.args))       # a fused region's inside: never held


def holds_large_arrays(tape) -> bool:
    """Whether a recorded tape has a value of FUSE_MIN_ELEMENTS or more: the interpreter's lean
    tape would fuse there (its numbers, not this tape's, are the ones to give)."""
    threshold = fused.FUSE_MIN_ELEMENTS
    return any(getattr(entry.value, "size", 0) >= threshold for entry in tape.entries)


class EveryNameABuiltin:
    """The finder's scope and builtins, where every name called is the builtin of that name (a
    user's function or local of that name too): a region is assumed wherever one could be."""

    @staticmethod
    def find(name):
        return None

    @staticmethod
    def get(name):
        return EveryNameABuiltin.Named(name)

    class Named:
        def __init__(self, name):
            self.name = name


def may_fuse(target) -> bool:
    """Whether some expression of the target may root a fused region (lang/fused_regions.py's
    finder, with every call taken as the builtin of its name)."""
    everything = EveryNameABuiltin()
    for node in walk(target.node):
        if node.__class__ not in ROOTS:
            continue
        finder = RegionFinder(everything, everything)
        try:
            finder.walk(node)
        except NotRegion:
            continue
        if len(finder.nodes) >= MIN_REGION_OPS and finder.leaves:
            return True
    return False


class RegionCheck:
    """may_fuse(target), worked out when first asked (a large input signature) and kept."""
    __slots__ = ("target", "answer")

    def __init__(self, target):
        self.target, self.answer = target, None

    def __call__(self) -> bool:
        if self.answer is None:
            self.answer = may_fuse(self.target)
        return self.answer


def fit_for_replay(trace, tape, fuses: RegionCheck):
    """The trace to keep of a recorded `tape` (None or Unkept as given: nothing to fit), with the
    regions of its Program over large arrays fused (diff/program_fusion.py) and its other large
    elementwise steps on their fused entries; Unkept (its reason) where it holds more than
    TRACE_MAX_BYTES, or where its run had large arrays and the program may fuse a region."""
    if not trace:
        return trace
    large = holds_large_arrays(tape)
    if large and not fuses():
        from .program_fusion import fuse_trace
        fuse_trace(trace)                           # regions across statements: one kernel each
    if held_bytes(tape) > TRACE_MAX_BYTES:
        return Unkept("a trace larger than a trace may hold")
    if not large:
        return trace                                  # nothing fuses: the lean tape's steps as recorded
    if fuses():
        return Unkept("large inputs of a program that fuses a region")
    for e in trace.body():                          # the tape's own entries: trace.equations
        if e.prim.elementwise and getattr(e.value, "size", 0) >= fused.FUSE_MIN_ELEMENTS:
            e.prim = FUSED_RULES.get(e.prim.name, e.prim)
    return trace
