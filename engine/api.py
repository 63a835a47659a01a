"""The facade the CLI and Python users import: load a target (an expression or a program), bind
inputs, evaluate it, differentiate it (reverse or forward mode, Jacobians, Hessians, n-th
derivatives), check derivatives (gradient, Jacobian and Hessian checks, check files) and read a
finished tape (graph, explanations, plot data). Results come back with NaN provenance filled in;
nothing here prints. Everything past evaluate and grad is imported on first use (see _LAZY)."""
from __future__ import annotations

import math

from ..parser.errors import SourceError
from .diff.common import seed_for
from .diff.reverse import GradResult, RunResult
from .diff.reverse import evaluate as _evaluate
from .diff.reverse import grad as _reverse_grad
from .lang.limits import Limits
from .lang.target import (Runner, Target, bind_inputs, check_output, constant, load, looks_like_file,
                          run_target, split_top_level)

# The rest of the facade, imported on first use: `autodiff grad "x*x"` must not pay at start-up for
# forward mode, Hessians, checks or views. Public name -> (module under engine/, its name there).
_LAZY = {
    "jvp": ("diff.forward", "jvp"), "jacobian": ("diff.forward", "jacobian"),
    "JacobianResult": ("diff.forward", "JacobianResult"), "choose_mode": ("diff.forward", "choose_mode"),
    "hessian": ("diff.higher", "hessian"), "derivatives": ("diff.higher", "derivatives"),
    "HessianResult": ("diff.higher", "HessianResult"), "DerivativeResult": ("diff.higher", "DerivativeResult"),
    "check_gradient": ("checks.gradient", "check_gradient"), "CheckReport": ("checks.report", "CheckReport"),
    "check_jacobian": ("checks.higher", "check_jacobian"), "check_hessian": ("checks.higher", "check_hessian"),
    "load_check_file": ("checks.files", "load_file"), "parse_check_text": ("checks.files", "parse_text"),
    "run_check_case": ("checks.runner", "run_case"), "run_check_cases": ("checks.runner", "run_cases"),
    "shard_cases": ("checks.runner", "shard"),
    "graph_from_result": ("views.graph", "from_result"), "layout_graph": ("views.graph", "layout"),
    "explain_reverse": ("views.explain", "reverse"), "explain_forward": ("views.explain", "forward"),
    "plot_data": ("views.plotdata", "sample"), "plot_breaks": ("views.plotdata", "breaks"),
    "check_file": ("entrypoints", "check_file"), "graph": ("entrypoints", "graph"),
    "explain": ("entrypoints", "explain"), "CaseResult": ("checks.runner", "CaseResult"),
}

__all__ = ["load", "evaluate", "grad", "constant", "Target", "Runner", "Limits", "RunResult",
           "GradResult", "bind_inputs", "run_target", "check_output", "seed_for", "looks_like_file",
           "split_top_level", "SourceError", *_LAZY]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module
    module, attr = _LAZY[name]
    value = getattr(import_module(f"{__package__}.{module}"), attr)
    globals()[name] = value                # looked up once
    return value


def _finite_floats(values) -> bool:
    """Plain finite floats need no NaN provenance (nor its import, on the scalar start-up path)."""
    return all(v.__class__ is float and math.isfinite(v) for v in values)


def evaluate(source, at=None, fn=None, of=None, dtype_name="float64", limits=None, target=None) -> RunResult:
    """Evaluate the target at a point (no derivatives)."""
    target = target or load(source, fn, of)
    result = _evaluate(None, at, dtype_name=dtype_name, limits=limits, target=target)
    if not _finite_floats([result.value]):
        from .views.provenance import diagnose_run     # only when the value may be non-finite
        diagnose_run(result, target, dtype_name, limits)
    return result


def grad(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None,
         target=None, keep_tape=False, mode="reverse") -> GradResult:
    """The gradient of the target at a point. A non-scalar output is summed (the seeds'
    convention) unless `seed` gives v for vᵀJ. `mode="forward"` gives the same by forward mode."""
    if mode == "forward":
        from .diff.forward import gradient as forward_gradient    # forward mode only when asked for
        return forward_gradient(source, at, wrt, seed, fn, of, dtype_name, limits, target)
    target = target or load(source, fn, of)
    result = _reverse_grad(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=target,
                           keep_tape=keep_tape)
    if not _finite_floats([result.value, *result.gradient.values()]):
        from .views.provenance import diagnose_grad    # only when a number may be non-finite
        diagnose_grad(result, source, at, wrt, seed, target, dtype_name, limits)
    return result
