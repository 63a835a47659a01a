"""Forward mode (figure D-2's dual numbers) and Jacobians.

`jvp` runs a target once with its inputs boxed as `Dual`s at a fresh level: the output's tangent
is J·u for the chosen input tangents u. The gradient by forward mode is one such pass per input
element (`gradient`), and a Jacobian is either one forward pass carrying a stack of basis tangents
(core/batch.py; chunked under a memory budget) or one reverse sweep of a persistent tape per
output element (`jacobian`). Returns results; never prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...parser.errors import option
from ..core.backend import np, to_host, xp
from ..core.complexes import is_complex
from ..core.notes import reset as reset_notes
from ..core.batch import batched
from ..core.tape import Dual, Tape, new_level, strip
from ..lang.values import dtype, shape_of, size_of
from . import complex_derivatives
from .common import (check_result_elements, check_wrt, detached_places, finish, first_or_plain_run, host, on_host,
                     prepare, refuse_complex_output, run, seed_for, sweep, tangent_of, unique_kinks, unit,
                     watched_run)
from .reverse import GradResult
from .tangents import basis_chunks, is_structured, stacked_tangent_of


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
    (a non-scalar output is summed, or contracted with `seed`). A complex input's element moves
    along 1 and 1j: df/dx + i df/dy, grad's convention (diff/complex_derivatives.py)."""
    target, inputs = prepare(source, at, fn, of, dtype_name, target, complex_inputs=True)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    first = None
    grads, touched = {}, set()
    if complex_derivatives.any_complex(inputs, wrt):
        weights = None if seed is None else (lambda value: seed_for(seed, value))
        first, grads, touched = complex_derivatives.forward_gradient(jvp, target, inputs, wrt, limits, weights)
        wrt = []
    for name in wrt:
        g = np().zeros(shape_of(inputs[name]), dtype=dtype())
        for k in range(size_of(inputs[name])):
            value, t, interp = jvp(target, inputs, {name: unit(inputs[name], k)}, limits)
            first = first or (value, interp)
            if t is None:
                continue
            if is_complex(value):
                refuse_complex_output(value)
            touched.add(name)
            contracted = t if seed is None else t * seed_for(seed, value)
            g.reshape(-1)[k] = to_host(xp().sum(contracted))     # summed on the device: one number back
        grads[name] = finish(g)
    value, interp = first_or_plain_run(first, target, inputs, limits)
    reduced = "seed" if seed is not None else ("sum" if shape_of(value) else None)
    unconnected = [w for w in grads if w not in touched]
    return GradResult(value=on_host(value), gradient=grads, inputs=on_host(inputs), unconnected=unconnected,
                      reduced=reduced,
                      signature=interp.signature, kinks=unique_kinks(notes.kinks), tape_length=0,
                      steps=interp.steps, tape=None, mode="forward", detached=detached_places(notes.detached),
                      rules=list(notes.rules))


# ---- Jacobians ---------------------------------------------------------------------------------

@dataclass
class JacobianResult:
    """The Jacobian of the target at a point: `jacobian[name]` has shape value.shape + input.shape;
    `mode` and `reason` say which AD mode made it and why, `passes` how many passes or sweeps."""
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
    detached: list = field(default_factory=list)   # spans where stop_gradient cut a traced value
    rules: list = field(default_factory=list)      # the user rules' evaluations (checks/rules.py)
    nonfinite: list = field(default_factory=list)  # where a nan/inf first appeared (views/provenance_matrices.py)
    # where a complex value is involved: name -> how its block's axes read (the real blocks), and
    # whether the blocks are the complex Jacobian of a holomorphic f (diff/complex_derivatives.py)
    layout: dict = field(default_factory=dict)
    holomorphic: bool = False


COMPLEX_REASON = ("complex values: one forward pass per real direction of each input element (1, and 1j "
                  "for a complex one)")


def choose_mode(mode: str, in_elements: int, out_elements: int):
    """Forward carries a tangent per input element (stacked in one pass), reverse makes one sweep
    per output element."""
    if mode != "auto":
        return mode, f"{option('mode')} {mode} was asked for"     # the front end spells the setting
    if in_elements < out_elements:
        return "forward", (f"auto: the inputs have {in_elements} element{'s' * (in_elements != 1)}, fewer than "
                           f"the output's {out_elements}, so forward mode (a tangent per input element) is cheaper")
    return "reverse", (f"auto: the output has {out_elements} element{'s' * (out_elements != 1)}, no more than "
                       f"the inputs' {in_elements}, so one reverse sweep per output element is cheaper")


