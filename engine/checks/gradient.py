"""Numerical checks of gradients: finite differences with an error estimate, verdicts with reasons.

Returns reports; never prints. The method, per entry of the gradient:

* central differences at steps h and 2h, where h is a power of two near `step * max(|x|, 1)`
  (so x ± h and x ± 2h are exact in the working dtype), combined by Richardson extrapolation:
  FD = (4 D(h) - D(2h)) / 3;
* an error estimate for FD: |D(h) - D(2h)| / 3 (the truncation error of D(h), a conservative
  bound for the extrapolated value) plus the rounding error 3 eps max|f| / h;
* a verdict: `non-finite` (a value is nan or inf), `branch` (a perturbed run took another path
  through the program than the recorded run, so FD is no evidence either way), `kink` (the
  one-sided slopes differ at steps h and 2h alike: not differentiable here), `fail`
  (|AD - FD| > tolerance + error estimate), `inconclusive` (they agree, but the error estimate is
  over INCONCLUSIVE_RATIO times the tolerance, so the agreement proves little) or `pass`.
  Only `fail` and `non-finite` fail a check.

`fast` mode compares one random projection (the gradient dotted with a seeded random direction of
±h steps) with a directional central difference: five evaluations whatever the number of inputs.
On a failure it recomputes in full, so the report names the wrong entries.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.backend import np
from ..diff import reverse
from ..lang.target import bind_inputs, load, Runner, Target

PASS, FAIL, BRANCH, KINK, NONFINITE = "pass", "fail", "branch", "kink", "non-finite"
INCONCLUSIVE = "inconclusive"
FAILING = frozenset({FAIL, NONFINITE})
WARNING = frozenset({INCONCLUSIVE, KINK, BRANCH})
_SEVERITY = {PASS: 0, INCONCLUSIVE: 1, KINK: 2, BRANCH: 3, FAIL: 4, NONFINITE: 5}

# An agreement is evidence only when FD is about as precise as the tolerance asks. When the FD error
# estimate exceeds the tolerance this many times (a step too large for the curvature, or f so large
# that its rounding swamps the differences), AD could be wrong by up to the estimate and still
# "agree": the verdict is `inconclusive` (a warning), not `pass`.
INCONCLUSIVE_RATIO = 100.0


@dataclass(frozen=True)
class Tolerance:
    """The numbers a check uses for one dtype. `step` is the relative FD step (about eps^(1/3),
    the optimum for central differences); `rtol` and `atol` bound what AD may differ from the
    reference beyond the reference's own error estimate."""
    eps: float
    step: float
    rtol: float
    atol: float


# float64: rtol 1e-6, atol 1e-9, a thousand times tighter than torch.autograd.gradcheck's
# (1e-3, 1e-5): the FD error estimate, not a blanket tolerance, absorbs the FD error.
# float32: FD in float32 is good to about eps^(2/3) ~ 2e-5 relative; rtol 1e-4 leaves room for AD's
# own float32 rounding, and the error estimate (rounding term with eps = 2^-23) does the rest.
TOLERANCES = {
    "float64": Tolerance(eps=2.0 ** -52, step=2.0 ** -17, rtol=1e-6, atol=1e-9),
    "float32": Tolerance(eps=2.0 ** -23, step=2.0 ** -8, rtol=1e-4, atol=1e-6),
}


def tolerance_for(dtype_name: str, rtol=None, atol=None, step=None, profile=None) -> Tolerance:
    base = TOLERANCES[profile or dtype_name]
    return Tolerance(base.eps, base.step if step is None else float(step),
                     base.rtol if rtol is None else float(rtol), base.atol if atol is None else float(atol))


@dataclass
class EntryCheck:
    """One entry of the gradient: the claimed value against the reference."""
    label: str                     # "x", "A[1, 2]"
    claimed: float                 # AD (or the hand-derived value being checked)
    reference: float               # FD (or AD, when a hand-derived gradient is checked)
    abs_err: float
    rel_err: float
    error_estimate: float          # of the reference (0 for AD)
    tolerance: float
    verdict: str
    reason: str = ""
    step: float | None = None
    left: float | None = None      # one-sided slopes, for kinks
    right: float | None = None
    index: tuple | None = None     # Jacobian/Hessian checks: (output entry, input entry) or (row, column)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILING


