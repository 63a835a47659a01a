"""engine/checks/stacked_points.py: a full Jacobian check's perturbed points by one batched replay
give the verdicts of the point-by-point runs (the same inputs as test_check_higher.py)."""
import math

import numpy as np
import pytest

from autodiff.engine.checks import stacked_points
from autodiff.engine.checks.higher import check_hessian, check_jacobian
from autodiff.engine.checks.stacked_points import StackedGradients, StackedOutputs
from test_check_higher import ROSENBROCK, ROSENBROCK_ND, SOFTMAX, hess, jac, planted

CASES = [
    (SOFTMAX, {"z": np.array([1.0, 2.0, 3.0])}, "f"),
    ("tanh(x) * sum(x**2)", {"x": np.linspace(-1.0, 1.0, 6)}, None),
    ("[x*y, sin(x), y**2]", {"x": 0.3, "y": -1.2}, None),
    ("[abs(x), x*y]", {"x": 0.0, "y": 2.0}, None),               # a kink at x
    ("[abs(x - 1e-9), x*y]", {"x": 0.0, "y": 2.0}, None),        # a kink crossed between x - h and x + h
    ("sqrt(x)", {"x": 0.0}, None),                               # non-finite
    ("[sqrt(x), log(x) * y]", {"x": 1e-9, "y": 1.0}, None),      # perturbations leave the domain
    ("x[1:] * x[:-1] + maximum(x[1:], 0.5)", {"x": np.array([0.2, 0.5, 0.9, -0.3])}, None),
    (ROSENBROCK_ND, {"x": np.array([0.5, -0.4, 1.1, 0.7])}, None),
    ("A @ x + sum(A)", {"x": np.array([0.5, 1.0]), "A": np.arange(4.0).reshape(2, 2)}, None),
    ("x * 1e-10 + sum(x) ** 2", {"x": np.linspace(1.0, 2.0, 5)}, None),
]


def both_ways(result, target, monkeypatch, check=check_jacobian, **kw):
    batched = check(result, target, **kw)
    monkeypatch.setattr(stacked_points, "BATCHED", False)
    pointwise = check(result, target, **kw)
    monkeypatch.setattr(stacked_points, "BATCHED", True)
    return batched, pointwise


def same_entries(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.label, x.verdict, x.index) == (y.label, y.verdict, y.index), (x, y)
        assert x.reason.split(":")[0] == y.reason.split(":")[0]
        for field in ("claimed", "reference", "left", "right", "step"):
            u, v = getattr(x, field), getattr(y, field)
            if isinstance(u, float) and not (math.isnan(u) and math.isnan(v)):
                assert u == pytest.approx(v, rel=1e-6, abs=1e-9), field


@pytest.mark.parametrize("source, at, fn", CASES)
def test_batched_verdicts_are_the_point_by_point_ones(source, at, fn, monkeypatch):
    result, target = jac(source, at, fn=fn)
    batched, pointwise = both_ways(result, target, monkeypatch)
    same_entries(batched.entries, pointwise.entries)
    assert (batched.verdict, batched.passed, batched.evaluations) == \
        (pointwise.verdict, pointwise.passed, pointwise.evaluations)


def test_a_planted_error_fails_in_both_and_fast_mode_recomputes_batched(monkeypatch):
    result, target = jac("tanh(x) * sum(x**2)", {"x": np.linspace(-1.0, 1.0, 6)})
    wrong = planted(result, "jacobian", "x", (4, 1), 1e-3)
    for mode in ("full", "fast"):
        batched, pointwise = both_ways(wrong, target, monkeypatch, mode=mode, seed=11)
        assert [e.label for e in batched.failures] == [e.label for e in pointwise.failures] == ["∂f[4]/∂x[1]"]


def test_the_batch_is_used_and_its_points_are_the_perturbed_ones(monkeypatch):
    made = []

    class Counting(StackedOutputs):
        def __call__(self, *args):
            out = super().__call__(*args)
            made.append((self.passes, out is not None))
            return out

    monkeypatch.setattr("autodiff.engine.checks.higher.StackedOutputs", Counting)
    result, target = jac("tanh(x) * sum(x**2)", {"x": np.linspace(-1.0, 1.0, 6)})
    check_jacobian(result, target)
    assert made == [(1, True)]
    monkeypatch.setattr("autodiff.engine.diff.batched_replay.STACK_BUDGET_ELEMENTS", 12 * 6)
    made.clear()
    report = check_jacobian(result, target)              # 3 entries (12 rows) per pass
    assert made == [(2, True)] and report.passed


