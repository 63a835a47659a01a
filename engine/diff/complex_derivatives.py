"""Derivatives of complex values beyond the reverse gradient (issue 32 item 2): forward mode, the
holomorphic derivative f'(z), Jacobians of complex outputs or inputs and Hessians of a real f of
complex inputs. The rules are the table's (core/complexes.py states the convention): a JVP of a
complex-capable entry takes a complex tangent, and a tangent along 1 of a complex input element
gives df/dx there, along 1j df/dy (z = x + iy).

- Real blocks (the default): each complex value is the pair (re, im); a complex input's element
  moves along 1 and along 1j, one forward pass each, and a result's trailing axes are the
  output's (re, im) then the input's (re, im), each only where that side is complex (`layout`).
- Holomorphic (`derivative`, `jacobian --holomorphic`): f'(z) = df/dx, valid where the
  Cauchy-Riemann equations hold, df/dy = i df/dx, to the rounding, and no entry that is not
  holomorphic (the table's `holomorphic` field: abs, conj, real, imag, angle) is on the path;
  refused otherwise, naming both.
- Hessian of a real f: forward over reverse, one pass per real direction. The sweep's adjoint of
  a complex input is df/dx - i df/dy, so its tangent's real part and minus its imaginary part
  are the rows of the second derivatives in x and y.
"""
from __future__ import annotations

import math

from ...parser.errors import SourceError, option
from ..core.backend import np, to_host, xp
from ..core.complexes import as_complex_number, complex_dtype, is_complex
from ..core.rules.complexes import complex_output_error, reported_gradient
from ..core.tape import Dual, Tape, Var, new_level, strip
from ..lang.values import dtype, shape_of, size_of
from .common import check_result_elements, finish, run, tangent_of, unit, watched_run

ROUNDING = 64          # Cauchy-Riemann holds where |df/dy - i df/dx| <= ROUNDING eps (|df/dx| + |df/dy|)


def _finish(a):
    """A result array in the run's dtype, or its paired complex dtype; 0-d as a number."""
    if np().iscomplexobj(a):
        a = np().asarray(a, dtype=complex_dtype(dtype()))
        return a[()] if a.ndim == 0 else a
    return finish(np().asarray(a, dtype=dtype()))


def as_number(v):
    """A complex derivative of a scalar as a number of the run's complex dtype."""
    return _finish(np().asarray(v))


def any_complex(inputs: dict, names) -> bool:
    return any(is_complex(inputs[n]) for n in names)


def directions(x) -> tuple:
    """The real directions of an input's element: 1, and 1j for a complex input."""
    return (1.0, 1j) if is_complex(x) else (1.0,)


def element_tangent(x, k: int, direction):
    """The tangent moving element k of input x along `direction` (1 or 1j), in x's dtype."""
    if direction == 1.0:
        u = unit(x, k)
        return u if not is_complex(x) or shape_of(x) else as_complex_number(1.0, dtype())
    if not shape_of(x):
        return as_complex_number(1j, dtype())
    u = xp().zeros(shape_of(x), dtype=complex_dtype(dtype()))
    u.reshape(-1)[k] = 1j
    return u


def as_flat_complex(t, shp) -> object:
    """A tangent (None: no dependence) as a flat complex128 host array of shape `shp`'s size."""
    a = np().zeros(shp, dtype=np().complex128)
    if t is not None:
        a[...] = to_host(strip(t))
    return a.reshape(-1)


def tangent_columns(jvp, target, inputs, name, limits):
    """Per element of input `name` and per real direction of it, the output's tangent (flat,
    complex128): an array (elements, directions, output elements), with the value and the
    interpreter of the first pass and the number of passes."""
    x, columns, first = inputs[name], [], None
    for k in range(size_of(x)):
        row = []
        for d in directions(x):
            value, t, interp = jvp(target, inputs, {name: element_tangent(x, k, d)}, limits)
            first = first or (value, interp)
            row.append(as_flat_complex(t, shape_of(value)))
        columns.append(row)
    width = size_of(first[0]) if first else 0
    array = np().asarray(columns, dtype=np().complex128).reshape(size_of(x), len(directions(x)), width)
    return array, first


def cauchy_riemann_holds(dfdx, dfdy, eps: float) -> bool:
    """Whether df/dy = i df/dx everywhere, to the rounding."""
    dfdx, dfdy = np().asarray(dfdx), np().asarray(dfdy)
    slack = ROUNDING * eps * (np().abs(dfdx) + np().abs(dfdy)) + np().finfo(np().float64).tiny
    return bool((np().abs(dfdy - 1j * dfdx) <= slack).all())


