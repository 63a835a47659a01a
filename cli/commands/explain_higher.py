"""`jacobian --explain` and `hessian --explain`: the sweeps and passes that build a Jacobian or a
Hessian (engine/views/jacobian_steps.py, hessian_steps.py), as text or one JSON document that
starts with the command's own `--json` fields.

Engine, rich and renderer imports sit inside the functions: start-up stays cheap.
"""
from __future__ import annotations

from ...parser.errors import SourceError
from ..exitcodes import Exit
from .common import load_point, point_json, wrt_names


def refuse_other_views(options: dict, what: str) -> None:
    """--explain is a view of its own: with --out, --check or a check's settings it is a usage error."""
    if options.get("out") is not None:
        raise SourceError("usage", f"--explain shows how the {what} is built; --out writes a result: use one "
                          "at a time")
    for flag, key in (("--check", "check_mode"), ("--hand", "hand")):
        if options.get(key) is not None:
            raise SourceError("usage", f"--explain and {flag} are separate views: use one at a time")
    given = [f"--{name}" for name in ("rtol", "atol", "step", "seed") if options.get(name) is not None]
    given += ["--check-seed"] if options.get("old_check_seed") is not None else []
    if given:
        settings = "is a setting" if len(given) == 1 else "are settings"
        raise SourceError("usage", f"{', '.join(given)} {settings} of --check, which --explain does not run: "
                          "use one at a time")


def show_explanation(what: str, options: dict, target, fn, of, at, as_json, explain, to_json, render) -> int:
    """What every --explain of jacobian, hessian and derivative does: refuse the check settings,
    load the point, `explain(target, values, limits)`, print `to_json(ex)` or `render(target, ex)`."""
    refuse_other_views(options, what)
    lim, tgt, values = load_point(target, fn, of, at, options)
    ex = explain(tgt, values, lim)
    if as_json:
        from ..output import emit_json
        emit_json(to_json(ex))
    else:
        render(tgt, ex)
    return Exit.OK


def explain_hessian(target, at, fn, of, dtype, as_json, wrt, method, options, result_json) -> int:
    """Compute the Hessian and show how: stage 1 (the reverse sweep of the gradient), stage 2
    (one row of the Hessian per input direction). `result_json`: the `hessian --json` fields of a
    HessianResult, which the explanation's document starts with."""
    from ...engine.views.hessian_steps import explain_hessian as explain

    def render(tgt, ex):
        from ..render.higher_explain import hessian_explanation       # rich: not for --json
        hessian_explanation(tgt, ex)
    return show_explanation("Hessian", options, target, fn, of, at, as_json,
                            lambda tgt, values, lim: explain(tgt, values, wrt_names(wrt), method, dtype, lim),
                            lambda ex: hessian_explanation_json(ex, result_json), render)


def hessian_explanation_json(ex, result_json) -> dict:
    from ..output import jsonable
    from ..render.views import reverse_lines
    from .views import reverse_steps_json
    return {**result_json(ex.result),
            "stages": [{"stage": "gradient", "how": "reverse sweep", "sweep": reverse_steps_json(ex.gradient),
                        "text": reverse_lines(ex.gradient)},
                       {"stage": "hessian", "how": ex.method, "passes": ex.passes,
                        "rows": [{"direction": r.direction, "row": {b: jsonable(v) for b, v in r.row.items()}}
                                 for r in ex.rows]}],
            **point_json(ex.result)}


def explain_jacobian(target, at, fn, of, dtype, as_json, wrt, mode, options, result_json) -> int:
    """Compute the Jacobian and show how: a reverse sweep per output entry (its rows), or a
    forward pass of dual numbers per input (its columns)."""
    from ...engine.views.jacobian_steps import explain_jacobian as explain

    def render(tgt, ex):
        from ..render.higher_explain import jacobian_explanation       # rich: not for --json
        jacobian_explanation(tgt, ex)
    return show_explanation("Jacobian", options, target, fn, of, at, as_json,
                            lambda tgt, values, lim: explain(tgt, values, wrt_names(wrt), mode, dtype, lim),
                            lambda ex: jacobian_explanation_json(ex, result_json), render)


def jacobian_explanation_json(ex, result_json) -> dict:
    from ..output import jsonable
    from ..render.views import forward_lines, reverse_lines
    from .views import reverse_steps_json
    return {**result_json(ex.result),
            "sweeps": [{"row": label, "sweep": reverse_steps_json(sweep), "text": reverse_lines(sweep)}
                       for label, sweep in ex.sweeps],
            "forward_passes": [{"wrt": [p.input], "column": jsonable(p.derivative if p.derivative is not None
                                                                     else 0.0), "text": forward_lines(p)}
                               for p in ex.passes],
            "left_out": ex.left_out, **point_json(ex.result)}
