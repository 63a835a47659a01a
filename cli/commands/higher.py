"""The `jacobian`, `hessian` and `derivative` commands (loaded lazily by main.LAZY).

Engine, rich and renderer imports sit inside the functions: `autodiff --help` loads every command
module, and start-up must stay cheap.
"""
from __future__ import annotations

import click

from ..options import INT_SEED, OLD_CHECK_SEED, deprecated, no_random_seed_used, target_options, tolerances, with_flags
from ..outputs import OUT, save_out
from ..parsing import TargetCommand
from .common import (CHECK, HAND, TRUST_RULES, WRT, deliver, emit_checked, load_point, point_json, require_check_for,
                     show_check, wrt_names)
from .evaluate import wirtinger_json

HESSIAN_MODES = ("forward-over-reverse", "reverse-over-reverse")


def seeded_check(f):
    """--check, --seed (and its old spelling --check-seed), --rtol/--atol/--step."""
    f = tolerances(f)
    for option in (TRUST_RULES, OLD_CHECK_SEED, INT_SEED, HAND, CHECK):
        f = option(f)
    return f


@click.command(cls=TargetCommand, short_help="The Jacobian ∂out/∂in of a target at a point.")
@target_options
@OUT
@WRT
@click.option("--mode", type=click.Choice(["auto", "forward", "reverse"]), default="auto", show_default=True,
              help="forward: one pass carrying a tangent per input element; reverse: one sweep per output element; "
                   "auto: whichever is fewer.")
@click.option("--explain", is_flag=True, help="Show how the Jacobian is built: a reverse sweep per output "
              "entry (its rows), or with --mode forward a pass of dual numbers per input (its columns).")
@click.option("--holomorphic", is_flag=True, help="Complex values: the complex Jacobian df/dz of a holomorphic f "
              "(refused, with the reason, where f is not); without it, the real 2x2 blocks d(re, im) f / d(re, im) z.")
@seeded_check
def jacobian(target, at, fn, of, dtype, as_json, wrt, mode, explain, debug, holomorphic=False, **options):
    """The Jacobian of TARGET at a point: J[out..., in...] = ∂out/∂in for each input.

    \b
      autodiff jacobian "[r*cos(t), r*sin(t)]" --at r=2,t=0.5
      autodiff jacobian "A @ x" --at "A=[[1,2],[3,4]],x=[1,1]" --mode forward
      autodiff jacobian "exp(x)/sum(exp(x))" --at "x=[1,2,3]" --check --atol 1e-12
      autodiff jacobian "[x*y, x+y]" --at x=1,y=2 --explain
      autodiff jacobian "exp(z)*z" --at z=1j --holomorphic

    Complex values: each is the pair (re, im), a block's trailing axes being the output's
    (re, im) then the input's (re, im) where that side is complex ("layout" in --json); with
    --holomorphic, the complex Jacobian of a holomorphic f.
    """
    if holomorphic:
        if explain:
            from ...parser.errors import SourceError
            raise SourceError("usage", "--explain and --holomorphic are separate views: use one at a time")
        options["holomorphic"] = True
    if explain:
        from .explain_higher import explain_jacobian
        return explain_jacobian(target, at, fn, of, dtype, as_json, wrt, mode, options, _jacobian_json)
    return _matrix("jacobian", target, at, fn, of, dtype, as_json, wrt, mode, options)


@click.command(cls=TargetCommand, short_help="The Hessian of a scalar target, with value and gradient.")
@target_options
@OUT
@WRT
@click.option("--mode", "method", type=click.Choice(HESSIAN_MODES), default=None,
              help="forward-over-reverse (default): one pass of stacked Hessian-vector products; "
                   "reverse-over-reverse: the taped gradient swept once per element.")
@click.option("--method", "old_method", type=click.Choice(HESSIAN_MODES), default=None, hidden=True,
              callback=deprecated("--method", "--mode"))
@click.option("--explain", is_flag=True, help="Show how the Hessian is built: the gradient's reverse sweep, "
              "then a row of the Hessian per input direction (forward over that sweep, or reverse over it).")
