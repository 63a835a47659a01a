"""One-hot stacks (engine/checks/one_hot.py): the perturbed points of a full gradient check replayed
as (the value at x) + (one moved element per row) give the differences the batched replay and
the point-by-point runs give, to rounding; what they cannot follow goes the old way, unchanged."""
import math

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.checks import differences, one_hot
from autodiff.engine.checks.differences import Objective, power_of_two_step
from autodiff.engine.checks.gradient import check_gradient
from autodiff.engine.checks.one_hot import one_hot_differences
from autodiff.engine.checks.stacked_points import StackedObjective
from autodiff.engine.core.backend import to_host_value
from autodiff.engine.diff.function import ReplayRunner
from autodiff.engine.lang.target import bind_inputs
from test_batched_replay import sample_point
from test_replay import POINTS, ROOT, TABLE_CASES
from test_samples_programs import SAMPLES

STEP = 2.0 ** -17


def setup(target, at, output_seed=None):
    inputs = {k: to_host_value(v) for k, v in bind_inputs(target, dict(at)).items()}
    objective = Objective(ReplayRunner(target, None), output_seed)
    f0 = objective(inputs)
    names = [k for k in target.inputs if np.asarray(inputs[k]).dtype == np.float64]
    steps = [power_of_two_step(float(v), STEP) for n in names for v in np.ravel(inputs[n])]
    return inputs, objective, f0, names, steps


def point_by_point(objective, inputs, names, steps):
    """Today's reference: the batched replay of the trace where it runs (stacked_points.py), else
    one run per point."""
    stacked = StackedObjective(objective.runner.target, objective.output_seed)(inputs, names, steps,
                                                                             [objective(inputs)], 1)
    if stacked is not None:
        return np.asarray(stacked[1])[:, :, 0]
    rows, e = [], 0
    for name in names:
        for k in range(np.size(inputs[name])):
            row = []
            for t in one_hot.OFFSETS:
                moved = np.array(inputs[name], dtype=np.float64, copy=True)
                moved.reshape(-1)[k] += t * steps[e]
                row.append(objective({**inputs, name: moved if moved.ndim else float(moved)}))
            rows.append(row)
            e += 1
    return np.asarray(rows)


def assert_same_differences(target, at, output_seed=None):
    """The one-hot rows against today's, as differences from f0, to 1e-9 of the largest one;
    None where the one-hot replay declines."""
    inputs, objective, f0, names, steps = setup(target, at, output_seed)
    got = one_hot_differences(target, None, objective, inputs, names, steps, f0)
    if got is None:
        return None
    want = point_by_point(objective, inputs, names, steps)
    assert got.shape == want.shape
    ours, theirs = got - f0, want - f0
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isfinite(ours), finite)
    scale = np.max(np.abs(theirs[finite]), initial=0.0)
    assert np.all(np.abs(ours[finite] - theirs[finite]) <= 1e-9 * scale + 1e-300), np.max(
        np.abs(ours[finite] - theirs[finite])) / scale
    return got


@pytest.mark.parametrize("expr", TABLE_CASES)
@pytest.mark.parametrize("points", range(len(POINTS)))
def test_every_table_entry_gives_the_differences_of_the_dense_runs(expr, points):
    target = api.load(expr)
    at = {k: v for k, v in POINTS[points][0].items() if k in target.inputs}
    assert_same_differences(target, at)


def test_most_elementwise_table_entries_take_the_one_hot_path():
    taken = [e for e in TABLE_CASES if assert_same_differences(
        api.load(e), {k: v for k, v in POINTS[0][0].items() if k in api.load(e).inputs}) is not None]
    assert len(taken) >= len(TABLE_CASES) - 20, len(taken)
    assert "sum(x ** 2) + y ** x[0]" not in taken and "sum(A * x)" not in taken   # indexing, a broadcast


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_samples_give_the_differences_of_the_dense_runs(path, monkeypatch):
    monkeypatch.chdir(ROOT)
    target, at = sample_point(path)
    assert_same_differences(target, at)


PROGRAMS = [
    "sum(x**2 * sin(x))",
    "sqrt(sum(exp(-x) * cos(3*x) + 1)) - max(x) * 2 + min(x * x)",
    "sum(log1p(x * x) + relu(x - 0.1) ** 3) / len(x)",
    "mean(tanh(x - y) * y) + sum(maximum(x, 0.25) - abs(x - 0.5))",
    "sum(x) * sum(x * x)",
    "x * 2 - sin(x)",                                     # an array output: its sum
]


