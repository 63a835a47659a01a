"""Compiled replay of array traces (diff/replay_arrays.py): a sweep plan's reverse sweep, one
generated function traced from the rules table on probes, gives the planned sweep's numbers and
notes to the last bit (and so the interpreter's), on every array rule of the table, on programs
with loops, matrices and indexing, and on random programs; a rule that writes into its argument,
or meets a value its traced path did not take, is called as it is."""
from __future__ import annotations

import gc
import random
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
from autodiff.engine.core.backend import np as backend_np
from autodiff.engine.core.backend import seen_through
from autodiff.engine.core.rules.comparisons import ASSUMED_FINITE, zero_where_zero
from autodiff.engine.diff import replay_arrays, reverse, rule_tracer
from autodiff.engine.diff.bits import same_bits
from autodiff.engine.diff.function import Function
from autodiff.engine.diff.replay import replay_adjoints, replay_values
from autodiff.engine.diff.replay_arrays import make_sweep, worth_making
from autodiff.engine.diff.replay_results import latest
from autodiff.engine.diff.replay_sweep import planned_adjoints, sweep_plan
from autodiff.engine.diff.rule_tracer import Probe, Tracer
from autodiff.engine.lang.target import load
from test_region_schedule import random_expression
from test_replay_compiled import builtin_calls
from test_replay_sweep import PROGRAMS


@pytest.fixture(autouse=True)
def made_at_once(monkeypatch):
    """Functions made at the first planned sweep (the tests' calls are few)."""
    monkeypatch.setattr(replay_arrays, "SWEEP_SECONDS_PER_ROW", 0.0)


def array_cases():
    """One call per differentiable builtin of the table that takes arrays, and the operators."""
    return builtin_calls("sum({}(x))", "sum({}(x, y))", {"x": np.array([0.5, 0.25]), "y": np.array([0.75, 0.5])}) + [
        "sum(x * y)", "sum(x / y)", "sum(x ** y)", "sum(-x + 2.0 * y)", "sum(x * x * y - y / 3.0)",
        "sum(abs(x - y) + maximum(x, 0.5))", "sum(sin(x) * cos(y) + exp(-x * x))", "max(x) * min(y)",
        "sum(x[1:] * y[:-1]) + x[0]", "sum(sqrt(x) * y)", "sum(x @ y) + sum(sum(x * y))"]


CASES = array_cases()
POINTS = [(np.array([0.6, 1.3, -0.4]), np.array([1.1, 0.2, 2.0])),
          (np.array([0.0, 0.0, 1.0]), np.array([0.0, 3.0, -1.0])),
          (np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0])),
          (np.array([-2.5, 1e-300, 1e300]), np.array([0.5, 0.5, 0.5])),
          (np.array([2.0, np.inf, 0.5]), np.array([1.0, 0.0, -0.0]))]


def made(f):
    """Each of the trace's sweep plans' generated sweeps (None: not made yet, False: none)."""
    trace = latest(next(entry for entry in f.traces.values() if entry))
    return [plan.array_sweep for plan in trace.annotations.values() if hasattr(plan, "array_sweep")]


def assert_same_result(replayed, interpreted):
    assert same_bits(replayed.value, interpreted.value)
    assert list(replayed.gradient) == list(interpreted.gradient)
    for name in interpreted.gradient:
        assert same_bits(replayed.gradient[name], interpreted.gradient[name]), name
    assert replayed.kinks == interpreted.kinks


