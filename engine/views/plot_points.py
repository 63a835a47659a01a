"""A plot's grid points: what views/plotdata.py reads of one point (which side of each kink its
values fell on, the derivative components of a nested dual), and every point of the grid at once
by batched replay of the target's trace (diff/batched_replay.py) where the program allows.

A batched pass carries the whole grid as one stacked x under the plot's N forward levels (each
with tangent 1), so it gives f, f', ..., f^(N) at every point as point-by-point runs do, to
rounding (numpy's vector loops of sin, exp, ... may round a value one ulp apart from one point's
run: `x**3 - abs(sin(3*x))` differs at one of 201 points). Its kink
notes are made per pass (a kink at any point of it): a pass with notes from the points' own steps
is split in halves until each note is pinned to its points, so every point gets the notes its own
run would make, in their order. The control-flow signature is the trace's at every point (the
program's control flow cannot depend on its inputs), and each point's kink sides are read from
the stacked arguments of the steps that depend on x, which are the entries its own run's tape
would hold. Programs that cannot be batched get None: plotdata then runs each point."""
from __future__ import annotations

import math
import sys

from ..core.backend import np, to_device, to_host, xp
from ..core.notes import reset as reset_notes
from ..core.tape import Dual, new_level, strip
from ..diff.batched_replay import (largest_value, point_shape, record_for_batches, refused_pass, replay_stacked,
                                   rows_per_pass)
from ..diff.fallbacks import CONFIRMED_ERRORS, count
from ..diff.replay_release import last_uses
from ..lang.values import as_input, dtype

BATCHED = True          # False: every grid point is one run (benchmarks time both ways)
MIN_POINTS = 8          # below this a run per point costs no more than recording the trace


def kink_side(prim, args, params):
    """Which side of its kink an op's arguments fell on, as something comparable (the table's
    `Primitive.side` says what decides it)."""
    side = prim.side
    vals = [strip(a) for a in args]
    if side == "sign":
        d = vals[0]
    elif side == "difference":
        d = vals[0] - vals[1]
    elif side == "condition":
        c = vals[0]
        return bool(c) if c.__class__ is bool else np().asarray(c).tobytes()
    else:                                                     # max/min: where the extreme sits
        axis = (params or {}).get("axis")
        a = np().asarray(vals[0])
        return (np().argmax(a, axis=axis) if side == "argmax" else np().argmin(a, axis=axis)).tobytes()
    if d.__class__ is float:
        return (d > 0) - (d < 0)
    return np().sign(np().asarray(d)).tobytes()


def component(v, levels, k):
    """The part of a nested dual that took the tangent at k of the levels (outermost first)."""
    for idx, level in enumerate(levels):
        if v.__class__ is Dual and v.level == level:
            v = v.tangent if idx < k else v.primal
        elif idx < k:
            return 0.0
    return v


