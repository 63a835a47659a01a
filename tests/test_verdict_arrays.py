"""Verdicts in arrays (engine/checks/verdict_arrays.py): judge_all gives, entry by entry, the row
verdicts.judge gives: the same status, message and numbers to the bit, on random and edge cases."""
import math

import numpy as np
import pytest

from autodiff.engine.checks.differences import power_of_two_step, power_of_two_steps
from autodiff.engine.checks.report import TOLERANCES, Tolerance
from autodiff.engine.checks.verdict_arrays import judge_all, largest_finite_of, noise_floor_of
from autodiff.engine.checks.verdicts import judge


def same_field(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    return a == b and a.__class__ is b.__class__


def assert_same_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for field, value in vars(w).items():
            assert same_field(getattr(g, field), value), (field, getattr(g, field), value, vars(w))


SPECIAL = [0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, 1.7e308, math.inf, -math.inf, math.nan, 1.0, -2.5]


def smooth_case(rng, n, h):
    """f = a x + b x**2 + c x**3 near x, with claims right, slightly off or wrong."""
    a, b, c = rng.normal(size=(3, n)) * 10.0 ** rng.integers(-12, 12, size=(3, n))
    f = lambda t: a * t + b * t * t + c * t ** 3       # noqa: E731
    f0 = rng.normal() * 10.0 ** rng.integers(-5, 5)
    claimed = a * (1 + rng.choice([0, 1e-12, 1e-7, 1e-3, 1.0], size=n))
    return claimed, f0, f0 + f(h), f0 + f(-h), f0 + f(2 * h), f0 + f(-2 * h)


def kink_case(rng, n, h):
    """f = |x| scaled, or a jump, at x: the one-sided slopes or the values differ."""
    s = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, size=n)
    jump = rng.choice([0.0, 1.0], size=n) * s
    f = lambda t: s * np.abs(t) + jump * (t > 0)       # noqa: E731
    return rng.normal(size=n), 0.0, f(h), f(-h), f(2 * h), f(-2 * h)


def with_specials(rng, columns):
    columns = [np.array(c, dtype=np.float64) for c in columns]
    for c in columns:
        where = rng.random(c.shape) < 0.08
        c[where] = rng.choice(SPECIAL, size=int(where.sum()))
    return columns


def both(labels, claimed, f0, fp1, fm1, fp2, fm2, steps, tol, reasons, **kw):
    f0s = np.broadcast_to(np.asarray(f0, dtype=np.float64), (len(labels),))
    want = [judge(labels[e], float(claimed[e]), float(f0s[e]), float(fp1[e]), float(fm1[e]), float(fp2[e]),
                  float(fm2[e]), float(steps[e]), tol, reasons[e] if reasons else "", kw.get("convention", ""),
                  noise_floor=kw.get("noise_floor", 0.0), of_scale=kw.get("of_scale", 0.0),
                  relative_atol=kw.get("relative_atol", False)) for e in range(len(labels))]
    got = judge_all(labels, claimed, f0, fp1, fm1, fp2, fm2, steps, tol, reasons, **kw)
    assert_same_rows(got, want)
    return got


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("relative_atol", [False, True])
def test_random_and_edge_cases_judge_alike(seed, relative_atol):
    rng = np.random.default_rng(seed)
    n = 400
    steps = 2.0 ** rng.integers(-30, 0, size=n).astype(np.float64)
    case = smooth_case if seed % 2 == 0 else kink_case
    claimed, f0, fp1, fm1, fp2, fm2 = case(rng, n, steps)
    if seed % 3 == 0:
        claimed, fp1, fm1, fp2, fm2 = with_specials(rng, [claimed, fp1, fm1, fp2, fm2])
    tol = TOLERANCES["float64" if seed % 4 else "float32"]
    reasons = ["x[3]+h flips the decision" if rng.random() < 0.05 else "" for _ in range(n)] if seed % 5 == 0 else None
    labels = [f"x[{e}]" for e in range(n)]
    floor = noise_floor_of(f0, fp1, fm1, fp2, fm2, reasons)
    scale = largest_finite_of(claimed)
    rows = both(labels, claimed, f0, fp1, fm1, fp2, fm2, steps, tol, reasons, convention="abs at 0: 0",
                noise_floor=floor, of_scale=scale, relative_atol=relative_atol)
    assert len({r.verdict for r in rows}) >= 2