@dataclass
class CheckReport:
    mode: str                      # "full" or "fast"
    claimed: str                   # "AD" or "hand"
    reference: str                 # "FD" or "AD"
    dtype: str
    tolerance: Tolerance
    value: object = None
    entries: list = field(default_factory=list)
    evaluations: int = 0
    seed: int | None = None
    projection: EntryCheck | None = None     # fast mode: the projected comparison
    full: "CheckReport | None" = None        # fast mode: the full recomputation after a failure
    conventions: list = field(default_factory=list)   # kinks the AD run applied a convention at
    batched: bool = False          # the perturbed runs were batched along a leading axis
    kind: str = "gradient"         # what was checked: "gradient", "jacobian" or "hessian" (checkhigher.py)

    @property
    def rows(self) -> list:
        """The rows that explain the outcome: per entry, or the projection (fast mode)."""
        if self.full is not None:
            return self.full.entries
        return self.entries if self.projection is None else [self.projection]

    @property
    def verdict(self) -> str:
        rows = self.rows
        if self.full is not None and self.projection is not None and self.projection.failed:
            rows = rows + [self.projection]
        if not rows:
            return PASS
        return max((r.verdict for r in rows), key=_SEVERITY.__getitem__)

    @property
    def passed(self) -> bool:
        return self.verdict not in FAILING

    def __bool__(self) -> bool:
        return self.passed

    @property
    def failures(self) -> list:
        return [r for r in self.rows if r.failed]

    def worst(self):
        """The row with the largest relative error among failing rows, else among all."""
        rows = self.failures or self.rows
        if not rows:
            return None
        return max(rows, key=lambda r: (_finite_or_inf(r.rel_err), _finite_or_inf(r.abs_err)))


def _finite_or_inf(x):
    return math.inf if x != x else x


# ---- the scalar a gradient is of ----------------------------------------------------------------

class Objective:
    """The target run as a scalar function of its inputs: the output itself, the sum of an array
    output (the gradient's convention), or vᵀ output for a given v. Counts its evaluations."""

    def __init__(self, runner, output_seed=None):
        self.runner = runner
        self.output_seed = output_seed
        self.count = 0
        self.shape = None
        self.batched = False      # whether the last full check ran its perturbed points in batches

    def __call__(self, values):
        self.count += 1
        try:
            out = self.runner(values)
        except Exception as e:     # a perturbed run that fails is no evidence: non-finite, with the reason
            self.error = e
            return math.nan
        if out.__class__ is float:
            return out
        a = np().asarray(out)
        if self.shape is None:
            self.shape = a.shape
        elif a.shape != self.shape:
            self.error = ValueError(f"the output's shape changed from {self.shape} to {a.shape}")
            return math.nan
        if a.ndim == 0:
            return float(a)
        if self.output_seed is None:
            return float(a.sum(dtype=np().float64))
        v = np().broadcast_to(np().asarray(self.output_seed, dtype=np().float64), a.shape)
        return float(np().vdot(v.ravel(), a.astype(np().float64).ravel()))

    @property
    def signature(self):
        return self.runner.signature


def power_of_two_step(x: float, rel: float) -> float:
    """A power of two near rel * max(|x|, 1): x ± h and x ± 2h are then exact in binary floats."""
    scale = rel * max(abs(x), 1.0)
    return 2.0 ** round(math.log2(scale)) if math.isfinite(scale) else rel


# ---- verdicts ----------------------------------------------------------------------------------

