"""f and its first N derivatives over a grid of one scalar input, by AD (never finite differences),
with the kinks and branch switches met along the way.

Each point is one run of the target on nested dual numbers: N forward-mode levels, each with
tangent 1, so the one run carries every derivative up to order N (the component that took the
tangent at k of the levels is f^(k)). The run is also recorded on a tape above the duals, which
lets us read, per point, which side of each kink (abs, relu, max, where, ...) the value fell on.
Programs whose control flow may depend on their inputs are evaluated point by point, so control
flow follows each point's own values; the others take the whole grid in batched passes
(views/plot_points.py), with the same curves, notes and marks.

Marks: a kink evaluated exactly at a grid point (the engine's kink notes), a kink crossed between
two neighbouring points (the side of a kink op changed), and a branch switch (the control-flow
signature changed between neighbours).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...parser.errors import SourceError, option
from ..core.notes import reset as reset_notes
from ..core.tape import Dual, Tape, Var, new_level, strip
from ..lang.values import as_input, describe
from ..lang.target import Runner
from .plot_points import as_number, component, grid_points, kink_side

MAX_ORDER = 6               # each order doubles the work of a point (2^N dual components)


@dataclass
class Mark:
    kind: str               # "kink" (at a point), "kink crossed" or "branch switch" (between points)
    x: float                # where: the point, or the midpoint between the two neighbours
    between: tuple | None   # (left x, right x) for a switch between points
    op: str
    line: int | None
    column: int | None
    detail: str


@dataclass
class PlotData:
    name: str
    xs: list
    series: list            # series[k][i] = f^(k)(xs[i]) (nan where not finite or undefined)
    marks: list = field(default_factory=list)
    order: int = 1
    errors: list = field(default_factory=list)   # (x, SourceError) for points that could not run
    fallbacks: dict = field(default_factory=dict)   # {reason: count}: why the grid was not one batched pass


def point(target, name, x, others, order, limits, runner=None):
    """(f, f', ..., f^(order)) at x, the kink notes, the control-flow signature, the kink sides.
    `runner`: the target compiled once for all the points of a plot."""
    levels = [new_level() for _ in range(order)]
    box = as_input(x)                                      # float32 when --dtype float32
    for level in levels:
        box = Dual(box, 1.0, level)
    tape = Tape(persistent=True)
    values = dict(others)
    values[name] = tape.watch(box)
    notes = reset_notes()
    runner = runner or Runner(target, limits)
    interp = runner.interp
    try:
        out = runner.run(values)
    except SourceError as e:
        e.message += f" (at {name} = {x!r})"
        raise
    raw = strip(out)
    if not (raw.__class__ in (float, int, bool) or getattr(raw, "shape", None) == ()):
        raise SourceError("bad output", f"plot needs a scalar output; at {name} = {x!r} the output is "
                          f"{describe(out)}", None, "wrap it in sum(...)", source=target.source,
                          filename=target.filename)
    if out.__class__ is Var and out.tape is tape:
        out = out.value
    ordered = list(reversed(levels))                       # the outermost box has the highest level
    derivs = tuple(as_number(component(out, ordered, k)) for k in range(order + 1))
    sides = [(e.prim.name, e.span, kink_side(e.prim, e.args, e.params)) for e in tape.entries
             if e.prim is not None and e.prim.side]
    return derivs, list(notes.kinks), list(interp.signature), sides


def sample(target, name, lo, hi, points, order=1, others=None, limits=None, on_point=None) -> PlotData:
    if order > MAX_ORDER:
        raise SourceError("usage", f"{option('order')} {order}: at most {MAX_ORDER} (each order doubles the work)")
    xs = [lo + (hi - lo) * i / (points - 1) for i in range(points)] if points > 1 else [lo]
    series = [[] for _ in range(order + 1)]
    data = PlotData(name, xs, series, order=order)
    seen = set()
    prev = None
    runner = Runner(target, limits)             # compiled once: each point only runs it
    batched = grid_points(target, name, xs, others or {}, order, limits, data.fallbacks)    # all at once, where it can
    for i, x in enumerate(xs):
        try:
            derivs, kinks, signature, sides = batched[i] if batched is not None else \
                point(target, name, x, others or {}, order, limits, runner)
        except SourceError as e:               # a gap in the curve; the plot goes on
            data.errors.append((x, e))
            for ys in series:
                ys.append(math.nan)
            prev = None
            if on_point is not None:
                on_point(i)
            continue
        for k, d in enumerate(derivs):
            series[k].append(d)
        for op, span, detail in kinks:
            key = (op, span, x)
            if key not in seen:
                seen.add(key)
                data.marks.append(Mark("kink", x, None, op, *_loc(span), detail))
        if prev is not None:
            _switches(data, prev, (x, signature, sides))
        prev = (x, signature, sides)
        if on_point is not None:
            on_point(i)
    if len(data.errors) == len(xs):
        raise data.errors[0][1]
    return data


def breaks(data) -> set:
    """Indices i where a derivative curve must not be joined from point i-1 to i: across a kink
    or branch switch between them, and on both sides of a kink met at a grid point (where the
    derivative is the convention's value, shown as a lone dot)."""
    index = {x: i for i, x in enumerate(data.xs)}
    out = set()
    for m in data.marks:
        if m.between is not None:
            out.add(index[m.between[1]])
        elif m.x in index:
            out.update((index[m.x], index[m.x] + 1))
    return out


def _loc(span):
    return (span.line, span.column) if span is not None else (None, None)


def _switches(data, prev, cur):
    (x0, sig0, sides0), (x1, sig1, sides1) = prev, cur
    mid, between = (x0 + x1) / 2, (x0, x1)
    if sig0 != sig1:
        for a, b in zip(sig0 + [None] * len(sig1), sig1 + [None] * len(sig0)):
            if a != b:
                where = (a or b)[0]
                data.marks.append(Mark("branch switch", mid, between, "branch", where[0], where[1],
                                       _branch_detail(a, b)))
                break
        return                                             # a different path: its kinks differ too
    if [(op, sp) for op, sp, _ in sides0] != [(op, sp) for op, sp, _ in sides1]:
        return
    for (op, span, s0), (_, _, s1) in zip(sides0, sides1):
        if s0 != s1:
            # a side that passes through 0 at a grid point was noted there as a kink already
            if isinstance(s0, int) and isinstance(s1, int) and 0 in (s0, s1):
                continue
            data.marks.append(Mark("kink crossed", mid, between, op, *_loc(span),
                                   f"{op} changes sides between the two points"))
            break


def _branch_detail(a, b) -> str:
    if a is None or b is None:
        return "the control flow takes a different path"
    d0, d1 = a[1], b[1]
    if isinstance(d0, bool):
        return f"the condition changes from {d0} to {d1}"
    return f"the loop runs {d0} then {d1} times"
