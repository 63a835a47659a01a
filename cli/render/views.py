"""Rich rendering of the views: the graph as a tree or a table, the chain-rule explanations."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ...engine.views.graph import Omission, expression, primal, span_text
from .graph_text import omission_text
from ..output import fmt_value
from .common import print_notes, console, inputs_line, notes_for

MAX_EXPLAIN_STEPS = 120     # longer sweeps show their first and last steps
MAX_TREE_DEPTH = 16         # deeper ops of the graph's tree are continued in trees of their own


def show(v, width: int = 48) -> str:
    """A value for a line of text: a number, or an array's shape and a short preview."""
    v = primal(v)
    shape = tuple(getattr(v, "shape", ()))
    if not shape:
        return fmt_value(v)
    preview = fmt_value(v, width).replace("\n", "")
    if len(preview) > width:
        preview = preview[:width - 1] + "…"
    return f"{shape} {preview}"


def _inputs(inputs) -> str:
    return " ".join(inputs_line(inputs).split())          # arrays of arrays on one line


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _factor(v) -> str:
    """A factor of a product: negative numbers in parentheses, 1 · (-0.84)."""
    text = show(v)
    return f"({text})" if text.startswith("-") else text


def _where(graph, nd) -> str:
    if nd.span is None:
        return ""
    text = span_text(nd.span, graph.source)
    return f"{nd.span.line}:{nd.span.column}" + (f" `{text}`" if text else "")


def _header(target, result, graph) -> None:
    screen = console()
    kinds = {"input": 0, "const": 0, "op": 0}
    for nd in graph.nodes:
        kinds[nd.kind] += 1
    what = {None: "∂f/∂node", "sum": "∂sum(f)/∂node"}.get(graph.reduced, "vᵀ∂f/∂node")
    screen.print(Text.assemble(("graph", "bold"), f" of {target.describe()} at {_inputs(result.inputs)}: "
                          f"{len(graph.nodes)} nodes ({_n(kinds['input'], 'input')}, {_n(kinds['const'], 'constant')}, "
                          f"{_n(kinds['op'], 'op')}); value {' '.join(fmt_value(result.value).split())}; "
                          f"adjoints are {what}"))      # one line: a 2-D value inside a sentence


def _footer(graph, result) -> None:
    screen = console()
    for item in graph.shown:
        if isinstance(item, Omission):
            screen.print(Text.assemble(("  ⋮ ", "dim"), (omission_text(item), "dim")))
    print_notes(notes_for(result))


def graph_table(target, result, graph) -> None:
    screen = console()
    _header(target, result, graph)
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col in ("node", "expression", "shape", "value", "adjoint", "source"):
        table.add_column(col, justify="right" if col in ("value", "adjoint") else "left")
    visible = graph.visible()
    ops_seen = set()
    for item in _display_order(graph, visible):
        if isinstance(item, Omission):
            table.add_row("⋮", Text(f"{item.count} nodes {'folded' if item.kind == 'fold' else 'left out'} "
                                    f"(n{item.first_id}…n{item.last_id}, see below)", style="dim"), "", "", "", "")
            continue
        nd = graph.node(item)
        ops_seen.add(item)
        adjoint = show(nd.adjoint, 30) if nd.adjoint is not None else ("" if nd.kind == "const" else "0 (unreached)")
        value = show(nd.value, 30) if nd.value is not None else "(not kept)"
        table.add_row(Text(nd.name, style="bold" if nd.id == graph.output else ""),
                      expression(graph, nd, show) + (" (constant)" if nd.kind == "const" and nd.known else ""),
                      str(nd.shape) if nd.shape else "()", value, adjoint, _where(graph, nd))
    screen.print()
    screen.print(table)
    _footer(graph, result)


def _display_order(graph, visible):
    """Inputs, then the shown items with each constant just before the first op that uses it."""
    out = [nd.id for nd in graph.nodes if nd.kind == "input"]
    placed = set(out)
    for item in graph.shown:
        if isinstance(item, int):
            for s in graph.node(item).inputs:
                if s in visible and s not in placed:
                    placed.add(s)
                    out.append(s)
            placed.add(item)
        out.append(item)
    return out


def _tree_label(graph, nd) -> Text:
    t = Text()
    t.append(nd.name, style="bold cyan" if nd.kind != "const" else "dim")
    if nd.kind == "input":
        t.append(f" {nd.op} = {show(nd.value)}")
    elif nd.kind == "const":
        t.append(f" = {expression(graph, nd, show)} (constant)", style="dim")
        return t
    else:
        t.append(f" = {expression(graph, nd, show)}")
        t.append(f"  value {show(nd.value)}")
    if nd.adjoint is not None:
        t.append(f"  ∂f/∂{nd.name} = {show(nd.adjoint)}", style="green")
    else:
        t.append("  does not reach the output", style="yellow")
    where = _where(graph, nd)
    if where:
        t.append(f"  {where}", style="dim")
    return t


