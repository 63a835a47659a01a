"""Finite differences: the target as a scalar objective, power-of-two steps, and the full
(every entry, Richardson-extrapolated central differences) and fast (one random projection)
comparisons that feed the verdicts."""
from __future__ import annotations

import math

from ..core.backend import np, on_device, to_device, to_host
from ..core.complexes import is_complex
from ..diff.batched_replay import record_for_batches
from ..diff.fallbacks import Unsupported, count
from .one_hot import OFFSETS, objective_value, one_hot_differences
from .report import Tolerance, as_float_array, complex_labels, entry_labels, real_entries
from .verdict_arrays import judge_all, largest_finite_of, noise_floor_of
from .stacked_points import NOT_FLOATS, StackedObjective, all_float
from .verdicts import branch_reason, convention_text, judge


class Objective:
    """The target run as a scalar function of its inputs: the output itself, the sum of an array
    output (the gradient's convention), or vᵀ output for a given v. Counts its evaluations."""

    def __init__(self, runner, output_seed=None):
        self.runner = runner
        self.output_seed = output_seed
        self.count = 0
        self.shape = None
        self.batched = False      # whether the last full check ran its perturbed points in batches
        self.one_hot = False      # whether they ran as one-hot stacks of a replayed trace (one_hot.py)
        self.passes = 0           # the batched replay's passes over stacked points (stacked_points.py)
        # {reason: count}: the batched ways handing the points to another (diff/fallbacks.py)
        self.fallbacks = {}

    def __call__(self, values):
        self.count += 1
        try:
            out = self.runner({k: to_device(v) for k, v in values.items()})    # each point moves once
        except Exception as e:     # a perturbed run that fails is no evidence: non-finite, with the reason
            self.error = e
            return math.nan
        if out.__class__ is float:
            return out
        a = np().asarray(to_host(out))
        if self.shape is None:
            self.shape = a.shape
        elif a.shape != self.shape:
            self.error = ValueError(f"the output's shape changed from {self.shape} to {a.shape}")
            return math.nan
        return objective_value(a, self.output_seed)

    @property
    def signature(self):
        return self.runner.signature


def power_of_two_step(x: float, rel: float) -> float:
    """A power of two near rel * max(|x|, 1): x ± h and x ± 2h are then exact in binary floats."""
    scale = rel * max(abs(x), 1.0)
    return 2.0 ** round(math.log2(scale)) if math.isfinite(scale) else rel


def power_of_two_steps(xs, rel: float) -> list:
    """power_of_two_step of every x, with numpy: the same numbers. Where numpy's log2 might round
    to the other side of a half (within 1e-6 of one), and where the scale is not finite, the
    one-value function decides."""
    xp = np()
    a = xp.asarray(xs, dtype=xp.float64)
    with xp.errstate(all="ignore"):
        scale = rel * xp.maximum(xp.abs(a), 1.0)
        logs = xp.log2(scale)
        exponents = xp.round(logs)
        doubtful = ~xp.isfinite(logs) | (xp.abs(xp.abs(logs - exponents) - 0.5) < 1e-6)
    steps = xp.ldexp(1.0, xp.where(doubtful, 0, exponents).astype(xp.int64))
    for i in xp.flatnonzero(doubtful).tolist():
        steps[i] = power_of_two_step(float(a[i]), rel)
    return steps.tolist()


class Perturber:
    """Sets one entry of one input to a value and back, without copying the other inputs. A
    complex input's entries are its numbers' real and imaginary parts, each perturbed on its own
    (real_entries): the gradient's entries ∂f/∂x and ∂f/∂y of z = x + iy, in that order."""

    def __init__(self, inputs: dict):
        self.values = dict(inputs)
        self.arrays = {}
        for name, v in inputs.items():
            if hasattr(v, "shape") and v.shape != ():
                own = np().array(v, copy=True)     # ours to change in place
                self.values[name] = own
                self.arrays[name] = real_entries(own) if is_complex(own) else own.reshape(-1)

    def entries(self, name):
        flat = self.arrays.get(name)
        if flat is None:
            return real_entries(self.values[name]).tolist()
        return [float(x) for x in flat]

    def set(self, name, k, x):
        flat = self.arrays.get(name)
        if flat is None:
            v = self.values[name]
            if is_complex(v):
                parts = real_entries(v).copy()
                parts[k] = x
                self.values[name] = v.dtype.type(complex(parts[0], parts[1]))
            else:
                self.values[name] = x if v.__class__ is float else v.dtype.type(x)
        else:
            flat[k] = x


BATCH_MIN_ENTRIES = 64        # below this the loop is as fast as batching
ONE_HOT = True                # False: the batched replay only (benchmarks time both ways)


