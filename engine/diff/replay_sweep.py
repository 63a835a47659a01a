"""The reverse sweep of a replay without a tape: what replay_tape's entries would hold, worked
out once per trace and set of watched inputs (a SweepPlan), then swept straight over the
replayed values.

replay_tape rebuilds, on every call, a tape whose structure is the same each time (the same
steps live, the same parents, the same stand-ins); only the values differ. A plan keeps that
structure, and its sweep calls the same VJPs in the same order, with the same arguments, the
same `ans` and the same accumulation as core/tape.py's `sweep` over that tape: the adjoints are
the tape's to the bit. Adjoints are kept by trace index (the tape's indices are the same order)."""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from ..core.accumulate import accumulate
from ..core.notes import NOTES
from ..core.tape import Shape, saved_args


@dataclass
class SweepPlan:
    """One replay_tape structure: the live steps, top to bottom, as (trace index, ((vjp, parent
    index), ...), recorded args or None, gather or None, parents to fill in, reads ans, params, span);
    args None: the entry keeps saved_args of the arguments with the replayed values filled in,
    which `gather(values)` picks in one call where they are all traced and kept as they are."""
    rows: list
    length: int                 # the tape's entries (the watched inputs and the live steps)
    live: list                  # per trace index, whether it is on that tape
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
    live_index = [False] * len(trace.equations)
    for i in watched:
        live_index[i] = True
    rows, index = [], trace.leaves
    for e in trace.body():
        prim, parents, args = e.prim, e.parents, e.args
        live = tuple((pos, j) for pos, j in parents if live_index[j])
        if live:
            live_index[index] = True
            rebuilt = prim.needs_args or len(live) < len(parents) or not all(a.__class__ is Shape for a in args)
            vjps, float_vjps = prim.vjps, prim.float_vjps     # any adjoint's, a float's: the sweep
            rows.append((index, tuple((vjps[pos], float_vjps[pos], j) for pos, j in live),    # picks per row
                         None if rebuilt else args,
                         _gather(prim, parents, args) if rebuilt else None,
                         e, prim.needs_ans, e.params, e.span))
        index += 1
    rows.reverse()
    return SweepPlan(rows=rows, length=len(watched) + len(rows), live=live_index)


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


def planned_adjoints(plan: SweepPlan, values: list, out: int, seed) -> list:
    """The adjoints by trace index of a sweep from the output (trace index `out`, live) with
    `seed`: core/tape.py's `sweep` over replay_tape's tape, entry for entry."""
    adj = [None] * len(values)
    adj[out] = seed
    notes = NOTES
    for i, pairs, args, gather, recorded, needs_ans, params, span in plan.rows:
        g = adj[i]
        if g is None:
            continue
        notes.span = span
        if gather is not None:
            args = gather(values)
        elif args is None:
            full = list(recorded.args)
            for pos, j in recorded.parents:
                full[pos] = values[j]
            args = saved_args(recorded.prim, tuple(full))
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
