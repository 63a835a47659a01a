"""The perturbed points of a full gradient check as one-hot stacks: every point x ± h e_k, x ± 2h e_k
differs from x in one element, and so does every elementwise value computed from it. The target's
trace (diff/replay.py) is replayed once per perturbed input on values of three kinds:

- shared: the value at x, which every point has (the trace replayed at x once);
- `OneHot`: the value at x, plus per row r (one row per perturbed point) the flat index i_r of
  the one element that moved and its new value p_r. An elementwise step keeps the base it has at
  x and computes only the (rows,) moved elements, its other operands read at i_r;
- `Dense`: one value per row along a leading axis, as the batched replay stacks them (after a
  full reduction a one-hot value becomes a dense stack of scalars: sum_r = sum(base) + p_r -
  base[i_r]); its steps are core/stacked.py's.

Anything else a one-hot value meets (matmul, reshape, indexing, a broadcast to a bigger shape, a
reduction along an axis, a dense stack beside it) is `Unfollowable`: the caller uses the batched
replay of the same trace (stacked_points.StackedObjective) instead. Only traces without guards
(control flow and constants that cannot depend on the inputs: record_for_batches) come here, so
every point follows the recorded path, and the result is trusted only after its unperturbed row
matches f0 and two perturbed rows match single runs. The incremental sums round differently from a
full sum: sum(base) + (p_r - base[i_r]) errs by about eps |sum|, a full sum by up to eps sum|terms|,
so where terms cancel the differences are less noisy than the program's own runs and so is their
estimated error (reviewed: 9.7e-10 against 2.5e-8 on sum(tanh(x) * x**2) over a symmetric grid, no
verdict changed); the differences themselves agree with the point runs' to 1e-9 of the largest
(tests/test_one_hot.py)."""
from __future__ import annotations

import math

from ..core.backend import np, on_device
from ..core.notes import NOTES
from ..core.numbers import all_finite
from ..core.primitives import element_limit, shape, size
from ..core.stacked import stacked_apply
from ..diff.batched_replay import STACK_BUDGET_ELEMENTS, batch_differs, record_for_batches, refused_pass
from ..diff.fallbacks import CONFIRMED_ERRORS, NonFinite, Unsupported, count
from ..diff.replay import replay_values
from ..diff.replay_release import last_uses

OFFSETS = (1.0, -1.0, 2.0, -2.0)     # x + h, x - h, x + 2h, x - 2h: the order the verdicts read


class Unfollowable(Exception):
    """A step the one-hot replay cannot follow exactly."""


# the documented handovers of a one-hot pass (counted by diff/fallbacks.py)
NOT_FLOAT64 = "inputs that are not float64 (the batched replay keeps their rounding)"
CONSTANT_OUTPUT = "an output that does not depend on the inputs (the points run one by one)"
NOT_FINITE_AT_X = "an objective that is not finite at x (the points run one by one)"


class OneHot:
    """Per row r, the value at x (`base`) with flat element index[r] replaced by values[r]."""
    __slots__ = ("base", "index", "values")

    def __init__(self, base, index, values):
        self.base, self.index, self.values = base, index, values


class Dense:
    """One value per row along the leading axis."""
    __slots__ = ("stack",)

    def __init__(self, stack):
        self.stack = stack