@seeded_check
def hessian(target, at, fn, of, dtype, as_json, wrt, method, old_method, explain, debug, **options):
    """The Hessian of a scalar TARGET at a point, with its value and gradient.

    \b
      autodiff hessian "x**2*y + y + 2" --at x=3,y=4
      autodiff hessian "log(sum(exp(x)))" --at "x=[1,2,3]"
      autodiff hessian "(1-x)**2 + 100*(y-x**2)**2" --at x=1.2,y=0.7 --check
      autodiff hessian "x**2*y" --at x=3,y=4 --explain

    --check compares each entry with central differences of the AD gradient.
    """
    method = method or old_method or HESSIAN_MODES[0]
    if explain:
        from .explain_higher import explain_hessian
        return explain_hessian(target, at, fn, of, dtype, as_json, wrt, method, options, _hessian_json)
    return _matrix("hessian", target, at, fn, of, dtype, as_json, wrt, method, options)


def check_settings(options: dict) -> tuple:
    """(check mode, seed, tolerances) from a command's --check options, checked for sense: a
    tolerance without --check is a usage error, a seed nothing uses a warning."""
    check_mode = options.pop("check_mode", None)
    seed = options.pop("seed", None)
    old_seed = options.pop("old_check_seed", None)
    seed = seed if seed is not None else old_seed
    tolerance = {name: options.pop(name, None) for name in ("rtol", "atol", "step")}
    require_check_for(check_mode, **tolerance)
    trust_rules = options.pop("trust_rules", None)
    if trust_rules and check_mode is None:
        from ...parser.errors import SourceError
        raise SourceError("usage", "--trust-rules says which rules a --check lists as trusted, and this run "
                          "checks nothing", None, "add --check")
    no_random_seed_used(seed, check_mode)
    return check_mode, seed, {**tolerance, "trust_rules": bool(trust_rules)}


def _matrix(kind, target, at, fn, of, dtype, as_json, wrt, how, options) -> int:
    """The one body of `jacobian` and `hessian` (`how` is the --mode): compute, check if asked,
    then print a JSON document or the tables."""
    from ...engine import api
    from ...engine.checks import higher as checks
    from ..render import higher as tables
    compute, check, to_json, show = {
        "jacobian": (api.jacobian, checks.check_jacobian, _jacobian_json, tables.jacobian_result),
        "hessian": (api.hessian, checks.check_hessian, _hessian_json, tables.hessian_result),
    }[kind]
    hand = options.pop("hand", None)
    if hand is not None and options.get("check_mode") is not None:
        raise api.SourceError("usage", f"--hand checks the hand-derived {kind} against AD; --check checks AD against "
                              "finite differences: use one at a time")
    if hand is not None:
        options["check_mode"] = "full"       # its tolerances are --hand's
    holomorphic = {"holomorphic": True} if options.pop("holomorphic", False) else {}
    check_mode, seed, tolerance = check_settings(options)
    lim, tgt, values = load_point(target, fn, of, at, options)
    result = compute(None, values, wrt_names(wrt), how, dtype_name=dtype, limits=lim, target=tgt, **holomorphic)
    if hand is not None:
        report = _hand_report(kind, result, tgt, hand, dtype, tolerance)
    else:
        report = check(result, tgt, check_mode, seed, dtype, lim, **tolerance) if check_mode is not None else None
    save_out(options, lambda: {**to_json(result), **point_json(result)}, result, report)
    if as_json:
        return emit_checked({**to_json(result), **point_json(result)}, report)
    show(tgt, result)
    return show_check(report)


def _hand_report(kind, result, target, hand, dtype, tolerance):
    """--hand NAME: the program's function NAME against the AD Jacobian or Hessian."""
    from ...engine.checks import hand_functions
    tol = hand_functions.tolerance_for(dtype, **{k: v for k, v in tolerance.items() if k != "trust_rules"})
    rows = (hand_functions.jacobian_rows if kind == "jacobian" else hand_functions.hessian_rows)(result, target,
                                                                                                  hand, tol)
    return hand_functions.matrix_report(kind, rows, result, dtype, tol)


def _jacobian_json(result) -> dict:
    from ...engine.lang.values import shape_of
    from ..output import jsonable
    return {"value": jsonable(result.value), "jacobian": {k: jsonable(v) for k, v in result.jacobian.items()},
            "mode": result.mode, "reason": with_flags(result.reason), "passes": result.passes,
            "output_shape": list(shape_of(result.value)), "unconnected": result.unconnected,
            "wrt": list(result.jacobian), "nonfinite": result.nonfinite,
            **({"layout": result.layout} if result.layout else {}),
            **({"holomorphic": True} if result.holomorphic else {})}


