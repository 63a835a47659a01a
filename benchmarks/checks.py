"""Speed of the numerical checks, side by side with PyTorch's gradcheck and numdifftools, in one run
(a benchmark, not a test; timings vary by machine and load).

    python benchmarks/checks.py [--cli-allocator]

--cli-allocator tunes glibc's allocator in our process as the `autodiff` command does
(engine/core/backend.py tune_allocator); without it our rows measure the library as an API user gets it.

Measures, on sum(x**2*sin(x)) in float64 at linspace(-2, 2, n):
1. checks per second on a file of 1,000 simple cases, in one process;
2. the full check of a gradient with 1,000 inputs, with an error estimate per entry, next to
   torch.autograd.gradcheck (full mode) and numdifftools.Gradient(full_output=True); ours also with
   the perturbed points run by the batched replay of the trace (engine/checks/stacked_points.py,
   what a program one-hot stacks cannot follow gets) instead of one-hot stacks of it
   (engine/checks/one_hot.py), and with one run per perturbed point;
3. fast mode on 10, 100 and 1,000 inputs, next to gradcheck(fast_mode=True).
Each engine runs in its own fresh process (benchmarks/_reference_checks.py for the references):
importing torch changes glibc malloc behaviour for the whole process. Calls under 20 ms are looped
inside each sample; the table gives the median and min-max of the samples, and each reference's
time over ours. torch and numdifftools are optional and never project dependencies: a missing one
is skipped with a note. The last column holds the targets set by issue 6, not measurements.
"""
from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from _reference_checks import FULL_SIZE, SIZES, timed_samples  # noqa: E402
from autodiff.engine import api  # noqa: E402
from autodiff.engine.checks.gradient import check_gradient  # noqa: E402
from autodiff.engine.checks.files import load_file  # noqa: E402
from autodiff.engine.checks.runner import run_cases  # noqa: E402

FUNCTION = "sum(x**2 * sin(x))"      # an elementwise product and a sum
FULL_SAMPLES, FAST_SAMPLES, FILE_SAMPLES = 7, 15, 5
OURS = "autodiff"


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


def our_rows() -> tuple[dict, int]:
    """Our samples (seconds per call) by row key, and the case count of the file."""
    rows = {}
    path = case_file()
    try:
        def check_file():
            results = run_cases(load_file(path))
            assert all(r.status == "passed" for r in results), [r.message for r in results if r.failed][:3]
            return results
        cases = len(check_file())
        rows["file"] = timed_samples(check_file, FILE_SAMPLES)
    finally:
        os.unlink(path)

    target = api.load(FUNCTION)
    x = np.linspace(-2, 2, FULL_SIZE)

    def full():
        report = check_gradient(target=target, at={"x": x})
        assert report.passed and len(report.entries) == FULL_SIZE
        return report
    rows[f"full_{FULL_SIZE}"] = timed_samples(full, FULL_SAMPLES)
    rows["evaluations"] = full().evaluations

    import autodiff.engine.checks.differences as check
    saved, check.ONE_HOT = check.ONE_HOT, False        # the batched replay's passes, not one-hot stacks
    try:
        rows[f"full_{FULL_SIZE}_batched_replay"] = timed_samples(full, FULL_SAMPLES)
    finally:
        check.ONE_HOT = saved
    saved, check.BATCH_MIN_ENTRIES = check.BATCH_MIN_ENTRIES, 10 ** 9
    try:
        rows[f"full_{FULL_SIZE}_unbatched"] = timed_samples(full, FULL_SAMPLES)
    finally:
        check.BATCH_MIN_ENTRIES = saved

    for n in SIZES:
        xn = np.linspace(-2, 2, n)
        fast = lambda: check_gradient(target=target, at={"x": xn}, mode="fast", seed=1)  # noqa: E731
        assert fast().passed
        rows[f"fast_{n}"] = timed_samples(fast, FAST_SAMPLES)
        ad = api.grad(None, {"x": xn}, target=target)
        given = lambda: check_gradient(target=target, at={"x": xn}, mode="fast", seed=1, ad_result=ad)  # noqa: E731
        rows[f"fast_{n}_given_ad"] = timed_samples(given, FAST_SAMPLES)
    return rows, cases


