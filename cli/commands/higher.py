"""The `jacobian`, `hessian` and `derivative` commands (loaded lazily by main.LAZY).

Engine, rich and renderer imports sit inside the functions: `autodiff --help` loads every command
module, and start-up must stay cheap.
"""
from __future__ import annotations

import click

from ..exitcodes import Exit
from ..options import deprecated, target_options, with_flags
from ..outputs import OUT, save_out
from ..parsing import TargetCommand

HESSIAN_MODES = ("forward-over-reverse", "reverse-over-reverse")
from .common import CHECK, CHECK_SEED, WRT, deliver, emit_checked, load_point, point_json, show_check, wrt_names


@click.command(cls=TargetCommand)
@target_options
@OUT
@WRT
@click.option("--mode", type=click.Choice(["auto", "forward", "reverse"]), default="auto", show_default=True,
              help="forward: one pass carrying a tangent per input element; reverse: one sweep per output element; "
                   "auto: whichever is fewer.")
@CHECK
@CHECK_SEED
def jacobian(target, at, fn, of, dtype, as_json, wrt, mode, debug, check_mode=None, check_seed=None, **limits):
    """The Jacobian of TARGET at a point: J[out..., in...] = ∂out/∂in for each input.

    \b
      autodiff jacobian "[r*cos(t), r*sin(t)]" --at r=2,t=0.5
      autodiff jacobian "A @ x" --at "A=[[1,2],[3,4]],x=[1,1]" --mode forward
      autodiff jacobian "exp(x)/sum(exp(x))" --at "x=[1,2,3]" --check
    """
    return _matrix("jacobian", target, at, fn, of, dtype, as_json, wrt, mode, check_mode, check_seed, limits)


@click.command(cls=TargetCommand)
@target_options
@OUT
@WRT
@click.option("--mode", "method", type=click.Choice(HESSIAN_MODES), default=None,
              help="forward-over-reverse (default): one pass of stacked Hessian-vector products; "
                   "reverse-over-reverse: the taped gradient swept once per element.")
@click.option("--method", "old_method", type=click.Choice(HESSIAN_MODES), default=None, hidden=True,
              callback=deprecated("--method", "--mode"))
@CHECK
@CHECK_SEED
def hessian(target, at, fn, of, dtype, as_json, wrt, method, old_method, debug, check_mode=None, check_seed=None,
            **limits):
    """The Hessian of a scalar TARGET at a point, with its value and gradient.

    \b
      autodiff hessian "x**2*y + y + 2" --at x=3,y=4
      autodiff hessian "log(sum(exp(x)))" --at "x=[1,2,3]"
      autodiff hessian "(1-x)**2 + 100*(y-x**2)**2" --at x=1.2,y=0.7 --check

    --check compares each entry with central differences of the AD gradient.
    """
    method = method or old_method or HESSIAN_MODES[0]
    return _matrix("hessian", target, at, fn, of, dtype, as_json, wrt, method, check_mode, check_seed, limits)


def _matrix(kind, target, at, fn, of, dtype, as_json, wrt, how, check_mode, check_seed, limits) -> int:
    """The one body of `jacobian` and `hessian` (`how` is the --mode or --method): compute, check if
    asked, then print a JSON document or the tables."""
    from ...engine import api
    from ...engine.checks import higher as checks
    from ..render import higher as tables
    compute, check, to_json, show = {
        "jacobian": (api.jacobian, checks.check_jacobian, _jacobian_json, tables.jacobian_result),
        "hessian": (api.hessian, checks.check_hessian, _hessian_json, tables.hessian_result),
    }[kind]
    lim, tgt, values = load_point(target, fn, of, at, limits)
    result = compute(None, values, wrt_names(wrt), how, dtype_name=dtype, limits=lim, target=tgt)
    report = check(result, tgt, check_mode, check_seed, dtype, lim) if check_mode is not None else None
    save_out(limits, lambda: {**to_json(result), **point_json(result)}, result, report)
    if as_json:
        return emit_checked({**to_json(result), **point_json(result)}, report)
    show(tgt, result)
    return show_check(report)


def _jacobian_json(result) -> dict:
    from ...engine.lang.values import shape_of
    from ..output import jsonable
    return {"value": jsonable(result.value), "jacobian": {k: jsonable(v) for k, v in result.jacobian.items()},
            "mode": result.mode, "reason": with_flags(result.reason), "passes": result.passes,
            "output_shape": list(shape_of(result.value)), "unconnected": result.unconnected,
            "wrt": list(result.jacobian), "nonfinite": result.nonfinite}


def _hessian_json(result) -> dict:
    from ..output import jsonable
    return {"value": jsonable(result.value), "gradient": {k: jsonable(v) for k, v in result.gradient.items()},
            "hessian": {a: {b: jsonable(h) for b, h in row.items()} for a, row in result.hessian.items()},
            "mode": result.method, "passes": result.passes, "wrt": list(result.hessian),
            "nonfinite": result.nonfinite}


@click.command(cls=TargetCommand)
@target_options
@OUT
@click.option("--order", "-n", type=click.IntRange(1, 64), default=1, show_default=True, metavar="N",
              help="How many derivatives: f', f'', ..., f^(N).")
@click.option("--mode", "method", type=click.Choice(["reverse", "forward"]), default=None,
              help="reverse (default): nested tapes (each records the sweep below it); forward: nested dual numbers.")
@click.option("--method", "old_method", type=click.Choice(["reverse", "forward"]), default=None, hidden=True,
              callback=deprecated("--method", "--mode"))
def derivative(target, at, fn, of, dtype, as_json, order, method, old_method, debug, **limits):
    """The first N derivatives of a scalar function of one scalar input.

    \b
      autodiff derivative "sin(x)" --at x=0.5 --order 8
      autodiff derivative "exp(x**2)" --at x=1 -n 6 --json

    Cost: the tape of order k records the sweep of order k-1, so it grows with how the derivative
    expressions swell: linearly in N for sin or polynomials, geometrically for products and
    compositions such as exp(x**2). The output reports the tape sizes it measured.
    """
    from ...engine import api
    method = method or old_method or "reverse"
    lim, tgt, values = load_point(target, fn, of, at, limits)
    result = api.derivatives(None, values, order, method, dtype_name=dtype, limits=lim, target=tgt)

    def show():
        from ..render.higher import derivative_result
        derivative_result(tgt, result)
    return deliver(limits, as_json, result, lambda: _derivative_json(result), show)


def _derivative_json(result) -> dict:
    from ..output import jsonable
    from ..render.higher import cost_summary
    return {"value": jsonable(result.value), "derivatives": [jsonable(d) for d in result.derivatives],
            "wrt": [result.name], "order": result.order, "mode": result.method,
            "cost": {"tape_entries": result.tape_entries, "seconds": result.seconds,
                     "explanation": cost_summary(result)},
            **point_json(result)}