@pytest.mark.parametrize("expr", CASES)
def test_every_array_rule_compiles_to_the_interpreters_bits(expr):
    target = load(expr)
    f = Function(target=target)
    first = {"x": np.array([0.7, 1.2, 0.3]), "y": np.array([0.9, 0.4, 1.5])}
    first = {k: v for k, v in first.items() if k in target.inputs}
    for _ in range(3):
        f.grad_result(first)                    # plain, recorded, then replayed: the functions made
    sweeps = made(f)
    assert sweeps and all(sweeps), expr
    for x, y in POINTS:
        at = {k: v for k, v in (("x", x), ("y", y)) if k in target.inputs}
        try:
            interpreted = reverse.grad(None, at, target=target)
        except autodiff.SourceError:
            continue
        replayed = f.grad_result(at)
        assert_same_result(replayed, interpreted)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_loops_matrices_and_indexing_replay_compiled_to_the_bit(tmp_path, name):
    source, make = PROGRAMS[name]
    path = tmp_path / "program.py"
    path.write_text(source.lstrip())
    f = Function(str(path))
    at = make(np.random.default_rng(0))
    for _ in range(3):
        f.grad_result(at)
    sweeps = made(f)
    assert sweeps and all(sweeps)
    for seed in range(1, 6):
        point = make(np.random.default_rng(seed))
        assert_same_result(f.grad_result(point), reverse.grad(None, point, target=f.target))
        assert same_bits(f(point), reverse.evaluate(None, point, target=f.target).value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1))
def test_random_array_programs_replay_compiled_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    text = f"sum({random_expression(random.Random(seed), 3, negations=True)} * x + y)"
    target = load(text)
    f = Function(target=target)
    first = {"x": rng.normal(size=4), "y": rng.normal(size=4)}
    for _ in range(3):
        f.grad_result(first)
    for _ in range(3):
        at = {"x": rng.normal(size=4), "y": rng.normal(size=4)}
        assert_same_result(f.grad_result(at), reverse.grad(None, at, target=target))


def recorded_trace(expr, at):
    target = load(expr)
    f = Function(target=target)
    f.grad_result(at)
    f.grad_result(at)
    return latest(next(iter(f.traces.values())))


def test_a_sweep_whose_result_is_not_finite_gives_way_to_the_checked_one():
    """The generated sweep skips the strong zero's per-product finiteness tests. Replayed where
    sqrt's adjoint at 0 is 0 / 0 (its adjoint g y is 0 there), its result holds that nan; the
    caller sees it and runs the checked sweep, whose mask gives 0, as the interpreter does."""
    expr = "sum(sqrt(x) * y)"
    at = {"x": np.array([1.0, 4.0]), "y": np.array([2.0, 3.0])}
    trace = recorded_trace(expr, at)
    values = replay_values(trace, list(at.values()))
    plan = sweep_plan(trace, [0, 1])
    sweep = make_sweep(trace, plan, values, trace.output, 1.0, [0, 1])
    assert sweep is not None and "reduce" not in sweep.text
    off = [np.array([0.0, 4.0]), np.array([0.0, 3.0])]
    values = replay_values(trace, off)
    assert np.isnan(sweep.run(values, 1.0)[0][0])
    plan.array_sweep = sweep
    expected = planned_adjoints(trace, plan, values, trace.output, 1.0)
    _, got = replay_adjoints(trace, values, 1.0, [0, 1])
    assert all(same_bits(a, expected[i]) for a, i in zip(got, [0, 1]))
    assert got[0][0] == 0.0 and np.isfinite(got[0]).all()
    f = Function(target=load(expr))
    for _ in range(3):
        f.grad_result(at)
    point = dict(zip(at, off))
    assert_same_result(f.grad_result(point), reverse.grad(None, point, target=f.target))


def test_a_rule_that_writes_into_its_argument_is_called_as_it_is():
    def writes_into_argument(g, x):
        g += x                                  # the caller's buffer: never a line
        return g

    def writes_into_its_own(g, x):
        out = g * 1.0
        out += x                                # a buffer the rule made: a line
        return out

    for rule, traced in ((writes_into_argument, False), (writes_into_its_own, True)):
        tracer = Tracer({}, set())
        g, x = np.array([1.0, 2.0]), np.array([0.5, 0.5])
        lines = []
        result = tracer.apply(rule, [Probe("g", g.copy(), tracer), Probe("x", x, tracer)], {}, "r", lines)
        calls = [line for line in lines if "(g, x)" in line]
        assert bool(calls) is not traced, (rule.__name__, lines)
        assert same_bits(result.example, g + x)