def full_check(objective: Objective, inputs: dict, claimed: dict, tol: Tolerance, names=None,
               conventions=(), batch=True) -> tuple:
    """Every entry of `claimed` against central differences with Richardson extrapolation.
    Returns (rows, f0). The perturbed runs are batched when the program allows (perturbed_objectives)."""
    p = Perturber(inputs)
    f0 = objective(p.values)
    sig0 = objective.signature
    convention = convention_text(conventions)
    names = names or list(claimed)
    plan = []                    # (label, claimed entry, name, k, x, h)
    for name in names:
        g = claimed[name]
        shape = np().shape(inputs[name]) if hasattr(inputs[name], "shape") else ()
        if is_complex(inputs[name]):               # ∂f/∂x + i ∂f/∂y: each part against its own difference
            batch = False
            gflat = real_entries(np().asarray(g, dtype=np().complex128)).tolist()
            labels = complex_labels(name, shape)
        else:
            gflat = [float(g)] if not hasattr(g, "shape") or g.shape == () else as_float_array(g).tolist()
            labels = entry_labels(name, shape)
        xs = p.entries(name)
        plan.extend(zip(labels, gflat, [name] * len(xs), range(len(xs)), xs, power_of_two_steps(xs, tol.step)))
    values_per_entry = None
    if batch and len(plan) >= BATCH_MIN_ENTRIES:
        values_per_entry, f_at_x, crossed = perturbed_objectives(objective, inputs, names, [e[5] for e in plan], f0)
    if values_per_entry is not None:      # the recorded path, but at the points whose path changed
        reasons = None
        if crossed:
            saved = objective.count                  # (counted once: the batch counted every point)
            reasons = _run_points(p, objective, plan, values_per_entry, crossed, sig0)
            objective.count = saved
        return _verdicts(plan, values_per_entry, reasons, f_at_x, tol, convention), f0
    table = [[None] * len(OFFSETS) for _ in plan]
    reasons = _run_points(p, objective, plan, table, [(e, o) for e in range(len(plan)) for o in range(len(OFFSETS))],
                          sig0)
    return _verdicts(plan, table, reasons, f0, tol, convention), f0


DIRECTIONS = ("+h", "-h", "+2h", "-2h")       # OFFSETS' names


def _run_points(p, objective, plan, table, points, sig0) -> list:
    """The perturbed points (`points`: (entry, offset) pairs, in order), each a run of its own
    into `table`, and the branch reason per entry: its first direction whose run's control flow
    differs from x's (every point of a check the loop makes; those of a batched replay whose path
    changed)."""
    reasons = [""] * len(plan)
    for e, o in points:
        label, _, name, k, x, h = plan[e]
        p.set(name, k, x + OFFSETS[o] * h)
        table[e][o] = objective(p.values)
        if not reasons[e] and objective.signature != sig0:
            reasons[e] = branch_reason(sig0, objective.signature, label, DIRECTIONS[o])
        p.set(name, k, x)
    return reasons


def perturbed_objectives(objective: Objective, inputs: dict, names, steps, f0) -> tuple:
    """(per input entry of `names`, in order, the objective at x + h, x - h, x + 2h, x - 2h for its
    step h; the objective at x the differences are taken from; the (entry, offset) of the points
    whose path changed, whose numbers are nan) by one trace of the target recorded at x and
    replayed on stacks of the perturbed points: one-hot stacks where they follow the trace
    (one_hot.py; a trace without guards), else the batched replay's passes
    (stacked_points.StackedObjective, which the Jacobian checks' passes are; each guard checked
    at each point); (None, f0, []) where neither may (the handover counted by its reason in
    `objective.fallbacks`): each point is then a run of its own. The batched replay's objective
    at x comes from its own first pass, so that every difference is between values rounded alike
    (as a Jacobian check's)."""
    runner = objective.runner
    target, limits = runner.target, runner.interp.limits
    objective.one_hot = objective.batched = False
    if not all_float(inputs, names):
        count(objective.fallbacks, Unsupported(NOT_FLOATS))
        return None, f0, []
    found, crossed = None, []
    with on_device("cpu"):          # the checks' points are host arrays
        trace = record_for_batches(target, inputs, limits, objective.fallbacks, guarded=True)
        if trace is None:
            return None, f0, []
        if ONE_HOT and trace.guards:
            count(objective.fallbacks, Unsupported(GUARDED_ONE_HOT))
        elif ONE_HOT:
            found = one_hot_differences(target, limits, objective, inputs, names, steps, f0, trace)
        objective.one_hot = found is not None
        if found is None:
            stacked = StackedObjective(target, objective.output_seed, limits, objective.fallbacks)
            out = stacked(inputs, names, steps, [f0], 1, trace)
            objective.passes += stacked.passes
            if out is not None:
                f0, crossed = out[0][0], stacked.crossed
                found = [[row[0] for row in column] for column in out[1]]
                objective.count += len(OFFSETS) * len(found) + 1
    objective.batched = found is not None
    return found, f0, crossed


