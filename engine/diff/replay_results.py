"""Results from a trace's compiled functions (diff/replay_compiled.py): the value and the
gradient as the commands' results, or None where the step replay is to run instead (no compiled
function, a path not the last one taken, a kink to note with its span, a non-finite number
whose provenance the interpreter traces, a complex output a gradient refuses). A scalar trace
holding complex numbers is compiled as a float one (its gradient reported as the step replay
reports it); where its compiled code was refused, that is a counted fallback (COMPLEX_FLOAT_CODE)."""
from __future__ import annotations

import math

from ..core.complexes import is_complex_scalar
from ..core.notes import NOTES
from ..core.notes import reset as reset_notes
from ..core.numbers import all_finite
from ..lang.values import dtype
from . import reverse
from .bits import same_bits
from .fallbacks import COMPLEX_FLOAT_CODE, LOWERED_CODE_ERRORS, LoweringRefused
from .replay_compiled import compiled_for
from .replay_guards import PathChanged, decisions
from .replay_paths import MAX_PATHS, Paths


def latest(entry):
    """The trace a replay tries first: the signature's one, or the path that answered last."""
    return entry.last if entry.__class__ is Paths else entry


def run_compiled(entry, leaves: list, gradient: bool, trace=None):
    """(trace, what its compiled forward, or forward and sweep, returns) or None where the step
    replay is to run: no compiled function (yet), a path none kept takes, or a kink
    noted (by a rule called as it is; the step replay notes it with its span). A path change
    moves to the kept path that takes it, as Paths.replay does. The notes are left as they were.
    LoweringRefused where the compiled code raises at these values (math.log(0.0)): the caller
    counts it and runs the step replay; any other error propagates. `trace`: latest(entry),
    where the caller has it."""
    if trace is None:
        trace = latest(entry)
    if entry.__class__ is Paths and entry.refuses(trace):   # no path kept answered yet
        return None
    noted = len(NOTES.kinks)
    for _ in range(MAX_PATHS):
        made = (trace.floats or trace.complex_scalars) and compiled_for(trace, leaves)
        if not made:
            if trace.complex_scalars and trace.compiled is False:    # made, and refused
                raise LoweringRefused(COMPLEX_FLOAT_CODE, documented=True)
            return None
        try:
            out = made.gradient(*leaves, 1.0) if gradient else made.forward(*leaves)
        except PathChanged as change:
            del NOTES.kinks[noted:]
            if entry.__class__ is not Paths or change.outcome is None:
                return None
            trace = entry.find(decisions(trace)[:change.index] + (change.outcome,))
            if trace is None or entry.refuses(trace):     # a refused path: the step replay tells it
                return None
            continue
        except LOWERED_CODE_ERRORS as error:   # values the float code cannot take: the step replay's
            del NOTES.kinks[noted:]
            raise LoweringRefused(f"compiled float code raised {type(error).__name__}", documented=True) from error
        if out is None or len(NOTES.kinks) > noted:
            del NOTES.kinks[noted:]
            return None
        if entry.__class__ is Paths:
            entry.last = trace
        return trace, out
    return None


def compiled_output(entry, leaves: list):
    """(trace, the output) from the compiled forward, or None (as run_compiled)."""
    return run_compiled(entry, leaves, False)


def compiled_value(entry, inputs):
    """The run's result from the compiled forward, or None (as compiled_output)."""
    trace = latest(entry)
    if not (trace.floats or trace.complex_scalars):     # no compiled forward: the step replay's, notes untouched
        return None
    reset_notes()
    fast = run_compiled(entry, list(inputs.values()), False, trace)
    if fast is None or fast[0].untraced_kinks:        # its notes are the interpreter's to give
        return None
    trace, value = fast
    return reverse.RunResult(value=value, inputs=inputs, signature=list(trace.signature), kinks=[],
                             steps=trace.run_steps)


def compiled_grad(entry, inputs):
    """The gradient of every input from the compiled sweep, or None (as run_compiled)."""
    trace = latest(entry)
    if dtype() != "float64" or not (trace.floats or trace.complex_scalars):     # no compiled sweep: the step replay's
        return None
    reset_notes()
    fast = run_compiled(entry, list(inputs.values()), True, trace)
    if fast is None:
        return None
    trace, (value, adjoints) = fast
    if trace.complex_scalars:               # the gradient reported from the adjoints, as the step replay's
        return _complex_gradient(trace, value, adjoints, inputs)
    if not math.isfinite(value):
        return None
    gradient, unconnected = {}, []
    for name, g in zip(inputs, adjoints):
        if g is None:
            unconnected.append(name)
            g = 0.0
        elif not math.isfinite(g):          # its provenance: the interpreter's to trace
            return None
        gradient[name] = g
    return reverse.GradResult(value=value, gradient=gradient, inputs=inputs, unconnected=unconnected,
                              reduced=None, signature=list(trace.signature), kinks=[],
                              tape_length=trace.compiled.tape_length, steps=trace.run_steps)


def _complex_gradient(trace, value, adjoints, inputs):
    """compiled_grad's result for a trace holding complex scalars: the gradient reported from the
    adjoints in diff/reverse.py's one place (a complex input's the conjugate), or None where the
    step replay is to answer (a complex output, whose error it raises; a number not finite)."""
    if is_complex_scalar(value):
        return None
    gradient, unconnected = reverse.reported_gradients(list(inputs), adjoints, inputs)
    if not all_finite([value, *gradient.values()]):
        return None
    return reverse.GradResult(value=value, gradient=gradient, inputs=inputs, unconnected=unconnected,
                              reduced=None, signature=list(trace.signature), kinks=[],
                              tape_length=trace.compiled.tape_length, steps=trace.run_steps)


def same_results(replayed, interpreted) -> bool:
    """Whether a replayed gradient is the interpreter's: numbers, notes and counts. Constant
    parts of a program run only in the interpreter: a kink they note makes a replay differ."""
    return same_bits(replayed.value, interpreted.value) and replayed.kinks == interpreted.kinks \
        and list(replayed.gradient) == list(interpreted.gradient) \
        and all(same_bits(replayed.gradient[k], interpreted.gradient[k]) for k in interpreted.gradient) \
        and (replayed.tape_length, replayed.unconnected) == (interpreted.tape_length, interpreted.unconnected)