def test_inputs_of_another_layout_take_the_planned_sweep():
    """strides are one of a made function's facts: a transposed input of the same shape is not
    swept by it (a sum over it may add in another order)."""
    x = np.arange(6.0).reshape(2, 3)
    trace = recorded_trace("sum(sum(x * x, 1))", {"x": x})
    values = replay_values(trace, [x])
    sweep = make_sweep(trace, sweep_plan(trace, [0]), values, trace.output, 1.0, [0])
    assert sweep.leaves.take([1.0, x])
    assert not sweep.leaves.take([1.0, np.arange(6.0).reshape(3, 2).T])
    assert not sweep.leaves.take([1.0, x.astype(np.float32)])
    assert not sweep.leaves.take([np.float64(1.0), x])


def test_device_values_make_no_function(monkeypatch):
    x = np.arange(3.0)
    trace = recorded_trace("sum(x * x)", {"x": x})
    values = replay_values(trace, [x])
    monkeypatch.setattr(replay_arrays, "xp", lambda: object())      # another array module is active
    assert make_sweep(trace, sweep_plan(trace, [0]), values, trace.output, 1.0, [0]) is None


def test_a_function_is_made_once_the_replays_have_paid_for_it(monkeypatch):
    monkeypatch.setattr(replay_arrays, "SWEEP_SECONDS_PER_ROW", 80e-6)
    assert not worth_making(0.0079, 100)
    assert worth_making(0.0080, 100)


def test_a_function_made_replays_only_after_enough_step_replays(monkeypatch):
    monkeypatch.setattr(replay_arrays, "SWEEP_SECONDS_PER_ROW", 3600.0)
    f = Function(target=load("sum(x * x)"))
    for _ in range(5):
        f.grad_result({"x": np.array([1.0, 2.0])})
    sweeps = made(f)
    assert sweeps and all(sweep is None for sweep in sweeps)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_rules_such_programs_use_are_traced_into_lines(tmp_path, monkeypatch, name):
    """Every adjoint rule of these programs becomes lines: sums, products, matrix products,
    indexing, tanh, exp, maximum, and the sweep's accumulation; only an adjoint summed down to a
    number input is called as it is (plain_scalar reads the sum out with float(): 18 ns, where
    item(), which a probe could follow, takes 238 ns on every reduction of the engine)."""
    source, make = PROGRAMS[name]
    path = tmp_path / "program.py"
    path.write_text(source.lstrip())
    monkeypatch.setattr(rule_tracer, "WHY", [])
    f = Function(str(path))
    at = make(np.random.default_rng(0))
    for _ in range(3):
        f.grad_result(at)
    assert all(made(f))
    assert {why for _, why in rule_tracer.WHY} <= {"the value read out"}
    if name == "recurrent":                 # no number input
        assert rule_tracer.WHY == []


def test_another_thread_keeps_its_finiteness_tests_and_numpy_while_a_sweep_is_traced():
    """The tracing thread's assumptions are its own: meanwhile, another thread's strong zero still
    masks, and its numpy calls are numpy's."""
    seen = {}

    def other():
        g, factor = np.array([0.0, 1.0]), np.array([np.inf, 2.0])
        with np.errstate(invalid="ignore"):     # 0 * inf, in a thread of its own numpy state
            seen["masked"] = zero_where_zero(g, g * factor, factor)
        seen["zeros"] = backend_np().zeros(2)

    tracer = Tracer({}, set(), assume_finite=True)
    ASSUMED_FINITE[0] = threading.get_ident()
    try:
        with seen_through(tracer.numpy):
            worker = threading.Thread(target=other)
            worker.start()
            worker.join()
    finally:
        ASSUMED_FINITE[0] = None
    assert same_bits(seen["masked"], np.array([0.0, 2.0]))
    assert type(seen["zeros"]) is np.ndarray


