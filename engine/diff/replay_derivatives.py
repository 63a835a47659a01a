"""n-th derivatives of a scalar function from a recorded trace: the trace's steps replayed through
the engine's `bind` (replay_higher.boxed_values) on the varied input boxed as diff/higher.py's
`derivatives` boxes it, the other inputs held at their values.

- reverse (nested tapes): the input watched on N tapes, the steps recorded on all of them, each
  tape swept in turn from the innermost, every sweep recorded on the tapes outside it;
- forward (nested duals): x + ε1 + ... + εN, the coefficient of ε1···εk is f^(k).

Complex values (issue 32) take the interpreted driver's complex form: where the varied input or
the output is complex, the derivatives are nested duals' (their tangents complex), a complex
input's after the driver's holomorphic check (f'(z): Cauchy-Riemann from the replayed forward
passes along 1 and 1j, no entry on the path from the input to the output that is not
holomorphic, a complex output), a real input's after the nested tapes the driver runs first
(their notes and their size limit). Real inputs and a real output through complex values inside
take the real form, as the interpreter does.

The same rules run on the same values in the same order, on the path the plain replay's guards
picked, so the derivatives and the tapes' sizes are the interpreter's; an order the nested run
made non-finite is recomputed alone over the replayed steps, as the driver does
(`higher.orders_as_alone`). Anything the interpreted driver reports or handles on its own — a kink
note, a stop_gradient, tapes near MAX_TAPE_ENTRIES, a non-scalar input or output, an error — gives
None: the caller runs the interpreted driver. A value or a derivative still not finite raises
NonFinite (diff/fallbacks.py: counted as a non-finite result, and under AUTODIFF_STRICT=1 the
interpreter's result must not be finite either), as a replayed Hessian's does."""
from __future__ import annotations

import time

from ..core.backend import np
from ..core.complexes import is_complex
from ..core.notes import reset as reset_notes
from ..core.numbers import all_finite
from ..core.tape import strip
from ..lang.values import dtype, shape_of
from . import complex_derivatives
from .common import on_host
from .higher import (MAX_FORWARD_ORDER, DerivativeResult, TapesTooLarge, dual_derivatives, nested_duals,
                     orders_as_alone, sweep_nested, watched_on_tapes)
from .replay import replay_output
from .replay_higher import boxed_values, quiet
from .fallbacks import NonFinite


def replayed_derivatives(what, trace, values: list, inputs: dict, wrt: list, watched: list, target, seed):
    """replay_higher.replayed_derivative's interface (Function._replay_matrix): `seed` is
    (order, method), `wrt` the one varied input."""
    return replay_derivatives(trace, values, inputs, wrt[0], watched[0], *seed, target)


def replay_derivatives(trace, values: list, inputs: dict, name: str, index: int, order: int, method: str,
                       target) -> DerivativeResult | None:
    """f', ..., f^(order) in input `name` (the trace's leaf `index`) from the replayed steps, or
    None where the interpreted driver is to answer; NonFinite where the value or a derivative is
    not finite. `values`: the plain replay's."""
    value = strip(replay_output(trace, values))
    if method not in ("reverse", "forward") or order < 1 or (method == "forward" and order > MAX_FORWARD_ORDER):
        return None                         # the driver's usage errors
    if trace.output is None or shape_of(value) or shape_of(inputs[name]):
        return None
    if not all_finite([value]):
        raise NonFinite()
    notes = reset_notes()
    start = time.perf_counter()
    raw = values[:trace.leaves]
    complex_form = is_complex(inputs[name]) or is_complex(value)
    if complex_form and not _complex_form_holds(trace, values, inputs, name, index, order, method, target):
        return None
    if method == "reverse" and not complex_form:
        found = _nested_tapes(trace, raw, index, order, target)
        if found is None:
            return None
        ders, sizes = found
    else:                                   # (a complex form: nested duals, whatever the method asked)
        ders, sizes, method = _nested_duals(trace, raw, index, order), [], "forward"
    ders = _orders_as_alone(trace, raw, index, ders, method, target)
    seconds = time.perf_counter() - start
    if ders is None or not quiet(notes):
        return None
    if not all_finite(ders):
        raise NonFinite()           # counted as a non-finite result (checked under AUTODIFF_STRICT=1)
    return DerivativeResult(value=on_host(value), derivatives=ders, name=name, inputs=on_host(inputs),
                            order=order, method=method, tape_entries=sizes, seconds=seconds,
                            signature=list(trace.signature), kinks=[], steps=trace.run_steps, detached=[])


