"""Jacobians (engine/forward.jacobian and `autodiff jacobian`): shapes, modes, closed forms."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.diff.forward import choose_mode, jacobian

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("forward", "reverse", "auto")


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.mark.parametrize("mode", MODES)
def test_polar_list_literal_is_a_vector_output(mode):
    r = jacobian("[r*cos(t), r*sin(t)]", at={"r": 2.0, "t": 0.5}, mode=mode)
    assert np.allclose(r.value, [2 * np.cos(0.5), 2 * np.sin(0.5)])
    assert np.allclose(r.jacobian["r"], [np.cos(0.5), np.sin(0.5)], rtol=1e-15)
    assert np.allclose(r.jacobian["t"], [-2 * np.sin(0.5), 2 * np.cos(0.5)], rtol=1e-15)
    det = r.jacobian["r"][0] * r.jacobian["t"][1] - r.jacobian["t"][0] * r.jacobian["r"][1]
    assert abs(det - 2.0) < 1e-14


@pytest.mark.parametrize("mode", MODES)
def test_softmax_jacobian_is_diag_s_minus_s_s_transpose(mode):
    z = np.array([0.3, -1.2, 2.0, 0.7])
    r = jacobian(os.path.join(ROOT, "samples", "higher", "softmax.py"), at={"z": z}, mode=mode)
    s = softmax(z)
    assert r.jacobian["z"].shape == (4, 4)
    assert np.allclose(r.jacobian["z"], np.diag(s) - np.outer(s, s), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", MODES)
def test_matrix_vector_product_jacobian_for_both_arguments(mode):
    A = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])
    x = np.array([0.2, -0.7, 1.5])
    r = jacobian("A @ x", at={"A": A, "x": x}, mode=mode)
    assert r.jacobian["x"].shape == (2, 3) and np.array_equal(r.jacobian["x"], A)
    # ∂(Ax)_i / ∂A_jk = δ_ij x_k
    expected = np.einsum("ij,k->ijk", np.eye(2), x)
    assert r.jacobian["A"].shape == (2, 2, 3) and np.array_equal(r.jacobian["A"], expected)


def test_shapes_follow_value_shape_plus_input_shape():
    at = {"s": 2.0, "v": np.array([1.0, 2.0, 3.0]), "M": np.ones((2, 2))}
    scalar = jacobian("s * sum(v) + sum(M)", at=at)
    assert np.shape(scalar.jacobian["s"]) == () and scalar.jacobian["v"].shape == (3,)
    assert scalar.jacobian["M"].shape == (2, 2)
    matrix = jacobian("M * s + sum(v)", at=at, mode="forward")
    assert matrix.jacobian["s"].shape == (2, 2) and matrix.jacobian["v"].shape == (2, 2, 3)
    assert np.array_equal(matrix.jacobian["M"], 2.0 * np.eye(4).reshape(2, 2, 2, 2))


def test_forward_and_reverse_agree_elementwise_and_broadcast():
    at = {"x": np.array([0.1, 0.5, -0.3]), "c": 1.7}
    text = "tanh(x * c) + x[::-1] ** 2 + max(x) * c"
    f = jacobian(text, at=at, mode="forward")
    r = jacobian(text, at=at, mode="reverse")
    for name in at:
        assert np.allclose(f.jacobian[name], r.jacobian[name], rtol=1e-13, atol=1e-15)


def test_auto_picks_forward_for_few_inputs_and_reverse_for_few_outputs():
    wide = jacobian("[x, x*x, sin(x), exp(x)]", at={"x": 0.5})
    assert wide.mode == "forward" and "fewer" in wide.reason and wide.passes == 1
    narrow = jacobian("sum(v*v)", at={"v": np.arange(5.0)})
    assert narrow.mode == "reverse" and narrow.passes == 1
    assert np.array_equal(narrow.jacobian["v"], 2 * np.arange(5.0))


def test_choose_mode_explains_itself():
    assert choose_mode("auto", 2, 3)[0] == "forward"
    assert choose_mode("auto", 3, 3)[0] == "reverse"
    mode, reason = choose_mode("reverse", 1, 100)
    from autodiff.cli.options import with_flags
    from autodiff.parser.errors import spell_options
    assert (mode, with_flags(reason), spell_options(reason)) == ("reverse", "--mode reverse was asked for",
                                                                  "mode= reverse was asked for")


def test_unconnected_inputs_get_exact_zero_columns():
    for mode in ("forward", "reverse"):
        t = api.load("def f(x, y):\n    return [x, 2*x]\n", filename="f.py")
        r = jacobian(None, at={"x": 1.0, "y": 5.0}, target=t, mode=mode)
        assert r.unconnected == ["y"] and np.array_equal(r.jacobian["y"], [0.0, 0.0])


def test_float32_jacobian_keeps_the_dtype():
    r = jacobian("x * x", at={"x": np.array([1.0, 2.0])}, mode="reverse", dtype_name="float32")
    assert r.jacobian["x"].dtype == np.float32
    jacobian("x", at={"x": 1.0}, dtype_name="float64")          # leave the default dtype behind


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_cli_json_has_value_jacobian_and_the_mode_it_used():
    out = _cli("jacobian", "[r*cos(t), r*sin(t)]", "--at", "r=2,t=0.5", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) >= {"value", "jacobian", "mode", "reason"}
    assert np.allclose(doc["jacobian"]["t"], [-2 * np.sin(0.5), 2 * np.cos(0.5)])
    assert doc["mode"] in ("forward", "reverse") and "auto" in doc["reason"]


def test_cli_table_for_people_says_which_mode_and_why():
    out = _cli("jacobian", "[x, x*x, x**3]", "--at", "x=2")
    assert out.returncode == 0, out.stderr
    assert "forward mode" in out.stdout and "fewer" in out.stdout and "12" in out.stdout


def test_cli_errors_exit_2():
    assert _cli("jacobian", "x + y", "--at", "x=1").returncode == 2              # missing input
    assert _cli("jacobian", "x", "--at", "x=1", "--wrt", "z").returncode == 2    # unknown --wrt
    assert _cli("jacobian", "x", "--at", "x=1", "--mode", "sideways").returncode == 2
