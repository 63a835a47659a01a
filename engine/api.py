"""The facade the CLI and Python users import: load a target (an expression or a program), bind
inputs, evaluate it, differentiate it (reverse or forward mode, Jacobians, Hessians, n-th
derivatives). Results come back with NaN provenance filled in; nothing here prints."""
from __future__ import annotations

from ..parser.errors import SourceError
from .diff.common import seed_for
from .diff.forward import JacobianResult, choose_mode, jacobian, jvp
from .diff.forward import gradient as _forward_gradient
from .diff.higher import DerivativeResult, HessianResult, derivatives, hessian
from .diff.reverse import GradResult, RunResult
from .diff.reverse import evaluate as _evaluate
from .diff.reverse import grad as _reverse_grad
from .lang.limits import Limits
from .lang.target import (Runner, Target, bind_inputs, check_output, constant, load, looks_like_file,
                          run_target, split_top_level)
from .views.provenance import diagnose_grad, diagnose_run

__all__ = ["load", "evaluate", "grad", "jacobian", "jvp", "hessian", "derivatives", "constant", "parse_at",
           "Target", "Runner", "Limits", "RunResult", "GradResult", "JacobianResult", "HessianResult",
           "DerivativeResult", "bind_inputs", "run_target", "check_output", "seed_for", "choose_mode",
           "looks_like_file", "split_top_level", "SourceError"]


def evaluate(source, at=None, fn=None, of=None, dtype_name="float64", limits=None, target=None) -> RunResult:
    """Evaluate the target at a point (no derivatives)."""
    target = target or load(source, fn, of)
    result = _evaluate(None, at, dtype_name=dtype_name, limits=limits, target=target)
    diagnose_run(result, target, dtype_name, limits)
    return result


def grad(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None,
         target=None, keep_tape=False, mode="reverse") -> GradResult:
    """The gradient of the target at a point. A non-scalar output is summed (the seeds'
    convention) unless `seed` gives v for vᵀJ. `mode="forward"` gives the same by forward mode."""
    if mode == "forward":
        return _forward_gradient(source, at, wrt, seed, fn, of, dtype_name, limits, target)
    target = target or load(source, fn, of)
    result = _reverse_grad(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=target,
                           keep_tape=keep_tape)
    diagnose_grad(result, source, at, wrt, seed, target, dtype_name, limits)
    return result


def parse_at(items, limits: Limits | None = None) -> dict:
    """`--at x=3,y=4 --at "A=[[1,2],[3,4]]"` -> {"x": 3.0, "y": 4.0, "A": array}."""
    values = {}
    for item in items:
        for part in split_top_level(item):
            name, eq, expr = part.partition("=")
            name = name.strip()
            if not eq or not name.isidentifier() or not expr.strip():
                raise SourceError("bad input", f"--at expects NAME=VALUE, got {part!r}", None,
                                  "e.g. --at x=3,y=4 or --at \"A=[[1,2],[3,4]]\"")
            if name in values:
                raise SourceError("bad input", f"--at gives {name} twice")
            values[name] = constant(expr.strip(), f"--at {name}", limits)
    return values
