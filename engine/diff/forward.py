"""Forward mode (figure D-2's dual numbers) and Jacobians.

`jvp` runs a target once with its inputs boxed as `Dual`s at a fresh level: the output's tangent
is J·u for the chosen input tangents u. The gradient by forward mode is one such pass per input
element (`gradient`), and a Jacobian is either one forward pass per input element or one reverse
sweep of a persistent tape per output element (`jacobian`). Returns results; never prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...parser.errors import SourceError
from .. import api
from ..core.backend import np, to_host, xp
from ..lang.interp import Interpreter
from ..core.notes import reset as reset_notes
from ..core.tape import Dual, Tape, backward, new_level, strip
from ..lang.values import as_input, dtype, set_dtype, shape_of, size_of


# ---- helpers shared with higher.py -------------------------------------------------------------

def prepare(source, at, fn, of, dtype_name, target):
    """Load the target and bind its inputs (the first steps of every command)."""
    set_dtype(dtype_name)
    target = target or api.load(source, fn, of)
    inputs = api.bind_inputs(target, dict(at or {}))
    return target, inputs


def check_wrt(target, wrt) -> list:
    wrt = list(wrt) if wrt else list(target.inputs)
    for w in wrt:
        if w not in target.inputs:
            raise SourceError("unknown input", f"--wrt {w}: not an input (the inputs: "
                              f"{', '.join(target.inputs) or 'none'})")
    return wrt


def unit(value, k: int):
    """The k-th basis vector in the space of `value` (1.0 for a scalar), in the working dtype."""
    shp = shape_of(value)
    if not shp:
        return as_input(1.0)
    u = xp().zeros(shp, dtype=dtype())
    u.reshape(-1)[k] = 1.0
    return u


def host(v, shp):
    """A derivative as a host numpy array of shape `shp` (None, a symbolic zero, becomes zeros)."""
    a = np().zeros(shp, dtype=dtype())
    if v is not None:
        a[...] = to_host(strip(v))
        a += 0.0                       # -0.0 (a zero times a negative number) prints as 0
    return a


def finish(a):
    """A 0-d result becomes a plain number."""
    return float(a) if np().ndim(a) == 0 and dtype() == "float64" else (a[()] if np().ndim(a) == 0 else a)


def run(target, values, limits):
    """Run the target on (possibly boxed) values; returns (output, interpreter)."""
    interp = Interpreter(limits)
    out = api.run_target(target, values, interp)
    api._check_output(out, target)
    return out, interp


def sweep(tape, out, seed, target):
    """A reverse sweep, with the engine's refusals turned into located errors."""
    from ..core.notes import STATE
    try:
        return backward(tape, out, seed)
    except NotImplementedError as e:
        raise SourceError("not implemented", str(e), STATE.span, source=target.source,
                          filename=target.filename) from None
    except SourceError as e:
        raise e.with_source(target.source, target.filename)


def unique_kinks(kinks) -> list:
    """Kinks noted once per place: repeated passes over the same program note them again."""
    seen, out = set(), []
    for op, span, detail in kinks:
        key = (op, span.line if span else None, span.column if span else None, detail)
        if key not in seen:
            seen.add(key)
            out.append((op, span, detail))
    return out


def tangent_of(out, level, shp):
    """The output's tangent at `level`, broadcast to the output's shape (None: no dependence)."""
    if out.__class__ is not Dual or out.level != level:
        return None
    t = strip(out.tangent)
    if shape_of(t) != tuple(shp):
        t = xp().broadcast_to(t, shp)
    return t


# ---- forward mode ------------------------------------------------------------------------------

def jvp(target, inputs: dict, tangents: dict, limits=None):
    """One forward pass: the output and its tangent J·u for input tangents u (by name).
    Returns (value, tangent or None, interpreter)."""
    level = new_level()
    boxed = {k: (Dual(v, tangents[k], level) if k in tangents else v) for k, v in inputs.items()}
    out, interp = run(target, boxed, limits)
    value = strip(out)
    return value, tangent_of(out, level, shape_of(value)), interp


