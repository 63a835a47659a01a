"""Speed of the numerical checks, side by side (a benchmark, not a test; timings vary by machine).

    python benchmarks/checks.py

1. checks per second on a file of 1,000 simple cases, in one process (target >= 200/s);
2. the full check of a gradient with 1,000 inputs, with an error estimate per entry
   (targets: torch.autograd.gradcheck 55 ms, numdifftools 408 ms, measured by the issue);
3. fast mode on 10, 100 and 1,000 inputs (target: flat, under 0.5 ms at 1,000).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

import numpy as np  # noqa: E402

from autodiff.engine import api  # noqa: E402
from autodiff.engine.check import check_gradient  # noqa: E402
from autodiff.engine.checkfile import load_file  # noqa: E402
from autodiff.engine.checkrun import run_cases  # noqa: E402

FUNCTION = "sum(x**2 * sin(x))"      # 1,000 inputs: an elementwise product and a sum


def best(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def case_file(n=1000) -> str:
    kinds = [
        ('f = "x**2*y + y + {c}"', 'at = {{ x = {a}, y = {b} }}', 'grad = {{ x = "2*x*y", y = "x**2 + 1" }}'),
        ('f = "sin(x)*exp(y) + {c}"', 'at = {{ x = {a}, y = {b} }}', ''),
        ('f = "x*y*z + {c}"', 'at = {{ x = {a}, y = {b}, z = 2 }}', 'grad = {{ x = "y*z", y = "x*z", z = "x*y" }}'),
        ('f = "tanh(x) + {c}*x"', 'at = {{ x = {a} }}', 'grad = {{ x = "1 - tanh(x)**2 + {c}" }}'),
    ]
    lines = []
    for i in range(n):
        f, at, grad = kinds[i % len(kinds)]
        c, a, b = i % 7, 0.1 + (i % 13) / 5, 0.5 + (i % 11) / 7
        lines += ["[[case]]", f'name = "case {i}"', f.format(c=c), at.format(a=a, b=b), grad.format(c=c), ""]
    fd, path = tempfile.mkstemp(suffix=".toml")
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join(lines))
    return path


def main():
    rows = []
    path = case_file()
    try:
        load_file(path)                  # warm: parser tables, numpy
        run_cases(load_file(path)[:20])
        t = time.perf_counter()
        results = run_cases(load_file(path))
        seconds = time.perf_counter() - t
    finally:
        os.unlink(path)
    assert all(r.status == "passed" for r in results), [r.message for r in results if r.failed][:3]
    rows.append(("check file, 1,000 simple cases (parse + run)", f"{len(results) / seconds:,.0f} checks/s",
                 ">= 200 checks/s"))

    x = np.linspace(-2, 2, 1000)
    target = api.load(FUNCTION)
    full = lambda: check_gradient(target=target, at={"x": x})  # noqa: E731
    report = full()
    assert report.passed and len(report.entries) == 1000
    rows.append((f"full check, 1,000 inputs ({FUNCTION}), with error estimates",
                 f"{best(full, 3) * 1e3:.1f} ms ({report.evaluations} evaluations)",
                 "<= 55 ms (gradcheck 55, numdifftools 408)"))

    import autodiff.engine.check as check
    saved, check.BATCH_MIN_ENTRIES = check.BATCH_MIN_ENTRIES, 10 ** 9
    rows.append(("  the same, one run per perturbed point (programs that cannot batch)",
                 f"{best(full, 3) * 1e3:.1f} ms", ""))
    check.BATCH_MIN_ENTRIES = saved

    for n in (10, 100, 1000):
        xn = np.linspace(-2, 2, n)
        fast = lambda: check_gradient(target=target, at={"x": xn}, mode="fast", seed=1)  # noqa: E731
        assert fast().passed
        rows.append((f"fast check, {n:,} inputs (AD + 5 evaluations)", f"{best(fast, 50) * 1e3:.3f} ms",
                     "flat, < 0.5 ms (gradcheck fast 0.47)"))
        ad = api.grad(None, {"x": xn}, target=target)
        fast_fd = lambda: check_gradient(target=target, at={"x": xn}, mode="fast", seed=1, ad_result=ad)  # noqa: E731
        rows.append((f"fast check, {n:,} inputs, given the AD gradient", f"{best(fast_fd, 50) * 1e3:.3f} ms", ""))

    width = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    print(f"{'measure':<{width}}  {'ours':<{w2}}  target")
    for name, ours, target_text in rows:
        print(f"{name:<{width}}  {ours:<{w2}}  {target_text}")


if __name__ == "__main__":
    main()
