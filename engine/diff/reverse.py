"""Reverse mode: evaluate a target, or run it with its inputs watched on a tape and sweep the
tape backwards (the Wengert list of figure D-3). Returns results; never prints."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...parser.errors import SourceError
from ..core import ops
from ..core.notes import reset as reset_notes
from ..core.tape import Tape, Var, backward, strip
from ..lang.interp import Interpreter
from ..lang.target import bind_inputs, check_output, load, run_target
from ..lang.values import set_dtype, shape_of
from .common import ones_like_output, seed_for


@dataclass
class RunResult:
    value: object
    inputs: dict
    signature: list
    kinks: list
    steps: int
    nonfinite: list = field(default_factory=list)  # where a nan/inf first appeared (provenance)


@dataclass
class GradResult:
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


def evaluate(source, at=None, fn=None, of=None, dtype_name="float64", limits=None, target=None) -> RunResult:
    set_dtype(dtype_name)
    target = target or load(source, fn, of)
    inputs = bind_inputs(target, dict(at or {}))
    notes = reset_notes()
    interp = Interpreter(limits)
    value = run_target(target, inputs, interp)
    check_output(value, target)
    result = RunResult(value, inputs, interp.signature, list(notes.kinks), interp.steps)
    return result


def grad(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None,
         target=None, keep_tape=False) -> GradResult:
    """Reverse-mode gradient of the target at a point. A non-scalar output is summed (the seeds'
    convention) unless `seed` gives v for vᵀJ."""
    set_dtype(dtype_name)
    target = target or load(source, fn, of)
    inputs = bind_inputs(target, dict(at or {}))
    wrt = list(wrt) if wrt else list(target.inputs)
    for w in wrt:
        if w not in target.inputs:
            raise SourceError("unknown input", f"--wrt {w}: not an input (the inputs: {', '.join(target.inputs)})")
    notes = reset_notes()
    tape = Tape(persistent=keep_tape, keep_values=keep_tape)
    boxed = dict(inputs)
    for name in wrt:
        boxed[name] = tape.watch(inputs[name])
    interp = Interpreter(limits)
    out = run_target(target, boxed, interp)
    check_output(out, target)
    value = strip(out)
    out_shape = shape_of(value)
    reduced = None
    if seed is not None:
        seed_value = seed_for(seed, value)
        reduced = "seed"
    else:
        if out_shape:
            reduced = "sum"
        seed_value = ones_like_output(value)
    tape_length = len(tape)
    try:
        adj = backward(tape, out, seed_value)
    except NotImplementedError as e:
        raise SourceError("not implemented", str(e), notes.span, source=target.source, filename=target.filename)
    except SourceError as e:
        raise e.with_source(target.source, target.filename)
    gradient, unconnected = {}, []
    for name in wrt:
        var = boxed[name]
        g = adj[var.index] if var.__class__ is Var else None
        if g is None:
            unconnected.append(name)
            g = ops.zeros_like(inputs[name])
        gradient[name] = strip(g)
    result = GradResult(value, gradient, inputs, unconnected, reduced, interp.signature, list(notes.kinks),
                        tape_length, interp.steps, tape if keep_tape else None)
    if keep_tape:
        result.output_index = out.index if out.__class__ is Var and out.tape is tape else None
        result.seed = seed_value
    return result
