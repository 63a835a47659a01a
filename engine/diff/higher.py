"""Second and higher derivatives: Hessians and the n-th derivatives of a scalar function.

Both come from differentiating a derivative computation. The rules are written in engine ops,
so a reverse sweep run while an outer level is active is itself recorded (on an outer tape) or
pushes tangents (through outer duals):

- Hessian, forward-over-reverse: one pass per input element; the inputs carry a dual tangent
  along that element, the inner tape's sweep gives the gradient, and the gradient's tangent is
  one row of the Hessian (a Hessian-vector product).
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
from ..core.backend import np
from ..core.notes import reset as reset_notes
from ..core.tape import Dual, Tape, Var, new_level, strip
from ..lang.target import load
from ..lang.values import as_input, dtype, set_dtype, shape_of, size_of
from .common import (check_result_elements, check_wrt, finish, host, prepare, run, sweep, tangent_of, unique_kinks,
                     unit, watched_run)

MAX_TAPE_ENTRIES = 3_000_000       # nested tapes beyond this would exhaust memory: stop with an error
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
    value: object
    gradient: dict                 # name -> array of the input's shape
    hessian: dict                  # a -> b -> array of shape a.shape + b.shape
    inputs: dict
    method: str
    passes: int                    # forward passes (forward-over-reverse) or outer sweeps
    signature: list
    kinks: list
    steps: int


METHODS = ("forward-over-reverse", "reverse-over-reverse")


def hessian(source=None, at=None, wrt=None, method="forward-over-reverse", fn=None, of=None,
            dtype_name="float64", limits=None, target=None) -> HessianResult:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    target, inputs = prepare(source, at, fn, of, dtype_name, target)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    check_result_elements("Hessian", sum(size_of(inputs[w]) for w in wrt) ** 2, limits)
    blocks = {a: {b: np().zeros((size_of(inputs[a]), size_of(inputs[b])), dtype=dtype()) for b in wrt}
              for a in wrt}
    if method == "forward-over-reverse":
        value, grads, passes, interp = _forward_over_reverse(target, inputs, wrt, limits, blocks)
    else:
        value, grads, passes, interp = _reverse_over_reverse(target, inputs, wrt, limits, blocks)
    hess = {a: {b: finish(blocks[a][b].reshape(shape_of(inputs[a]) + shape_of(inputs[b]))) for b in wrt}
            for a in wrt}
    gradient = {w: finish(host(grads[w], shape_of(inputs[w]))) for w in wrt}
    return HessianResult(value=value, gradient=gradient, hessian=hess, inputs=inputs, method=method, passes=passes,
                         signature=interp.signature, kinks=unique_kinks(notes.kinks), steps=interp.steps)


def _gradient_pass(target, values, wrt, limits):
    """Tape the run, sweep it once: (output, {name: adjoint or None}, interpreter)."""
    tape = Tape()
    out, boxed, interp = watched_run(target, values, wrt, limits, tape)
    _scalar_output(out, target, "hessian")
    adj = sweep(tape, out, as_input(1.0), target)
    return out, {w: adj[boxed[w].index] for w in wrt}, interp


def _forward_over_reverse(target, inputs, wrt, limits, blocks):
    """Row (a, k) of the Hessian is the tangent of the gradient when input a moves along e_k."""
    first, passes = None, 0
    for a in wrt:
        for k in range(size_of(inputs[a])):
            level = new_level()
            values = dict(inputs)
            values[a] = Dual(inputs[a], unit(inputs[a], k), level)
            out, grads, interp = _gradient_pass(target, values, wrt, limits)
            passes += 1
            first = first or (strip(out), grads, interp)
            for b in wrt:
                t = tangent_of(grads[b], level, shape_of(inputs[b]))
                blocks[a][b][k, :] = host(t, shape_of(inputs[b])).reshape(-1)
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


def derivatives(source=None, at=None, order=1, method="reverse", fn=None, of=None, dtype_name="float64",
                limits=None, target=None) -> DerivativeResult:
    """f', ..., f^(order) of a scalar function of one scalar input."""
    if method not in ("reverse", "forward"):
        raise ValueError(f"method must be reverse or forward, not {method!r}")
    if order < 1:
        raise SourceError("usage", f"{option('order')} must be at least 1, not {order}")
    if method == "forward" and order > MAX_FORWARD_ORDER:
        raise SourceError("too large", f"{option('order')} {order}: nested duals double the work per order; "
                          f"at most {MAX_FORWARD_ORDER} with {option('method')} forward", None,
                          f"use {option('method')} reverse (nested tapes)")
    set_dtype(dtype_name)
    target = target or load(source, fn, of)
    if len(target.inputs) != 1:
        have = (f"its inputs are {', '.join(target.inputs)}" if target.inputs else "it has no input")
        raise SourceError("not one input", f"derivative needs a function of one scalar input; "
                          f"{target.describe()}: {have}", None,
                          "for several inputs use `autodiff hessian` or `autodiff jacobian`" if target.inputs
                          else "write it in terms of one input, e.g. sin(x)")
    target, inputs = prepare(None, at, None, None, dtype_name, target)
    name = target.inputs[0]
    x = inputs[name]
    if shape_of(x):
        raise SourceError("not a scalar", f"derivative needs a scalar input, but {name} has shape "
                          f"{shape_of(x)}", None, "for arrays use `autodiff jacobian` or `autodiff hessian`")
    notes = reset_notes()
    np()                                           # load numpy before the clock starts
    start = time.perf_counter()
    if method == "reverse":
        value, ders, sizes, interp = _nested_tapes(target, name, x, order, limits)
    else:
        value, ders, interp = _nested_duals(target, name, x, order, limits)
        sizes = []
    seconds = time.perf_counter() - start
    return DerivativeResult(value=value, derivatives=ders, name=name, inputs=inputs, order=order, method=method,
                            tape_entries=sizes, seconds=seconds, signature=interp.signature,
                            kinks=unique_kinks(notes.kinks), steps=interp.steps)


