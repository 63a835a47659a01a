"""The `jacobian`, `hessian` and `derivative` commands (loaded lazily by main.LAZY)."""
from __future__ import annotations

import click

from ..exitcodes import Exit
from ..options import limits_from, target_options

_WRT = click.option("--wrt", default=None, metavar="NAMES",
                    help="Differentiate with respect to these inputs only (comma-separated).")


_CHECK = click.option("--check", "check_mode", type=click.Choice(["full", "fast"]), is_flag=False, flag_value="full",
                      default=None, help="Check against finite differences: full (every entry, with an error "
                      "estimate) or fast (one random projection). A failed check exits 1.")
_CHECK_SEED = click.option("--check-seed", type=click.IntRange(0), default=None, metavar="N",
                           help="Seed of --check fast's random projection (default: a fresh one, printed).")


def _checked(report, doc=None):
    """Add the check to the JSON document or print its table; the exit code follows the check."""
    if report is None:
        return Exit.OK
    if doc is not None:
        from .checks import report_json
        doc["check"] = report_json(report)
    else:
        from ..render.checks import gradient_check
        gradient_check(report)
    return Exit.OK if report.passed else Exit.CHECK_FAILED


def _names(wrt):
    return [w.strip() for w in wrt.split(",") if w.strip()] if wrt else None


def _j(v):
    from ..output import jsonable
    return jsonable(v)


def _common(result) -> dict:
    from ..main import _kink
    from ..render.common import notes_for
    return {"inputs": {k: _j(v) for k, v in result.inputs.items()}, "notes": notes_for(result),
            "kinks": [_kink(k) for k in result.kinks]}


@click.command(context_settings={"ignore_unknown_options": True})
@target_options
@_WRT
@click.option("--mode", type=click.Choice(["auto", "forward", "reverse"]), default="auto", show_default=True,
              help="forward: one forward pass per input element; reverse: one sweep per output element; "
                   "auto: whichever is fewer.")
@_CHECK
@_CHECK_SEED
def jacobian(target, at, fn, of, dtype, as_json, wrt, mode, debug, check_mode=None, check_seed=None, **limits):
    """The Jacobian of TARGET at a point: J[out..., in...] = ∂out/∂in for each input.

    \b
      autodiff jacobian "[r*cos(t), r*sin(t)]" --at r=2,t=0.5
      autodiff jacobian "A @ x" --at "A=[[1,2],[3,4]],x=[1,1]" --mode forward
      autodiff jacobian "exp(x)/sum(exp(x))" --at "x=[1,2,3]" --check
    """
    from ...engine import api
    from ...engine.diff.forward import jacobian as compute
    from ...engine.lang.values import shape_of
    lim = limits_from(limits)
    tgt = api.load(target, fn, of)
    result = compute(None, api.parse_at(at, lim), _names(wrt), mode, dtype_name=dtype, limits=lim, target=tgt)
    report = None
    if check_mode is not None:
        from ...engine.checks.higher import check_jacobian
        report = check_jacobian(result, tgt, check_mode, check_seed, dtype, lim)
    if as_json:
        from ..output import emit_json
        doc = {"value": _j(result.value), "jacobian": {k: _j(v) for k, v in result.jacobian.items()},
               "mode": result.mode, "reason": result.reason, "passes": result.passes,
               "output_shape": list(shape_of(result.value)), "unconnected": result.unconnected,
               **_common(result)}
        code = _checked(report, doc)
        emit_json(doc)
        return code
    from ..render.higher import jacobian_result
    jacobian_result(tgt, result)
    return _checked(report)


@click.command(context_settings={"ignore_unknown_options": True})
@target_options
@_WRT
@click.option("--method", type=click.Choice(["forward-over-reverse", "reverse-over-reverse"]),
              default="forward-over-reverse", show_default=True,
              help="forward-over-reverse: a Hessian-vector product per input element; reverse-over-reverse: "
                   "the taped gradient swept once per element.")
@_CHECK
@_CHECK_SEED
def hessian(target, at, fn, of, dtype, as_json, wrt, method, debug, check_mode=None, check_seed=None, **limits):
    """The Hessian of a scalar TARGET at a point, with its value and gradient.

    \b
      autodiff hessian "x**2*y + y + 2" --at x=3,y=4
      autodiff hessian "log(sum(exp(x)))" --at "x=[1,2,3]"
      autodiff hessian "(1-x)**2 + 100*(y-x**2)**2" --at x=1.2,y=0.7 --check

    --check compares each entry with central differences of the AD gradient.
    """
    from ...engine import api
    from ...engine.diff.higher import hessian as compute
    lim = limits_from(limits)
    tgt = api.load(target, fn, of)
    result = compute(None, api.parse_at(at, lim), _names(wrt), method, dtype_name=dtype, limits=lim, target=tgt)
    report = None
    if check_mode is not None:
        from ...engine.checks.higher import check_hessian
        report = check_hessian(result, tgt, check_mode, check_seed, dtype, lim)
    if as_json:
        from ..output import emit_json
        doc = {"value": _j(result.value), "gradient": {k: _j(v) for k, v in result.gradient.items()},
               "hessian": {a: {b: _j(h) for b, h in row.items()} for a, row in result.hessian.items()},
               "method": result.method, "passes": result.passes, **_common(result)}
        code = _checked(report, doc)
        emit_json(doc)
        return code
    from ..render.higher import hessian_result
    hessian_result(tgt, result)
    return _checked(report)


@click.command(context_settings={"ignore_unknown_options": True})
@target_options
@click.option("--order", "-n", type=click.IntRange(1, 64), default=1, show_default=True, metavar="N",
              help="How many derivatives: f', f'', ..., f^(N).")
@click.option("--method", type=click.Choice(["reverse", "forward"]), default="reverse", show_default=True,
              help="reverse: nested tapes (each records the sweep below it); forward: nested dual numbers.")
def derivative(target, at, fn, of, dtype, as_json, order, method, debug, **limits):
    """The first N derivatives of a scalar function of one scalar input.

    \b
      autodiff derivative "sin(x)" --at x=0.5 --order 8
      autodiff derivative "exp(x**2)" --at x=1 -n 6 --json

    Cost: the tape of order k records the sweep of order k-1, so it grows with how the derivative
    expressions swell: linearly in N for sin or polynomials, geometrically for products and
    compositions such as exp(x**2). The output reports the tape sizes it measured.
    """
    from ...engine import api
    from ...engine.diff.higher import derivatives as compute
    lim = limits_from(limits)
    tgt = api.load(target, fn, of)
    result = compute(None, api.parse_at(at, lim), order, method, dtype_name=dtype, limits=lim, target=tgt)
    if as_json:
        from ..output import emit_json
        from ..render.higher import cost_summary
        emit_json({"value": _j(result.value), "derivatives": [_j(d) for d in result.derivatives],
                   "input": result.name, "order": result.order, "method": result.method,
                   "cost": {"tape_entries": result.tape_entries, "seconds": result.seconds,
                            "explanation": cost_summary(result)},
                   **_common(result)})
    else:
        from ..render.higher import derivative_result
        derivative_result(tgt, result)
    return Exit.OK
