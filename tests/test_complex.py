"""Issue 32 (first slice): complex values, and the gradient of a real function of complex inputs in
PyTorch's convention (df/dx + i df/dy at z = x + iy), with both Wirtinger derivatives in --json.

The truth: PyTorch complex128 (torch.autograd) as the issue gives it, `abs(z)**2` at 1+2j -> 2+4j and
`real(z*conj(w)) + abs(exp(z))` at z = 0.3+0.4j, w = 1-2j -> z: 1+e^0.3-2j, w: 0.3+0.4j; numpy for
values; central differences in the real and imaginary parts for every other derivative."""
import math

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.parser import parse_expression
from autodiff.parser.errors import SourceError

from test_cli_grad import run_cli

MIXED = "real(z*conj(w)) + abs(exp(z))"


def test_imaginary_literals_parse_as_python_reads_them():
    assert parse_expression("2j").body.value == 2j
    assert parse_expression("1.5e-3J").body.value == 1.5e-3j
    assert api.evaluate("1+2j").value == 1 + 2j
    assert api.evaluate("(1-2j)*(3+0.5j)").value == (1 - 2j) * (3 + 0.5j)
    assert api.evaluate("[1, 2j]").value.dtype == np.complex128


def test_gradient_is_pytorchs_convention():
    assert api.grad("abs(z)**2", at={"z": 1 + 2j}).gradient["z"] == 2 + 4j
    g = api.grad(MIXED, at={"z": 0.3 + 0.4j, "w": 1 - 2j}).gradient
    assert g["z"] == pytest.approx(1 + math.exp(0.3) - 2j, rel=1e-15)
    assert g["w"] == pytest.approx(0.3 + 0.4j, rel=1e-15)


def test_real_input_through_complex_values_gets_a_real_gradient():
    # real(2jx e^{ix}) = -2x sin x, whose derivative is -2 sin x - 2x cos x
    g = api.grad("real(x*2j*exp(1j*x))", at={"x": 0.5}).gradient["x"]
    assert not np.iscomplexobj(g)
    assert g == pytest.approx(-2 * math.sin(0.5) - math.cos(0.5), rel=1e-14)
    g = api.grad("real(complex(a, b)**2)", at={"a": 1.0, "b": 2.0}).gradient
    assert (g["a"], g["b"]) == (2.0, -4.0)


def central(source, z, h=1e-6):
    """df/dx + i df/dy by central differences at z = x + iy."""
    f = lambda v: api.evaluate(source, at={"z": v}).value
    return (f(z + h) - f(z - h)) / (2 * h) + 1j * (f(z + 1j * h) - f(z - 1j * h)) / (2 * h)


@pytest.mark.parametrize("source", [
    "real(exp(z))", "imag(log(z))", "real(sqrt(z))", "real(sin(z))", "imag(cos(z))", "real(tanh(z))",
    "real(z**3)", "real(z**2.5)", "real(2**z)", "real(z**z)", "abs(z/(1+z))", "real(1/z)",
    "angle(z*z)", "imag(conj(z)*z*z)", "abs(z - 3)", "real(z) * imag(z)"])
def test_elementwise_functions_on_complex_agree_with_differences(source):
    z = 0.3 + 0.4j
    assert api.grad(source, at={"z": z}).gradient["z"] == pytest.approx(central(source, z), abs=1e-7)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "abs", "angle", "real", "imag", "conj"])
def test_values_are_numpys(name):
    v = np.array([0.3 + 0.4j, -1 - 2j, 2 + 0j])
    assert np.array_equal(api.evaluate(f"{name}(v)", at={"v": v}).value, getattr(np, name)(v))


def test_abs_and_angle_at_zero_take_their_kink_convention():
    r = api.grad("abs(z) + angle(z)", at={"z": 0j})
    assert r.gradient["z"] == 0
    assert {k[0] for k in r.kinks} == {"abs", "angle"}


@pytest.mark.parametrize("source", ["z < 1", "z >= w + 0*v[0]", "max(z, w)", "maximum(z, w)", "max(v) + z",
                                    "sort(v) + z", "argmax(v) + z"])
def test_orderings_of_complex_values_are_errors(source):
    at = {"z": 1j, "w": 2.0, "v": np.array([1j, 2.0])}
    with pytest.raises(SourceError) as e:
        api.evaluate(source, at={k: v for k, v in at.items() if k in source})
    assert e.value.kind == "complex ordering"
    assert e.value.span is not None
    assert "abs(z)" in e.value.message


def test_complex_output_of_grad_is_an_error_naming_the_ways_out():
    with pytest.raises(SourceError) as e:
        api.grad("z*z", at={"z": 1j})
    assert "real(...)" in e.value.message and "derivative" in e.value.message