@pytest.mark.parametrize("source", PROGRAMS)
def test_sample_programs_take_the_one_hot_path_with_the_dense_differences(source):
    rng = np.random.default_rng(1)
    at = {"x": rng.uniform(-1, 1, 90), "y": rng.uniform(0.2, 1, 90)}
    target = api.load(source)
    assert assert_same_differences(target, {k: v for k, v in at.items() if k in target.inputs}) is not None


def test_an_output_seed_weighs_the_moved_elements():
    target = api.load("exp(x) * 2 - x")
    x = np.linspace(-1, 1, 70)
    assert assert_same_differences(target, {"x": x}, output_seed=np.linspace(0.5, 2, 70)) is not None
    assert assert_same_differences(target, {"x": x}, output_seed=3.0) is not None


def test_a_scalar_input_beside_an_array_is_a_dense_stack():
    target = api.load("sum(sin(x) * y) + y ** 2")
    assert assert_same_differences(target, {"x": np.linspace(0, 1, 70), "y": 0.7}) is not None


def test_a_max_whose_only_largest_element_moves_takes_the_runner_up():
    target = api.load("max(x) + min(x)")
    x = np.array([0.1, 0.5, 0.3, 0.5 - 2.0 ** -20, 0.2, -0.4])      # moving x[1] down makes x[3] the max
    inputs, objective, f0, names, steps = setup(target, {"x": x})
    got = one_hot_differences(target, None, objective, inputs, names, steps, f0)
    want = point_by_point(objective, inputs, names, steps)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("source", ["sum(A @ x)", "sum(x[3:] * x[:-3])", "sum(reshape(x, 10, 7), 0)[2]",
                                    "sum(x * sum(x))", "sum(outer(x, x))"])
def test_programs_it_cannot_follow_are_declined(source):
    rng = np.random.default_rng(2)
    at = {"x": rng.uniform(-1, 1, 70), "A": rng.uniform(-1, 1, (3, 70))}
    target = api.load(source)
    inputs, objective, f0, names, steps = setup(target, {k: v for k, v in at.items() if k in target.inputs})
    names = ["x"]
    steps = steps[-70:]
    assert one_hot_differences(target, None, objective, inputs, names, steps, f0) is None
    [(reason, times)] = objective.fallbacks.items()             # the handover counted by its reason
    assert reason.startswith("a one-hot stack cannot follow ") and times == 1


def same_report(a, b):
    assert (a.verdict, a.evaluations, a.batched) == (b.verdict, b.evaluations, b.batched)
    assert [vars(e) for e in a.entries] == [vars(e) for e in b.entries]


@pytest.mark.parametrize("source", ["sum(A @ x)", "sum(x[3:] * x[:-3]) + x[0]", "sum(x * x) if x[0] > 0 else 0"])
def test_programs_it_cannot_follow_give_todays_report(source, monkeypatch):
    rng = np.random.default_rng(3)
    at = {"x": rng.uniform(0.1, 1, 70), "A": rng.uniform(-1, 1, (3, 70))}
    target = api.load(source)
    at = {k: v for k, v in at.items() if k in target.inputs}
    new = check_gradient(target=target, at=at, wrt=["x"])
    monkeypatch.setattr(differences, "ONE_HOT", False)
    same_report(new, check_gradient(target=target, at=at, wrt=["x"]))


def test_the_benchmark_program_takes_the_one_hot_path_and_passes():
    target = api.load("sum(x**2 * sin(x))")
    x = np.linspace(-2, 2, 1000)
    inputs, objective, f0, names, steps = setup(target, {"x": x})
    assert one_hot_differences(target, None, objective, inputs, names, steps, f0) is not None
    report = check_gradient(target=target, at={"x": x})
    assert report.passed and report.batched and report.evaluations == 4002    # f0, then 4n + 1 as batches count
    assert all(e.verdict == "pass" for e in report.entries)


def test_kinks_show_as_they_do_point_by_point(monkeypatch):
    x = np.concatenate([np.linspace(-1, 1, 69), [0.0]])
    source = "sum(abs(x)) + sum(relu(x - 0.5))"
    new = check_gradient(source, at={"x": x})
    monkeypatch.setattr(differences, "ONE_HOT", False)
    old = check_gradient(source, at={"x": x})
    assert [e.verdict for e in new.entries] == [e.verdict for e in old.entries]
    assert new.entries[-1].verdict == "kink"
    assert {e.verdict for e in new.entries} == {e.verdict for e in old.entries}


def test_a_wrong_lifting_is_caught_by_the_single_runs(monkeypatch):
    """A reduction that forgot the moved element would give f0 on every row: the two single runs
    the result is checked against disagree, and the batched replay answers instead."""
    monkeypatch.setitem(one_hot.WHOLE_REDUCTIONS, "sum", lambda m, out_base: out_base + 0 * m.values)
    target = api.load("sum(x**2 * sin(x))")
    inputs, objective, f0, names, steps = setup(target, {"x": np.linspace(-2, 2, 80)})
    monkeypatch.delenv("AUTODIFF_STRICT", raising=False)
    assert one_hot_differences(target, None, objective, inputs, names, steps, f0) is None
    assert objective.fallbacks == {"a batched pass's moved points differs from the point-by-point runs'": 1}
    assert check_gradient(target=target, at={"x": np.linspace(-2, 2, 80)}).passed


