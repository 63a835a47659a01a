"""Traces of runs over large arrays: whether one is worth keeping, and its sweep made the lean
tape's.

A kept trace holds its recorded run's constants (not its values: core/program.py's `seal`), and
a replay holds each value of the run while a later step reads it, and until its sweep ends where
the sweep reads it (diff/replay_release.py). The values a sweep reads (by the table's facts,
core/tape.py's `vjp_reads`) are what the interpreter's lean tape holds too, until its sweep
passes them: a replay holds no more than an interpreted run there. What it holds beyond them (its
constants, the values between a step and its last reader) is what keeping a trace costs; a
trace for which that comes to more than TRACE_MAX_BYTES is not kept: that signature stays
interpreted.

A recording tape (persistent, keeping its values) differs from the lean tape of an interpreted
run in two ways that change numbers over arrays of core/fused.py's FUSE_MIN_ELEMENTS or more: it
records the table's entries, not the fused ones whose VJPs try a numexpr kernel (tape.bind), and
no value is pending on it (core/lazy.py). `fit_for_replay` gives each large elementwise
equation of the trace's Program (the recording tape's own entries) the fused entry bind would
have recorded. A kept large trace's Program is first passed over for regions across its
statements and calls (core/program_regions.py), each replayed as one region's kernels
(diff/program_fusion.py), whose inside it never holds: the bits of the plain run, whose regions
the same pass's rules made of its pending values (core/lazy.py)."""
from __future__ import annotations

from ..core import fused
from ..core.tape import FUSED_RULES
from .trace_cache import Unkept

TRACE_MAX_BYTES = 1 << 25     # 32 MiB: a few dozen arrays of 10^5 float64
OVER_BUDGET = Unkept("a trace larger than a trace may hold")
# a run whose interpreter fused more of its work (core/lazy.py's regions) than the pass over its
# Program does: a replayed gradient runs those equations op by op, and where that costs more than
# interpreting the whole run costs beyond a replay, its gradients are interpreted
# (Trace.grads_interpreted; the chain at 10^5: 20 equations op by op, 5 ms a replayed gradient
# against 3 interpreted); its values, which a plain run computes op by op as well, replay.
# Fusing saves about 1 ns an element (the chain); interpreting costs 10 to 30 us an equation more
# than replaying it (held-out gmm at 10x25x1000: 2,341 equations, 91 against 18 ms; 3 equations of
# 250,000 elements the pass does not fuse): an equation's interpreting weighs as many elements
FUSES_LESS = "large inputs of a program its replay fuses less than its interpreter"
INTERPRETING_ELEMENTS = 10_000


def held_bytes(trace) -> int:
    """The most bytes of arrays a trace holds while it replays a value or a gradient beyond what
    an interpreted run's lean tape holds (the values a sweep over every input reads: each is held
    by both): the values of the run a later step reads (diff/replay_release.py) and the
    constants its steps keep (each array counted once), but those inside a fused region of its
    Program (diff/program_fusion.py), which its replay never makes. Where all it holds is within
    TRACE_MAX_BYTES, that (the values the lean tape holds too are not walked for)."""
    from . import replay_release                # lazy: a plain run (the CLI's) never loads the replay
    from .program_fusion import FUSED_AWAY      # lazy: a plain run (the CLI's) never loads the fusing of traces
    held = replay_release.held_bytes(trace, (FUSED_AWAY,))       # a fused region's inside: never held
    if held <= TRACE_MAX_BYTES:
        return held                             # within the budget whatever the lean tape holds: no walk
    return held - replay_release.swept_bytes(trace, (FUSED_AWAY,))


def holds_large_arrays(tape) -> bool:
    """Whether a recorded tape has a value of FUSE_MIN_ELEMENTS or more: the interpreter's lean
    tape would fuse there (its numbers, not this tape's, are the ones to give)."""
    threshold = fused.FUSE_MIN_ELEMENTS
    return any(getattr(entry.value, "size", 0) >= threshold for entry in tape.entries)


def fit_for_replay(trace, tape, fused_lazily=0):
    """The trace to keep of a recorded `tape` (None or Unkept as given: nothing to fit), with the
    regions of its Program over large arrays fused (diff/program_fusion.py) and its other large
    elementwise steps on their fused entries; Unkept (its reason) where it holds more than
    TRACE_MAX_BYTES. Where its regions hold fewer elements than `fused_lazily`, those the plain
    run at its inputs ran inside its regions (core/lazy.py's FUSED), by more than its equations'
    interpreting weighs (INTERPRETING_ELEMENTS each), its gradients are interpreted (FUSES_LESS)."""
    if not trace:
        return trace
    large = holds_large_arrays(tape)
    if large:
        from .program_fusion import fuse_trace, trace_regions
        found = trace_regions(trace)                # regions across statements: one kernel each
        by_pass = sum(trace.equations[p].value.size for region in found for p in region.positions)
        trace.grads_interpreted = fused_lazily - by_pass > INTERPRETING_ELEMENTS * len(trace.equations)
        if trace.grads_interpreted:     # its values alone replay: regions whatever their sums, forward kernels
            found = trace_regions(trace, sums=False)
        fuse_trace(trace, found, watched=not trace.grads_interpreted)
    if held_bytes(trace) > TRACE_MAX_BYTES:
        return OVER_BUDGET
    if not large:
        return trace                                  # nothing fuses: the lean tape's steps as recorded
    for e in trace.body():                          # the tape's own entries: trace.equations
        if e.prim.elementwise and getattr(e.value, "size", 0) >= fused.FUSE_MIN_ELEMENTS:
            e.prim = FUSED_RULES.get(e.prim.name, e.prim)
    return trace
