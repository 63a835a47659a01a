"""A replayed Hessian's sweep without its VJP code: the binds that the planned sweep
(diff/replay_sweep.py) makes on the stacked Duals, recorded once per trace as an annotation of
its Program (core/program.py): per equation position, the binds its VJPs (and the accumulation
of their contributions) made, replayed equation by equation down the Program, each bind the
primitive's impl on the primals and core/batch.py's `lifted_jvp` on the tangents.

The sweep of forward-over-reverse runs the VJP rules on Duals; every op those rules apply to a
Dual reaches core/batch.py's batched bind, which computes the primal and pushes the tangents.
Everything else the rules do (their branches, unbroadcast's shape tests, accumulation's choice,
the ops' own dispatch) depends on types and shapes, or on raw values made from constants: the
same at every point of the trace, so the binds, their order and their raw arguments are too.
Replaying them calls the same impls and the same JVPs on the same arguments in the same order:
the same numbers to the bit, at a fraction of the dispatch.

That holds where no raw value in the sweep depends on the point, so a plan is made only when:
- every input of the trace moves in the one stacked pass and every step carries a tangent (no
  raw value of the trace reaches a VJP);
- every step's primitive is `plannable` (a fact of its table entry): its VJP rules apply no
  comparison or other non-differentiable op to a Dual, and make raw values from constants only
  (core/rules/arithmetic.py, elementwise.py's unary_entry family, reductions.py's sum,
  shapes.py), with its `constant_args` constant floats (pow's exponent);
- every recorded bind is a primitive that notes no kinks, on Duals the plan knows, giving a Dual
  whose tangent stayed structured or small (on dense stacks of many numbers the dispatch a plan
  saves is nothing beside the arrays' work).
Anything else keeps the bound sweep (a plan of False, so the test is made once). The replay drops
each value after the last bind that reads it, as the bound sweep's adjoints go."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.batch import NO_PARAMS, lifted_jvp, same_shape_jvp, takes_same_shape
from ..core.notes import NOTES
from ..core.tangent_stack import TangentStack
from ..core.tape import BATCHED, Dual, Var

PLAN_DENSE_MAX_ELEMENTS = 1 << 16     # a dense tangent of more numbers than this: no plan


@dataclass
class HessianPlan:
    """at: per equation position of the trace's Program, the binds its VJPs made in the sweep
    (None: none), each (prim, params or None, lifted params, arguments, moving, span, frees):
    arguments (slot or -1, constant) per position, moving (position, slot, rule) per argument
    whose tangents are pushed, rule its JVP where the bind is elementwise and that argument has
    the output's shape (core/batch.py's same_shape_jvp: its shapes known here), else None;
    frees: the slots no later bind nor result reads. Slots: the trace's values (by equation
    position), then each bind's result in the sweep's order. results: per watched input, its
    adjoint's slot, or -1 with a constant (a raw adjoint, or None)."""
    at: list
    results: list
    count: int                  # the binds in all

    def binds(self) -> list:
        """Every bind in the sweep's order (the equations top down): what a test inspects."""
        return [bind for binds in reversed(self.at) if binds for bind in binds]


def plannable(trace, watched: list, boxed: list, level: int) -> bool:
    """Whether the sweep over `boxed` (every value of the trace) can be planned."""
    if sorted(watched) != list(range(trace.leaves)):
        return False
    for value in boxed:
        if value.__class__ is not Dual or value.level != level:
            return False
    for e in trace.body():
        prim, parents, args = e.prim, e.parents, e.args
        if not prim.plannable:
            return False
        for constant in prim.constant_args:
            if any(pos == constant for pos, _ in parents) or args[constant].__class__ is not float:
                return False
    return True


class Recording:
    """While active (a `with`, inside core/batch.py's `batched` for `level`), the batched binds
    are logged as they are made, each with the equation whose VJPs the planned sweep is running
    (told by `equation`, its on_equation hook)."""

    def __init__(self, level: int):
        self.level = level
        self.log = []
        self.current = None

    def equation(self, position: int) -> None:
        self.current = position

    def __enter__(self):
        inner = self.inner = BATCHED[self.level]
        log = self.log

        def recording_bind(prim, args, params):
            out = inner(prim, args, params)
            log.append((self.current, prim, args, params, NOTES.span, out))
            return out
        BATCHED[self.level] = recording_bind
        return self

    def __exit__(self, *exc):
        BATCHED[self.level] = self.inner
        return False


