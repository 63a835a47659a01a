"""Fallbacks are typed and counted (issue 28 item 6, engine/diff/fallbacks.py): a replay that
hands a run to the interpreter says why in `Function.fallbacks`; an error that is no fallback
(a bug in the replay) propagates instead of becoming a silent slowdown; AUTODIFF_STRICT=1
raises at a fallback that is neither a changed path nor a documented unsupported construct."""
import math

import numpy as np
import pytest

import autodiff
from autodiff.engine.core import fused
from autodiff.engine.diff import function, reverse
from autodiff.engine.diff.fallbacks import StrictFallback
from autodiff.engine.diff.replay_sweep import sweep_plan
from autodiff.engine.diff.function import Function, ReplayRunner
from autodiff.engine.lang.target import load

BRANCH = "def f(x):\n    if x > 0:\n        return x * x\n    return -x\n"
ARRAYS = {"x": np.array([0.5, 1.0, 2.0])}


def recorded(source, at, calls=3):
    """A Function that has replayed `source`'s gradient at `at` (the first run plain, the second
    recorded, the third replayed)."""
    f = Function(target=load(source, filename="program.py")) if source.startswith("def") else Function(source)
    for _ in range(calls):
        f.grad(at)
    assert f.replays == calls - 2 and f.interpreted == 2 and f.fallbacks == {}
    return f


def boom(*args, **kwargs):
    raise RuntimeError("the sweep's own bug")


def value_boom(*args, **kwargs):
    raise ValueError("a value the sweep refuses")


def test_a_replay_sweep_that_raises_propagates_instead_of_interpreting(monkeypatch):
    f = recorded("sum(sin(x) * x)", ARRAYS)
    monkeypatch.setattr(function.replaying, "replay_adjoints", boom)
    with pytest.raises(RuntimeError, match="the sweep's own bug"):      # no error a step may raise: as it is
        f.grad(ARRAYS)
    assert (f.replays, f.interpreted, f.fallbacks) == (1, 2, {})
    monkeypatch.setattr(function.replaying, "replay_adjoints", value_boom)
    with pytest.raises(ValueError, match="a value the sweep refuses") as err:   # one a step may raise: confirmed
        f.grad(ARRAYS)
    assert any("a bug in the replay" in note for note in err.value.__notes__)
    assert (f.replays, f.interpreted, f.fallbacks) == (1, 3, {})


def test_a_compiled_gradient_that_raises_propagates(monkeypatch):
    f = recorded("x * x", {"x": 3.0})
    monkeypatch.setattr(function.replaying, "compiled_grad", boom)
    with pytest.raises(RuntimeError, match="the sweep's own bug"):
        f.grad(x=3.0)
    monkeypatch.undo()
    assert f.grad(x=3.0) == {"x": 6.0} and f.replays == 2


def test_a_replayed_error_the_interpreter_makes_too_is_its_located_error(monkeypatch):
    f = recorded("sum(sin(x) * x)", ARRAYS)
    located = autodiff.SourceError("domain", "the interpreter's own message", None)

    def interpreter_fails(*args, **kwargs):
        raise located

    monkeypatch.setattr(function.replaying, "replay_adjoints", value_boom)
    monkeypatch.setattr(reverse, "grad", interpreter_fails)
    with pytest.raises(autodiff.SourceError) as err:
        f.grad(ARRAYS)
    assert err.value is located
    assert f.fallbacks == {"a replayed step raised ValueError": 1}


def test_a_changed_path_is_counted_by_its_reason():
    f = recorded(BRANCH, {"x": 1.0})
    assert f.grad(x=-1.0) == {"x": -1.0}                # recorded as a second path
    assert f.grad(x=-2.0) == {"x": -1.0}                # replayed on it
    assert f.fallbacks == {"path changed": 1} and (f.replays, f.interpreted) == (2, 3)


# a read no guard can state: a forward-mode derivative inside the program (issue 28 item 3: the
# recording run finds it, and every later run counts its reason)
JVP = "def g(t):\n    return t * t\ndef f(x):\n    return jvp(g, x, 1.0)[1] * x\n"
OTHER_DERIVATIVE = "a derivative inside the program other than grad or value_and_grad (hessian, jvp, vjp)"


