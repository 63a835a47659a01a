"""engine/checks/: finite differences with error estimates, verdicts, fast mode, the Python API."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import autodiff
from autodiff.engine.checks.gradient import TOLERANCES, check_gradient, judge, power_of_two_step


def only(report):
    assert len(report.rows) == 1
    return report.rows[0]


# ---- pass / fail -------------------------------------------------------------------------------

def test_seed_example_passes_with_tight_errors():
    r = autodiff.check_gradient("x**2*y + y + 2", at={"x": 3, "y": 4})
    assert r.passed and r.verdict == "pass"
    by = {e.label: e for e in r.entries}
    assert by["x"].claimed == 24.0 and by["y"].claimed == 10.0
    assert abs(by["x"].reference - 24.0) < 1e-8 and abs(by["y"].reference - 10.0) < 1e-8
    # the effective tolerance is far below gradcheck's atol 1e-5 + rtol 1e-3 * 24
    assert by["x"].tolerance + by["x"].error_estimate < 1e-3


def test_wrong_hand_gradient_fails_and_names_the_entry():
    r = check_gradient("x**2*y + y + 2", at={"x": 3, "y": 4}, grad={"x": "2*x*y", "y": "x**2"})
    assert not r.passed
    assert [e.label for e in r.failures] == ["y"]
    fail = r.failures[0]
    assert fail.claimed == 9.0 and fail.reference == 10.0
    assert "9" in fail.reason and "10" in fail.reason


def test_hand_gradient_of_numbers_and_arrays():
    ok = check_gradient("2*dot(x, x)", at={"x": np.arange(4.0)}, grad={"x": [0, 4, 8, 12]})
    assert ok.passed and len(ok.entries) == 4
    bad = check_gradient("2*dot(x, x)", at={"x": np.arange(4.0)}, grad={"x": [0, 4, 8, 13]})
    assert [e.label for e in bad.failures] == ["x[3]"]


def test_hand_gradient_shape_mismatch_is_an_input_error():
    with pytest.raises(autodiff.SourceError, match="shape"):
        check_gradient("sum(x)", at={"x": np.arange(4.0)}, grad={"x": [1, 1, 1]})


def test_hand_gradient_for_an_unknown_input_is_an_input_error():
    with pytest.raises(autodiff.SourceError, match="not an input"):
        check_gradient("x**2", at={"x": 1.0}, grad={"z": "2*x"})


def test_error_estimate_bounds_the_actual_fd_error():
    # d/dx exp(3x) = 3 exp(3x): FD with Richardson must be within its own estimate of the truth
    for x in (-1.0, 0.3, 2.0):
        row = only(check_gradient("exp(3*x)", at={"x": x}))
        exact = 3 * math.exp(3 * x)
        assert abs(row.reference - exact) <= row.error_estimate
        assert row.verdict == "pass"


@settings(max_examples=25, deadline=None)
@given(x=st.floats(-3, 3), y=st.floats(0.2, 3))
def test_no_false_failures_on_smooth_functions(x, y):
    r = check_gradient("sin(x*y) * exp(-x**2) + log(y) * x**3", at={"x": x, "y": y})
    assert r.passed, [(e.label, e.reason) for e in r.failures]


@settings(max_examples=20, deadline=None)
@given(x=st.floats(-3, 3), y=st.floats(0.2, 3), which=st.sampled_from(["x", "y"]))
@example(x=-0.9453125, y=1.0625, which="y")     # d/dy = -1.0026: + 1e-4 cancelled the relative error
def test_a_relative_error_of_1e_4_is_caught(x, y, which):
    ad = autodiff.grad("sin(x*y) * exp(-x**2) + log(y) * x**3", at={"x": x, "y": y}).gradient
    wrong = dict(ad)
    # the error grows the magnitude (a relative 1e-4, and 1e-4 more near 0): it never cancels
    wrong[which] = ad[which] * (1 + 1e-4) + math.copysign(1e-4, ad[which])
    r = check_gradient("sin(x*y) * exp(-x**2) + log(y) * x**3", at={"x": x, "y": y}, grad=wrong, mode="fast",
                       seed=3)
    assert not r.passed
    assert which in [e.label for e in r.failures]


def test_steps_are_powers_of_two_near_the_relative_step():
    for x in (0.0, 1e-3, 3.0, -250.0, 1e8):
        h = power_of_two_step(x, TOLERANCES["float64"].step)
        assert math.log2(h) == int(math.log2(h))
        assert (x + h) - x == h and x - (x - 2 * h) == 2 * h
        assert 0.5 <= h / (TOLERANCES["float64"].step * max(abs(x), 1)) <= 2


# ---- verdicts: branch, kink, non-finite ----------------------------------------------------------

def test_branch_when_a_step_flips_an_if():
    row = only(check_gradient("x*x if x < 1 else 3*x - 2", at={"x": 1.0}))
    assert row.verdict == "branch"
    assert "line 1" in row.reason and "flips" in row.reason
    assert check_gradient("x*x if x < 1 else 3*x - 2", at={"x": 1.0}).passed   # branch warns, never fails


def test_branch_in_a_program_names_the_decision(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text("def f(x):\n    if x < 1:\n        return x * x\n    return 5 * x\n")
    row = only(check_gradient(str(prog), at={"x": 1.0}))
    assert row.verdict == "branch" and "line 2, column 8" in row.reason


def test_no_branch_away_from_the_switch():
    row = only(check_gradient("x*x if x < 1 else 3*x - 2", at={"x": 0.5}))
    assert row.verdict == "pass"


@pytest.mark.parametrize("source,left,right,convention", [
    ("abs(x)", -1.0, 1.0, "abs at 0"),
    ("relu(x)", 0.0, 1.0, "relu at 0"),
])
def test_kink_at_zero_shows_both_slopes_and_the_convention(source, left, right, convention):
    r = check_gradient(source, at={"x": 0.0})
    row = only(r)
    assert row.verdict == "kink" and r.passed
    assert row.left == pytest.approx(left) and row.right == pytest.approx(right)
    assert row.claimed == 0.0                          # the engine's convention: derivative 0
    assert convention in row.reason


def test_kink_between_the_steps_is_found_too():
    r = check_gradient("abs(x - 1e-7)", at={"x": 0.0})
    assert only(r).verdict == "kink"


def test_a_jump_is_not_differentiable():
    row = only(check_gradient("sign(x) + x", at={"x": 0.0}))
    assert row.verdict == "kink" and "jumps" in row.reason


def test_smooth_function_with_large_curvature_is_no_kink():
    row = only(check_gradient("1e6 * x**2", at={"x": 0.0}))
    assert row.verdict == "pass"


def test_non_finite_gradient_fails():
    r = check_gradient("sqrt(x)", at={"x": 0.0})
    assert only(r).verdict == "non-finite" and not r.passed


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_a_non_finite_claim_fails_even_where_ad_gives_the_same(mode):
    """Issue 27 item 10: inf claimed and inf computed is no evidence, as --check's own verdict."""
    for claim, at in ((math.inf, 0.0), (math.nan, -1.0), ("1/x", 0.0)):
        r = check_gradient("log(x)", at={"x": at}, grad={"x": claim}, mode=mode, seed=1)
        rows = r.full.rows if mode == "fast" else r.rows
        assert not r.passed and rows[0].verdict == "non-finite", (claim, at)
        assert rows[0].reason.endswith("not finite")


