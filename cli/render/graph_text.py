"""The graph for machines and documents: Graphviz DOT, Mermaid (GitHub markdown) and JSON.

Inputs are ellipses, constants plain grey boxes, ops boxes; the drawing goes bottom-up, inputs
at the bottom and the output at the top, as in Hands-on ML's figures D-1 to D-3. A folded loop or
a cut is one dashed node that stands in for the nodes it left out: edges from hidden nodes are
drawn from it.
"""
from __future__ import annotations

from ...engine.views.graph import Omission, expression, primal, short, span_text
from ...engine.core.numbers import nonfinite_word
from ..output import fmt_value, jsonable


def _val(v) -> str:
    return fmt_value(primal(v), 40)


def _compact(v) -> str:
    """Numbers in diagram labels: 6 significant digits (tables and JSON keep every digit)."""
    v = primal(v)
    if isinstance(v, float) or getattr(v, "shape", None) == ():
        x = float(v)
        return short(x) if nonfinite_word(x) else f"{x:.6g}"
    return fmt_value(v, 40)


def node_lines(graph, nd, _val=_compact) -> list:
    """The lines of a node's label: `n4 = n1 ** n3`, the value, the adjoint, the source place."""
    if nd.kind == "const":
        text = _val(nd.value) if nd.value is not None else f"constant {nd.shape}"
        return [f"{nd.name} = {text}"]
    lines = [f"{nd.name} = {expression(graph, nd, _val)}"]
    value = _val(nd.value) if not nd.shape else f"{_val(nd.value)} {nd.shape}"
    lines.append(f"value {value}")
    if nd.adjoint is not None:
        lines.append(f"∂f/∂{nd.name} = {_val(nd.adjoint)}")
    elif graph.output is not None:
        lines.append("does not reach the output")
    if nd.span is not None:
        text = span_text(nd.span, graph.source)
        lines.append(f"{nd.span.line}:{nd.span.column}" + (f" {text}" if text else ""))
    return lines


def omission_text(om: Omission) -> str:
    ops = ", ".join(f"{k} ×{v}" for k, v in list(om.ops.items())[:5]) + (", …" if len(om.ops) > 5 else "")
    lines = f", lines {om.lines[0]}–{om.lines[1]}" if om.lines and om.lines[0] != om.lines[1] else \
        (f", line {om.lines[0]}" if om.lines else "")
    if om.kind == "fold":
        return (f"loop body of {om.period} node{'s' * (om.period != 1)} repeated {om.repeats} times: "
                f"{om.repeats - 2} middle repetitions folded (n{om.first_id}…n{om.last_id}: {ops}{lines})")
    return f"{om.count} nodes left out (n{om.first_id}…n{om.last_id}: {ops}{lines})"


def _items(graph):
    """Visible node ids in numbering order and the omission markers with the id ranges they hide."""
    visible = graph.visible()
    hidden_by = {}
    marks = []
    for k, item in enumerate(graph.shown):
        if isinstance(item, Omission):
            marks.append((f"gap{k}", item))
            for i in range(item.first_id, item.last_id + 1):
                if i not in visible:
                    hidden_by[i] = f"gap{k}"
    return sorted(visible), marks, hidden_by


def _edges(graph, visible, hidden_by):
    """Edges between visible nodes; an edge from a hidden node comes from its omission marker.
    (`visible` in numbering order; looked up as a set: a list made this quadratic.)"""
    visible = set(visible)
    seen, out = set(), []
    for src, dst, pos in graph.edges():
        a = f"n{src}" if src in visible else hidden_by.get(src)
        b = f"n{dst}" if dst in visible else hidden_by.get(dst)
        if a is None or b is None or a == b:
            continue
        key = (a, b, pos) if b.startswith("n") else (a, b)     # one edge into a gap per source
        if key in seen:
            continue
        seen.add(key)
        out.append((a, b, pos))
    return out


# ---- DOT ---------------------------------------------------------------------------------------

def dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph) -> str:
    visible, marks, hidden_by = _items(graph)
    out = ["digraph autodiff {", "  rankdir=BT;",
           '  node [shape=box, fontname="Helvetica", fontsize=10];',
           '  edge [fontname="Helvetica", fontsize=8];']
    for i in visible:
        nd = graph.node(i)
        label = dot_string("\n".join(node_lines(graph, nd)))
        if nd.kind == "input":
            attrs = f"shape=ellipse, label={label}"
        elif nd.kind == "const":
            attrs = f'shape=box, style="rounded,filled", fillcolor="#eeeeee", color="#999999", label={label}'
        else:
            attrs = f"label={label}"
            if nd.id == graph.output:
                attrs += ", penwidth=2"
        out.append(f"  n{i} [{attrs}];")
    for name, om in marks:
        out.append(f"  {name} [shape=note, style=dashed, label={dot_string(omission_text(om))}];")
    for a, b, pos in _edges(graph, visible, hidden_by):
        nd = graph.node(int(b[1:])) if b.startswith("n") else None
        label = f" [label={dot_string(str(pos + 1))}]" if nd is not None and len(nd.inputs) > 1 and \
            nd.op not in ("add", "mul") else ""
        out.append(f"  {a} -> {b}{label};")
    out.append("}")
    return "\n".join(out) + "\n"


# ---- Mermaid -----------------------------------------------------------------------------------

def mermaid_string(text: str) -> str:
    # Mermaid's quoted labels take entity codes; `#quot;` keeps a quote from ending the label.
    safe = (text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
            .replace("\n", "<br/>"))
    return '"' + safe + '"'


def to_mermaid(graph) -> str:
    visible, marks, hidden_by = _items(graph)
    out = ["flowchart BT"]
    for i in visible:
        nd = graph.node(i)
        label = mermaid_string("\n".join(node_lines(graph, nd)))
        if nd.kind == "input":
            out.append(f"  n{i}([{label}])")
        elif nd.kind == "const":
            out.append(f"  n{i}[{label}]:::const")
        else:
            out.append(f"  n{i}[{label}]" + (":::output" if nd.id == graph.output else ""))
    for name, om in marks:
        out.append(f"  {name}[{mermaid_string(omission_text(om))}]:::gap")
    for a, b, _pos in _edges(graph, visible, hidden_by):
        out.append(f"  {a} --> {b}")
    out.append("  classDef const fill:#eeeeee,stroke:#999999,color:#333333")
    out.append("  classDef output stroke-width:3px")
    out.append("  classDef gap stroke-dasharray: 5 5")
    return "\n".join(out) + "\n"


# ---- JSON --------------------------------------------------------------------------------------

def _span_json(span):
    if span is None:
        return None
    return {"line": span.line, "column": span.column, "end_line": span.end_line, "end_column": span.end_column}


def to_json(graph) -> dict:
    visible, marks, hidden_by = _items(graph)
    nodes = []
    for i in visible:
        nd = graph.node(i)
        nodes.append({
            "id": nd.name, "kind": nd.kind, "op": nd.op,
            "expression": expression(graph, nd, _val),
            "inputs": [f"n{s}" for s in nd.inputs],
            "params": {k: str(v) for k, v in (nd.params or {}).items()} or None,
            "shape": list(nd.shape),
            "value": jsonable(primal(nd.value)) if nd.value is not None else None,
            "adjoint": jsonable(nd.adjoint) if nd.adjoint is not None else None,
            "reaches_output": nd.adjoint is not None if nd.kind != "const" else None,
            "span": _span_json(nd.span),
            "text": span_text(nd.span, graph.source, 80) or None,
        })
    shown = set(visible)
    edges = [{"from": f"n{s}", "to": f"n{d}", "position": p} for s, d, p in graph.edges()
             if s in shown and d in shown]
    omitted = [{"kind": om.kind, "count": om.count, "first": f"n{om.first_id}", "last": f"n{om.last_id}",
                "ops": om.ops, "lines": list(om.lines), "period": om.period or None,
                "repeats": om.repeats or None, "summary": omission_text(om)} for _name, om in marks]
    inputs = {nd.op: jsonable(primal(nd.value)) for nd in graph.nodes if nd.kind == "input" and nd.value is not None}
    return {"output_node": f"n{graph.output}" if graph.output is not None else None, "inputs": inputs,
            "value": jsonable(graph.value), "reduced": graph.reduced,
            "node_count": len(graph.nodes), "nodes": nodes, "edges": edges, "omitted": omitted}
