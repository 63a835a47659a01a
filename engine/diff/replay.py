"""Trace and replay: a run's tape, kept as the sequence of primitives it applied (each with its
static parameters, its source span and where its arguments came from), replayed on new inputs of
the same shapes without the interpreter: no name lookups, no closures, no signature to build.

A replay calls the same forward rules in the same order as the recorded run and sweeps a tape of
the same entries with the same `backward`, so its numbers are the interpreter's to the last bit.
It is only made for programs whose control flow and constants cannot depend on the inputs
(lang/replayable.py decides, from the AST), and only from tapes whose every input-dependent
argument was recorded (`record_trace` refuses the others)."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.notes import NOTES
from ..core.tape import Entry, Shape, Tape, Var, backward, saved_args


@dataclass
class Trace:
    """What a replay needs of one recorded run."""
    steps: list                 # (primitive, parents, arguments, params, span) after the leaves
    leaves: int                 # the watched inputs: tape indices 0 .. leaves-1, in input order
    output: int | None          # the output's tape index; None when it does not depend on the inputs
    constant: object            # the output itself when it does not depend on the inputs
    signature: tuple            # the recorded run's control-flow signature
    run_steps: int              # the interpreter's step count for that run


def record_trace(tape: Tape, out, signature, run_steps) -> Trace | None:
    """The trace of a finished (persistent) tape, or None if some argument the rules did not
    record could still depend on an input (a replay would then use a stale number)."""
    entries = tape.entries
    leaves = 0
    while leaves < len(entries) and entries[leaves].prim is None:
        leaves += 1
    steps = []
    for e in entries[leaves:]:
        prim = e.prim
        if prim is None:
            return None                           # a watch in mid-run: a nested derivative
        traced = {pos for pos, _ in e.parents}
        args = e.args
        for pos, arg in enumerate(args):
            if pos in traced:
                continue
            if arg.__class__ is Shape or prim.vjps[pos] is None:
                return None                       # a constant not kept, or a traced value unrecorded
        steps.append((prim, e.parents, args, e.params, e.span))
    if out.__class__ is Var:
        if out.tape is not tape:
            return None
        return Trace(steps=steps, leaves=leaves, output=out.index, constant=None,
                     signature=tuple(signature), run_steps=run_steps)
    return Trace(steps=steps, leaves=leaves, output=None, constant=out, signature=tuple(signature),
                 run_steps=run_steps)


def replay_values(trace: Trace, inputs: list) -> list:
    """Every tape value recomputed from `inputs` (the leaves), with each step's span set for the
    kink notes its forward rule makes."""
    values = list(inputs)
    append = values.append
    for prim, parents, args, params, span in trace.steps:
        args = list(args)
        for pos, j in parents:
            args[pos] = values[j]
        NOTES.span = span
        if params:
            append(prim.impl(*args, **params))
        elif all(a.__class__ is float for a in args):
            append(prim.op.float_impl(*args))     # what the ops' float fast paths call
        else:
            append(prim.impl(*args))
    return values


def replay_output(trace: Trace, values: list):
    return trace.constant if trace.output is None else values[trace.output]


def replay_tape(trace: Trace, values: list) -> Tape:
    """A tape of the recorded entries holding the replayed values, to sweep with `backward`."""
    tape = Tape()
    entries = tape.entries
    for i in range(trace.leaves):
        entries.append(Entry(None, (), (), None, None, None, values[i]))
    index = trace.leaves
    for prim, parents, args, params, span in trace.steps:
        args = list(args)
        for pos, j in parents:
            args[pos] = values[j]
        entries.append(Entry(prim, parents, saved_args(prim, tuple(args)),
                             values[index] if prim.needs_ans else None, params, span, None))
        index += 1
    return tape


def replay_adjoints(trace: Trace, values: list, seed):
    """(tape length, adjoints by tape index) of a reverse sweep from the replayed output."""
    if trace.output is None:
        return len(values), [None] * len(values)
    tape = replay_tape(trace, values)
    out = Var(values[trace.output], tape, trace.output, tape.level)
    length = len(tape)
    return length, backward(tape, out, seed)