def test_float32_inputs_go_the_old_way():
    target = api.load("sum(x**2 * sin(x))")
    x = np.linspace(-2, 2, 80).astype(np.float32)
    objective = Objective(ReplayRunner(target, None))
    f0 = objective({"x": x})
    assert one_hot_differences(target, None, objective, {"x": x}, ["x"], [2.0 ** -8] * 80, f0) is None
    assert math.isfinite(f0) and objective.fallbacks == {one_hot.NOT_FLOAT64: 1}


@pytest.mark.parametrize("source, x", [("sum(1/x)", np.linspace(-1, 1, 101)),
                                       ("sum(sqrt(x))", np.linspace(-1, 1, 101) - 1e-7)])
def test_a_sum_not_finite_at_x_gives_the_point_runs_differences(source, x, monkeypatch):
    """inf - inf: a moved element cannot be taken back out of a sum that is inf or nan at x, while
    the point moved off the pole (or into sqrt's domain) has a finite sum; the one-hot path must
    decline rather than report nan differences there."""
    target = api.load(source)
    new = check_gradient(target=target, at={"x": x})
    monkeypatch.setattr(differences, "ONE_HOT", False)
    old = check_gradient(target=target, at={"x": x})
    assert (new.verdict, new.evaluations, new.batched) == (old.verdict, old.evaluations, old.batched)
    assert [repr(vars(e)) for e in new.entries] == [repr(vars(e)) for e in old.entries]     # nan-safe


def test_a_dense_stack_over_the_budget_is_declined_before_it_is_made(monkeypatch):
    # a value made from a full sum meeting a large array that does not move: its stack (rows x the
    # array) was made first and measured after (1.25 GB at 2,000 x 20,000), then declined
    made = []
    real = one_hot.stacked_apply

    def measured(*args):
        out = real(*args)
        made.append(np.size(out))
        return out
    monkeypatch.setattr(one_hot, "stacked_apply", measured)
    x, y = np.linspace(-1.0, 1.0, 100), np.linspace(0.0, 1.0, 2000)      # 64 entries or more: one-hot
    report = check_gradient("sum(sin(sum(x)) * y)", {"x": x, "y": y}, wrt=["x"])
    assert report.passed
    assert all(count <= one_hot.STACK_BUDGET_ELEMENTS for count in made), made


def test_moved_values_are_dropped_after_their_last_reader(tmp_path, monkeypatch):
    # a chain of dense steps (a full sum meeting an array that does not move): each stack was
    # kept to the end of the pass, 21 stacks at the peak for 11 steps; now about two
    import tracemalloc
    path = tmp_path / "chain.py"
    path.write_text("def f(x, z):\n    t = sin(sum(x)) * z\n" + "    t = sin(t) * z\n" * 10 + "    return sum(t)\n")
    x, z = np.linspace(-1.0, 1.0, 64), np.linspace(0.5, 1.0, 200)
    peaks = []
    real = one_hot.moved_output

    def measured(*args):
        tracemalloc.start()
        try:
            return real(*args)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    monkeypatch.setattr(one_hot, "moved_output", measured)
    assert check_gradient(str(path), {"x": x, "z": z}, wrt=["x"]).passed
    stack = 4 * x.size * z.size * 8
    assert peaks and max(peaks) < 4 * stack, [p / stack for p in peaks]


def test_a_wrong_lifting_of_a_middle_input_is_caught(monkeypatch, tmp_path):
    # each input's pass is lifted apart: checking only the first input's first point and the
    # last input's last trusted a middle input's wrong rows
    real = one_hot.WHOLE_REDUCTIONS["sum"]
    monkeypatch.setitem(one_hot.WHOLE_REDUCTIONS, "sum",
                        lambda m, out_base: out_base + 0 * m.values if m.base.size == 31 else real(m, out_base))
    path = tmp_path / "three.py"
    path.write_text("def f(a, b, c):\n    return sum(a * a) + sum(sin(b)) + sum(c * c * c)\n")
    target = api.load(str(path))
    at = {"a": np.linspace(-1, 1, 30), "b": np.linspace(-1, 1, 31), "c": np.linspace(-1, 1, 32)}
    inputs, objective, f0, names, steps = setup(target, at)
    assert one_hot_differences(target, None, objective, inputs, names, steps, f0) is None
