"""The Python API's whole-command entry points beside grad and evaluate (engine/api.py): a check
file run as `autodiff check` runs it, and the graph and step-by-step explanation of a gradient as
`autodiff graph`, `grad --explain`, `jacobian --explain`, `hessian --explain` and `derivative
--explain` build them.
Returns results; never prints."""
from __future__ import annotations

from .checks.files import load_file
from .checks.runner import override, run_cases
from .diff.reverse import grad as reverse_grad
from .lang.target import bind, load
from .lang.values import set_dtype
from .views import derivative_steps, hessian_steps, jacobian_steps


def check_file(path: str, mode=None, seed=None, jobs: int = 1, dtype=None, rtol=None, atol=None,
               step=None, isolate: bool = False) -> list:
    """Run every case of a TOML check file; a list of CaseResult (`.failed`, `.verdict`, `.where`).
    `mode="fast"` checks every case in fast mode; `seed` fixes its random projections; `dtype`,
    `rtol`, `atol`, `step` replace every case's own (as `check --dtype ...`). The cases run in
    this process unless `jobs` > 1 or `isolate`: then in supervised worker processes (as
    `autodiff check` runs them), where a case that crashes the interpreter is that case's error."""
    cases = override(load_file(path), dtype=dtype, rtol=rtol, atol=atol, step=step)
    return run_cases(cases, jobs=jobs, mode=mode, seed=seed, isolate=isolate)


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


def explain_hessian(source, at=None, wrt=None, method="forward-over-reverse", fn=None, of=None,
                    dtype_name="float64", limits=None):
    """The Hessian of the target at a point with the two stages that built it, as `hessian
    --explain` shows them: the gradient's reverse sweep, then a row per input direction."""
    set_dtype(dtype_name)
    target = load(source, fn, of)
    return hessian_steps.explain_hessian(*bind(target, dict(at or {})), wrt, method, dtype_name, limits)


def explain_jacobian(source, at=None, wrt=None, mode="auto", fn=None, of=None, dtype_name="float64",
                     limits=None):
    """The Jacobian of the target at a point with the sweeps (reverse: a row each) or the passes
    (forward: a column each) that built it, as `jacobian --explain` shows them."""
    set_dtype(dtype_name)
    target = load(source, fn, of)
    return jacobian_steps.explain_jacobian(*bind(target, dict(at or {})), wrt, mode, dtype_name, limits)


def explain_derivatives(source, at=None, order=1, wrt=None, mode="reverse", fn=None, of=None, dtype_name="float64",
                        limits=None):
    """f', ..., f^(order) of the target at a point with the stages that built them, as `derivative
    --explain` shows them: per order, the reverse sweep of the tape that recorded f and the sweeps
    below it (nested tapes), or with mode="forward" (order 1) the dual-number pass."""
    set_dtype(dtype_name)
    target = load(source, fn, of)
    return derivative_steps.explain_derivatives(*bind(target, dict(at or {})), order, wrt, mode,
                                                dtype_name, limits)
