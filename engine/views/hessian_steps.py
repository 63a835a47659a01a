"""How a Hessian was built (`hessian --explain`), as data the CLI renders.

Two stages, both real: the gradient's reverse sweep (explain.reverse, the chain rule node by
node, as `grad --explain` shows it), then the second stage the chosen mode runs over that sweep:

- forward-over-reverse: the inputs move along one direction e_(a,k) each (stacked, so one pass
  carries every direction of an input, chunked under a memory budget): the tangent of the
  gradient along e_(a,k) is row (a, k) of the Hessian, ∂(∇f)/∂a_k;
- reverse-over-reverse: the sweep is recorded on an outer tape, swept once from each gradient
  entry ∂f/∂b_l: its adjoints are row (b, l), ∂(∂f/∂b_l)/∂(inputs).

Each row lists the entries of the Hessian it gives; the rows come from the HessianResult itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.backend import np
from ..diff.higher import hessian
from ..diff.reverse import grad
from ..lang.values import shape_of
from .explain import ReverseExplanation, reverse


@dataclass
class HessianRow:
    """One direction of the second stage: `direction` is the input entry ("x", "A[0, 1]"); `row`
    maps each input b to its block of the row (b's shape)."""
    direction: str
    row: dict


@dataclass
class HessianExplanation:
    method: str
    gradient: ReverseExplanation       # the first stage: the gradient's reverse sweep
    rows: list                         # HessianRow per input entry, in input order
    passes: int                        # the passes or outer sweeps the second stage ran
    value: object = None
    hessian: dict = field(default_factory=dict)
    result: object = None              # the HessianResult (inputs, kinks, notes)
    grad_result: object = None         # the taped GradResult of the first stage


def explain_hessian(target, inputs: dict, wrt=None, method="forward-over-reverse", dtype_name="float64",
                    limits=None) -> HessianExplanation:
    """The Hessian of the target at `inputs` with the two stages that built it."""
    result = hessian(None, inputs, wrt, method, dtype_name=dtype_name, limits=limits, target=target)
    names = list(result.hessian)
    taped = grad(None, inputs, names, None, dtype_name=dtype_name, limits=limits, target=target, keep_tape=True)
    rows = []
    for a in names:
        shape = shape_of(result.inputs[a])
        for k, label in enumerate(entry_labels(a, shape)):
            row = {}
            for b in names:
                block = np().asarray(result.hessian[a][b])
                part = block.reshape((-1,) + block.shape[len(shape):])[k] if shape else block
                row[b] = part[()] if part.ndim == 0 else part          # a scalar entry as a number
            rows.append(HessianRow(direction=label, row=row))
    return HessianExplanation(method=method, gradient=reverse(taped, target.source), rows=rows,
                              passes=result.passes, value=result.value, hessian=result.hessian, result=result,
                              grad_result=taped)


def entry_labels(name: str, shape) -> list:
    """x, or A[0, 0], A[0, 1], ...: the entries of an input in order."""
    if not shape:
        return [name]
    return [f"{name}[{', '.join(map(str, index))}]" for index in np().ndindex(*shape)]


__all__ = ["explain_hessian", "HessianExplanation", "HessianRow"]
