"""Numerical checks of Jacobians and Hessians, on check.py's machinery (steps, Richardson, verdicts).

A Jacobian check differences the target's output; a Hessian check differences the AD gradient
(one gradient run at each of x ± h e_j, x ± 2h e_j), so each Hessian entry is checked against an
independent first-order difference instead of a second-order one. Both are "the Jacobian of a
vector function" to this module: `vector_full_check` does the work, the two callers only lay out
the claimed matrix and its labels. Returns reports; never prints.

Fast mode is check.py's `fast_check` on a scalar: vᵀf(x) for a Jacobian (claimed: vᵀJ), uᵀ∇f(x)
for a Hessian (claimed: uᵀH), with v, u seeded random weights over the outputs.
"""
from __future__ import annotations

import math

from ..core.backend import np, to_device, to_host
from ..core.complexes import is_complex
from ..core.sequences import side_by_side
from .differences import Objective, Perturber, fast_check, power_of_two_steps
from .gradient import random_seed
from .one_hot_outputs import OneHotOutputs
from .rules import check_rules, mark_trusted
from .report import CheckReport, complex_labels, entry_labels, real_entries, tolerance_for
from .stacked_points import StackedGradients, StackedOutputs
from .verdict_arrays import judge_all, largest_finite_of, noise_floor_of
from .verdicts import branch_reason, convention_text, conventions_of, detached_text, mark_detached
from ..diff.complex_derivatives import holomorphic_blocks
from ..diff.function import Function, ReplayRunner
from ..lang.values import set_dtype


# ---- vector-valued functions of the inputs ------------------------------------------------------

class GradientRunner:
    """The AD gradient as a function of the inputs: its entries over `wrt`, flattened in order.
    `signature` is the last run's control-flow signature (the gradient follows the recorded path)."""

    def __init__(self, target, wrt, dtype_name, limits):
        self.target, self.wrt, self.dtype_name, self.limits = target, list(wrt), dtype_name, limits
        self.signature = ()
        self.function = Function(target=target)      # the perturbed gradients replay one tape

    def __call__(self, values):
        r = self.function.grad_result(values, self.wrt, None, dtype_name=self.dtype_name, limits=self.limits)
        self.signature = tuple(r.signature)
        if not self.wrt:
            return np().zeros(0)
        return np().concatenate([real_entries(to_host(r.gradient[w])) for w in self.wrt])


class RealParts:
    """A runner whose complex output reads as its real entries: an array of the output's shape
    + (2,), (re, im) last; a real output as it is (fast mode's vᵀf of a complex f)."""

    def __init__(self, runner):
        self.runner = runner

    @property
    def signature(self):
        return self.runner.signature

    def __call__(self, values):
        out = self.runner(values)
        if not is_complex(out):
            return out
        a = np().asarray(to_host(out))
        return np().stack([a.real, a.imag], axis=-1)


def _flat(runner, values, size):
    """The runner's output as float64 entries, or all-nan when the run fails or changes shape."""
    try:
        out = runner({k: to_device(v) for k, v in values.items()})       # each point moves once
    except Exception:              # a perturbed run that fails is no evidence: non-finite rows
        return [math.nan] * size
    a = real_entries(to_host(out))
    return a.tolist() if a.size == size else [math.nan] * size


# ---- full mode ---------------------------------------------------------------------------------

