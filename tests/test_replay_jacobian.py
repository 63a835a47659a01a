"""Jacobians replayed from a recorded trace (reverse mode: one sweep per output element) are
the interpreter's to the last bit; forward-mode ones are diff/replay_higher.py's."""
import numpy as np
import pytest

import autodiff
from autodiff.engine.diff import forward
from autodiff.engine.diff.function import Function
from autodiff.engine.lang.target import load
from test_replay import same_number

CASES = [
    ("sin(x) * y + x * x", {"x": np.array([0.3, -0.6, 1.2]), "y": 0.7}),
    ("sum(x * x) + y * x[0]", {"x": np.array([0.3, -0.6, 1.2]), "y": 0.7}),
    ("reshape(x, 1, 3) @ A", {"x": np.array([0.5, 1.5, -1.0]), "A": np.arange(9.0).reshape(3, 3) / 9}),
    ("def f(x, y):\n    if sum(x) > y:\n        return x * y\n    return tanh(x) - y\n",
     {"x": np.array([0.5, 1.5]), "y": 1.0}),
]


def function_of(source):
    return Function(target=load(source, filename="program.py")) if source.startswith("def") else Function(source)


@pytest.mark.parametrize("source, at", CASES)
@pytest.mark.parametrize("mode", ["auto", "reverse"])
def test_replayed_jacobians_are_the_interpreters(source, at, mode):
    f = function_of(source)
    points = [at, at, {k: v * 1.7 - 0.2 for k, v in at.items()}, {k: v * -0.5 for k, v in at.items()}, at]
    for point in points:
        ours = f.jacobian(point, mode=mode)
        theirs = forward.jacobian(None, point, mode=mode, target=f.target).jacobian
        assert list(ours) == list(theirs)
        for name in theirs:
            assert same_number(np.asarray(ours[name]) if isinstance(theirs[name], np.ndarray) else ours[name],
                               theirs[name]), name
    chosen = forward.jacobian(None, at, mode=mode, target=f.target).mode
    assert (f.replays >= 2) == (chosen == "reverse"), (f.replays, chosen)


def test_forward_mode_jacobians_replay():
    # since diff/replay_higher.py: stacked tangents through the replayed steps (tests there)
    f = autodiff.function("x * y")
    for _ in range(4):
        f.jacobian(x=np.ones(3), y=2.0, mode="forward")
    assert f.replays == 2
    with pytest.raises(ValueError):
        f.jacobian(x=np.ones(3), y=2.0, mode="sideways")


def test_a_replayed_jacobian_sweeps_the_programs_plan_and_builds_no_tape(monkeypatch):
    """Issue 28 item 1: the reverse-mode Jacobian's sweeps go through the trace's sweep plan (an
    annotation of its Program), not a tape rebuilt from it on every call; the bits stay the
    interpreter's."""
    from autodiff.engine.core.tape import Tape
    f = Function("sin(x) * y + x * x")
    at = {"x": np.array([0.3, -0.6, 1.2]), "y": 0.7}
    f.jacobian(at, mode="reverse")
    f.jacobian(at, mode="reverse")
    moved = {"x": at["x"] * 1.7 - 0.2, "y": -0.35}
    theirs = forward.jacobian(None, moved, mode="reverse", target=f.target).jacobian

    def no_tape(*args, **kwargs):
        raise AssertionError("a replayed Jacobian built a tape")
    monkeypatch.setattr(Tape, "__init__", no_tape)
    replays = f.replays
    ours = f.jacobian(moved, mode="reverse")
    monkeypatch.undo()
    assert f.replays == replays + 1
    for name in theirs:
        assert same_number(np.asarray(ours[name]), theirs[name]), name
