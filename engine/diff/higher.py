"""Second and higher derivatives: Hessians and the n-th derivatives of a scalar function.

Both come from differentiating a derivative computation. The rules are written in engine ops,
so a reverse sweep run while an outer level is active is itself recorded (on an outer tape) or
pushes tangents (through outer duals):

- Hessian, forward-over-reverse: the inputs carry a stack of dual tangents, one per input element
  (core/batch.py; one pass, chunked under a memory budget), the inner tape's sweep gives the
  gradient, and the gradient's stacked tangents are the Hessian's rows (Hessian-vector products).
- Hessian, reverse-over-reverse: the inner sweep is recorded on an outer persistent tape, which
  is swept once per gradient element.
- n-th derivative: N nested tapes. The tape of order k records the sweep of order k-1, so its
  size is the size of the expression for f^(k-1)'s derivative: it grows with k as the derivative
  expressions swell (linearly for sin and polynomials, geometrically for products such as
  exp(x**2)). Nested forward duals (`method="forward"`) instead double the work per order.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...parser.errors import SourceError, option
from ..core.backend import np, to_host
from ..core.complexes import is_complex
from ..core.lazy import force_all
from ..core.batch import batched
from ..core.notes import reset as reset_notes
from ..core.numbers import all_finite, finite
from ..core.tape import Dual, Tape, Var, new_level, strip
from ..lang.target import load
from ..lang.values import as_input, dtype, set_dtype, shape_of, size_of
from . import complex_derivatives
from .common import (check_result_elements, check_wrt, detached_places, finish, host, on_host, prepare,
                     real_values, refuse_complex_output, run, sweep, unique_kinks, unit, watched_run)
from .forward import jvp
from .tangents import basis_chunks, is_structured, stacked_tangent_of

MAX_TAPE_ENTRIES = 3_000_000       # nested tapes beyond this would exhaust memory: stop with an error
BORDERLINE = 1.25    # sizes grown by a ratio are trusted to decide an order only this far from the limit
MAX_FORWARD_ORDER = 16             # nested duals cost 2^N passes' worth of work


def _scalar_output(out, target, command):
    shp = shape_of(out)
    if shp:
        raise SourceError("not a scalar", f"{command} needs a scalar output, but the output has shape {shp}",
                          None, "reduce it, e.g. with sum(...), or pick one element with [i]",
                          source=target.source, filename=target.filename)


# ---- Hessians ----------------------------------------------------------------------------------

@dataclass
class HessianResult:
    """The Hessian of a scalar target at a point: `hessian[a][b]` has shape a.shape + b.shape,
    beside the value and the gradient."""
    value: object
    gradient: dict                 # name -> array of the input's shape
    hessian: dict                  # a -> b -> array of shape a.shape + b.shape
    inputs: dict
    method: str
    passes: int                    # forward passes (forward-over-reverse) or outer sweeps
    signature: list
    kinks: list
    steps: int
    detached: list = field(default_factory=list)   # spans where stop_gradient cut a traced value
    rules: list = field(default_factory=list)      # the user rules' evaluations (checks/rules.py)
    nonfinite: list = field(default_factory=list)  # where a nan/inf first appeared (views/provenance_matrices.py)
    # where an input is complex: a -> b -> how the block's axes read, each complex input's element
    # as its (re, im) pair (diff/complex_derivatives.py)
    layout: dict = field(default_factory=dict)


METHODS = ("forward-over-reverse", "reverse-over-reverse")


def hessian(source=None, at=None, wrt=None, method="forward-over-reverse", fn=None, of=None,
            dtype_name="float64", limits=None, target=None) -> HessianResult:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    target, inputs = prepare(source, at, fn, of, dtype_name, target, complex_inputs=True)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    check_result_elements("Hessian", sum(size_of(inputs[w]) * (1 + is_complex(inputs[w])) for w in wrt) ** 2,
                          limits)
    if complex_derivatives.any_complex(inputs, wrt):
        return _complex_hessian(target, inputs, wrt, limits, notes)
    blocks = {a: {b: np().zeros((size_of(inputs[a]), size_of(inputs[b])), dtype=dtype()) for b in wrt}
              for a in wrt}
    if method == "forward-over-reverse":
        value, grads, passes, interp = _forward_over_reverse(target, inputs, wrt, limits, blocks)
    else:
        value, grads, passes, interp = _reverse_over_reverse(target, inputs, wrt, limits, blocks)
    refuse_complex_output(value)
    hess = {a: {b: finish(blocks[a][b].reshape(shape_of(inputs[a]) + shape_of(inputs[b]))) for b in wrt}
            for a in wrt}
    gradient = {w: finish(host(grads[w], shape_of(inputs[w]))) for w in wrt}
    if not all_finite(gradient[w] for w in wrt):
        gradient = _gradient_alone(target, inputs, wrt, limits)
    return HessianResult(value=on_host(value), gradient=gradient, hessian=hess, inputs=on_host(inputs),
                         method=method, passes=passes,
                         signature=interp.signature, kinks=unique_kinks(notes.kinks), steps=interp.steps,
                         detached=detached_places(notes.detached), rules=list(notes.rules))


def _complex_hessian(target, inputs, wrt, limits, notes) -> HessianResult:
    """The real Hessian over the (re, im) pairs of the complex inputs, forward over reverse
    whatever the method asked (diff/complex_derivatives.py)."""
    first, hess, layout, passes = complex_derivatives.hessian_rows(_gradient_pass, target, inputs, wrt, limits)
    value, grads, interp = first
    return HessianResult(value=on_host(value), gradient=complex_derivatives.reported(grads, inputs), hessian=hess,
                         inputs=on_host(inputs), method="forward-over-reverse", passes=passes,
                         signature=interp.signature, kinks=unique_kinks(notes.kinks), steps=interp.steps,
                         detached=detached_places(notes.detached), rules=list(notes.rules), layout=layout)


def _gradient_alone(target, inputs, wrt, limits) -> dict:
    """The gradient as grad computes it, where the Hessian's own pass made it nan or inf: its sweep
    runs under an outer level (dual tangents, an outer tape), whose boxed adjoints the strong zero
    never drops, a boxed zero carrying higher orders; grad's sweep is the outermost, where a zero
    adjoint stays 0 against an inf factor (std at one element: 0, not nan). Each order as that
    order alone computes it, as orders_as_alone does for derivatives; a finite gradient is grad's
    already (the two sweeps differ only in what they mask), and pays nothing."""
    _, grads, _ = _gradient_pass(target, inputs, wrt, limits)
    return {w: finish(host(grads[w], shape_of(inputs[w]))) for w in wrt}


def _gradient_pass(target, values, wrt, limits):
    """Tape the run, sweep it once: (output, {name: adjoint or None}, interpreter)."""
    tape = Tape()
    out, boxed, interp = watched_run(target, values, wrt, limits, tape)
    _scalar_output(out, target, "hessian")
    adj = sweep(tape, out, as_input(1.0), target)
    return out, {w: adj[boxed[w].index] for w in wrt}, interp


def _forward_over_reverse(target, inputs, wrt, limits, blocks):
    """Rows (a, start..stop) of the Hessian are the tangents of the gradient when input a moves
    along e_start..e_stop: one pass carries all those tangents stacked (core/batch.py)."""
    first, passes = None, 0
    for a in wrt:
        for start, stop, tangents in basis_chunks(inputs[a]):
            level = new_level()
            values = dict(inputs)
            values[a] = Dual(inputs[a], tangents, level)
            with batched(level, stop - start, structured=is_structured(tangents)):
                out, grads, interp = _gradient_pass(target, values, wrt, limits)
            passes += 1
            first = first or (strip(out), {w: strip(g) for w, g in grads.items()}, interp)
            for b in wrt:
                t = stacked_tangent_of(grads[b], level, shape_of(inputs[b]), stop - start)
                if t is not None:
                    blocks[a][b][start:stop, :] = real_values(to_host(t)) + 0.0
    if first is None:                              # no input elements: value and (empty) gradient
        out, grads, interp = _gradient_pass(target, inputs, wrt, limits)
        first = (strip(out), grads, interp)
    value, grads, interp = first
    return value, grads, passes, interp


def _reverse_over_reverse(target, inputs, wrt, limits, blocks):
    """The inner sweep is recorded on a persistent outer tape; sweeping the outer tape from the
    gradient's element k gives row k of the Hessian."""
    outer = Tape(persistent=True)
    watched = {w: outer.watch(inputs[w]) for w in wrt}
    out, grads, interp = _gradient_pass(target, {**inputs, **watched}, wrt, limits)
    passes = 0
    for b in wrt:
        g = grads[b]
        if g.__class__ is not Var or g.tape is not outer:
            continue                               # the gradient is constant: this row is zero
        for k in range(size_of(inputs[b])):
            adj = sweep(outer, g, unit(inputs[b], k), target)
            passes += 1
            for a in wrt:
                blocks[b][a][k, :] = host(adj[watched[a].index], shape_of(inputs[a])).reshape(-1)
    return strip(out), grads, passes, interp


