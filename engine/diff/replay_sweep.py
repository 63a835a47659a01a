"""The reverse sweep of a replay without a tape: what replay_tape's entries would hold, worked
out once per trace and set of watched inputs as an annotation of the trace's Program (a
SweepPlan: per equation position, what the sweep passes that equation's VJPs), then swept
straight over the replayed values.

replay_tape rebuilds, on every call, a tape whose structure is the same each time (the same
steps live, the same parents, the same stand-ins); only the values differ. A plan keeps that
structure, per equation of the Program, and the sweep over it is core/tape.py's one reverse
sweep (`sweep_equations`, the interpreter's), which reads a planned step's arguments and output
from the replayed values: the same VJPs in the same order, with the same arguments, the same
`ans` and the same accumulation as over that tape, so the adjoints are the tape's to the bit.
Adjoints are kept by equation position (the tape's indices are the same order). The primitive,
its recorded arguments, params and span are read from the equation itself: a plan copies none."""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from ..core.tape import Shape, as_is, lean_args, planned_step, saved_stand_in, sweep_equations, vjp_reads


@dataclass
class SweepPlan:
    """One replay_tape structure as per-equation annotations: `at[i]`, for each equation on that
    tape (it depends on the watched inputs), is its `planned_step` (core/tape.py: its VJPs, their float forms, its
    traced arguments on the tape, the recorded args or None, gather or None, whether its VJPs
    read its output, its params, its span, the equation), else None; args None: the equation
    keeps saved_args of its arguments with the replayed values filled in, which `gather(values)`
    picks in one call where they are all traced and kept as they are. The sweep over it is the
    interpreter's own (core/tape.py's `sweep_equations`)."""
    at: list
    live: list                  # per equation position, whether it is on that tape
    count: int                  # the equations on the tape after the watched inputs
    length: int                 # the tape's entries (the watched inputs and those equations)
    array_sweep: object = None  # replay_arrays.ArraySweep once made (False: none)
    array_spent: float = 0.0    # seconds its planned sweeps took before it was made
    places: tuple | None = None  # (live, other): the (op, span) places of the steps on it and off it


def sweep_plan(trace, watched: list) -> SweepPlan:
    """The plan of replay_tape(trace, values, watched), cached on the trace by `watched`."""
    key = tuple(watched)
    plan = trace.annotations.get(key)
    if plan is None:
        plan = trace.annotations[key] = _make_plan(trace, watched)
    return plan


def live_steps(trace, watched, live_index: list):
    """(position, equation, its traced arguments that depend on the inputs at `watched`) of each
    equation on the tape a sweep over `watched` holds, in order; `live_index` (one False per
    equation) marks them, and the watched inputs, as it goes."""
    equations = trace.equations
    for i in watched:
        live_index[i] = True
    for index in range(trace.leaves, len(equations)):
        e = equations[index]
        live = tuple((pos, j) for pos, j in e.parents if live_index[j])
        if live:
            live_index[index] = True
            yield index, e, live


def _make_plan(trace, watched: list) -> SweepPlan:
    equations = trace.equations
    live_index = [False] * len(equations)
    at, count = [None] * len(equations), 0
    for index, e, live in live_steps(trace, watched, live_index):
        prim, parents, args = e.prim, e.parents, e.args
        count += 1
        rebuilt = prim.needs_args or len(live) < len(parents) or not all(a.__class__ is Shape for a in args)
        read = vjp_reads(prim, live)[0]
        if rebuilt and read is not None and not read.issuperset(range(len(args))):   # VJPs that read not every argument
            args, gather = _stand_ins(e, live)
        else:
            args, gather = (None, _gather(prim, parents, args)) if rebuilt else (args, None)
        at[index] = planned_step(prim, live, args, gather, e.params, e.span, e)
    return SweepPlan(at=at, live=live_index, count=count, length=len(watched) + count)


def reads_value(e, pos: int, traced=None) -> bool:
    """Whether a sweep's step of equation `e` reads the replayed value of its traced argument at
    `pos`, the VJPs of its traced positions `traced` (None: all of them, `e.parents`) read as the
    lean tape keeps them (core/tape.py's `vjp_reads`: the entry's `reads` per position, else
    every argument where it needs_args), or that argument is a number (kept as it is: a float).
    Else a Shape stand-in of it is what the VJPs get (the value's shape, fixed at a trace's
    shapes), and a replay may release the value (diff/replay_release.py)."""
    positions = vjp_reads(e.prim, e.parents if traced is None else traced)[0]
    return positions is None or pos in positions or as_is(e.args[pos])


