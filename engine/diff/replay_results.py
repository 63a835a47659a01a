"""Results from a trace's compiled functions (diff/replay_compiled.py): the value and the
gradient as the commands' results, or None where the step replay is to run instead (no compiled
function, a path not the last one taken, a kink to note with its span, a non-finite number
whose provenance the interpreter traces)."""
from __future__ import annotations

import math

from ..core.backend import np, to_host
from ..core.notes import NOTES
from ..core.notes import reset as reset_notes
from ..lang.values import dtype
from . import reverse
from .replay_compiled import compiled_for
from .replay_paths import Paths


def all_finite(values) -> bool:
    for v in values:
        if v.__class__ is float:
            if not math.isfinite(v):
                return False
        elif not np().all(np().isfinite(to_host(v))):        # a device array: checked on the host
            return False
    return True


def latest(entry):
    """The trace a replay tries first: the signature's one, or the path that answered last."""
    return entry.last if entry.__class__ is Paths else entry


def compiled_output(entry, leaves: list):
    """(trace, the output) from the trace's compiled forward, or None where the step replay is to
    run: no compiled function (yet), another path, an error, or a kink noted (by a rule called as
    it is; the step replay notes it with its span). The notes are left as they were."""
    trace = latest(entry)
    if not trace.floats:
        return None
    made = compiled_for(trace, leaves)
    if not made:
        return None
    noted = len(NOTES.kinks)
    try:
        value = made.forward(*leaves)
    except Exception:
        value = None
    if value is None or len(NOTES.kinks) > noted:
        del NOTES.kinks[noted:]
        return None
    return trace, value


def compiled_value(entry, inputs):
    """The run's result from the compiled forward, or None (as compiled_output)."""
    reset_notes()
    fast = compiled_output(entry, list(inputs.values()))
    if fast is None:
        return None
    trace, value = fast
    return reverse.RunResult(value=value, inputs=inputs, signature=list(trace.signature), kinks=[],
                             steps=trace.run_steps)


def compiled_grad(entry, inputs):
    """The gradient of every input from the compiled sweep, or None (as compiled_value)."""
    trace = latest(entry)
    if not trace.floats or dtype() != "float64":
        return None
    leaves = list(inputs.values())
    made = compiled_for(trace, leaves)
    if not made:
        return None
    notes = reset_notes()
    try:
        value, adjoints = made.gradient(*leaves, 1.0)
    except Exception:
        return None
    if notes.kinks:
        return None
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
                              tape_length=made.tape_length, steps=trace.run_steps)