# ---- n-th derivatives --------------------------------------------------------------------------

@dataclass
class DerivativeResult:
    """f', f'', ..., f^(order) of a function of one scalar input, with the entries of each tape
    swept (`tape_entries`) and the time all orders took."""
    value: object
    derivatives: list              # [f', f'', ..., f^(N)]
    name: str                      # the input
    inputs: dict
    order: int
    method: str                    # "reverse" (nested tapes) or "forward" (nested duals)
    tape_entries: list = field(default_factory=list)   # entries of the tape swept for f^(k), k=1..N
    seconds: float = 0.0
    signature: list = field(default_factory=list)
    kinks: list = field(default_factory=list)
    steps: int = 0
    detached: list = field(default_factory=list)   # spans where stop_gradient cut a traced value
    rules: list = field(default_factory=list)      # the user rules' evaluations (checks/rules.py)
    nonfinite: list = field(default_factory=list)  # where a nan/inf first appeared (views/provenance_derivatives.py)


def derivatives(source=None, at=None, order=1, method="reverse", fn=None, of=None, dtype_name="float64",
                limits=None, target=None, wrt=None) -> DerivativeResult:
    """f', ..., f^(order) of a scalar function of one scalar input; with `wrt` (an input's name,
    or a one-name list), the partial derivatives in that input with the others held at `at`."""
    if method not in ("reverse", "forward"):
        raise ValueError(f"method must be reverse or forward, not {method!r}")
    if order < 1:
        raise SourceError("usage", f"{option('order')} must be at least 1, not {order}")
    if method == "forward" and order > MAX_FORWARD_ORDER:
        raise SourceError("too large", f"{option('order')} {order}: nested duals double the work per order; "
                          f"at most {MAX_FORWARD_ORDER} with {option('method')} forward", None,
                          f"use {option('method')} reverse (nested tapes)")
    set_dtype(dtype_name)
    target = (target or load(source, fn, of)).given(at or {})
    name = varied_input(target, wrt)
    target, inputs = prepare(None, at, None, None, dtype_name, target, complex_inputs=True)
    x = inputs[name]
    if shape_of(x):
        raise SourceError("not a scalar", f"derivative needs a scalar input, but {name} has shape "
                          f"{shape_of(x)}", None, "for arrays use `autodiff jacobian` or `autodiff hessian`")
    held = {k: v for k, v in inputs.items() if k != name}      # the other inputs, held at their values
    notes = reset_notes()
    np()                                           # load numpy before the clock starts
    start = time.perf_counter()
    if is_complex(x):            # f'(z) of a holomorphic f (refused where f is not), by nested duals
        complex_derivatives.holomorphic_first_derivative(jvp, target, inputs, name, limits)
        method = _complex_by_duals(order)
    if method == "reverse":
        try:
            value, ders, sizes, interp = _nested_tapes(target, name, x, order, limits, stop_early=True, held=held)
        except TapesTooLarge as e:
            found = reachable_order(order, e.sizes, target, name, x, limits, held)
            if found[0] < order:
                raise too_many_entries(order, found) from None
            # the sizes grown by their ratio overshot: the order fits after all
            value, ders, sizes, interp = _nested_tapes(target, name, x, order, limits, held=held)
        if is_complex(value):    # a complex output of a real input: f' is complex, by nested duals
            method = _complex_by_duals(order)
    if method == "forward":
        value, ders, interp = _nested_duals(target, name, x, order, limits, held)
        sizes = []
    ders = orders_as_alone(ders, lambda k: (_nested_tapes(target, name, x, k, limits, held=held)[1]
                                            if method == "reverse" else _nested_duals(target, name, x, k, limits, held)[1]))
    seconds = time.perf_counter() - start
    return DerivativeResult(value=on_host(value), derivatives=ders, name=name, inputs=on_host(inputs),
                            order=order, method=method,
                            tape_entries=sizes, seconds=seconds, signature=interp.signature,
                            kinks=unique_kinks(notes.kinks), steps=interp.steps,
                            detached=detached_places(notes.detached), rules=list(notes.rules))


