"""The `grad` and `run` commands: a value with its gradient, and a value alone (loaded lazily by
main.LAZY).

Engine, rich and renderer imports sit inside the functions: `autodiff --help` loads every command
module, and start-up must stay cheap.
"""
from __future__ import annotations

import click

from ..options import (COTANGENT, OLD_CHECK_SEED, SEED, no_random_seed_used, split_seed, target_options,
                       tolerances)
from ..outputs import OUT, save_out
from ..parsing import TargetCommand
from .common import (HAND, TRUST_RULES, WRT, deliver, emit_checked, kink_json, load_point, require_check_for, seed_constant,
                     show_check, wrt_names)


@click.command(cls=TargetCommand, short_help="Value and gradient of an expression or program at a point.")
@target_options
@OUT
@WRT
@COTANGENT
@click.option("--mode", type=click.Choice(["reverse", "forward"]), default="reverse", show_default=True,
              help="reverse: one sweep of the tape; forward: one forward pass of dual numbers per input element.")
@click.option("--explain", is_flag=True, help="Show the sweep step by step: the chain rule node by node "
              "(reverse), or the dual numbers (with --mode forward).")
@click.option("--check", "check_mode", type=click.Choice(["full", "fast", "complex-step"]), is_flag=False,
              flag_value="full", default=None, help="Check the gradient against finite differences: full (every "
              "entry, with an error estimate) or fast (one random projection); complex-step: against "
              "Im f(x + ih)/h at h = 1e-20, exact to rounding, for a real-analytic f of real inputs (refused, "
              "naming the step, where f is not). A failed check exits 1.")
@click.option("--symbolic", type=click.Choice(["simplified", "raw", "latex"]), is_flag=False,
              flag_value="simplified", default=None, help="Also print each partial derivative as a formula "
              "(the rules' sweep on symbols, simplified by SymPy; raw: the chain-rule expression unsimplified; "
              "latex). Needs SymPy (pip install 'autodiff[symbolic]').")
@HAND
@TRUST_RULES
@SEED
@OLD_CHECK_SEED
@tolerances
def grad(target, at, fn, of, dtype, as_json, wrt, cotangent, debug, mode, explain, check_mode=None, hand=None,
         seed=None, old_check_seed=None, rtol=None, atol=None, step=None, trust_rules=None, symbolic=None,
         **limits):
    """Value and gradient of TARGET (an expression or a .py program) at a point.

    \b
      autodiff grad "x**2*y + y + 2" --at x=3,y=4
      autodiff grad "x*x" --at "x=[1,2,3]" --cotangent "[1,0,2]"
      autodiff grad model.py --at "w=linspace(0,1,100)" --check fast --seed 7
      autodiff grad "sin(x)*y" --at x=1,y=2 --check --rtol 1e-8 --json
      autodiff grad model.py --fn loss --at "w=[1,2],x=[3,4]" --wrt w --hand loss_grad
    """
    from ...engine import api
    seed, cotangent = split_seed(seed, cotangent)
    seed = seed if seed is not None else old_check_seed
    if hand is not None and check_mode is None:
        check_mode = "full"               # the hand-derived gradient against AD, entry by entry
    require_check_for(check_mode, rtol=rtol, atol=atol, step=step)
    if trust_rules and check_mode is None:
        raise api.SourceError("usage", "--trust-rules says which rules a --check lists as trusted, and this run "
                              "checks nothing", None, "add --check (or --check fast)")
    no_random_seed_used(seed, check_mode)
    lim, tgt, values = load_point(target, fn, of, at, limits)
    seed_value = seed_constant(cotangent, lim)
    names = wrt_names(wrt)
    if explain:
        if limits.get("out") is not None:
            raise api.SourceError("usage", "--explain shows the sweep; --out writes a result: use one at a time")
        if check_mode is not None:
            raise api.SourceError("usage", f"--explain and {'--hand' if hand else '--check'} are separate views: "
                                  "use one at a time")
        from .views import explain_grad
        return explain_grad(tgt, values, names, seed_value, mode, dtype, lim, as_json)
    result = api.grad(None, values, names, seed_value, dtype_name=dtype, limits=lim, target=tgt, mode=mode)
    report = None
    if check_mode is not None:
        from .checks import grad_check
        report = grad_check(tgt, result, check_mode, seed, dtype, lim, seed_value, names,
                            tolerance={"rtol": rtol, "atol": atol, "step": step}, hand=hand,
                            trust_rules=bool(trust_rules))
    formulas, assumed = api.symbolic(tgt, names, symbolic, values) if symbolic else (None, [])
    save_out(limits, lambda: _grad_json(result, formulas, assumed), result, report)
    if as_json:
        return emit_checked(_grad_json(result, formulas, assumed), report)
    from ..render.common import grad_result
    grad_result(tgt, result)
    for name, formula in (formulas or {}).items():
        click.echo(f"∂f/∂{name} = {formula}")
    if assumed:
        click.echo("on the path taken here, which assumed: " + "; ".join(assumed[:6]) +
                   (f"; ... and {len(assumed) - 6} more" if len(assumed) > 6 else ""))
    if mode == "forward":
        from ..render.higher import forward_note
        forward_note(result)
    return show_check(report)


