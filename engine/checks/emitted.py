"""`emit --validate`: the emitted module, imported from the file it was written to (our own
generated code, in a namespace of its own), run at a point: its tangent against central
differences of its own primal, its adjoint against the engine's gradient (AD), and the
dot-product test <J u, v> = <u, J^T v> at seeded directions. One row per check, with a verdict."""
from __future__ import annotations

import importlib.util
import itertools
import math

from ..core.backend import np

_NAMES = itertools.count(1)
AD_RTOL = 1e-12          # the emitted adjoint and the engine's gradient: the same rules, the same numbers
DOT_RTOL = 1e-12
FD_RTOL = 1e-5           # central differences: truncation and rounding


def imported(path: str, name: str):
    """The emitted module at `path`, imported under a name of its own (not left in sys.modules)."""
    spec = importlib.util.spec_from_file_location(f"_autodiff_emitted_{next(_NAMES)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), getattr(module, f"{name}_vjp", None), getattr(module, f"{name}_jvp", None)


def row(check, what, emitted, reference, rtol) -> dict:
    error = abs(emitted - reference)
    scale = max(1.0, abs(reference))
    ok = error <= rtol * scale or (emitted == reference)
    return {"check": check, "of": what, "emitted": emitted, "reference": reference, "error": error,
            "tolerance": rtol * scale, "verdict": "pass" if ok else "FAIL"}


def validate(path: str, name: str, params: list, wrt: list, values: dict, ad_gradient: dict, seed: int = 0,
             detached: bool = False) -> list:
    """The rows of the checks at `values` (numbers), `ad_gradient` the engine's gradient by name.
    `detached`: the program cuts a derivative (stop_gradient), which differences see through:
    their rows say so rather than fail (as the check table's detached rows do)."""
    primal, vjp, jvp = imported(path, name)
    args = [float(values[p]) for p in params]
    rows = []
    if vjp is not None:
        _, grads = vjp(*args)
        rows += [row("adjoint vs AD", w, float(g), float(ad_gradient[w]), AD_RTOL) for w, g in zip(wrt, grads)]
    if jvp is not None:
        for w in wrt:
            k = params.index(w)
            h = 1e-6 * max(1.0, abs(args[k]))
            up, down = list(args), list(args)
            up[k] += h
            down[k] -= h
            fd = (float(primal(*up)) - float(primal(*down))) / (2 * h)
            _, d = jvp(*args, **{f"d_{v}": float(v == w) for v in wrt})
            fd_row = row("tangent vs central differences", w, float(d), fd, FD_RTOL)
            if detached and fd_row["verdict"] != "pass":
                fd_row["verdict"] = "detached (stop_gradient: differences see through it)"
            rows.append(fd_row)
    if vjp is not None and jvp is not None:
        rng = np().random.default_rng(seed)
        u = rng.standard_normal(len(wrt))
        v = float(rng.standard_normal())
        _, d = jvp(*args, **{f"d_{w}": float(x) for w, x in zip(wrt, u)})
        _, grads = vjp(*args, cotangent=v)
        left, right = float(d) * v, math.fsum(float(a) * float(b) for a, b in zip(u, grads))
        rows.append(row("dot product <J u, v> = <u, J^T v>", ", ".join(wrt), left, right, DOT_RTOL))
    return rows
