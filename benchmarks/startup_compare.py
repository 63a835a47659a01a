"""Start-up of `autodiff grad` across builds, side by side in one run (e.g. before and after a change).

    python benchmarks/startup_compare.py VENV [VENV ...] [--rounds 25]

Each VENV is a virtual environment with autodiff installed (non-editable: the figure is the
installed package's). Every round runs each build's `autodiff grad "x**2*y+y+2" --at x=3,y=4` and
`import numpy` and `pass` in the first VENV's Python, interleaved, as whole processes with
PYTHONDONTWRITEBYTECODE unset (after one warm-up run each, which writes the byte-code caches).
Prints medians, minimums and maximums, and each ratio to `import numpy` (target: at most 1.3).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venvs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {str(v): [str(v / "bin" / "autodiff"), "grad", "x**2*y+y+2", "--at", "x=3,y=4"] for v in args.venvs}
    python = str(args.venvs[0] / "bin" / "python")
    commands["import numpy"] = [python, "-c", "import numpy"]
    commands["python pass"] = [python, "-c", "pass"]
    times = {name: [] for name in commands}
    for command in commands.values():
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    for _ in range(args.rounds):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - start)
    numpy_median, numpy_min = statistics.median(times["import numpy"]), min(times["import numpy"])
    width = max(len(name) for name in commands)
    print(f"{args.rounds} interleaved rounds, PYTHONDONTWRITEBYTECODE unset in the children")
    print(f"{'command':{width}}   median      min      max   ratio to numpy (median, min)")
    for name, runs in times.items():
        print(f"{name:{width}} {statistics.median(runs) * 1e3:7.1f}ms {min(runs) * 1e3:7.1f}ms "
              f"{max(runs) * 1e3:7.1f}ms   {statistics.median(runs) / numpy_median:.2f}  {min(runs) / numpy_min:.2f}")


if __name__ == "__main__":
    main()
