"""`jacobian --explain` and `hessian --explain` for people.

Hessian: stage 1, the gradient's reverse sweep (the lines of `grad --explain`); stage 2, one row
of the Hessian per input direction, worded for the mode that computed it. Jacobian: a reverse
sweep per output entry (a row each) or a forward pass per input (a column each). Then the
result's own tables."""
from __future__ import annotations

from rich.text import Text

from .common import console, inputs_line
from .higher import hessian_result, jacobian_result
from .views import forward_lines, node_line, reverse_lines, show

MAX_DIRECTIONS = 20      # rows of stage 2 shown; --json has them all
MAX_NODES = 40           # nodes of stage 1 listed; the sweep's lines name them

STAGE_TWO = {
    "forward-over-reverse": ("stage 2: forward over the sweep: the inputs move along one direction at a time "
                             "(dual numbers), and the gradient's tangents are that row of the Hessian"),
    "reverse-over-reverse": ("stage 2: reverse over the sweep: stage 1 was recorded on an outer tape, swept "
                             "once from each gradient entry; its adjoints are that row of the Hessian"),
}


def row_line(method: str, direction: str, row: dict) -> str:
    """forward-over-reverse: ∂(∂f/∂y)/∂x = 6; reverse-over-reverse: ∂(∂f/∂x)/∂y = 6."""
    if method == "forward-over-reverse":
        terms = [f"∂(∂f/∂{b})/∂{direction} = {show(v)}" for b, v in row.items()]
    else:
        terms = [f"∂(∂f/∂{direction})/∂{b} = {show(v)}" for b, v in row.items()]
    return "   ".join(terms)


def node_lines(graph) -> list:
    """n1 = x = 3, n4 = n1 * n1 = 9: what the sweep's node names stand for."""
    lines = [node_line(graph, nd, placed=False) for nd in graph.nodes[:MAX_NODES]]
    if len(graph.nodes) > MAX_NODES:
        lines.append(f"⋮ {len(graph.nodes) - MAX_NODES} more nodes (see autodiff graph)")
    return lines


def hessian_explanation(target, ex) -> None:
    screen = console()
    result = ex.result
    where = f" at {inputs_line(result.inputs)}" if result.inputs else ""
    screen.print(Text.assemble(("Hessian", "bold"), f" of {target.describe()}{where} by {ex.method}, "
                               "in two stages"))
    screen.print()
    screen.print(Text("stage 1: the gradient by the reverse sweep (the chain rule, as grad --explain shows it)",
                      style="bold"))
    for line in node_lines(ex.gradient.graph):
        screen.print(Text("  " + line))
    screen.print(Text("  then each node's adjoint, from the output back to the inputs:"))
    for line in reverse_lines(ex.gradient):
        screen.print(Text("  " + line))
    screen.print()
    screen.print(Text(STAGE_TWO[ex.method], style="bold"))
    for r in ex.rows[:MAX_DIRECTIONS]:
        head = f"  {r.direction}: " if ex.method == "forward-over-reverse" else f"  from ∂f/∂{r.direction}: "
        screen.print(Text(head + row_line(ex.method, r.direction, r.row)))
    if len(ex.rows) > MAX_DIRECTIONS:
        screen.print(Text(f"  ⋮ {len(ex.rows) - MAX_DIRECTIONS} more directions (see --json)"))
    unit = "pass" if ex.method == "forward-over-reverse" else "outer sweep"
    stacked = " (each pass carries every direction of one input, stacked)" if unit == "pass" else ""
    screen.print(Text(f"  {len(ex.rows)} direction{'s' * (len(ex.rows) != 1)} in {ex.passes} "
                      f"{unit}{'es' * (ex.passes != 1 and unit == 'pass')}{'s' * (ex.passes != 1 and unit != 'pass')}"
                      f"{stacked}"))
    screen.print()
    hessian_result(target, result)


def jacobian_explanation(target, ex) -> None:
    screen = console()
    result = ex.result
    where = f" at {inputs_line(result.inputs)}" if result.inputs else ""
    how = ("one reverse sweep per output entry, seeded with its unit vector: the adjoints at the inputs "
           "are that row" if ex.mode == "reverse" else
           "one forward pass of dual numbers per input: the output's tangent is that column")
    screen.print(Text.assemble(("Jacobian", "bold"), f" of {target.describe()}{where} by {ex.mode} mode: {how}"))
    if ex.mode == "reverse" and ex.sweeps:
        screen.print()
        screen.print(Text("the nodes and their values", style="bold"))
        for line in node_lines(ex.sweeps[0][1].graph):
            screen.print(Text("  " + line))
    for label, sweep in ex.sweeps:
        screen.print()
        seed = "seeded with 1" if label == "f" else f"seeded with v = the unit vector of {label} (vᵀf = {label})"
        screen.print(Text(f"row {label}: the sweep {seed}", style="bold"))
        for line in reverse_lines(sweep):
            screen.print(Text("  " + line))
        row = "   ".join(f"∂{label}/∂{name} = {show(value)}" for name, value in sweep.gradient.items())
        screen.print(Text("  " + row, style="green"))
    if ex.left_out:
        screen.print(Text(f"⋮ {ex.left_out} more rows, one sweep each (the Jacobian below has them all)"))
    for p in ex.passes:
        screen.print()
        screen.print(Text(f"column for {p.input}: seed tangent 1, the other inputs' tangents 0", style="bold"))
        for line in forward_lines(p):
            screen.print(Text("  " + line))
        column = p.derivative if p.derivative is not None else 0.0
        screen.print(Text(f"  ∂f/∂{p.input} = {show(column)}", style="green"))
    screen.print()
    jacobian_result(target, result)
