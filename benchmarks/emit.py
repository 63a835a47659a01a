"""`autodiff emit`'s adjoint against the engine (issue 31 item 6): the gradient of each eval by
the emitted numpy module (`f_vjp`, imported from the file `emit` wrote) and by
`autodiff.function(...).value_and_grad` (compiled once, replayed after the first calls), with
PyTorch eager and JAX jit columns where they import. The GradBench-style evals of
gradbench_evals.py are tried first, at their small and medium sizes (emit writes each at the
shapes of its inputs, given as the point); one emit cannot write yet gets its row with the message
the user gets. Then the scalar programs (loops, recursion, helpers) emit can write.

    python benchmarks/emit.py [--repeats 50] [--evals llsq,ode,...]

Not a timed test: numbers depend on the machine and its load. The answers are compared (the
emitted gradient must equal the engine's to 1e-12, relative).

Dated runs: docs/performance.md, "Emitted adjoints"."""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
SAMPLES = os.path.join(HERE, "..", "samples", "programs")

# GradBench-style loops on numbers, where every engine's per-operation cost shows
SCALAR_EVALS = {
    "ode_scalar": ("""
def f(x, y0):
    y = y0
    h = 0.01
    for k in range(20):
        y = y + h * (x - y * y)
    return y
""", {"x": 0.8, "y0": 0.3}),
    "euler_decay": (os.path.join(SAMPLES, "euler_decay.py"), {"k": 0.5, "y0": 2.0}),
    "newton_sqrt": (os.path.join(SAMPLES, "newton_sqrt.py"), {"a": 2.0}),
    "recursive_power": (os.path.join(SAMPLES, "recursive_power.py"), {"x": 1.5}),
    "language_tour": (os.path.join(SAMPLES, "language_tour.py"), {"x": 0.5, "y": 2.0}),
    "fibonacci": (os.path.join(SAMPLES, "fibonacci.py"), {"x": 2.0}),
}


def median_time(call, repeats) -> float:
    call()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def source_file(source: str, folder: str, name: str) -> str:
    if os.path.isfile(source):
        return source
    path = os.path.join(folder, f"{name}.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(source)
    return path


def emitted_vjp(path: str, folder: str, name: str, at: dict):
    """The emitted module's f_vjp (written at the shapes of `at`), or the message emit gives."""
    from autodiff.engine import api
    from autodiff.parser.errors import SourceError
    try:
        text = api.emit(path, mode="adjoint", at=at)
    except SourceError as exc:
        where = f" (line {exc.span.line})" if exc.span else ""
        return None, f"{exc.message}{where}"
    out = os.path.join(folder, f"{name}_adjoint.py")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(text)
    spec = importlib.util.spec_from_file_location(f"bench_{name}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f_vjp, None


def row(name, path, at, repeats, folder) -> dict:
    import numpy
    import autodiff
    f = autodiff.function(path)
    ours = median_time(lambda: f.value_and_grad(at), repeats)
    value, grads = f.value_and_grad(at)
    vjp, why = emitted_vjp(path, folder, name, at)
    result = {"eval": name, "autodiff": ours, "emitted": None, "note": why or ""}
    if vjp is not None:
        args = [at[p] for p in f.target.inputs] if hasattr(f, "target") else list(at.values())
        result["emitted"] = median_time(lambda: vjp(*args), repeats)
        v, g = vjp(*args)
        same = all(numpy.allclose(a, grads[k], rtol=1e-12, atol=1e-12) for k, a in zip(list(at), g))
        result["note"] = "same gradient" if same and math.isclose(float(v), float(value), rel_tol=1e-12) \
            else "GRADIENTS DIFFER"
    return result


def gradbench_rows(names, repeats, folder, columns=()) -> list:
    """Each eval at its small and medium sizes; `columns`: the peers timed beside it in this
    process (gradbench.py's torch and JAX children: torch eager on one thread, jax.jit of
    value_and_grad in float64 on one thread, compile time left out), their medians."""
    from gradbench import child_jax, child_torch
    from gradbench_evals import PROGRAMS, SIZES, inputs
    peers = {"torch": child_torch, "jax": child_jax}
    rows = []
    for name in names:
        path = source_file(PROGRAMS[name], folder, name)
        for label, size in (("small", SIZES[name][0]), ("medium", SIZES[name][1])):
            r = row(f"{name} ({label} {size})", path, inputs(name, size), repeats, folder)
            for peer in columns:
                if name in peer_functions(peer):
                    r[peer] = statistics.median(peers[peer](name, size, repeats, 5)["times"])
            rows.append(r)
    return rows


def peer_functions(peer) -> dict:
    module = __import__("gradbench_torch" if peer == "torch" else "gradbench_jax")
    return module.FUNCTIONS


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--evals", default="llsq,lse,kmeans,ode,gmm,lstm,nested")
    args = parser.parse_args(argv)
    columns = []
    for module in ("torch", "jax"):
        try:
            if module == "jax":
                from gradbench import import_jax
                import_jax()                # CPU, float64, one thread, set before jax loads
            __import__(module)
            columns.append(module)
        except ImportError:
            print(f"({module} does not import here: its column is left out)")
    with tempfile.TemporaryDirectory() as folder:
        rows = gradbench_rows([e for e in args.evals.split(",") if e], args.repeats, folder, columns)
        for name, (source, at) in SCALAR_EVALS.items():
            rows.append(row(name, source_file(source, folder, name), at, args.repeats, folder))
    peers = "".join(f" {'torch eager' if c == 'torch' else 'JAX jit':>13}" for c in columns)
    print(f"{'eval':<22} {'autodiff.function':>18} {'emitted f_vjp':>14} {'speed-up':>9}{peers}  note")
    for r in rows:
        emitted = f"{r['emitted'] * 1e6:11.1f} µs" if r["emitted"] is not None else f"{'-':>14}"
        ratio = f"{r['autodiff'] / r['emitted']:8.1f}x" if r["emitted"] else f"{'-':>9}"
        others = "".join(f" {r[c] * 1e6:10.1f} µs" if c in r else f" {'-':>13}" for c in columns)
        print(f"{r['eval']:<22} {r['autodiff'] * 1e6:15.1f} µs {emitted} {ratio}{others}  {r['note']}")


if __name__ == "__main__":
    main()
