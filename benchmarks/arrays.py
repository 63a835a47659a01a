"""Large arrays (issue 11), side by side in one run, each engine in its own fresh process
(benchmarks/_reference_arrays.py): a benchmark, not a test; timings vary with machine and load.

    python benchmarks/arrays.py [--ref-python PATH] [--repeats N] [--rounds R] [--warm-up W] [--quick]
        [--only-ours] [--json]

1. The 20-op elementwise chain of _reference_arrays.CHAIN at 1e5, 1e6 and 1e7 float64 elements:
   gradient and forward time (median, min-max) and the first gradient's extra peak memory in arrays
   of n (ours: the modules its regions load are loaded by another program's gradient first; and
   the second gradient's, which records the trace the later calls replay, in --json), for our engine (the library as an API user gets it), a hand-written numpy reverse pass,
   HIPS autograd, PyTorch eager (default threads and one thread) and JAX jit (compile time apart).
   Every engine makes W gradients and W forwards (--warm-up, default 3) before the timed ones,
   which alternate, gradient then forward: grad/fwd compares the two at the same moments, and
   neither holds a first call's costs (kernels traced, the heap faulted in; the first gradient
   is measured apart, for its peak memory).
   Our chain is one fused region (engine/core/regions.py): its forward is numpy's vectorized
   tanh, exp and sqrt and numexpr kernels for sin, cos and the arithmetic between them; its
   gradient is one tape entry whose reverse kernels are traced from the rules table and read x
   and the six transcendental values the forward kept. The first call interprets (the region
   made lazily, core/lazy.py), the second records the trace, the later ones replay it (the
   same region, one equation of the trace's Program): the timed gradients are replays.
2. The Hessian (HESSIAN) and the forward-mode Jacobian (JACOBIAN) of n = 50, 200, 1000 inputs next
   to torch.autograd.functional.hessian/jacobian(vectorize=True) and JAX's jitted hessian/jacfwd.
   Ours is the Function an API user calls at many points (`autodiff.function(f).hessian(x=x)`,
   `.jacobian(x=x, mode="forward")`), which replays its recorded trace on structured tangent
   stacks (engine/core/tangent_stack.py); `api.hessian` interprets every call.

With --rounds R every engine runs R times, each time in a fresh process, the engines taking turns
in a rotating order (ours, torch, ..., then torch, ..., ours): a machine whose speed drifts
between minutes slows every engine alike, and each row's median and min-max are over all its
rounds' samples. Our rows run under this interpreter; the references under --ref-python (default: this one), where
torch, jax and autograd may be installed: none is a project dependency, a missing one is skipped.
Peak memory: tracemalloc for numpy-based engines, the growth of the peak RSS for torch, XLA's
temp + output buffers for JAX; each row's median over its rounds. The workers run with
PYTHONDONTWRITEBYTECODE unset (byte-code caches written and read, as an installed package has
them), every engine alike.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "_reference_arrays.py")
CHAIN_ENGINES = ["ours", "numpy", "autograd", "torch", "torch-1", "jax"]
MATRIX_ENGINES = ["ours", "torch", "jax"]
FIGURES: dict = {}      # ours, for --json (benchmarks/_figures.py)


# The workers run as an installed package does, with byte-code caches: where PYTHONDONTWRITEBYTECODE
# is set (as on the machines this project is built on), a source tree's modules are compiled
# again at every start, and that compilation was counted in the first gradient's peak memory
# (1.6 MB at first use: 2 arrays of 1e5), and in its time.
WORKER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def work(python, engine, kind, n, repeats, warm_up=0):
    proc = subprocess.run([python, WORKER, engine, kind, str(n), str(repeats), str(warm_up)], capture_output=True,
                          text=True, timeout=900, env=WORKER_ENV)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def pooled(outs):
    """One engine's rounds as one result: medians and ranges over every round's samples."""
    result = dict(outs[0])
    for key, stat in outs[0].items():
        if isinstance(stat, dict) and "samples" in stat:
            samples = [t for out in outs for t in out[key]["samples"]]
            result[key] = {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}
        elif key in ("peak_bytes", "compile_s") and stat is not None:
            result[key] = statistics.median(out[key] for out in outs)
    return result


def in_rounds(args, engines, run_one):
    """{engine: (pooled result, error)} after args.rounds rounds in rotating engine order."""
    outs, errors = {e: [] for e in engines}, {}
    for round_ in range(args.rounds):
        shift = round_ % len(engines)
        for engine in engines[shift:] + engines[:shift]:
            out, err = run_one(engine)
            if out is None:
                errors[engine] = err
            else:
                outs[engine].append(out)
    return {e: (pooled(outs[e]), None) if outs[e] else (None, errors.get(e, "failed")) for e in engines}


def ms(stat):
    return f"{1e3 * stat['median']:8.1f} ({1e3 * stat['min']:.1f}-{1e3 * stat['max']:.1f})"


def chain_table(args, sizes):
    print("20-op chain: gradient and forward, ms median (min-max); extra peak memory in arrays of n")
    print(f"{'n':>9} {'engine':<9} {'gradient':>26} {'forward':>26} {'grad/fwd':>8} {'peak':>6} "
          f"{'vs torch':>8}")
    for n in sizes:
        repeats = args.repeats if n < 10 ** 7 else max(1, args.repeats // 2)
        rows = in_rounds(args, engines(args, CHAIN_ENGINES), lambda engine: work(
            sys.executable if engine == "ours" else args.ref_python, engine, "chain", n, repeats, args.warm_up))
        torch_grad = rows["torch"][0]["grad"]["median"] if "torch" in rows and rows["torch"][0] else None
        keep(f"chain {n:.0e}", rows["ours"][0], ("grad", "forward"))
        for engine, (out, err) in rows.items():
            if out is None:
                print(f"{n:>9.0e} {engine:<9} skipped: {err[:80]}")
                continue
            ratio = out["grad"]["median"] / out["forward"]["median"]
            peak = "" if out.get("peak_bytes") is None else f"{out['peak_bytes'] / (8 * n):6.1f}"
            versus = f"{out['grad']['median'] / torch_grad:7.2f}x" if torch_grad else ""
            extra = f"  compile {out['compile_s']:.2f} s" if "compile_s" in out else ""
            print(f"{n:>9.0e} {engine:<9} {ms(out['grad']):>26} {ms(out['forward']):>26} {ratio:8.2f} "
                  f"{peak:>6} {versus:>8}{extra}")


def matrix_table(args, kind, sizes):
    print(f"{kind} of n inputs: ms median (min-max)")
    for n in sizes:
        rows = in_rounds(args, engines(args, MATRIX_ENGINES), lambda engine: work(
            sys.executable if engine == "ours" else args.ref_python, engine, kind, n, args.repeats))
        torch_run = rows["torch"][0]["run"]["median"] if "torch" in rows and rows["torch"][0] else None
        keep(f"{kind} {n}", rows["ours"][0], ("run",))
        for engine, (out, err) in rows.items():
            if out is None:
                print(f"{n:>6} {engine:<9} skipped: {err[:80]}")
                continue
            versus = f"{out['run']['median'] / torch_run:7.2f}x torch" if torch_run else ""
            extra = f"  compile {out['compile_s']:.2f} s" if "compile_s" in out else ""
            print(f"{n:>6} {engine:<9} {ms(out['run']):>26} {versus}{extra}")


def engines(args, names):
    return names[:1] if args.only_ours else names


def keep(label, out, stats):
    """Our figures of a row (ms median, min, max; the chain's peak in arrays of n) for --json."""
    if out is None:
        return
    from _figures import figure
    for stat in stats:
        s = out[stat]
        FIGURES[f"{label} ours {stat} (ms)"] = figure(s["median"] * 1e3, s["min"] * 1e3, s["max"] * 1e3, "ms")
    if out.get("peak_bytes") is not None and label.startswith("chain"):
        FIGURES[f"{label} ours peak (arrays of n)"] = figure(out["peak_bytes"] / (8 * float(label.split()[1])),
                                                              unit="arrays")
    if out.get("recording_peak_bytes") is not None:
        FIGURES[f"{label} ours second gradient's peak (arrays of n)"] = figure(
            out["recording_peak_bytes"] / (8 * float(label.split()[1])), unit="arrays")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref-python", default=sys.executable)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1,
                        help="fresh processes per engine, the engines taking turns (default 1)")
    parser.add_argument("--warm-up", type=int, default=3,
                        help="the chain's gradients and forwards of each engine before its timed ones (default 3)")
    parser.add_argument("--quick", action="store_true", help="1e5 and 1e6 only; n = 50 and 200")
    parser.add_argument("--only-ours", action="store_true", help="our engine only, no reference engines")
    parser.add_argument("--json", action="store_true", help="also print our figures as one JSON line at the end")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.warm_up < 0:
        parser.error("--warm-up must be at least 0")
    print("load:", os.getloadavg() if hasattr(os, "getloadavg") else "unknown", f"rounds: {args.rounds}",
          f"warm-up: {args.warm_up}")
    chain_table(args, [10 ** 5, 10 ** 6] if args.quick else [10 ** 5, 10 ** 6, 10 ** 7])
    sizes = [50, 200] if args.quick else [50, 200, 1000]
    matrix_table(args, "hessian", sizes)
    matrix_table(args, "jacobian", sizes)
    if args.json:
        from _figures import print_figures
        print_figures(FIGURES)


if __name__ == "__main__":
    main()