def not_holomorphic_steps(target, inputs, names, limits) -> list:
    """'abs (1:5)', ...: the entries on the path from `names` to the output that are not
    holomorphic (the table's field), once per place, from one taped run (an entry whose value
    never reaches the output, as eig's vectors beside the eigenvalues asked for, is not on it)."""
    tape = Tape()
    out, _, _ = watched_run(target, inputs, names, limits, tape)
    seen = []
    for entry in _reaching(tape, out):
        prim = entry.prim
        if prim is not None and not prim.holomorphic:
            span = entry.span
            place = f"{prim.builtin or prim.name}" + (f" ({span.line}:{span.column})" if span else "")
            if place not in seen:
                seen.append(place)
    return seen


def _reaching(tape, out) -> list:
    """The tape's entries the output depends on, in tape order (every entry where the output is
    not one value of this tape)."""
    if out.__class__ is not Var or out.tape is not tape:
        return tape.entries
    needed = {out.index}
    for i in range(out.index, -1, -1):
        if i in needed:
            needed.update(j for _, j in tape.entries[i].parents)
    return [e for i, e in enumerate(tape.entries) if i in needed]


def refuse_unless_holomorphic(target, inputs, names, limits, dfdx, dfdy, real_output: bool) -> None:
    """Raise where f is not holomorphic in the complex inputs `names` at this point: a real
    output, Cauchy-Riemann failing (dfdx, dfdy: flat arrays of df/dx, df/dy), or an entry that
    is not holomorphic on the path. The message gives the reason and what to run instead."""
    steps = not_holomorphic_steps(target, inputs, names, limits)
    eps = float(np().finfo(dtype()).eps)
    holds = cauchy_riemann_holds(dfdx, dfdy, eps)
    if holds and not steps and not real_output:
        return
    reasons = []
    if real_output:
        reasons.append("the output is real, and a real function of z is holomorphic only where it is constant")
    if not holds:
        bad = int(np().argmax(np().abs(np().asarray(dfdy) - 1j * np().asarray(dfdx))))
        x, y = np().asarray(dfdx).reshape(-1)[bad], np().asarray(dfdy).reshape(-1)[bad]
        reasons.append(f"the Cauchy-Riemann equations fail: df/dy = {_c(y)} but i df/dx = {_c(1j * x)}")
    if steps:
        reasons.append("on its path: " + ", ".join(steps) + " (not holomorphic)")
    raise SourceError("not holomorphic", f"f is not holomorphic in {', '.join(names)} here: " + "; ".join(reasons),
                      None, "for a real f, `autodiff grad` gives df/dx + i df/dy (PyTorch's convention); "
                      f"`autodiff jacobian` without {option('holomorphic')} gives the real 2x2 blocks "
                      "d(re, im) f / d(re, im) z",
                      source=target.source, filename=target.filename)


def _c(v) -> str:
    v = complex(v)
    return f"{v.real:.6g}{v.imag:+.6g}j"


def real_blocks(columns, out_shape, in_shape, out_complex: bool, in_complex: bool):
    """columns (elements, directions, output elements) as the real blocks: output.shape +
    input.shape, then (re, im) of the output where complex, then (re, im) of the input where complex."""
    a = np().moveaxis(columns, 2, 0)                        # (out, in, directions)
    if out_complex:
        a = np().stack([a.real, a.imag], axis=2)           # (out, in, out part, directions)
    else:
        a = a.real
    if not in_complex:
        a = a[..., 0]
    tail = ((2,) if out_complex else ()) + ((2,) if in_complex else ())
    return np().ascontiguousarray(a).reshape(tuple(out_shape) + tuple(in_shape) + tail) + 0.0


def holomorphic_blocks(derivative, out_shape, in_shape, in_complex: bool):
    """f'(z) (out.shape + in.shape, a --holomorphic Jacobian) as `real_blocks` lays out the
    default one: the tangent along 1 is f', along 1j it is i f' (df/dy = i df/dx), so each
    complex input's block is [[Re f', -Im f'], [Im f', Re f']] ((Re f', Im f') for a real input)."""
    out_size, in_size = math.prod(out_shape), math.prod(in_shape)
    f = np().asarray(to_host(derivative), dtype=np().complex128).reshape(out_size, in_size).T
    columns = np().empty((in_size, 2 if in_complex else 1, out_size), dtype=np().complex128)
    columns[:, 0, :] = f
    if in_complex:                          # i f' part by part: no product, no nan from 0 * inf
        along_1j = columns[:, 1, :]
        along_1j.real, along_1j.imag = -f.imag, f.real
    return real_blocks(columns, out_shape, in_shape, True, in_complex)