def one_hot_differences(target, limits, objective, inputs: dict, names, steps, f0, trace=None):
    """f(x ± h e_k) and f(x ± 2h e_k) for every entry k of the inputs `names` (steps[e] for the
    e-th entry, in order), (fp1, fm1, fp2, fm2) per entry, or None where the program
    cannot be followed (the caller then uses the batched replay, stacked_points.py). Returns an
    (entries, 4) array. `trace`: the target's, recorded at `inputs` by record_for_batches on the
    host, else recorded here."""
    order = list(target.inputs)
    fallbacks = objective.fallbacks         # each handover counted by its reason (diff/fallbacks.py)
    if not all_float64(inputs, names):
        count(fallbacks, Unsupported(NOT_FLOAT64))
        return None
    with on_device("cpu"):          # the checks' points are host arrays
        if trace is None:
            trace = record_for_batches(target, inputs, limits, fallbacks)
        if trace is None:
            return None
        if trace.output is None:
            count(fallbacks, Unsupported(CONSTANT_OUTPUT))
            return None
        try:
            at_x = replay_values(trace, [inputs[k] for k in order])
            base = objective_value(at_x[trace.output], objective.output_seed)
            if not close(base, f0):
                count(fallbacks, batch_differs("objective at x") if math.isfinite(base) or math.isfinite(f0)
                      else NonFinite(NOT_FINITE_AT_X))
                return None
            rows = [_objective_rows(out, at_x[trace.output], len(OFFSETS) * entries, objective.output_seed)
                    for entries, out in moved_outputs(trace, at_x, order, inputs, names, steps)]
        except Unfollowable as unfollowable:     # the batched replay decides
            count(fallbacks, Unsupported(f"a one-hot stack cannot follow {unfollowable}"))
            return None
        except CONFIRMED_ERRORS as error:       # a step that fails on a stack: as above
            count(fallbacks, refused_pass(error))
            return None
    per_entry = np().concatenate(rows).reshape(-1, len(OFFSETS)) if rows else np().zeros((0, len(OFFSETS)))
    if not _agrees_with_single_runs(objective, inputs, names, steps, per_entry, f0):
        count(fallbacks, batch_differs("moved points"))
        return None
    objective.count += len(OFFSETS) * len(per_entry) + 1
    return per_entry


def all_float64(inputs, names) -> bool:
    """float64 only: a float32 sum kept incrementally would round in float32 where the dense run
    rounds in its own order; the batched replay keeps those."""
    for name in names:
        v = inputs[name]
        if v.__class__ is not float and getattr(v, "dtype", None) != np().float64:
            return False
    return True


def _perturbed_leaf(x, steps):
    """The stacked input: row 4k + o moves entry k by OFFSETS[o] times its step."""
    offsets = np().tile(np().asarray(OFFSETS), len(steps)) * np().repeat(np().asarray(steps, dtype=np().float64),
                                                                         len(OFFSETS))
    if x.__class__ is float or np().ndim(x) == 0:
        return Dense(float(x) + offsets)
    flat = x.reshape(-1)
    index = np().repeat(np().arange(flat.size), len(OFFSETS))
    return OneHot(x, index, flat[index] + offsets)      # x_k + t h in float64, as point by point


def moved_outputs(trace, at_x, order, inputs, names, steps):
    """(its entry count, the moved output) for each input of `names` in turn, moving its entries
    by their slice of `steps` (steps of the entries of all `names`, flattened in order)."""
    start = 0
    for name in names:
        count = size(inputs[name])
        part = steps[start:start + count]
        start += count
        yield count, moved_output(trace, at_x, order.index(name), inputs[name], part)


def moved_output(trace, at_x, leaf, x, steps):
    """The trace's output (None: its value at x, `at_x[trace.output]`; else OneHot or Dense) at
    every point moving the input at tape index `leaf` (whose value is x) by steps[k] times OFFSETS,
    row 4k + o for entry k and offset o. `at_x`: every tape value at x (replay_values)."""
    moved = [None] * len(at_x)
    moved[leaf] = _perturbed_leaf(x, steps)
    rows = len(OFFSETS) * len(steps)
    saved_limit = element_limit[0]
    element_limit[0] = None               # the stacks are ours, not the program's: its limit is per point
    last = last_uses(trace)
    try:
        index = trace.leaves
        for i, e in enumerate(trace.body()):
            prim, parents, args, params, span = e.prim, e.parents, e.args, e.params, e.span
            if any(moved[j] is not None for _, j in parents):
                full = list(args)
                for pos, j in parents:
                    full[pos] = at_x[j]
                NOTES.span = span
                moved[index] = _step(prim, full, [(pos, moved[j]) for pos, j in parents if moved[j] is not None],
                                     params or {}, at_x[index], rows)
                for _, j in parents:
                    if last[j] == i and j != trace.output:
                        moved[j] = None            # its last reader has run (as replay_stacked frees)
            index += 1
    finally:
        element_limit[0] = saved_limit
    return moved[trace.output]


