"""The held-out GradBench set (benchmarks/gradbench_heldout_evals.py: GradBench's evals written in
the language as people write them, at GradBench's sizes): the gradient through
`autodiff.function(...)` against PyTorch eager and JAX jit, where importable.

    python benchmarks/gradbench_heldout.py [--evals llsq,gmm] [--sizes all|smallest|0,1]
        [--repeats 5] [--seconds 2] [--warm-up 20] [--reference auto|torch|fd] [--check-only] [--json]

Before any timing each eval's gradient is checked: against PyTorch's (every element) where torch
imports, else (or with --reference fd) against fourth-order central differences of the program's
own value in a few coordinates of each input; `max err` is max |ours - theirs| / max(1, max |theirs|)
and a row whose error exceeds 1e-8 says FAIL (the exit status is then 1). --check-only stops there.

Each engine runs each eval in its own fresh process (this Python for all three). Ours: the first
call is reported apart (`first`), then up to --warm-up calls within --seconds, then the timed calls:
at least --repeats, more while --seconds last (at most 50); the same for torch and for JAX, whose
first call (trace and compile) is also reported apart. Times are the median [min-max] in µs.
`replayed` is how many of our timed calls a replay answered (f.replays over them) and, where
some were interpreted, f.fallbacks' commonest reason. The last line is the geometric mean of
ours/torch (and ours/jax) over every row both ran. The machine's load (os.getloadavg()) is in the
header and at the end. Not a timed test: numbers depend on the machine and its load."""
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
TOLERANCE = 1e-8
MAX_CALLS = 50


def timed_calls(call, repeats, seconds):
    """Seconds of each of at least `repeats` calls of `call()`, more while `seconds` last."""
    times, start = [], time.perf_counter()
    while len(times) < repeats or (time.perf_counter() - start < seconds and len(times) < MAX_CALLS):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def warm(call, count, seconds):
    start = time.perf_counter()
    for _ in range(count):
        if time.perf_counter() - start > seconds:
            break
        call()


def child_ours(name, size_index, args, grads_path):
    import numpy as np

    import autodiff
    from gradbench_heldout_evals import PROGRAMS, SIZES, WRT, inputs
    at = inputs(name, SIZES[name][size_index])
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(PROGRAMS[name])
    try:
        f = autodiff.function(fh.name)
        t0 = time.perf_counter()
        value, grads = f.value_and_grad(at, wrt=WRT[name])
        first = time.perf_counter() - t0
        out = {"first": first, "value": float(value)}
        if reference_kind(args) == "fd":
            out["fd"] = central_differences(f, at, WRT[name], grads)
        np.savez(grads_path, **{k: np.asarray(v, dtype=float) for k, v in grads.items()})
        if not args.check_only:
            def call():
                f.value_and_grad(at, wrt=WRT[name])
            warm(call, args.warm_up, args.seconds)
            replays = getattr(f, "replays", None)           # counters an older build may lack
            out["times"] = timed_calls(call, args.repeats, args.seconds)
            out["replayed"] = None if replays is None else f.replays - replays
            out["fallbacks"] = dict(getattr(f, "fallbacks", {}))
            out["blocker"] = getattr(f, "blocker", None)
        return out
    finally:
        os.unlink(fh.name)


def central_differences(f, at, wrt, grads, per_input=4):
    """max |g - fd| / max(1, max |fd|) over a few coordinates of each input in `wrt`, by the
    fourth-order stencil (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h."""
    import numpy as np
    rng = np.random.default_rng(7)
    worst = 0.0
    for name in wrt:
        base = np.asarray(at[name], dtype=float)
        grad = np.asarray(grads[name], dtype=float)
        picks = ([None] if not base.ndim else     # the first and last coordinates, and a few at random
                 sorted({0, base.size - 1, *rng.choice(base.size, size=min(per_input, base.size), replace=False)}))
        for flat in picks:
            h = 1e-4 * max(1.0, abs(float(base.flat[flat] if flat is not None else base)))
            values = []
            for step in (-2, -1, 1, 2):
                moved = base.copy()
                if flat is None:
                    moved = base + step * h
                else:
                    moved.flat[flat] += step * h
                values.append(float(f({**at, name: moved if moved.ndim else float(moved)})))
            fd = (values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * h)
            ours = float(grad.flat[flat]) if flat is not None else float(grad)
            worst = max(worst, abs(ours - fd) / max(1.0, abs(fd)))
    return worst


