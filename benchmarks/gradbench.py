"""GradBench-style suite: the gradient of each eval (benchmarks/gradbench_evals.py) at three sizes,
ours (`autodiff.function`, compiled once, replayed after the first call) against PyTorch eager,
HIPS autograd (where importable in the torch Python) and JAX jit (where importable in the --jax
Python, by default the torch one; skipped with a note otherwise).

    python benchmarks/gradbench.py [--repeats 5] [--torch /tmp/bvenv/bin/python] [--jax PYTHON]
        [--evals llsq,lse] [--sizes small,medium] [--rounds R] [--json]

Each engine runs each eval in its own fresh process; the times are the median, min and max of
`--repeats` calls after the warm-up (ours: two interpreted calls, the first plain and reported
apart as `first`, the second recording the trace; JAX: the first call traces and compiles, and is
reported apart as `jax first`; every timed JAX call waits with block_until_ready), then
`--warm-up` more calls in every engine (ours: the replays after which a trace's generated
functions are made, diff/replay_arrays.py; their total is reported apart as `warm-up`). With --rounds R
ours and PyTorch each run R fresh processes per eval, taking turns, and their times are pooled. The answers
(the value and each gradient's sum) are compared. A last row times the per-call overhead of the
gradient of x*x. Not a timed test: numbers depend on the machine and its load."""
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
SIZE_NAMES = ("small", "medium", "large")
FIGURES: dict = {}      # ours, for --json (benchmarks/_figures.py)


def child_ours(name, size, repeats, warm_up):
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
    t0 = time.perf_counter()
    for _ in range(warm_up):                      # replays, until the trace's functions are made
        f.value_and_grad(at)
    warmed = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value, grads = f.value_and_grad(at)
        times.append(time.perf_counter() - t0)
    os.unlink(fh.name)
    return {"times": times, "first": first, "warm_up": warmed, "value": float(value), "replayed": f.replays > 0,
            "grad": {k: float(sum(abs(float(v)) for v in (g.ravel() if hasattr(g, "ravel") else [g])))
                     for k, g in grads.items()}}


def child_torch(name, size, repeats, warm_up):
    import torch
    from gradbench_evals import inputs
    from gradbench_torch import FUNCTIONS
    torch.set_num_threads(1)
    f = FUNCTIONS[name]
    at = {k: torch.tensor(v, dtype=torch.float64) for k, v in inputs(name, size).items()}
    times = []
    for _ in range(warm_up + repeats + 1):
        leaves = {k: v.clone().requires_grad_(True) for k, v in at.items()}
        t0 = time.perf_counter()
        out = f(**leaves)
        grads = torch.autograd.grad(out, list(leaves.values()))
        times.append(time.perf_counter() - t0)
    return {"times": times[warm_up + 1:], "value": float(out), "version": torch.__version__,
            "grad": {k: float(g.abs().sum()) for k, g in zip(at, grads)}}


def child_autograd(name, size, repeats, warm_up):
    import autograd
    from gradbench_autograd import FUNCTIONS
    from gradbench_evals import inputs
    at = inputs(name, size)
    f = FUNCTIONS[name]
    both = autograd.value_and_grad(lambda *args: f(*args), argnum=tuple(range(len(at))))
    times = []
    for _ in range(warm_up + repeats + 1):
        t0 = time.perf_counter()
        value, grads = both(*at.values())
        times.append(time.perf_counter() - t0)
    return {"times": times[warm_up + 1:], "value": float(value),
            "grad": {k: float(abs(g).sum()) for k, g in zip(at, grads)}}


