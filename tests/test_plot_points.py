"""engine/views/plot_points.py: a plot's grid in batched passes gives the curves, kink notes and
marks of the point-by-point runs (the inputs of test_plot.py, and more)."""
import math

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.lang.values import set_dtype
from autodiff.engine.views import plot_points
from autodiff.engine.views.plotdata import breaks, sample
from autodiff.engine.views.plot_points import GridPass, grid_points

CASES = [
    ("sin(x)", -7.0, 7.0, 41, 3, None),
    ("x**3 - 2*x", 0.25, 2.0, 9, 4, None),
    ("abs(x)", -1.0, 1.0, 21, 1, None),                         # a kink at a grid point
    ("abs(x)", -1.0, 1.0, 20, 1, None),                         # a kink between two points
    ("abs(x) + relu(x - 0.5)", -1.0, 1.0, 20, 2, None),
    ("maximum(x, 0.25) * minimum(x, y)", -1.0, 1.0, 41, 2, {"y": 0.5}),   # ties at grid points
    ("sqrt(x) + log(x)", -1.0, 1.0, 20, 1, None),                # a domain gap
    ("1/x", -1.0, 1.0, 201, 2, None),                            # a pole
    ("tanh(x) * exp(-x*x) + sum(A * x)", -2.0, 2.0, 201, 3, {"A": np.array([1.0, -2.0, 0.5])}),
    ("abs(x * y) + abs(y - 1)", -1.0, 1.0, 21, 1, {"y": 1.0}),   # a kink at every point, from y alone
    ("max(A * x) + min(A * x, axis=0)", -1.0, 1.0, 21, 1, {"A": np.array([1.0, -2.0, 0.5])}),  # where the extreme sits
    ("samples/views/kinks.py", -2.0, 3.0, 201, 1, None),          # control flow: per point
]


def both_ways(source, lo, hi, points, order, others, monkeypatch):
    target = api.load(source)
    name = "x"
    batched = sample(target, name, lo, hi, points, order, others)
    monkeypatch.setattr(plot_points, "BATCHED", False)
    pointwise = sample(target, name, lo, hi, points, order, others)
    monkeypatch.setattr(plot_points, "BATCHED", True)
    return batched, pointwise


def marks_of(data):
    return [(m.kind, m.x, m.between, m.op, m.line, m.column, m.detail) for m in data.marks]


def assert_same_plot(batched, pointwise):
    assert batched.xs == pointwise.xs
    for ours, theirs in zip(batched.series, pointwise.series):
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-300, equal_nan=True)
    assert marks_of(batched) == marks_of(pointwise)
    assert breaks(batched) == breaks(pointwise)
    assert [x for x, _ in batched.errors] == [x for x, _ in pointwise.errors]


@pytest.mark.parametrize("source, lo, hi, points, order, others", CASES)
def test_batched_plot_is_the_point_by_point_one(source, lo, hi, points, order, others, monkeypatch):
    monkeypatch.chdir(__import__("test_replay").ROOT)
    assert_same_plot(*both_ways(source, lo, hi, points, order, others, monkeypatch))


def test_replayable_plots_take_the_batched_path():
    target = api.load("abs(x) + sin(x)")
    xs = [-1.0 + i / 10 for i in range(21)]
    assert grid_points(target, "x", xs, {}, 2) is not None
    assert grid_points(target, "x", xs[:3], {}, 2) is None                  # too few points to pay


def test_a_kink_note_is_pinned_to_its_point_in_a_few_passes():
    target = api.load("abs(x) + sin(x)")
    from autodiff.engine.diff.batched_replay import record_for_batches
    xs = [-1.0 + i / 100 for i in range(201)]                               # x = 0 is point 100
    grid = GridPass(record_for_batches(target, {"x": xs[0]}), target, "x", {}, 1)
    results = grid.pinned(xs)
    assert [i for i, (_, kinks, _) in enumerate(results) if kinks] == [100]
    assert grid.passes <= 2 * 9 + 1


def test_a_tiny_budget_chunks_the_grid_and_changes_nothing(monkeypatch):
    whole = sample(api.load("tanh(x) * abs(x - 0.3)"), "x", -1.0, 1.0, 51, 2)
    monkeypatch.setattr("autodiff.engine.diff.batched_replay.STACK_BUDGET_ELEMENTS", 16)
    chunked = sample(api.load("tanh(x) * abs(x - 0.3)"), "x", -1.0, 1.0, 51, 2)
    assert chunked.series == whole.series and marks_of(chunked) == marks_of(whole)


def test_float32_plots_batch_as_point_by_point(monkeypatch):
    set_dtype("float32")
    try:
        assert_same_plot(*both_ways("abs(x) * exp(x) + relu(x - 0.5)", -1.0, 1.0, 21, 2, None, monkeypatch))
    finally:
        set_dtype("float64")


def test_a_scalar_plot_loads_numpy_only_when_the_point_runs_would_cost_more(monkeypatch):
    monkeypatch.delitem(__import__("sys").modules, "numpy")             # as in a fresh CLI process
    assert not plot_points.worth_numpy(201 * 5 * 2)
    assert plot_points.worth_numpy(plot_points.NUMPY_WORTH_OPS)
