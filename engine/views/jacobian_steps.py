"""How a Jacobian was built (`jacobian --explain`), as data the CLI renders, in the mode that
built it (the one asked for, or the one `auto` chose):

- reverse: one sweep per output entry f[i], seeded with the unit vector e_i (explain.reverse,
  the chain rule node by node): its adjoints at the inputs are row i of the Jacobian;
- forward: one pass of dual numbers per input (explain.forward): the output's tangent is that
  input's column. Each pass moves one input as a whole, so this view needs scalar inputs (an
  array input's tangent of ones would give the sum of its columns, not the columns).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...parser.errors import SourceError, option
from ..diff.common import unit
from ..diff.forward import jacobian
from ..diff.reverse import grad
from ..lang.values import as_input, shape_of
from .explain import forward, reverse
from .hessian_steps import entry_labels

MAX_SWEEPS = 20          # reverse: sweeps explained; the Jacobian itself has every row


@dataclass
class JacobianExplanation:
    mode: str                          # "reverse" or "forward"
    result: object                     # the JacobianResult
    sweeps: list = field(default_factory=list)    # reverse: (output entry label, ReverseExplanation)
    passes: list = field(default_factory=list)    # forward: ForwardPass per input
    left_out: int = 0                  # reverse: output entries past MAX_SWEEPS, not explained


def explain_jacobian(target, inputs: dict, wrt=None, mode="auto", dtype_name="float64",
                     limits=None) -> JacobianExplanation:
    """The Jacobian of the target at `inputs`, with the sweeps or passes that built it."""
    result = jacobian(None, inputs, wrt, mode, dtype_name=dtype_name, limits=limits, target=target)
    names = list(result.jacobian)
    if result.layout:
        raise SourceError("not implemented", "jacobian --explain of complex values (their real 2x2 blocks) is not "
                          "done yet", None, "leave out --explain: the blocks and their layout are printed")
    if result.mode == "forward":
        arrays = [n for n in names if shape_of(result.inputs[n])]
        if arrays:
            raise SourceError("usage", f"jacobian --explain in forward mode shows one pass per input, and "
                              f"{', '.join(arrays)} {'is an array' if len(arrays) == 1 else 'are arrays'}",
                              None, f"use {option('mode')} reverse (one sweep per output entry)")
        passes = forward(target, dict(result.inputs), names, limits, target.source)
        return JacobianExplanation(mode="forward", result=result, passes=passes)
    out_shape = shape_of(result.value)
    labels = entry_labels("f", out_shape)
    sweeps = []
    for k, label in enumerate(labels[:MAX_SWEEPS]):
        seed = unit(as_input(result.value), k) if out_shape else None
        taped = grad(None, inputs, names, seed, dtype_name=dtype_name, limits=limits, target=target,
                     keep_tape=True)
        sweeps.append((label, reverse(taped, target.source)))
    return JacobianExplanation(mode="reverse", result=result, sweeps=sweeps,
                               left_out=max(0, len(labels) - MAX_SWEEPS))


__all__ = ["explain_jacobian", "JacobianExplanation"]
