"""The 20-op elementwise chain's gradient on numpy (CPU), on cupy (GPU) and, where importable, with
PyTorch on the GPU, side by side, with medians (a benchmark, not a test). Run by benchmarks/gpu.sh.

    python benchmarks/gpu_chain.py [--sizes 1e6,1e7,1e8] [--repeats 5] [--dry-run]

Each engine runs in its own fresh process (`--worker ENGINE SIZE REPEATS` prints one JSON line):
a CUDA context or torch's allocator must not change another engine's numbers. On the GPU the input
is already on the device (x = cupy.asarray / torch.tensor(device="cuda")), every timed call ends
with the gradient back on the host (our API returns host arrays; torch's is copied with .cpu()),
so each figure includes the one device-to-host transfer and the synchronization. Targets (issue
12): ours on the GPU at least 20x ours on the CPU at 1e8, and at most 1.5x PyTorch on the GPU.
--dry-run checks the plumbing on this machine in seconds: 1e3 elements, one repeat, the engines
it finds (a missing one is reported, not an error). With AUTODIFF_BENCH_STANDIN=1 "ours-gpu" runs
on the tests' strict CPU stand-in for cupy (tests/strict_cupy.py): the GPU path's plumbing,
checked without a GPU (its timings mean nothing).
On the GPU our sweep takes the fused path, as numexpr's on the CPU does at these sizes: each
elementwise VJP of the table over a large array runs as one cupy ElementwiseKernel generated from
its rule (engine/core/device_kernels.py); the row says how many kernels it compiled.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Twenty elementwise ops, one a line, then the sum that makes the output a scalar.
CHAIN = """
def f(x):
    y = sin(x)
    y = y * x
    y = y + 1.5
    y = tanh(y)
    y = y * y
    y = exp(y)
    y = y - x
    y = cos(y)
    y = y * 0.5
    y = y + x
    y = sigmoid(y)
    y = y * x
    y = y * y
    y = y + 1.0
    y = log(y)
    y = y + 1.0
    y = sqrt(y)
    y = y * x
    y = sin(y)
    y = y / 3.0
    return sum(y)
