"""Replayed derivatives of runs holding complex values (issue 32): Function's Hessians, Jacobians
and forward-mode gradients where an input asked for is complex or the output is, by the
interpreted drivers' own complex forms (diff/complex_derivatives.py builds the real 2x2 blocks,
the Hessian over (re, im) pairs and the forward gradient in grad's convention, once) with their
passes made over the trace instead of the interpreter: a forward pass is the trace's steps
replayed through `bind` on the one moving input boxed as a Dual (replay_higher.boxed_values), a
Hessian's gradient pass that, then the planned sweep (diff/replay_sweep.py, the tape's sweep
entry for entry). One pass per element and real direction, unbatched, as the interpreter makes
them: the same rules on the same values in the same order, so the numbers are the interpreter's
to the bit (tests/test_replay_complex.py).

Where the interpreter does not take its complex form (real inputs asked for and a real output,
complex values inside only) the replay is the real one (diff/replay_higher.py), as the
interpreted driver's is its real form; n-th derivatives take theirs in diff/replay_derivatives.py.
Where a pass makes anything the interpreted driver reports (a kink note, a stop_gradient, a
non-finite number), `replayed_complex` gives None, as a real trace's replay does: the caller
refuses the replay with the same counted reason and interprets."""
from __future__ import annotations

from ..core.complexes import is_complex
from ..core.notes import reset as reset_notes
from ..core.numbers import all_finite
from ..core.tape import Dual, new_level, strip
from ..lang.values import as_input, shape_of, size_of
from . import complex_derivatives
from .fallbacks import NonFinite
from .common import seed_for, tangent_of
from .replay import replay_output
from .replay_higher import boxed_values, forward_result, quiet, replayed_derivative
from .replay_sweep import planned_adjoints, sweep_plan


class Declined(Exception):
    """A replayed pass made what the interpreted driver reports: the interpreter is to answer."""


class TraceRun:
    """The interpreter's `run` result stand-in a driver reads from its first pass (`first`)."""

    def __init__(self, trace):
        self.signature = list(trace.signature)
        self.steps = trace.run_steps


class ReplayedPasses:
    """The complex drivers' pass callables (`jvp`, `gradient_pass`) over one replayed trace: the
    inputs a driver passes boxed are the trace's leaves boxed, the rest its recorded values."""

    def __init__(self, trace, values: list, names: list):
        self.trace, self.values, self.names = trace, values, names
        self.run = TraceRun(trace)
        self.notes = reset_notes()

    def _boxed(self, inputs: dict) -> list:
        leaves = list(self.values[:self.trace.leaves])
        for name, v in inputs.items():
            if v.__class__ is Dual:
                leaves[self.names.index(name)] = v
        boxed = boxed_values(self.trace, leaves)
        if not quiet(self.notes):
            raise Declined("a note")
        return boxed

    def jvp(self, target, inputs: dict, tangents: dict, limits=None):
        """forward.jvp over the trace: (value, tangent or None, run)."""
        level = new_level()
        out = self._boxed({k: Dual(inputs[k], t, level) for k, t in tangents.items()})[self.trace.output]
        value = strip(out)
        if not all_finite([value]):
            raise Declined("a non-finite value")
        return value, tangent_of(out, level, shape_of(value)), self.run

    def gradient_pass(self, target, values: dict, wrt: list, limits=None):
        """higher._gradient_pass over the trace: (output, {name: adjoint or None}, run)."""
        boxed = self._boxed(values)
        out = boxed[self.trace.output]
        if shape_of(strip(out)):
            raise Declined("a non-scalar output (the interpreter's error)")
        watched = [self.names.index(w) for w in wrt]
        adjoints = planned_adjoints(self.trace, sweep_plan(self.trace, watched), boxed, self.trace.output,
                                    as_input(1.0))
        return out, {w: adjoints[i] for w, i in zip(wrt, watched)}, self.run


def takes_complex_form(kind: str, value, inputs: dict, wrt: list) -> bool:
    """Whether the interpreted driver of `kind` takes its complex form here (an input asked for
    is complex; for a Jacobian, or the output is)."""
    return complex_derivatives.any_complex(inputs, wrt) or (kind == "jacobian" and is_complex(value))


def replayed_complex(what: str, trace, values: list, inputs: dict, wrt: list, watched: list, target, seed=None):
    """Function's replayed `what` ("hessian", "gradient": forward mode with `seed`, or a
    Jacobian's mode) of a trace holding complex values, as the interpreted driver gives it: its
    complex form over the trace, or, where the driver takes its real form, the real replay
    (replay_higher.replayed_derivative's interface); None where the interpreted driver is to
    answer (no input element, a note), NonFinite where a number is not finite."""
    value = strip(replay_output(trace, values))
    kind = what if what in ("hessian", "gradient") else "jacobian"
    if trace.output is not None and not takes_complex_form(kind, value, inputs, wrt):
        return replayed_derivative(what, trace, values, inputs, wrt, watched, target, seed)
    if trace.output is None or not sum(size_of(inputs[w]) for w in wrt):
        return None
    if not all_finite([value]):
        raise NonFinite()
    passes = ReplayedPasses(trace, values, list(inputs))
    try:
        if kind == "hessian":
            _, blocks, _, _ = complex_derivatives.hessian_rows(passes.gradient_pass, target, inputs, wrt, None)
            if not all_finite([b for row in blocks.values() for b in row.values()]):
                raise NonFinite()       # counted as the real Hessian's (checked under AUTODIFF_STRICT=1)
            return blocks
        if kind == "jacobian":
            got = complex_derivatives.jacobian(passes.jvp, target, inputs, wrt, None)
            if not all_finite(list(got["jacobian"].values())):
                raise NonFinite()
            return got["jacobian"]
        return _forward_gradient(passes, trace, inputs, wrt, target, seed)
    except Declined:
        return None


def _forward_gradient(passes, trace, inputs: dict, wrt: list, target, seed):
    weights = None if seed is None else (lambda value: seed_for(seed, value))
    first, grads, touched = complex_derivatives.forward_gradient(passes.jvp, target, inputs, wrt, None, weights)
    return forward_result(trace, first[0], grads, inputs, wrt, touched, seed)
