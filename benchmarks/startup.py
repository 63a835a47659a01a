"""Start-up cost of `autodiff grad`, side by side with importing numpy and with bare Python.

    python benchmarks/startup.py [--runs 15]

Runs each command as a whole process (median, min and max wall time of --runs runs, after one
warm-up run that also writes the byte-code caches), using the console script of the environment
whose Python runs this file. PYTHONDONTWRITEBYTECODE is removed from the children's environment,
as on a normal install. Prints a table and the ratio against `import numpy` (target: at most 1.3),
of the medians and of the minimums (the minimum is the steadier figure on a loaded machine).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def console_script() -> str:
    here = Path(sys.executable).parent / "autodiff"
    found = str(here) if here.exists() else shutil.which("autodiff")
    if not found:
        sys.exit("no `autodiff` console script next to this Python or on PATH: pip install the project first")
    return found


def run_once(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line at the end")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    script = console_script()
    commands = [
        ('autodiff grad "x**2*y+y+2" --at x=3,y=4', [script, "grad", "x**2*y+y+2", "--at", "x=3,y=4"]),
        ('python -c "import numpy"', [sys.executable, "-c", "import numpy"]),
        ('python -c "pass"', [sys.executable, "-c", "pass"]),
    ]
    # Interleave the commands run by run, so drifting machine load hits them alike.
    samples = {label: [] for label, _ in commands}
    for _, cmd in commands:
        run_once(cmd, env)                           # warm-up: byte-code and grammar caches
    for _ in range(args.runs):
        for label, cmd in commands:
            samples[label].append(run_once(cmd, env))

    print(f"whole-process wall time, {args.runs} runs each (interleaved), "
          "PYTHONDONTWRITEBYTECODE unset in the children")
    print(f"python: {sys.executable}")
    print()
    width = max(len(label) for label, _ in commands)
    print(f"{'command':<{width}}  {'median':>8}  {'min':>8}  {'max':>8}")
    medians = {}
    for label, _ in commands:
        xs = samples[label]
        medians[label] = statistics.median(xs)
        print(f"{label:<{width}}  {medians[label] * 1e3:7.1f}ms  {min(xs) * 1e3:7.1f}ms  {max(xs) * 1e3:7.1f}ms")
    ours, numpy_, bare = (medians[label] for label, _ in commands)
    fastest = [min(samples[label]) for label, _ in commands]
    print()
    print(f"ratio autodiff grad / import numpy: {ours / numpy_:.2f} (medians), "
          f"{fastest[0] / fastest[1]:.2f} (minimums)  (target <= 1.3)")
    print(f"above bare Python: autodiff grad +{(ours - bare) * 1e3:.1f}ms, import numpy +{(numpy_ - bare) * 1e3:.1f}ms")
    if args.json:
        from _figures import of_samples, print_figures
        print_figures({f"{label} (ms)": of_samples(samples[label], "ms", 1e3) for label, _ in commands})


if __name__ == "__main__":
    main()