"""
CHAIN_OPS = 20
ENGINES = {"ours-cpu": "ours, numpy (CPU)", "ours-gpu": "ours, cupy (GPU)", "torch-gpu": "PyTorch (GPU)"}


def point(size: int):
    import numpy
    return numpy.linspace(-2.0, 2.0, size)


def ours(device: str, size: int):
    """A call computing our gradient at `size` elements on `device`, and its first result."""
    from autodiff.engine import api
    from autodiff.engine.core import backend
    if os.environ.get("AUTODIFF_BENCH_STANDIN") == "1":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        import strict_cupy
        backend.provide_gpu_module(strict_cupy)
    api.use_device(device)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as program:
        program.write(CHAIN)
    target = api.load(program.name)
    os.unlink(program.name)
    x = backend.xp().asarray(point(size))          # on the device before the clock starts

    def call():
        return api.grad(None, at={"x": x}, target=target).gradient["x"]
    return call


def torch_gpu(size: int):
    """The same chain in PyTorch eager on CUDA; the gradient comes back to the host."""
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch finds no CUDA device")
    x0 = torch.tensor(point(size), device="cuda")

    def call():
        x = x0.clone().requires_grad_(True)
        y = torch.sin(x) * x + 1.5
        y = torch.exp(torch.tanh(y) ** 2) - x
        y = torch.cos(y) * 0.5 + x
        y = torch.sigmoid(y) * x
        y = torch.sqrt(torch.log(y * y + 1.0) + 1.0) * x
        y = torch.sin(y) / 3.0
        y.sum().backward()
        return x.grad.cpu().numpy()
    return call


def worker(engine: str, size: int, repeats: int) -> dict:
    """Time one engine in this (fresh) process: a warm-up call, then `repeats` timed calls."""
    try:
        call = torch_gpu(size) if engine == "torch-gpu" else ours(engine.split("-")[1], size)
        first = call()
    except Exception as exc:                        # a missing engine is a row that says why
        return {"engine": engine, "size": size, "skipped": f"{type(exc).__name__}: {exc}"}
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    head = [float(v) for v in first[:3]]
    row = {"engine": engine, "size": size, "samples": samples, "median": statistics.median(samples), "head": head}
    if engine == "ours-gpu":                        # the fused path: VJPs as device kernels
        from autodiff.engine.core import device_kernels
        row["fused_kernels"] = sum(1 for kernel in device_kernels.KERNELS.values() if kernel is not None)
    return row


def run_worker(engine: str, size: int, repeats: int, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--worker", engine, str(size), str(repeats)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"engine": engine, "size": size, "skipped": f"took over {timeout:.0f} s"}
    if p.returncode != 0 or not p.stdout.strip():
        return {"engine": engine, "size": size, "skipped": (p.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def table(rows: list, sizes: list) -> str:
    """One line per size: each engine's median, and the ratios the targets name."""
    by = {(r["engine"], r["size"]): r for r in rows}
    lines = [f"{'elements':>10}  " + "  ".join(f"{ENGINES[e]:>20}" for e in ENGINES)
             + f"  {'cpu/gpu (>= 20x)':>17}  {'gpu/torch (<= 1.5x)':>20}"]
    for n in sizes:
        cells, med = [], {}
        for e in ENGINES:
            r = by.get((e, n), {})
            med[e] = r.get("median")
            cells.append(f"{med[e]:>19.4f}s" if med[e] else f"{'skipped':>20}")
        speedup = f"{med['ours-cpu'] / med['ours-gpu']:.1f}x" if med["ours-cpu"] and med["ours-gpu"] else "-"
        vs_torch = f"{med['ours-gpu'] / med['torch-gpu']:.2f}x" if med["ours-gpu"] and med["torch-gpu"] else "-"
        lines.append(f"{n:>10.0e}  " + "  ".join(cells) + f"  {speedup:>17}  {vs_torch:>20}")
    notes = sorted({f"{r['engine']}: {r['skipped']}" for r in rows if "skipped" in r})
    return "\n".join(lines + [f"skipped {n}" for n in notes])


def agreement(rows: list) -> list:
    """The first gradient entries of every engine at each size should agree to rounding."""
    out = []
    for n in sorted({r["size"] for r in rows}):
        heads = {r["engine"]: r["head"] for r in rows if r["size"] == n and "head" in r}
        ref = heads.get("ours-cpu")
        for e, h in heads.items():
            if ref is not None and e != "ours-cpu":
                worst = max(abs(a - b) / max(abs(b), 1e-300) for a, b in zip(h, ref))
                out.append(f"{n:.0e} {e}: first entries within {worst:.1e} (relative) of ours on the CPU")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7,1e8")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per engine and size")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--worker", nargs=3, metavar=("ENGINE", "SIZE", "REPEATS"))
    args = parser.parse_args(argv)
    if args.worker:
        engine, size, repeats = args.worker
        print(json.dumps(worker(engine, int(size), int(repeats))))
        return 0
    sizes = [1000] if args.dry_run else [int(float(s)) for s in args.sizes.split(",")]
    repeats = 1 if args.dry_run else args.repeats
    print(f"the {CHAIN_OPS}-op elementwise chain's gradient, float64, median of {repeats} "
          f"(each engine in a fresh process{'; dry run' if args.dry_run else ''})", flush=True)
    rows = []
    for n in sizes:
        for e in ENGINES:
            rows.append(run_worker(e, n, max(1, repeats if n < 10 ** 8 else min(repeats, 3)), args.timeout))
            fused_note = (f" ({rows[-1]['fused_kernels']} fused VJP kernels)" if "fused_kernels" in rows[-1]
                          else "")
            print(f"  {e} at {n:.0e}: " + (f"{rows[-1]['median']:.4f} s{fused_note}" if "median" in rows[-1]
                                           else f"skipped ({rows[-1]['skipped']})"), flush=True)
    print(table(rows, sizes))
    for line in agreement(rows):
        print(line)
    return 0 if any("median" in r for r in rows if r["engine"] == "ours-cpu") else 1


if __name__ == "__main__":
    sys.exit(main())