def _step(prim, full, moving, params, out_base, rows):
    """One step with some arguments moved (`moving`: (position, OneHot or Dense) pairs)."""
    if all(m.__class__ is Dense for _, m in moving):
        if rows * size(out_base) > STACK_BUDGET_ELEMENTS:     # checked before the stack is made
            raise Unfollowable("a dense stack over the budget")
        flags = [False] * len(full)
        for pos, m in moving:
            full[pos], flags[pos] = m.stack, True
        return Dense(stacked_apply(prim, tuple(full), flags, params or None, rows))
    if not all(m.__class__ is OneHot for _, m in moving):
        raise Unfollowable("a one-hot value beside a dense stack")
    if prim.elementwise_values:
        return _elementwise(prim, full, moving, params, out_base, rows)
    if len(moving) == 1 and moving[0][0] == 0 and _whole(params, moving[0][1].base):
        reduce = WHOLE_REDUCTIONS.get(prim.name)
        if reduce is not None:
            return Dense(reduce(moving[0][1], out_base))
    raise Unfollowable(f"{prim.name} of a one-hot value")


def _elementwise(prim, full, moving, params, out_base, rows):
    """The moved elements of an elementwise step: its operands read at each row's index."""
    out_shape = shape(out_base)
    index = moving[0][1].index
    for _, m in moving:
        if m.index is not index or shape(m.base) != out_shape:
            raise Unfollowable("a one-hot value broadcast to another shape")
    args = [_read_at(a, index, out_shape) for a in full]
    for pos, m in moving:
        args[pos] = m.values
    values = np().asarray(prim.impl(*args, **params) if params else prim.impl(*args))
    if values.shape != (rows,):
        raise Unfollowable(f"{prim.name} gave no value per row")
    return OneHot(out_base, index, values)


def _read_at(a, index, out_shape):
    """An operand that every point shares, at each row's element of the output."""
    a_shape = shape(a)
    if a_shape == ():
        return a
    if a_shape == out_shape:
        return a.reshape(-1)[index]
    return np().broadcast_to(a, out_shape)[np().unravel_index(index, out_shape)]


def _whole(params, base) -> bool:
    """Whether a reduction's axis takes every element."""
    axis = params.get("axis")
    if axis is None:
        return True
    ndim = len(shape(base))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return sorted(a % ndim for a in axes) == list(range(ndim)) if ndim else False


def _sum(m, out_base):
    if not all_finite([out_base]):            # inf - inf: a moved element cannot be taken back out
        raise Unfollowable("a sum that is not finite at x")
    flat = m.base.reshape(-1)
    return out_base + (m.values - flat[m.index])


def _extreme(largest: bool):
    """max or min of each row from the base's: an element that was not the only extreme leaves it
    in place, the only extreme leaves the runner-up; then the moved element competes."""
    def reduce(m, out_base):
        flat = m.base.reshape(-1)
        if flat.size < 2 or bool(np().isnan(flat).any()):
            raise Unfollowable("an extreme of fewer than two numbers, or of a nan")
        top = int(np().argmax(flat) if largest else np().argmin(flat))
        rest = np().delete(flat, top)
        runner_up = rest.max() if largest else rest.min()
        without = np().where(m.index == top, runner_up, out_base)
        return np().maximum(without, m.values) if largest else np().minimum(without, m.values)
    return reduce


WHOLE_REDUCTIONS = {"sum": _sum, "max": _extreme(True), "min": _extreme(False)}