def vector_full_check(runner, inputs: dict, names, claimed, out_labels, tol, conventions=(),
                      label=None, batch=None, real_axis=False) -> tuple:
    """claimed[i][j] (entry i of the output, entry j of the inputs `names`, flattened in order)
    against central differences of the runner's output i along input entry j, with Richardson
    extrapolation. `batch(inputs, names, steps, f0, n_out)`, if given, evaluates every perturbed
    point at once, and x again (stacked_points.py), or returns None (then each point is one run).
    A complex input's entries are its elements' real and imaginary parts (labels_of), or with
    `real_axis` its real parts alone (labelled as the elements: a holomorphic derivative's check).
    Returns (rows as a list of lists [i][j], evaluations)."""
    p = Perturber(inputs)
    n_out = len(out_labels)
    f0 = _flat(runner, p.values, n_out)
    sig0 = runner.signature
    convention = convention_text(conventions)
    plan = []                                 # per input entry j: (name, k, label, x, h)
    for name in names:
        xs = p.entries(name)
        ks = range(len(xs))
        labels = labels_of(name, inputs[name])
        if real_axis and is_complex(inputs[name]):
            ks, labels = ks[::2], labels_of(name, np().real(inputs[name]))
        for k, in_label, h in zip(ks, labels, power_of_two_steps([xs[k] for k in ks], tol.step)):
            plan.append((name, k, in_label, xs[k], h))
    stacked = batch(inputs, names, [e[4] for e in plan], f0, n_out) if batch is not None and plan else None
    if stacked is not None:
        f0, stacked = stacked
    columns = []                              # per input entry j: (label, h, [f values per step], reason)
    for j, (name, k, in_label, x, h) in enumerate(plan):
        if stacked is not None:               # one path for every point: no branch crossed
            columns.append((in_label, h, stacked[j], ""))
        else:
            columns.append((in_label, h) + _perturbed_runs(runner, p, name, k, x, h, n_out, sig0, in_label))
    evaluations = 1 + 4 * len(plan)
    return _judged(columns, claimed, f0, out_labels, tol, convention, label or _pair_label), evaluations


def _judged(columns, claimed, f0, out_labels, tol, convention, label) -> list:
    """The verdicts of every output entry i along every input entry j, all at once
    (verdict_arrays.judge_all: judge's rows, numbers and messages); each output's noise floor
    and scale are measured across the input entries."""
    n_in, n_out = len(columns), len(out_labels)
    if not columns:
        return [[] for _ in out_labels]
    table = np().asarray([fs for _, _, fs, _ in columns], dtype=np().float64).reshape(n_in, 4, n_out)
    fp1, fm1, fp2, fm2 = (np().ascontiguousarray(table[:, o, :].T) for o in range(4))     # (n_out, n_in)
    claimed = np().asarray(claimed, dtype=np().float64).reshape(n_out, n_in)
    reasons = [reason for _, _, _, reason in columns]
    in_labels = [in_label for in_label, _, _, _ in columns]
    f0 = np().asarray(f0, dtype=np().float64).reshape(n_out, 1)
    floors = [noise_floor_of(f0[i, 0], fp1[i], fm1[i], fp2[i], fm2[i], reasons) for i in range(n_out)]
    scales = [largest_finite_of(claimed[i]) for i in range(n_out)]
    ones = np().ones((1, n_in))
    flat = judge_all([label(out_label, in_label) for out_label in out_labels for in_label in in_labels],
                     claimed.ravel(), (f0 * ones).ravel(), fp1.ravel(), fm1.ravel(), fp2.ravel(), fm2.ravel(),
                     [h for _, h, _, _ in columns] * n_out, tol, reasons * n_out, convention,
                     noise_floor=(np().asarray(floors).reshape(n_out, 1) * ones).ravel(),
                     of_scale=(np().asarray(scales).reshape(n_out, 1) * ones).ravel())
    rows = []
    for i, out_label in enumerate(out_labels):
        row = flat[i * n_in:(i + 1) * n_in]
        for e, in_label in zip(row, in_labels):
            e.index = (out_label, in_label)
        rows.append(row)
    return rows


def _perturbed_runs(runner, p, name, k, x, h, n_out, sig0, in_label) -> tuple:
    """(f at x ± h, x ± 2h along entry k of `name`, the first branch a perturbation crossed)."""
    values = p.values
    fs, reason = [], ""
    for direction, step in (("+h", h), ("-h", -h), ("+2h", 2 * h), ("-2h", -2 * h)):
        p.set(name, k, x + step)
        fs.append(_flat(runner, values, n_out))
        if not reason and runner.signature != sig0:
            reason = branch_reason(sig0, runner.signature, in_label, direction)
    p.set(name, k, x)
    return fs, reason


def _pair_label(out_label, in_label):
    return f"∂{out_label}/∂{in_label}"


def labels_of(name, x) -> list:
    """The labels of x's real entries, in the Perturber's order: a complex element's real part,
    then its imaginary part (complex_labels)."""
    shape = np().shape(x) if hasattr(x, "shape") else ()
    return complex_labels(name, shape) if is_complex(x) else entry_labels(name, shape)


def _entry_labels(inputs, names):
    return [lab for w in names for lab in labels_of(w, inputs[w])]