def judge(label, claimed, f0, fp1, fm1, fp2, fm2, h, tol: Tolerance, branch_reason="",
          convention="", noise_floor=0.0, of_scale=0.0) -> EntryCheck:
    """Verdict for one entry from the five function values f(x), f(x±h), f(x±2h).
    `noise_floor` is a lower bound for the rounding noise of f (see `noise_floor`). `of_scale` is the
    largest derivative of the same f checked alongside (an exact 0 next to entries of 1000 is
    resolved when FD is good to rtol * 1000, not to atol)."""
    d1 = (fp1 - fm1) / (2 * h)
    d2 = (fp2 - fm2) / (4 * h)
    fd = (4 * d1 - d2) / 3
    fmax = max(abs(f0), abs(fp1), abs(fm1), abs(fp2), abs(fm2))
    noise = max(tol.eps * fmax, noise_floor) / h if math.isfinite(fmax) else math.inf
    estimate = abs(d1 - d2) / 3 + 3 * noise
    scale = max(abs(claimed), abs(fd)) if math.isfinite(claimed) and math.isfinite(fd) else math.inf
    tolerance = tol.atol + tol.rtol * scale
    abs_err = abs(claimed - fd)
    rel_err = abs_err / scale if scale else 0.0
    if abs_err != abs_err:
        rel_err = math.nan
    row = EntryCheck(label, claimed, fd, abs_err, rel_err, estimate, tolerance, PASS, step=h)
    values = (f0, fp1, fm1, fp2, fm2)
    if not math.isfinite(claimed):
        row.verdict, row.reason = NONFINITE, f"the gradient entry is {_fmt(claimed)}"
        return row
    if not all(math.isfinite(v) for v in values):
        where = [w for w, v in zip(("x", "x+h", "x-h", "x+2h", "x-2h"), values) if not math.isfinite(v)]
        row.verdict = NONFINITE
        row.reason = f"f is not finite at {', '.join(where)} (h = {_fmt(h)}): near the edge of its domain?"
        return row
    if branch_reason:
        row.verdict, row.reason = BRANCH, branch_reason
        return row
    kink = _kink(f0, fp1, fm1, fp2, fm2, h, tol, tolerance, noise)
    if kink is not None:
        row.verdict, row.reason, row.left, row.right = KINK, kink[0], kink[1], kink[2]
        if convention:
            row.reason += f"; the engine applied: {convention}"
        return row
    if abs_err > tolerance + estimate:
        row.verdict = FAIL
        row.reason = (f"{_fmt(claimed)} vs {_fmt(fd)}: |error| {_fmt(abs_err)} exceeds the tolerance "
                      f"{_fmt(tolerance)} plus the FD error estimate {_fmt(estimate)}")
    elif estimate > INCONCLUSIVE_RATIO * max(tolerance, tol.atol + tol.rtol * of_scale):
        resolution = max(tolerance, tol.atol + tol.rtol * of_scale)
        row.verdict = INCONCLUSIVE
        row.reason = (f"FD agrees, but its error estimate {_fmt(estimate)} is {estimate / resolution:.3g} times "
                      f"the tolerance {_fmt(resolution)}: an error up to the estimate would pass unseen"
                      + ("; f's rounding dominates (f is large next to its change over the step): "
                         "subtract its constant part" + (" or use float64" if tol.eps > 2.0 ** -52 else "") if 3 * noise > estimate / 2 else
                         "; the truncation error dominates: try a smaller step"))
    return row


def _kink(f0, fp1, fm1, fp2, fm2, h, tol, tolerance, noise):
    """(reason, left slope, right slope) when f is not differentiable at x, else None.

    Smooth f: f(x+h) - f(x-h) doubles from step h to 2h, and the one-sided slopes differ by h f''
    at step h and by 2h f'' at step 2h. At a jump of f the difference across x stays the same at
    both steps; at a kink the slopes differ by the same amount at both steps."""
    right1, left1 = (fp1 - f0) / h, (f0 - fm1) / h
    jump1, jump2 = fp1 - fm1, fp2 - fm2
    if abs(jump1) > 32 * tol.eps * max(abs(f0), abs(fp1), abs(fm1)) and abs(jump2 - jump1) < 0.25 * abs(jump1):
        return (f"f jumps by {_fmt(jump1)} across x (f(x-h) = {_fmt(fm1)}, f(x+h) = {_fmt(fp1)}): "
                "not continuous here", left1, right1)
    right2, left2 = (fp2 - f0) / (2 * h), (f0 - fm2) / (2 * h)
    j1, j2 = right1 - left1, right2 - left2
    if abs(j1) > tolerance + 8 * noise and abs(j2 - j1) < 0.5 * abs(j1):
        return (f"one-sided slopes differ: {_fmt(left1)} (left) vs {_fmt(right1)} (right): "
                "not differentiable here", left1, right1)
    return None


def _fmt(x) -> str:
    if x != x:
        return "nan"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"


def branch_reason(sig0, sig, label, direction) -> str:
    """Which decision a perturbed run changed, in words."""
    for i, (a, b) in enumerate(zip(sig0, sig)):
        if a != b:
            (line, col), before = a
            after = b[1]
            if isinstance(before, bool):
                return (f"{label}{direction} flips the decision at line {line}, column {col} "
                        f"({before} -> {after}): FD crossed a branch")
            return (f"{label}{direction} changes the loop count at line {line}, column {col} "
                    f"({before} -> {after}): FD crossed a branch")
    return f"{label}{direction} takes another path through the program: FD crossed a branch"


def _convention_text(conventions) -> str:
    if len(conventions) <= 1:
        return "".join(conventions)
    return f"its conventions at {len(conventions)} places ({'; '.join(conventions[:3])}" + \
        ("; …)" if len(conventions) > 3 else ")")


