"""Trace and replay: a recording run's Program (core/program.py: its tape's own entries as
equations, each a primitive with its static arguments and parameters, its source span and the
equation positions its traced arguments came from, and its guard equations), replayed on new
inputs of the same shapes without the interpreter: no name lookups, no AST closures, no
signature to build. A `Trace` is that Program with what its replays keep: a forward closure per
equation, and the annotations its sweeps work out once (diff/replay_sweep.py, diff/hessian_plan.py).

A replay calls the same forward rules in the same order as the recorded run, and its reverse
sweep calls the same VJPs on the same arguments in the same order as core/tape.py's `sweep` over
the tape the interpreter would have recorded (diff/replay_sweep.py's plan of that tape, an
annotation of the Program; tests/test_replay_sweep.py builds the tape itself and compares), so
its numbers are the interpreter's to the last bit. Whatever of the inputs a run does not read as a plain number is on its tape; whatever it reads
(a branch, a comparison, a loop's range, an index, int(), a composite's read, a primitive without
a derivative) it logs as it reads it (lang/recorded_decisions.py), and each read is kept as a
guard (diff/replay_guards.py), checked again on the new values as the replay reaches it. So a
replay that passes its guards computes what the interpreter would, by construction; a run that
reads something no guard can state, or whose tape did not keep an argument, keeps no trace and
says why (`Unkept`)."""
from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter

from ..core.backend import is_array
from ..core.complexes import is_complex, is_complex_scalar
from ..core.notes import NOTES
from ..core.numbers import all_finite
from ..core.program import FUSED_REGIONS, Program
from ..core.rules import broadcast_rows
from ..core.tape import BOXES, Shape, Tape, Var, recorded_constants
from .bits import same_bits
from .fallbacks import LOWERED_CODE_ERRORS, STEP_ERRORS, Fallback, LoweringRefused, ReplayDiffers, count
from .replay_arrays import make_sweep, worth_making
from .replay_guards import Unguarded, guarded_values, resolve_guards
from .replay_release import released, releases
from .trace_cache import Unkept
from .replay_sweep import planned_adjoints, sweep_plan, taped_adjoints


@dataclass(kw_only=True)
class Trace(Program):
    """A recorded run's Program (core/program.py) with what a replay of it keeps: the Program's
    equations are the trace's steps, its guards its guard equations."""
    forwards: list              # per equation after the leaves (position leaves + k is item k), a
    #                             closure: the values so far -> that equation's value
    signature: tuple            # the recorded run's control-flow signature
    run_steps: int              # the interpreter's step count for that run
    floats: bool = False        # every value a Python float (replay_compiled can make it one function)
    compiled: object = None     # replay_compiled.Compiled, once made (False: none)
    uses: int = 0               # replays before it was compiled
    # the recording gradient's run noted kinks of values its tape did not record (a constant's
    # abs(0)): a gradient leaves those out, a plain evaluation reports them, and a replay, which
    # runs only recorded steps, cannot; a value at this path is then interpreted
    untraced_kinks: bool = False
    nested: bool = False        # the run took a derivative inside the program (lang/transforms.py)
    # the inputs (leaves) a count read as a constant of this path depends on: a derivative in one
    # of them is refused by the interpreter, so no replay answers it (diff/replay_guards.py)
    undifferentiated: frozenset = frozenset()
    # a plain run at its inputs fused more of its equations (core/lazy.py's regions) than the pass
    # over this trace does with the sweep's sums (diff/large_trace.py): its derivatives are
    # interpreted, its values replayed (its regions found whatever their sums: no sweep's)
    grads_interpreted: bool = False
    complex_values: bool = False    # some value complex: derivatives by the drivers' complex forms (replay_complex)
    complex_scalars: bool = False   # every value a Python float or a complex number, some complex: compiled as floats are