def as_number(v) -> float:
    v = strip(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


# A plot of a scalar program runs without numpy; a batched one loads it (60-150 ms here), which
# pays only when the point runs would take longer: about this many op applications (each level
# of derivatives doubles a step's work)
NUMPY_WORTH_OPS = 200_000


def worth_numpy(ops: int) -> bool:
    """Whether a batched pass may load numpy: it is loaded already, or the point runs cost more."""
    return "numpy" in sys.modules or ops >= NUMPY_WORTH_OPS


def grid_points(target, name, xs, others, order, limits=None, fallbacks=None):
    """Per grid point, (derivatives, kinks, signature, sides) as plotdata's `point` gives them,
    from batched passes; None where the program is not batched (then each point is one run),
    the reason counted in `fallbacks` (diff/fallbacks.py), a dict."""
    if not BATCHED or len(xs) < MIN_POINTS:
        return None
    fallbacks = {} if fallbacks is None else fallbacks
    at = dict(others)
    at[name] = as_input(xs[0])
    trace = record_for_batches(target, at, limits, fallbacks)
    if trace is None or not worth_numpy(len(xs) * trace.operations() * 2 ** order):
        return None
    grid = GridPass(trace, target, name, others, order)
    try:
        per_point = largest_value(trace, [at[k] for k in target.inputs])
        step = rows_per_pass(per_point * 2 ** order)       # each level doubles a value's components
        results = []
        for start in range(0, len(xs), step):
            results.extend(grid.pinned(xs[start:start + step]))
    except CONFIRMED_ERRORS as error:        # the point runs report it, located
        count(fallbacks, refused_pass(error))
        return None
    signature = list(trace.signature)
    return [(derivs, kinks, signature, sides) for derivs, kinks, sides in results]


class GridPass:
    """The trace of a plot's target and batched passes over some of its grid points."""

    def __init__(self, trace, target, name, others, order):
        self.trace, self.name, self.order = trace, name, order
        self.inputs = list(target.inputs)
        self.others = others
        self.last = last_uses(trace)
        self.passes = 0                     # batched passes made (for tests and benchmarks)

    def pinned(self, xs: list) -> list:
        """`run` over xs, split in halves wherever the points' own steps made kink notes, so that
        each note lands on the points that make it."""
        out = self.run(xs)
        if out is not None:
            return out
        half = len(xs) // 2
        return self.pinned(xs[:half]) + self.pinned(xs[half:])

    def run(self, xs: list):
        """Per point of `xs`: (derivatives, kinks, sides) from one pass, or None when the pass's
        own steps made kink notes and it holds more than one point."""
        rows = len(xs)
        levels = [new_level() for _ in range(self.order)]
        grid = to_device(np().asarray(xs, dtype=np().float64 if dtype() == "float64" else np().float32))
        box = grid
        for level in levels:
            box = Dual(box, xp().ones_like(grid), level)
        values = [box if k == self.name else self.others[k] for k in self.inputs]
        notes = reset_notes()
        steps = []
        out, is_stacked = replay_stacked(self.trace, values, [k == self.name for k in self.inputs], rows,
                                         self.last, record=steps)
        self.passes += 1
        if point_shape(out, is_stacked) != ():
            raise ValueError("plot needs a scalar output")     # the point runs report it, located
        kinks = list(notes.kinks)
        if rows > 1 and own_notes(steps):
            return None
        ordered = list(reversed(levels))                       # the outermost box has the highest level
        columns = [_per_point(component(out, ordered, k), rows) for k in range(self.order + 1)]
        sides = _sides(steps, rows)
        return [(tuple(c[r] for c in columns), kinks, sides[r]) for r in range(rows)]


def own_notes(steps) -> bool:
    """Whether a step on the points' own values made a kink note (shared steps make theirs at
    every point alike)."""
    before = 0
    for step in steps:
        if step.stacked and step.notes > before:
            return True
        before = step.notes
    return False


def _per_point(v, rows) -> list:
    raw = strip(v)
    if getattr(raw, "shape", ()) == (rows,):
        return [as_number(x) for x in to_host(raw).tolist()]
    return [as_number(raw)] * rows


def _point_value(v, r):
    """Point r of a stacked raw value; a 0-d float64 or bool as the Python number a point's own
    run holds there."""
    one = v[r]
    if getattr(one, "shape", None) == ():
        if one.dtype == np().float64:
            return float(one)
        if one.dtype == np().bool_:
            return bool(one)
    return one


def _sides(steps, rows) -> list:
    """Per point, the (op, span, side) of each step on x's values whose primitive has a kink."""
    sides = [[] for _ in range(rows)]
    for step in steps:
        if not step.stacked or not step.prim.side:
            continue
        raws = [(to_host(strip(a)), s) for a, s in step.args]
        for r in range(rows):
            point_args = [_point_value(a, r) if s else a for a, s in raws]
            sides[r].append((step.prim.name, step.span, kink_side(step.prim, point_args, step.params)))
    return sides
