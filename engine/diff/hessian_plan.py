"""A replayed Hessian's sweep without its VJP rules: the binds that the planned sweep
(diff/replay_sweep.py) makes on the stacked Duals inside each VJP, recorded once per trace, and
replayed as the VJPs of core/tape.py's one reverse sweep (`sweep_equations`) over the trace's
Program: a HessianPlan is a per-equation annotation (`at[position]`: that equation's step for
the sweep, whose VJP at each traced argument performs the binds that VJP made), and the sweep
itself visits the equations, passes the adjoints and adds them (its `add` hook, `planned_add`:
the sum `accumulate` gives the bound sweep, without the ops' dispatch), dropping each adjoint
once passed on. Each recorded bind replays as the primitive's impl on the primals and
core/batch.py's `lifted_jvp` on the tangents.

The sweep of forward-over-reverse runs the VJP rules on Duals; every op those rules apply to a
Dual reaches core/batch.py's batched bind, which computes the primal and pushes the tangents.
Everything else the rules do (their branches, unbroadcast's shape tests, the ops' own dispatch)
depends on types and shapes, or on raw values made from constants: the same at every point of
the trace, so the binds, their order and their raw arguments are too. Replaying them calls the
same impls and the same JVPs on the same arguments in the same order, and the sweep adds their
results as it added them: the same numbers to the bit, at a fraction of the dispatch.

That holds where no raw value in the sweep depends on the point, so a plan is made only when:
- every input of the trace moves in the one stacked pass and every step carries a tangent (no
  raw value of the trace reaches a VJP);
- every step's primitive is `plannable` (a fact of its table entry): its VJP rules apply no
  comparison or other non-differentiable op to a Dual, and make raw values from constants only
  (core/rules/arithmetic.py, elementwise.py's unary_entry family, reductions.py's sum,
  shapes.py), with its `constant_args` constant floats (pow's exponent);
- every recorded bind is a primitive that notes no kinks, on Duals its VJP was given (the
  adjoint, the trace's values, its own earlier binds' results), giving a Dual whose tangent
  stayed structured or small (on dense stacks of many numbers the dispatch a plan saves is
  nothing beside the arrays' work).
Anything else keeps the bound sweep (a plan of False, so the test is made once)."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.accumulate import accumulate
from ..core.backend import np
from ..core.batch import NO_PARAMS, lifted_jvp, same_shape_jvp, takes_same_shape
from ..core.tangent_stack import TangentStack
from ..core.tape import BATCHED, Dual, PlannedStep, Var, sweep_equations
from ..lang.values import as_input

ndarray = np().ndarray
PLAN_DENSE_MAX_ELEMENTS = 1 << 16     # a dense tangent of more numbers than this: no plan
CONSTANT, ADJOINT = -1, -2            # a bind argument's source, else a slot (see replayed_vjp)
PREVIOUS = -3                         # a replayed VJP's source: the result of the bind before (_replaying)


@dataclass
class HessianPlan:
    """at: per equation position of the trace's Program, its step for the one sweep (a
    PlannedStep whose VJPs are `replayed_vjp`s, by argument position), or None where no adjoint
    reached it when recorded. count: the binds in all."""
    at: list
    count: int

    def binds(self, position=None) -> list:
        """The binds of equation `position`'s VJPs, or of every equation in the sweep's order
        (the equations top down), each (prim, params or None, lifted params, arguments, moving):
        what a test inspects. Each runs under its equation's span, which the sweep sets."""
        positions = range(len(self.at) - 1, -1, -1) if position is None else (position,)
        vjps = [self.at[i].run[1][pos] for i in positions if self.at[i] is not None for pos, _ in self.at[i].run[0]]
        return [bind for vjp in vjps for bind in vjp.binds]


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
    made inside each VJP of the sweep are logged with it: the sweep tells `before(i)` before a
    VJP of equation i runs and `on_step(i, pos, j, g, contribution)` after it (its hooks); the
    binds between are that VJP's. The sweep's own accumulation, after it, is not logged: the
    sweep over the plan makes it again."""

    def __init__(self, level: int):
        self.level = level
        self.vjps = []            # (i, pos, j, g, contribution, binds) in the sweep's order
        self.log = None           # the binds of the VJP running, or None between VJPs

    def before(self, i: int) -> None:
        self.log = []

    def on_step(self, i, pos, j, g, contribution) -> None:
        self.vjps.append((i, pos, j, g, contribution, self.log))
        self.log = None

    def __enter__(self):
        inner = self.inner = BATCHED[self.level]

        def recording_bind(prim, args, params):
            out = inner(prim, args, params)
            if self.log is not None:
                self.log.append((prim, args, params, out))
            return out
        BATCHED[self.level] = recording_bind
        return self

    def __exit__(self, *exc):
        BATCHED[self.level] = self.inner
        return False


def recorded_sweep(trace, sweep_plan, boxed: list, level: int) -> tuple:
    """The bound sweep over `boxed` (diff/replay_sweep.py's plan of the trace) from the output,
    its binds recorded: (the adjoints by equation position, its HessianPlan or False)."""
    with Recording(level) as recording:
        adjoints = sweep_equations(sweep_plan.at, trace.output, as_input(1.0), trace.leaves, values=boxed,
                                   before=recording.before, on_step=recording.on_step, mark=False)
    return adjoints, make_plan(trace, recording.vjps, boxed, level) or False


def planned_sweep(trace, plan: HessianPlan, boxed: list, level: int, k: int, structured: bool) -> list:
    """The adjoints by equation position from the output, by core/tape.py's one sweep over the
    plan's steps: each VJP replays its recorded binds on `boxed`, this pass's values (Duals of
    `level` with k stacked tangents), and the sweep adds the adjoints as it added them."""
    return sweep_equations(plan.at, trace.output, as_input(1.0), trace.leaves, values=(boxed, level, k, structured),
                           mark=False, add=planned_add)


def make_plan(trace, vjps: list, boxed: list, level: int):
    """The plan of a recorded sweep over `boxed`, or None where it cannot be one."""
    traced = {id(v): i for i, v in enumerate(boxed)}
    found, count = {}, 0          # equation position -> ({argument position: VJP}, [(position, parent)])
    for i, pos, j, g, contribution, log in vjps:
        replayed = replayed_vjp(log, g, contribution, traced, level)
        if replayed is None:
            return None
        by_position, parents = found.setdefault(i, ({}, []))
        by_position[pos] = replayed
        parents.append((pos, j))
        count += len(replayed.binds)
    at = [None] * len(boxed)
    for i, (by_position, parents) in found.items():
        # (core/tape.py's PlannedStep.run) the VJPs by argument position, in both forms (the sweep
        # picks by the adjoint's type); gather: `tuple` of the pass the sweep is given (itself)
        vjps_at = tuple(by_position.get(pos) for pos in range(max(by_position) + 1))
        e = trace.equations[i]
        at[i] = PlannedStep((tuple(parents), vjps_at, vjps_at, (), tuple, False, None, e.span))
    return HessianPlan(at=at, count=count)


def replayed_vjp(log: list, g, contribution, traced: dict, level: int):
    """A VJP that performs the binds `log` recorded (each a bind on its adjoint `g`, the trace's
    values, at slots `traced` by id, or the results of its earlier binds) and gives what the
    recorded one gave (`contribution`), or None where the binds cannot be planned."""
    local = {id(g): ADJOINT} if g.__class__ is Dual and g.level == level else {}
    binds = []
    for prim, args, params, out in log:
        if prim.kink is not None or out.__class__ is not Dual or out.level != level:
            return None
        if out.tangent.__class__ is not TangentStack and getattr(out.tangent, "size", 0) > PLAN_DENSE_MAX_ELEMENTS:
            return None
        arguments, moving = [], []
        jvps = prim.jvps
        for pos, a in enumerate(args):
            if a.__class__ is Dual:
                slot = _source(a, local, traced, level)
                if slot is None:
                    return None                    # a Dual the plan does not know
                arguments.append((slot, None))
                if jvps[pos] is not None:
                    moving.append((pos, slot, jvps[pos] if takes_same_shape(prim, a, out) else None))
            elif a.__class__ is Var:
                return None
            else:
                arguments.append((CONSTANT, a))    # a raw value: made from constants (above)
        if not moving:
            return None
        binds.append((prim, params or None, params or NO_PARAMS, tuple(arguments), tuple(moving)))
        local[id(out)] = -2 - len(binds)         # the result of bind b: slot -3 - b
    result = (CONSTANT, contribution)
    if contribution is g:               # the adjoint as it is (a raw one, made from constants, is
        result = (ADJOINT, None)        # the same at every pass): a pass-through without binds
    elif contribution.__class__ is Dual:
        slot = _source(contribution, local, traced, level)
        if slot is None:
            return None
        result = (slot, None)
    elif contribution.__class__ is Var:
        return None
    return _replaying(tuple(binds), result)


def _source(value, local: dict, traced: dict, level: int):
    """Where a replayed VJP finds a Dual it was given: ADJOINT, an earlier bind's result (-3 - b),
    or a trace value's slot; None where it is none of those (or of another level)."""
    if value.level != level:
        return None
    found = local.get(id(value))
    return found if found is not None else traced.get(id(value))


def _replaying(binds: tuple, result: tuple):
    """The VJP of a plan's step: called by the sweep as vjp(g, ans, boxed, level, k, structured)
    (the pass `planned_sweep` gives it), it performs `binds`, each on the primals (the
    primitive's impl) and on the tangents (its JVPs lifted to k stacked tangents, summed in
    argument order: core/batch.py's batched bind), and gives `result`. An argument or the result
    is read by its source: a slot of `boxed` (>= 0), a constant (-1), the adjoint g (-2), or the
    result of bind b (-3 - b): the previous bind's from the VJP's locals (most VJPs are chains:
    each bind reads the one before), an older one's from lists kept only where one is read."""
    slot, constant = result
    if slot >= -2 and not binds:                       # what it gives is there: nothing to perform
        def given(g, ans, boxed, level, k, structured):
            return boxed[slot] if slot >= 0 else constant if slot == CONSTANT else g
        given.binds = binds
        return given
    run, gives, keeps = _chained(binds, slot)

    def vjp(g, ans, boxed, level, k, structured):
        p = tp = None                                  # the previous bind's result
        if keeps:
            primals, tangents = [], []                 # every bind's result, by bind
        for prim, impl, params, lifted_params, arguments, moving, arity in run:
            if arity == 2:                             # most binds: their arguments read one by one
                (s, c), (s1, c1) = arguments
                a = boxed[s].primal if s >= 0 else c if s == -1 else g.primal if s == -2 else p if s == -3 \
                    else primals[-4 - s]
                b = boxed[s1].primal if s1 >= 0 else c1 if s1 == -1 else g.primal if s1 == -2 else p if s1 == -3 \
                    else primals[-4 - s1]
                args = (a, b)
                out = impl(a, b, **params) if params else impl(a, b)
            elif arity == 1:
                ((s, c),) = arguments
                a = boxed[s].primal if s >= 0 else c if s == -1 else g.primal if s == -2 else p if s == -3 \
                    else primals[-4 - s]
                args = (a,)
                out = impl(a, **params) if params else impl(a)
            else:
                args = tuple([boxed[s].primal if s >= 0 else c if s == -1 else g.primal if s == -2 else p if s == -3
                              else primals[-4 - s] for s, c in arguments])
                out = impl(*args, **params) if params else impl(*args)
            tangent = None
            for pos, s, rule in moving:
                t = boxed[s].tangent if s >= 0 else g.tangent if s == -2 else tp if s == -3 else tangents[-4 - s]
                if rule is not None:
                    t = same_shape_jvp(rule, t, out, args, lifted_params, k, structured)
                else:
                    t = lifted_jvp(prim, pos, t, out, args, lifted_params, k, structured)
                tangent = t if tangent is None else tangent + t
            p, tp = out, tangent
            if keeps:
                primals.append(out)
                tangents.append(tangent)
        if gives == PREVIOUS:
            return Dual(p, tp, level)
        if gives < -3:
            return Dual(primals[-4 - gives], tangents[-4 - gives], level)
        return boxed[gives] if gives >= 0 else constant if gives == CONSTANT else g
    vjp.binds = binds
    return vjp


def _chained(binds: tuple, slot: int) -> tuple:
    """(run, gives, keeps) of a replayed VJP performing `binds` and giving source `slot`: each
    bind with its impl looked up once and its sources as the VJP reads them (PREVIOUS, -3: the
    result of the bind before; -4 - a: bind a's, kept), the source of what it gives, and whether
    any bind's result is read after the next bind has run (then every result is kept)."""
    older = []

    def source(s: int, b: int) -> int:
        if s >= -2:
            return s
        if -3 - s == b - 1:
            return PREVIOUS
        older.append(-3 - s)
        return -4 - (-3 - s)
    run = tuple((prim, prim.impl, params, lifted, tuple((source(s, b), c) for s, c in arguments),
                 tuple((pos, source(s, b), rule) for pos, s, rule in moving), len(arguments))
                for b, (prim, params, lifted, arguments, moving) in enumerate(binds))
    gives = source(slot, len(binds))                   # the last bind's result: PREVIOUS
    return run, gives, bool(older)


def planned_add(prev, contrib):
    """The sweep's `add` over a plan (the adjoints of forward-over-reverse): `prev + contrib`.
    Two Duals of one level whose primals are floats, or arrays of one shape, add as their
    forward-mode bind of add does, written out: add's impl on the primals (`+`) and its JVPs'
    sum on the tangents, each JVP (`bcast` to the output's shape) the tangent itself, since a
    Dual's tangent has its primal's shape (behind the stack, in a batched level). Anything else
    through `accumulate`, whose `+` reaches that bind through the ops' dispatch."""
    if prev.__class__ is Dual and contrib.__class__ is Dual and prev.level == contrib.level:
        a, b = prev.primal, contrib.primal
        c = a.__class__
        if c is b.__class__ and (c is float or (c is ndarray and a.shape == b.shape)):
            return Dual(a + b, prev.tangent + contrib.tangent, prev.level)
    return accumulate(prev, contrib)