def _nested_tapes(target, name, x, order, limits):
    """tapes[0] is the outermost. Sweeping the innermost gives f' (recorded on all the others);
    sweeping the next gives f'', and so on."""
    tapes = [Tape() for _ in range(order)]
    boxes, v = [], x
    for tape in tapes:
        v = tape.watch(v)
        boxes.append(v)
    out, interp = run(target, {name: v}, limits)
    _scalar_output(out, target, "derivative")
    ders, sizes, g = [], [], out
    for k in range(order):
        tape, box = tapes[order - 1 - k], boxes[order - 1 - k]
        sizes.append(len(tape))
        if g is not None:
            g = sweep(tape, g, as_input(1.0), target)[box.index]
        ders.append(finish(host(g, ())))
        total = sum(len(t) for t in tapes[:order - 1 - k])
        if total > MAX_TAPE_ENTRIES:
            raise SourceError("too large", f"order {k + 2} and above need more than {MAX_TAPE_ENTRIES:,} "
                              f"tape entries (the tape of order k records the sweep of order k-1, and "
                              f"the derivative expressions of this function swell with k)", None,
                              f"ask for {option('order')} {k + 1} or less")
    return strip(out), ders, sizes, interp


def _nested_duals(target, name, x, order, limits):
    """x + ε1 + ... + εN with εi² = 0: the coefficient of ε1···εk is f^(k)(x)."""
    levels = [new_level() for _ in range(order)]
    v = x
    for level in levels:
        v = Dual(v, as_input(1.0), level)
    out, interp = run(target, {name: v}, limits)
    _scalar_output(out, target, "derivative")
    ders = []
    for k in range(1, order + 1):
        z = out
        for i, level in enumerate(reversed(levels)):      # outermost level first
            take_tangent = i < k
            if z.__class__ is Dual and z.level == level:
                z = z.tangent if take_tangent else z.primal
            elif take_tangent:
                z = None                                    # no dependence along this ε: zero
                break
        ders.append(finish(host(z, ())))
    return strip(out), ders, interp


__all__ = ["hessian", "HessianResult", "derivatives", "DerivativeResult", "METHODS"]