def test_an_unsupported_construct_is_counted_by_its_reason():
    f = Function(target=load(JVP, filename="program.py"))
    assert f.blocker is None                            # nothing is decided before a run
    for _ in range(4):
        assert f.grad(x=2.0) == {"x": 8.0}               # d/dx (2x * x)
    assert f.blocker == OTHER_DERIVATIVE
    assert f.fallbacks == {OTHER_DERIVATIVE: 2} and (f.replays, f.interpreted) == (0, 4)
    g = Function("x * (x > 0)")                         # a comparison: a guard states it
    for x in (2.0, 2.0, 3.0, -1.0):
        g.grad(x=x)
    assert g.blocker is None and g.replays == 1 and g.fallbacks == {"path changed": 1}


def test_a_non_finite_result_and_a_refused_lowering_are_counted_by_their_reasons():
    f = recorded("1 / x", {"x": 1.0})
    assert f.grad(x=0.0) == {"x": -math.inf}            # numpy's -1/0**2, the interpreter's
    assert f.fallbacks == {"compiled float code raised ZeroDivisionError": 1, "non-finite result": 1}
    assert f.grad(x=2.0) == {"x": -0.25} and f.replays == 2


def doubled(replay_adjoints):
    def wrong(*args, **kwargs):
        length, adjoints = replay_adjoints(*args, **kwargs)
        return length, [None if a is None else a * 2 for a in adjoints]
    return wrong


def test_a_replay_that_differs_where_it_was_recorded_is_counted_and_not_kept(monkeypatch):
    monkeypatch.delenv("AUTODIFF_STRICT", raising=False)
    monkeypatch.setattr(function.replaying, "replay_adjoints", doubled(function.replaying.replay_adjoints))
    f = Function("sum(sin(x) * x)")
    for _ in range(3):
        gradient = f.grad(ARRAYS)["x"]
    x = ARRAYS["x"]
    np.testing.assert_array_equal(gradient, np.cos(x) * x + np.sin(x))
    assert f.fallbacks == {"a replayed gradient differs from the interpreter's": 1, "a recorded tape that could not be kept": 1}
    assert f.replays == 0


def test_strict_raises_at_a_fallback_that_is_not_documented(monkeypatch):
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    monkeypatch.setattr(function.replaying, "replay_adjoints", doubled(function.replaying.replay_adjoints))
    f = Function("sum(sin(x) * x)")
    f.grad(ARRAYS)
    with pytest.raises(StrictFallback, match="a replayed gradient differs from the interpreter's"):
        f.grad(ARRAYS)


def test_strict_lets_a_changed_path_and_a_documented_construct_through(monkeypatch):
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    f = recorded(BRANCH, {"x": 1.0})
    assert f.grad(x=-1.0) == {"x": -1.0} and f.fallbacks == {"path changed": 1}
    g = Function(target=load(JVP, filename="program.py"))
    assert [g.grad(x=2.0) for _ in range(3)] == [{"x": 8.0}] * 3 and g.fallbacks == {OTHER_DERIVATIVE: 1}
    h = recorded("1 / x", {"x": 1.0})                   # the interpreter's gradient is not finite either
    assert h.grad(x=0.0) == {"x": -math.inf}


def test_strict_raises_where_a_replay_is_not_finite_and_the_interpreter_is(monkeypatch):
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    f = recorded("sum(sin(x) * x)", ARRAYS)

    def not_finite(*args, **kwargs):
        return 3, [np.full(3, np.nan)]

    monkeypatch.setattr(function.replaying, "replay_adjoints", not_finite)
    with pytest.raises(StrictFallback, match="not finite where the interpreter's is"):
        f.grad(ARRAYS)


def test_the_checks_replay_runner_propagates_a_replay_bug_and_counts_a_changed_path(monkeypatch):
    runner = ReplayRunner(load(BRANCH, filename="program.py"))
    for _ in range(3):
        assert runner({"x": 1.0}) == 1.0
    assert runner({"x": -1.0}) == 1.0 and runner.fallbacks == {"path changed": 1}
    monkeypatch.setattr(function.replaying, "compiled_output", boom)
    with pytest.raises(RuntimeError, match="the sweep's own bug"):
        runner({"x": 2.0})


