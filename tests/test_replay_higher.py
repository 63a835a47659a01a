"""Hessians (forward-over-reverse) and forward-mode Jacobians replayed from a recorded trace give
the interpreted drivers' numbers; anything unusual (a kink, a non-finite number, an error) is
left to the interpreter, which reports it."""
import numpy as np
import pytest

import autodiff
from autodiff.cli.options import parse_at
from autodiff.engine import api
from autodiff.engine.diff import forward, higher, replay_higher
from autodiff.engine.diff.function import Function
from autodiff.engine.lang.target import load
from test_replay import POINTS, ROOT, TABLE_CASES, moved
from test_samples_programs import SAMPLES, expectations


def assert_close(ours, theirs, where=""):
    """The same numbers to rounding (nan where the interpreter has nan), the same kinds."""
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for k in theirs:
            assert_close(ours[k], theirs[k], f"{where}/{k}")
        return
    assert type(ours) is type(theirs), (where, type(ours), type(theirs))
    assert np.shape(ours) == np.shape(theirs), where
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-13, err_msg=where)


def replayed_hessian(f, first, second, wrt=None):
    """f's Hessian at `second` after the plain and the recording calls at `first`."""
    f.hessian(first, wrt=wrt)
    f.hessian(first, wrt=wrt)
    return f.hessian(second, wrt=wrt)


def hessian_both_ways(source, first, second, fn=None, wrt=None):
    f = Function(source, fn) if not isinstance(source, Function) else source
    try:
        theirs = higher.hessian(None, second, wrt, target=f.target).hessian
    except autodiff.SourceError as e:
        with pytest.raises(autodiff.SourceError) as raised:
            replayed_hessian(f, first, second, wrt)
        assert str(raised.value) == str(e)
        return f
    assert_close(replayed_hessian(f, first, second, wrt), theirs)
    return f


def pick(target, at):
    return {k: v for k, v in at.items() if k in target.inputs}


# ---- Hessians ----------------------------------------------------------------------------------

@pytest.mark.parametrize("expr", TABLE_CASES)
@pytest.mark.parametrize("points", range(len(POINTS)))
def test_every_table_entry_hessian_replays_as_interpreted(expr, points):
    first, second = POINTS[points]
    target = api.load(expr)
    hessian_both_ways(expr, pick(target, first), pick(target, second))