def _objective_rows(out, out_base, rows, output_seed):
    """The objective per row of a pass's output."""
    base = objective_value(out_base, output_seed)
    if out is None:                          # the output does not depend on this input
        return np().full(rows, base)
    if out.__class__ is OneHot:
        if not all_finite([base]):            # as in _sum: the moved elements cannot be taken back out
            raise Unfollowable("an objective that is not finite at x")
        flat = np().asarray(out.base).reshape(-1)
        change = out.values.astype(np().float64) - flat[out.index].astype(np().float64)
        if output_seed is not None:
            weights = np().broadcast_to(np().asarray(output_seed, dtype=np().float64), flat.shape)
            change = change * weights[out.index]
        return base + change
    return objective_rows(np().asarray(out.stack, dtype=np().float64).reshape(rows, -1), output_seed,
                          np().shape(out.stack)[1:])


def close(a, b, rel=1e-12) -> bool:
    """Two runs' numbers agree: equal, or finite and within rel of the larger."""
    return a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b)))


def _agrees_with_single_runs(objective, inputs, names, steps, per_entry, f0) -> bool:
    """The first and the last perturbed point against one run each. Their changes from f0 must
    agree to 1e-6 of the change plus the rounding of f: a sum kept incrementally rounds apart
    from a full one by eps |f|, a lifting gone wrong is off by the change itself."""
    for e, o, name, k in checked_points(inputs, names):
        saved = objective.count
        single = objective(moved_point(inputs, name, k, OFFSETS[o] * steps[e]))
        objective.count = saved
        if not agrees(float(per_entry[e, o]), single, f0, 1e-6):
            return False
    return True


def checked_points(inputs, names) -> list:
    """(entry, offset, name, flat index) of the perturbed points a one-hot result is checked at
    against a run of its own: each input's pass is lifted apart, so each is checked, at its
    first entry's first offset and its last entry's last."""
    points, start = [], 0
    for name in names:
        count = size(inputs[name])
        if count:
            points.append((start, 0, name, 0))
            if count > 1:
                points.append((start + count - 1, len(OFFSETS) - 1, name, count - 1))
        start += count
    return points


def agrees(got, want, base, rel) -> bool:
    """got and want, both moved from base: equal, both nan, or within rel of the change plus the
    rounding of the values (64 eps of the largest)."""
    if got == want or (got != got and want != want):
        return True
    if not (math.isfinite(got) and math.isfinite(want)):
        return False
    return abs(got - want) <= rel * abs(want - base) + 64 * 2.0 ** -52 * max(abs(got), abs(want), abs(base))


def objective_value(a, output_seed) -> float:
    """The number the check differentiates of one output (a host array, or a float): the output
    itself, its sum, or vᵀ out for an output seed v."""
    if a.__class__ is float:
        return a
    a = np().asarray(a)
    if a.ndim == 0:
        return float(a)
    return float(objective_rows(a.astype(np().float64).reshape(1, -1), output_seed, a.shape)[0])


def objective_rows(table, output_seed, point_shape):
    """The objective of each row of `table` (float64, a point's output flattened per row): its sum,
    or vᵀ out for an output seed v (broadcast to `point_shape`), as (table * v).sum(axis=1), so a
    row of a batched pass and a point run by itself round alike (a matrix product and a dot of
    one row do not)."""
    if output_seed is None:
        return table.sum(axis=1)
    v = np().broadcast_to(np().asarray(output_seed, dtype=np().float64), point_shape)
    return (table * v.reshape(1, -1)).sum(axis=1)


def moved_point(inputs: dict, name, k, shift) -> dict:
    """`inputs` with flat entry k of `name` moved by `shift` (x_k + shift in float64, as the
    perturbed point's own run takes it); the other inputs are shared, not copied."""
    point = dict(inputs)
    moved = np().array(inputs[name], dtype=np().float64, copy=True)
    flat = moved.reshape(-1)
    flat[k] = float(flat[k]) + shift
    point[name] = moved if np().ndim(inputs[name]) else float(flat[k])
    return point
