"""Issue 32 item 3: `--check complex-step`, the reference Im f(x + ih)/h at h = 1e-20 for a
real-analytic real f of real inputs (engine/checks/complex_step.py), refused where an entry on
the path does not extend to complex numbers analytically (its table fields complex_values and
holomorphic) or an input is complex."""
import math

import numpy as np
import pytest

from autodiff.engine.checks.gradient import check_gradient
from autodiff.parser.errors import SourceError

from test_cli_grad import run_cli

F = "sin(x)*exp(y)/(1+x*x)"


def test_complex_step_reference_is_the_derivative_to_rounding():
    x, y = 0.7, -0.3
    r = check_gradient(F, at={"x": x, "y": y}, mode="complex-step")
    assert r.passed and r.reference == "complex step" and r.evaluations == 2
    # d/dx sin x / (1+x^2) = (cos x (1+x^2) - 2x sin x) / (1+x^2)^2; d/dy e^y = e^y
    dx = math.exp(y) * (math.cos(x) * (1 + x * x) - 2 * x * math.sin(x)) / (1 + x * x) ** 2
    dy = math.sin(x) * math.exp(y) / (1 + x * x)
    assert [row.reference for row in r.entries] == pytest.approx([dx, dy], rel=4e-16)
    assert [row.step for row in r.entries] == [1e-20, 1e-20]


def test_complex_step_of_arrays_and_a_cotangent():
    x = np.array([1.0, 2.0, 3.0])
    r = check_gradient("tanh(x)**2", at={"x": x}, mode="complex-step", output_seed=np.array([1.0, -2.0, 0.5]))
    # d/dx tanh^2 = 2 tanh sech^2, times the seed
    expected = np.array([1.0, -2.0, 0.5]) * 2 * np.tanh(x) / np.cosh(x) ** 2
    assert r.passed and [row.label for row in r.entries] == ["x[0]", "x[1]", "x[2]"]
    np.testing.assert_allclose([row.reference for row in r.entries], expected, rtol=1e-15)


def test_complex_step_fails_a_wrong_hand_gradient():
    r = check_gradient("x*x", at={"x": 3.0}, grad={"x": "3*x"}, mode="complex-step")
    assert not r.passed and r.entries[0].reference == 6.0 and "complex step 6" in r.entries[0].reason


@pytest.mark.parametrize("source, named", [
    ("abs(x)", "abs (1:1)"), ("real(x)*x", "real (1:1)"), ("maximum(x, 1.0)", "(1:1)"),
    ("where(x > 0, x, 0.0)*x", "(1:9)"), ("sigmoid(x)", "sigmoid()"), ("x + max(x*y, y)", "(1:5)")])
def test_complex_step_is_refused_where_f_is_not_real_analytic(source, named):
    with pytest.raises(SourceError) as e:
        check_gradient(source, at={"x": 0.7, "y": 2.0} if "y" in source else {"x": 0.7}, mode="complex-step")
    assert e.value.kind == "not real-analytic" and named in e.value.message


def test_complex_step_is_refused_for_complex_inputs():
    with pytest.raises(SourceError) as e:
        check_gradient("abs(z)**2", at={"z": 1 + 2j}, mode="complex-step")
    assert "z is complex" in e.value.message


def test_cli_check_complex_step():
    out = run_cli("grad", F, "--at", "x=0.7,y=-0.3", "--check", "complex-step")
    assert out.code == 0 and "complex step" in out.out and "h = 1e-20" in out.out
    doc = run_cli("grad", "x*x", "--at", "x=3", "--check", "complex-step", "--json").json
    assert doc["check"]["reference"] == "complex step" and doc["check"]["entries"][0]["reference"] == 6.0
    assert run_cli("grad", "x*x", "--at", "x=3", "--hand", "x=3*x", "--check", "complex-step").code == 1
    refused = run_cli("grad", "abs(x)", "--at", "x=3", "--check", "complex-step")
    assert refused.code == 2 and "abs (1:1)" in refused.err


@pytest.mark.parametrize("source, named", [
    ("eigvalsh(h)[1]", "eigvalsh (1:1)"), ("sum(eigh(h)[1][:, 0]**2 * [1, 2])", "eigh_vectors"),
    ("sum(svd(h)[1])", "singular_values"), ("sum(svd(h)[0][0]**2 * [1, 2])", "svd_vectors")])
def test_complex_step_through_hermitian_and_svd_entries_is_refused(source, named):
    """eigh and svd of a complex matrix read its Hermitian part or its modulus, not the analytic
    continuation: Im f(x + ih)/h is no derivative there (it read 0 for eigvalsh, failing a right
    gradient); their entries are not holomorphic, and the check is refused naming them."""
    with pytest.raises(SourceError) as e:
        check_gradient(source, at={"h": np.array([[2.0, 1.0], [1.0, 3.0]])}, mode="complex-step")
    assert e.value.kind == "not real-analytic" and named in e.value.message
    out = run_cli("grad", source, "--at", "h=[[2,1],[1,3]]", "--check", "complex-step")
    assert out.code == 2 and named in out.err