def test_a_non_finite_claim_fails_in_a_check_file_and_the_pytest_plugin(tmp_path):
    case = tmp_path / "inf.grad.toml"
    case.write_text('[[case]]\nf = "log(x)"\nat = { x = 0 }\ngrad = { x = inf }\n')
    run = subprocess.run([sys.executable, "-m", "autodiff", "check", str(case)], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "x: non-finite: hand-derived inf, AD inf: not finite" in run.stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    plugin = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--autodiff-check"],
                            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert plugin.returncode == 1 and "1 failed" in plugin.stdout and "not finite" in plugin.stdout


def test_non_finite_function_values_near_a_domain_edge_fail():
    r = check_gradient("log(x)", at={"x": 1e-9})
    row = only(r)
    assert row.verdict == "non-finite" and "x-h" in row.reason


# ---- dtypes --------------------------------------------------------------------------------------

F32_SOURCE = "sum(exp(x) * sin(3*x))"


def test_float32_passes_with_float32_tolerances_where_float64_ones_falsely_fail():
    x = np.linspace(-1, 1, 9)
    r32 = check_gradient(F32_SOURCE, at={"x": x}, dtype="float32")
    assert r32.passed, [(e.label, e.reason) for e in r32.failures]
    # float64's tolerances (rtol 1e-6, atol 1e-9) applied to the same numbers would fail entries...
    t64 = TOLERANCES["float64"]
    too_strict = [e for e in r32.entries if e.abs_err > t64.atol + t64.rtol * abs(e.reference)]
    assert too_strict
    # ...and so would gradcheck's fixed step in float32 (eps 1e-6, i.e. float64's step profile)
    r64 = check_gradient(F32_SOURCE, at={"x": x}, dtype="float32", profile="float64")
    assert max(e.abs_err for e in r64.entries) > 10 * max(e.abs_err for e in r32.entries)
    # and the gradient really is right: float64 agrees with float32's AD to float32 precision
    g64 = autodiff.grad(F32_SOURCE, at={"x": x}).gradient["x"]
    g32 = np.array([e.claimed for e in r32.entries])
    assert np.allclose(g32, g64, rtol=1e-5, atol=1e-6)


def test_float32_steps_are_larger():
    r = check_gradient("x**3", at={"x": 2.0}, dtype="float32")
    assert only(r).step > 1e-3 and r.passed


# ---- array outputs -------------------------------------------------------------------------------

def test_array_output_checks_the_gradient_of_the_sum():
    r = check_gradient("x * x", at={"x": np.arange(4.0)})
    assert r.passed and [e.claimed for e in r.entries] == [0.0, 2.0, 4.0, 6.0]


def test_array_output_with_a_seed_checks_vjp():
    r = check_gradient("x * x", at={"x": np.arange(3.0)}, output_seed=np.array([1.0, 0.0, 2.0]))
    assert r.passed and [e.claimed for e in r.entries] == [0.0, 0.0, 8.0]


# ---- fast mode -----------------------------------------------------------------------------------

def test_fast_mode_uses_five_evaluations_whatever_the_size():
    for n in (10, 1000):
        r = check_gradient("sum(tanh(x) * x**2)", at={"x": np.linspace(-2, 2, n)}, mode="fast", seed=1)
        assert r.passed and r.evaluations == 5 and r.projection.verdict == "pass"


def test_fast_mode_finds_a_planted_wrong_entry_among_1000_inputs():
    x = np.linspace(-2, 2, 1000)
    src = "sum(tanh(x) * x**2)"
    hand = np.tanh(x) * 2 * x + x ** 2 / np.cosh(x) ** 2     # the right gradient, derived by hand
    assert check_gradient(src, at={"x": x}, grad={"x": hand}, mode="fast", seed=11).passed
    hand[617] *= 1.01                                          # one entry wrong by 1%
    r = check_gradient(src, at={"x": x}, grad={"x": hand}, mode="fast", seed=11)
    assert not r.passed and r.seed == 11
    assert r.projection.verdict == "fail"
    assert [e.label for e in r.failures] == ["x[617]"]           # the full recomputation names it


def test_fast_mode_is_reproducible_from_its_seed():
    at = {"x": np.linspace(0, 1, 50)}
    a = check_gradient("sum(sin(x))", at=at, mode="fast", seed=123)
    b = check_gradient("sum(sin(x))", at=at, mode="fast", seed=123)
    c = check_gradient("sum(sin(x))", at=at, mode="fast", seed=124)
    assert a.projection.claimed == b.projection.claimed != c.projection.claimed
    assert check_gradient("sum(sin(x))", at=at, mode="fast").seed is not None


def test_fast_mode_reports_a_branch_in_the_direction():
    r = check_gradient("x*x if x < 1 else 3*x - 2", at={"x": 1.0}, mode="fast", seed=0)
    assert r.projection.verdict == "branch" and r.passed


# ---- judge directly ------------------------------------------------------------------------------

def test_judge_fail_needs_more_than_tolerance_plus_estimate():
    tol = TOLERANCES["float64"]
    h = 2.0 ** -17
    f = lambda x: 2 * x        # noqa: E731  exact line: FD = 2
    row = judge("x", 2.0 + 1e-3, f(0), f(h), f(-h), f(2 * h), f(-2 * h), h, tol)
    assert row.verdict == "fail"
    row = judge("x", 2.0 + 1e-10, f(0), f(h), f(-h), f(2 * h), f(-2 * h), h, tol)
    assert row.verdict == "pass"


# ---- batched perturbed runs ----------------------------------------------------------------------

BATCHABLE = [
    "sum(x**2 * sin(x))",
    "norm(x) * x[3] + dot(x, x) / len(x)",
    "mean(x * y) + max(y) - sum(reshape(x, 10, 10), 0)[2]",
]


@pytest.mark.parametrize("source", BATCHABLE)
def test_batched_runs_agree_with_the_loop(source, monkeypatch):
    import autodiff.engine.checks.differences as check
    rng = np.random.default_rng(0)
    at = {"x": rng.uniform(-1, 1, 100)}
    if "y" in source:
        at["y"] = rng.uniform(-1, 1, 100)
    batched = check_gradient(source, at=at)
    monkeypatch.setattr(check, "BATCH_MIN_ENTRIES", 10 ** 9)
    looped = check_gradient(source, at=at)
    assert batched.batched and not looped.batched
    assert batched.passed and looped.passed
    for a, b in zip(batched.entries, looped.entries):
        assert a.verdict == b.verdict
        assert abs(a.reference - b.reference) <= a.error_estimate + b.error_estimate


def test_a_program_that_branches_on_its_values_is_batched_with_its_guards_checked_per_point(tmp_path, monkeypatch):
    # a branch per element (80 guards): batch.py's Batched arrays refused it (the loop ran it); the
    # batched replay checks each guard at each point, and none crosses here
    from autodiff.engine.checks import differences
    prog = tmp_path / "p.py"
    prog.write_text("def f(x):\n    s = 0\n    for xi in x:\n        if xi > 0:\n            s = s + xi * xi\n"
                    "        else:\n            s = s - xi\n    return s\n")
    x = np.linspace(-1, 1, 80) + 0.003
    r = check_gradient(str(prog), at={"x": x})
    assert r.batched and r.passed
    assert all(e.verdict == "pass" for e in r.entries)
    monkeypatch.setattr(differences, "BATCH_MIN_ENTRIES", 10 ** 9)
    looped = check_gradient(str(prog), at={"x": x})
    row = lambda e: (e.label, e.verdict, e.claimed)      # noqa: E731
    assert [row(e) for e in r.entries] == [row(e) for e in looped.entries]


@pytest.mark.parametrize("budget, passes", [(None, 1), (8 * 210, 35)])
def test_a_full_check_that_one_hot_stacks_cannot_follow_runs_batched_replay_passes(budget, passes, monkeypatch):
    """issue 28 item 2: where one-hot stacks cannot follow the trace (a matmul), the perturbed
    points go through the batched replay of the same trace the Jacobian checks use (chunked by
    its budget: 8 rows of A @ x's 3 x 70 numbers a pass, 2 entries), not a second interpreter
    and not the point loop; the rows are the loop's."""
    from autodiff.engine.checks import differences
    from autodiff.engine.checks.differences import Objective, full_check
    from autodiff.engine import api
    from autodiff.engine.diff import batched_replay
    from autodiff.engine.diff.function import ReplayRunner
    rng = np.random.default_rng(3)
    target = api.load("sum(A @ x)")
    inputs = {"x": rng.uniform(0.1, 1, 70), "A": rng.uniform(-1, 1, (3, 70))}
    claimed = {"x": inputs["A"].sum(axis=0)}
    tol = TOLERANCES["float64"]
    if budget is not None:
        monkeypatch.setattr(batched_replay, "STACK_BUDGET_ELEMENTS", budget)
    objective = Objective(ReplayRunner(target, None))
    rows, f0 = full_check(objective, inputs, claimed, tol, ["x"])
    assert objective.batched and not objective.one_hot and objective.passes == passes
    assert objective.fallbacks == {"a one-hot stack cannot follow matmul of a one-hot value": 1}
    assert objective.count == 1 + 4 * 70 + 1          # f0, then 4n + 1 as batches count
    monkeypatch.setattr(differences, "BATCH_MIN_ENTRIES", 10 ** 9)
    looped = Objective(ReplayRunner(target, None))
    want, f0_looped = full_check(looped, inputs, claimed, tol, ["x"])
    assert not looped.batched and looped.passes == 0 and looped.count == 1 + 4 * 70
    assert f0 == f0_looped and [r.verdict for r in rows] == ["pass"] * 70
    assert [vars(r) for r in rows] == [vars(r) for r in want]


def test_a_batched_point_whose_branch_flips_runs_by_itself_with_the_loops_reason(monkeypatch):
    """issue 28 item 2: a trace with guards is batched too (batch.py's Batched arrays refused a
    branch on a value); each guard is checked at each point, and the points whose decision
    differs (x[0] - h, x[0] - 2h here) are run one by one, as the loop runs them: the same
    values, the same branch reason, one pass."""
    from autodiff.engine import api
    from autodiff.engine.checks import differences
    from autodiff.engine.checks.differences import Objective, full_check
    from autodiff.engine.diff.function import ReplayRunner
    target = api.load("sum(x * x) if x[0] > 0 else sum(x)")
    x = np.linspace(-1, 1, 70)
    x[0] = 2.0 ** -20                         # within a step of 0: its -h and -2h points take the else
    claimed = {"x": 2 * x}
    tol = TOLERANCES["float64"]
    objective = Objective(ReplayRunner(target, None))
    rows, f0 = full_check(objective, {"x": x}, claimed, tol, ["x"])
    assert objective.batched and objective.passes == 1 and objective.count == 1 + 4 * 70 + 1
    assert objective.fallbacks == {differences.GUARDED_ONE_HOT: 1}
    monkeypatch.setattr(differences, "BATCH_MIN_ENTRIES", 10 ** 9)
    looped = Objective(ReplayRunner(target, None))
    want, _ = full_check(looped, {"x": x}, claimed, tol, ["x"])
    assert not looped.batched
    assert rows[0].verdict == "branch" and rows[0].reason == ("x[0]-h flips the decision at line 1, column 15 "
                                                              "(True -> False): FD crossed a branch")
    assert [vars(r) for r in rows] == [vars(r) for r in want]


# issue 29: the batched check takes every keyword the plain run takes (it ran from 64 entries on and
# refused max(x, axis=0, keepdims=True) with exit 2). (source, whether the batched replay of the trace
# runs its perturbed points: logsumexp's trace has a guard on its values that most points read otherwise,
# so they run one by one)
KEYWORD_CALLS = [
    ("sum(exp(x - max(x, axis=0, keepdims=True)))", True),
    ("sum(x * sum(x, axis=0, keepdims=True))", True),
    ("sum(x * mean(x, axis=0, keepdims=True))", True),
    ("sum(x * min(x, axis=0, keepdims=True))", True),
    ("sum(x * max(x, keepdims=True))", True),
    ("x.sum(axis=0, keepdims=True)[0] * x.max(axis=0)", True),
    ("sum(X * max(X, axis=1, keepdims=True))", True),
    ("sum(X * sum(X, axis=(0, 1), keepdims=True))", True),
    ("sum(X * mean(X, axis=-1, keepdims=True)**2)", True),
    ("sum(prod(X, axis=1, keepdims=True))", True),
    ("sum(norm(X, ord=1, axis=0, keepdims=True))", True),
    ("norm(x, ord=3)", True),
    ("sum(transpose(X, axes=(1, 0))[0] * X[0])", True),
    ("std(x, ddof=1)", True),
    ("sum(var(X, axis=0, ddof=1, keepdims=True))", True),
    ("sum(logsumexp(X, axis=1, keepdims=True))", False),
    ("sum(cumsum(X, axis=1) * X)", True),
]


@pytest.mark.parametrize("source, by_batch", KEYWORD_CALLS)
def test_the_batched_check_takes_every_keyword_the_plain_run_takes(source, by_batch, monkeypatch):
    import autodiff.engine.checks.differences as check
    rng = np.random.default_rng(1)
    at = {"X": rng.uniform(0.5, 1.5, (8, 8))} if "X" in source else {"x": rng.uniform(0.5, 1.5, 64)}
    monkeypatch.setattr(check, "ONE_HOT", False)           # the batched replay (engine/checks/stacked_points.py)
    batched = check_gradient(source, at=at)
    monkeypatch.setattr(check, "BATCH_MIN_ENTRIES", 10 ** 9)
    looped = check_gradient(source, at=at)
    assert batched.batched == by_batch and not looped.batched
    assert batched.passed and looped.passed
    assert [e.label for e in batched.entries] == [e.label for e in looped.entries]
    for a, b in zip(batched.entries, looped.entries):
        assert a.verdict == b.verdict and a.claimed == b.claimed
        assert abs(a.reference - b.reference) <= a.error_estimate + b.error_estimate


def test_a_softmax_of_64_entries_checks_from_the_command_line():
    r = subprocess.run([sys.executable, "-m", "autodiff", "grad", "sum(exp(x - max(x, axis=0, keepdims=True)))",
                        "--at", "x=linspace(0,1,64)", "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "check passed" in r.stdout


def test_a_seeded_full_checks_batched_rows_are_the_point_loops_to_the_bit(monkeypatch):
    """Review: with an output seed v, a batched pass reduced its rows as table @ v and a point run
    alone as vdot(v, out): the two round apart (4 to 9 rows of 9 at n = 7 to 5000), so a check mixing
    batched and crossed rows compared differences rounded otherwise. One reduction now
    (one_hot.objective_rows), and the batched rows are the loop's field for field."""
    from autodiff.engine.checks import differences
    from autodiff.engine.checks.differences import Objective, full_check
    from autodiff.engine import api
    from autodiff.engine.diff.function import ReplayRunner
    rng = np.random.default_rng(5)
    target = api.load("np.tanh(A @ x) * 3.0")
    inputs = {"x": rng.uniform(0.1, 1, 70), "A": rng.uniform(-1, 1, (40, 70))}
    seed = rng.uniform(-1, 1, 40)
    h = np.tanh(inputs["A"] @ inputs["x"])
    claimed = {"x": inputs["A"].T @ (3.0 * (1 - h * h) * seed)}
    tol = TOLERANCES["float64"]
    objective = Objective(ReplayRunner(target, None), seed)
    rows, f0 = full_check(objective, inputs, claimed, tol, ["x"])
    assert objective.batched and not objective.one_hot
    monkeypatch.setattr(differences, "BATCH_MIN_ENTRIES", 10 ** 9)
    looped = Objective(ReplayRunner(target, None), seed)
    want, f0_looped = full_check(looped, inputs, claimed, tol, ["x"])
    assert not looped.batched and f0 == f0_looped
    assert [vars(r) for r in rows] == [vars(r) for r in want]