def test_function_and_the_checks_runner_file_and_confirm_by_one_helper(monkeypatch):
    # diff/function.py's file_trace and confirm: the one way each of Function and ReplayRunner
    # keeps a recorded trace and answers a replayed step's error
    filed, confirmed = [], []
    file_trace, confirm = function.file_trace, function.confirm
    monkeypatch.setattr(function, "file_trace", lambda traces, key, trace: (filed.append(traces),
                                                                            file_trace(traces, key, trace)))
    monkeypatch.setattr(function, "confirm", lambda error, fallbacks, interpret: (confirmed.append(fallbacks),
                                                                                  confirm(error, fallbacks, interpret)))
    f = Function(target=load(BRANCH, filename="program.py"))
    runner = ReplayRunner(load(BRANCH, filename="program.py"))
    for _ in range(3):
        assert f.grad(x=1.0) == {"x": 2.0} and runner({"x": 1.0}) == 1.0
    assert [traces is f.traces for traces in filed] == [True, False]
    assert filed[1] is runner.traces and f.replays == 1
    monkeypatch.setattr(function.replaying, "compiled_grad", value_boom)
    monkeypatch.setattr(function.replaying, "compiled_output", value_boom)
    for call in (lambda: f.grad(x=1.0), lambda: runner({"x": 1.0})):
        with pytest.raises(ValueError, match="a value the sweep refuses") as err:
            call()
        assert any("a bug in the replay" in note for note in err.value.__notes__)
    assert confirmed == [f.own_fallbacks, runner.own_fallbacks]
    assert confirmed[0] is f.own_fallbacks and confirmed[1] is runner.own_fallbacks


def made_sweep(f):
    """The generated array sweep of f's kept trace (replayed until one is made)."""
    for _ in range(200):
        f.grad(ARRAYS)
        trace = next(iter(f.traces.values()))
        if trace and sweep_plan(trace, [0]).array_sweep:
            return sweep_plan(trace, [0]).array_sweep
    raise AssertionError("no generated sweep made")


def test_a_generated_sweep_that_refuses_these_values_is_counted_and_the_planned_one_answers(monkeypatch):
    f = Function("sum(sin(x) * x)")
    sweep = made_sweep(f)
    expected = f.grad(ARRAYS)["x"]

    def refuses(values, seed):
        raise FloatingPointError("overflow")

    monkeypatch.setattr(sweep, "run", refuses)
    replays = f.replays
    np.testing.assert_array_equal(f.grad(ARRAYS)["x"], expected)
    assert f.replays == replays + 1 and f.fallbacks == {"generated sweep raised FloatingPointError": 1}
    monkeypatch.setattr(sweep, "run", boom)
    with pytest.raises(RuntimeError, match="the sweep's own bug"):
        f.grad(ARRAYS)


def checked_with(monkeypatch, run):
    """f's gradient replayed until its generated array sweep is made, the sweep made running
    `run(made, values, seed)` instead of its own code when it is checked against the planned one."""
    from autodiff.engine.diff import replay
    make = replay.make_sweep

    def making(*args):
        made = make(*args)
        if made is not None:
            own = made.run
            made.run = lambda values, seed: run(own, values, seed)
        return made
    monkeypatch.setattr(replay, "make_sweep", making)
    f = Function("sum(sin(x) * x)")
    for _ in range(200):
        f.grad(ARRAYS)
        trace = next(iter(f.traces.values()))
        if trace and sweep_plan(trace, [0]).array_sweep is not None:
            return f, sweep_plan(trace, [0]).array_sweep
    raise AssertionError("no generated sweep checked")