def step_callable(prim, params, floats: bool, rows: bool = False):
    """The table's callable a step's forward calls: the float forward where the recorded
    arguments were all Python floats and it has no params (as the ops' fast paths chose), the
    entry's forward across broadcast rows where they were such a broadcast (`rows`:
    takes_rows), else `impl`. The closures below and the compiled replay
    (diff/replay_compiled.py) both call it."""
    if floats and not params:
        return prim.op.float_impl
    return broadcast_rows.forward(prim) if rows else prim.impl


def takes_rows(entries, e) -> bool:
    """Whether the step `e` of a `broadcast_rows` entry recorded two arrays that are a broadcast
    of short rows (core/rules/broadcast_rows.py's `fits`): asked once, when the trace is made."""
    if not e.prim.broadcast_rows or e.params or len(e.args) != 2:
        return False
    traced = dict(e.parents)
    x, y = (entries[traced[pos]].value if pos in traced else arg for pos, arg in enumerate(e.args))
    return broadcast_rows.fits(x, y)


def takes_floats(entries, e) -> bool:
    """Whether every recorded argument of the step `e` was a Python float (its traced ones by the
    value the tape kept for them)."""
    traced = dict(e.parents)
    for pos, arg in enumerate(e.args):
        if (_recorded_class(entries, traced[pos]) if pos in traced else arg.__class__) is not float:
            return False
    return True