def _orders_as_alone(trace, raw: list, index: int, ders: list, method: str, target) -> list | None:
    """higher.orders_as_alone over the replayed steps: each order the nested run made non-finite
    recomputed with that many levels, as the interpreted driver does; None where such a run's
    tapes would stop for their size (the driver then answers)."""
    def alone(k: int) -> list:
        found = _nested_tapes(trace, raw, index, k, target) if method == "reverse" else \
            (_nested_duals(trace, raw, index, k), None)
        if found is None:
            raise _TooLarge()
        return found[0]
    try:
        return orders_as_alone(ders, alone)
    except _TooLarge:
        return None


class _TooLarge(Exception):
    """A recomputed order's tapes would stop for their size (`_orders_as_alone`)."""


def _complex_form_holds(trace, values: list, inputs: dict, name: str, index: int, order: int, method: str,
                        target) -> bool:
    """Whether the interpreted driver's complex form answers here as the nested duals below
    would (higher.derivatives): an order nested duals reach; for a complex input, f holomorphic
    in it (else the driver's error: the interpreter's to raise); for a real input, the driver's
    nested tapes first, with `method` reverse (the notes they make, the size they stop at)."""
    if order > MAX_FORWARD_ORDER:
        return False
    if not is_complex(inputs[name]):
        return method != "reverse" or _nested_tapes(trace, values[:trace.leaves], index, order, target) is not None
    from .replay_complex import Declined, ReplayedPasses      # loads with complex values only
    value = strip(values[trace.output])
    if not is_complex(value) or not holomorphic_on_path(trace, index):
        return False
    passes = ReplayedPasses(trace, values, list(inputs))
    try:
        columns, _ = complex_derivatives.tangent_columns(passes.jvp, target, inputs, name, None)
    except Declined:
        return False
    eps = float(np().finfo(dtype()).eps)
    return complex_derivatives.cauchy_riemann_holds(columns[:, 0, :], columns[:, 1, :], eps)


def holomorphic_on_path(trace, index: int) -> bool:
    """Whether every equation on the path from leaf `index` to the output is holomorphic (the
    table's field), as complex_derivatives.not_holomorphic_steps finds none on the interpreter's
    tape; False too where the output does not depend on that leaf (the driver's to answer)."""
    equations = trace.equations
    depends = [False] * len(equations)
    depends[index] = True
    for i in range(trace.leaves, trace.output + 1):
        depends[i] = any(depends[j] for _, j in equations[i].parents)
    if not depends[trace.output]:
        return False
    reaches = [False] * len(equations)
    reaches[trace.output] = True
    for i in range(trace.output, trace.leaves - 1, -1):
        if reaches[i]:
            if depends[i] and not equations[i].prim.holomorphic:
                return False
            for _, j in equations[i].parents:
                reaches[j] = True
    return True


def _nested_tapes(trace, raw: list, index: int, order: int, target):
    """(derivatives, entries of each tape swept) as higher._nested_tapes makes them, over the
    replayed steps, or None where it would stop for the tapes' size (the driver then finds the
    order that fits)."""
    tapes, boxes, v = watched_on_tapes(raw[index], order)
    try:
        return sweep_nested(tapes, boxes, _replayed_at(trace, raw, index, v), target, stop_early=True)
    except TapesTooLarge:
        return None


def _nested_duals(trace, raw: list, index: int, order: int) -> list:
    """higher._nested_duals over the replayed steps."""
    levels, v = nested_duals(raw[index], order)
    return dual_derivatives(_replayed_at(trace, raw, index, v), levels)


def _replayed_at(trace, raw: list, index: int, v):
    """The trace's output replayed with leaf `index` set to the box `v`."""
    leaves = list(raw)
    leaves[index] = v
    return boxed_values(trace, leaves)[trace.output]