def test_a_generated_sweep_that_differs_or_refuses_when_checked_is_counted(monkeypatch):
    """Issue 28 item 6: a generated sweep is kept only where it gives the planned sweep's numbers
    at the values it is made at; one that differs (a lowering's bug) or raises there was dropped
    without a count, every later gradient silently taking the slower planned sweep."""
    monkeypatch.delenv("AUTODIFF_STRICT", raising=False)

    def doubled(own, values, seed):
        return [None if a is None else a * 2.0 for a in own(values, seed)]
    f, made = checked_with(monkeypatch, doubled)
    assert made is False and f.fallbacks == {"the generated sweep differs from the planned sweep": 1}
    np.testing.assert_array_equal(f.grad(ARRAYS)["x"], np.sin(ARRAYS["x"]) + ARRAYS["x"] * np.cos(ARRAYS["x"]))
    monkeypatch.undo()
    f, made = checked_with(monkeypatch, lambda own, values, seed: value_boom())
    assert made is False and f.fallbacks == {"generated sweep raised ValueError": 1}
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="the sweep's own bug"):
        checked_with(monkeypatch, lambda own, values, seed: boom())


def test_strict_raises_where_a_generated_sweep_differs_when_checked(monkeypatch):
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    with pytest.raises(StrictFallback, match="the generated sweep differs from the planned sweep"):
        checked_with(monkeypatch, lambda own, values, seed: [None if a is None else a + 1.0
                                                            for a in own(values, seed)])


def test_compiled_float_code_that_differs_from_the_step_replay_is_counted(monkeypatch):
    """Issue 28 item 6: compiled float code is kept only where it gives the step replay's numbers;
    where it did not, it was dropped without a count (every later call silently took the step
    replay). Counted once by its reason, raised under AUTODIFF_STRICT=1."""
    monkeypatch.delenv("AUTODIFF_STRICT", raising=False)
    from autodiff.engine.diff import replay_compiled
    compile_trace = replay_compiled.compile_trace

    def off_by_one_bit(trace, values):
        made = compile_trace(trace, values)
        gradient = made.gradient

        def differs(*args):
            value, adjoints = gradient(*args)
            return value, tuple(None if a is None else math.nextafter(a, math.inf) for a in adjoints)
        return replay_compiled.Compiled(made.forward, differs, made.tape_length, made.text)
    monkeypatch.setattr(replay_compiled, "compile_trace", off_by_one_bit)
    f = Function("sin(x) * x + x")
    points = [{"x": 0.25 + i / 1000} for i in range(80)]
    assert [f.grad(at)["x"] for at in points] == [reverse.grad(None, at, target=f.target).gradient["x"] for at in points]
    assert f.fallbacks == {"the compiled float code differs from the step replay": 1}
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    with pytest.raises(StrictFallback, match="the compiled float code differs from the step replay"):
        g = Function("sin(x) * x + x")
        for i in range(80):
            g.grad({"x": 0.25 + i / 1000})


CONSTANT_KINK = "a kink noted by a constant part of the program (only the interpreter runs those)"


def test_a_refused_path_of_a_value_is_interpreted_and_the_kept_paths_go_on_replaying(tmp_path):
    """The x > 1 path notes maximum's tie among constants, which only the interpreter runs: its
    recording is refused and kept as a refused path; calls on it are interpreted (the tie noted,
    as a fresh run notes it) and counted with that reason, and calls at x <= 1 go on replaying
    (before: the signature was filed as not replayable at the refusal, no call replayed again)."""
    path = tmp_path / "constant_tie.py"
    path.write_text("def f(x):\n    if x > 1.0:\n        return x + sum(maximum(arange(3.0) - 1, 0))\n"
                    "    return x * x\n")
    f = Function(str(path))
    for x in (0.25, 0.5, 0.75, 2.0, 0.125, 3.0, 0.375, 4.0):
        ours = f.evaluate_result({"x": x})
        fresh = reverse.evaluate(None, {"x": x}, target=f.target)
        assert ours.value == fresh.value == (x + 1.0 if x > 1.0 else x * x)
        assert ours.kinks == fresh.kinks and len(ours.kinks) == (x > 1.0)
    assert (f.replays, f.interpreted) == (3, 5)
    assert f.fallbacks == {"path changed": 1, CONSTANT_KINK: 1,
                           "a path whose recording was refused: " + CONSTANT_KINK: 2}