def import_jax():
    """jax, on the CPU, in float64, on one thread like the torch process (set before jax loads)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def child_jax(name, size, repeats, warm_up):
    jax = import_jax()
    from gradbench_evals import inputs
    from gradbench_jax import FUNCTIONS
    at = {k: jax.numpy.asarray(v) for k, v in inputs(name, size).items()}
    both = jax.jit(jax.value_and_grad(FUNCTIONS[name], argnums=tuple(range(len(at)))))
    t0 = time.perf_counter()
    jax.block_until_ready(both(*at.values()))     # traces and compiles: reported apart, as ours' first
    first = time.perf_counter() - t0
    for _ in range(warm_up):
        jax.block_until_ready(both(*at.values()))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        value, grads = jax.block_until_ready(both(*at.values()))
        times.append(time.perf_counter() - t0)
    return {"times": times, "first": first, "value": float(value), "version": jax.__version__,
            "grad": {k: float(abs(g).sum()) for k, g in zip(at, grads)}}


def best_per_call(call, repeats, calls=2000):
    """The best over `repeats` batches of the seconds per call of `call()`."""
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for k in range(calls):
            call()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def child_overhead(engine, repeats):
    """Seconds per call of the gradient of x*x at a float."""
    if engine == "ours":
        import autodiff
        f = autodiff.function("x*x")
        f.grad(x=3.0)
        f.grad(x=3.0)
        return {"per_call": best_per_call(lambda: f.grad(x=3.0), repeats)}
    if engine == "jax":
        jax = import_jax()
        dx = jax.jit(jax.grad(lambda x: x * x))
        dx(3.0).block_until_ready()
        return {"per_call": best_per_call(lambda: dx(3.0).block_until_ready(), repeats)}
    import torch

    def torch_grad():
        x = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
        torch.autograd.grad(x * x, x)
    return {"per_call": best_per_call(torch_grad, repeats)}


def spawn(python, args):
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        out = subprocess.run([python, os.path.abspath(__file__), "--child", *args], capture_output=True, text=True,
                             env=env, timeout=1800)
    except OSError as error:                      # no such interpreter: that engine's columns say so
        return {"error": f"cannot run {python}: {error.strerror}"}
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


def geometric_mean(ratios) -> float:
    return math.exp(sum(map(math.log, ratios)) / len(ratios))


def find_jax_python(python):
    """`python` when jax imports there (its version printed), else None with a note."""
    try:
        probe = subprocess.run([python, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True)
    except OSError:                               # no such interpreter: the same note as no jax in it
        probe = None
    if probe is None or probe.returncode != 0:
        print(f"note: jax is not importable in {python}: the JAX columns are skipped (give --jax PYTHON)")
        return None
    print(f"JAX {probe.stdout.strip()} in {python}: jit(value_and_grad), float64, CPU, one thread"
          " (unless JAX_PLATFORMS or XLA_FLAGS say otherwise)")
    return python


def row(name, size, args, jax_interpreter):
    """Runs one eval at one size in every engine, prints its line; returns (ours/torch, ours/jax)."""
    common = [name, str(size), "--repeats", str(args.repeats), "--warm-up", str(args.warm_up)]
    ours, theirs = in_turns([(sys.executable, ["ours", *common]), (args.torch, ["torch", *common])], args.rounds)
    if "error" not in ours:
        from _figures import figure, of_samples
        FIGURES[f"{name} {size} ours (ms)"] = of_samples(ours["times"], "ms", 1e3)
        FIGURES[f"{name} {size} ours first (ms)"] = figure(ours["first"] * 1e3, unit="ms")
    hips = spawn(args.torch, ["autograd", *common])
    jitted = spawn(jax_interpreter, ["jax", *common]) if jax_interpreter else {"error": "skipped"}
    if "error" in ours or "error" in theirs:
        print(f"{name:8} {size:>6}  error: {ours.get('error') or theirs.get('error')}")
        return None, None
    if "error" in jitted and jax_interpreter:
        print(f"{name:8} {size:>6}  jax error: {jitted['error']}")
    ratio = statistics.median(ours["times"]) / statistics.median(theirs["times"])
    jax_ratio = None if "error" in jitted else statistics.median(ours["times"]) / statistics.median(jitted["times"])
    same = agree(ours, theirs) and all("error" in other or agree(ours, other) for other in (hips, jitted))
    hips_text = fmt(hips["times"]) if "error" not in hips else "-"
    jax_text, jax_first = ("-", "-") if jax_ratio is None else (fmt(jitted["times"]), f"{jitted['first'] * 1e3:.1f}")
    print(f"{name:8} {size:>6}  {fmt(ours['times']):>28}  {fmt(theirs['times']):>28}  {ratio:6.2f}"
          f"  {hips_text:>28}  {jax_text:>28}  {'-' if jax_ratio is None else f'{jax_ratio:.2f}':>6}"
          f"  {ours['first'] * 1e3:8.2f}  {ours['warm_up']:8.2f}  {jax_first:>9}  {'yes' if ours['replayed'] else 'no':6}  "
          f"{'yes' if same else 'NO'}", flush=True)
    return ratio, jax_ratio


def in_turns(runs, rounds):
    """Each (python, child args) run `rounds` times in fresh processes, taking turns (ours first in
    odd rounds, second in even ones): a machine drifting between minutes slows both alike. The
    results of the first round, with every round's times."""
    results = [None] * len(runs)
    for round_ in range(rounds):
        order = range(len(runs)) if round_ % 2 == 0 else reversed(range(len(runs)))
        for i in order:
            out = spawn(*runs[i])
            if results[i] is None or "error" in out:
                results[i] = out
            elif "error" not in results[i]:
                results[i]["times"] += out["times"]
    return results