def layout_text(name: str, out_complex: bool, in_complex: bool, what="output") -> str | None:
    """How a block's axes read, where a side is complex; None where both are real."""
    if not (out_complex or in_complex):
        return None
    axes = [f"{what} index", f"{name} index"]
    if out_complex:
        axes.append(f"(re, im) of the {what}")
    if in_complex:
        axes.append(f"(re, im) of {name}")
    return "[" + ", ".join(axes) + "]"


def jacobian(jvp, target, inputs, wrt, limits, holomorphic=False) -> dict:
    """The Jacobian where a complex value is involved, one forward pass per real direction of
    each input element: {"first": (value, interpreter), "jacobian", "layout", "passes", "touched"}."""
    check_result_elements("Jacobian", sum(size_of(inputs[v]) * len(directions(inputs[v])) for v in wrt), limits)
    found, first = {}, None
    for w in wrt:
        columns, got = tangent_columns(jvp, target, inputs, w, limits)
        if first is None and got is not None:
            first = got
            check_result_elements("Jacobian", size_of(got[0]) * sum(size_of(inputs[v]) * len(directions(inputs[v]))
                                                                    for v in wrt), limits)
        found[w] = columns
    if first is None:                  # no input elements: a plain run gives the value
        out, interp = run(target, inputs, limits)
        first = (strip(out), interp)
    value = first[0]
    jac, layout = {}, {}
    for w, columns in found.items():
        columns = columns.reshape(columns.shape[:2] + (size_of(value),))
        out_c, in_c = is_complex(value), is_complex(inputs[w])
        if holomorphic:
            if in_c:
                refuse_unless_holomorphic(target, inputs, [w], limits, columns[:, 0, :], columns[:, 1, :], not out_c)
            block = np().moveaxis(columns[:, 0, :], 1, 0).reshape(shape_of(value) + shape_of(inputs[w]))
            jac[w] = _finish(block if out_c or in_c else block.real.copy())
        else:
            jac[w] = _finish(real_blocks(columns, shape_of(value), shape_of(inputs[w]), out_c, in_c))
            text = layout_text(w, out_c, in_c)
            if text:
                layout[w] = text
    return {"first": first, "jacobian": jac, "layout": layout, "touched": {w for w, c in found.items() if c.any()},
            "passes": sum(c.shape[0] * c.shape[1] for c in found.values())}


def holomorphic_first_derivative(jvp, target, inputs, name, limits):
    """f'(z) of a complex scalar input z, after checking f is holomorphic there."""
    columns, (value, interp) = tangent_columns(jvp, target, inputs, name, limits)
    refuse_unless_holomorphic(target, inputs, [name], limits, columns[:, 0, :], columns[:, 1, :],
                              not is_complex(value))
    return value, interp


def hessian_rows(gradient_pass, target, inputs, wrt, limits):
    """The Hessian of a real f where an input is complex: forward over reverse, one pass per
    real direction of each input element. Returns (value, sweep adjoints, {a: {b: block}},
    layout, passes, interpreter); a block has shape a.shape + b.shape, then (re, im) of a's
    element where a is complex, then (re, im) of b's where b is complex."""
    rows = {a: {b: np().zeros((size_of(inputs[a]), len(directions(inputs[a])), size_of(inputs[b]),
                                len(directions(inputs[b])))) for b in wrt} for a in wrt}
    first, passes = None, 0
    for a in wrt:
        for k in range(size_of(inputs[a])):
            for p, d in enumerate(directions(inputs[a])):
                level = new_level()
                values = {**inputs, a: Dual(inputs[a], element_tangent(inputs[a], k, d), level)}
                out, grads, interp = gradient_pass(target, values, wrt, limits)
                passes += 1
                if first is None:
                    first = (strip(out), {w: strip(g) for w, g in grads.items()}, interp)
                    if is_complex(strip(out)):
                        raise SourceError("bad output", complex_output_error("the output"), None,
                                          source=target.source, filename=target.filename)
                for b in wrt:
                    t = as_flat_complex(tangent_of(grads[b], level, shape_of(inputs[b])), shape_of(inputs[b]))
                    # the adjoint's tangent: d(df/dx) - i d(df/dy) for a complex b, d(df/db) for a real one
                    rows[a][b][k, p, :, 0] = t.real
                    if is_complex(inputs[b]):
                        rows[a][b][k, p, :, 1] = -t.imag
    if first is None:                  # no input elements: the value and the (empty) gradient alone
        out, grads, interp = gradient_pass(target, inputs, wrt, limits)
        first = (strip(out), grads, interp)
    blocks, layout = {}, {}
    for a in wrt:
        blocks[a] = {}
        for b in wrt:
            r = np().moveaxis(rows[a][b], 1, 2)          # (a elements, b elements, a part, b part)
            if not is_complex(inputs[a]):
                r = r[:, :, 0]
            if not is_complex(inputs[b]):
                r = r[..., 0]
            tail = ((2,) if is_complex(inputs[a]) else ()) + ((2,) if is_complex(inputs[b]) else ())
            blocks[a][b] = _finish(np().ascontiguousarray(r).reshape(shape_of(inputs[a]) + shape_of(inputs[b]) + tail)
                                  + 0.0)
            text = layout_text(b, is_complex(inputs[a]), is_complex(inputs[b]), what=a)
            if text:
                layout.setdefault(a, {})[b] = text.replace(f"(re, im) of the {a}", f"(re, im) of {a}")
    return first, blocks, layout, passes