def graph_tree(target, result, graph) -> None:
    screen = console()
    _header(target, result, graph)
    screen.print()
    visible = graph.visible()
    hidden_note = {}
    for item in graph.shown:
        if isinstance(item, Omission):
            for i in range(item.first_id, item.last_id + 1):
                hidden_note.setdefault(i, item)
    roots = [graph.output] if graph.output is not None else []
    reached = set()
    if graph.output is not None:
        stack = [graph.output]
        while stack:
            i = stack.pop()
            if i in reached:
                continue
            reached.add(i)
            stack.extend(graph.node(i).inputs)
    used = {s for nd in graph.ops() for s in nd.inputs}
    roots += [nd.id for nd in graph.ops() if nd.id in visible and nd.id not in reached and nd.id not in used]
    if not roots:
        screen.print("the output does not depend on the inputs: nothing was recorded")
    printed: set = set()
    for k, root in enumerate(roots):
        if k == (1 if graph.output is not None else 0):
            screen.print(Text("recorded but not reaching the output:", style="yellow"))
        printed.add(root)
        continued = {root: None}         # this root's tree, then the trees it continues below, in order
        while continued:
            top = next(iter(continued))
            screen.print(_subtree(graph, top, visible, hidden_note, printed, continued))
            del continued[top]
    _footer(graph, result)


def _subtree(graph, root, visible, hidden_note, printed, continued) -> Tree:
    """The tree under `root`, at most MAX_TREE_DEPTH levels deep: an op deeper down is a stub
    `nK … continued below`, and its own tree follows (added to `continued`). Each line is
    then at most so many guides wide: a chain of n ops printed n guides on its last line, and
    the whole tree took time and memory quadratic in n."""
    tree = Tree(_tree_label(graph, graph.node(root)), guide_style="dim")
    stack = [(tree, graph.node(root), 1)]
    while stack:
        branch, nd, depth = stack.pop()
        children = []
        for s in nd.inputs:
            child = graph.node(s)
            if s not in visible:
                om = hidden_note.get(s)
                branch.add(Text(f"{child.name} … left out" + (f" ({om.kind})" if om else ""), style="dim"))
            elif s in printed and child.kind == "op":
                where = "continued below" if s in continued else "shown above"
                branch.add(Text(f"{child.name} ({where})", style="dim"))
            elif depth >= MAX_TREE_DEPTH and child.kind == "op":
                branch.add(Text(f"{child.name} … continued below", style="dim"))
                printed.add(s)
                continued[s] = None
            else:
                sub = branch.add(_tree_label(graph, child))
                printed.add(s)
                children.append((sub, child, depth + 1))
        stack.extend(reversed(children))
    return tree


# ---- explanations --------------------------------------------------------------------------------

def node_line(graph, nd, placed=True) -> str:
    """n4 = cos(n1) = 0.878    [1:1 `sin(x)`]: a node, its value and (`placed`) the place its
    rule came from; the one line of a node in every explanation."""
    if nd.kind == "input":
        return f"{nd.name} = {nd.op} = {show(nd.value)}"
    if nd.kind == "const":
        return f"{nd.name} = {expression(graph, nd, show)}  (constant)"
    where = _where(graph, nd) if placed else ""
    return f"{nd.name} = {expression(graph, nd, show)} = {show(nd.value)}" + (f"    [{where}]" if where else "")


def _cap(items):
    if len(items) <= MAX_EXPLAIN_STEPS:
        return items, 0
    head = MAX_EXPLAIN_STEPS * 2 // 3
    tail = MAX_EXPLAIN_STEPS - head
    return items[:head] + [None] + items[-tail:], len(items) - head - tail


def reverse_lines(ex, of: str | None = None) -> list:
    """The chain rule, output to inputs: ∂f/∂n4 = ∂f/∂n5 · ∂n5/∂n4 = 1 · 4 = 4. `of` names the
    function swept (derivative --explain: f' for the sweep that gives f'')."""
    g = ex.graph
    f = of or ("f" if ex.reduced is None else ("sum(f)" if ex.reduced == "sum" else "vᵀf"))
    lines = []
    steps, left_out = _cap(ex.steps)
    for step in steps:
        if step is None:
            lines.append(f"  ⋮ {left_out} steps left out")
            continue
        name = g.node(step.node).name
        if step.seed:
            lines.append(f"∂{f}/∂{name} = {show(step.total)}  (the seed: {name} is the output)")
            continue
        symbolic = " + ".join(f"∂{f}/∂n{t.other} · ∂n{t.other}/∂{name}" for t in step.terms)
        if all(t.local is not None for t in step.terms):
            numeric = " + ".join(f"{_factor(t.g)} · {_factor(t.local)}" for t in step.terms)
            lines.append(f"∂{f}/∂{name} = {symbolic} = {numeric} = {show(step.total)}")
        elif len(step.terms) == 1:
            lines.append(f"∂{f}/∂{name} = {symbolic} = {show(step.total)}")
        else:
            numeric = " + ".join(show(t.contribution, 24) for t in step.terms)
            lines.append(f"∂{f}/∂{name} = {symbolic} = {numeric} = {show(step.total)}")
    return lines


