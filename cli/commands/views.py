"""The commands that show the computation: `graph` and `grad --explain` (`plot` is in plot.py).

Engine, rich and renderer imports sit inside the functions: `autodiff --help` loads every command
module, and start-up must stay cheap.
"""
from __future__ import annotations

import sys

import click

from ...parser.errors import SourceError
from ..exitcodes import Exit
from ..options import OLD_SEED, target_options
from ..parsing import TargetCommand
from .common import load_point, seed_constant, wrt_names

FORMATS = ("tree", "table", "dot", "mermaid", "json")


def _taped_grad(target, values, wrt, seed, dtype, lim):
    from ...engine import api
    return api.grad(None, values, wrt, seed, dtype_name=dtype, limits=lim, target=target, keep_tape=True)


@click.command(cls=TargetCommand, short_help="The recorded computation: nodes, values and adjoints.")
@target_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="tree", show_default=True,
              help="tree and table for people; dot (Graphviz), mermaid (GitHub markdown) and json for tools.")
@click.option("--max-nodes", type=click.IntRange(0), default=60, show_default=True,
              help="Show at most this many op nodes: repeated loop bodies are folded, then the middle is "
                   "cut with a summary (0: show all).")
@click.option("--wrt", default=None, metavar="NAMES", help="Trace only these inputs (comma-separated); "
              "the others count as constants.")
@click.option("--cotangent", default=None, metavar="V", help="For an array output: adjoints of vᵀf instead of sum(f).")
@OLD_SEED
def graph(target, at, fn, of, dtype, as_json, fmt, max_nodes, wrt, cotangent, old_seed, debug, **limits):
    """The recorded computation of TARGET at a point: nodes n1..nk with op, inputs, shape, value,
    adjoint (∂f/∂node) and source place.

    \b
      autodiff graph "x**2*y + (y + 2)" --at x=3,y=4            # Hands-on ML figure D-3
      autodiff graph "x**2*y + y + 2" --at x=3,y=4 --format dot | dot -Tsvg > g.svg
      autodiff graph "x*x" --at "x=[1,2,3]" --cotangent "[1,0,2]" --format table
    """
    from ...engine.views.graph import from_result, layout
    if as_json and fmt not in ("json", "tree"):       # two output formats asked for: say so, not pick one
        raise SourceError("usage", f"--json and --format {fmt} ask for two formats: use one")
    lim, tgt, values = load_point(target, fn, of, at, limits)
    cotangent_value = seed_constant(cotangent if cotangent is not None else old_seed, lim)
    result = _taped_grad(tgt, values, wrt_names(wrt), cotangent_value, dtype, lim)
    shown = layout(from_result(result, tgt.source), max_nodes)
    if as_json:
        fmt = "json"
    if fmt == "json":
        from ..render.graph_text import to_json
        from ..output import emit_json
        from ..render.common import notes_for
        doc = to_json(shown)
        doc["notes"] = notes_for(result)
        emit_json(doc)
    elif fmt in ("dot", "mermaid"):
        from ..render.graph_text import to_dot, to_mermaid
        sys.stdout.write(to_dot(shown) if fmt == "dot" else to_mermaid(shown))
        sys.stdout.flush()
    elif fmt == "table":
        from ..render.views import graph_table
        graph_table(tgt, result, shown)
    else:
        from ..render.views import graph_tree
        graph_tree(tgt, result, shown)
    return Exit.OK


# ---- grad --explain ------------------------------------------------------------------------------

def explain_grad(target, values, wrt, seed, mode, dtype, lim, as_json) -> int:
    """`grad --explain`: the reverse sweep in chain-rule form, or the dual-number forward sweep."""
    from ...engine.views import explain
    result = _taped_grad(target, values, wrt, seed, dtype, lim)
    if mode == "forward":
        if seed is not None:
            raise SourceError("usage", "--cotangent applies to the reverse mode (vᵀJ); the forward sweep "
                              "pushes one tangent per input")
        from ...engine.core.complexes import is_complex
        if any(is_complex(v) for v in result.inputs.values()):
            raise SourceError("not implemented", "grad --explain in forward mode of complex inputs (a pass along 1 "
                              "and one along 1j per element) is not done yet", None,
                              "leave out --mode forward: the reverse sweep explains the same gradient")
        passes = explain.forward(target, result.inputs, list(result.gradient), lim, target.source)
        if as_json:
            _emit_forward(result, passes)
        else:
            from ..render.views import explain_forward
            explain_forward(target, result.inputs, passes, result)
        return Exit.OK
    ex = explain.reverse(result, target.source)
    if as_json:
        _emit_reverse(result, ex)
    else:
        from ..render.views import explain_reverse
        explain_reverse(target, result, ex)
    return Exit.OK


def reverse_steps_json(ex) -> list:
    """The steps of a reverse sweep's explanation, as JSON (grad --explain, hessian --explain)."""
    from ..output import jsonable
    return [{"node": f"n{s.node}", "adjoint": jsonable(s.total), "seed": s.seed,
             "terms": [{"from": f"n{t.other}", "adjoint": jsonable(t.g),
                        "local": jsonable(t.local) if t.local is not None else None,
                        "contribution": jsonable(t.contribution)} for t in s.terms]} for s in ex.steps]


def _emit_reverse(result, ex):
    from ..render.graph_text import to_json
    from ..output import emit_json, jsonable
    from ..render.common import notes_for
    from ..render.views import reverse_lines
    emit_json({"mode": "reverse", "value": jsonable(result.value),
               "gradient": {k: jsonable(v) for k, v in result.gradient.items()}, **_point(result),
               "graph": to_json(ex.graph), "sweep": reverse_steps_json(ex), "text": reverse_lines(ex),
               "notes": notes_for(result)})


def _point(result) -> dict:
    from ..output import jsonable
    return {"inputs": {k: jsonable(v) for k, v in result.inputs.items()}, "wrt": list(result.gradient)}


def _emit_forward(result, passes):
    from ...engine.views.graph import primal
    from ..output import emit_json, jsonable
    from ..render.common import notes_for
    from ..render.views import forward_lines
    out = []
    for fp in passes:
        nodes = []
        for s in fp.steps:
            nd = fp.graph.node(s.node)
            nodes.append({"node": nd.name, "primal": jsonable(primal(nd.value)),
                          "tangent": jsonable(s.total) if s.total is not None else 0.0,
                          "terms": [{"from": f"n{t.other}", "tangent": jsonable(t.g),
                                     "local": jsonable(t.local) if t.local is not None else None}
                                    for t in s.terms]})
        out.append({"wrt": [fp.input], "derivative": jsonable(fp.derivative if fp.derivative is not None else 0.0),
                    "nodes": nodes, "text": forward_lines(fp)})
    emit_json({"mode": "forward", "value": jsonable(result.value),
               "gradient": {k: jsonable(v) for k, v in result.gradient.items()}, **_point(result),
               "forward_passes": out, "notes": notes_for(result)})