def overhead_row(args, jax_interpreter):
    ours = spawn(sys.executable, ["overhead", "ours", "--repeats", str(args.repeats)])
    theirs = spawn(args.torch, ["overhead", "torch", "--repeats", str(args.repeats)])
    jitted = (spawn(jax_interpreter, ["overhead", "jax", "--repeats", str(args.repeats)]) if jax_interpreter
              else {"error": "skipped"})
    if "error" not in ours:
        FIGURES["per-call gradient of x*x ours (µs)"] = {"median": ours["per_call"] * 1e6, "unit": "µs"}
    if "error" not in ours and "error" not in theirs:
        jax_text = "" if "error" in jitted else f", jax jit {jitted['per_call'] * 1e6:.1f} µs"
        print(f"per-call gradient of x*x: ours {ours['per_call'] * 1e6:.1f} µs (f.grad), torch "
              f"{theirs['per_call'] * 1e6:.1f} µs: {ours['per_call'] / theirs['per_call']:.2f}x{jax_text}")


def main(argv=None):
    from gradbench_evals import SIZES
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--torch", default="/tmp/bvenv/bin/python", help="a Python with torch")
    ap.add_argument("--jax", default=None, help="a Python with jax (default: the --torch one)")
    ap.add_argument("--warm-up", type=int, default=200,
                    help="calls after the first ones and before the timed ones, in every engine (default 200)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="fresh processes for ours and torch per eval, taking turns (default 1)")
    ap.add_argument("--evals", default=",".join(SIZES))
    ap.add_argument("--sizes", default="small,medium,large", help="which of the three sizes to run")
    ap.add_argument("--json", action="store_true", help="also print our figures as one JSON line at the end")
    ap.add_argument("--child", nargs="*")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.warm_up < 0:
        ap.error("--warm-up must be 0 or more")
    if args.child is not None:
        kind = args.child[0]
        if kind == "overhead":
            print(json.dumps(child_overhead(args.child[1], args.repeats)))
        else:
            run = {"ours": child_ours, "torch": child_torch, "autograd": child_autograd, "jax": child_jax}[kind]
            print(json.dumps(run(args.child[1], int(args.child[2]), args.repeats, args.warm_up)))
        return
    jax_interpreter = find_jax_python(args.jax or args.torch)
    print(f"{'eval':8} {'size':>6}  {'ours ms median [min-max]':>28}  {'torch ms median [min-max]':>28}"
          f"  {'ratio':>6}  {'autograd ms':>28}  {'jax jit ms':>28}  {'/jax':>6}  {'first':>8}  {'warm-up s':>8}  {'jax first':>9}"
          f"  replay  same")
    ratios = {(engine, rank): [] for engine in ("torch", "jax") for rank in range(3)}
    for name in args.evals.split(","):
        for rank, size in enumerate(SIZES[name]):
            if SIZE_NAMES[rank] not in args.sizes.split(","):
                continue
            for engine, ratio in zip(("torch", "jax"), row(name, size, args, jax_interpreter)):
                if ratio is not None:
                    ratios[engine, rank].append(ratio)
    for (engine, rank), found in ratios.items():
        if found:
            print(f"geometric mean ours/{engine}, {SIZE_NAMES[rank]}: "
                  f"{geometric_mean(found):.2f}x over {len(found)} evals")
    overhead_row(args, jax_interpreter)
    if args.json:
        from _figures import print_figures
        print_figures(FIGURES)


if __name__ == "__main__":
    main()
