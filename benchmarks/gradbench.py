"""GradBench-style suite: the gradient of each eval (benchmarks/gradbench_evals.py) at three sizes,
ours (`autodiff.function`, compiled once, replayed after the first call) against PyTorch eager
and HIPS autograd (where importable in the torch Python; JAX is not timed here).

    python benchmarks/gradbench.py [--repeats 5] [--torch /tmp/bvenv/bin/python] [--evals llsq,lse]

Each engine runs each eval in its own fresh process; the times are the median, min and max of
`--repeats` calls after the warm-up (ours: two interpreted calls, the first plain and reported
apart as `first`, the second recording the trace). The answers (the value and each gradient's sum) are compared. A last
row times the per-call overhead of the gradient of x*x. Not a timed test: numbers depend on the
machine and its load."""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child_ours(name, size, repeats):
    import autodiff
    from gradbench_evals import PROGRAMS, inputs
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(PROGRAMS[name])
    at = inputs(name, size)
    make = autodiff.function                      # the engine's import is not the first call's cost
    t0 = time.perf_counter()
    f = make(fh.name)
    value, grads = f.value_and_grad(at)
    first = time.perf_counter() - t0
    f.value_and_grad(at)                          # the second call records the trace
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value, grads = f.value_and_grad(at)
        times.append(time.perf_counter() - t0)
    os.unlink(fh.name)
    return {"times": times, "first": first, "value": float(value), "replayed": f.replays > 0,
            "grad": {k: float(sum(abs(float(v)) for v in (g.ravel() if hasattr(g, "ravel") else [g])))
                     for k, g in grads.items()}}


def child_torch(name, size, repeats):
    import torch
    from gradbench_evals import inputs
    from gradbench_torch import FUNCTIONS
    torch.set_num_threads(1)
    f = FUNCTIONS[name]
    at = {k: torch.tensor(v, dtype=torch.float64) for k, v in inputs(name, size).items()}
    times = []
    for _ in range(repeats + 1):
        leaves = {k: v.clone().requires_grad_(True) for k, v in at.items()}
        t0 = time.perf_counter()
        out = f(**leaves)
        grads = torch.autograd.grad(out, list(leaves.values()))
        times.append(time.perf_counter() - t0)
    return {"times": times[1:], "value": float(out), "version": torch.__version__,
            "grad": {k: float(g.abs().sum()) for k, g in zip(at, grads)}}


def child_autograd(name, size, repeats):
    import autograd
    from gradbench_autograd import FUNCTIONS
    from gradbench_evals import inputs
    at = inputs(name, size)
    f = FUNCTIONS[name]
    both = autograd.value_and_grad(lambda *args: f(*args), argnum=tuple(range(len(at))))
    times = []
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        value, grads = both(*at.values())
        times.append(time.perf_counter() - t0)
    return {"times": times[1:], "value": float(value),
            "grad": {k: float(abs(g).sum()) for k, g in zip(at, grads)}}


def child_overhead(engine, repeats):
    """Seconds per call of the gradient of x*x at a float."""
    calls = 2000
    if engine == "ours":
        import autodiff
        f = autodiff.function("x*x")
        f.grad(x=3.0)
        f.grad(x=3.0)
        best = math.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            for k in range(calls):
                f.grad(x=3.0)
            best = min(best, (time.perf_counter() - t0) / calls)
        return {"per_call": best}
    import torch
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for k in range(calls):
            x = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
            torch.autograd.grad(x * x, x)
        best = min(best, (time.perf_counter() - t0) / calls)
    return {"per_call": best}


def spawn(python, args):
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([python, os.path.abspath(__file__), "--child", *args], capture_output=True, text=True,
                         env=env, timeout=1800)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout)


def agree(a, b) -> bool:
    def close(x, y):
        return abs(x - y) <= 1e-8 * max(1.0, abs(x), abs(y))
    return close(a["value"], b["value"]) and all(close(a["grad"][k], b["grad"][k]) for k in a["grad"])


def fmt(times) -> str:
    ms = [t * 1e3 for t in times]
    return f"{statistics.median(ms):9.3f} [{min(ms):.3f}-{max(ms):.3f}]"


def main(argv=None):
    from gradbench_evals import SIZES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--torch", default="/tmp/bvenv/bin/python", help="a Python with torch")
    ap.add_argument("--evals", default=",".join(SIZES))
    ap.add_argument("--child", nargs="*")
    args = ap.parse_args(argv)
    if args.child is not None:
        kind = args.child[0]
        if kind == "overhead":
            print(json.dumps(child_overhead(args.child[1], args.repeats)))
        else:
            run = {"ours": child_ours, "torch": child_torch, "autograd": child_autograd}[kind]
            print(json.dumps(run(args.child[1], int(args.child[2]), args.repeats)))
        return
    print(f"{'eval':8} {'size':>6}  {'ours ms median [min-max]':>28}  {'torch ms median [min-max]':>28}"
          f"  {'ratio':>6}  {'autograd ms':>28}  {'first':>8}  replay  same")
    ratios = {0: [], 1: [], 2: []}
    for name in args.evals.split(","):
        for rank, size in enumerate(SIZES[name]):
            common = [name, str(size), "--repeats", str(args.repeats)]
            ours = spawn(sys.executable, ["ours", *common[:2]] + common[2:])
            theirs = spawn(args.torch, ["torch", *common[:2]] + common[2:])
            hips = spawn(args.torch, ["autograd", *common[:2]] + common[2:])
            hips_text = fmt(hips["times"]) if "error" not in hips else "-"
            if "error" in ours or "error" in theirs:
                print(f"{name:8} {size:>6}  error: {ours.get('error') or theirs.get('error')}")
                continue
            ratio = statistics.median(ours["times"]) / statistics.median(theirs["times"])
            ratios[rank].append(ratio)
            same = agree(ours, theirs) and ("error" in hips or agree(ours, hips))
            print(f"{name:8} {size:>6}  {fmt(ours['times']):>28}  {fmt(theirs['times']):>28}  {ratio:6.2f}"
                  f"  {hips_text:>28}  {ours['first'] * 1e3:8.2f}  {'yes' if ours['replayed'] else 'no':6}  "
                  f"{'yes' if same else 'NO'}", flush=True)
    for rank, label in enumerate(("small", "medium", "large")):
        if ratios[rank]:
            geo = math.exp(sum(map(math.log, ratios[rank])) / len(ratios[rank]))
            print(f"geometric mean ours/torch, {label}: {geo:.2f}x over {len(ratios[rank])} evals")
    ours = spawn(sys.executable, ["overhead", "ours", "--repeats", str(args.repeats)])
    theirs = spawn(args.torch, ["overhead", "torch", "--repeats", str(args.repeats)])
    if "error" not in ours and "error" not in theirs:
        print(f"per-call gradient of x*x: ours {ours['per_call'] * 1e6:.1f} µs (f.grad), torch "
              f"{theirs['per_call'] * 1e6:.1f} µs: {ours['per_call'] / theirs['per_call']:.2f}x")


if __name__ == "__main__":
    main()