def _parts(x) -> tuple:
    return (2,) if is_complex(x) else ()


def real_matrix(block, out, x):
    """A block of the real layout (complex_derivatives.py: out.shape + x.shape, then (re, im) of
    the output where `out` is complex, then (re, im) of x where x is complex) as a matrix
    (real entries of the output, real entries of x), each side in real_entries' order."""
    out_shape, in_shape = np().shape(out), np().shape(x)
    a = np().asarray(block, dtype=np().float64).reshape(out_shape + in_shape + _parts(out) + _parts(x))
    if is_complex(out):
        a = np().moveaxis(a, len(out_shape) + len(in_shape), len(out_shape))
    return a.reshape(len(labels_of("f", out)), len(labels_of("x", x)))


def real_blocks_of(result, w):
    """The Jacobian of input w in the real layout; a --holomorphic one (f'(z) = df/dx) as its
    real blocks [[Re f', -Im f'], [Im f', Re f']] (f' alone, as (re, im), for a real input)."""
    j = result.jacobian[w]
    if not getattr(result, "holomorphic", False) or not is_complex(j):
        return j
    x = result.inputs[w]
    return holomorphic_blocks(j, np().shape(result.value), np().shape(x), is_complex(x))


def _as_claimed(total, x):
    """A claimed directional gradient over x's real entries as fast_check reads it: a complex
    input's as ∂/∂x + i ∂/∂y per element."""
    shape = np().shape(x) if hasattr(x, "shape") else ()
    if is_complex(x):
        pairs = np().asarray(total, dtype=np().float64).reshape(shape + (2,))
        g = pairs[..., 0] + 1j * pairs[..., 1]
        return g if shape else complex(g)
    return np().asarray(total).reshape(shape) if shape else float(np().asarray(total).reshape(-1)[0])


# ---- Jacobians ---------------------------------------------------------------------------------

def check_jacobian(result, target, mode="full", seed=None, dtype="float64", limits=None, rtol=None,
                   atol=None, step=None, trust_rules=False) -> CheckReport:
    """Check a JacobianResult (engine/forward.py) against finite differences of the target. Where
    a value is complex, over real entries: the real and imaginary parts each perturbed on their
    own and each output's parts differenced, against the real layout (real_matrix)."""
    _mode(mode)
    set_dtype(dtype)
    tol = tolerance_for(dtype, rtol, atol, step)
    names = list(result.jacobian)
    conventions = conventions_of(result.kinks)
    out_labels = labels_of("f", result.value)
    report = CheckReport(mode=mode, claimed="AD", reference="FD", dtype=dtype, tolerance=tol, value=result.value,
                         conventions=conventions, kind="jacobian", detached=detached_text(result.detached),
                         rules=check_rules(result.rules, tol, trust_rules, getattr(target, "filename", None)))
    runner = ReplayRunner(target, limits)
    complex_run = is_complex(result.value) or any(is_complex(result.inputs[w]) for w in names)
    blocks = {w: real_matrix(real_blocks_of(result, w), result.value, result.inputs[w]) for w in names}

    def full():
        claimed = side_by_side([blocks[w] for w in names], len(out_labels)).tolist()
        fallbacks = runner.own_fallbacks        # the batched passes' handovers: counted with the runner's
        batch = None if complex_run else OneHotOutputs(target, limits, StackedOutputs(target, limits, fallbacks), fallbacks)
        rows, n = vector_full_check(runner, result.inputs, names, claimed, out_labels, tol, conventions, batch=batch)
        flat = [e for row in rows for e in row]
        mark_detached(flat, report.detached)
        return flat, n

    if mode == "full" or not _entry_labels(result.inputs, names):    # nothing to project: full is empty
        return _full_only(report, full)
    report.seed = random_seed() if seed is None else int(seed)
    out_shape = np().shape(result.value) + _parts(result.value)
    v = np().random.default_rng([report.seed, 1]).standard_normal(out_shape) if out_shape else None
    claimed = {w: _as_claimed(blocks[w][0] if v is None else v.reshape(-1) @ blocks[w], result.inputs[w])
               for w in names}
    return _projected(report, Objective(RealParts(runner), v), result.inputs, claimed, tol, names,
                      "vᵀJd" if out_shape else "Jd", full, dtype, result.value, conventions)


