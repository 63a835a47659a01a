"""The perturbed points of a full Jacobian or Hessian check, x ± h e_j and x ± 2h e_j for every input
entry j, evaluated by batched replays of the target's trace (diff/batched_replay.py) instead of 4n
runs: its output for a Jacobian, its gradient (a reverse sweep over the stacked pass) for a Hessian.

Only programs whose control flow and constants cannot depend on their inputs are batched: every
perturbed point then takes the recorded path, so no perturbation crosses a branch (the verdicts'
branch reasons stay empty, as the per-point runs' signatures would leave them), and kinks show in
the function values as they do point by point. Anything else (no trace, an error in the batch,
a first row that disagrees with the unperturbed run) returns None: the caller runs each point."""
from __future__ import annotations

import math

from ..core.backend import np, to_device, to_host
from ..core.primitives import size
from ..core.tape import Tape, Var, backward, strip
from ..diff.common import ones_like_output
from ..diff.batched_replay import (batch_differs, largest_value, point_shape, record_for_batches, refused_pass,
                                   replay_stacked, rows_per_pass, stacked_rows)
from ..diff.fallbacks import CONFIRMED_ERRORS, Unsupported, count
from ..diff.replay_release import last_uses
from .one_hot import OFFSETS, objective_rows

BATCHED = True           # False: every perturbed run point by point (benchmarks time both ways)
MIN_ENTRIES = 2          # below this the loop costs no more than recording the trace
NOT_FLOATS = "inputs that are not floating-point arrays (the points run one by one)"
MOSTLY_CROSSED = "a batched pass whose guards most points read otherwise (the points run one by one)"


