"""n-th derivatives of a scalar function from a recorded trace: the trace's steps replayed through
the engine's `bind` (replay_higher.boxed_values) on the varied input boxed as diff/higher.py's
`derivatives` boxes it, the other inputs held at their values.

- reverse (nested tapes): the input watched on N tapes, the steps recorded on all of them, each
  tape swept in turn from the innermost, every sweep recorded on the tapes outside it;
- forward (nested duals): x + ε1 + ... + εN, the coefficient of ε1···εk is f^(k).

The same rules run on the same values in the same order, on the path the plain replay's guards
picked, so the derivatives and the tapes' sizes are the interpreter's. Anything the interpreted
driver reports or handles on its own — a kink note, a stop_gradient, a non-finite number (each
order is then recomputed alone, `higher.orders_as_alone`), tapes near MAX_TAPE_ENTRIES, a
non-scalar input or output, an error — gives None: the caller runs the interpreted driver."""
from __future__ import annotations

import time

from ..core.notes import reset as reset_notes
from ..core.tape import Dual, Tape, new_level, strip
from ..lang.values import as_input, shape_of
from .common import finish, host, on_host, sweep
from .higher import MAX_FORWARD_ORDER, MAX_TAPE_ENTRIES, DerivativeResult, dual_coefficient
from .replay import replay_output
from .replay_higher import boxed_values, quiet
from .bits import all_finite


def replayed_derivatives(what, trace, values: list, inputs: dict, wrt: list, watched: list, target, seed):
    """replay_higher.replayed_derivative's interface (Function._replay_matrix): `seed` is
    (order, method), `wrt` the one varied input."""
    return replay_derivatives(trace, values, inputs, wrt[0], watched[0], *seed, target)


def replay_derivatives(trace, values: list, inputs: dict, name: str, index: int, order: int, method: str,
                       target) -> DerivativeResult | None:
    """f', ..., f^(order) in input `name` (the trace's leaf `index`) from the replayed steps, or
    None where the interpreted driver is to answer. `values`: the plain replay's."""
    value = strip(replay_output(trace, values))
    if method not in ("reverse", "forward") or order < 1 or (method == "forward" and order > MAX_FORWARD_ORDER):
        return None                         # the driver's usage errors
    if trace.output is None or shape_of(value) or shape_of(inputs[name]) or not all_finite([value]):
        return None
    notes = reset_notes()
    start = time.perf_counter()
    raw = values[:trace.leaves]
    if method == "reverse":
        found = _nested_tapes(trace, raw, index, order, target)
        if found is None:
            return None
        ders, sizes = found
    else:
        ders, sizes = _nested_duals(trace, raw, index, order), []
    seconds = time.perf_counter() - start
    if not quiet(notes) or not all_finite(ders):
        return None
    return DerivativeResult(value=on_host(value), derivatives=ders, name=name, inputs=on_host(inputs),
                            order=order, method=method, tape_entries=sizes, seconds=seconds,
                            signature=list(trace.signature), kinks=[], steps=trace.run_steps, detached=[])


def _nested_tapes(trace, raw: list, index: int, order: int, target):
    """(derivatives, entries of each tape swept) as higher._nested_tapes makes them, or None
    where it would stop for the tapes' size (the driver then finds the order that fits)."""
    tapes = [Tape() for _ in range(order)]
    boxes, v = [], raw[index]
    for tape in tapes:
        v = tape.watch(v)
        boxes.append(v)
    leaves = list(raw)
    leaves[index] = v
    g = boxed_values(trace, leaves)[trace.output]
    ders, sizes = [], []
    for k in range(order):
        tape, box = tapes[order - 1 - k], boxes[order - 1 - k]
        sizes.append(len(tape))
        remaining = order - 1 - k             # the tapes that record this sweep
        if k and remaining and remaining * sizes[k] ** 2 / max(sizes[k - 1], 1) > MAX_TAPE_ENTRIES:
            return None
        if g is not None:
            g = sweep(tape, g, as_input(1.0), target)[box.index]
        ders.append(finish(host(g, ())))
        if remaining and remaining * len(tapes[remaining - 1]) > MAX_TAPE_ENTRIES:
            return None
    return ders, sizes


def _nested_duals(trace, raw: list, index: int, order: int) -> list:
    """higher._nested_duals over the replayed steps."""
    levels = [new_level() for _ in range(order)]
    v = raw[index]
    for level in levels:
        v = Dual(v, as_input(1.0), level)
    leaves = list(raw)
    leaves[index] = v
    out = boxed_values(trace, leaves)[trace.output]
    return [finish(host(dual_coefficient(out, levels, k), ())) for k in range(1, order + 1)]