def reported(grads: dict, inputs: dict) -> dict:
    """The gradient a Hessian reports beside it, in grad's convention (PyTorch's)."""
    out = {}
    for w, g in grads.items():
        g = reported_gradient(strip(g), inputs[w]) if g is not None else 0.0 * inputs[w]
        a = np().zeros(shape_of(inputs[w]), dtype=complex_dtype(dtype()) if is_complex(inputs[w]) else dtype())
        v = to_host(strip(g))
        a[...] = v if is_complex(inputs[w]) else np().real(v)
        out[w] = _finish(a + 0.0)
    return out


def forward_gradient(jvp, target, inputs, wrt, limits, weights=None):
    """The gradient of a real f by forward mode where an input is complex: df/dx + i df/dy per
    element of a complex input (grad's convention), df/dx of a real one; a non-scalar output is
    summed, or contracted with `weights(value)` (the seed v of vᵀJ as an array of the output's
    shape). Returns (value and interpreter, grads, touched)."""
    grads, touched, first = {}, set(), None
    for w in wrt:
        columns, got = tangent_columns(jvp, target, inputs, w, limits)
        first = first or got
        if got is not None and is_complex(got[0]):
            raise SourceError("bad output", complex_output_error("the output"), None,
                              source=target.source, filename=target.filename)
        if weights is not None and got is not None:
            columns = columns * np().asarray(to_host(strip(weights(got[0]))), dtype=np().float64).reshape(-1)
        sums = columns.real.sum(axis=2)
        if columns.any():
            touched.add(w)
        complex_input = is_complex(inputs[w])
        g = sums[:, 0] + 1j * sums[:, 1] if complex_input else sums[:, 0]
        g = np().asarray(g, dtype=complex_dtype(dtype()) if complex_input else dtype())
        grads[w] = _finish(g.reshape(shape_of(inputs[w])) + 0.0)
    return first, grads, touched


__all__ = ["any_complex", "jacobian", "hessian_rows", "holomorphic_first_derivative", "forward_gradient",
           "reported"]


def hermitian_adjoint(jacobian: dict, value, inputs: dict, cotangent) -> dict:
    """J^H v for each input of a Jacobian's real blocks (`jacobian`: name -> block, the default
    layout: the output's axes, the input's, then (re, im) of the output and of the input where
    complex): the real transpose of the blocks applied to v's (re, im) parts, each complex input's
    pair read back as x + iy. It is what an adjoint seeded with v returns in the reported
    gradient's convention (PyTorch's): Re<J u, v> = Re<u, J^H v>, Re<a, b> = Re sum(a conj(b));
    for a real output and v = 1, the gradient `grad` reports (emit's f_vjp, issue 32)."""
    numpy = np()
    value = numpy.asarray(to_host(strip(value)))
    v = numpy.broadcast_to(numpy.asarray(cotangent), value.shape).reshape(-1)
    parts = numpy.stack([v.real, v.imag], axis=-1) if value.dtype.kind == "c" else v.real[:, None]
    out = {}
    for name, block in jacobian.items():
        x = numpy.asarray(to_host(strip(inputs[name])))
        complex_in = x.dtype.kind == "c"
        b = numpy.asarray(block, dtype=float).reshape(v.size, x.size, parts.shape[1], 2 if complex_in else 1)
        g = numpy.einsum("op,oipd->id", parts, b)
        out[name] = (g[:, 0] + 1j * g[:, 1] if complex_in else g[:, 0]).reshape(x.shape)
    return out