class StackedOutputs:
    """The target's output at the perturbed points, by batched replay: `__call__` returns (the
    flat output at x, from the same pass, so that every difference the verdicts take is between
    values rounded alike; per input entry of `names` flattened in order, the four flat outputs),
    or None."""

    guarded = False      # whether a trace with guards is batched (the caller runs `crossed` itself)

    def __init__(self, target, limits=None, fallbacks=None):
        self.target, self.limits = target, limits
        self.passes = 0                  # batched passes made (for tests and benchmarks)
        # {reason: count} of the calls handed to the per-point runs (the check's runner's, where given)
        self.fallbacks = {} if fallbacks is None else fallbacks
        # (input entry, offset) of the points whose path changed (a guard read them otherwise): their
        # numbers in the last call's columns are nan, for the caller to run one by one
        self.crossed = []

    def __call__(self, inputs: dict, names, steps, f0, n_out, trace=None):
        """`trace`: the target's, recorded at `inputs` by record_for_batches (a gradient check
        records it once for its one-hot stacks and this), else recorded here."""
        self.crossed = []
        if not BATCHED or len(steps) < MIN_ENTRIES:
            return None
        if not all_float(inputs, names):
            count(self.fallbacks, Unsupported(NOT_FLOATS))
            return None
        order = list(self.target.inputs)
        shared = {k: to_device(inputs[k]) for k in order}
        if trace is None:
            trace = record_for_batches(self.target, shared, self.limits, self.fallbacks, self.guarded)
        if trace is None:
            return None
        try:
            per_point = largest_value(trace, [shared[k] for k in order])
            return self._columns(trace, inputs, shared, names, steps, f0, n_out, per_point)
        except CONFIRMED_ERRORS as error:       # the per-point runs report it as each run does
            count(self.fallbacks, refused_pass(error))
            return None

    def _columns(self, trace, inputs, shared, names, steps, f0, n_out, per_point):
        order = list(self.target.inputs)
        entries = [(name, k) for name in names for k in range(size(inputs[name]))]
        points = max(1, rows_per_pass(per_point) // len(OFFSETS))     # entries per pass
        last = last_uses(trace)
        columns, base = [], None
        for start in range(0, len(entries), points):
            part = entries[start:start + points]
            lead = 1 if start == 0 else 0          # the first pass also runs x itself, to compare with f0
            rows = lead + len(OFFSETS) * len(part)
            stacks = _perturbed_stacks(inputs, names, part, steps[start:start + len(part)], lead)
            values = [to_device(stacks[k]) if k in stacks else shared[k] for k in order]
            crossed = set()
            table = self._table(trace, values, [k in stacks for k in order], rows, last, crossed)
            self.passes += 1
            if table.shape[1] != n_out:
                count(self.fallbacks, batch_differs("output size"))
                return None
            if lead and 0 in crossed:
                count(self.fallbacks, batch_differs("path at x"))
                return None
            if 2 * len(crossed) > rows:            # a guard that pins the values (argmax(x)): the loop is cheaper
                count(self.fallbacks, Unsupported(MOSTLY_CROSSED))
                return None
            if crossed:                            # not those points' numbers: theirs are run one by one
                table = table.copy()
                table[sorted(crossed)] = np().nan
                self.crossed.extend(divmod(start * len(OFFSETS) + r - lead, len(OFFSETS)) for r in sorted(crossed))
            if lead:
                base = table[0].tolist()
                if not _close(base, f0, _eps(inputs, names), _column_scales(table)):
                    count(self.fallbacks, batch_differs("output at x"))
                    return None
            columns.extend(table[lead:].reshape(len(part), len(OFFSETS), -1).tolist())
        return base, columns

    def _table(self, trace, values, flags, rows, last, crossed):
        """The flat output per point, (rows, its size), of one batched pass; `crossed` gets the
        rows whose path changed (replay_stacked)."""
        out, is_stacked = replay_stacked(trace, values, flags, rows, last, crossed=crossed)
        return stacked_rows(out, is_stacked, rows)


class StackedObjective(StackedOutputs):
    """The objective of a full gradient check (differences.Objective: the output itself, its sum,
    or vᵀ output for an output seed v) at the perturbed points, from the same batched passes: each
    pass's output per point reduced as Objective reduces one point's, a table of one column."""

    guarded = True       # a gradient check runs the points whose path changed by themselves

    def __init__(self, target, output_seed=None, limits=None, fallbacks=None):
        super().__init__(target, limits, fallbacks)
        self.output_seed = output_seed

    def _table(self, trace, values, flags, rows, last, crossed):
        out, is_stacked = replay_stacked(trace, values, flags, rows, last, crossed=crossed)
        table = stacked_rows(out, is_stacked, rows)
        return objective_rows(table, self.output_seed, point_shape(out, is_stacked)).reshape(rows, 1)


class StackedGradients(StackedOutputs):
    """The AD gradient over `wrt` (flattened in order) at the perturbed points, for a Hessian
    check: the batched forward runs on boxes of a tape, and one reverse sweep seeded with ones
    over every point's output gives every point's gradient at once (the points do not mix, so
    the gradient of their sum is, row by row, each point's own; an array output is summed, as
    a gradient run sums it)."""

    def __init__(self, target, wrt, limits=None, fallbacks=None):
        super().__init__(target, limits, fallbacks)
        self.wrt = list(wrt)

    def _table(self, trace, values, flags, rows, last, crossed):
        order = list(self.target.inputs)
        tape = Tape()
        watched = {k: tape.watch(v) for k, v, f in zip(order, values, flags) if f and k in self.wrt}
        boxed = [watched.get(k, v) for k, v in zip(order, values)]
        out, is_stacked = replay_stacked(trace, boxed, flags, rows, last, crossed=crossed)
        parts = []
        if out.__class__ is Var and out.tape is tape:
            adjoints = backward(tape, out, ones_like_output(out.value))
            for k in self.wrt:
                g = adjoints[watched[k].index] if k in watched else None
                parts.append(np().zeros((rows, size(values[order.index(k)]) // rows)) if g is None
                             else np().asarray(to_host(strip(g)), dtype=np().float64).reshape(rows, -1))
        else:                                   # no output depends on the inputs: every gradient is 0
            parts = [np().zeros((rows, size(values[order.index(k)]) // rows)) for k in self.wrt]
        return np().concatenate(parts, axis=1) if parts else np().zeros((rows, 0))


def _perturbed_stacks(inputs, names, part, steps, lead) -> dict:
    """Each input of `names` stacked once per row: row lead + 4i + o moves entry part[i] by
    OFFSETS[o] times its step (x + t h in float64, then the input's dtype, as point by point)."""
    rows = lead + len(OFFSETS) * len(part)
    stacks, flats = {}, {}
    for name in names:
        base = np().asarray(to_host(inputs[name]))
        stacks[name] = np().array(np().broadcast_to(base, (rows,) + base.shape), order="C")   # a point per row
        flats[name] = stacks[name].reshape(rows, -1)
    xp, m = np(), len(OFFSETS)
    for name in names:                         # each input's moved entries at once
        which = [i for i, (n, _) in enumerate(part) if n == name]
        if not which:
            continue
        ks = xp.asarray([part[i][1] for i in which], dtype=xp.int64)
        xs = xp.asarray(to_host(inputs[name]), dtype=xp.float64).reshape(-1)[ks]
        hs = xp.asarray([steps[i] for i in which], dtype=xp.float64)
        rows_at = lead + m * xp.repeat(xp.asarray(which, dtype=xp.int64), m) + xp.tile(xp.arange(m), len(which))
        moved = xp.repeat(xs, m) + xp.tile(xp.asarray(OFFSETS), len(which)) * xp.repeat(hs, m)    # x + t h
        flats[name][rows_at, xp.repeat(ks, m)] = moved
    return stacks


def all_float(inputs, names) -> bool:
    for name in names:
        v = inputs[name]
        if v.__class__ is not float and not (hasattr(v, "dtype") and np().issubdtype(np().dtype(str(v.dtype)),
                                                                                        np().floating)):
            return False
    return True


def _eps(inputs, names) -> float:
    dtypes = [np().dtype(str(getattr(inputs[n], "dtype", "float64"))) for n in names]
    return max(float(np().finfo(d).eps) for d in dtypes) if dtypes else float(np().finfo(np().float64).eps)


def _column_scales(table) -> list:
    """Per output, the largest finite magnitude over the pass's rows."""
    magnitudes = np().where(np().isfinite(table), np().abs(table), 0.0)
    return magnitudes.max(axis=0).tolist()


def _close(got, want, eps, scales) -> bool:
    """The batch's unperturbed row against the per-point run, to the square root of eps: numpy's
    SIMD loops round an element by where it sits in its array, so a sum that cancels to 1e-13
    differs by eps times its terms; a lifting that went wrong is off by far more."""
    if len(got) != len(want):
        return False
    for a, b, scale in zip(got, want, scales):
        if a == b or (a != a and b != b):
            continue
        if not (math.isfinite(a) and math.isfinite(b)) or abs(a - b) > math.sqrt(eps) * max(abs(a), abs(b), scale):
            return False
    return True
