"""Trace and replay: a run's tape, kept as the sequence of primitives it applied (each with its
static parameters, its source span and where its arguments came from), replayed on new inputs of
the same shapes without the interpreter: no name lookups, no AST closures, no signature to build.

A replay calls the same forward rules in the same order as the recorded run and sweeps a tape of
the same entries with the same `backward`, so its numbers are the interpreter's to the last bit.
Whatever of the inputs a run does not read as a plain number is on its tape; whatever it reads
(a branch, a comparison, a loop's range, an index, int(), a composite's read, a primitive without
a derivative) it logs as it reads it (lang/recorded_decisions.py), and each read is kept as a
guard (diff/replay_guards.py), checked again on the new values as the replay reaches it. So a
replay that passes its guards computes what the interpreter would, by construction; a run that
reads something no guard can state, or whose tape did not keep an argument, keeps no trace and
says why (`Unkept`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter

from ..core.backend import is_array
from ..core.notes import NOTES
from ..core.tape import BOXES, Entry, Shape, Tape, Var, backward, saved_args
from .bits import all_finite, same_bits
from .fallbacks import LOWERED_CODE_ERRORS, STEP_ERRORS, Fallback, LoweringRefused, count
from .replay_arrays import make_sweep, worth_making
from .replay_guards import Unguarded, guarded_values, resolve_guards
from .trace_cache import Unkept
from .replay_sweep import planned_adjoints, sweep_plan


@dataclass
class Trace:
    """What a replay needs of one recorded run."""
    steps: list                 # (primitive, parents, arguments, params, span) after the leaves
    forwards: list              # per step, a closure: the tape values so far -> that step's value
    leaves: int                 # the watched inputs: tape indices 0 .. leaves-1, in input order
    output: int | None          # the output's tape index; None when it does not depend on the inputs
    constant: object            # the output itself when it does not depend on the inputs
    signature: tuple            # the recorded run's control-flow signature
    run_steps: int              # the interpreter's step count for that run
    # the decisions on traced values (replay_guards.Guard), in order: empty where the control
    # flow cannot depend on the inputs
    guards: list = field(default_factory=list)
    floats: bool = False        # every value a Python float (replay_compiled can make it one function)
    compiled: object = None     # replay_compiled.Compiled, once made (False: none)
    uses: int = 0               # replays before it was compiled
    # the recording gradient's run noted kinks of values its tape did not record (a constant's
    # abs(0)): a gradient leaves those out, a plain evaluation reports them, and a replay, which
    # runs only recorded steps, cannot; a value at this path is then interpreted
    untraced_kinks: bool = False
    sweep_plans: dict = field(default_factory=dict)   # replay_sweep.SweepPlan by watched inputs
    nested: bool = False        # the run took a derivative inside the program (lang/transforms.py)
    # the inputs (leaves) a count read as a constant of this path depends on: a derivative in one
    # of them is refused by the interpreter, so no replay answers it (diff/replay_guards.py)
    undifferentiated: frozenset = frozenset()


def _forward(prim, parents, args, params, span, floats):
    """One step's forward as a closure over the table's own callable: the float forward where
    the recorded arguments were all Python floats (as the ops' fast paths chose), else `impl`.
    Closures, not generated source: nothing of the user's text is ever compiled."""
    notes = NOTES
    if params:
        impl = prim.impl
        if len(parents) == 1 and len(args) == 1:
            (_, j), = parents

            def step(values):
                notes.span = span
                return impl(values[j], **params)
            return step
    else:
        impl = prim.op.float_impl if floats else prim.impl
        if len(args) == 1 and len(parents) == 1:
            (_, j), = parents

            def step(values):
                notes.span = span
                return impl(values[j])
            return step
        if len(args) == 2 and len(parents) == 2:
            (_, j), (_, k) = parents

            def step(values):
                notes.span = span
                return impl(values[j], values[k])
            return step
        if len(args) == 2 and len(parents) == 1:
            (pos, j), = parents
            const = args[1 - pos]
            if pos == 0:
                def step(values):
                    notes.span = span
                    return impl(values[j], const)
            else:
                def step(values):
                    notes.span = span
                    return impl(const, values[j])
            return step

    def general(values):
        full = list(args)
        for pos, j in parents:
            full[pos] = values[j]
        notes.span = span
        return impl(*full, **params) if params else impl(*full)
    return general


def _recorded_class(entries, j):
    return entries[j].value.__class__


def record_trace(tape: Tape, out, signature, run_steps, logged=()) -> Trace | Unkept:
    """The trace of a finished tape (persistent, with its values kept), or Unkept (its reason)
    where a guard cannot state what the run read of a traced value, or a step's argument was
    not kept. `logged`: the run's reads of traced values (lang/recorded_decisions.py), each a
    guard: whatever of the inputs the run did not read as a number, the tape recorded."""
    try:
        guards, nested, constants = resolve_guards(tape, logged)
    except Unguarded as unguarded:
        return Unkept(unguarded.reason)
    entries = tape.entries
    leaves = 0
    while leaves < len(entries) and entries[leaves].prim is None:
        leaves += 1
    steps, forwards = [], []
    all_floats = all(e.value.__class__ is float for e in entries[:leaves])
    for e in entries[leaves:]:
        prim = e.prim
        if prim is None:
            return Unkept("a derivative inside the program watched a value in mid-run")
        traced = dict(e.parents)
        args = e.args
        floats = True
        for pos, arg in enumerate(args):
            if pos in traced:
                floats = floats and _recorded_class(entries, traced[pos]) is float
                continue
            if arg.__class__ is Shape:
                return Unkept(f"a constant argument of {prim.name} the tape did not keep")
            if arg.__class__ in BOXES:
                return Unkept(f"a traced argument of {prim.name} the tape did not record")
            floats = floats and arg.__class__ is float
        all_floats = all_floats and floats and not e.params and e.value.__class__ is float
        steps.append((prim, e.parents, args, e.params, e.span))
        forwards.append(_forward(prim, e.parents, args, e.params, e.span, floats))
    common = dict(steps=steps, forwards=forwards, leaves=leaves, signature=tuple(signature), run_steps=run_steps,
                  guards=guards, floats=all_floats, nested=nested, undifferentiated=constants)
    if out.__class__ is Var:
        if out.tape is not tape:
            return Unkept("an output of another tape")
        return Trace(output=out.index, constant=None, **common)
    return Trace(output=None, constant=owned(out), **common)


def replay_values(trace: Trace, inputs: list) -> list:
    """Every tape value recomputed from `inputs` (the leaves), each step's span set for the kink
    notes its forward rule makes. A guarded trace checks its decisions on the way (PathChanged)."""
    values = list(inputs)
    if trace.guards:
        return guarded_values(trace, values)
    append = values.append
    for forward in trace.forwards:
        append(forward(values))
    return values


def replay_output(trace: Trace, values: list):
    """The replayed output: the step's value, or, where it does not depend on the inputs, the
    recorded constant, an array copied: each call's result is its caller's alone, as a fresh
    interpretation's is (a caller that writes into one result changes no later one)."""
    return values[trace.output] if trace.output is not None else owned(trace.constant)


def owned(value):
    """`value`, an array copied: a trace's constant output is neither the recording call's result
    nor any replay's."""
    return value.copy() if is_array(value) else value


def replay_tape(trace: Trace, values: list, watched: list):
    """The tape the interpreter would have recorded watching the inputs at tape indices `watched`
    (in that order), holding the replayed values: only the steps that depend on those inputs,
    each with the parents among them. Returns (tape, where): where[i] is the new index of the
    trace's entry i (-1: not on the tape). A rule that reads only its arguments' shapes keeps
    the recorded stand-ins (the same shapes)."""
    tape = Tape()
    entries = tape.entries
    where = [-1] * len(values)
    for i in watched:
        where[i] = len(entries)
        entries.append(Entry(None, (), (), None, None, None, values[i]))
    index = trace.leaves
    for prim, parents, args, params, span in trace.steps:
        live = tuple((pos, where[j]) for pos, j in parents if where[j] >= 0)
        if live:
            if prim.needs_args or len(live) < len(parents) or not all(a.__class__ is Shape for a in args):
                full = list(args)
                for pos, j in parents:
                    full[pos] = values[j]
                args = saved_args(prim, tuple(full))
            where[index] = len(entries)
            entries.append(Entry(prim, live, args, values[index] if prim.needs_ans else None, params, span, None))
        index += 1
    return tape, where


def float_tape(trace: Trace, values: list) -> Tape:
    """replay_tape's tape where every input is watched, in order, and every value is a float:
    each step is on it at its own index, and keeps its arguments' values (what saved_args keeps
    of floats)."""
    tape = Tape()
    entries = tape.entries
    for i in range(trace.leaves):
        entries.append(Entry(None, (), (), None, None, None, values[i]))
    index = trace.leaves
    for prim, parents, args, params, span in trace.steps:
        if len(parents) == 2 and len(args) == 2:
            full = (values[parents[0][1]], values[parents[1][1]])
        elif len(parents) == 1 and len(args) == 1:
            full = (values[parents[0][1]],)
        else:
            full = list(args)
            for pos, j in parents:
                full[pos] = values[j]
            full = tuple(full)
        entries.append(Entry(prim, parents, full, values[index] if prim.needs_ans else None, params, span, None))
        index += 1
    return tape


def replay_adjoints(trace: Trace, values: list, seed, watched: list, caller_tests_finite=False, fallbacks=None):
    """(tape length, the adjoint of each watched input or None) of a reverse sweep from the
    replayed output over the tape of `replay_tape`. A caller that tests the adjoints' finiteness
    itself and interprets where one is not (`caller_tests_finite`, function._replay_grad) takes a
    generated sweep's result untested: the same test is not run twice. `fallbacks`: a Function's
    count of them, where a generated sweep that cannot take these values is counted."""
    if trace.floats and trace.output is not None and watched == list(range(trace.leaves)):
        tape = float_tape(trace, values)
        out = trace.output
        adjoints = backward(tape, Var(values[out], tape, out, tape.level), seed)
        return len(tape), adjoints[:trace.leaves]
    plan = sweep_plan(trace, watched)
    out = trace.output
    if out is None or not plan.live[out]:
        return plan.length, [None] * len(watched)     # the output does not depend on those inputs
    made = plan.array_sweep             # the plan's generated sweep (diff/replay_arrays.py), once made
    if made is None and not trace.floats:
        started = perf_counter()
        adjoints = planned_adjoints(plan, values, out, seed)
        plan.array_spent += perf_counter() - started
        if worth_making(plan.array_spent, len(plan.rows)):
            plan.array_sweep = _checked_sweep(trace, plan, values, seed, watched)
        return plan.length, [adjoints[i] for i in watched]
    if made and made.leaves.take([seed, *values[:trace.leaves]]):
        kinks, detached = len(NOTES.kinks), len(NOTES.detached)
        try:
            adjoints = made.run(values, seed)
            # it skips the rules' per-product finiteness tests: a result not finite is the
            # checked sweep's to make (core/rules/comparisons.py's ASSUMED_FINITE says why)
            if caller_tests_finite or all_finite([a for a in adjoints if a is not None]):
                return plan.length, adjoints
        except LOWERED_CODE_ERRORS as error:    # values the generated code cannot take: the planned sweep's
            if fallbacks is not None:
                count(fallbacks, LoweringRefused(f"generated sweep raised {type(error).__name__}", documented=True))
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
    adjoints = planned_adjoints(plan, values, out, seed)
    return plan.length, [adjoints[i] for i in watched]


def _checked_sweep(trace, plan, values, seed, watched):
    """The plan's generated sweep at these values, kept only if it gives planned_adjoints'
    adjoints and notes to the bit; False where there is none."""
    span, kinks, detached = NOTES.span, len(NOTES.kinks), len(NOTES.detached)
    try:
        made = make_sweep(plan, values, trace.output, seed, watched, trace.leaves)
        if made is None:
            return False
        full = planned_adjoints(plan, values, trace.output, seed)
        expected = [full[i] for i in watched]
        expected_notes = NOTES.kinks[kinks:], NOTES.detached[detached:]
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
        got = made.run(values, seed)
        same = (NOTES.kinks[kinks:], NOTES.detached[detached:]) == expected_notes and \
            all(a is b if a is None or b is None else same_bits(a, b) for a, b in zip(got, expected))
    except (Fallback, *STEP_ERRORS):    # a sweep these values do not check: none made
        return False
    finally:
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
        NOTES.span = span
    return made if same else False