def test_a_large_inputs_path_whose_replayed_gradient_differs_is_refused_and_the_others_go_on_replaying(monkeypatch, tmp_path):
    """At large inputs the trace is recorded apart from the gradient and checked by replaying it
    (Function._check_replayed_grad). A replay sweep that errs (doubled) while the w > 0 path is
    checked refuses that path only: calls on it are interpreted, counted with the reason, and the
    w <= 0 path, recorded after the sweep is right again, goes on replaying (before: the whole
    signature was filed as not replayable, no call replayed)."""
    monkeypatch.delenv("AUTODIFF_STRICT", raising=False)
    right = function.replaying.replay_adjoints
    x = np.linspace(0.0, 1.0, fused.FUSE_MIN_ELEMENTS)
    path = tmp_path / "large_branch.py"
    path.write_text("def f(w, x):\n    if w > 0:\n        return sum(sin(x) * x) * w\n    return sum(x * x) * w\n")
    f = Function(str(path))
    f.grad({"w": 1.0, "x": x})                          # the first call: plain
    monkeypatch.setattr(function.replaying, "replay_adjoints", doubled(right))
    f.grad({"w": 1.0, "x": x})                          # records w > 0; its check's sweep errs
    monkeypatch.setattr(function.replaying, "replay_adjoints", right)
    for w in (-1.0, -2.0, 2.0, -3.0, 3.0, -0.5):
        ours = f.grad_result({"w": w, "x": x})
        fresh = reverse.grad(None, {"w": w, "x": x}, target=f.target)
        assert ours.value == fresh.value and ours.gradient["w"] == fresh.gradient["w"]
        np.testing.assert_array_equal(ours.gradient["x"], fresh.gradient["x"])
    assert (f.replays, f.interpreted) == (3, 7)       # a recording at large inputs: two runs
    assert f.fallbacks == {"a replayed gradient differs from the interpreter's": 1, "path changed": 1,
                           "a path whose recording was refused: a replayed gradient differs from the interpreter's": 2}


TIE = "a decision for the interpreter (a tie, a range refused)"


def test_a_tie_met_on_the_first_recorded_path_keeps_nothing_and_its_path_replays_at_other_points(tmp_path):
    """The second call records at x == 1, where `x <= 1.0` ties: its replay where it was recorded
    meets the tie, so nothing is kept and the next call records (the x > 1 path); a later call
    on the x <= 1 side records that path and the next one there replays (before: the tie's path
    was kept as refused, keyed by its decisions, so every call with x < 1 was interpreted as "a
    path whose recording was refused", though the tie holds at x == 1 only). The last call ties
    again: interpreted, as a tie always is."""
    path = tmp_path / "tie.py"
    path.write_text("def f(x):\n    if x <= 1.0:\n        return x * x\n    return x + 1.0\n")
    f = Function(str(path))
    for x in (0.5, 1.0, 2.0, 3.0, 4.0, 0.25, 0.75, 5.0, 1.0):
        ours = f.evaluate_result({"x": x})
        fresh = reverse.evaluate(None, {"x": x}, target=f.target)
        assert ours.value == fresh.value == (x * x if x <= 1.0 else x + 1.0) and ours.kinks == fresh.kinks
    assert (f.replays, f.interpreted) == (4, 5)
    assert f.fallbacks == {TIE: 2, "path changed": 1}
    g = Function("x * (x >= 0)")                        # recorded at the tie x == 0 first
    assert [g.evaluate_result({"x": x}).value for x in (0.0, 0.0, 1.0, 2.0, 3.0)] == [0.0, 0.0, 1.0, 2.0, 3.0]
    assert (g.replays, g.interpreted, g.fallbacks) == (2, 3, {TIE: 1})


def hessian_of(f, x):
    return f.hessian(x=np.array(x))["x"]["x"]


def fresh_hessian(f, x):
    from autodiff.engine.diff.higher import hessian
    return hessian(None, {"x": np.array(x)}, ["x"], target=f.target).hessian["x"]["x"]


