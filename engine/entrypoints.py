"""The Python API's whole-command entry points beside grad and evaluate (engine/api.py): a check
file run as `autodiff check` runs it, and the graph and step-by-step explanation of a gradient as
`autodiff graph` and `grad --explain` build them. Returns results; never prints."""
from __future__ import annotations

from .checks.files import load_file
from .checks.runner import run_cases
from .diff.reverse import grad as reverse_grad
from .lang.target import load


def check_file(path: str, mode=None, seed=None, jobs: int = 1, isolate: bool = False) -> list:
    """Run every case of a TOML check file; a list of CaseResult (`.failed`, `.verdict`, `.where`).
    `mode="fast"` checks every case in fast mode; `seed` fixes its random projections. The cases
    run in this process unless `jobs` > 1 or `isolate`: then in supervised worker processes (as
    `autodiff check` runs them), where a case that crashes the interpreter is that case's error."""
    return run_cases(load_file(path), jobs=jobs, mode=mode, seed=seed, isolate=isolate)


def graph(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None):
    """The computational graph of the gradient of the target at a point (nodes, edges, adjoints)."""
    from .views.graph import from_result
    target = load(source, fn, of)
    result = reverse_grad(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=target, keep_tape=True)
    return from_result(result, target.source)


def explain(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None):
    """The reverse sweep of the gradient of the target at a point, step by step (the chain rule)."""
    from .views.explain import reverse
    target = load(source, fn, of)
    result = reverse_grad(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=target, keep_tape=True)
    return reverse(result, target.source)
