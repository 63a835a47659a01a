"""The perturbed points of a full Jacobian check as one-hot stacks (one_hot.py): the target's output
at x ± h e_j, x ± 2h e_j for every input entry j, flattened, in stacked_points.StackedOutputs'
interface. A program whose outputs reduce elementwise steps ([sum(sin(x)), sum(x * x)]) then costs
a few (4n,) arrays per step instead of passes over 4n copies of x. Whatever one_hot.py cannot
follow, and a table over OUTPUT_BUDGET_ELEMENTS numbers, goes to the fallback (the batched replay).
The result is trusted only where its row at x matches f0 and two perturbed rows match the point
replay of the trace (which is the interpreter's to the bit)."""
from __future__ import annotations

from ..core.backend import np, on_device, to_host
from ..core.tape import strip
from ..diff.batched_replay import batch_differs, record_for_batches, refused_pass
from ..diff.fallbacks import CONFIRMED_ERRORS, Unsupported, count
from ..diff.replay import replay_output, replay_values
from . import stacked_points
from .one_hot import (CONSTANT_OUTPUT, NOT_FLOAT64, OFFSETS, OneHot, Unfollowable, agrees, all_float64,
                      checked_points, moved_outputs, moved_point)

OUTPUT_BUDGET_ELEMENTS = 1 << 22       # the flat outputs of every point: 32 MiB of float64
OVER_BUDGET = "a one-hot table over its budget (the batched replay's passes are chunked)"


class OneHotOutputs:
    """`StackedOutputs(inputs, names, steps, f0, n_out)`'s (flat output at x, per input entry the
    four flat outputs) by one-hot stacks, else what `fallback` returns for the same call."""

    def __init__(self, target, limits=None, fallback=None, fallbacks=None):
        self.target, self.limits, self.fallback = target, limits, fallback
        self.taken = False                   # whether the last call took the one-hot path (tests, benchmarks)
        # {reason: count} of the calls handed to `fallback` (the check's runner's, where given)
        self.fallbacks = {} if fallbacks is None else fallbacks

    def __call__(self, inputs: dict, names, steps, f0, n_out):
        self.taken = False
        out = None
        if stacked_points.BATCHED and len(steps) >= stacked_points.MIN_ENTRIES:
            out = self._one_hot(inputs, names, steps, f0, n_out)
        self.taken = out is not None
        if out is None and self.fallback is not None:
            return self.fallback(inputs, names, steps, f0, n_out)
        return out

    def _one_hot(self, inputs, names, steps, f0, n_out):
        """The one-hot stacks' columns, or None (the handover counted by its reason)."""
        if len(OFFSETS) * len(steps) * n_out > OUTPUT_BUDGET_ELEMENTS:
            count(self.fallbacks, Unsupported(OVER_BUDGET))
            return None
        host = {k: to_host(v) for k, v in inputs.items()}
        if not all_float64(host, names):
            count(self.fallbacks, Unsupported(NOT_FLOAT64))
            return None
        with on_device("cpu"):           # the stacks are host arrays
            try:
                return self._columns(host, names, steps, f0, n_out)
            except Unfollowable as unfollowable:
                count(self.fallbacks, Unsupported(f"a one-hot stack cannot follow {unfollowable}"))
            except CONFIRMED_ERRORS as error:    # a step that fails on a stack
                count(self.fallbacks, refused_pass(error))
        return None

    def _columns(self, inputs, names, steps, f0, n_out):
        order = list(self.target.inputs)
        trace = record_for_batches(self.target, inputs, self.limits, self.fallbacks)
        if trace is None:
            return None
        if trace.output is None:
            count(self.fallbacks, Unsupported(CONSTANT_OUTPUT))
            return None
        at_x = replay_values(trace, [inputs[k] for k in order])
        base = _flat(at_x[trace.output])
        if base.size != n_out or not _close(base, np().asarray(f0, dtype=np().float64), base):
            count(self.fallbacks, batch_differs("output at x"))
            return None
        tables = [_rows(out, base, len(OFFSETS) * entries)
                  for entries, out in moved_outputs(trace, at_x, order, inputs, names, steps)]
        table = np().concatenate(tables) if tables else np().zeros((0, n_out))
        if table.shape[1] != n_out:
            count(self.fallbacks, batch_differs("output size"))
            return None
        if not self._agrees_with_point_replays(trace, inputs, names, steps, table, base):
            count(self.fallbacks, batch_differs("moved points"))
            return None
        return base.tolist(), table.reshape(-1, len(OFFSETS), n_out).tolist()

    def _agrees_with_point_replays(self, trace, inputs, names, steps, table, base) -> bool:
        """The first and the last perturbed point against a replay at each, as one_hot.py's
        gradient rows against single runs: to 1e-6 of the change plus the rounding of f."""
        for e, o, name, k in checked_points(inputs, names):
            point = moved_point(inputs, name, k, OFFSETS[o] * steps[e])
            want = _flat(replay_output(trace, replay_values(trace, [point[k] for k in self.target.inputs])))
            got = table[len(OFFSETS) * e + o]
            if not _close(got, want, base, rel=1e-6):
                return False
        return True


def _flat(value):
    return np().asarray(to_host(strip(value)), dtype=np().float64).reshape(-1)


def _rows(out, base, rows):
    """The flat output per row of a pass, (rows, outputs)."""
    if out is None:                             # the output does not depend on this input
        return np().broadcast_to(base, (rows, base.size)).copy()
    if out.__class__ is OneHot:
        table = np().broadcast_to(base, (rows, base.size)).copy()
        table[np().arange(rows), out.index] = out.values
        return table
    return np().asarray(out.stack, dtype=np().float64).reshape(rows, -1)


def _close(got, want, base, rel=1e-12) -> bool:
    """Entry by entry, as one_hot.agrees."""
    return all(agrees(a, b, c, rel) for a, b, c in zip(got.tolist(), want.tolist(), base.tolist()))