def _grad_json(result, formulas=None, assumed=()) -> dict:
    from ...engine.lang.values import integer_inputs, shape_of
    from ..output import jsonable
    from ..render.common import notes_for
    return {"value": jsonable(result.value), "gradient": {k: jsonable(v) for k, v in result.gradient.items()},
            "inputs": {k: jsonable(v) for k, v in result.inputs.items()},
            "output_shape": list(shape_of(result.value)), "reduced": result.reduced,
            "unconnected": result.unconnected, "notes": notes_for(result),
            "kinks": [kink_json(k) for k in result.kinks], "tape_entries": result.tape_length,
            "mode": result.mode, "wrt": list(result.gradient), "integers": integer_inputs(result.inputs),
            "nonfinite": result.nonfinite,
            **({"symbolic": formulas, "symbolic_assumes": list(assumed)} if formulas is not None else {}),
            **wirtinger_json(result)}


def wirtinger_json(result) -> dict:
    """{"wirtinger": {z: {"dz": df/dz, "dzbar": df/dz̄}}} for the complex inputs, or nothing."""
    from ...engine.core.complexes import is_complex, wirtinger
    from ..output import jsonable
    pairs = {name: wirtinger(g) for name, g in result.gradient.items() if is_complex(result.inputs[name])}
    if not pairs:
        return {}
    return {"wirtinger": {name: {"dz": jsonable(dz), "dzbar": jsonable(dzbar)} for name, (dz, dzbar) in pairs.items()}}


@click.command(cls=TargetCommand, short_help="Evaluate a target at a point, without derivatives.")
@target_options
@OUT
def run(target, at, fn, of, dtype, as_json, debug, **limits):
    """Evaluate TARGET at a point without differentiating.

    \b
      autodiff run "0.1 + 0.2" --dtype float32
      autodiff run "x @ x" --at "x=[1,2,3]" --json
      autodiff run samples/higher/rosenbrock.py --at x=-1.2,y=1
    """
    from ...engine import api
    lim, tgt, values = load_point(target, fn, of, at, limits)
    result = api.evaluate(None, values, dtype_name=dtype, limits=lim, target=tgt)

    def show():
        from ..render.common import run_result
        run_result(tgt, result)
    return deliver(limits, as_json, result, lambda: _run_json(result), show)


def _run_json(result) -> dict:
    from ..output import jsonable
    from ..render.common import notes_for
    return {"value": jsonable(result.value), "inputs": {k: jsonable(v) for k, v in result.inputs.items()},
            "steps": result.steps, "notes": notes_for(result), "kinks": [kink_json(k) for k in result.kinks],
            "nonfinite": result.nonfinite}