def test_input_dependent_branches_keep_the_per_point_path(tmp_path):
    p = tmp_path / "piece.py"
    p.write_text("def f(x, y):\n    if x > 1:\n        return [x * y, y]\n    return [2 * x * y, y]\n")
    result, target = jac(str(p), {"x": 1.0, "y": 3.0}, fn="f")
    assert StackedOutputs(target)(result.inputs, ["x", "y"], [1e-4, 1e-4], [3.0, 3.0], 2) is None
    report = check_jacobian(result, target)
    assert {e.label: e.verdict for e in report.entries}["∂f[0]/∂x"] == "branch"


# ---- Hessians: the perturbed gradients by one reverse sweep over the stacked pass ----------------

HESSIAN_CASES = [
    (ROSENBROCK, {"x": -1.2, "y": 1.0}, "f", {}),
    (ROSENBROCK_ND, {"x": np.array([1.2, 0.7, -0.3, 2.0])}, None, {}),
    ("abs(x) * x + y * x", {"x": 0.0, "y": 1.5}, None, {}),                  # a kink of the gradient
    ("sum(x**3) + x[0]*x[1]", {"x": np.array([1.0, 2.0], dtype=np.float32)}, None, {"dtype_name": "float32"}),
    ("sum(maximum(x, 0.5) * (A @ x)) + norm(x)", {"x": np.array([0.5, 1.0, -2.0]), "A": np.eye(3) + 0.5}, None, {}),
    ("sum(x**3) * y", {"x": np.array([1.0, 2.0]), "y": 2.0}, None, {}),
]


@pytest.mark.parametrize("source, at, fn, kw", HESSIAN_CASES)
def test_batched_hessian_verdicts_are_the_point_by_point_ones(source, at, fn, kw, monkeypatch):
    result, target = hess(source, at, fn=fn, **kw)
    dtype = {"dtype": kw["dtype_name"]} if kw else {}
    batched, pointwise = both_ways(result, target, monkeypatch, check=check_hessian, **dtype)
    same_entries(batched.entries, pointwise.entries)
    assert (batched.verdict, batched.evaluations) == (pointwise.verdict, pointwise.evaluations)


def test_batched_gradients_are_each_points_own():
    result, target = hess("sum(x**3) * y + sin(x[0] * y)", {"x": np.array([1.0, 2.0]), "y": 2.0})

    def grad(x0, x1, y):
        return [3 * x0 ** 2 * y + np.cos(x0 * y) * y, 3 * x1 ** 2 * y, x0 ** 3 + x1 ** 3 + np.cos(x0 * y) * x0]
    gradients = StackedGradients(target, ["x", "y"])
    base, columns = gradients(result.inputs, ["x", "y"], [2.0 ** -10] * 3, grad(1.0, 2.0, 2.0), 3)
    assert gradients.passes == 1
    assert StackedGradients(target, ["x", "y"])(result.inputs, ["x", "y"], [2.0 ** -10] * 3, [0.0] * 3, 3) is None
    np.testing.assert_allclose(base, grad(1.0, 2.0, 2.0), rtol=1e-14)
    h = 2.0 ** -10
    np.testing.assert_allclose(columns[2][3], grad(1.0, 2.0, 2.0 - 2 * h), rtol=1e-14)    # y - 2h
    np.testing.assert_allclose(columns[0][0], grad(1.0 + h, 2.0, 2.0), rtol=1e-14)        # x[0] + h


def test_a_planted_hessian_error_fails_in_both(monkeypatch):
    result, target = hess(ROSENBROCK_ND, {"x": np.array([1.2, 0.7, -0.3, 2.0])})
    slightly = planted(result, "hessian", ("x", "x"), (1, 2), 1e-3)
    batched, pointwise = both_ways(slightly, target, monkeypatch, check=check_hessian)
    assert [e.label for e in batched.failures] == [e.label for e in pointwise.failures] == ["∂²f/∂x[1]∂x[2]"]


