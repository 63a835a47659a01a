"""`derivative --explain`: the stages that build f', ..., f^(N) (engine/views/derivative_steps.py),
as text or one JSON document that starts with `derivative --json`'s own fields.

Engine, rich and renderer imports sit inside the functions: start-up stays cheap.
"""
from __future__ import annotations

from .common import wrt_names
from .explain_higher import show_explanation


def explain_derivative(target, at, fn, of, dtype, as_json, order, wrt, method, options, result_json) -> int:
    """Compute the derivatives and show how: a reverse sweep per order (nested tapes), or the
    dual-number pass of order 1 (--mode forward). `result_json`: the `derivative --json` fields
    of a DerivativeResult, which the explanation's document starts with."""
    from ...engine.views.derivative_steps import explain_derivatives

    def render(tgt, ex):
        from ..render.derivative_explain import derivative_explanation     # rich: not for --json
        derivative_explanation(tgt, ex)
    return show_explanation("derivative", options, target, fn, of, at, as_json,
                            lambda tgt, values, lim: explain_derivatives(tgt, values, order, wrt_names(wrt), method,
                                                                         dtype, lim),
                            lambda ex: derivative_explanation_json(ex, result_json), render)


def derivative_explanation_json(ex, result_json) -> dict:
    from ..output import jsonable
    from ..render.views import forward_lines
    doc = result_json(ex.result)
    passes = [{"wrt": [p.input], "derivative": jsonable(p.derivative if p.derivative is not None else 0.0),
               "text": forward_lines(p)} for p in ex.passes]
    tail = {key: doc.pop(key) for key in ("inputs", "notes", "kinks")}       # the point's fields stay last
    return {**doc, "stages": [stage_json(stage) for stage in ex.stages], "forward_passes": passes,
            "listed": ex.listed, **tail}


def stage_json(stage) -> dict:
    """One order's sweep: what recorded its tape, the graph, the steps and their text."""
    from ...engine.views.derivative_steps import derivative_name
    from ..output import jsonable
    from ..render.derivative_explain import recorded_by
    from ..render.graph_text import to_json
    from ..render.views import reverse_lines
    from .views import reverse_steps_json
    of = derivative_name(stage.order - 1)
    doc = {"order": stage.order, "of": of, "gives": derivative_name(stage.order),
           "tape_entries": stage.tape_entries, "derivative": jsonable(stage.derivative),
           "listed": stage.sweep is not None,
           "recorded": [{"by": recorded_by(p.by), "order": p.by, "first": f"n{p.first}", "last": f"n{p.last}"}
                        for p in stage.parts]}
    if stage.sweep is not None:
        doc.update(graph=to_json(stage.sweep.graph), sweep=reverse_steps_json(stage.sweep),
                   text=reverse_lines(stage.sweep, of=of))
    return doc