def test_most_table_hessians_do_replay():
    replayed = 0
    for expr in TABLE_CASES:
        f = Function(expr)
        replayed_hessian(f, pick(f.target, POINTS[0][0]), pick(f.target, POINTS[0][1]))
        replayed += f.replays
    assert replayed >= len(TABLE_CASES) - 3, replayed


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_hessians_replay_as_interpreted(path, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = expectations(path)[0][0]
    fn = argv[argv.index("--fn") + 1] if "--fn" in argv else None
    at = parse_at([argv[i + 1] for i, a in enumerate(argv) if a == "--at"])
    hessian_both_ways(argv[1], at, moved(at), fn=fn)


def test_the_issue_hessian_replays_bit_for_bit():
    f = autodiff.function("sum(x**2*sin(x)) + log(sum(exp(x))) + sum(x)**3")
    x = np.linspace(-1.0, 1.0, 50)
    ours = replayed_hessian(f, {"x": x}, {"x": x * 0.7 + 0.1})
    theirs = higher.hessian(None, {"x": x * 0.7 + 0.1}, target=f.target).hessian
    assert f.replays == 1 and ours["x"]["x"].tobytes() == theirs["x"]["x"].tobytes()


def test_hessians_for_some_inputs_and_scalars_replay():
    source = "x[0] * y ** 3 + sum(sin(x) * y) + z"
    first = {"x": np.array([0.3, -0.2]), "y": 1.5, "z": 2.0}
    second = {"x": np.array([0.7, 0.4]), "y": -0.5, "z": 1.0}
    for wrt in (None, ["y"], ["x", "y"], ["y", "x"], ["z"]):
        f = hessian_both_ways(source, first, second, wrt=wrt)
        assert f.replays == 1, wrt


def test_guarded_programs_replay_on_either_path():
    f = Function(target=load("def f(x, y):\n    if sum(x) > y:\n        return sum(x * x * y)\n"
                             "    return sum(tanh(x)) * y ** 2\n", filename="program.py"))
    points = [{"x": np.array([0.5, 1.5]), "y": 1.0}, {"x": np.array([0.5, 1.5]), "y": 3.0},
              {"x": np.array([0.2, 1.1]), "y": 1.0}, {"x": np.array([0.1, 0.1]), "y": 2.5}]
    for point in points + points:
        assert_close(f.hessian(point), higher.hessian(None, point, target=f.target).hessian)
    assert f.replays >= 4, (f.replays, f.interpreted)


def test_a_kink_is_left_to_the_interpreter():
    f = Function("abs(x) * y + relu(y) * x")
    replayed_hessian(f, {"x": 1.0, "y": 2.0}, {"x": 0.5, "y": 2.5})
    assert f.replays == 1
    at_kink = f.hessian(x=0.0, y=2.0)
    assert f.replays == 1 and f.interpreted == 3
    interpreted = higher.hessian(None, {"x": 0.0, "y": 2.0}, target=f.target)
    assert_close(at_kink, interpreted.hessian)
    assert interpreted.kinks                       # what the fallback is there to report


def test_non_finite_numbers_and_errors_are_left_to_the_interpreter():
    f = Function("sqrt(x) * y")
    replayed_hessian(f, {"x": 2.0, "y": 1.0}, {"x": 3.0, "y": 1.0})
    nan = f.hessian(x=-1.0, y=1.0)
    assert f.replays == 1 and np.isnan(nan["x"]["x"])
    assert_close(nan, higher.hessian(None, {"x": -1.0, "y": 1.0}, target=f.target).hessian)
    assert f.hessian(x=0.0, y=1.0)["x"]["y"] == np.inf and f.replays == 1
    g = Function("x * y")                          # not a scalar: the interpreter's located error
    with pytest.raises(autodiff.SourceError, match="scalar"):
        replayed_hessian(g, {"x": np.ones(2), "y": 1.0}, {"x": np.ones(2), "y": 2.0})
    assert g.replays == 0


def test_the_boxed_replay_is_the_plain_one_on_raw_values():
    f = Function("sum(x * sin(x)) + y")
    at = {"x": np.array([0.5, 1.0]), "y": 2.0}
    f.evaluate_result(at)
    f.evaluate_result(at)
    trace = f.traces[next(iter(f.traces))]
    raw = replay_higher.boxed_values(trace, [at["x"], at["y"]])
    assert raw[trace.output] == f(at)


# ---- forward-mode Jacobians ------------------------------------------------------------------

JACOBIAN_CASES = [
    ("sin(x) * y + x * x", {"x": np.array([0.3, -0.6, 1.2]), "y": 0.7}),
    ("sum(x * x) + y * x[0]", {"x": np.array([0.3, -0.6, 1.2]), "y": 0.7}),
    ("reshape(x, 1, 3) @ A", {"x": np.array([0.5, 1.5, -1.0]), "A": np.arange(9.0).reshape(3, 3) / 9}),
    ("reshape(x, 2, 1) * reshape(x, 1, 2) * y", {"x": np.array([0.5, 1.5]), "y": 2.0}),   # auto: forward
    ("def f(x, y):\n    if sum(x) > y:\n        return x * y\n    return tanh(x) - y\n",
     {"x": np.array([0.5, 1.5]), "y": 1.0}),
]


@pytest.mark.parametrize("source, at", JACOBIAN_CASES)
@pytest.mark.parametrize("mode", ["forward", "auto"])
def test_forward_mode_jacobians_replay_as_interpreted(source, at, mode):
    f = Function(target=load(source, filename="program.py")) if source.startswith("def") else Function(source)
    points = [at, at, {k: v * 1.7 - 0.2 for k, v in at.items()}, {k: v * -0.5 for k, v in at.items()}, at]
    for point in points:
        assert_close(f.jacobian(point, mode=mode), forward.jacobian(None, point, mode=mode, target=f.target).jacobian)
    assert f.replays >= 2, (f.replays, f.interpreted)


@pytest.mark.parametrize("expr", TABLE_CASES)
def test_every_table_entry_forward_jacobian_replays_as_interpreted(expr):
    target = api.load(expr)
    f = Function(target=target)
    first, second = (pick(target, at) for at in POINTS[0])
    f.jacobian(first, mode="forward")
    f.jacobian(first, mode="forward")
    assert_close(f.jacobian(second, mode="forward"),
                 forward.jacobian(None, second, mode="forward", target=target).jacobian)


# ---- forward-mode gradients ------------------------------------------------------------------

def assert_same_forward_gradient(ours, theirs):
    assert_close(ours.value, theirs.value)
    assert_close(ours.gradient, theirs.gradient)
    assert (ours.unconnected, ours.reduced, ours.mode, ours.tape_length, ours.steps) == \
        (theirs.unconnected, theirs.reduced, theirs.mode, theirs.tape_length, theirs.steps)
    assert list(ours.signature) == list(theirs.signature)
    assert [(op, detail) for op, _, detail in ours.kinks] == [(op, detail) for op, _, detail in theirs.kinks]


@pytest.mark.parametrize("expr", TABLE_CASES)
def test_every_table_entry_forward_gradient_replays_as_interpreted(expr):
    target = api.load(expr)
    f = Function(target=target)
    for first, second in POINTS:
        for at in (pick(target, first), pick(target, first), pick(target, second)):
            assert_same_forward_gradient(f.forward_grad_result(at),
                                         forward.gradient(None, at, target=target))


@pytest.mark.parametrize("seed, wrt", [(None, None), (None, ["y"]), (np.array([1.0, -2.0, 0.5]), None),
                                       (2.0, ["x"])])
def test_forward_gradients_with_seeds_and_some_inputs_replay(seed, wrt):
    f = Function("sin(x) * y + x * x + z * 0")
    points = [{"x": np.array([0.3, -0.6, 1.2]), "y": 0.7, "z": 1.0},
              {"x": np.array([0.5, 0.6, -1.2]), "y": -0.2, "z": 3.0}]
    for at in points + points:
        assert_same_forward_gradient(f.forward_grad_result(at, wrt, seed),
                                     forward.gradient(None, at, wrt, seed, target=f.target))
    assert f.replays >= 2


def test_api_forward_gradients_go_through_the_compiled_function():
    source = "x * x * y + sin(y)"
    results = [autodiff.grad(source, at={"x": 1.5 + k, "y": 0.5}, mode="forward") for k in range(4)]
    assert [r.gradient["x"] for r in results] == [1.5 * 2 * 0.5 + k for k in range(4)]
    assert results[-1].mode == "forward" and api.compiled(source).replays >= 2
    for x in (1.0, 2.0):                       # plain, recording
        autodiff.grad("abs(x) * y", at={"x": x, "y": 2.0}, mode="forward")
    at_kink = autodiff.grad("abs(x) * y", at={"x": 0.0, "y": 2.0}, mode="forward")      # the interpreter's
    theirs = forward.gradient("abs(x) * y", {"x": 0.0, "y": 2.0})
    assert at_kink.kinks and [k[2] for k in at_kink.kinks] == [k[2] for k in theirs.kinks]
    assert api.compiled("abs(x) * y").replays == 0


def test_an_input_the_output_does_not_read_is_unconnected_in_a_joint_pass():
    f = Function(target=load("def f(x, y, z):\n    return sin(x) * y + x\n", filename="program.py"))
    for at in [{"x": 0.5, "y": 2.0, "z": 1.0}, {"x": -0.5, "y": 1.0, "z": 3.0}] * 2:
        ours = f.forward_grad_result(at)
        assert_same_forward_gradient(ours, forward.gradient(None, at, target=f.target))
        assert ours.unconnected == ["z"]
        assert_close(f.hessian(at), higher.hessian(None, at, target=f.target).hessian)
    assert f.replays >= 3
