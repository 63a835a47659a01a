"""`hessian --explain`: the two stages that build a Hessian, the gradient's reverse sweep and the
second pass over it (engine/views/hessian_steps.py), as tables or one JSON document.

Engine, rich and renderer imports sit inside the functions: start-up stays cheap.
"""
from __future__ import annotations

from ...parser.errors import SourceError
from ..exitcodes import Exit
from .common import load_point, point_json, wrt_names


def explain_hessian(target, at, fn, of, dtype, as_json, wrt, method, options, result_json) -> int:
    """Compute the Hessian and show how: stage 1 (the reverse sweep of the gradient), stage 2
    (one row of the Hessian per input direction). `result_json`: the `hessian --json` fields of a
    HessianResult, which the explanation's document starts with."""
    if options.get("out") is not None:
        raise SourceError("usage", "--explain shows how the Hessian is built; --out writes a result: use one "
                          "at a time")
    if options.get("check_mode") is not None:
        raise SourceError("usage", "--explain and --check are separate views: use one at a time")
    given = [f"--{name}" for name in ("rtol", "atol", "step", "seed") if options.get(name) is not None]
    if given or options.get("old_check_seed") is not None:
        raise SourceError("usage", f"{', '.join(given) or '--check-seed'} tune --check, which --explain does "
                          "not run: use one at a time")
    from ...engine.views.hessian_steps import explain_hessian as explain
    lim, tgt, values = load_point(target, fn, of, at, options)
    ex = explain(tgt, values, wrt_names(wrt), method, dtype, lim)
    if as_json:
        from ..output import emit_json
        emit_json(explanation_json(ex, result_json))
    else:
        from ..render.hessian_explain import hessian_explanation
        hessian_explanation(tgt, ex)
    return Exit.OK


def explanation_json(ex, result_json) -> dict:
    from ..output import jsonable
    from ..render.views import reverse_lines
    from .views import reverse_steps_json
    return {**result_json(ex.result),
            "stages": [{"stage": "gradient", "how": "reverse sweep", "steps": reverse_steps_json(ex.gradient),
                        "text": reverse_lines(ex.gradient)},
                       {"stage": "hessian", "how": ex.method, "passes": ex.passes,
                        "rows": [{"direction": r.direction, "row": {b: jsonable(v) for b, v in r.row.items()}}
                                 for r in ex.rows]}],
            **point_json(ex.result)}
