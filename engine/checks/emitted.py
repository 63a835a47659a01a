"""`emit --validate`: the emitted module, imported from the file it was written to (our own
generated code, in a namespace of its own), run at a point: its tangent against central
differences of its own primal, its adjoint against the engine's gradient (AD), and the
dot-product test <J u, v> = <u, J^T v> at seeded directions. One row per check, with a verdict.
Numbers and arrays alike: a row holds the largest error over the entries."""
from __future__ import annotations

import importlib.util
import itertools

from ..core.backend import np

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
    emitted, reference = numpy.asarray(emitted, dtype=float), numpy.asarray(reference, dtype=float)
    error = float(numpy.max(numpy.abs(emitted - reference))) if emitted.size else 0.0
    scale = max(1.0, float(numpy.max(numpy.abs(reference))) if reference.size else 1.0)
    same_shape = emitted.shape == reference.shape
    ok = same_shape and (error <= rtol * scale or bool(numpy.all(emitted == reference)))
    show = lambda a: float(a) if a.ndim == 0 else a.tolist()      # noqa: E731
    return {"check": check, "of": what, "emitted": show(emitted), "reference": show(reference), "error": error,
            "tolerance": rtol * scale, "verdict": "pass" if ok else "FAIL"}


def validate(path: str, name: str, params: list, wrt: list, values: dict, ad_gradient: dict, seed: int = 0,
             detached: bool = False) -> list:
    """The rows of the checks at `values`, `ad_gradient` the engine's gradient by name (a non-scalar
    output's summed, as the seeds' convention: the emitted adjoint's cotangent 1.0). `detached`:
    the program cuts a derivative (stop_gradient), which differences see through: their rows say
    so rather than fail (as the check table's detached rows do)."""
    numpy = np()
    primal, vjp, jvp = imported(path, name)
    args = [numpy.asarray(values[p], dtype=float) if numpy.ndim(values[p]) else float(values[p]) for p in params]
    rng = numpy.random.default_rng(seed)
    rows = []
    if vjp is not None:
        _, grads = vjp(*args)
        rows += [row("adjoint vs AD", w, g, ad_gradient[w], AD_RTOL) for w, g in zip(wrt, grads)]
    if jvp is not None:
        for w in wrt:
            rows.append(_tangent_row(primal, jvp, params, wrt, args, w, rng, detached))
    if vjp is not None and jvp is not None:
        u = {w: _like(args[params.index(w)], rng) for w in wrt}
        value, d = jvp(*args, **{f"d_{w}": u[w] for w in wrt})
        v = _like(value, rng)
        _, grads = vjp(*args, cotangent=v)
        left = float(numpy.sum(numpy.asarray(d) * v))
        right = float(sum(numpy.sum(u[w] * numpy.asarray(g)) for w, g in zip(wrt, grads)))
        rows.append(row("dot product <J u, v> = <u, J^T v>", ", ".join(wrt), left, right, DOT_RTOL))
    return rows


def _like(value, rng):
    """A seeded random direction of the value's shape (a number for a number)."""
    shape = np().shape(value)
    return rng.standard_normal(shape) if shape else float(rng.standard_normal())


def _tangent_row(primal, jvp, params, wrt, args, w, rng, detached) -> dict:
    """The tangent along a seeded direction of `w` against central differences of the primal."""
    numpy = np()
    k = params.index(w)
    u = _like(args[k], rng)
    h = 1e-6 * max(1.0, float(numpy.max(numpy.abs(args[k]))))
    up, down = list(args), list(args)
    up[k] = args[k] + h * u
    down[k] = args[k] - h * u
    fd = (numpy.asarray(primal(*up), dtype=float) - numpy.asarray(primal(*down), dtype=float)) / (2 * h)
    # the other directions zero, of their inputs' shapes (a module emitted at shapes takes no other)
    _, d = jvp(*args, **{f"d_{v}": (u if v == w else 0.0 * numpy.asarray(args[params.index(v)]))
                         for v in wrt})
    out = row("tangent vs central differences", w, d, fd, FD_RTOL)
    if detached and out["verdict"] != "pass":
        out["verdict"] = DETACHED
    return out
