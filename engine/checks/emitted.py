"""`emit --validate`: the emitted module, imported from the file it was written to (our own
generated code, in a namespace of its own), run at a point: its tangent against central
differences of its own primal, its adjoint against the engine's gradient (AD), and the
dot-product test <J u, v> = <u, J^T v> at seeded directions. One row per check, with a verdict.
Numbers and arrays alike: a row holds the largest error over the entries. Complex values are
compared part by part (the largest error of the real and of the imaginary parts, none cast
away), a complex input's differences taken along its real and its imaginary direction apart,
and the dot-product test is Re<., .>, the inner product of C as R^2 (issue 32 items 2, 3): the
reported gradient (dL/dx + i dL/dy) is the gradient of the real and imaginary parts."""
from __future__ import annotations

import importlib.util
import itertools

from ..core.backend import np
from ..core.complexes import is_complex, point_value

_NAMES = itertools.count(1)
AD_RTOL = 1e-12          # the emitted adjoint and the engine's gradient: the same rules, the same numbers
DOT_RTOL = 1e-12
FD_RTOL = 1e-5           # central differences: truncation and rounding
DETACHED = "detached (stop_gradient: differences see through it)"


def imported(path: str, name: str):
    """The emitted module at `path`, imported under a name of its own (not left in sys.modules)."""
    spec = importlib.util.spec_from_file_location(f"_autodiff_emitted_{next(_NAMES)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), getattr(module, f"{name}_vjp", None), getattr(module, f"{name}_jvp", None)


def row(check, what, emitted, reference, rtol) -> dict:
    numpy = np()
    emitted, reference = held(emitted), held(reference)
    error = part_error(emitted, reference)
    scale = max(1.0, float(numpy.max(numpy.abs(reference))) if reference.size else 1.0)
    same_shape = emitted.shape == reference.shape
    ok = same_shape and (error <= rtol * scale or bool(numpy.all(emitted == reference)))
    show = lambda a: a.item() if a.ndim == 0 else a.tolist()      # noqa: E731
    return {"check": check, "of": what, "emitted": show(emitted), "reference": show(reference), "error": error,
            "tolerance": rtol * scale, "verdict": "pass" if ok else "FAIL"}


def held(value):
    """A value as an array of float64, or of complex128 where it is complex (its imaginary part kept)."""
    value = np().asarray(value)
    return value.astype(complex if value.dtype.kind == "c" else float)


def part_error(emitted, reference) -> float:
    """The largest difference of the entries' real parts and of their imaginary parts (a real
    value's imaginary part 0): a wrong imaginary part is an error, never cast away."""
    numpy = np()
    if not emitted.size:
        return 0.0
    difference = emitted - reference
    return float(max(numpy.max(numpy.abs(numpy.real(difference))), numpy.max(numpy.abs(numpy.imag(difference)))))


def pairing(a, b) -> float:
    """Re<a, b> = Re sum(a conj(b)): the real inner product (of C as R^2 for complex values)."""
    numpy = np()
    return float(numpy.real(numpy.sum(numpy.asarray(a) * numpy.conj(numpy.asarray(b)))))


def validate(path: str, name: str, params: list, wrt: list, values: dict, ad_gradient: dict, seed: int = 0,
             detached: bool = False) -> list:
    """The rows of the checks at `values`, `ad_gradient` the engine's gradient by name (a non-scalar
    output's summed, as the seeds' convention: the emitted adjoint's cotangent 1.0), or what
    gives it, asked only where the module has an adjoint; of a complex output, what gives the
    engine's J^H v for a cotangent v (diff/complex_derivatives.py's `hermitian_adjoint`), which
    the emitted adjoint is checked against at a seeded complex v. `detached`:
    the program cuts a derivative (stop_gradient), which differences see through: their rows say
    so rather than fail (as the check table's detached rows do)."""
    numpy = np()
    primal, vjp, jvp = imported(path, name)
    args = [point_value(values[p]) for p in params]
    rng = numpy.random.default_rng(seed)
    rows = []
    if vjp is not None:
        value, grads = vjp(*args)
        check = "adjoint vs AD"
        if is_complex(value):           # J^H v along a seeded complex cotangent, against the engine's Jacobian
            v = _like(value, rng)
            _, grads = vjp(*args, cotangent=v)
            reference, check = ad_gradient(v), "adjoint vs AD (J^H v, a complex cotangent v)"
        else:
            reference = ad_gradient() if callable(ad_gradient) else ad_gradient
        rows += [row(check, w, g, reference[w], AD_RTOL) for w, g in zip(wrt, grads)]
    if jvp is not None:
        for w in wrt:
            rows += [_tangent_row(primal, jvp, params, wrt, args, w, rng, detached, part)
                     for part in (("real", "imaginary") if is_complex(args[params.index(w)]) else (None,))]
    if vjp is not None and jvp is not None:
        u = {w: _like(args[params.index(w)], rng) for w in wrt}
        value, d = jvp(*args, **{f"d_{w}": u[w] for w in wrt})
        v = _like(value, rng)
        _, grads = vjp(*args, cotangent=v)
        left = pairing(d, v)
        right = sum(pairing(u[w], g) for w, g in zip(wrt, grads))
        rows.append(row("dot product <J u, v> = <u, J^T v>", ", ".join(wrt), left, right, DOT_RTOL))
    return rows


def _like(value, rng):
    """A seeded random direction of the value's shape (a number for a number), complex (both
    parts random) for a complex value."""
    shape = np().shape(value)
    if is_complex(value):
        return point_value(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    return rng.standard_normal(shape) if shape else float(rng.standard_normal())


def _tangent_row(primal, jvp, params, wrt, args, w, rng, detached, part=None) -> dict:
    """The tangent along a seeded direction of `w` against central differences of the primal;
    `part` ("real", "imaginary"): of a complex input, the direction along that part alone."""
    numpy = np()
    k = params.index(w)
    u = _like(args[k], rng)
    if part is not None:
        u = point_value(numpy.real(u) if part == "real" else 1j * numpy.imag(u))
    h = 1e-6 * max(1.0, float(numpy.max(numpy.abs(args[k]))))
    up, down = list(args), list(args)
    up[k] = args[k] + h * u
    down[k] = args[k] - h * u
    fd = (numpy.asarray(primal(*up)) - numpy.asarray(primal(*down))) / (2 * h)
    # the other directions zero, of their inputs' shapes (a module emitted at shapes takes no other)
    _, d = jvp(*args, **{f"d_{v}": (u if v == w else 0.0 * numpy.asarray(args[params.index(v)]))
                         for v in wrt})
    out = row("tangent vs central differences" + (f" ({part} part)" if part else ""), w, d, fd, FD_RTOL)
    if detached and out["verdict"] != "pass":
        out["verdict"] = DETACHED
    return out