def test_every_verdict_is_reached_alike():
    h = 2.0 ** -17
    tol = TOLERANCES["float64"]
    cases = [  # claimed, f0, fp1, fm1, fp2, fm2
        (2.0, 0.0, 2 * h, -2 * h, 4 * h, -4 * h),                      # pass
        (2.5, 0.0, 2 * h, -2 * h, 4 * h, -4 * h),                      # fail
        (math.nan, 0.0, 2 * h, -2 * h, 4 * h, -4 * h),                 # non-finite claim
        (2.0, 0.0, math.inf, -2 * h, 4 * h, -4 * h),                   # non-finite f
        (0.0, 0.0, h, h, 2 * h, 2 * h),                                # kink: |x|
        (0.0, 0.0, 1.0, 0.0, 1.0, 0.0),                                # a jump
        (1.0, 1e12, 1e12 + h, 1e12 - h, 1e12 + 2 * h, 1e12 - 2 * h),   # inconclusive: rounding dominates
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),                                # zero everywhere
        (1e-300, 1e-300, 1e-300, 1e-300, 1e-300, 1e-300),              # tiny
        (1e300, 1e300, 1.7e308, -1.7e308, 1.7e308, -1.7e308),          # overflows in the arithmetic
    ]
    claimed, f0s, fp1, fm1, fp2, fm2 = (np.array(c) for c in zip(*cases))
    n = len(cases)
    for e in range(n):                      # f0 differs per case: one call each, and all at once at f0 = 0
        both(["x"], claimed[e:e + 1], f0s[e], fp1[e:e + 1], fm1[e:e + 1], fp2[e:e + 1], fm2[e:e + 1], [h], tol,
             None, relative_atol=True, of_scale=3.0)
    rows = both([f"x[{e}]" for e in range(n)], claimed, 0.0, fp1, fm1, fp2, fm2, [h] * n, tol,
                ["", "", "", "", "", "", "", "", "a branch", ""])
    verdicts = {r.verdict for r in rows}
    assert {"pass", "fail", "non-finite", "kink", "branch"} <= verdicts


def test_inconclusive_rows_keep_their_message():
    tol = Tolerance(eps=2.0 ** -52, step=2.0 ** -17, rtol=1e-6, atol=1e-9)
    h = 2.0 ** -3                          # a large step on a cubic: truncation dominates
    x = np.linspace(0.5, 2, 50)
    f = lambda t: (x + t) ** 3             # noqa: E731
    rows = both([f"x[{e}]" for e in range(50)], 3 * x * x, f(0), f(h), f(-h), f(2 * h), f(-2 * h), [h] * 50, tol,
                None)
    assert {r.verdict for r in rows} == {"inconclusive"}


# The per-entry definitions full checks used before verdict_arrays (pending: judge's argument tuples),
# kept here as the reference the array versions must match to the bit.
def largest_finite(values) -> float:
    return max((abs(v) for v in values if math.isfinite(v)), default=0.0)


def noise_floor(pending) -> float:
    if len(pending) < 4:
        return 0.0
    diffs = sorted(abs((a[3] - a[4]) - (a[5] - a[6]) / 2) for a in pending
                   if all(map(math.isfinite, a[2:7])) and not a[9])
    if not diffs:
        return 0.0
    return diffs[min(len(diffs) - 1, int(0.9 * len(diffs)))]


@pytest.mark.parametrize("seed", range(6))
def test_noise_floor_and_scale_match_the_per_entry_ones(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    f0 = float(rng.normal())
    columns = with_specials(rng, [f0 + rng.normal(size=n) * 1e-6 for _ in range(4)])
    claimed = with_specials(rng, [rng.normal(size=n)])[0]
    reasons = ["a branch" if rng.random() < 0.1 else "" for _ in range(n)]
    pending = [("x", claimed[e], f0, *(float(c[e]) for c in columns), 1.0, None, reasons[e], "") for e in range(n)]
    assert noise_floor_of(f0, *columns, reasons) == noise_floor(pending)
    assert noise_floor_of(f0, *columns) == noise_floor([p[:9] + ("",) + p[10:] for p in pending])
    assert largest_finite_of(claimed) == largest_finite(claimed.tolist())


def test_a_noise_floor_and_a_scale_per_entry_judge_alike():
    """A Jacobian check judges all outputs at once: each entry carries its output's floor and scale."""
    rng = np.random.default_rng(7)
    n = 300
    h = np.full(n, 2.0 ** -17)
    claimed, f0, fp1, fm1, fp2, fm2 = smooth_case(rng, n, h)
    floors = rng.choice([0.0, 1e-16, 1e-12, 1e-8], size=n)
    scales = rng.choice([0.0, 1.0, 1e6], size=n)
    tol = TOLERANCES["float64"]
    labels = [f"x[{e}]" for e in range(n)]
    want = [judge(labels[e], claimed[e], f0, fp1[e], fm1[e], fp2[e], fm2[e], h[e], tol, noise_floor=floors[e],
                  of_scale=scales[e]) for e in range(n)]
    assert_same_rows(judge_all(labels, claimed, f0, fp1, fm1, fp2, fm2, h, tol, noise_floor=floors, of_scale=scales),
                     want)


def test_power_of_two_steps_are_the_one_value_steps():
    rng = np.random.default_rng(5)
    near_halves = [np.sqrt(2.0) * 2.0 ** k * (1 + d) for k in range(-3, 40) for d in (-1e-16, 0.0, 1e-16, 2e-16)]
    values = np.concatenate([rng.normal(size=500) * 10.0 ** rng.integers(-10, 300, size=500), near_halves,
                             SPECIAL, [-1.0, 1.0 - 2.0 ** -53, 2.0 ** 1023]])
    for rel in (2.0 ** -17, 2.0 ** -8, 1e-5, 0.3):
        got = power_of_two_steps(values.tolist(), rel)
        want = [power_of_two_step(float(v), rel) for v in values]
        assert all(same_field(g, w) for g, w in zip(got, want))