def test_a_replayed_hessian_that_is_not_finite_is_counted_as_a_non_finite_result(monkeypatch):
    """A replayed Hessian whose blocks (or value) are not finite is the typed non-finite result
    (before: the documented 'declines these values', which the strict pass never checks); the
    interpreter's Hessian answers, and the kept trace goes on replaying."""
    monkeypatch.setenv("AUTODIFF_STRICT", "1")          # the interpreter's is not finite either
    f = Function("sum(x ** 1.5)")
    for _ in range(3):
        hessian_of(f, [1.0, 2.0])
    assert (f.replays, f.interpreted, f.fallbacks) == (1, 2, {})
    at_zero = hessian_of(f, [0.0, 2.0])                 # 0.75 / sqrt(0): inf
    np.testing.assert_array_equal(at_zero, fresh_hessian(f, [0.0, 2.0]))
    assert at_zero[0, 0] == math.inf and f.fallbacks == {"non-finite result": 1}
    np.testing.assert_array_equal(hessian_of(f, [4.0, 2.0]), fresh_hessian(f, [4.0, 2.0]))
    assert (f.replays, f.interpreted) == (2, 3)
    g = Function("x * x + exp(1000.0)")                 # an inf value, a finite Hessian: as the gradient's
    assert [g.hessian(x=3.0) for _ in range(4)] == [{"x": {"x": 2.0}}] * 4
    assert g.fallbacks == {"non-finite result": 2}


def test_strict_raises_where_a_replayed_hessian_is_not_finite_and_the_interpreters_is(monkeypatch):
    from autodiff.engine.diff import replay_higher
    f = Function("sum(x ** 1.5)")
    for _ in range(3):
        hessian_of(f, [1.0, 2.0])
    place_rows = replay_higher.place_rows

    def nan_rows(row_blocks, b, stacked_rows, span, block_shape):
        place_rows(row_blocks, b, stacked_rows * np.nan, span, block_shape)

    monkeypatch.setattr(replay_higher, "place_rows", nan_rows)
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    with pytest.raises(StrictFallback, match="a replayed hessian is not finite where the interpreter's is"):
        hessian_of(f, [1.0, 2.0])
    monkeypatch.delenv("AUTODIFF_STRICT")
    np.testing.assert_array_equal(hessian_of(f, [1.0, 2.0]), fresh_hessian(f, [1.0, 2.0]))
    assert f.fallbacks == {"non-finite result": 2}


def test_a_replayed_complex_hessian_that_is_not_finite_is_counted_as_a_non_finite_result(monkeypatch):
    from autodiff.engine.diff.higher import hessian
    monkeypatch.setenv("AUTODIFF_STRICT", "1")          # the interpreter's is not finite either
    f = Function("sum(real(z) ** 1.5)")
    for z in ([1 + 1j, 2.0], [1 + 1j, 2.0], [1 + 1j, 2.0], [1j, 2.0], [2 + 1j, 2.0]):
        ours = f.hessian(z=np.array(z))["z"]["z"]
        np.testing.assert_array_equal(ours, hessian(None, {"z": np.array(z)}, ["z"], target=f.target).hessian["z"]["z"])
    assert (f.replays, f.interpreted, f.fallbacks) == (2, 3, {"non-finite result": 1})


def test_a_replayed_forward_jacobian_or_gradient_that_is_not_finite_is_counted_as_a_non_finite_result(monkeypatch):
    """As the Hessian's: a forward-mode Jacobian or gradient replayed at a point where x ** 0.5's
    derivative is inf is the typed non-finite result (before: 'declines these values'), checked
    under AUTODIFF_STRICT=1 against the interpreter's, which is not finite either (sqrt notes its
    domain's edge there: a note, declined as before)."""
    from autodiff.engine.diff.forward import gradient, jacobian
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    f, g = Function("x ** 0.5"), Function("sum(x ** 0.5)")
    for x in [[1.0, 2.0]] * 3 + [[0.0, 2.0], [4.0, 2.0]]:
        at = {"x": np.array(x)}
        np.testing.assert_array_equal(f.jacobian(at, mode="forward")["x"],
                                      jacobian(None, at, ["x"], "forward", target=f.target).jacobian["x"])
        np.testing.assert_array_equal(g.forward_grad_result(at).gradient["x"],
                                      gradient(None, at, ["x"], None, target=g.target).gradient["x"])
    assert (f.replays, f.interpreted, f.fallbacks) == (2, 3, {"non-finite result": 1})
    assert (g.replays, g.interpreted, g.fallbacks) == (2, 3, {"non-finite result": 1})


