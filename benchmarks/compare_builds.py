"""Every figure of the benchmarks issue 28 names, before and after, side by side on one machine.

    python benchmarks/compare_builds.py BEFORE AFTER [--runs 3] [--scripts arrays,startup] [--quick]
        [--timeout 3600]

BEFORE and AFTER are two builds: each a virtual environment (a folder with bin/python) or a
Python interpreter, with autodiff installed. The benchmark scripts are this tree's (the folder
holding this file): each runs under both interpreters with `--json` (benchmarks/_figures.py),
BEFORE and AFTER taking turns in fresh processes (BEFORE first in odd runs, AFTER first in even
ones, so a machine drifting between minutes slows both alike), --runs times each, without
PYTHONPATH (each build imports its own autodiff) and without PYTHONDONTWRITEBYTECODE (byte-code
caches written and read, as an installed package has them). A script that
fails under a build (an old build lacking what it imports, a crash, a timeout) is reported as
failed for that build, with its last line of error; the others go on.

One table per script: each figure's median over the runs, [min-max] (the spread within the runs
where the script measures one, widened by the run-to-run spread), the ratio after/before of the
medians, and a verdict: `worse` where after's best run is slower than before's worst (the ranges
do not overlap), `better` for the reverse, `~` within the spread, `-` where neither build has a
spread (one run of a one-number figure: run more); exact counts (unit `entries`) are `same`,
`worse` or `better` as they compare. Lower is better for every figure. The header names each
build's Python, numpy, numexpr and where its autodiff is. The machine's load (os.getloadavg()) is printed before and after each script. A
benchmark, not a test: numbers depend on the machine and its load."""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _figures import read_figures  # noqa: E402  (this folder's helper, not a package)

# The scripts, in the order run, with their arguments (full; --quick: shorter) under a build's Python.
SCRIPTS = {
    "arrays.py": (["--only-ours", "--rounds", "1"], ["--only-ours", "--quick", "--repeats", "3"]),
    "gradbench.py": (["--torch", "{python}"], ["--torch", "{python}", "--repeats", "3", "--warm-up", "50",
                                               "--sizes", "small,medium"]),
    "scalar_loop.py": (["--no-torch"], ["--no-torch", "--iterations", "2000", "--samples", "3"]),
    "startup.py": ([], ["--runs", "5"]),
    "derivative_cost.py": (["--times"], ["--times"]),
    "api_calls.py": (["{venv}", "--rounds", "1"], ["{venv}", "--rounds", "1"]),
    "gradbench_heldout.py": ([], ["--sizes", "smallest", "--seconds", "0.5"]),
}


def interpreter(build: str) -> tuple[str, str]:
    """(python, venv folder) of a build given as a venv folder or an interpreter's path."""
    path = Path(build)
    if path.is_dir():
        return str(path / "bin" / "python"), str(path)
    return str(path), str(path.parent.parent)


def run_script(script, build, args):
    """One fresh run of `script` under a build: ({figure: stats}, None) or (None, why it failed)."""
    python, venv = interpreter(build)
    extra = SCRIPTS[script][1 if args.quick else 0]
    command = [python, str(HERE / script), *[a.format(python=python, venv=venv) for a in extra], "--json"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    with tempfile.TemporaryDirectory() as scratch:
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=scratch,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return None, f"timed out after {args.timeout:.0f} s"
        except OSError as error:
            return None, f"cannot run {python}: {error.strerror}"
    figures = read_figures(done.stdout)
    if done.returncode != 0 or figures is None:
        lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip() and not line.startswith("{")]
        return None, f"exit {done.returncode}: {lines[-1][:300] if lines else 'no output'}"
    return figures, None


