"""How `derivative` builds f', f'', ..., f^(N) (`derivative --explain`), as data the CLI renders.

Reverse mode nests N tapes. The tape swept for f^(k) recorded f's computation and then the
sweeps for f', ..., f^(k-1): those sweeps ran while it was active, and the rules are engine ops,
so each sweep was itself taped (its nodes carry the rules' primitive names and the span of the
node being swept). Sweeping that tape from its output f^(k-1) gives f^(k). Each stage here is
that sweep, node by node, as explain.reverse shows a gradient, with the part of the tape each
computation recorded. The tapes are this run's own (persistent, keeping values); once every sweep
is done they are copied without the outer levels' boxes, so the rules the explanation runs again
record nothing.

Forward mode nests N levels of dual numbers; explain.forward shows one level, so order 1 only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...parser.errors import SourceError, option
from ..core.notes import NOTES
from ..core.tape import Var, strip
from ..diff.common import finish, host, prepare
from ..diff.higher import derivatives
from ..lang.values import as_input
from .explain import ReverseExplanation, forward, reverse
from .nested_tapes import CopiedTape, derivative_name, record_nested
from .provenance_derivatives import diagnose_derivatives

MAX_LISTED_ENTRIES = 20_000     # a stage whose tape is longer is summed up, not listed node by node


@dataclass
class RecordedPart:
    """A stretch of a stage's tape: what recorded it (0: f's computation; j: the sweep that gave
    f^(j)) and its first and last node ids (constants at their first use included)."""
    by: int
    first: int
    last: int


@dataclass
class DerivativeStage:
    """The sweep that gave f^(order): of the tape recorded by `parts`, from its output f^(order-1)."""
    order: int
    tape_entries: int
    derivative: object                  # f^(order), as this sweep gave it
    parts: list = field(default_factory=list)             # RecordedPart, in tape order
    sweep: ReverseExplanation | None = None              # None: not listed (over MAX_LISTED_ENTRIES)


@dataclass
class DerivativeExplanation:
    mode: str                           # "reverse" (nested tapes) or "forward" (dual numbers, order 1)
    result: object                      # the DerivativeResult the command prints
    stages: list = field(default_factory=list)            # reverse: DerivativeStage per order
    passes: list = field(default_factory=list)            # forward: the ForwardPass of order 1
    listed: int = 0                     # reverse: the stages listed node by node (the first ones)
    list_limit: int = 0                 # reverse: the longest tape listed node by node


@dataclass
class _SweptTape:
    """What explain.reverse reads of a taped gradient, for one stage's tape."""
    tape: object
    output_index: int | None
    seed: object
    gradient: dict
    value: object
    reduced: str | None = None


def explain_derivatives(target, inputs: dict, order: int = 1, wrt=None, mode="reverse", dtype_name="float64",
                        limits=None) -> DerivativeExplanation:
    """The derivatives of the target at `inputs` (as `derivatives` computes them), with the
    stages that built them: a reverse sweep per order, or (order 1) the dual-number pass."""
    if mode == "forward" and order > 1:
        raise SourceError("usage", f"the explanation of forward mode shows one level of dual numbers (order 1); "
                          f"order {order} nests {order} levels, which a node-by-node view cannot show", None,
                          f"use {option('mode')} reverse (the nested tapes, one sweep per order)")
    result = derivatives(None, inputs, order, mode, dtype_name=dtype_name, limits=limits, target=target, wrt=wrt)
    diagnose_derivatives(result, target, dtype_name, limits)      # NaN provenance, as `derivative` has it
    _, values = prepare(None, inputs, None, None, dtype_name, target)
    saved = (list(NOTES.kinks), list(NOTES.detached))       # the notes are the result's, from its own run
    try:
        if mode == "forward":
            passes = forward(target, values, [result.name], limits, target.source)
            return DerivativeExplanation(mode="forward", result=result, passes=passes)
        listed = listed_orders(result.tape_entries)
        stages = _stages(target, values, result.name, listed, limits) if listed else []
    finally:
        NOTES.kinks[:], NOTES.detached[:] = saved
    for k in range(listed + 1, order + 1):
        stages.append(DerivativeStage(order=k, tape_entries=result.tape_entries[k - 1],
                                      derivative=result.derivatives[k - 1]))
    return DerivativeExplanation(mode="reverse", result=result, stages=stages, listed=listed,
                                 list_limit=MAX_LISTED_ENTRIES)


def listed_orders(tape_entries) -> int:
    """How many stages, from the first, have tapes short enough to list node by node."""
    count = 0
    while count < len(tape_entries) and tape_entries[count] <= MAX_LISTED_ENTRIES:
        count += 1
    return count


def _stages(target, values, name, order, limits) -> list:
    """Nested persistent tapes, swept as `derivatives` sweeps them (the innermost first); then
    each stage's sweep explained on a copy of its tape."""
    nested = record_nested(target, values, name, order, limits)
    tapes, outputs, marks = nested.tapes, nested.outputs, nested.marks
    stages = []
    for k in range(1, order + 1):
        tape, output = tapes[order - k], outputs[k - 1]
        index = output.index if output.__class__ is Var and output.tape is tape else None
        swept = _SweptTape(tape=CopiedTape(tape), output_index=index, seed=as_input(1.0),
                           gradient={name: None}, value=strip(output))
        explanation = reverse(swept, target.source)
        adjoint = next(nd.adjoint for nd in explanation.graph.nodes if nd.kind == "input")
        explanation.gradient[name] = finish(host(adjoint, ()))
        stages.append(DerivativeStage(order=k, tape_entries=len(tape), derivative=explanation.gradient[name],
                                      parts=_parts(explanation.graph, marks[order - k][:k]),
                                      sweep=explanation))
    return stages


def _parts(graph, bounds) -> list:
    """The stretches of the graph's nodes each computation recorded: tape indices below
    bounds[0] were recorded by f's run, those below bounds[j] by the sweep for f^(j)."""
    parts: list = []
    first = 1
    for nd in graph.nodes:
        if nd.tape_index is None:
            continue                            # a constant belongs to the op that first used it
        by = next(j for j, bound in enumerate(bounds) if nd.tape_index < bound)
        if parts and parts[-1].by == by:
            parts[-1].last = nd.id
        else:
            parts.append(RecordedPart(by=by, first=first, last=nd.id))
        first = nd.id + 1
    return parts


__all__ = ["explain_derivatives", "DerivativeExplanation", "DerivativeStage", "RecordedPart", "derivative_name",
           "MAX_LISTED_ENTRIES"]