def test_the_rows_of_the_sweeps_alive_stay_under_their_budget(monkeypatch):
    x = np.arange(3.0)
    trace = recorded_trace("sum(x * x + x)", {"x": x})
    values = replay_values(trace, [x])
    plan = sweep_plan(trace, [0])
    rows = plan.count
    monkeypatch.setattr(replay_arrays, "LIVE_ROWS_MAX", replay_arrays._live_rows[0] + rows)
    first = make_sweep(trace, plan, values, trace.output, 1.0, [0])
    assert first is not None
    assert make_sweep(trace, plan, values, trace.output, 1.0, [0]) is None       # over the budget
    del first                                                                 # its rows given back
    gc.collect()
    assert make_sweep(trace, plan, values, trace.output, 1.0, [0]) is not None


def test_a_float_adjoint_of_zero_in_a_generated_sweep_keeps_the_interpreters_plus_zero():
    """A number's part of an array program (c * arctan2(y, z)) swept with a float adjoint of 0
    (c = 0): tangent_times makes 0 times arctan2's negative partial in z +0.0, as the
    interpreter does; the generated sweep's skipped finiteness tests are an array's only (a
    number's adjoint is masked, not -0.0)."""
    target = load("sum(x * x) + c * arctan2(y, z)")
    f = Function(target=target)
    at = {"x": np.array([1.0, 2.0]), "c": 1.0, "y": 2.0, "z": 3.0}
    for _ in range(4):
        f.grad_result(at)
    assert all(made(f))
    at["c"] = 0.0
    replayed, fresh = f.grad_result(at), reverse.grad(None, at, target=target)
    for name in ("x", "c", "y", "z"):
        assert same_bits(replayed.gradient[name], fresh.gradient[name]), name
    assert same_bits(replayed.gradient["z"], 0.0)


def test_a_generated_sweep_lets_go_of_a_large_rules_temporaries_so_accumulate_adds_in_place():
    """sum(sum(D * D, 2)): the mul VJP's two products of the restored adjoint (a stride-0 view
    over rows of 8) are each taken into a copy of it; the line after each rule lets go of its
    temporaries, so the product is the sweep's alone and the second contribution is added into
    the first (core/accumulate.py), not into a third array; small rules' lines let go of nothing."""
    D = np.random.default_rng(3).normal(size=(1000, 20, 8))
    trace = recorded_trace("sum(sum(D * D, 2))", {"D": D})
    values = replay_values(trace, [D])
    plan = sweep_plan(trace, [0])
    sweep = make_sweep(trace, plan, values, trace.output, 1.0, [0])
    lines = sweep.text.splitlines()
    assert any("out=" in line for line in lines)          # the products into copies (broadcast_rows.times)
    released = [i for i, line in enumerate(lines) if line.strip().endswith("= None") and line.strip().startswith("t")]
    accumulated = [i for i, line in enumerate(lines) if "= k" in line and line.strip().startswith("g") and ", c)" in line]
    assert released and accumulated and max(released) < accumulated[0]
    expected = planned_adjoints(trace, plan, values, trace.output, 1.0)[0]
    import tracemalloc
    sweep.run(values, 1.0)
    tracemalloc.start()
    try:
        got = sweep.run(values, 1.0)[0]
        peak = tracemalloc.get_traced_memory()[1] / D.nbytes
    finally:
        tracemalloc.stop()
    assert same_bits(got, expected)
    assert peak < 2.5            # the two products and the copy being made, no third sum array
    small = recorded_trace("sum(sum(D * D, 1))", {"D": np.ones((3, 4))})
    small_values = replay_values(small, [np.ones((3, 4))])
    small_sweep = make_sweep(small, sweep_plan(small, [0]), small_values, small.output, 1.0, [0])
    assert not any(line.strip().startswith("t") and line.strip().endswith("= None")
                   for line in small_sweep.text.splitlines())
