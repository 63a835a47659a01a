"""Start-up of `autodiff grad` across builds, side by side in one run (e.g. before and after a change).

    python benchmarks/startup_compare.py VENV [VENV ...] [--rounds 25]

Each VENV is a virtual environment with autodiff installed (non-editable: the figure is the
installed package's). Every round runs each build's `autodiff grad "x**2*y+y+2" --at x=3,y=4` and
`import numpy` and `pass` in the first VENV's Python, interleaved, as whole processes with
PYTHONDONTWRITEBYTECODE unset (after one warm-up run each, which writes the byte-code caches).
Prints medians, minimums and maximums, and each ratio to `import numpy` (target: at most 1.3).
Output goes to a pipe (as in CI, and as the target is measured); `--terminal` adds a row per
build with its output on a pseudo-terminal, where rich renders it (colours, the terminal's width).
"""
from __future__ import annotations

import argparse
import os
import pty
import statistics
import subprocess
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venvs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--terminal", action="store_true", help="also time each build writing to a terminal")
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {str(v): [str(v / "bin" / "autodiff"), "grad", "x**2*y+y+2", "--at", "x=3,y=4"] for v in args.venvs}
    terminal = {f"{v} (tty)" for v in args.venvs} if args.terminal else set()
    for name in sorted(terminal):
        commands[name] = commands[name[:-len(" (tty)")]]
    python = str(args.venvs[0] / "bin" / "python")
    commands["import numpy"] = [python, "-c", "import numpy"]
    commands["python pass"] = [python, "-c", "pass"]
    times = {name: [] for name in commands}
    for name, command in commands.items():
        run(command, env, name in terminal)
    for _ in range(args.rounds):
        for name, command in commands.items():
            times[name].append(run(command, env, name in terminal))
    numpy_median, numpy_min = statistics.median(times["import numpy"]), min(times["import numpy"])
    width = max(len(name) for name in commands)
    print(f"{args.rounds} interleaved rounds, PYTHONDONTWRITEBYTECODE unset in the children")
    print(f"{'command':{width}}   median      min      max   ratio to numpy (median, min)")
    for name, runs in times.items():
        print(f"{name:{width}} {statistics.median(runs) * 1e3:7.1f}ms {min(runs) * 1e3:7.1f}ms "
              f"{max(runs) * 1e3:7.1f}ms   {statistics.median(runs) / numpy_median:.2f}  {min(runs) / numpy_min:.2f}")


def run(command: list, env: dict, on_terminal: bool) -> float:
    """Seconds one whole process takes, its output on a pipe (discarded) or on a pseudo-terminal."""
    if not on_terminal:
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start
    leader, follower = pty.openpty()
    try:
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=follower, stderr=follower, check=True)
        elapsed = time.perf_counter() - start
        os.read(leader, 65536)          # a few lines: the terminal's buffer holds them
        return elapsed
    finally:
        os.close(leader)
        os.close(follower)


if __name__ == "__main__":
    main()