def _complex_by_duals(order: int) -> str:
    """Complex values' derivatives are taken by nested duals (their tangents are complex: f'(z)
    for a holomorphic f); "forward", or the error for an order they cannot reach."""
    if order > MAX_FORWARD_ORDER:
        raise SourceError("too large", f"{option('order')} {order}: derivatives of complex values take nested "
                          f"duals, which double the work per order: at most {MAX_FORWARD_ORDER}")
    return "forward"


def orders_as_alone(ders: list, computed_alone) -> list:
    """Each order as `--order k` alone computes it, where the nested run made it non-finite.

    A run's outermost sweep keeps a zero adjoint zero against an inf or nan factor (the rules'
    zero_where_zero); the inner sweeps of a nested run cannot: their adjoints are boxed on the outer
    tapes, and a boxed zero may still carry higher orders. So x**3*sqrt(x) at 0 gave f' = 0 with
    --order 1 (and in grad) but nan with --order 3. `computed_alone(k)` reruns with k levels, only
    for the orders that came out non-finite: finite runs pay nothing."""
    ders = list(ders)
    for k in range(1, len(ders)):                  # the last order is already its own run's outermost
        if not finite(ders[k - 1]):
            ders[k - 1] = computed_alone(k)[k - 1]
    return ders


def varied_input(target, wrt) -> str:
    """The input the derivatives are in: `wrt` (checked), else the target's only input."""
    names = [wrt] if isinstance(wrt, str) else list(wrt or ())
    if len(names) > 1:
        raise SourceError("usage", f"{option('wrt')} {','.join(names)}: derivative differentiates in one input; "
                          "name one", None, "for mixed partial derivatives use `autodiff hessian`")
    if names:
        return check_wrt(target, names)[0]
    if len(target.inputs) != 1:
        have = (f"its inputs are {', '.join(target.inputs)}" if target.inputs else "it has no input")
        raise SourceError("not one input", f"derivative needs a function of one scalar input, or "
                          f"{option('wrt')} NAME; {target.describe()}: {have}", None,
                          f"name the input to differentiate in with {option('wrt')} {target.inputs[0]} (the "
                          "others are held at their values)" if target.inputs
                          else "write it in terms of one input, e.g. sin(x)")
    return target.inputs[0]


