"""core/batch.py's same_shape_jvp: a replayed Hessian's (and a forward Jacobian's) elementwise
steps whose moving argument has the output's shape call their JVP rule without lifted_jvp's
shape tests, decided once per trace; the numbers stay the bound sweep's to the bit."""
import numpy as np

from autodiff.engine.core import batch
from autodiff.engine.diff import hessian_plan, replay_tangents
from autodiff.engine.diff.function import Function
from autodiff.engine.diff.bits import same_bits

HESSIAN = "sum(x ** 2 * sin(x)) + log(sum(exp(x))) + sum(x) ** 3"


def counted(monkeypatch, module) -> list:
    calls = []
    lifted = batch.lifted_jvp

    def counting(prim, *args):
        calls.append(prim.name)
        return lifted(prim, *args)
    monkeypatch.setattr(module, "lifted_jvp", counting)
    return calls


def test_only_the_shape_changing_steps_reach_lifted_jvp(monkeypatch):
    f = Function(HESSIAN)
    at = {"x": np.linspace(-1.0, 1.0, 200)}
    for _ in range(3):
        f.hessian(at)
    swept, pushed = counted(monkeypatch, hessian_plan), counted(monkeypatch, replay_tangents)
    moved = {"x": at["x"] * 1.03 + 0.01}
    planned = f.hessian(moved)
    # the sweep's broadcasts and the forward's sums and broadcasts of a scalar: every
    # elementwise step of matching shapes went through same_shape_jvp
    assert swept and set(swept) <= {"broadcast_to", "sum", "sum_to", "reshape"}
    assert pushed and set(pushed) <= {"broadcast_to", "sum", "sum_to", "reshape"}
    assert len(swept) + len(pushed) < 10
    monkeypatch.undo()
    (trace,) = f.traces.values()
    trace.annotations[("hessian", (0,))] = False
    bound = f.hessian(moved)
    assert same_bits(planned["x"]["x"], bound["x"]["x"])


def test_a_scalar_broadcast_into_an_elementwise_step_is_lifted():
    """mul(scalar, array): the scalar's tangent is spread by lifted_jvp, not passed raw."""
    f = Function("sum(sum(x) * x * x) + sum(x) * 2.0")
    at = {"x": np.linspace(-1.0, 1.0, 30)}
    for _ in range(3):
        f.hessian(at)
    moved = {"x": at["x"] * 0.9 + 0.2}
    planned = f.hessian(moved)
    x = moved["x"]
    expected = 2.0 * (x[:, None] + x[None, :]) + 2.0 * np.sum(x) * np.eye(30)
    np.testing.assert_allclose(planned["x"]["x"], expected, rtol=1e-12, atol=1e-12)