def conventions_of(kinks) -> list:
    """The kink notes of the AD run, once per place: 'line 2, column 5: abs at 0: ...'."""
    seen, out = set(), []
    for op, span, detail in kinks or ():
        key = (op, span.line if span else None, span.column if span else None)
        if key in seen:
            continue
        seen.add(key)
        out.append((f"line {span.line}, column {span.column}: " if span else "") + detail)
    return out


# ---- entries of the inputs ---------------------------------------------------------------------

def _labels(name, shape):
    if not shape:
        return [name]
    idx = np().ndindex(*shape)
    return [f"{name}[{', '.join(map(str, i))}]" for i in idx]


def _as_float_array(v):
    return np().asarray(v, dtype=np().float64).reshape(-1)


class _Perturber:
    """Sets one entry of one input to a value and back, without copying the other inputs."""

    def __init__(self, inputs: dict):
        self.values = dict(inputs)
        self.arrays = {}
        for name, v in inputs.items():
            if hasattr(v, "shape") and v.shape != ():
                own = np().array(v, copy=True)     # ours to change in place
                self.values[name] = own
                self.arrays[name] = own.reshape(-1)

    def entries(self, name):
        flat = self.arrays.get(name)
        if flat is None:
            return [float(self.values[name])]
        return [float(x) for x in flat]

    def set(self, name, k, x):
        flat = self.arrays.get(name)
        if flat is None:
            v = self.values[name]
            self.values[name] = x if v.__class__ is float else v.dtype.type(x)
        else:
            flat[k] = x


# ---- full mode ---------------------------------------------------------------------------------

BATCH_MIN_ENTRIES = 64        # below this the loop is as fast as batching


def full_check(objective: Objective, inputs: dict, claimed: dict, tol: Tolerance, names=None,
               conventions=(), batch=True) -> tuple:
    """Every entry of `claimed` against central differences with Richardson extrapolation.
    Returns (rows, f0). The perturbed runs are batched when the program allows (checkbatch.py)."""
    p = _Perturber(inputs)
    values = p.values
    f0 = objective(values)
    sig0 = objective.signature
    convention = _convention_text(conventions)
    names = names or list(claimed)
    plan = []                    # (label, claimed entry, name, k, x, h)
    for name in names:
        g = claimed[name]
        gflat = [float(g)] if not hasattr(g, "shape") or g.shape == () else _as_float_array(g).tolist()
        labels = _labels(name, np().shape(inputs[name]) if hasattr(inputs[name], "shape") else ())
        for k, x in enumerate(p.entries(name)):
            plan.append((labels[k], gflat[k], name, k, x, power_of_two_step(x, tol.step)))
    values_per_entry = None
    if batch and len(plan) >= BATCH_MIN_ENTRIES:
        from .batch import BatchUnsupported, batched_differences
        runner = objective.runner
        try:
            values_per_entry = batched_differences(runner.target, runner.interp.limits, objective, inputs, names,
                                                   [e[5] for e in plan], f0, sig0)
            objective.batched = True
        except BatchUnsupported:
            values_per_entry = None
    pending = []
    for i, (label, g, name, k, x, h) in enumerate(plan):
        reason = ""
        if values_per_entry is not None:
            fs = values_per_entry[i]
        else:
            fs = []
            for direction, step in (("+h", h), ("-h", -h), ("+2h", 2 * h), ("-2h", -2 * h)):
                p.set(name, k, x + step)
                fs.append(objective(values))
                if not reason and objective.signature != sig0:
                    reason = branch_reason(sig0, objective.signature, label, direction)
            p.set(name, k, x)
        pending.append((label, g, f0, fs[0], fs[1], fs[2], fs[3], h, tol, reason, convention))
    floor = noise_floor(pending)
    scale = largest_finite(a[1] for a in pending)
    return [judge(*args, noise_floor=floor, of_scale=scale) for args in pending], f0


def largest_finite(values) -> float:
    return max((abs(v) for v in values if math.isfinite(v)), default=0.0)


def noise_floor(pending) -> float:
    """The rounding noise of f, measured across entries. eps max|f| underestimates it when f sums
    terms that cancel (sum(tanh(x) * x**2) on a symmetric grid is 0; its terms are not). For smooth
    f, (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h)) / 2 is of order h^3 times the third derivative (tiny) plus noise, so a high
    quantile of it over the entries measures the noise, which all entries of one function share."""
    if len(pending) < 4:
        return 0.0
    diffs = sorted(abs((a[3] - a[4]) - (a[5] - a[6]) / 2) for a in pending
                   if all(map(math.isfinite, a[2:7])) and not a[9])
    if not diffs:
        return 0.0
    return diffs[min(len(diffs) - 1, int(0.9 * len(diffs)))]