# why a trace with guards skips the one-hot stacks
GUARDED_ONE_HOT = "a trace with guards (one-hot stacks check none: the batched replay checks each point's)"


def _verdicts(plan, values, reasons, f0, tol, convention) -> list:
    """judge for every entry, at once (verdict_arrays.py): the same rows, numbers and messages."""
    if not plan:
        return []
    table = np().asarray(values, dtype=np().float64).reshape(len(plan), 4)
    claimed = [e[1] for e in plan]
    fp1, fm1, fp2, fm2 = table.T
    floor = noise_floor_of(f0, fp1, fm1, fp2, fm2, reasons)
    scale = largest_finite_of(claimed)
    return judge_all([e[0] for e in plan], claimed, f0, fp1, fm1, fp2, fm2, [e[5] for e in plan], tol, reasons,
                     convention, noise_floor=floor, of_scale=scale, relative_atol=True)


def fast_check(objective: Objective, inputs: dict, claimed: dict, tol: Tolerance, seed: int,
               names=None) -> tuple:
    """claimedᵀd against the directional central difference along d, a seeded random direction
    with entries ±h_i (Rademacher signs times each entry's power-of-two step). Returns (row, f0)."""
    rng = np().random.default_rng(seed)
    names = names or list(claimed)
    base, moved, proj, proj_l2, d_l2 = dict(inputs), {}, 0.0, 0.0, 0.0
    for name in names:
        x = inputs[name]
        if is_complex(x):
            xf, d, gd = _complex_direction(x, claimed[name], tol.step, rng)
            proj += gd
            proj_l2 += gd * gd
            d_l2 += float((abs(d) ** 2).sum())
        elif hasattr(x, "shape") and x.shape != ():
            xf = np().asarray(x, dtype=np().float64)
            scale = tol.step * np().maximum(np().abs(xf), 1.0)
            h = np().exp2(np().round(np().log2(scale)))
            d = h * (rng.integers(0, 2, size=xf.shape) * 2.0 - 1.0)
            g = np().asarray(claimed[name], dtype=np().float64)
            gd = g * d
            proj += float(gd.sum())
            proj_l2 += float((gd * gd).sum())
            d_l2 += float((d * d).sum())
        else:
            xf = float(x)
            d = power_of_two_step(xf, tol.step) * (1.0 if rng.integers(0, 2) else -1.0)
            gd = float(claimed[name]) * d
            proj += gd
            proj_l2 += gd * gd
            d_l2 += d * d
        moved[name] = (x, xf, d)
    f0 = objective(base)
    sig0 = objective.signature
    fs, reason = [], ""
    for direction, t in (("+h", 1.0), ("-h", -1.0), ("+2h", 2.0), ("-2h", -2.0)):
        point = dict(base)
        for name, (x, xf, d) in moved.items():
            v = xf + t * d
            point[name] = v if x.__class__ is float else np().asarray(v, dtype=np().asarray(x).dtype)[()]
        fs.append(objective(point))
        if not reason and objective.signature != sig0:
            reason = branch_reason(sig0, objective.signature, "the direction d", direction.replace("h", "d"))
    # The tolerance of a projection: each entry may be off by atol + rtol |g_i|, and such errors add
    # up like random ones (in quadrature), so the bound is atol |d| + rtol |g∘d| in the 2-norm.
    proj_tol = Tolerance(tol.eps, tol.step, 0.0, tol.atol * math.sqrt(d_l2) + tol.rtol * math.sqrt(proj_l2))
    row = judge("dᵀ∇f", proj, f0, fs[0], fs[1], fs[2], fs[3], 1.0, proj_tol, reason)
    row.step = None            # the steps are per entry (d), not one number
    return row, f0


def _complex_direction(x, g, rel, rng):
    """(x as complex128, a random direction d = ±h ± ih per entry, claimedᵀd): the derivative
    along d of f at z = x + iy is ∂f/∂x Re d + ∂f/∂y Im d = Re(conj(g) d) for the reported g."""
    xf = np().asarray(x, dtype=np().complex128)
    parts = real_entries(xf)
    steps = np().asarray(power_of_two_steps(parts, rel)).reshape(xf.shape + (2,))
    signs = rng.integers(0, 2, size=xf.shape + (2,)) * 2.0 - 1.0
    d = steps[..., 0] * signs[..., 0] + 1j * steps[..., 1] * signs[..., 1]
    gd = float(np().real(np().conj(np().asarray(g, dtype=np().complex128)) * d).sum())
    return xf, d, gd
