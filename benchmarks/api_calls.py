"""Per-call cost of the Python API across builds, side by side (e.g. before and after a change).

    python benchmarks/api_calls.py VENV [VENV ...] [--rounds 5]

Each VENV is a virtual environment with autodiff installed. Every round runs each build in a fresh
process, the builds taking turns, and each process times: a replayed `f.grad` of `x*x` at a number
and of `sum(x * x) + y` at a 2-element x (µs a call, the median of its samples), and `f.grad` of
the 20-op chain and of `sum(x ** 3.0 * 2.0 + x / 3.0)` at 1e6 elements (ms, median of 9 after 3).
Prints a row per figure: each build's median over the rounds (min-max) and its ratio to the first.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

WORKER = r'''
import json, statistics, time
import numpy as np, autodiff

def per_call(f, kwargs, calls, samples):
    for _ in range(calls):
        f.grad(**kwargs)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(calls):
            f.grad(**kwargs)
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)

def per_big(source, x):
    f = autodiff.function(source)
    for _ in range(3):
        f.grad(x=x)
    times = []
    for _ in range(9):
        start = time.perf_counter()
        f.grad(x=x)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)

CHAIN = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
         " + sigmoid(x) * x)")
big = np.linspace(-2, 2, 1_000_000)
print(json.dumps({
    "f.grad of x*x at a number (us)": per_call(autodiff.function("x*x"), {"x": 3.0}, 2000, 20),
    "f.grad of sum(x * x) + y, x of 2 (us)": per_call(autodiff.function("sum(x * x) + y"),
                                                      {"x": np.array([1.0, 2.0]), "y": 3.0}, 1000, 10),
    "the 20-op chain's gradient at 1e6 (ms)": per_big(CHAIN, big),
    "sum(x ** 3.0 * 2.0 + x / 3.0)'s gradient at 1e6 (ms)": per_big("sum(x ** 3.0 * 2.0 + x / 3.0)", big),
}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venvs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="also print the first build's figures as one JSON line")
    args = parser.parse_args()
    results: dict = {}
    for _ in range(args.rounds):
        for venv in args.venvs:
            done = subprocess.run([str(venv / "bin" / "python"), "-c", WORKER], capture_output=True, text=True,
                                  check=True)
            for name, value in json.loads(done.stdout).items():
                results.setdefault(name, {}).setdefault(str(venv), []).append(value)
    builds = [str(v) for v in args.venvs]
    print("| figure | " + " | ".join(builds) + " | ratio to the first |")
    print("|---|" + "---|" * (len(builds) + 1))
    for name, by_build in results.items():
        medians = [statistics.median(by_build[b]) for b in builds]
        cells = [f"{m:.2f} ({min(by_build[b]):.2f}-{max(by_build[b]):.2f})" for m, b in zip(medians, builds)]
        ratios = " / ".join(f"{m / medians[0]:.2f}" for m in medians[1:]) or "1"
        print(f"| {name} | " + " | ".join(cells) + f" | {ratios} |")
    if args.json:
        from _figures import of_samples, print_figures
        print_figures({name: of_samples(by_build[builds[0]], name.rsplit("(", 1)[-1].rstrip(")"))
                       for name, by_build in results.items()})


if __name__ == "__main__":
    main()