def _hessian_json(result) -> dict:
    from ..output import jsonable
    return {"value": jsonable(result.value), "gradient": {k: jsonable(v) for k, v in result.gradient.items()},
            "hessian": {a: {b: jsonable(h) for b, h in row.items()} for a, row in result.hessian.items()},
            "mode": result.method, "passes": result.passes, "wrt": list(result.hessian),
            "nonfinite": result.nonfinite, **({"layout": result.layout} if result.layout else {}),
            **wirtinger_json(result)}


@click.command(cls=TargetCommand, short_help="f', f'', ..., f^(N) in one input (partials with --wrt).")
@target_options
@OUT
@click.option("--order", "-n", type=click.IntRange(1, 64), default=1, show_default=True, metavar="N",
              help="How many derivatives: f', f'', ..., f^(N).")
@click.option("--wrt", default=None, metavar="NAME", help="The input to differentiate in (needed when there "
              "are several): partial derivatives, the other inputs held at their --at values.")
@click.option("--mode", "method", type=click.Choice(["reverse", "forward"]), default=None,
              help="reverse (default): nested tapes (each records the sweep below it); forward: nested dual numbers.")
@click.option("--method", "old_method", type=click.Choice(["reverse", "forward"]), default=None, hidden=True,
              callback=deprecated("--method", "--mode"))
@click.option("--check", "check_mode", is_flag=True, flag_value="full", default=None,
              help="Check each order against central differences of the order below (AD at x±h, x±2h). "
                   "A failed check exits 1.")
@TRUST_RULES
@click.option("--explain", is_flag=True, help="Show how each order is built: per order, the reverse sweep "
              "of the tape that recorded f and the sweeps below it (with --mode forward, order 1: the "
              "dual-number pass).")
@tolerances
def derivative(target, at, fn, of, dtype, as_json, order, wrt, method, old_method, explain, debug, **options):
    """The first N derivatives of a scalar function of one scalar input (or, with --wrt, in one
    input of several, the others held).

    \b
      autodiff derivative "sin(x)" --at x=0.5 --order 8
      autodiff derivative "exp(x**2)" --at x=1 -n 6 --json
      autodiff derivative "x**3*y" --at x=2,y=5 --wrt x -n 3 --check
      autodiff derivative "sin(x)*x" --at x=0.5 -n 2 --explain

    Cost: the tape of order k records the sweep of order k-1, so it grows with how the derivative
    expressions swell: linearly in N for sin or polynomials, geometrically for products and
    compositions such as exp(x**2). The output reports the tape sizes it measured.
    """
    from ...engine import api
    method = method or old_method or "reverse"
    if explain:
        from .explain_derivative import explain_derivative
        return explain_derivative(target, at, fn, of, dtype, as_json, order, wrt, method, options,
                                  _derivative_json)
    check_mode, _, tolerance = check_settings(options)
    lim, tgt, values = load_point(target, fn, of, at, options)
    names = wrt_names(wrt)
    result = api.derivatives(None, values, order, method, dtype_name=dtype, limits=lim, target=tgt, wrt=names)
    if check_mode is None:
        def show():
            from ..render.higher import derivative_result
            derivative_result(tgt, result)
        return deliver(options, as_json, result, lambda: _derivative_json(result), show)
    from ...engine.checks.derivatives import check_derivatives
    report = check_derivatives(result, tgt, dtype, lim, **tolerance)
    save_out(options, lambda: _derivative_json(result), result, report)
    if as_json:
        return emit_checked(_derivative_json(result), report)
    from ..render.higher import derivative_result
    derivative_result(tgt, result)
    return show_check(report)


def _derivative_json(result) -> dict:
    from ...engine.core.complexes import is_complex
    from ..output import jsonable
    from ..render.higher import cost_summary
    return {"value": jsonable(result.value), "derivatives": [jsonable(d) for d in result.derivatives],
            "wrt": [result.name], "order": result.order, "mode": result.method,
            **({"holomorphic": True} if is_complex(result.inputs[result.name]) else {}),
            "cost": {"tape_entries": result.tape_entries, "seconds": result.seconds,
                     "explanation": cost_summary(result)},
            "nonfinite": result.nonfinite, **point_json(result)}
