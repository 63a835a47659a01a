"""Reverse mode: evaluate a target, or run it with its inputs watched on a tape and sweep the
tape backwards (the Wengert list of figure D-3). Returns results; never prints."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core import ops
from ..core.notes import reset as reset_notes
from ..core.notes import traced_only
from ..core.complexes import is_complex
from ..core.rules.complexes import complex_output_error, reported_gradient
from ..core.tape import Tape, Var, strip
from ...parser.errors import SourceError
from ..lang.values import as_input, dtype, shape_of
from .common import check_wrt, detached_places, on_host, ones_like_output, prepare, run, seed_for, sweep, watched_run


@dataclass
class RunResult:
    """A run of the target without derivatives: its value, the bound inputs, the control-flow
    signature, the kinks met and the steps executed."""
    value: object
    inputs: dict
    signature: list
    kinks: list
    steps: int
    nonfinite: list = field(default_factory=list)  # where a nan/inf first appeared (provenance)


@dataclass
class GradResult:
    """The gradient of the target at a point: `gradient[name]` has the shape of that input;
    `unconnected` lists inputs the output does not depend on; `reduced` says how an array output
    became a scalar ("sum", or "seed" for vᵀJ)."""
    value: object
    gradient: dict
    inputs: dict
    unconnected: list
    reduced: str | None            # how a non-scalar output was reduced ("sum" or "seed")
    signature: list
    kinks: list
    tape_length: int
    steps: int
    tape: object = None
    mode: str = "reverse"          # "forward": one forward pass per input element (engine/forward.py)
    output_index: int | None = None  # the output's tape index (kept tapes only; None: not taped)
    seed: object = None              # the seed of the reverse sweep (kept tapes only)
    nonfinite: list = field(default_factory=list)  # where a nan/inf first appeared (provenance)
    detached: list = field(default_factory=list)   # spans where stop_gradient cut a traced value
    rules: list = field(default_factory=list)      # the user rules' evaluations (checks/rules.py)


def in_working_dtype(value):
    """A float32 run's output in float32, even where only constants made it (1/3)."""
    return as_input(value) if dtype() == "float32" and value.__class__ in (float, int) else value


def evaluate(source, at=None, fn=None, of=None, dtype_name="float64", limits=None, target=None) -> RunResult:
    target, inputs = prepare(source, at, fn, of, dtype_name, target, complex_inputs=True)
    notes = reset_notes()
    large = [name for name, v in inputs.items() if fusing_input(v)]
    if large:           # watched on a values-only tape: its elementwise work fuses (core/lazy.py)
        tape = Tape()
        tape.values_only = True
        out, _, interp = watched_run(target, inputs, large, limits, tape)
        value = strip(out)
    else:
        value, interp = run(target, inputs, limits)
    return RunResult(value=on_host(in_working_dtype(value)), inputs=on_host(inputs), signature=interp.signature,
                     kinks=list(notes.kinks),
                     steps=interp.steps)


def grad(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None,
         target=None, keep_tape=False) -> GradResult:
    """Reverse-mode gradient of the target at a point. A non-scalar output is summed (the seeds'
    convention) unless `seed` gives v for vᵀJ."""
    target, inputs = prepare(source, at, fn, of, dtype_name, target, complex_inputs=True)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    tape = Tape(persistent=keep_tape, keep_values=keep_tape)
    out, boxed, interp = watched_run(target, inputs, wrt, limits, tape)
    value = in_working_dtype(strip(out))
    refuse_complex_loss(value, seed, target)
    if seed is not None:
        seed_value, reduced = seed_for(seed, value), "seed"
    else:
        seed_value, reduced = ones_like_output(value), ("sum" if shape_of(value) else None)
    tape_length = len(tape)
    adj = sweep(tape, out, seed_value, target)
    gradient, unconnected = reported_gradients(
        wrt, [adj[boxed[name].index] if boxed[name].__class__ is Var else None for name in wrt], inputs)
    result = GradResult(value=on_host(value), gradient=on_host(gradient), inputs=on_host(inputs),
                        unconnected=unconnected, reduced=reduced,
                        signature=interp.signature, kinks=traced_only(notes.kinks),
                        tape_length=tape_length, steps=interp.steps, tape=tape if keep_tape else None,
                        detached=detached_places(notes.detached), rules=list(notes.rules))
    if keep_tape:
        result.output_index = out.index if out.__class__ is Var and out.tape is tape else None
        result.seed = seed_value
    return result


def fusing_input(v) -> bool:
    """A float64 or complex128 array of FUSE_MIN_ELEMENTS or more (core/lazy.py may fuse its work)."""
    from ..core import fused
    return (getattr(v, "size", 0) >= fused.FUSE_MIN_ELEMENTS and v.__class__ is not float
            and str(getattr(v, "dtype", "")) in ("float64", "complex128"))


def refuse_complex_loss(value, seed, target) -> None:
    """A gradient without a seed needs a real output (a loss): the interpreter's error and a
    replay's (diff/function.py), where `value` is complex."""
    if seed is None and is_complex(value):
        raise SourceError("bad output", complex_output_error("the output"), None,
                          source=target.source, filename=target.filename)


def reported_gradients(wrt, adjoints, inputs, complex_values=True) -> tuple:
    """({name: the gradient reported from its sweep's adjoint (core/rules/complexes.py's
    `reported_gradient`: the conjugate for a complex input), stripped; zeros where None},
    [the names with None]): an interpreted sweep's and a replayed one's (diff/function.py).
    `complex_values` False: the run held none (a replayed trace knows), every adjoint as it is."""
    gradient, unconnected = {}, []
    for name, g in zip(wrt, adjoints):
        if g is None:
            unconnected.append(name)
            g = ops.zeros_like(inputs[name])
        gradient[name] = strip(reported_gradient(g, inputs[name]) if complex_values else g)
    return gradient, unconnected
