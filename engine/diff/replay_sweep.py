"""The reverse sweep of a replay without a tape: what replay_tape's entries would hold, worked
out once per trace and set of watched inputs as an annotation of the trace's Program (a
SweepPlan: per equation position, what the sweep passes that equation's VJPs), then swept
straight over the replayed values.

replay_tape rebuilds, on every call, a tape whose structure is the same each time (the same
steps live, the same parents, the same stand-ins); only the values differ. A plan keeps that
structure, per equation of the Program, and its sweep walks the equations top to bottom calling
the same VJPs in the same order, with the same arguments, the same `ans` and the same
accumulation as core/tape.py's `sweep` over that tape: the adjoints are the tape's to the bit.
Adjoints are kept by equation position (the tape's indices are the same order). The primitive,
its recorded arguments, params and span are read from the equation itself: a plan copies none."""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from ..core.accumulate import accumulate
from ..core.notes import NOTES
from ..core.tape import Shape, saved_args


@dataclass
class SweepPlan:
    """One replay_tape structure as per-equation annotations: `at[i]`, for each equation on that
    tape (it depends on the watched inputs), is (((vjp, float vjp, parent position), ...) of its
    traced arguments on the tape, the recorded args or None, gather or None, whether its VJPs
    read its output, its params, its span), else None; args None: the equation keeps saved_args
    of its arguments with the replayed values filled in, which `gather(values)` picks in one
    call where they are all traced and kept as they are. The last three are the equation's own
    (references, not copies), kept in the annotation so that the sweep reads one tuple a step."""
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


def _make_plan(trace, watched: list) -> SweepPlan:
    equations = trace.equations
    live_index = [False] * len(equations)
    for i in watched:
        live_index[i] = True
    at, count = [None] * len(equations), 0
    for index in range(trace.leaves, len(equations)):
        e = equations[index]
        prim, parents, args = e.prim, e.parents, e.args
        live = tuple((pos, j) for pos, j in parents if live_index[j])
        if live:
            live_index[index] = True
            count += 1
            rebuilt = prim.needs_args or len(live) < len(parents) or not all(a.__class__ is Shape for a in args)
            vjps, float_vjps = prim.vjps, prim.float_vjps     # any adjoint's, a float's: the sweep
            at[index] = (tuple((vjps[pos], float_vjps[pos], j) for pos, j in live),     # picks per step
                         None if rebuilt else args,
                         _gather(prim, parents, args) if rebuilt else None, prim.needs_ans, e.params, e.span)
    return SweepPlan(at=at, live=live_index, count=count, length=len(watched) + count)


def rows(trace, plan: SweepPlan, top: int):
    """(position, pairs, args, gather, equation) of each equation on the plan's tape, from `top`
    down: the order every sweep of the plan takes (the generators of replay_arrays.py)."""
    at, equations = plan.at, trace.equations
    for i in range(top, trace.leaves - 1, -1):
        step = at[i]
        if step is not None:
            yield (i, *step[:3], equations[i])


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
    values holding it; else None (rebuilt in the sweep). Only ever unpacked into the VJP call."""
    if not prim.needs_args or len(parents) != len(args) or [pos for pos, _ in parents] != list(range(len(args))):
        return None
    if len(args) == 1:
        (_, j), = parents
        return itemgetter(slice(j, j + 1))
    return itemgetter(*(j for _, j in parents))


def taped_adjoints(trace, plan: SweepPlan, values: list, out: int, seed) -> list:
    """planned_adjoints, with the kinks its rules note marked as met on traced values, as
    core/tape.py's `sweep` marks them: the adjoints a sweep of the interpreter's tape gives."""
    noted = len(NOTES.kinks)
    adjoints = planned_adjoints(trace, plan, values, out, seed)
    if len(NOTES.kinks) != noted:
        NOTES.traced_since(noted)
    return adjoints


def planned_adjoints(trace, plan: SweepPlan, values: list, out: int, seed, on_equation=None) -> list:
    """The adjoints by equation position of a sweep from the output (position `out`, live) with
    `seed`: core/tape.py's `sweep` over replay_tape's tape, entry for entry. `on_equation(i)` is
    told each equation before its VJPs run (diff/hessian_plan.py's Recording)."""
    adj = [None] * len(values)
    adj[out] = seed
    notes = NOTES
    at, equations = plan.at, trace.equations
    for i in range(out, trace.leaves - 1, -1):
        g = adj[i]
        if g is None:
            continue
        step = at[i]
        if step is None:
            continue
        pairs, args, gather, needs_ans, params, notes.span = step
        if on_equation is not None:
            on_equation(i)
        if gather is not None:
            args = gather(values)
        elif args is None:
            e = equations[i]
            full = list(e.args)
            for pos, j in e.parents:
                full[pos] = values[j]
            args = saved_args(e.prim, tuple(full))
        ans = values[i] if needs_ans else None
        floats = g.__class__ is float               # a float adjoint takes the table's float forms
        for vjp, float_vjp, j in pairs:
            if floats:
                vjp = float_vjp
            contrib = vjp(g, ans, *args, **params) if params else vjp(g, ans, *args)
            prev = adj[j]
            if prev is None:
                adj[j] = contrib
            elif prev.__class__ is float:
                adj[j] = prev + contrib
            else:                                      # an array: in place where the sweep owns it
                prev = None
                adj[j] = accumulate(adj[j], contrib)
        adj[i] = None
    return adj