def compare(claimed: dict, reference: dict, inputs: dict, tol: Tolerance, names=None,
            conventions=()) -> list:
    """A hand-derived gradient against AD, entry by entry (AD is exact: no error estimate)."""
    rows = []
    convention = _convention_text(conventions)
    for name in names or list(reference):
        ref = reference[name]
        shape = np().shape(ref) if hasattr(ref, "shape") else ()
        want = claimed[name]
        labels = _labels(name, shape)
        rf = [float(ref)] if not shape else _as_float_array(ref).tolist()
        wshape = np().shape(want)
        if wshape != shape:
            if wshape != ():
                from ...parser.errors import SourceError
                raise SourceError("shape mismatch", f"{name}: the expected value has shape {wshape}, "
                                  f"but the computed one has shape {shape}")
            want = np().full(shape, float(want))
        wf = [float(want)] if not shape else _as_float_array(want).tolist()
        for label, c, r in zip(labels, wf, rf):
            scale = max(abs(c), abs(r))
            abs_err = abs(c - r)
            tolerance = tol.atol + tol.rtol * scale if math.isfinite(scale) else math.inf
            row = EntryCheck(label, c, r, abs_err, abs_err / scale if scale else 0.0, 0.0, tolerance, PASS)
            if not (math.isfinite(c) and math.isfinite(r)):
                if not (c == r):
                    row.verdict = NONFINITE
                    row.reason = f"hand-derived {_fmt(c)}, AD {_fmt(r)}"
                    row.rel_err = math.nan if abs_err != abs_err else row.rel_err
            elif abs_err > tolerance:
                if convention:
                    row.verdict = KINK
                    row.reason = (f"hand-derived {_fmt(c)} vs AD {_fmt(r)} at a non-differentiable point; "
                                  f"the engine applied: {convention}")
                else:
                    row.verdict = FAIL
                    row.reason = (f"hand-derived {_fmt(c)} vs AD {_fmt(r)}: |error| {_fmt(abs_err)} exceeds "
                                  f"the tolerance {_fmt(tolerance)}")
            rows.append(row)
    return rows


# ---- fast mode ---------------------------------------------------------------------------------

def fast_check(objective: Objective, inputs: dict, claimed: dict, tol: Tolerance, seed: int,
               names=None) -> tuple:
    """claimedᵀd against the directional central difference along d, a seeded random direction
    with entries ±h_i (Rademacher signs times each entry's power-of-two step). Returns (row, f0)."""
    rng = np().random.default_rng(seed)
    names = names or list(claimed)
    base, moved, proj, proj_l2, d_l2 = dict(inputs), {}, 0.0, 0.0, 0.0
    for name in names:
        x = inputs[name]
        if hasattr(x, "shape") and x.shape != ():
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
            point[name] = v if x.__class__ is float else np().asarray(v, dtype=np().asarray(x).dtype)
        fs.append(objective(point))
        if not reason and objective.signature != sig0:
            reason = branch_reason(sig0, objective.signature, "the direction d", direction.replace("h", "d"))
    # The tolerance of a projection: each entry may be off by atol + rtol |g_i|, and such errors add
    # up like random ones (in quadrature), so the bound is atol |d| + rtol |g∘d| in the 2-norm.
    proj_tol = Tolerance(tol.eps, tol.step, 0.0, tol.atol * math.sqrt(d_l2) + tol.rtol * math.sqrt(proj_l2))
    row = judge("dᵀ∇f", proj, f0, fs[0], fs[1], fs[2], fs[3], 1.0, proj_tol, reason)
    row.step = None            # the steps are per entry (d), not one number
    return row, f0


# ---- the API -----------------------------------------------------------------------------------

