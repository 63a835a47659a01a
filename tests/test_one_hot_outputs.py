"""One-hot stacks for Jacobian checks (engine/checks/one_hot_outputs.py): the flat outputs at the
perturbed points agree with the batched replay's (stacked_points.StackedOutputs) to rounding, the
check's verdicts are the point-by-point ones, and what it cannot follow goes to the fallback."""
import numpy as np
import pytest

from autodiff.engine.checks import one_hot_outputs, stacked_points
from autodiff.engine.checks.differences import power_of_two_step
from autodiff.engine.checks.higher import check_jacobian
from autodiff.engine.checks.one_hot_outputs import OneHotOutputs
from autodiff.engine.checks.stacked_points import StackedOutputs
from test_check_higher import jac
from test_stacked_points import same_entries

STEP = 2.0 ** -17
FOLLOWED = [
    ("[sum(sin(x)), sum(x * x), max(tanh(x))]", {"x": np.linspace(-1.0, 1.0, 40)}),
    ("sin(x) * exp(x) - x", {"x": np.linspace(-1.0, 1.0, 12)}),                  # a square Jacobian
    ("[sum(x * y), y ** 2, sum(abs(x))]", {"x": np.linspace(-1.0, 1.0, 9), "y": 0.5}),
    ("[x*y, sin(x), y**2]", {"x": 0.3, "y": -1.2}),                              # scalars: dense stacks
]
DECLINED = [
    ("A @ x + sum(A)", {"x": np.array([0.5, 1.0]), "A": np.arange(4.0).reshape(2, 2)}),
    ("tanh(x) * sum(x**2)", {"x": np.linspace(-1.0, 1.0, 6)}),
    ("x[1:] * x[:-1]", {"x": np.array([0.2, 0.5, 0.9, -0.3])}),
]


def call(batch, result, target):
    names = list(result.jacobian)
    steps = [power_of_two_step(float(v), STEP) for n in names for v in np.ravel(result.inputs[n])]
    f0 = np.asarray(result.value, dtype=np.float64).reshape(-1).tolist()
    return batch(result.inputs, names, steps, f0, len(f0))


@pytest.mark.parametrize("source, at", FOLLOWED)
def test_outputs_agree_with_the_batched_replay(source, at):
    result, target = jac(source, at)
    one_hot = OneHotOutputs(target)
    got = call(one_hot, result, target)
    want = call(StackedOutputs(target), result, target)
    assert one_hot.taken and got is not None and want is not None
    # the row at x is the replay's at x (the batched pass rounds its own row by where it sits)
    np.testing.assert_array_equal(got[0], np.asarray(result.value, dtype=np.float64).reshape(-1))
    ours = np.asarray(got[1]) - np.asarray(got[0])
    theirs = np.asarray(want[1]) - np.asarray(want[0])
    scale = np.max(np.abs(theirs))
    assert np.max(np.abs(ours - theirs)) <= 1e-9 * scale


@pytest.mark.parametrize("source, at", FOLLOWED)
def test_jacobian_verdicts_are_the_point_by_point_ones(source, at, monkeypatch):
    result, target = jac(source, at)
    new = check_jacobian(result, target)
    monkeypatch.setattr(stacked_points, "BATCHED", False)
    old = check_jacobian(result, target)
    same_entries(new.entries, old.entries)
    assert (new.verdict, new.evaluations) == (old.verdict, old.evaluations)


@pytest.mark.parametrize("source, at", DECLINED)
def test_what_it_cannot_follow_goes_to_the_fallback(source, at):
    result, target = jac(source, at)
    assert call(OneHotOutputs(target), result, target) is None
    fallback = StackedOutputs(target)
    one_hot = OneHotOutputs(target, fallback=fallback)
    assert call(one_hot, result, target) is not None and not one_hot.taken and fallback.passes >= 1


def test_a_table_over_the_budget_goes_to_the_fallback(monkeypatch):
    result, target = jac(*FOLLOWED[0])
    monkeypatch.setattr(one_hot_outputs, "OUTPUT_BUDGET_ELEMENTS", 100)
    one_hot = OneHotOutputs(target)
    assert call(one_hot, result, target) is None and not one_hot.taken


def test_a_wrong_lifting_is_caught_by_the_point_replays(monkeypatch):
    from autodiff.engine.checks import one_hot
    monkeypatch.setitem(one_hot.WHOLE_REDUCTIONS, "sum", lambda m, out_base: out_base + 0 * m.values)
    result, target = jac(*FOLLOWED[0])
    assert call(OneHotOutputs(target), result, target) is None
    assert check_jacobian(result, target).passed