def make_plan(log: list, boxed: list, adjoints: list, level: int):
    """The plan of a recorded sweep over `boxed`, or None where it cannot be one."""
    slots = {id(v): i for i, v in enumerate(boxed)}
    binds, positions = [], []
    count = len(boxed)
    for position, prim, args, params, span, out in log:
        if position is None or (positions and position > positions[-1]):
            return None                            # outside every equation's VJPs, or not down the Program
        if prim.kink is not None or out.__class__ is not Dual or out.level != level:
            return None
        if out.tangent.__class__ is not TangentStack and getattr(out.tangent, "size", 0) > PLAN_DENSE_MAX_ELEMENTS:
            return None
        arguments, moving = [], []
        jvps = prim.jvps
        for pos, a in enumerate(args):
            if a.__class__ is Dual:
                slot = slots.get(id(a)) if a.level == level else None
                if slot is None:
                    return None                    # a Dual the plan does not know
                arguments.append((slot, None))
                if jvps[pos] is not None:
                    moving.append((pos, slot, jvps[pos] if takes_same_shape(prim, a, out) else None))
            elif a.__class__ is Var:
                return None
            else:
                arguments.append((-1, a))          # a raw value: made from constants (above)
        if not moving:
            return None
        binds.append((prim, params or None, params or NO_PARAMS, tuple(arguments), tuple(moving), span))
        positions.append(position)
        slots[id(out)] = count
        count += 1
    results = []
    for adjoint in adjoints:
        if adjoint.__class__ is Dual:
            slot = slots.get(id(adjoint)) if adjoint.level == level else None
            if slot is None:
                return None
            results.append((slot, None))
        else:
            results.append((-1, adjoint))
    at = [None] * len(boxed)
    for position, bind, frees in zip(positions, binds, last_reads(binds, results, len(boxed))):
        at[position] = (*(at[position] or ()), (*bind, frees))
    return HessianPlan(at=at, results=results, count=len(binds))


def last_reads(binds, results, traced) -> list:
    """Per bind, the bind results (slots from `traced` on: not the trace's own values) that no
    later bind reads, nor the results: its arguments read for the last time, and its own result
    where nothing reads it."""
    kept = {slot for slot, _ in results if slot >= 0}
    last = {traced + b: b for b in range(len(binds))}
    for b, (_, _, _, arguments, _, _) in enumerate(binds):
        for slot, _ in arguments:
            if slot >= traced:
                last[slot] = b
    frees = [[] for _ in binds]
    for slot, b in last.items():
        if slot not in kept:
            frees[b].append(slot)
    return [tuple(f) for f in frees]


def planned_gradient(plan: HessianPlan, boxed: list, level: int, k: int, structured: bool) -> list:
    """The adjoints of the watched inputs (Duals of `level`, or the plan's constants) by
    replaying the plan over `boxed`, the trace's values of this pass: the binds of each
    equation, down the Program."""
    primals = [v.primal for v in boxed]
    tangents = [v.tangent for v in boxed]
    add_primal, add_tangent = primals.append, tangents.append
    notes = NOTES
    at = plan.at
    for i in range(len(at) - 1, -1, -1):
        binds = at[i]
        if binds is None:
            continue
        for prim, params, lifted_params, arguments, moving, span, frees in binds:
            notes.span = span
            args = tuple([primals[slot] if slot >= 0 else constant for slot, constant in arguments])
            ans = prim.impl(*args, **params) if params else prim.impl(*args)
            tangent = None
            for pos, slot, rule in moving:
                if rule is not None:
                    t = same_shape_jvp(rule, tangents[slot], ans, args, lifted_params, k, structured)
                else:
                    t = lifted_jvp(prim, pos, tangents[slot], ans, args, lifted_params, k, structured)
                tangent = t if tangent is None else tangent + t
            add_primal(ans)
            add_tangent(tangent)
            for slot in frees:
                primals[slot] = tangents[slot] = None
    return [Dual(primals[slot], tangents[slot], level) if slot >= 0 else constant
            for slot, constant in plan.results]