def reads_output(e, traced=None) -> bool:
    """Whether a sweep's step of equation `e` reads its output, the VJPs of its traced positions
    `traced` (None: all of them) read as the lean tape keeps them (`vjp_reads`)."""
    return vjp_reads(e.prim, e.parents if traced is None else traced)[1]


def sweep_arguments(e, live, value) -> list:
    """The arguments a sweep's step of equation `e` passes the VJPs of its traced positions `live`:
    the lean tape's (core/tape.py's `lean_args`), each traced argument it reads `value(j)` of its
    parent j, the others as recorded or as Shape stand-ins of the recorded values (a replay may
    have released them)."""
    full = list(e.args)
    for pos, j in e.parents:
        full[pos] = value(j) if reads_value(e, pos, live) else saved_stand_in(full[pos])
    return full


def _stand_ins(e, live):
    """(args, gather) of a step whose VJPs read not every argument: `sweep_arguments` as
    lean_args keeps them, with `gather(values)` filling in the traced arguments they read, or
    (args, None) where they read none."""
    template = lean_args(e.prim, live, tuple(sweep_arguments(e, live, lambda j: None)))
    positions = vjp_reads(e.prim, live)[0]
    # (position, parent, whether kept as it is: read; else a number, saved as lean_args saves it)
    filled = tuple((pos, j, pos in positions) for pos, j in e.parents if reads_value(e, pos, live))
    if not filled:
        return template, None

    def gather(values):
        full = list(template)
        for pos, j, read in filled:
            full[pos] = values[j] if read else saved_stand_in(values[j])
        return full
    return None, gather


def rows(trace, plan: SweepPlan, top: int):
    """(position, pairs, args, gather, equation) of each equation on the plan's tape, from `top`
    down: the order every sweep of the plan takes (the generators of replay_arrays.py); pairs:
    ((vjp, float vjp, parent position), ...) of the traced arguments the adjoint reaches."""
    at, equations = plan.at, trace.equations
    for i in range(top, trace.leaves - 1, -1):
        step = at[i]
        if step is not None:
            live, vjps, float_vjps, args, gather = step.run[:5]
            pairs = tuple((vjps[pos], float_vjps[pos], j) for pos, j in live)
            yield (i, pairs, args, gather, equations[i])


def live_kinks(trace, watched: list, kinks: list, forward: int):
    """The kinks a replayed gradient in the inputs at `watched` reports, of `kinks`, whose first
    `forward` its forward noted: those of steps that depend on those inputs. The interpreter,
    watching only them, meets the others on plain values, which a gradient does not report
    (core/notes.py's traced_only). None where a note's place is that of steps on both sides,
    or of none: the interpreter tells them apart."""
    if len(watched) == trace.leaves:
        return list(kinks)                          # every step depends on the inputs watched
    plan = sweep_plan(trace, watched)
    if plan.places is None:
        live, other, index = set(), set(), trace.leaves
        for e in trace.body():
            (live if plan.live[index] else other).add((e.prim.name, e.span))
            index += 1
        plan.places = (live, other)
    live, other = plan.places
    kept = []
    for note in kinks[:forward]:
        place = note[:2]
        if (place in live) == (place in other):
            return None
        if place in live:
            kept.append(note)
    return kept + kinks[forward:]


def _gather(prim, parents, args):
    """values -> the arguments saved_args keeps, in one C call, where every argument is traced
    and kept as it is (needs_args): itemgetter's tuple of them, or for one argument the slice of
    values holding it; else None (core/tape.py's planned_step rebuilds them from the equation).
    Only ever unpacked into the VJP call."""
    if not prim.needs_args or len(parents) != len(args) or [pos for pos, _ in parents] != list(range(len(args))):
        return None
    if len(args) == 1:
        (_, j), = parents
        return itemgetter(slice(j, j + 1))
    return itemgetter(*(j for _, j in parents))


def taped_adjoints(trace, plan: SweepPlan, values: list, out: int, seed) -> list:
    """planned_adjoints, with the kinks its rules note marked as met on traced values, as
    core/tape.py's `sweep` marks them: the adjoints a sweep of the interpreter's tape gives."""
    return sweep_equations(plan.at, out, seed, trace.leaves, values=values)


def planned_adjoints(trace, plan: SweepPlan, values: list, out: int, seed) -> list:
    """The adjoints by equation position of a sweep from the output (position `out`, live) with
    `seed`: core/tape.py's one sweep (`sweep_equations`) over the plan's steps, which is its sweep
    over replay_tape's tape, entry for entry (diff/hessian_plan.py records it with its hooks)."""
    return sweep_equations(plan.at, out, seed, trace.leaves, values=values, mark=False)