def _nested_tapes(target, name, x, order, limits, stop_early=False, held=None):
    """f', ..., f^(order) by nested tapes from a run of the target. `held`: the other inputs, as
    constants."""
    tapes, boxes, v = watched_on_tapes(x, order)
    out, interp = run(target, {**(held or {}), name: v}, limits)
    force_all(tapes[0], out)        # the first tape's values nothing read, as watched_run computes them
    _scalar_output(out, target, "derivative")
    ders, sizes = sweep_nested(tapes, boxes, out, target, stop_early)
    return strip(out), ders, sizes, interp


def watched_on_tapes(x, order, **tape_options):
    """(tapes, boxes, x watched on every tape): tapes[0] is the outermost, boxes[i] x's box on
    tapes[i]; what is computed from the last box records on all of them. The tapes after the
    first watch a box: they hold no lazy values (Tape.watch)."""
    tapes = [Tape(**tape_options) for _ in range(order)]
    boxes, v = [], x
    for tape in tapes:
        v = tape.watch(v)
        boxes.append(v)
    return tapes, boxes, v


def sweep_nested(tapes, boxes, out, target, stop_early=False):
    """(f', ..., f^(order), entries of each tape swept) from `out`, computed from
    watched_on_tapes' box: sweeping the innermost tape gives f' (recorded on all the others),
    sweeping the next f'', and so on. TapesTooLarge where a sweep would pass MAX_TAPE_ENTRIES
    (`stop_early`: judged before the sweep too, from the growth of the tapes so far)."""
    order = len(tapes)
    ders, sizes, g = [], [], out
    for k in range(order):
        tape, box = tapes[order - 1 - k], boxes[order - 1 - k]
        sizes.append(len(tape))
        remaining = order - 1 - k             # the tapes that record this sweep
        if stop_early and k and remaining and remaining * sizes[k] ** 2 / max(sizes[k - 1], 1) > MAX_TAPE_ENTRIES:
            raise TapesTooLarge(sizes)     # stopped before the sweep that cannot fit
        if g is not None:
            g = sweep(tape, g, as_input(1.0), target)[box.index]
        ders.append(finish(host(g, ())))
        if remaining and remaining * len(tapes[remaining - 1]) > MAX_TAPE_ENTRIES:
            raise TapesTooLarge(sizes + [len(tapes[remaining - 1])])
    return ders, sizes


def highest_order(sizes, limit, cap):
    """The highest order whose nested tapes stay within `limit` entries, from the entries of the
    tapes swept for f', f'', ... measured so far (`sizes`; they do not depend on the order asked
    for) and, beyond them, grown by their last ratio. At order M the tapes left after sweeping
    f^(j-1) are M+1-j tapes of sizes[j-1] entries each. Returns (order, whether it extrapolated)."""
    ratio = max(sizes[-1] / max(sizes[-2], 1), 1.0) if len(sizes) > 1 else 1.0

    def size(j):
        return sizes[j - 1] if j <= len(sizes) else sizes[-1] * ratio ** (j - len(sizes))

    best = 1
    while best < cap and all((best + 2 - j) * size(j) <= limit for j in range(2, best + 2)):
        best += 1
    return best, best + 1 > len(sizes)