def jacobian(source=None, at=None, wrt=None, mode="auto", fn=None, of=None, dtype_name="float64",
             limits=None, target=None, holomorphic=False) -> JacobianResult:
    """`holomorphic`: the complex Jacobian of a holomorphic f (refused where f is not), else
    complex values are taken as (re, im) pairs (diff/complex_derivatives.py)."""
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be auto, forward or reverse, not {mode!r}")
    target, inputs = prepare(source, at, fn, of, dtype_name, target, complex_inputs=True)
    wrt = check_wrt(target, wrt)
    notes = reset_notes()
    in_elements = sum(size_of(inputs[w]) for w in wrt)
    if holomorphic or complex_derivatives.any_complex(inputs, wrt):
        return _complex_jacobian(target, inputs, wrt, limits, notes, holomorphic)
    if mode == "forward":                          # no need to learn the output's size first
        return (_jacobian_forward(target, inputs, wrt, limits, notes, *choose_mode(mode, 0, 0))
                or _complex_jacobian(target, inputs, wrt, limits, notes, holomorphic))
    tape = Tape(persistent=True)
    out, boxed, interp = watched_run(target, inputs, wrt, limits, tape)
    value = strip(out)
    if is_complex(value):
        return _complex_jacobian(target, inputs, wrt, limits, notes, holomorphic)
    chosen, reason = choose_mode(mode, in_elements, size_of(value))
    if chosen == "forward":
        return _jacobian_forward(target, inputs, wrt, limits, notes, chosen, reason, size_of(value))
    out_shape = shape_of(value)
    check_result_elements("Jacobian", size_of(value) * in_elements, limits)
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
    return JacobianResult(value=on_host(value), jacobian=jac, inputs=on_host(inputs), mode="reverse", reason=reason,
                          passes=size_of(value), unconnected=[w for w in wrt if w not in touched],
                          signature=interp.signature, kinks=unique_kinks(notes.kinks), steps=interp.steps,
                          detached=detached_places(notes.detached), rules=list(notes.rules))


def _complex_jacobian(target, inputs, wrt, limits, notes, holomorphic) -> JacobianResult:
    got = complex_derivatives.jacobian(jvp, target, inputs, wrt, limits, holomorphic)
    value, interp = first_or_plain_run(got["first"], target, inputs, limits)
    return JacobianResult(value=on_host(value), jacobian=got["jacobian"], inputs=on_host(inputs), mode="forward",
                          reason=COMPLEX_REASON, passes=got["passes"],
                          unconnected=[w for w in wrt if w not in got["touched"]], signature=interp.signature,
                          kinks=unique_kinks(notes.kinks), steps=interp.steps,
                          detached=detached_places(notes.detached), rules=list(notes.rules), layout=got["layout"],
                          holomorphic=holomorphic)


def _jacobian_forward(target, inputs, wrt, limits, notes, mode, reason, out_size=0):
    """All input elements in one pass (chunked under a memory budget): the inputs carry stacked
    basis tangents, and the output's tangent stack holds the Jacobian's columns. None where the
    output is complex (the caller takes _complex_jacobian's way)."""
    columns, touched, first, passes = {}, set(), None, 0
    for w in wrt:
        chunks = []
        for start, stop, tangents in basis_chunks(inputs[w], out_size):
            level = new_level()
            with batched(level, stop - start, structured=is_structured(tangents)):
                out, interp = run(target, {**inputs, w: Dual(inputs[w], tangents, level)}, limits)
            passes += 1
            value = strip(out)
            if is_complex(value):
                return None
            if first is None:                     # the output's size is known after one pass
                check_result_elements("Jacobian", size_of(value) * sum(size_of(inputs[v]) for v in wrt), limits)
            first = first or (value, interp)
            t = stacked_tangent_of(out, level, shape_of(value), stop - start, by_columns=True)
            if t is not None:
                touched.add(w)
            chunks.append((start, stop, t))
        columns[w] = chunks
    value, interp = first_or_plain_run(first, target, inputs, limits)
    out_shape = shape_of(value)
    jac = {}
    for w in wrt:
        flat = np().zeros((size_of(value), size_of(inputs[w])), dtype=dtype())
        for start, stop, t in columns[w]:
            if t is not None:
                flat[:, start:stop] = to_host(t).T
        jac[w] = finish(flat.reshape(out_shape + shape_of(inputs[w])) + 0.0)
    return JacobianResult(value=on_host(value), jacobian=jac, inputs=on_host(inputs), mode=mode, reason=reason,
                          passes=passes,
                          unconnected=[w for w in wrt if w not in touched], signature=interp.signature,
                          kinks=unique_kinks(notes.kinks), steps=interp.steps,
                          detached=detached_places(notes.detached), rules=list(notes.rules))


__all__ = ["jvp", "gradient", "jacobian", "JacobianResult", "choose_mode"]