def test_replayed_nth_derivatives_that_are_not_finite_are_counted_as_a_non_finite_result(monkeypatch):
    """As the Hessian's (issue 28 task G item 2): replayed n-th derivatives whose value or an
    order is not finite are the typed non-finite result, counted as 'non-finite result' (before:
    the documented 'declines these values', which the strict pass never checks); the interpreter
    answers, its result not finite either under AUTODIFF_STRICT=1, and the trace goes on replaying."""
    from autodiff.engine.diff.higher import derivatives
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    for method in ("reverse", "forward"):
        f = Function("x ** 1.5")
        for x in (1.0, 1.0, 1.0, 0.0, 4.0):             # at 0: f'' = 0.75 / sqrt(0), inf
            ours = f.derivatives_result({"x": x}, 2, method)
            assert ours.derivatives == derivatives(None, {"x": x}, 2, method, target=f.target).derivatives
        assert ours.derivatives == [3.0, 0.375]
        assert (f.replays, f.interpreted, f.fallbacks) == (2, 3, {"non-finite result": 1})
        g = Function("x * x + exp(1000.0)")             # an inf value, finite derivatives
        assert [g.derivatives(x=3.0, order=2, method=method) for _ in range(4)] == [[6.0, 2.0]] * 4
        assert g.fallbacks == {"non-finite result": 2}


def test_replayed_nth_derivatives_recompute_a_non_finite_order_alone_as_the_interpreter_does(monkeypatch):
    """x**3 * x**0.5 at 0: the nested run's f' (and f'') is nan where --order 1 alone gives 0
    (higher.orders_as_alone); the replay recomputes those orders alone over its steps as the
    interpreted driver does, so it answers, finite and bit-equal (before: declined). An order
    still not finite alone (x**1.5 * sin(x)'s third at 0, inf) is the non-finite result."""
    from autodiff.engine.diff.higher import derivatives
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    for method in ("reverse", "forward"):
        for order in (2, 3):
            f = Function("x ** 3 * x ** 0.5")
            for x in (1.0, 1.0, 0.0):                   # the nested run's at 0: [nan, 0.0], [nan, nan, 0.0]
                ours = f.derivatives_result({"x": x}, order, method)
                theirs = derivatives(None, {"x": x}, order, method, target=f.target)
                assert ours.derivatives == theirs.derivatives and ours.tape_entries == theirs.tape_entries
            assert ours.derivatives == [0.0] * order
            assert (f.replays, f.interpreted, f.fallbacks) == (1, 2, {})
        g = Function("x ** 1.5 * sin(x)")
        for x in (1.0, 1.0, 0.0):                       # the nested run's at 0: [0.0, nan, inf]
            ours = g.derivatives_result({"x": x}, 3, method)
            np.testing.assert_array_equal(ours.derivatives,
                                          derivatives(None, {"x": x}, 3, method, target=g.target).derivatives)
        assert ours.derivatives == [0.0, 0.0, math.inf]
        assert (g.replays, g.interpreted, g.fallbacks) == (0, 3, {"non-finite result": 1})


def test_strict_raises_where_replayed_nth_derivatives_are_not_finite_and_the_interpreters_are(monkeypatch):
    from autodiff.engine.diff import replay_derivatives
    f = Function("x ** 1.5")
    for _ in range(3):
        f.derivatives(x=1.0, order=2)
    swept = replay_derivatives.sweep_nested

    def nan_orders(*args, **kwargs):                                               # each replayed order: nan
        ders, sizes = swept(*args, **kwargs)
        return [d * np.nan for d in ders], sizes
    monkeypatch.setattr(replay_derivatives, "sweep_nested", nan_orders)
    monkeypatch.setenv("AUTODIFF_STRICT", "1")
    with pytest.raises(StrictFallback, match="a replayed n-th derivative is not finite where the interpreter's is"):
        f.derivatives(x=1.0, order=2)
    monkeypatch.delenv("AUTODIFF_STRICT")
    assert f.derivatives(x=1.0, order=2) == [1.5, 0.75]
    assert f.fallbacks == {"non-finite result": 2}
