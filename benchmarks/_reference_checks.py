"""Timing helper for benchmarks/checks.py, and its worker for the reference engines.

    python benchmarks/_reference_checks.py torch|numdifftools

Run by checks.py, one fresh process per engine: importing torch changes glibc malloc behaviour
for the whole process, so no engine is timed in a process where another one was imported. The
worker prints one JSON document on stdout: {"engine", "version", "notes", "rows": {key: {"samples",
"loops"}}}, samples in seconds per call. Nothing at module level imports numpy, torch or
numdifftools, so checks.py can import `timed_samples` from here for free.
"""
from __future__ import annotations

import json
import math
import sys
import time

SIZES = (10, 100, 1000)
FULL_SIZE = 1000
EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-3          # gradcheck's defaults, spelled out


def timed_samples(fn, count: int, min_sample_s: float = 0.02) -> tuple[list[float], int]:
    """`count` samples of the seconds per call of fn(), after one warm-up call.

    Calls shorter than `min_sample_s` are looped inside each sample (the loop count is fixed from
    one calibration call), so a microsecond-scale call is not lost in timer and scheduler noise.
    """
    fn()
    start = time.perf_counter()
    fn()
    one = time.perf_counter() - start
    loops = max(1, math.ceil(min_sample_s / one)) if one > 0 else 1000
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - start) / loops)
    return samples, loops


def row(samples_loops) -> dict:
    samples, loops = samples_loops
    return {"samples": samples, "loops": loops}


def torch_rows(full_count: int, fast_count: int) -> dict:
    import torch
    from torch.autograd import gradcheck

    def f(x):
        return (x ** 2 * torch.sin(x)).sum()

    def point(n):
        return torch.linspace(-2, 2, n, dtype=torch.float64, requires_grad=True)

    def check(x, fast):
        ok = gradcheck(f, (x,), eps=EPS, atol=ATOL, rtol=RTOL, fast_mode=fast)
        assert ok
        return ok

    x = point(FULL_SIZE)
    rows = {f"full_{FULL_SIZE}": row(timed_samples(lambda: check(x, False), full_count))}
    for n in SIZES:
        xn = point(n)
        rows[f"fast_{n}"] = row(timed_samples(lambda: check(xn, True), fast_count))
    notes = [f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads, "
             f"gradcheck(eps={EPS}, atol={ATOL}, rtol={RTOL}), defaults otherwise"]
    return {"engine": "torch gradcheck", "version": torch.__version__, "rows": rows, "notes": notes}


def numdifftools_rows(full_count: int) -> dict:
    import numdifftools as nd
    import numpy as np

    def f(x):
        return np.sum(x ** 2 * np.sin(x))

    x = np.linspace(-2, 2, FULL_SIZE)
    exact = 2 * x * np.sin(x) + x ** 2 * np.cos(x)
    gradient = nd.Gradient(f, full_output=True)   # central differences + Richardson, error estimates

    def estimate():
        result = gradient(x)
        assert np.allclose(result.estimate, exact, rtol=RTOL, atol=ATOL)
        return result

    rows = {f"full_{FULL_SIZE}": row(timed_samples(estimate, full_count))}
    notes = [f"numdifftools {nd.__version__}: Gradient(full_output=True) with its default steps; "
             "no fast mode; its figure is the FD gradient with error estimates, not a comparison with AD"]
    return {"engine": "numdifftools", "version": nd.__version__, "rows": rows, "notes": notes}


def main(argv: list[str]) -> None:
    engine = argv[0] if argv else ""
    full_count = int(argv[1]) if len(argv) > 1 else 7
    fast_count = int(argv[2]) if len(argv) > 2 else 15
    if engine == "torch":
        result = torch_rows(full_count, fast_count)
    elif engine == "numdifftools":
        result = numdifftools_rows(min(full_count, 5))
    else:
        sys.exit(f"usage: {sys.argv[0]} torch|numdifftools [full_samples] [fast_samples]")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