def gradient(source=None, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64",
             limits=None, target=None):
    """The gradient by forward mode: one pass per input element, the same result as `api.grad`
    (a non-scalar output is summed, or contracted with `seed`)."""
    target, inputs = prepare(source, at, fn, of, dtype_name, target)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    first = None
    grads, touched = {}, set()
    for name in wrt:
        g = np().zeros(shape_of(inputs[name]), dtype=dtype())
        for k in range(size_of(inputs[name])):
            value, t, interp = jvp(target, inputs, {name: unit(inputs[name], k)}, limits)
            first = first or (value, interp)
            if t is None:
                continue
            touched.add(name)
            contracted = t if seed is None else t * api.seed_for(seed, value)
            g.reshape(-1)[k] = np().sum(to_host(contracted))
        grads[name] = finish(g)
    if first is None:                                  # nothing to differentiate: just evaluate
        out, interp = run(target, inputs, limits)
        first = (strip(out), interp)
    value, interp = first
    reduced = "seed" if seed is not None else ("sum" if shape_of(value) else None)
    unconnected = [w for w in wrt if w not in touched]
    return api.GradResult(value, grads, inputs, unconnected, reduced, interp.signature,
                          unique_kinks(notes.kinks), 0, interp.steps, None, "forward")


# ---- Jacobians ---------------------------------------------------------------------------------

@dataclass
class JacobianResult:
    value: object
    jacobian: dict                 # name -> array of shape value.shape + input.shape
    inputs: dict
    mode: str                      # "forward" or "reverse"
    reason: str                    # why this mode (auto) or "asked for"
    passes: int                    # forward passes or reverse sweeps made
    unconnected: list
    signature: list
    kinks: list
    steps: int


def choose_mode(mode: str, in_elements: int, out_elements: int):
    """Forward costs one pass per input element, reverse one sweep per output element."""
    if mode != "auto":
        return mode, f"--mode {mode} was asked for"
    if in_elements < out_elements:
        return "forward", (f"auto: the inputs have {in_elements} element{'s' * (in_elements != 1)}, fewer than "
                           f"the output's {out_elements}, so one forward pass per input element is cheaper")
    return "reverse", (f"auto: the output has {out_elements} element{'s' * (out_elements != 1)}, no more than "
                       f"the inputs' {in_elements}, so one reverse sweep per output element is cheaper")


def jacobian(source=None, at=None, wrt=None, mode="auto", fn=None, of=None, dtype_name="float64",
             limits=None, target=None) -> JacobianResult:
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be auto, forward or reverse, not {mode!r}")
    target, inputs = prepare(source, at, fn, of, dtype_name, target)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    in_elements = sum(size_of(inputs[w]) for w in wrt)
    if mode == "forward":                          # no need to learn the output's size first
        return _jacobian_forward(target, inputs, wrt, limits, notes, *choose_mode(mode, 0, 0))
    tape = Tape(persistent=True)
    boxed = dict(inputs)
    for name in wrt:
        boxed[name] = tape.watch(inputs[name])
    out, interp = run(target, boxed, limits)
    value = strip(out)
    chosen, reason = choose_mode(mode, in_elements, size_of(value))
    if chosen == "forward":
        return _jacobian_forward(target, inputs, wrt, limits, notes, chosen, reason)
    out_shape = shape_of(value)
    flat = {w: np().zeros((size_of(value), size_of(inputs[w])), dtype=dtype()) for w in wrt}
    touched = set()
    for k in range(size_of(value)):
        adj = sweep(tape, out, unit(value, k), target)
        for w in wrt:
            g = adj[boxed[w].index]
            if g is not None:
                touched.add(w)
                flat[w][k, :] = host(g, shape_of(inputs[w])).reshape(-1)
    jac = {w: finish(flat[w].reshape(out_shape + shape_of(inputs[w]))) for w in wrt}
    return JacobianResult(value, jac, inputs, "reverse", reason, size_of(value),
                          [w for w in wrt if w not in touched], interp.signature,
                          unique_kinks(notes.kinks), interp.steps)


def _jacobian_forward(target, inputs, wrt, limits, notes, mode, reason):
    columns, touched, first, passes = {}, set(), None, 0
    for w in wrt:
        cols = []
        for k in range(size_of(inputs[w])):
            value, t, interp = jvp(target, inputs, {w: unit(inputs[w], k)}, limits)
            passes += 1
            first = first or (value, interp)
            if t is not None:
                touched.add(w)
            cols.append(t)
        columns[w] = cols
    if first is None:
        out, interp = run(target, inputs, limits)
        first = (strip(out), interp)
    value, interp = first
    out_shape = shape_of(value)
    jac = {}
    for w in wrt:
        flat = np().zeros((size_of(value), size_of(inputs[w])), dtype=dtype())
        for k, t in enumerate(columns[w]):
            flat[:, k] = host(t, out_shape).reshape(-1)
        jac[w] = finish(flat.reshape(out_shape + shape_of(inputs[w])))
    return JacobianResult(value, jac, inputs, mode, reason, passes, [w for w in wrt if w not in touched],
                          interp.signature, unique_kinks(notes.kinks), interp.steps)


__all__ = ["jvp", "gradient", "jacobian", "JacobianResult", "choose_mode"]
