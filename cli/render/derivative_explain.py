"""`derivative --explain` for people: a stage per order, each the reverse sweep of the tape that
recorded f's computation and the sweeps of the orders below (the lines of `grad --explain`, the
nodes grouped by the computation that recorded them), or in forward mode the dual-number pass of
order 1. Then the result's own table."""
from __future__ import annotations

from rich.text import Text

from ...engine.views.derivative_steps import derivative_name
from .common import console, inputs_line
from .higher import derivative_result
from .views import forward_lines, node_line, reverse_lines, show

MAX_NODE_LINES = 120     # nodes of a stage listed; longer tapes show their first and last ones


def recorded_by(by: int) -> str:
    """0: f's computation; j: the sweep for f^(j)."""
    return "f's computation" if by == 0 else f"the sweep for {derivative_name(by)}"


def stage_heading(stage) -> str:
    """stage 2: f'' = the reverse sweep of the tape that recorded f's computation (n1…n3) and the
    sweep for f' (n4…n9), 9 entries."""
    gives, of = derivative_name(stage.order), derivative_name(stage.order - 1)
    if stage.sweep is None:
        sweeps = ("" if stage.order == 1 else " and the sweep for f'" if stage.order == 2 else
                  f" and the sweeps for f' … {of}")
        return (f"stage {stage.order}: {gives} = the reverse sweep of the tape that recorded f's computation"
                f"{sweeps}, {stage.tape_entries:,} entries")
    parts = [f"{recorded_by(p.by)} (n{p.first}…n{p.last})" for p in stage.parts]
    if len(parts) > 3:                    # f's run, then the sweeps for f' … f^(k-1) in one stretch
        first, last = stage.parts[1], stage.parts[-1]
        parts = [parts[0], f"the sweeps for f' … {derivative_name(last.by)} (n{first.first}…n{last.last})"]
    recorded = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (f"stage {stage.order}: {gives} = the reverse sweep of the tape that recorded {recorded}, "
            f"{stage.tape_entries:,} entries")


def stage_node_lines(stage) -> list:
    """The stage's nodes under a heading per computation that recorded them, the middle of a long
    tape left out."""
    graph = stage.sweep.graph
    long = len(graph.nodes) > MAX_NODE_LINES
    head = MAX_NODE_LINES * 2 // 3                       # ids past head, up to tail, are left out
    tail = len(graph.nodes) - (MAX_NODE_LINES - head)
    lines = []
    for part in stage.parts:
        lines.append(f"recorded by {recorded_by(part.by)}:")
        ids = range(part.first, part.last + 1)
        left_out = [i for i in ids if head < i <= tail] if long else []
        for ident in ids:
            if left_out and ident == left_out[0]:
                lines.append(f"  ⋮ {len(left_out)} nodes left out")
            if left_out and left_out[0] <= ident <= left_out[-1]:
                continue
            lines.append("  " + node_line(graph, graph.node(ident)))
    return lines


def forward_explanation(target, ex) -> None:
    """Order 1 by forward mode: the pass of dual numbers, then the result's table."""
    screen = console()
    result = ex.result
    where = f" at {inputs_line(result.inputs)}" if result.inputs else ""
    d = "∂" if len(result.inputs) > 1 else "d"
    screen.print(Text.assemble(("derivative", "bold"), f" of {target.describe()}{where} by forward mode: "
                               f"one pass of dual numbers a + bε, seed tangent 1 for {result.name}"))
    for p in ex.passes:
        screen.print()
        for line in forward_lines(p):
            screen.print(Text("  " + line))
        tangent = p.derivative if p.derivative is not None else 0.0
        screen.print(Text(f"  f' = {d}f/{d}{result.name} = {show(tangent)}", style="green"))
    screen.print()
    derivative_result(target, result)


def derivative_explanation(target, ex) -> None:
    """A stage per order of the nested tapes (or forward mode's pass), then the result's table."""
    if ex.mode == "forward":
        forward_explanation(target, ex)
        return
    screen = console()
    result = ex.result
    where = f" at {inputs_line(result.inputs)}" if result.inputs else ""
    d = "∂" if len(result.inputs) > 1 else "d"
    screen.print(Text.assemble(("derivative", "bold"), f" of {target.describe()}{where} by nested tapes, "
                               f"{result.order} stage{'s' * (result.order != 1)}: the tape swept for f^(k) "
                               "recorded f's computation and the sweeps for f' … f^(k-1) (each sweep ran while "
                               "the outer tapes recorded it: its nodes are the rules' ops, at the places of the "
                               "nodes they differentiate), and its reverse sweep from f^(k-1) gives f^(k)"))
    for stage in ex.stages:
        screen.print()
        screen.print(Text(stage_heading(stage), style="bold"))
        gives, of = derivative_name(stage.order), derivative_name(stage.order - 1)
        if stage.sweep is None:
            screen.print(Text(f"  not listed: over {ex.list_limit:,} entries (the sweep ran; its result is below)"))
        else:
            for line in stage_node_lines(stage):
                screen.print(Text("  " + line))
            if stage.sweep.graph.output is None:
                screen.print(Text(f"  {of} does not depend on {result.name} (nothing reaching it was recorded): "
                                  "nothing to sweep"))
            else:
                screen.print(Text(f"  the sweep from its output n{stage.sweep.graph.output} = {of}, each node's "
                                  "adjoint the sum over the nodes that use it:"))
                for line in reverse_lines(stage.sweep, of=of):
                    screen.print(Text("    " + line))
        screen.print(Text(f"  {gives} = {d}{of}/{d}{result.name} = {show(stage.derivative)}", style="green"))
    screen.print()
    derivative_result(target, result)