# ---- a gradient check's objective, and the guards of its trace (issue 28 item 2) ------------------

def objective_points(source, x):
    """StackedObjective at x's perturbed points (2**-17 steps), the points whose path changed
    (its `crossed`), and the loop's objective at each point."""
    from autodiff.engine import api
    from autodiff.engine.checks.differences import Objective
    from autodiff.engine.checks.one_hot import OFFSETS
    from autodiff.engine.checks.stacked_points import StackedObjective
    from autodiff.engine.diff.function import ReplayRunner
    target = api.load(source)
    objective = Objective(ReplayRunner(target, None))
    f0 = objective({"x": x})
    stacked = StackedObjective(target)
    steps = [2.0 ** -17] * x.size
    out = stacked({"x": x}, ["x"], steps, [f0], 1)
    loop = [[objective({"x": x + np.eye(x.size)[k] * t * steps[k]}) for t in OFFSETS] for k in range(x.size)]
    return stacked, out, loop


def test_a_comparison_guard_is_checked_at_every_point_at_once(monkeypatch):
    # where's condition is a guard that reads x > 0 (an array): the points whose mask differs are
    # those that move x[0] = 2**-20 below 0 (-h, -2h) and x[5] = -2**-21 above it (+h, +2h);
    # the others take the recorded mask, their numbers the loop's, and no point's read is checked by
    # itself (PointValues, the per-point check, is not reached)
    from autodiff.engine.diff import batched_replay
    x = np.linspace(-1.0, 1.0, 70)
    x[0], x[5] = 2.0 ** -20, -(2.0 ** -21)
    monkeypatch.setattr(batched_replay, "PointValues", None)         # each point by itself: not reached
    stacked, (f0, columns), loop = objective_points("sum(where(x > 0, x, 0) * x)", x)
    assert stacked.crossed == [(0, 1), (0, 3), (5, 0), (5, 2)] and stacked.passes == 1
    got = np.asarray(columns)[:, :, 0]
    assert np.isnan(got[0, [1, 3]]).all() and np.isnan(got[5, [0, 2]]).all()
    keep = ~np.isnan(got)             # the loop's to the rounding of a sum: 64 eps of f
    np.testing.assert_allclose(got[keep], np.asarray(loop)[keep], rtol=64 * 2.0 ** -52, atol=0)


@pytest.mark.parametrize("source, at", [("sum(sign(x) * x * x)", 0.0), ("sum(round(x) * x)", 0.5)])
def test_a_read_of_a_primitive_without_a_derivative_is_recomputed_at_every_point_at_once(source, at, monkeypatch):
    # sign(x) enters the trace as a constant its guard checks (sign has no derivative to follow),
    # round(x) as rint read through its engine op: the guard is the primitive lifted over the
    # stack, each point's bytes against the recorded ones, so the points that cross are those
    # whose sign (or rounding) changes: x[0] just above `at` moved down, x[5] just below -`at`
    # moved up; none is checked by itself
    from autodiff.engine.diff import batched_replay
    x = np.linspace(-1.0, 1.0, 70)
    x[0], x[5] = at + 2.0 ** -20, -at - 2.0 ** -21
    monkeypatch.setattr(batched_replay, "PointValues", None)         # each point by itself: not reached
    stacked, (f0, columns), loop = objective_points(source, x)
    assert stacked.crossed == [(0, 1), (0, 3), (5, 0), (5, 2)] and stacked.passes == 1
    got = np.asarray(columns)[:, :, 0]
    keep = ~np.isnan(got)
    assert keep.sum() == 4 * 70 - 4
    np.testing.assert_allclose(got[keep], np.asarray(loop)[keep], rtol=64 * 2.0 ** -52, atol=0)


def test_a_guard_that_most_points_read_otherwise_hands_them_to_the_loop():
    # argmax's guard reads the values themselves, so every moved point reads otherwise: after one
    # pass the points go to the loop, which is cheaper than a pass plus a run per point
    from autodiff.engine.checks.stacked_points import MOSTLY_CROSSED
    x = np.linspace(-1.0, 1.0, 70)
    stacked, out, _ = objective_points("x[argmax(x)] * sum(x)", x)
    assert out is None and stacked.fallbacks == {MOSTLY_CROSSED: 1} and stacked.passes == 1
