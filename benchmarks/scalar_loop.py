"""Scalar loop benchmark: µs per executed primitive, forward plus reverse, ours vs PyTorch eager.

    python benchmarks/scalar_loop.py [--iterations 10000] [--samples 7]

The program (PROGRAM below) runs 10,000 iterations of a few scalar ops with a data-dependent
`if`. Ours runs through the Python API `autodiff.grad` in this process (the target is loaded
once; each sample interprets the program, records the tape and sweeps it backwards). PyTorch
eager runs the same loop on 0-d float64 tensors in a SEPARATE fresh process (so neither warms
or pollutes the other), forward plus `backward()`.

What is counted: the primitives recorded on our tape (its length, the input leaf excluded).
Comparisons carry no gradient and are not recorded, so they are not counted, though both
sides execute them: the per-op figure is a slight overestimate for both. The PyTorch loop
executes the same arithmetic ops, so both figures divide by the same count. A second pass splits
our time into interpreting-and-recording and the reverse sweep.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

PROGRAM = '''
def f(x):
    y = x
    s = 0.0
    for i in range(N):
        y = y * 0.999 + 0.001
        if y > 0.9:
            s = s + y * y
        else:
            s = s - y * 0.5
    return s
'''

TORCH_CHILD = r'''
import json, sys, time
import torch
torch.set_num_threads(1)
n, samples = int(sys.argv[1]), int(sys.argv[2])

def f(x):
    y = x
    s = torch.zeros((), dtype=torch.float64)
    for i in range(n):
        y = y * 0.999 + 0.001
        if y > 0.9:
            s = s + y * y
        else:
            s = s - y * 0.5
    return s

times, grads = [], []
for _ in range(samples + 1):                      # the first run warms up and is dropped
    x = torch.tensor(0.8, dtype=torch.float64, requires_grad=True)
    t0 = time.perf_counter()
    s = f(x)
    s.backward()
    times.append(time.perf_counter() - t0)
    grads.append((s.item(), x.grad.item()))
print(json.dumps({"times": times[1:], "value": grads[-1][0], "grad": grads[-1][1],
                  "version": torch.__version__}))
'''


def run_ours(n: int, samples: int):
    from autodiff.engine import api
    source = PROGRAM.replace("N", str(n))
    target = api.load(source, filename="scalar_loop.py")
    times, result = [], None
    for _ in range(samples + 1):                  # the first run warms up and is dropped
        t0 = time.perf_counter()
        result = api.grad(None, at={"x": 0.8}, target=target)
        times.append(time.perf_counter() - t0)
    ops = result.tape_length - 1                  # the watched input is a leaf, not an op
    return times[1:], ops, result


def split_ours(n: int, samples: int):
    """The same run in its two halves: interpret and record, then sweep (best of the samples)."""
    from autodiff.engine import api
    from autodiff.engine.lang.interp import Interpreter
    from autodiff.engine.core.tape import Tape, backward
    target = api.load(PROGRAM.replace("N", str(n)), filename="scalar_loop.py")
    forward = sweep = float("inf")
    for _ in range(samples):
        tape = Tape()
        x = tape.watch(0.8)
        t0 = time.perf_counter()
        out = api.run_target(target, {"x": x}, Interpreter())
        t1 = time.perf_counter()
        backward(tape, out, 1.0)
        t2 = time.perf_counter()
        forward, sweep = min(forward, t1 - t0), min(sweep, t2 - t1)
    return forward, sweep


def run_torch(n: int, samples: int):
    try:
        out = subprocess.run([sys.executable, "-c", TORCH_CHILD, str(n), str(samples)],
                             capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"could not run: {e}"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return None, last
    return json.loads(out.stdout), None


def summary(times, ops):
    per_op = sorted(t / ops * 1e6 for t in times)
    return statistics.median(per_op), per_op[0], per_op[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=10_000)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line at the end")
    args = ap.parse_args()
    figures = {}
    run_and_print(args, figures)
    if args.json:
        from _figures import print_figures
        print_figures(figures)


def run_and_print(args, figures):

    times, ops, result = run_ours(args.iterations, args.samples)
    med, lo, hi = summary(times, ops)
    figures["autodiff µs/op"] = {"median": med, "min": lo, "max": hi, "unit": "µs"}
    print(f"scalar loop: {args.iterations:,} iterations, {ops:,} recorded primitives per run, "
          f"{args.samples} samples")
    print(f"{'':10} {'µs/op median':>13} {'min':>8} {'max':>8} {'ms/run':>8}")
    print(f"{'autodiff':10} {med:13.3f} {lo:8.3f} {hi:8.3f} {statistics.median(times) * 1e3:8.1f}")
    print(f"  value {result.value!r}  gradient {result.gradient['x']!r}")
    forward, sweep = split_ours(args.iterations, args.samples)
    figures["interpret and record µs/op (best)"] = {"median": forward / ops * 1e6, "unit": "µs"}
    figures["reverse sweep µs/op (best)"] = {"median": sweep / ops * 1e6, "unit": "µs"}
    print(f"  of which (best): interpret and record {forward / ops * 1e6:.3f} µs/op, "
          f"reverse sweep {sweep / ops * 1e6:.3f} µs/op")
    if args.no_torch:
        return
    tor, why = run_torch(args.iterations, args.samples)
    if tor is None:
        print(f"pytorch eager: not measured ({why})")
        return
    tmed, tlo, thi = summary(tor["times"], ops)
    print(f"{'torch ' + tor['version'].split('+')[0]:10} {tmed:13.3f} {tlo:8.3f} {thi:8.3f} "
          f"{statistics.median(tor['times']) * 1e3:8.1f}")
    print(f"  value {tor['value']!r}  gradient {tor['grad']!r}")
    agree = abs(tor["grad"] - result.gradient["x"]) <= 1e-9 * max(1.0, abs(tor["grad"]))
    print(f"gradients agree: {agree}")
    print(f"ratio ours/pytorch (median per op): {med / tmed:.3f}  (target <= 0.5)")


if __name__ == "__main__":
    main()
