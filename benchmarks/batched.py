"""Batched replay against point-by-point runs, in one process (a benchmark, not a test; timings vary
by machine and load):

    python benchmarks/batched.py [--quick]

Rows: the full Jacobian check at n = 100 and 1000 inputs (three outputs: a square Jacobian's n^2
verdicts would dominate both columns alike), a square one at n = 100 for the record, the full
Hessian check at n = 50, and `plot` of 201 points (order 1 and 3). "point by point" sets the
modules' BATCHED flags to False (checks/stacked_points.py, views/plot_points.py), which is the
path every program with input-dependent control flow still takes. Each sample is warmed up
once, and the two columns' samples alternate; the table gives the median and min-max of the
samples and the speed-up of the medians.
"""
from __future__ import annotations

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from _reference_checks import timed_samples  # noqa: E402
from autodiff.engine import api  # noqa: E402
from autodiff.engine.checks import stacked_points  # noqa: E402
from autodiff.engine.checks.higher import check_hessian, check_jacobian  # noqa: E402
from autodiff.engine.diff.forward import jacobian  # noqa: E402
from autodiff.engine.diff.higher import hessian  # noqa: E402
from autodiff.engine.views import plot_points  # noqa: E402
from autodiff.engine.views.plotdata import sample  # noqa: E402

FEW_OUTPUTS = "[sum(x**2 * sin(x)), sum(tanh(x) * x), dot(x, x)]"
SQUARE = "tanh(x) * sum(x**2 * sin(x))"
HESSIAN = "sum(x**2 * sin(x)) + sum(x[1:] * x[:-1])"
PLOT = "tanh(x) * exp(-x*x) + abs(sin(3*x))"


def jacobian_check(source, n):
    target = api.load(source)
    result = jacobian(None, {"x": np.linspace(-2, 2, n)}, target=target, mode="forward")

    def run():
        report = check_jacobian(result, target)
        assert report.passed, report.verdict
    return run


def hessian_check(n):
    target = api.load(HESSIAN)
    result = hessian(None, {"x": np.linspace(-2, 2, n)}, target=target)

    def run():
        report = check_hessian(result, target)
        assert report.passed, report.verdict
    return run


def plot(order):
    target = api.load(PLOT)
    return lambda: sample(target, "x", -2.0, 2.0, 201, order)


def set_batched(flag: bool) -> None:
    stacked_points.BATCHED = plot_points.BATCHED = flag


def both(fn, samples):
    """(batched samples, point-by-point samples) of fn(), the two interleaved sample by sample so
    that a change in the machine's load weighs on both alike."""
    out = {True: [], False: []}
    try:
        for _ in range(samples):
            for flag in (True, False):
                set_batched(flag)
                out[flag].append(timed_samples(fn, 1)[0][0])
    finally:
        set_batched(True)
    return out[True], out[False]


def cell(samples) -> str:
    ms = [s * 1000 for s in samples]
    return f"{statistics.median(ms):9.2f} ({min(ms):.2f}-{max(ms):.2f})"


def main(quick=False):
    samples = 3 if quick else 7
    rows = [
        ("jacobian --check, n = 100, 3 outputs", jacobian_check(FEW_OUTPUTS, 100)),
        ("jacobian --check, n = 1000, 3 outputs", jacobian_check(FEW_OUTPUTS, 1000)),
        ("jacobian --check, n = 100, square", jacobian_check(SQUARE, 100)),
        ("hessian --check, n = 50", hessian_check(50)),
        ("plot, 201 points, order 1", plot(1)),
        ("plot, 201 points, order 3", plot(3)),
    ]
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs; "
          f"ms per call, median (min-max) of {samples}")
    print(f"{'':40} {'batched':>24} {'point by point':>24} {'speed-up':>9}")
    for label, fn in rows:
        batched, pointwise = both(fn, samples)
        ratio = statistics.median(pointwise) / statistics.median(batched)
        print(f"{label:40} {cell(batched):>24} {cell(pointwise):>24} {ratio:8.1f}x")


if __name__ == "__main__":
    main("--quick" in sys.argv)
