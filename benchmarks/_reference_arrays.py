"""The workers of benchmarks/arrays.py: one engine, one measurement, in a fresh process; prints one
JSON line. The same 20-op chain and the same Hessian/Jacobian functions in every engine."""
from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

# 20 elementwise ops and a sum; the same text is our engine's expression
CHAIN = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
         " + sigmoid(x) * x)")
HESSIAN = "sum(x ** 2 * sin(x)) + log(sum(exp(x))) + sum(x) ** 3"
JACOBIAN = "sin(x) * sum(x) + x ** 3"


def chain(m, sigmoid, x):
    return m.sum(m.exp(-(m.tanh(m.sin(x) * m.cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x))
                 * m.sqrt(x * x + 1.0) + sigmoid(x) * x)


def hessian_fn(m, x):
    return m.sum(x ** 2 * m.sin(x)) + m.log(m.sum(m.exp(x))) + m.sum(x) ** 3


def jacobian_fn(m, x):
    return m.sin(x) * m.sum(x) + x ** 3


def numpy_chain_grad(x):
    """The chain's reverse pass written by hand in numpy (what a person would write)."""
    import numpy as np
    y1, y2 = np.sin(x), np.cos(x)
    y4 = y1 * y2 + x
    y5 = np.tanh(y4)
    y7 = y5 * 0.5 + 1.0
    y8 = y7 ** 2
    y11 = 1.0 + x * x
    y12 = -y8 / y11
    y13 = np.exp(y12)
    y16 = np.sqrt(x * x + 1.0)
    y18 = 1.0 / (1.0 + np.exp(-x))
    gx = y18 + x * y18 * (1.0 - y18)
    gx += y13 * 0.5 / y16 * 2.0 * x
    g12 = y16 * y13
    gx += g12 * y8 / (y11 * y11) * 2.0 * x
    g4 = -g12 / y11 * 2.0 * y7 * 0.5 * (1.0 - y5 * y5)
    gx += g4 + g4 * (y2 * y2 - y1 * y1)
    return gx


def timed(fn, repeats):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return summary(samples)


def summary(samples):
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": samples}


def timed_pair(grad, forward, repeats, warm_up):
    """The chain's gradient and forward samples, taken in turns after `warm_up` calls of each, in
    every engine alike: a machine whose speed drifts slows both sides of grad/fwd alike, and
    neither side's table figure holds first-call costs (kernels traced or compiled, buffers and
    the heap faulted in; the first gradient is measured apart, for its peak memory)."""
    for _ in range(warm_up):
        grad()
        forward()
    samples = {"grad": [], "forward": []}
    for _ in range(repeats):
        for name, fn in (("grad", grad), ("forward", forward)):
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: summary(taken) for name, taken in samples.items()}


def extra_peak_tracemalloc(fn):
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def extra_peak_rss(fn):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    fn()
    return max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before)


def ours(kind, n, repeats, warm_up):
    import numpy as np
    from autodiff.engine import api
    if kind == "chain":
        x = np.linspace(-2, 2, n)
        target = api.load(CHAIN)
        grad = lambda: api.grad(None, at={"x": x}, target=target)        # noqa: E731
        # the first gradient's arrays: the modules its regions load (about 0.9 MB, 1.1 arrays of
        # n at 1e5) are loaded by a gradient of another program at this size first
        api.grad("sum(x * x * 2.0 + x)", at={"x": x})
        peak = extra_peak_tracemalloc(grad)                               # the first gradient
        # the second records the trace the later ones replay (every value of the run kept once)
        recording = extra_peak_tracemalloc(grad)
        forward = lambda: api.evaluate(None, at={"x": x}, target=target)  # noqa: E731
        return {**timed_pair(grad, forward, repeats, warm_up), "peak_bytes": peak, "recording_peak_bytes": recording}
    x = np.linspace(-1, 1, n)
    # the Function an API user calls at many points (autodiff.function): its Hessian and forward
    # Jacobian replay the recorded trace; api.hessian / api.jacobian interpret each call
    if kind == "hessian":
        f = api.function(HESSIAN)
        run = lambda: f.hessian(x=x)                                      # noqa: E731
    else:
        f = api.function(JACOBIAN)
        run = lambda: f.jacobian(x=x, mode="forward")                     # noqa: E731
    run()
    run()                                  # the first call interprets, the second records the trace
    return {"run": timed(run, repeats)}


