"""The trace cache of a compiled target (diff/function.py): what a trace is kept under (an input
signature), how many are kept, and which runs stay plain interpreted ones."""
from __future__ import annotations

import math


def input_signature(inputs: dict, dtype_name: str, limits) -> tuple:
    """What a trace is valid for: each input's kind, shape and dtype, and the run's settings."""
    parts = [dtype_name, None if limits is None else (limits.steps, limits.depth, limits.elements)]
    for name, v in inputs.items():
        # the dtype itself, not its name: numpy's dtype.__str__ is Python code, a few µs an input
        parts.append((name, v.__class__, tuple(getattr(v, "shape", ())), getattr(v, "dtype", None)))
    return tuple(parts)


MAX_TRACES = 32          # input signatures kept per function; past that the oldest goes


def keep_trace(traces: dict, key, trace) -> None:
    if key not in traces and len(traces) >= MAX_TRACES:
        traces.pop(next(iter(traces)))
    traces[key] = trace


# Inputs of more elements than this always run interpreted: beside the arrays' own work the
# interpreter costs nothing, and a trace would keep every value of the run (the lean tape frees
# them as the sweep passes).
REPLAY_MAX_ELEMENTS = 16_384


def traced_elements(key) -> int:
    """The input elements an input signature describes (its (name, class, shape, dtype) parts)."""
    total = 0
    for part in key:
        if isinstance(part, tuple) and len(part) == 4 and isinstance(part[2], tuple):
            total += math.prod(part[2])
    return total


def plain_run(traces: dict, key) -> bool:
    """Whether a run at this input signature is to be a plain interpreted one: the first (a
    single call, as from the command line, pays nothing for a trace it would not use), any with
    large inputs, or any after a tape that could not be kept. The second records the trace,
    later ones replay it."""
    if key in traces:                   # (large inputs are never kept: counted only for new keys)
        return traces[key] is NOT_REPLAYABLE
    if traced_elements(key) > REPLAY_MAX_ELEMENTS:
        return True
    keep_trace(traces, key, None)
    return True


NOT_REPLAYABLE = False      # a recorded tape with an input-dependent value it did not record