def reference(engine: str) -> tuple[dict | None, str]:
    """Run one reference engine in a fresh process; (its result, a note)."""
    if importlib.util.find_spec(engine) is None:       # finds without importing
        return None, f"{engine} not installed: side-by-side rows skipped"
    cmd = [sys.executable, os.path.join(HERE, "_reference_checks.py"), engine, str(FULL_SAMPLES), str(FAST_SAMPLES)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no message"]
        return None, f"{engine} worker failed (exit {proc.returncode}): {tail[0]}"
    result = json.loads(proc.stdout)
    return result, "; ".join(result["notes"])


def fmt_time(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}" if ms >= 1 else f"{ms:.3f}"


def cells(samples: list[float], rate_of: int | None = None) -> tuple[str, str]:
    """Median and min-max: in ms, or as a rate (rate_of items per call) for the file row."""
    median, low, high = statistics.median(samples), min(samples), max(samples)
    if rate_of:
        return f"{rate_of / median:,.0f} checks/s", f"{rate_of / high:,.0f}-{rate_of / low:,.0f}"
    return f"{fmt_time(median)} ms", f"{fmt_time(low)}-{fmt_time(high)}"


def ratio(theirs: list[float], ours: list[float]) -> str:
    return (f"{statistics.median(theirs) / statistics.median(ours):.2f} "
            f"(min {min(theirs) / min(ours):.2f})")


def main():
    if "--cli-allocator" in sys.argv:     # measure what `autodiff check`/`grad --check` get (cli/main.py)
        from autodiff.engine.core.backend import tune_allocator
        print("glibc allocator tuned as the CLI does:", tune_allocator())
    ours, cases = our_rows()
    references, notes = [], []
    for engine in ("torch", "numdifftools"):
        result, note = reference(engine)
        notes.append(note)
        if result:
            references.append(result)

    table = []              # (measure, engine, samples-and-loops, rate_of, ours key or None, target)

    def add(measure, engine, key, source, rate_of=None, compare=None, target=""):
        if key in source:
            table.append((measure, engine, source[key], rate_of, compare, target))

    add(f"check file, {cases:,} simple cases (parse + run)", OURS, "file", ours, rate_of=cases,
        target=">= 200 checks/s in one process")
    full = f"full_{FULL_SIZE}"
    measure = f"full check, {FULL_SIZE:,} inputs"
    add(measure, f"{OURS} (error estimates, {ours['evaluations']} evaluations)", full, ours,
        target="<= 55 ms with error estimates")
    add("", f"{OURS}, perturbed points by the batched replay (not one-hot stacks)",
        f"{full}_batched_replay", ours)
    add("", f"{OURS}, one run per perturbed point", f"{full}_unbatched", ours)
    for ref in references:
        add("", ref["engine"], full, {k: tuple(v.values()) for k, v in ref["rows"].items()}, compare=full)
    for n in SIZES:
        key = f"fast_{n}"
        add(f"fast check, {n:,} inputs", f"{OURS} (AD + 5 evaluations)", key, ours,
            target="flat, < 0.5 ms at 1,000")
        add("", f"{OURS}, given the AD gradient", f"{key}_given_ad", ours)
        for ref in references:
            add("", f"{ref['engine']} fast_mode", key,
                {k: tuple(v.values()) for k, v in ref["rows"].items()}, compare=key)

    header = ("measure", "engine", "median", "min-max", "samples x loops", "time / ours (medians)",
              "issue 6 target (not measured)")
    lines = []
    for measure, engine, (samples, loops), rate_of, compare, target in table:
        median, spread = cells(samples, rate_of)
        versus = ratio(samples, ours[compare][0]) if compare else ""
        lines.append((measure, engine, median, spread, f"{len(samples)} x {loops}", versus, target))
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header))]
    for line in [header, *lines]:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
    print()
    print(f"function: {FUNCTION}, float64, x = linspace(-2, 2, n); python {sys.version.split()[0]}, "
          f"numpy {np.__version__}; each engine in its own fresh process; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for note in notes:
        print(note)
    print("time / ours: the reference's time over ours (above 1: ours is faster); 'min' compares the fastest samples")


if __name__ == "__main__":
    main()