def explain_reverse(target, result, ex) -> None:
    screen = console()
    g = ex.graph
    screen.print(Text.assemble(("reverse sweep", "bold"), f" of {target.describe()} at {_inputs(result.inputs)}"
                          " (the chain rule from the output back to the inputs, Hands-on ML figure D-3)"))
    screen.print()
    screen.print(Text("forward pass: the nodes and their values", style="bold"))
    ids, left_out = _cap([nd.id for nd in g.nodes])
    for i in ids:
        line = f"⋮ {left_out} nodes left out" if i is None else node_line(g, g.node(i))
        screen.print(Text("  " + line))
    screen.print()
    screen.print(Text("reverse pass: each node's adjoint is the sum over the nodes that use it", style="bold"))
    for line in reverse_lines(ex):
        screen.print(Text("  " + line))
    screen.print()
    screen.print(Text("gradient", style="bold"))
    inputs = {nd.op: nd for nd in g.nodes if nd.kind == "input"}
    f = "f" if ex.reduced is None else ("sum(f)" if ex.reduced == "sum" else "vᵀf")
    for name, value in ex.gradient.items():
        nd = inputs.get(name)
        via = f" = ∂{f}/∂{nd.name}" if nd is not None else ""
        tail = "" if nd is None or nd.adjoint is not None else "  (unconnected: exactly 0)"
        screen.print(Text(f"  ∂{f}/∂{name}{via} = {show(value)}{tail}"))
    print_notes(notes_for(result))


def forward_lines(fp) -> list:
    """One dual-number pass: n5 = n4 * n2 = 36 + 24ε   ṅ5 = ∂n5/∂n4 · ṅ4 = 4 · 6 = 24."""
    g = fp.graph
    lines = []
    by_node = {s.node: s for s in fp.steps}
    ids, left_out = _cap([nd.id for nd in g.nodes])
    for i in ids:
        if i is None:
            lines.append(f"  ⋮ {left_out} nodes left out")
            continue
        nd = g.node(i)
        step = by_node.get(i)
        value = primal(nd.value) if nd.value is not None else None
        head = node_line(g, g.node(i), placed=False)
        if nd.kind == "const":
            lines.append(head)
            continue
        t = step.total if step is not None else None
        dual = _dual(value, t)
        head = head.rsplit(" = ", 1)[0] + f" = {dual}"
        if step is None or t is None:
            lines.append(head)
            continue
        if step.seed:
            lines.append(f"{head}    ṅ{i} = {show(t)}  (the seed)")
            continue
        symbolic = " + ".join(f"∂{nd.name}/∂n{term.other} · ṅ{term.other}" for term in step.terms)
        if step.terms and all(term.local is not None for term in step.terms):
            numeric = " + ".join(f"{_factor(term.local)} · {_factor(term.g)}" for term in step.terms)
            lines.append(f"{head}    ṅ{i} = {symbolic} = {numeric} = {show(t)}")
        else:
            lines.append(f"{head}    ṅ{i} = {symbolic} = {show(t)}")
    return lines


def _dual(value, tangent) -> str:
    if tangent is None:
        return show(value)
    if getattr(primal(value), "shape", ()) or getattr(tangent, "shape", ()):
        return f"{show(value)} + ({show(tangent)})ε"
    t = float(tangent)
    sign = "-" if t < 0 else "+"
    return f"{show(value)} {sign} {fmt_value(abs(t))}ε"


def explain_forward(target, result_inputs, passes, notes_source) -> None:
    screen = console()
    screen.print(Text.assemble(("forward sweep", "bold"), f" of {target.describe()} at {_inputs(result_inputs)}"
                          " (dual numbers a + bε, Hands-on ML figure D-2: one pass per input, ṅ = ∂n/∂input)"))
    for fp in passes:
        screen.print()
        seed = "1" if not getattr(result_inputs[fp.input], "shape", ()) else "ones (every element moves together)"
        screen.print(Text(f"pass for {fp.input}: seed tangent {seed}, the other inputs' tangents 0", style="bold"))
        for line in forward_lines(fp):
            screen.print(Text("  " + line))
        out = fp.graph.output
        via = f" = ṅ{out}" if out is not None else ""
        d = fp.derivative if fp.derivative is not None else 0.0
        label = f"∂f/∂{fp.input}" if not getattr(result_inputs[fp.input], "shape", ()) else \
            f"∂f/∂{fp.input} · ones"
        screen.print(Text(f"  {label}{via} = {show(d)}", style="green"))
    print_notes(notes_for(notes_source))
