"""What a value or gradient replay holds: each value of the run only while a later step's forward
(or a guard) reads it, unless the reverse sweep after it reads it too.

A replay recomputes every value of its trace into one list (diff/replay.py's `replay_values`),
which the reverse sweep then reads. The sweep reads what the VJPs of its steps' traced arguments
read, by the table's facts, as the interpreter's lean tape keeps them (core/tape.py's
`vjp_reads`: an entry's `reads` per argument position, else every argument where it
`needs_args` and the output where it `needs_ans`); the other arguments are swept on Shape
stand-ins (diff/replay_sweep.py's `sweep_arguments`). It reads them only for the steps that
depend on the inputs it watches: a gradient in x of GradBench's ode reads y_rot (mul(x, y_rot)),
not x * y_rot (where reads its condition), nor the k's (`h / 2 * k1` reads k1 only for the
derivative in s). So the old versions of an array that a loop of item assignments rebinds
(`Ls[c, j, i] = v`: index_update, whose VJPs read neither argument) are read once, by the next
assignment, and a replay that held them all held the run's whole history of that array.

`released(trace, watched)` is, per step, the values a replay may drop once that step ran, its
sweep watching the inputs at `watched`: those whose last reader (`last_uses`, the one last-use
pass, the batched replay's too) it is, but the inputs, the output and what the sweep reads
(`swept`). `held_bytes` is the most such a replay holds at once where its sweep watches every
input; `swept_bytes` what of it the lean tape holds too; diff/large_trace.py keeps a trace by
their difference. Drivers that read every value (forward tangents, Hessians, n-th derivatives)
replay without releasing (`replay_values`'s default), and where the whole run is more than a
trace may hold (`whole_run_bytes`), they are interpreted."""
from __future__ import annotations

from ..core.tape import recorded_constants
from .replay_sweep import live_steps, reads_output, reads_value
from .trace_cache import buffer_owner, distinct_bytes

RELEASED = "released values"        # the annotation's key
LAST_USES = ("last uses",)          # the key of last_uses' answer
WHOLE_RUN = "whole run's bytes"     # the bytes of a replay that keeps every value (held_bytes notes them)
# a replay releases values only where keeping them all would hold this much: below it, the
# per-step bookkeeping costs a small program's replay time (ode at 4: 84 -> 88 us) and saves
# nothing worth it
RELEASE_FROM_BYTES = 1 << 20


def releases(trace) -> bool:
    """Whether a value or gradient replay of `trace` releases values: where a replay keeping
    every value would hold RELEASE_FROM_BYTES or more (held_bytes noted it; not noted: it does)."""
    return trace.annotations.get(WHOLE_RUN, RELEASE_FROM_BYTES) >= RELEASE_FROM_BYTES


def released(trace, watched=None) -> list:
    """Per step after the inputs (position leaves + k is item k): the positions a replay drops
    once that step ran, where the reverse sweep after it watches the inputs at `watched` (():
    none follows; None: every input, the most any sweep reads), cached on the trace by them."""
    key = (RELEASED, tuple(range(trace.leaves)) if watched is None else tuple(watched))
    drops = trace.annotations.get(key)
    if drops is None:
        drops = trace.annotations[key] = _released(trace, swept(trace, key[1]))
    return drops


def forget_released(trace) -> None:
    """Drop the last uses and release plans (`last_uses`, `released`) cached on `trace`: its
    equations were rewritten (a fused region's root reads the region's leaves;
    diff/program_fusion.py), so what each step reads is not what they were made from (a
    recording's check replays values before its regions fuse)."""
    for key in [key for key in trace.annotations
                if key == LAST_USES or (key.__class__ is tuple and key[:1] == (RELEASED,))]:
        del trace.annotations[key]


def swept(trace, watched) -> list:
    """Per equation position, whether the reverse sweep over the inputs at `watched` reads its
    value: a traced argument that a step's VJPs read (diff/replay_sweep.py's `reads_value`, by
    the table's facts, as the lean tape keeps it), a step's output that they read (`reads_output`)."""
    read = [False] * len(trace.equations)
    for i, e, live in live_steps(trace, watched, [False] * len(trace.equations)):
        read[i] = read[i] or reads_output(e, live)
        for pos, j in e.parents:
            read[j] = read[j] or reads_value(e, pos, live)
    return read