def describe(build) -> str:
    """The build's Python, numpy and numexpr versions and where its autodiff is, or why not."""
    python, _ = interpreter(build)
    probe = ("import sys, numpy, numexpr, autodiff; print(sys.version.split()[0], 'numpy', numpy.__version__,"
             " 'numexpr', numexpr.__version__, 'autodiff at', autodiff.__file__.rsplit('/', 1)[0])")
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, cwd=tempfile.gettempdir())
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def pool(runs):
    """{figure: (median of the runs' medians, lowest, highest, best run, worst run, unit)}."""
    out = {}
    for name in runs[0]:
        found = [run[name] for run in runs if name in run]
        medians = [f["median"] for f in found]
        lows = [f.get("min", f["median"]) for f in found]
        highs = [f.get("max", f["median"]) for f in found]
        out[name] = (statistics.median(medians), min(lows), max(highs), min(medians), max(medians),
                     found[0].get("unit", ""))
    return out


def verdict(before, after):
    if after[5] == "entries":               # exact counts: no spread
        return "same" if after[0] == before[0] else "worse" if after[0] > before[0] else "better"
    if before[1] == before[2] and after[1] == after[2]:
        return "-"
    if after[3] > before[4] and after[3] > before[2]:
        return "worse"
    if after[4] < before[3] and after[4] < before[1]:
        return "better"
    return "~"


def table(script, results, errors, builds):
    print(f"\n## {script}")
    for label in ("BEFORE", "AFTER"):
        if errors[label]:
            print(f"{label} failed ({len(errors[label])} of its runs): {errors[label][-1]}")
    if not results["BEFORE"] and not results["AFTER"]:
        return
    pooled = {label: pool(results[label]) if results[label] else {} for label in ("BEFORE", "AFTER")}
    names = list(dict.fromkeys([*pooled["BEFORE"], *pooled["AFTER"]]))
    width = max(len(n) for n in names)
    print(f"{'figure':<{width}}  {'before median [min-max]':>30}  {'after median [min-max]':>30}  {'after/before':>12}  verdict")
    for name in names:
        b, a = pooled["BEFORE"].get(name), pooled["AFTER"].get(name)
        cell = (lambda s: f"{s[0]:.4g} [{s[1]:.4g}-{s[2]:.4g}] {s[5]}" if s else "-")
        ratio = f"{a[0] / b[0]:.2f}" if a and b and b[0] else "-"
        print(f"{name:<{width}}  {cell(b):>30}  {cell(a):>30}  {ratio:>12}  {verdict(b, a) if a and b else '-'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="a venv folder or a Python interpreter")
    ap.add_argument("after", help="a venv folder or a Python interpreter")
    ap.add_argument("--runs", type=int, default=3, help="fresh runs of each script under each build (default 3)")
    ap.add_argument("--scripts", default=",".join(s.removesuffix(".py") for s in SCRIPTS),
                    help="which scripts, comma separated (default: all)")
    ap.add_argument("--quick", action="store_true", help="each script's shorter arguments")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one script run may take (default 3600)")
    args = ap.parse_args(argv)
    scripts = [s if s.endswith(".py") else s + ".py" for s in args.scripts.split(",")]
    unknown = [s for s in scripts if s not in SCRIPTS]
    if unknown:
        ap.error(f"unknown script {unknown[0]!r}: choose from {', '.join(SCRIPTS)}")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    builds = {"BEFORE": args.before, "AFTER": args.after}
    for label, build in builds.items():
        python, _ = interpreter(build)
        if not os.path.exists(python):
            ap.error(f"{label}: no Python at {python}")
    for label, build in builds.items():
        print(f"{label:6} {build}: {describe(build)}")
    print(f"scripts from {HERE}, {args.runs} run(s) each, {os.cpu_count()} CPUs; lower is better for every figure")
    for script in scripts:
        results = {"BEFORE": [], "AFTER": []}
        errors = {"BEFORE": [], "AFTER": []}
        start, load = time.perf_counter(), os.getloadavg()
        for run in range(args.runs):
            for label in (("BEFORE", "AFTER") if run % 2 == 0 else ("AFTER", "BEFORE")):
                figures, error = run_script(script, builds[label], args)
                (results[label].append(figures) if error is None else errors[label].append(error))
        end = os.getloadavg()
        table(script, results, errors, builds)
        print(f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} before, {end[0]:.2f} {end[1]:.2f} {end[2]:.2f} after"
              f" ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