def reference_kind(args):
    if args.reference != "auto":
        return args.reference
    return "torch" if importable("torch") else "fd"


def importable(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


def child_torch(name, size_index, args, grads_path):
    import numpy as np
    import torch

    from gradbench_heldout_evals import REFERENCES, SIZES, WRT, inputs, torch_ops
    torch.set_num_threads(1)
    ops = torch_ops()
    at = inputs(name, SIZES[name][size_index])
    wrt = WRT[name]
    fixed = {k: torch.tensor(v, dtype=torch.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
             for k, v in at.items() if k not in wrt}
    start = {k: torch.tensor(np.asarray(at[k], dtype=float), dtype=torch.float64) for k in wrt}
    result = {}

    def call():
        leaves = {k: v.clone().requires_grad_(True) for k, v in start.items()}
        out = REFERENCES[name](ops, **leaves, **fixed)
        result["value"] = out
        result["grads"] = dict(zip(wrt, torch.autograd.grad(out, list(leaves.values()))))
    t0 = time.perf_counter()
    call()
    first = time.perf_counter() - t0
    np.savez(grads_path, **{k: g.detach().numpy() for k, g in result["grads"].items()})
    out = {"first": first, "value": float(result["value"]), "version": torch.__version__}
    if not args.check_only:
        warm(call, args.warm_up, args.seconds)
        out["times"] = timed_calls(call, args.repeats, args.seconds)
    return out


def child_jax(name, size_index, args, grads_path):
    from gradbench import import_jax        # jax as gradbench.py sets it up (benchmarks/ is on the path)
    jax = import_jax()
    import numpy as np

    from gradbench_heldout_evals import JAX_FORWARD, REFERENCES, SIZES, WRT, inputs, jax_ops
    ops = jax_ops()
    at = inputs(name, SIZES[name][size_index])
    wrt = WRT[name]
    fixed = {k: jax.numpy.asarray(v) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
             for k, v in at.items() if k not in wrt}            # constants of the jitted function (ints static)

    def value(*args):
        return REFERENCES[name](ops, **dict(zip(wrt, args)), **fixed)
    argnums = tuple(range(len(wrt)))
    if name in JAX_FORWARD:
        both = jax.jit(lambda *a: (value(*a), jax.jacfwd(value, argnums=argnums)(*a)))
    else:
        both = jax.jit(jax.value_and_grad(value, argnums=argnums))
    point = [jax.numpy.asarray(np.asarray(at[k], dtype=float)) for k in wrt]

    def call():
        return jax.block_until_ready(both(*point))
    t0 = time.perf_counter()
    v, grads = call()
    first = time.perf_counter() - t0
    np.savez(grads_path, **{k: np.asarray(g) for k, g in zip(wrt, grads)})
    out = {"first": first, "value": float(v), "version": jax.__version__,
           "mode": "jacfwd" if name in JAX_FORWARD else "value_and_grad"}
    if not args.check_only:
        warm(call, args.warm_up, args.seconds)
        out["times"] = timed_calls(call, args.repeats, args.seconds)
    return out


CHILDREN = {"ours": child_ours, "torch": child_torch, "jax": child_jax}


def spawn(engine, name, size_index, args):
    """One engine's run of one eval at one size, in a fresh process: its JSON, with the gradient
    read back as {input: array} under "grads", or {"error": last line of its stderr}."""
    import numpy as np
    with tempfile.TemporaryDirectory() as scratch:
        grads_path = os.path.join(scratch, "grads.npz")
        command = [sys.executable, os.path.abspath(__file__), "--child", engine, name, str(size_index), grads_path,
                   "--repeats", str(args.repeats), "--seconds", str(args.seconds), "--warm-up", str(args.warm_up),
                   "--reference", args.reference] + (["--check-only"] if args.check_only else [])
        env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {args.timeout:.0f} s"}
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            named = [line for line in lines if "Error:" in line or "Error " in line]
            return {"error": (named or lines)[-1] if lines else f"exit {done.returncode}"}
        out = json.loads(done.stdout.strip().splitlines()[-1])
        with np.load(grads_path) as saved:
            out["grads"] = {k: saved[k] for k in saved.files}
        return out


def max_error(ours, theirs):
    """max |ours - theirs| / max(1, max |theirs|) over the value and every gradient element."""
    import numpy as np
    worst = abs(ours["value"] - theirs["value"]) / max(1.0, abs(theirs["value"]))
    for k, g in theirs["grads"].items():
        mine = np.asarray(ours["grads"][k], dtype=float)
        if mine.shape != g.shape:
            return math.inf
        scale = max(1.0, float(np.max(np.abs(g))) if g.size else 1.0)
        worst = max(worst, float(np.max(np.abs(mine - g))) / scale if g.size else 0.0)
    return worst


def fmt_times(times):
    us = [t * 1e6 for t in times]
    return f"{statistics.median(us):.0f} [{min(us):.0f}-{max(us):.0f}]"


def median(run):
    return statistics.median(run["times"]) if run and "times" in run else None


def replay_text(ours):
    if ours["replayed"] is None:
        return "? (no f.replays in this build)"
    text = f"{ours['replayed']}/{len(ours['times'])}"
    if ours["replayed"] < len(ours["times"]) and ours["fallbacks"]:
        reason = max(ours["fallbacks"], key=ours["fallbacks"].get)
        text += f" ({reason[:40]})"
    return text


def measure(name, size_index, args, engines):
    """One row: our run, the references' runs, the check; prints the row and returns its record."""
    from gradbench_heldout_evals import SIZES, label
    size = label(SIZES[name][size_index])
    ours = spawn("ours", name, size_index, args)
    runs = {engine: spawn(engine, name, size_index, args) for engine in engines}
    record = {"eval": name, "size": size}
    if "error" in ours:
        print(f"{name:9} {size:>12}  ours failed: {ours['error']}", flush=True)
        record["error"] = ours["error"]
        return record
    kind = reference_kind(args)
    if kind == "torch" and "error" not in runs.get("torch", {"error": 1}):
        record["err"] = max_error(ours, runs["torch"])
    elif kind == "torch":
        record["error"] = f"torch: {runs.get('torch', {}).get('error', 'not run')}"
    else:
        record["err"] = ours.get("fd", math.nan)
    for engine, run in runs.items():
        if "error" in run:
            print(f"note: {name} {size}: {engine} failed: {run['error']}", flush=True)
        elif engine == "jax" and max_error(ours, run) > TOLERANCE:
            print(f"note: {name} {size}: jax's gradient differs from ours by {max_error(ours, run):.1e}", flush=True)
    record["ok"] = record.get("err", math.inf) <= TOLERANCE
    if args.check_only:
        print(f"{name:9} {size:>12}  {record.get('err', math.nan):9.1e}  {'ok' if record['ok'] else 'FAIL'}"
              f"{'  ' + record['error'] if 'error' in record else ''}", flush=True)
        return record
    record.update(ours=median(ours), ours_min=min(ours["times"]), ours_max=max(ours["times"]),
                  torch=median(runs.get("torch")), jax=median(runs.get("jax")),
                  first=ours["first"], replayed=ours["replayed"], calls=len(ours["times"]),
                  fallbacks=ours["fallbacks"], blocker=ours["blocker"])
    cells = [fmt_times(ours["times"])]
    for engine in ("torch", "jax"):
        run = runs.get(engine)
        cells.append(fmt_times(run["times"]) if run and "times" in run else "-")
    ratios = [f"{record['ours'] / record[e]:.2f}" if record.get(e) else "-" for e in ("torch", "jax")]
    print(f"{name:9} {size:>12}  {cells[0]:>22}  {cells[1]:>22}  {cells[2]:>22}  {ratios[0]:>7}  {ratios[1]:>7}"
          f"  {record.get('err', math.nan):8.1e}{'' if record['ok'] else ' FAIL'}  {replay_text(ours)}", flush=True)
    return record


def geometric_mean(values):
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def chosen_sizes(name, sizes_arg):
    from gradbench_heldout_evals import SIZES
    count = len(SIZES[name])
    if sizes_arg == "all":
        return list(range(count))
    if sizes_arg == "smallest":
        return [0]
    return [int(k) for k in sizes_arg.split(",") if int(k) < count]


def parse(argv):
    from gradbench_heldout_evals import PROGRAMS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evals", default=",".join(PROGRAMS))
    ap.add_argument("--sizes", default="all", help="all, smallest, or indices into each eval's sizes (0,1)")
    ap.add_argument("--repeats", type=int, default=5, help="timed calls at least (default 5)")
    ap.add_argument("--seconds", type=float, default=2.0, help="time per engine per row for more calls (default 2)")
    ap.add_argument("--warm-up", type=int, default=20, help="calls after the first, before the timed ones (default 20)")
    ap.add_argument("--reference", choices=("auto", "torch", "fd"), default="auto",
                    help="what the gradient is checked against (auto: torch where it imports, else fd)")
    ap.add_argument("--check-only", action="store_true", help="check the gradients, time nothing")
    ap.add_argument("--json", action="store_true",
                    help="also print our figures and the rows as one JSON line at the end (benchmarks/_figures.py)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds one engine's process may take for one row (default 600; JAX's compile included)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    unknown = [e for e in args.evals.split(",") if e not in PROGRAMS]
    if unknown:
        ap.error(f"unknown eval {unknown[0]!r}: choose from {', '.join(PROGRAMS)}")
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    return args


def main(argv=None):
    sys.path.insert(0, HERE)
    args = parse(argv)
    if args.child:
        engine, name, size_index, grads_path = args.child
        print(json.dumps(CHILDREN[engine](name, int(size_index), args, grads_path)))
        return 0
    engines = [e for e in ("torch", "jax") if importable(e)]
    if args.check_only:
        engines = ["torch"] if reference_kind(args) == "torch" else []
    load = os.getloadavg()
    print(f"held-out GradBench set, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1, 5, 15 min), "
          f"{os.cpu_count()} CPUs; references: {', '.join(engines) or 'none'}; gradients checked against "
          f"{reference_kind(args)} to {TOLERANCE:g}", flush=True)
    if args.check_only:
        print(f"{'eval':9} {'size':>12}  {'max err':>9}")
    else:
        print(f"{'eval':9} {'size':>12}  {'autodiff µs med [min-max]':>22}  {'torch µs':>22}  {'jax jit µs':>22}"
              f"  {'/torch':>7}  {'/jax':>7}  {'max err':>8}  replayed", flush=True)
    records = [measure(name, k, args, engines) for name in args.evals.split(",") for k in chosen_sizes(name, args.sizes)]
    if not args.check_only:
        for engine in ("torch", "jax"):
            ratios = [r["ours"] / r[engine] for r in records if r.get("ours") and r.get(engine)]
            if ratios:
                print(f"geometric mean autodiff/{engine}: {geometric_mean(ratios):.2f}x over {len(ratios)} sizes")
        replayed = sum(1 for r in records if r.get("replayed"))     # None (an older build): not counted
        print(f"rows where some timed call replayed: {replayed} of {len(records)}")
        load = os.getloadavg()
        print(f"load at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        from _figures import figure, print_figures
        print_figures({f"{r['eval']} {r['size']} autodiff (µs)": figure(r["ours"] * 1e6, r["ours_min"] * 1e6,
                                                                         r["ours_max"] * 1e6, "µs")
                       for r in records if r.get("ours")}, records=records)
    return 0 if all(r.get("ok") for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
