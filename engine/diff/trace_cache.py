"""The trace cache of a compiled target (diff/function.py): what a trace is kept under (an input
signature), how many are kept, and which runs stay plain interpreted ones."""
from __future__ import annotations

import math

from ..core import fused


def input_signature(inputs: dict, dtype_name: str, limits) -> tuple:
    """What a trace is valid for: each input's kind, shape and dtype, and the run's settings."""
    parts = [dtype_name, None if limits is None else (limits.steps, limits.depth, limits.elements)]
    for name, v in inputs.items():
        # the dtype itself, not its name: numpy's dtype.__str__ is Python code, a few µs an input
        parts.append((name, v.__class__, tuple(getattr(v, "shape", ())), getattr(v, "dtype", None)))
    return tuple(parts)


MAX_TRACES = 32          # input signatures kept per function; past that the oldest goes
# what one function's kept traces may hold on to together (each is also bounded by
# diff/large_trace.py's TRACE_MAX_BYTES): past that the oldest go, so a caller cycling through
# many large input shapes holds a few traces' arrays, not MAX_TRACES of them
MAX_KEPT_BYTES = 1 << 26   # 64 MiB


def distinct_bytes(values) -> int:
    """The bytes of the arrays among `values`, each buffer counted once: a view (a slice, a
    reshape, a transpose) is its base array's memory, which it keeps alive whole."""
    seen, total = set(), 0
    for value in values:
        if getattr(value, "nbytes", None) is None:
            continue
        owner = buffer_owner(value)
        if id(owner) not in seen:
            seen.add(id(owner))
            total += owner.nbytes
    return total


def buffer_owner(array):
    """The array that owns `array`'s memory: its base's base ... (numpy's and cupy's `base`), or
    the array itself where it owns it (or its base is no array: a bytes object, a memory map)."""
    while True:
        base = getattr(array, "base", None)
        if base is None or getattr(base, "nbytes", None) is None:
            return array
        array = base


def kept_bytes(entry) -> int:
    """The bytes of the arrays a kept entry (a trace, or the paths of one signature) holds on to:
    its Program's static arguments (every equation's `args`) and a constant output, each array
    counted once."""
    if not entry:
        return 0
    traces = entry.traces.values() if hasattr(entry, "traces") else (entry,)
    return distinct_bytes(value for trace in traces
                          for value in (trace.constant, *(arg for e in trace.body() for arg in e.args)))


def keep_trace(traces: dict, key, trace) -> None:
    if key not in traces and len(traces) >= MAX_TRACES:
        traces.pop(next(iter(traces)))
    traces[key] = trace
    if trace:
        sizes = {k: kept_bytes(v) for k, v in traces.items()}
        total = sum(sizes.values())
        while total > MAX_KEPT_BYTES:            # the oldest first (this one too, if it is the oldest)
            oldest = next(iter(traces))
            traces.pop(oldest)
            total -= sizes[oldest]


def traced_elements(key) -> int:
    """The input elements an input signature describes (its (name, class, shape, dtype) parts)."""
    total = 0
    for part in key:
        if isinstance(part, tuple) and len(part) == 4 and isinstance(part[2], tuple):
            total += math.prod(part[2])
    return total


def large_inputs(key) -> bool:
    """Whether the inputs are large enough for the interpreted run's sweep to use fused kernels
    (core/fused.py), which a recording tape does not: a gradient there is the plain run's, and
    its trace is recorded apart (diff/large_trace.py fits it to that sweep)."""
    return traced_elements(key) >= fused.FUSE_MIN_ELEMENTS


def plain_run(traces: dict, key) -> bool:
    """Whether a run at this input signature is to be a plain interpreted one: the first (a
    single call, as from the command line, pays nothing for a trace it would not use), and any
    after a tape that could not be kept (or was too large to keep, or met a fused region:
    diff/large_trace.py). The second records the trace, later ones replay it."""
    if key in traces:
        return traces[key].__class__ is Unkept
    keep_trace(traces, key, None)
    return True


class Unkept:
    """What a signature keeps where its recorded run cannot be replayed: false, as no trace,
    with the reason (a read no guard states, a tape too large...), which each later run at that
    signature counts as its fallback."""
    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __bool__(self):
        return False

    def __repr__(self):
        return f"Unkept({self.reason!r})"


# a recorded run whose replay disagreed with it (or that a reason not kept refused)
NOT_REPLAYABLE = Unkept("a recorded tape that could not be kept")