def test_float32_pairs_with_complex64():
    r = api.grad("sum(abs(v)**2)", at={"v": np.array([1 - 1j, 2 + 0.5j])}, dtype_name="float32")
    assert r.inputs["v"].dtype == np.complex64
    assert r.gradient["v"].dtype == np.complex64
    np.testing.assert_allclose(r.gradient["v"], [2 - 2j, 4 + 1j], rtol=1e-6)
    assert api.evaluate("2j", dtype_name="float32").value.dtype == np.complex64


def test_function_at_moving_complex_points_equals_fresh_interpretation():
    """No replay answers for complex values: each run is interpreted, the fallback counted."""
    f = autodiff.function(MIXED)
    for z, w in [(0.3 + 0.4j, 1 - 2j), (0.5 - 0.1j, 2 + 1j), (-1 + 2j, 0.5j), (0.3 + 0.4j, 1 - 2j), (2 + 0j, 1 + 1j)]:
        got = f.grad(z=z, w=w)
        fresh = api.grad(MIXED, at={"z": z, "w": w}).gradient
        assert got == fresh
        assert got["z"] == pytest.approx(w.real + math.exp(z.real) + 1j * w.imag, rel=1e-15)
    assert f.replays == 0
    assert f.fallbacks == {"complex values (replays handle real values only)": 3}
    g = autodiff.function("real(x*2j*exp(1j*x))")
    for x in (0.5, 0.7, 1.5, 0.2):
        assert g.grad(x=x)["x"] == pytest.approx(-2 * math.sin(x) - 2 * x * math.cos(x), rel=1e-14)
    assert g.replays == 0


def test_large_complex_arrays_take_the_unfused_path_and_agree_with_numpy():
    rng = np.random.default_rng(0)
    z = rng.normal(size=200_000) + 1j * rng.normal(size=200_000)
    w = rng.normal(size=200_000) + 1j * rng.normal(size=200_000)
    r = api.grad("sum(real(exp(z)*w + z*z*w - w/z))", at={"z": z, "w": w})
    np.testing.assert_allclose(r.gradient["z"], np.conj(np.exp(z) * w + 2 * z * w + w / z ** 2), rtol=1e-12)
    assert r.value == pytest.approx(np.sum(np.real(np.exp(z) * w + z * z * w - w / z)), rel=1e-12)
    r = api.grad("sum(abs(z)**2 + real(z*conj(w)))", at={"z": z, "w": w})
    np.testing.assert_allclose(r.gradient["z"], 2 * z + w, rtol=1e-12)


# ---- the command line --------------------------------------------------------------------------

def test_cli_terminal_writes_complex_as_python_does():
    out = run_cli("grad", "abs(z)**2", "--at", "z=1+2j")
    assert out.code == 0
    assert "z      2+4j" in out.out
    assert "PyTorch's convention" in out.out


def test_cli_json_has_real_imag_and_both_wirtinger_derivatives():
    doc = run_cli("grad", "abs(z)**2", "--at", "z=1+2j", "--json").json
    assert doc["gradient"]["z"] == {"real": 2.0, "imag": 4.0}
    assert doc["inputs"]["z"] == {"real": 1.0, "imag": 2.0}
    assert doc["wirtinger"] == {"z": {"dz": {"real": 1.0, "imag": -2.0}, "dzbar": {"real": 1.0, "imag": 2.0}}}
    doc = run_cli("grad", "sum(abs(v)**2)", "--at", "v=[1-1j,2+0.5j]", "--json").json
    assert doc["gradient"]["v"] == [{"real": 2.0, "imag": -2.0}, {"real": 4.0, "imag": 1.0}]
    assert "wirtinger" not in run_cli("grad", "x**2", "--at", "x=3", "--json").json


def test_cli_check_perturbs_real_and_imaginary_parts():
    out = run_cli("grad", "sum(abs(v)**2)*x", "--at", "v=[1-1j,2+0.5j],x=2", "--check")
    assert out.code == 0, out.out + out.err
    for label in ("v[0].real", "v[0].imag", "v[1].real", "v[1].imag"):
        assert label in out.out
    fast = run_cli("grad", MIXED, "--at", "z=0.3+0.4j,w=1-2j", "--check", "fast")
    assert fast.code == 0, fast.out + fast.err


def test_cli_complex_errors_exit_2():
    out = run_cli("run", "z < 1", "--at", "z=1j")
    assert out.code == 2 and "1:3" in out.err and "complex numbers have no order" in out.err
    out = run_cli("grad", "z*z", "--at", "z=1j")
    assert out.code == 2 and "a gradient needs a real output" in out.err