def numpy_hand(kind, n, repeats, warm_up):
    import numpy as np
    x = np.linspace(-2, 2, n)
    peak = extra_peak_tracemalloc(lambda: numpy_chain_grad(x))
    forward = lambda: chain(np, lambda v: 1.0 / (1.0 + np.exp(-v)), x)   # noqa: E731
    return {**timed_pair(lambda: numpy_chain_grad(x), forward, repeats, warm_up), "peak_bytes": peak}


def hips(kind, n, repeats, warm_up):
    import autograd
    import autograd.numpy as anp
    x = anp.linspace(-2, 2, n)
    f = lambda v: chain(anp, lambda u: 1.0 / (1.0 + anp.exp(-u)), v)     # noqa: E731
    g = autograd.grad(f)
    peak = extra_peak_tracemalloc(lambda: g(x))
    return {**timed_pair(lambda: g(x), lambda: f(x), repeats, warm_up), "peak_bytes": peak}


def torch_engine(kind, n, repeats, warm_up, threads):
    import torch
    if threads:
        torch.set_num_threads(threads)
    torch.set_default_dtype(torch.float64)
    if kind == "chain":
        small = torch.linspace(-2, 2, 1000).requires_grad_(True)
        chain(torch, torch.sigmoid, small).backward()          # load autograd's machinery first
        x = torch.linspace(-2, 2, n)

        def grad():
            xr = x.clone().requires_grad_(True)
            chain(torch, torch.sigmoid, xr).backward()
            return xr.grad

        def forward():
            with torch.no_grad():
                return chain(torch, torch.sigmoid, x)
        peak = extra_peak_rss(grad)
        return {**timed_pair(grad, forward, repeats, warm_up), "peak_bytes": peak}
    from torch.autograd.functional import hessian, jacobian
    x = torch.linspace(-1, 1, n)
    if kind == "hessian":
        run = lambda: hessian(lambda v: hessian_fn(torch, v), x, vectorize=True)   # noqa: E731
    else:
        run = lambda: jacobian(lambda v: jacobian_fn(torch, v), x, vectorize=True,  # noqa: E731
                               strategy="forward-mode")
    run()
    return {"run": timed(run, repeats)}


def jax_engine(kind, n, repeats, warm_up):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    if kind == "chain":
        x = jnp.linspace(-2, 2, n)
        f = lambda v: chain(jnp, jax.nn.sigmoid, v)                      # noqa: E731
        g = jax.jit(jax.grad(f))
        fj = jax.jit(f)
        start = time.perf_counter()
        compiled = g.lower(x).compile()
        compile_s = time.perf_counter() - start
        fj(x).block_until_ready()
        memory = compiled.memory_analysis()
        peak = (memory.temp_size_in_bytes + memory.output_size_in_bytes) if memory is not None else None
        return {**timed_pair(lambda: g(x).block_until_ready(), lambda: fj(x).block_until_ready(), repeats, warm_up),
                "peak_bytes": peak, "compile_s": compile_s}
    x = jnp.linspace(-1, 1, n)
    if kind == "hessian":
        h = jax.jit(jax.hessian(lambda v: hessian_fn(jnp, v)))
    else:
        h = jax.jit(jax.jacfwd(lambda v: jacobian_fn(jnp, v)))
    start = time.perf_counter()
    h(x).block_until_ready()
    compile_s = time.perf_counter() - start
    return {"run": timed(lambda: h(x).block_until_ready(), repeats), "compile_s": compile_s}


def main():
    engine, kind, n, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    warm_up = int(sys.argv[5]) if len(sys.argv) > 5 else 0          # the chain's calls before its timed ones
    if engine == "ours":
        out = ours(kind, n, repeats, warm_up)
    elif engine == "numpy":
        out = numpy_hand(kind, n, repeats, warm_up)
    elif engine == "autograd":
        out = hips(kind, n, repeats, warm_up)
    elif engine.startswith("torch"):
        out = torch_engine(kind, n, repeats, warm_up, 1 if engine == "torch-1" else None)
    else:
        out = jax_engine(kind, n, repeats, warm_up)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
