"""Data in and out at scale: `autodiff grad "sum(w*w)" --at w=@w.npy --out g.npz` on a
10-million-element .npy, side by side with the same work in numpy (numpy.load, the value and the
gradient 2*w, numpy.savez), both as whole processes.

    python benchmarks/data_io.py [--elements 10000000] [--runs 5]

Writes w.npy in a temporary folder, runs each command once to warm the caches, then --runs times
interleaved; prints the median and minimum wall time, the median CPU time (user + system, the
steadier figure on a shared machine) and the ratios (target: at most 2).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NUMPY_SIDE = """
import sys, numpy as np
w = np.load(sys.argv[1])
value = np.sum(w * w)
grad = 2 * w
np.savez(sys.argv[2], **{"value": value, "grad.w": grad})
"""


def console_script() -> str:
    here = Path(sys.executable).parent / "autodiff"
    if not here.exists():
        sys.exit("no `autodiff` console script next to this Python: pip install the project first")
    return str(here)


def run_once(cmd: list, env: dict) -> tuple:
    """(wall seconds, CPU seconds: user + system) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import numpy as np
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as folder:
        w = os.path.join(folder, "w.npy")
        np.save(w, np.random.default_rng(0).standard_normal(args.elements))
        commands = [
            ("autodiff grad --at w=@w.npy --out g.npz",
             [console_script(), "grad", "sum(w*w)", "--at", f"w=@{w}", "--out", os.path.join(folder, "g.npz")]),
            ("numpy: load, compute, savez",
             [sys.executable, "-c", NUMPY_SIDE, w, os.path.join(folder, "n.npz")]),
        ]
        samples = {label: [] for label, _ in commands}
        for _, cmd in commands:
            run_once(cmd, env)                       # warm-up: page cache and byte-code
        for _ in range(args.runs):
            for label, cmd in commands:
                samples[label].append(run_once(cmd, env))
        ours = np.load(os.path.join(folder, "g.npz"))["grad.w"]
        theirs = np.load(os.path.join(folder, "n.npz"))["grad.w"]
        assert np.array_equal(ours, theirs), "the gradients differ"
    print(f"{args.elements:,} elements, whole processes, {args.runs} runs each (interleaved)")
    width = max(len(label) for label, _ in commands)
    for label, _ in commands:
        walls, cpus = zip(*samples[label])
        print(f"{label:<{width}}  wall: median {statistics.median(walls) * 1e3:6.0f} ms, min {min(walls) * 1e3:6.0f} ms"
              f"   CPU: median {statistics.median(cpus) * 1e3:6.0f} ms")
    (ours_wall, ours_cpu), (numpy_wall, numpy_cpu) = (
        (statistics.median(w for w, _ in samples[label]), statistics.median(c for _, c in samples[label]))
        for label, _ in commands)
    fastest = [min(w for w, _ in samples[label]) for label, _ in commands]
    print(f"ratio autodiff / numpy: wall {ours_wall / numpy_wall:.2f} (medians), {fastest[0] / fastest[1]:.2f} "
          f"(minimums); CPU {ours_cpu / numpy_cpu:.2f} (medians)  (target <= 2)")

if __name__ == "__main__":
    main()