def _forward(prim, parents, args, params, span, floats, rows=False):
    """One step's forward as a closure over the table's own callable (`step_callable`).
    Closures, not generated source: nothing of the user's text is ever compiled."""
    notes = NOTES
    impl = step_callable(prim, params, floats, rows)
    if params:
        if len(parents) == 1 and len(args) == 1:
            (_, j), = parents

            def step(values):
                notes.span = span
                return impl(values[j], **params)
            return step
    else:
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
    """The trace of a finished tape (persistent, with its values kept): its Program, whose
    equations are the tape's own entries (not copied; sealed when the trace is filed), with a
    forward closure per equation; or Unkept (its reason)
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
    forwards = []
    all_floats = all(e.value.__class__ is float for e in entries[:leaves])
    for e in entries[leaves:]:
        prim = e.prim
        if prim is None:
            return Unkept("a derivative inside the program watched a value in mid-run")
        traced = dict(e.parents)
        args = e.args
        for pos, arg in enumerate(args):
            if pos in traced:
                continue
            if arg.__class__ is Shape:
                return Unkept(f"a constant argument of {prim.name} the tape did not keep")
            if arg.__class__ in BOXES:
                return Unkept(f"a traced argument of {prim.name} the tape did not record")
        floats = takes_floats(entries, e)
        all_floats = all_floats and floats and not e.params and e.value.__class__ is float
        rows = not floats and takes_rows(entries, e)
        # over its constants only: a closure over the recorded arguments would keep the run's values
        forwards.append(_forward(prim, e.parents, recorded_constants(e), e.params, e.span, floats, rows))
    complex_values = not all_floats and any(is_complex(e.value) for e in entries)
    complex_scalars = complex_values and all(e.value.__class__ is float or is_complex_scalar(e.value) for e in entries)
    common = dict(equations=entries, forwards=forwards, leaves=leaves, signature=tuple(signature), run_steps=run_steps,
                  guards=guards, floats=all_floats, nested=nested, undifferentiated=constants,
                  complex_values=complex_values, complex_scalars=complex_scalars)
    if out.__class__ is Var:
        if out.tape is not tape:
            return Unkept("an output of another tape")
        return Trace(output=out.index, constant=None, **common)
    return Trace(output=None, constant=owned(out), **common)


def replay_values(trace: Trace, inputs: list, release=None) -> list:
    """Every tape value recomputed from `inputs` (the leaves), each step's span set for the kink
    notes its forward rule makes. A guarded trace checks its decisions on the way (PathChanged).
    `release`: the input positions a reverse sweep after it watches (() where none follows: a
    value's replay); a value no later step and no such sweep reads is dropped (None) once read
    (diff/replay_release.py): what a value or gradient replay needs, not the run's history.
    None: every value kept (the drivers that read them all). Where no sweep follows, the trace's
    fused regions run their forward kernels alone (program_fusion.values_alone): a gradient's
    forward would leave what its reverse reads, held by the region until the next call."""
    drops = released(trace, release) if release is not None and releases(trace) else None
    if release == () and FUSED_REGIONS in trace.annotations:
        from .program_fusion import values_alone
        with values_alone(trace):
            return _values(trace, list(inputs), drops)
    return _values(trace, list(inputs), drops)


def _values(trace: Trace, values: list, drops) -> list:
    if trace.guards:
        return guarded_values(trace, values, drops)
    append = values.append
    if drops is None:
        for forward in trace.forwards:
            append(forward(values))
        return values
    for forward, dropped in zip(trace.forwards, drops):
        append(forward(values))
        for j in dropped:
            values[j] = None
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


def replay_adjoints(trace: Trace, values: list, seed, watched: list, caller_tests_finite=False, fallbacks=None):
    """(tape length, the adjoint of each watched input or None) of a reverse sweep from the
    replayed output over the tape the interpreter would have recorded watching `watched`. A caller that tests the adjoints' finiteness
    itself and interprets where one is not (`caller_tests_finite`, function._replay_grad) takes a
    generated sweep's result untested: the same test is not run twice. `fallbacks`: a Function's
    count of them, where a generated sweep that cannot take these values is counted."""
    plan = sweep_plan(trace, watched)
    out = trace.output
    if out is None or not plan.live[out]:
        return plan.length, [None] * len(watched)     # the output does not depend on those inputs
    if trace.floats:                    # floats: the planned sweep, as tape.sweep (its kinks' marks too)
        adjoints = taped_adjoints(trace, plan, values, out, seed)
        return plan.length, [adjoints[i] for i in watched]
    made = plan.array_sweep             # the plan's generated sweep (diff/replay_arrays.py), once made
    if made is None:
        started = perf_counter()
        adjoints = planned_adjoints(trace, plan, values, out, seed)
        plan.array_spent += perf_counter() - started
        if worth_making(plan.array_spent, plan.count):
            plan.array_sweep = _checked_sweep(trace, plan, values, seed, watched, fallbacks)
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
    adjoints = planned_adjoints(trace, plan, values, out, seed)
    return plan.length, [adjoints[i] for i in watched]


def _checked_sweep(trace, plan, values, seed, watched, fallbacks=None):
    """The plan's generated sweep at these values, kept only if it gives planned_adjoints'
    adjoints and notes to the bit; False where there is none. Where it is refused, raises or
    differs, that is counted in `fallbacks` by its reason (diff/fallbacks.py): a generated sweep
    that differs, or that the engine refuses where the planned one did not, is a lowering's bug
    (raised under AUTODIFF_STRICT=1), not a silent slowdown."""
    span, kinks, detached = NOTES.span, len(NOTES.kinks), len(NOTES.detached)
    try:
        made = make_sweep(trace, plan, values, trace.output, seed, watched)
        if made is None:
            return False
        full = planned_adjoints(trace, plan, values, trace.output, seed)
        expected = [full[i] for i in watched]
        expected_notes = NOTES.kinks[kinks:], NOTES.detached[detached:]
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
        got = made.run(values, seed)
        same = (NOTES.kinks[kinks:], NOTES.detached[detached:]) == expected_notes and \
            all(a is b if a is None or b is None else same_bits(a, b) for a, b in zip(got, expected))
        refused = None if same else ReplayDiffers("the generated sweep differs from the planned sweep")
    except LoweringRefused as refusal:  # values no generated sweep takes: none made
        refused = refusal
    except Fallback as fallback:        # a guard of the generated code at values the planned sweep took
        refused = fallback
    except STEP_ERRORS as error:        # float code's errors (as replay_adjoints counts them), or a refusal
        refused = LoweringRefused(f"generated sweep raised {type(error).__name__}",
                                  documented=isinstance(error, LOWERED_CODE_ERRORS))
    finally:
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
        NOTES.span = span
    if refused is None:
        return made
    if fallbacks is not None:
        count(fallbacks, refused)
    return False