def _released(trace, read: list) -> list:
    equations, leaves = trace.equations, trace.leaves
    last, steps = last_uses(trace), len(equations) - leaves
    drops = [[] for _ in range(steps)]
    for j in range(leaves, len(equations)):
        if read[j] or j == trace.output:
            continue                            # the sweep reads it, or the caller
        step = last[j] if last[j] >= 0 else j - leaves      # read by no step: dropped once made
        if step < steps:                        # else a guard after the last step reads it
            drops[step].append(j)
    return drops


def last_uses(trace) -> list:
    """Per equation position, the equation (its index among those after the leaves) that reads
    it last (-1: none does), a guard's read counting as one by the equation it precedes (a
    replay checks a guard before that equation runs): an annotation of the Program, worked out
    once. A releasing replay drops a value after its last reader (`released`), a batched one
    too (diff/batched_replay.py)."""
    last = trace.annotations.get(LAST_USES)
    if last is None:
        last = trace.annotations[LAST_USES] = [-1] * len(trace.equations)
        for i, e in enumerate(trace.body()):
            for _, j in e.parents:
                last[j] = i
        for guard in trace.guards:
            for j, _ in guard.sources:
                if j is not None:
                    last[j] = max(last[j], guard.position - trace.leaves)
    return last


def held_bytes(trace, skipped=()) -> int:
    """The most bytes of arrays a releasing replay of `trace` (its equations still holding the
    recorded run's values) holds at once: its values as `released` drops them and every
    equation's kept arguments (a trace holds those whatever it replays), each buffer counted
    once; a primitive in `skipped` (a fused region's inside, which a replay never makes) holds
    nothing. Notes on the trace (WHOLE_RUN) what a replay keeping every value holds; where that is
    under RELEASE_FROM_BYTES the replay releases nothing, and that is what it holds (no walk of
    the releases: a recording pays for it only where it counts)."""
    equations, leaves = trace.equations, trace.leaves
    constants = [arg for e in equations if e.prim not in skipped for arg in recorded_constants(e)]
    whole = distinct_bytes(constants
                           + [e.value for i, e in enumerate(equations) if i < leaves or e.prim not in skipped])
    trace.annotations[WHOLE_RUN] = whole
    if whole < RELEASE_FROM_BYTES:
        return whole                            # a replay that releases nothing (`releases`): all of it
    live: dict = {}             # buffer owner id -> (the owner, kept alive so the id stays its; its holders)
    by_value: dict = {}         # equation position -> its value's owner id
    held = [0]

    def hold(value, by: int):
        if getattr(value, "nbytes", None) is None:
            return
        owner = buffer_owner(value)
        if id(owner) not in live:
            live[id(owner)] = (owner, set())
        holders = live[id(owner)][1]
        if not holders:
            held[0] += owner.nbytes
        holders.add(by)
        by_value[by] = id(owner)

    def drop(by: int):
        key = by_value.pop(by, None)
        if key is None:
            return
        owner, holders = live[key]
        holders.discard(by)
        if not holders:
            held[0] -= owner.nbytes

    for arg in constants:
        hold(arg, -1)                           # kept by the trace itself: never dropped
    for j in range(leaves):
        hold(equations[j].value, j)
    most = held[0]
    for k, drops in enumerate(released(trace)):
        i = leaves + k
        if equations[i].prim not in skipped:
            hold(equations[i].value, i)
        most = max(most, held[0])
        for j in drops:
            drop(j)
    return most


def swept_bytes(trace, skipped=()) -> int:
    """The bytes of the run's values (the trace's equations still holding them) that a reverse
    sweep over every input reads (`swept`), each buffer counted once: what an interpreted run's
    lean tape holds too, watching them all, until its sweep passes (core/tape.py's `vjp_reads`
    decides both); a primitive in `skipped` (a fused region's inside) holds nothing."""
    equations = trace.equations
    read = swept(trace, range(trace.leaves))
    return distinct_bytes([e.value for j, e in enumerate(equations) if read[j] and e.prim not in skipped])


def whole_run_bytes(entry) -> int:
    """The most bytes a replay keeping every value (a driver that reads them all: forward
    tangents, Hessians, n-th derivatives) holds of what a signature keeps (a trace, or the paths
    of a guarded one); 0 where held_bytes never measured it."""
    traces = entry.traces.values() if hasattr(entry, "traces") else (entry,)
    return max((trace.annotations.get(WHOLE_RUN, 0) for trace in traces if trace), default=0)