def test_cli_complex_npy_and_npz(tmp_path):
    for dtype in ("complex128", "complex64"):
        path = tmp_path / f"v_{dtype}.npy"
        np.save(path, np.array([1 - 1j, 2 + 0.5j], dtype=dtype))
        doc = run_cli("grad", "sum(abs(v)**2)", "--at", f"v=@{path}", "--json").json
        assert doc["gradient"]["v"] == [{"real": 2.0, "imag": -2.0}, {"real": 4.0, "imag": 1.0}]
    out = tmp_path / "g.npz"
    assert run_cli("grad", "sum(abs(v)**2)", "--at", f"v=@{tmp_path / 'v_complex128.npy'}", "--out", str(out)).code == 0
    saved = np.load(out)
    assert saved["grad.v"].dtype == np.complex128
    np.testing.assert_array_equal(saved["grad.v"], [2 - 2j, 4 + 1j])


def test_numpy_spellings_real_imag_conj_as_attributes_and_methods():
    # |z| + x y + x at z = 1+2j: d/dx = x/|z| + y + 1, d/dy = y/|z| + x
    g = api.grad("abs(z.conj()) + z.real*z.imag + real(z.conjugate())", at={"z": 1 + 2j}).gradient["z"]
    assert g == pytest.approx(1 / math.sqrt(5) + 3 + 1j * (2 / math.sqrt(5) + 1), rel=1e-15)


@pytest.mark.parametrize("source", ["sigmoid(z)", "sign(z)", "arcsinh(z)", "floor(z)", "relu(z)", "hypot(z, 1)",
                                    "norm(v)", "det(outer(v, v))", "cumprod(v)"])
def test_entries_without_complex_rules_refuse_complex_values(source):
    """An entry that does not state the complex_values fact refuses them: never a real rule's answer."""
    at = {"z": 1 + 2j, "v": np.array([1j, 2.0])}
    with pytest.raises(SourceError) as e:
        api.grad(f"abs(sum({source}))", at={k: v for k, v in at.items() if k in source})
    assert e.value.kind == "complex values" and e.value.span is not None
    assert "real(z), imag(z) or abs(z)" in e.value.message


def test_complex_values_is_a_fact_of_each_entry():
    from autodiff.engine.core import rules
    table = rules.TABLE
    assert all(table[n].complex_values is True for n in ("add", "mul", "exp", "abs", "real", "conj", "sum", "matmul"))
    assert all(table[n].complex_values == "ordering" for n in ("lt", "max", "maximum"))
    assert table["sigmoid"].complex_values is False


def test_the_languages_grad_reports_the_same_convention(tmp_path):
    program = tmp_path / "g.py"
    program.write_text("def f(z):\n    return abs(z)**2\n\ndef main(z):\n    return grad(f)(z)\n")
    assert api.evaluate(str(program), at={"z": 1 + 2j}, fn="main").value == 2 + 4j


def test_higher_derivatives_of_real_inputs_through_complex_values():
    # f(x) = real(x^2 e^{ix}) = x^2 cos x
    x = 0.7
    d1, d2 = 2 * x * math.cos(x) - x * x * math.sin(x), 2 * math.cos(x) - 4 * x * math.sin(x) - x * x * math.cos(x)
    assert api.derivatives("real(x*x*exp(1j*x))", at={"x": x}, order=2).derivatives == pytest.approx([d1, d2], rel=1e-14)
    h = api.hessian("real(x*x*exp(1j*x)) + abs(complex(x, y))**2", at={"x": x, "y": 0.3}).hessian
    assert h["x"]["x"] == pytest.approx(d2 + 2, rel=1e-14) and h["y"]["y"] == pytest.approx(2, rel=1e-14)
    j = api.jacobian("[real(x*exp(1j*y)), imag(x*exp(1j*y))]", at={"x": x, "y": 0.3}, mode="forward").jacobian
    np.testing.assert_allclose(j["x"], [math.cos(0.3), math.sin(0.3)], rtol=1e-14)
    np.testing.assert_allclose(j["y"], [-x * math.sin(0.3), x * math.cos(0.3)], rtol=1e-14)


def test_complex_of_two_real_arrays_is_numpys_a_plus_1j_b():
    a, b = np.array([1.0, -1.0]), np.array([2.0, 0.5])
    assert np.array_equal(api.evaluate("complex(a, b)", at={"a": a, "b": b}).value, a + 1j * b)
    single = api.evaluate("complex(a, b)", at={"a": a, "b": b}, dtype_name="float32").value
    assert single.dtype == np.complex64
    g = api.grad("sum(abs(complex(a, b))**2)", at={"a": a, "b": b}).gradient
    assert np.array_equal(g["a"], 2 * a) and np.array_equal(g["b"], 2 * b)
    with pytest.raises(SourceError):
        api.evaluate("complex(1j, 2)")
