"""Issue 11, batched tangents: `jacobian --mode forward` and the forward-over-reverse Hessian take
one pass for all input elements (tangents stacked as (k,) + shape), chunked under a memory budget,
with the same numbers as one pass per element (reverse mode and reverse-over-reverse agree)."""
import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.diff import tangents

X = np.array([0.3, -1.2, 0.7, 2.0])
A = np.array([[1.0, 2.0, -1.0, 0.5], [0.0, 1.5, 2.0, -0.3], [0.2, 0.1, 0.0, 1.0]])

JACOBIANS = [
    ("sin(x) * x + exp(-x)", {"x": X}),
    ("x * 2.0 + sum(x ** 2)", {"x": X}),                   # a scalar broadcast against an array
    ("A @ x", {"A": A, "x": X}),
    ("[x[0] * x[1], x[2] - x[3], max(x)]", {"x": X}),
    ("sum(A * x, 1)", {"A": A, "x": X}),
    ("where(x > 0, x ** 3, -x) + maximum(x, 0.5)", {"x": X}),
    ("[r * cos(t), r * sin(t)]", {"r": 2.0, "t": 0.5}),
    ("reshape(x, (2, 2)) * transpose(reshape(x, (2, 2)))", {"x": X}),
]

HESSIANS = [
    ("sum(x ** 2 * sin(x)) + prod(x)", {"x": X}),
    ("x ** 2 * y + y + 2", {"x": 3.0, "y": 4.0}),
    ("log(sum(exp(x))) + norm(x)", {"x": X}),
    ("sum((A @ x) ** 2) + max(x) * min(x)", {"A": A, "x": X}),
    ("samples/higher/rosenbrock.py", {"x": -1.2, "y": 1.0}),
    ("samples/higher/logsumexp.py", {"z": X}),
]


def close(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("source,at", JACOBIANS)
def test_forward_jacobian_takes_one_pass_and_agrees_with_reverse(source, at):
    forward = api.jacobian(source, at=at, mode="forward")
    reverse = api.jacobian(source, at=at, mode="reverse")
    assert forward.passes == len(at)                       # one pass per input, not per element
    for name in at:
        close(forward.jacobian[name], reverse.jacobian[name])


@pytest.mark.parametrize("source,at", HESSIANS)
def test_forward_over_reverse_takes_one_pass_and_agrees(source, at):
    batched = api.hessian(source, at=at)
    reference = api.hessian(source, at=at, method="reverse-over-reverse")
    assert batched.passes == len(at)
    close(batched.value, reference.value)
    for a in at:
        close(batched.gradient[a], reference.gradient[a])
        for b in at:
            close(batched.hessian[a][b], reference.hessian[a][b])


def test_chunks_under_a_small_budget_give_the_same_numbers(monkeypatch):
    source, at = "sum(x ** 2 * sin(x)) + prod(x) + sum(x) ** 3", {"x": np.linspace(-1.05, 1, 11)}
    whole = api.hessian(source, at=at)
    jac_whole = api.jacobian("sin(x) * sum(x)", at=at, mode="forward")
    monkeypatch.setattr(tangents, "TANGENT_BUDGET_ELEMENTS", 40)     # 3 tangents of 11 per pass
    chunked = api.hessian(source, at=at)
    jac_chunked = api.jacobian("sin(x) * sum(x)", at=at, mode="forward")
    assert whole.passes == 1 and chunked.passes == 4 and jac_chunked.passes == 4
    close(chunked.hessian["x"]["x"], whole.hessian["x"]["x"])
    close(jac_chunked.jacobian["x"], jac_whole.jacobian["x"])


def test_a_program_with_a_loop_and_a_constant_gradient(tmp_path):
    source = tmp_path / "loop.py"
    source.write_text("def f(x):\n    s = 0.0\n    for i in range(3):\n        s = s + x[i] * x[i + 1]\n    return s\n")
    source = str(source)
    at = {"x": X}
    close(api.hessian(source, at=at).hessian["x"]["x"],
          api.hessian(source, at=at, method="reverse-over-reverse").hessian["x"]["x"])
    linear = api.hessian("sum(x) * 3.0", at=at)
    close(linear.hessian["x"]["x"], np.zeros((4, 4)))


def test_a_large_output_makes_smaller_chunks(monkeypatch):
    source, at = "[x[0] * x, x[1] * x, sin(x)]", {"x": X}           # 12 outputs of 4 inputs
    reverse = api.jacobian(source, at=at, mode="reverse")
    monkeypatch.setattr(tangents, "TANGENT_BUDGET_ELEMENTS", 24)
    auto = api.jacobian(source, at=at)
    assert auto.mode == "forward" and auto.passes == 2              # 2 tangents of 12 per pass
    close(auto.jacobian["x"], reverse.jacobian["x"])