class HandGradient:
    """Hand-derived gradient entries: formulas in the language (compiled once, evaluated at each
    point) or numbers and arrays."""

    def __init__(self, spec: dict, input_names, limits=None, what="grad", variables=None):
        from ...parser.errors import SourceError
        self.parts = {}
        for name, item in spec.items():
            if name not in input_names:
                raise SourceError("unknown input", f"{what} gives {name!r}, which is not an input "
                                  f"(the inputs: {', '.join(input_names) or 'none'})")
            if isinstance(item, str):
                target = expression_target(item, f"{what} {name}")
                unknown = [v for v in target.inputs if v not in (variables or input_names)]
                if unknown:
                    raise SourceError("unknown name", f"{what} {name} = {item!r} uses {unknown[0]!r}, which is "
                                      "not an input", None, source=item, filename=f"{what} {name}")
                self.parts[name] = ("formula", target, Runner(target, limits))
            else:
                self.parts[name] = ("value", item, None)

    def at(self, inputs: dict) -> dict:
        from ...parser.errors import SourceError
        from ..lang.values import as_input, shape_of
        out = {}
        for name, (kind, item, runner) in self.parts.items():
            if kind == "formula":
                v = runner({k: inputs[k] for k in item.inputs})
            else:
                v = as_input(np().asarray(item, dtype=np().float64)) if isinstance(item, (list, tuple)) \
                    else as_input(item)
            want = shape_of(inputs[name])
            got = shape_of(v)
            if got != want:
                if got == ():
                    v = np().full(want, float(v))
                else:
                    raise SourceError("shape mismatch", f"the hand-derived gradient for {name} has shape {got}, "
                                      f"but {name} has shape {want}")
            out[name] = v
        return out


def expression_target(text: str, what: str | None = None):
    """An expression as a target, never taken for a file name (formulas in check files)."""
    from ...parser import parse_expression
    from ..lang.builtins import builtin_names
    from ..lang.names import loaded_names
    from ...parser.errors import SourceError
    try:
        node = parse_expression(text, filename=what)
    except SourceError as e:
        if e.filename is None:
            e.filename = what
        raise
    names = builtin_names()
    return Target(text, what, "expression", [v for v in loaded_names(node) if v not in names], node)


def random_seed() -> int:
    import secrets
    return secrets.randbelow(2 ** 31)


def check_gradient(source=None, at=None, grad=None, *, fn=None, of=None, mode="full", seed=None,
                   dtype="float64", rtol=None, atol=None, step=None, wrt=None, output_seed=None,
                   limits=None, target=None, profile=None, ad_result=None, runner=None) -> CheckReport:
    """Check a gradient at one point and return the report (never prints).

    Without `grad`, AD is checked against finite differences. With `grad` (a dict from input names
    to formulas in the language, numbers or arrays: a hand-derived gradient), the hand-derived
    gradient is checked against AD (full mode) or against a directional finite difference (fast).
    `mode="fast"` checks one seeded random projection; `seed` makes it reproducible (the report
    carries the seed used). `profile` picks another dtype's tolerances (to show what they would say).
    """
    from ..lang.values import set_dtype
    if mode not in ("full", "fast"):
        raise ValueError(f"mode must be 'full' or 'fast', not {mode!r}")
    set_dtype(dtype)
    target = target or load(source, fn, of)
    inputs = bind_inputs(target, dict(at or {}))
    result = ad_result or reverse.grad(None, inputs, wrt, output_seed, dtype_name=dtype, limits=limits, target=target)
    names = list(result.gradient)
    conventions = conventions_of(result.kinks)
    tol = tolerance_for(dtype, rtol, atol, step, profile)
    if grad is not None and not isinstance(grad, HandGradient):
        grad = HandGradient(grad, names, limits)
    hand = grad.at(inputs) if grad is not None else None
    report = CheckReport(mode, "hand" if hand is not None else "AD",
                         "AD" if hand is not None and mode == "full" else "FD", dtype, tol, value=result.value,
                         conventions=conventions)
    objective = Objective(runner or Runner(target, limits), output_seed)
    if mode == "fast" and not any(np().size(inputs[n]) for n in names):
        report.mode = mode = "full"          # no input entries: nothing to project, the full check is empty
    if hand is not None and mode == "full":
        report.entries = compare(hand, result.gradient, inputs, tol, list(hand), conventions)
    elif mode == "full":
        report.entries, _ = full_check(objective, inputs, result.gradient, tol, names, conventions)
    else:
        claimed = hand if hand is not None else result.gradient
        report.seed = random_seed() if seed is None else int(seed)
        report.projection, _ = fast_check(objective, inputs, claimed, tol, report.seed, list(claimed))
        if report.projection.failed:
            rows, _ = full_check(objective, inputs, claimed, tol, list(claimed), conventions)
            report.full = CheckReport("full", report.claimed, "FD", dtype, tol, value=result.value, entries=rows,
                                      conventions=conventions)
    report.evaluations = objective.count
    report.batched = objective.batched
    return report