def _projected(report, objective, inputs, claimed, tol, names, label, full, dtype, value, conventions):
    """Fast mode's one projection; on a failure, the full check that shows the wrong entries."""
    report.projection, _ = fast_check(objective, inputs, claimed, tol, report.seed, names)
    report.projection.label = label
    mark_detached([report.projection], report.detached)
    report.evaluations = objective.count
    if report.projection.failed:
        rows, n = full()
        report.full = CheckReport(mode="full", claimed="AD", reference="FD", dtype=dtype, tolerance=tol, value=value,
                                  entries=rows, conventions=conventions)
        report.evaluations += n
    mark_trusted(report)
    return report


# ---- Hessians ----------------------------------------------------------------------------------

def _hessian_label(out_label, in_label):
    """Row `out_label` is the gradient entry ∂f/∂b; column `in_label` the input a it moves along."""
    return f"∂²f/∂{in_label}∂{out_label}"


def check_hessian(result, target, mode="full", seed=None, dtype="float64", limits=None, rtol=None,
                  atol=None, step=None, trust_rules=False) -> CheckReport:
    """Check a HessianResult (engine/higher.py) against central differences of the AD gradient:
    entry H[a][b][k, l] = ∂(∂f/∂b_l)/∂a_k."""
    _mode(mode)
    set_dtype(dtype)
    tol = tolerance_for(dtype, rtol, atol, step)
    names = list(result.hessian)
    inputs = result.inputs
    conventions = conventions_of(result.kinks)
    report = CheckReport(mode=mode, claimed="AD", reference="FD", dtype=dtype, tolerance=tol, value=result.value,
                         conventions=conventions, kind="hessian", detached=detached_text(result.detached),
                         rules=check_rules(result.rules, tol, trust_rules, getattr(target, "filename", None)))
    runner = GradientRunner(target, names, dtype, limits)
    labels = _entry_labels(inputs, names)
    sizes = [len(_entry_labels(inputs, [w])) for w in names]
    complex_run = any(is_complex(inputs[w]) for w in names)
    matrices = {a: {b: real_matrix(result.hessian[a][b], inputs[a], inputs[b]) for b in names} for a in names}

    def full():
        # claimed[i][j]: gradient entry i (of b) along input entry j (of a), i.e. H[a][b][k, l]
        claimed = []
        for b, nb in zip(names, sizes):
            block_rows = [[] for _ in range(nb)]
            for a, na in zip(names, sizes):
                h = matrices[a][b]
                for l in range(nb):
                    block_rows[l].extend(h[:, l].tolist())
            claimed.extend(block_rows)
        rows, n = vector_full_check(runner, inputs, names, claimed, labels, tol, conventions, _hessian_label,
                                    batch=None if complex_run else StackedGradients(target, names, limits,
                                                                                     runner.function.own_fallbacks))
        # one row per entry of H in its own order: (a_k, b_l) with a_k the perturbed input
        ordered = [rows[i][j] for j in range(len(labels)) for i in range(len(labels))]
        for e in ordered:
            e.index = (e.index[1], e.index[0])
        mark_detached(ordered, report.detached)
        return ordered, n

    if mode == "full" or not labels:      # nothing to project: the full check is empty
        return _full_only(report, full)
    report.seed = random_seed() if seed is None else int(seed)
    u = np().random.default_rng([report.seed, 2]).standard_normal(len(labels))
    parts = np().split(u, np().cumsum(sizes)[:-1]) if names else []
    u_by = {b: part for b, part in zip(names, parts)}
    claimed = {}
    for a, na in zip(names, sizes):
        total = np().zeros(na)
        for b, nb in zip(names, sizes):
            total += matrices[a][b] @ u_by[b]
        claimed[a] = _as_claimed(total, inputs[a])
    return _projected(report, Objective(runner, u), inputs, claimed, tol, names, "uᵀHd", full, dtype,
                      result.value, conventions)


def _mode(mode):
    if mode not in ("full", "fast"):
        raise ValueError(f"mode must be 'full' or 'fast', not {mode!r}")


__all__ = ["check_jacobian", "check_hessian", "vector_full_check", "GradientRunner"]


def _full_only(report, full):
    """The report of the full check alone (`full`: its rows and evaluations)."""
    report.mode = "full"
    report.entries, report.evaluations = full()
    mark_trusted(report)
    return report