class TapesTooLarge(Exception):
    """Nested tapes would pass MAX_TAPE_ENTRIES; `sizes`: the entries of the tapes swept so far."""

    def __init__(self, sizes):
        super().__init__(sizes)
        self.sizes = sizes


def reachable_order(order, sizes, target, name, x, limits, held=None):
    """(highest order within the limit, the sizes it was judged from, whether they were grown
    beyond the measured ones). Where growing them by their last ratio leaves the answer within
    BORDERLINE (per grown size) of the limit, the next order is run to measure one more size.""" 
    cap, floor = order, 0     # an early stop is a prediction: the order itself may fit
    while True:
        best, extrapolated = highest_order(sizes, MAX_TAPE_ENTRIES, cap)
        best = max(best, floor)
        if not extrapolated:
            return best, sizes, False
        margin = BORDERLINE ** (best + 1 - len(sizes))      # each grown size is less sure
        high, _ = highest_order(sizes, MAX_TAPE_ENTRIES * margin, cap)
        low, _ = highest_order(sizes, MAX_TAPE_ENTRIES / margin, cap)
        if low == high:                              # not near the limit: the grown sizes decide
            return best, sizes, True
        run_order = len(sizes) + 1                   # the cheapest run that measures one more size
        if run_order > cap:
            return best, sizes, True
        try:
            _, _, sizes, _ = _nested_tapes(target, name, x, run_order, limits, held=held)
            floor = run_order
        except TapesTooLarge as e:
            sizes = max(sizes, e.sizes, key=len)
            cap = run_order - 1


def too_many_entries(order, found):
    """The error for an order whose nested tapes would exceed MAX_TAPE_ENTRIES, naming the highest
    order that fits (found from the tape sizes of the lower orders, before the work that cannot)."""
    best, sizes, extrapolated = found
    how = (f"; the tape sizes were measured up to order {len(sizes)} ({sizes[-1]:,} entries) and grown "
           f"by their last ratio beyond" if extrapolated else "")
    return SourceError("too large", f"order {order} needs more than {MAX_TAPE_ENTRIES:,} tape entries at once "
                       f"(the tape of order k records the sweep of order k-1, and the derivative expressions "
                       f"of this function swell with k); the highest order within the limit is {best}{how}",
                       None, f"ask for {option('order')} {best} or less")


def _nested_duals(target, name, x, order, limits, held=None):
    """f', ..., f^(order) by nested duals from a run of the target."""
    levels, v = nested_duals(x, order)
    out, interp = run(target, {**(held or {}), name: v}, limits)
    _scalar_output(out, target, "derivative")
    return strip(out), dual_derivatives(out, levels), interp


def nested_duals(x, order):
    """(levels, x + ε1 + ... + εN) with εi² = 0: the coefficient of ε1···εk in f of it is f^(k)(x)."""
    levels = [new_level() for _ in range(order)]
    v = x
    for level in levels:
        v = Dual(v, as_input(1.0), level)
    return levels, v


def dual_derivatives(out, levels) -> list:
    """f', ..., f^(N) as host numbers from f's output at nested_duals' value."""
    return [derivative_number(dual_coefficient(out, levels, k)) for k in range(1, len(levels) + 1)]


def derivative_number(v):
    """A derivative of a scalar as a host number: complex where it is (a complex f), else host's
    (the replayed derivatives make theirs with it too: diff/replay_derivatives.py)."""
    if v is not None and is_complex(v):
        return complex_derivatives.as_number(to_host(strip(v)))
    return finish(host(v, ()))


def dual_coefficient(z, levels, k):
    """The coefficient of ε1···εk in z, a value computed from x + ε1 + ... + εN (`levels`: ε1's
    first): f^(k) for f's output (k=0: the value); None where z does not depend on one of them."""
    for i, level in enumerate(reversed(levels)):          # outermost level first
        take_tangent = i < k
        if z.__class__ is Dual and z.level == level:
            z = z.tangent if take_tangent else z.primal
        elif take_tangent:
            return None                                     # no dependence along this ε: zero
    return z


__all__ = ["hessian", "HessianResult", "derivatives", "DerivativeResult", "METHODS"]
