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
    """Complex runs replay (tests/test_replay_complex.py holds them to the interpreter's bits)."""
    f = autodiff.function(MIXED)
    for z, w in [(0.3 + 0.4j, 1 - 2j), (0.5 - 0.1j, 2 + 1j), (-1 + 2j, 0.5j), (0.3 + 0.4j, 1 - 2j), (2 + 0j, 1 + 1j)]:
        got = f.grad(z=z, w=w)
        fresh = api.grad(MIXED, at={"z": z, "w": w}).gradient
        assert got == fresh
        assert got["z"] == pytest.approx(w.real + math.exp(z.real) + 1j * w.imag, rel=1e-15)
    assert (f.replays, f.interpreted) == (3, 2)
    g = autodiff.function("real(x*2j*exp(1j*x))")
    for x in (0.5, 0.7, 1.5, 0.2):
        assert g.grad(x=x)["x"] == pytest.approx(-2 * math.sin(x) - 2 * x * math.cos(x), rel=1e-14)
    assert g.replays == 2


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


@pytest.mark.parametrize("source", ["sigmoid(z)", "cbrt(z)", "gammaln(z)", "floor(z)", "relu(z)", "hypot(z, 1)",
                                    "logaddexp(v, v)"])
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


# ---- complex linear algebra in reverse mode (issue 32 item 1) -----------------------------------
# The truth: PyTorch 2.13 complex128 (x.grad after backward(): its convention is the one reported),
# computed once with torch.linalg's solve, inv, det, vector_norm, matrix_norm, eigvalsh, svdvals
# and slogdet at these points, and written here to 16 digits.

A = np.array([[2 + 1j, 0.5 - 1j], [1j, 3 - 0.5j]])
B = np.array([1 - 1j, 2 + 0.5j])
H = np.array([[2, 1 - 1j], [1 + 1j, -1]], dtype=complex)
TORCH = {
    "sum(abs(solve(A, b))**2)": {
        "A": [[-0.05760355029585802 - 0.027248520710059197j, -0.028579881656804754 + 0.09710059171597638j],
              [0.0031065088757396483 - 0.10754437869822484j, -0.16952662721893486 + 0.02159763313609466j]],
        "b": [0.11538461538461545 - 0.13846153846153852j, 0.2923076923076922 + 0.08461538461538459j]},
    "sum(abs(inv(A))**2)": {
        "A": [[-0.36899408284023666 - 0.1649704142011834j, 0.07763313609467455 - 0.23337278106508877j],
              [0.039053254437869826 + 0.25680473372781065j, -0.2059171597633136 + 0.04733727810650889j]]},
    "abs(det(A))": {
        "A": [[2.7627327608171424 + 1.2717341279951926j, -0.2631174057921088 + 0.9647638212377323j],
              [-0.2192645048267573 - 1.0963225241337866j, 2.1926450482675732 - 0.43852900965351466j]]},
    "real(det(A)*(1+2j))": {"A": [[4 - 5.5j, 2 + 1j], [-2.5 + 0j, -5j]]},
    "norm(b)": {"b": [0.4 - 0.4j, 0.8 + 0.2j]},
    "norm(A)": {
        "A": [[0.4923659639173309 + 0.24618298195866545j, 0.12309149097933272 - 0.24618298195866545j],
              [0.24618298195866545j, 0.7385489458759964 - 0.12309149097933272j]]},
    "norm(A, 'nuc')": {
        "A": [[0.9016551323278035 + 0.4300725735952613j, 0.044845347734779245 - 0.006670725194996785j],
              [-0.04150998513728091 - 0.01823526588737201j, 0.9830438307699054 - 0.17767730017407796j]]},
    "norm(A, 2)": {
        "A": [[0.28192664350704943 + 0.15486298981406715j, 0.19140877300348177 - 0.43841621824913335j],
              [0.02779933612108496 + 0.45509581992178416j, 0.6703040567382296 - 0.10245089741600999j]]},
    "sum(eigvalsh(h) * [1, 2])": {
        "h": [[1.8638034375544998 + 0j, 0.24253562503633302 - 0.24253562503633305j],
              [0.24253562503633302 + 0.24253562503633305j, 1.1361965624455004 + 0j]]},
    "sum(svd(A, compute_uv=False) * [3, 1])": {
        "A": [[1.4655084193419023 + 0.7397985532233957j, 0.42766289374174277 - 0.8835031616932635j],
              [0.014088687104889017 + 0.8919563739561964j, 2.3236519442463646 - 0.3825790950060979j]]},
    "sum(abs(A @ b)**2) + abs(mean(A @ A))": {
        "A": [[15.682945129349829 + 3.159022257401579j, 16.573907995005044 - 15.947652343634799j],
              [12.93439240322129 + 18.0771857877504j, 32.07535526887651 - 0.7794888132859777j]],
        "b": [15.5 - 34.5j, 52 + 22.5j]},
    "slogdet(A)[1]": {
        "A": [[0.48461538461538467 + 0.2230769230769231j, -0.046153846153846156 + 0.16923076923076924j],
              [-0.038461538461538464 - 0.1923076923076923j, 0.3846153846153846 - 0.07692307692307693j]]},
}


def differences(source, at, name, h=1e-6):
    """dL/dx + i dL/dy at each element of a complex input, by central differences."""
    f = lambda moved: api.evaluate(source, at={**at, name: moved}).value
    v = np.asarray(at[name])
    out = np.zeros(v.shape, dtype=complex)
    for k in range(v.size):
        for unit in (1.0, 1j):
            e = np.zeros(v.shape, dtype=complex)
            e.flat[k] = unit * h
            out.flat[k] += unit * (f(v + e) - f(v - e)) / (2 * h)
    return out


@pytest.mark.parametrize("source", sorted(TORCH))
def test_linear_algebra_gradients_are_torchs_and_match_differences(source):
    at = {k: v for k, v in {"A": A, "b": B, "h": H}.items() if k in api.load(source).inputs}
    r = api.grad(source, at=at)
    for name, want in TORCH[source].items():
        np.testing.assert_allclose(r.gradient[name], want, rtol=1e-12, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(r.gradient[name], differences(source, at, name), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("source", ["solve(A, b)", "inv(A)", "det(A)", "norm(A)", "norm(b)", "norm(A, 'nuc')",
                                    "eigvalsh(h)", "eigh(h)[0]", "eigh(h, 'U')[0]", "svd(A, compute_uv=False)",
                                    "slogdet(A)[0]", "slogdet(A)[1]", "eigh(h)[1]", "svd(A)[0]"])
def test_linear_algebra_values_of_complex_matrices_are_numpys(source):
    at = {k: v for k, v in {"A": A, "b": B, "h": H}.items() if k in api.load(source).inputs}
    want = eval(source, {"solve": np.linalg.solve, "inv": np.linalg.inv, "det": np.linalg.det,
                         "norm": np.linalg.norm, "eigvalsh": np.linalg.eigvalsh, "eigh": np.linalg.eigh,
                         "svd": np.linalg.svd, "slogdet": np.linalg.slogdet, **at})
    np.testing.assert_allclose(api.evaluate(source, at=at).value, want, rtol=1e-13, atol=1e-15)


def test_a_hermitian_matrix_from_its_lower_triangle_as_numpy_reads_it():
    # eigh(a, 'L') reads the lower triangle: the upper one gets no gradient, the lower one the
    # gradient of the Hermitian matrix it spells
    r = api.grad("sum(eigh(h, 'L')[0] * [1, 2])", at={"h": np.tril(H)})
    full = np.array(TORCH["sum(eigvalsh(h) * [1, 2])"]["h"])
    np.testing.assert_allclose(r.gradient["h"], np.tril(full + np.conj(full.T)) - np.diag(np.diag(full)), rtol=1e-12)


H3 = np.array([[2, 1 - 1j, 0.5j], [1 + 1j, -1, 2 - 0.5j], [-0.5j, 2 + 0.5j, 0.5]])
EIGENVECTORS = {   # torch.linalg.eigh(h)[1], complex128, the loss backward(), h.grad (PyTorch 2.13)
    "sum(abs(eigh(h)[1])**2 * [[1, 2, 0.5], [3, 4, -1], [0.2, 0.1, 2]])":
        [[-0.06962307671752 + 0j, -0.10222157474782143 + 0.31303347405286436j, 0.42162379861008586 + 0.08907814339396655j],
         [-0.1022215747478214 - 0.3130334740528644j, -0.14294951609011813 + 0j, 0.17337605760024213 + 0.0620619352524609j],
         [0.42162379861008586 - 0.08907814339396652j, 0.1733760576002421 - 0.0620619352524609j, 0.2125725928076379 + 0j]],
    "abs(eigh(h)[1][0, 1] * conj(eigh(h)[1][2, 1]))":
        [[-0.18195438936063452 + 0j, 0.022029454291549996 + 0.008736073973355261j, 0.061531056529810446 - 0.08907038662469523j],
         [0.022029454291550017 - 0.008736073973355267j, 0.06732686271898003 + 0j, 0.10630312193886587 - 0.011193016352263826j],
         [0.06153105652981047 + 0.08907038662469521j, 0.10630312193886587 + 0.01119301635226383j, 0.11462752664165446 + 0j]],
}


@pytest.mark.parametrize("source", sorted(EIGENVECTORS))
def test_eigenvectors_of_a_hermitian_matrix_under_a_phase_free_loss_are_torchs(source):
    r = api.grad(source, at={"h": H3})
    np.testing.assert_allclose(r.gradient["h"], EIGENVECTORS[source], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r.gradient["h"], differences(source, {"h": H3}, "h"), rtol=1e-6, atol=1e-8)


def test_a_loss_that_depends_on_an_eigenvectors_phase_is_refused():
    """v and e^{iφ} v are both eigenvectors: a loss that changes with φ has no derivative (PyTorch
    refuses it too); located, never the derivative of one phase convention passed off as the answer."""
    with pytest.raises(SourceError) as e:
        api.grad("imag(eigh(h)[1][0, 0])", at={"h": H3})
    assert e.value.kind == "not implemented" and "phase" in e.value.message and e.value.span is not None


TALL = np.array([[2 + 1j, 0.5 - 1j], [1j, 3 - 0.5j], [0.3 + 0.2j, -1 + 0.4j]])
WIDE = np.array([[2 + 1j, 0.5 - 1j, 0.3j], [1j, 3 - 0.5j, -1 + 0.4j]])
SINGULAR_VECTORS = {   # torch.linalg.svd(a, full_matrices=False), complex128, backward(), a.grad (PyTorch 2.13)
    "sum(abs(svd(a, full_matrices=False)[0])**2 * [[1, 2], [3, 4], [0.5, -1]])": (TALL, [
        [0.27169306677382427 + 0.15875047330660635j, -0.2455039823650217 + 0.3993922050512654j],
        [-0.15748131728841777 - 0.5524321664409613j, 0.5796779262867023 - 0.14910676014392293j],
        [-0.540760609432375 - 1.038137730047607j, 0.8534275822596786 - 0.5446602300316782j]]),
    "abs(svd(a, full_matrices=False)[0][0, 0] * svd(a, full_matrices=False)[2][0, 1])": (TALL, [
        [0.0742795903947312 + 0.03906492571300203j, 0.05691292408893446 - 0.12152637024041404j],
        [0.008242390345504629 - 0.048315369770264384j, -0.08588201518528565 + 0.017061132646049332j],
        [-0.0019427963108146636 + 0.013345233506897019j, 0.023239669544850915 - 0.004903738503708354j]]),
    "sum(abs(svd(a, full_matrices=False)[0])**3) + sum(abs(svd(a, full_matrices=False)[2])**2 * [[1, 2, 3], [0.5, -1, 2]])":
        (WIDE, [[-0.5076676565693126 - 0.24511314000640272j, 0.03347369233479584 - 0.04268413666453469j,
                 0.09857666853011961 - 0.5184459229921979j],
                [0.017441376556507196 - 0.33399514656515006j, 0.3157369730247259 - 0.05666670350496388j,
                 -0.6265873475628093 + 0.22106193846608788j]]),
}


@pytest.mark.parametrize("source", sorted(SINGULAR_VECTORS))
def test_singular_vectors_of_a_complex_matrix_under_a_phase_free_loss_are_torchs(source):
    a, want = SINGULAR_VECTORS[source]
    r = api.grad(source, at={"a": a})
    np.testing.assert_allclose(r.gradient["a"], want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r.gradient["a"], differences(source, {"a": a}, "a"), rtol=1e-6, atol=1e-8)


def test_the_svds_factors_multiplied_back_give_the_matrixs_gradient(tmp_path):
    """u s vh is a: the loss sum |u s vh - b|² has gradient 2 (a - b), through u's and vh's phases
    (they cancel within one svd() call)."""
    program = tmp_path / "rec.py"
    program.write_text("def f(a, b):\n    u, s, vh = svd(a, full_matrices=False)\n"
                       "    return sum(abs((u * s) @ vh - b) ** 2)\n")
    b = np.full((3, 2), 1 - 0.5j)
    r = autodiff.grad(str(program), at={"a": TALL, "b": b}, fn="f")
    np.testing.assert_allclose(r.gradient["a"], 2 * (TALL - b), atol=1e-13)


@pytest.mark.parametrize("source", ["imag(svd(a, full_matrices=False)[0][1, 0])",
                                    "real(svd(a, full_matrices=False)[2][1, 1])"])
def test_a_loss_that_depends_on_a_singular_vectors_phase_is_refused(source):
    with pytest.raises(SourceError) as e:
        api.grad(source, at={"a": TALL})
    assert e.value.kind == "not implemented" and "phase of a complex singular vector" in e.value.message
    assert e.value.span is not None


def test_imag_of_an_indexed_element_has_its_gradient():
    """imag's adjoint of a number is the Python complex -1j: indexing's adjoint scattered it into
    float zeros, dropping it (the gradient of imag(v[0]) was 0)."""
    v = np.array([1 + 2j, 3 - 1j])
    assert api.grad("imag(v[0])", at={"v": v}).gradient["v"].tolist() == [1j, 0j]
    assert api.grad("imag(v[0]) + real(v[1])", at={"v": v}).gradient["v"].tolist() == [1j, 1]


@pytest.mark.parametrize("source", ["sum(abs(dot(A, b))**2)", "abs(einsum('ij,j,i->', A, b, conj(b)))",
                                    "abs(sum(tensordot(A, A, 1)))", "sum(abs(outer(b, b))**2)",
                                    "abs(inner(b, A[0]))", "sum(abs(kron(A, b))**2)", "abs(trace(A @ A))",
                                    "sum(abs(mean(A, 0) * b))", "abs(sum(b @ A))"])
def test_products_of_complex_arrays_match_differences(source):
    at = {k: v for k, v in {"A": A, "b": B}.items() if k in api.load(source).inputs}
    r = api.grad(source, at=at)
    for name in at:
        np.testing.assert_allclose(r.gradient[name], differences(source, at, name), rtol=1e-6, atol=1e-7)


def test_complex64_vectors_are_judged_phase_free_at_their_own_precision():
    """float32 runs pair with complex64: the phase check allows their rounding (a tolerance of 1e-8
    refused this phase-free loss of a 6x4 complex64 matrix's singular vectors)."""
    rng = np.random.default_rng(1)
    c = rng.normal(size=(6, 6)) + 1j * rng.normal(size=(6, 6))
    at = {"h": c + c.conj().T, "w": rng.normal(size=(6, 6))}
    tall = {"a": rng.normal(size=(6, 4)) + 1j * rng.normal(size=(6, 4)), "w": rng.normal(size=(6, 4))}
    for source, point, name in (("sum(abs(eigh(h)[1])**2 * w)", at, "h"),
                                ("sum(abs(svd(a, full_matrices=False)[0])**2 * w)", tall, "a")):
        single = api.grad(source, at=point, dtype_name="float32").gradient[name]
        assert single.dtype == np.complex64
        np.testing.assert_allclose(single, api.grad(source, at=point).gradient[name], rtol=1e-3, atol=1e-4)


# ---- complex cholesky and qr (issue 32, h5-w item 2) ---------------------------------------------
# The truth: numpy's factors, and central differences of the real and imaginary parts (each loss
# is real; PyTorch's convention dL/dx + i dL/dy). cholesky reads the Hermitian part (A + Aᴴ)/2,
# so the differences move A off the Hermitian matrices as the rules' derivative does.

_RNG = np.random.default_rng(32)
_B3 = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
HPD = _B3 @ np.conj(_B3).T + 3 * np.eye(3)          # Hermitian positive definite
TALL43 = _RNG.standard_normal((4, 3)) + 1j * _RNG.standard_normal((4, 3))
WEIGHTS = _RNG.standard_normal((4, 3)) + 1j * _RNG.standard_normal((4, 3))
FACTOR_LOSSES = [
    ("sum(abs(cholesky(A))**2)", HPD),
    ("sum(real(cholesky(A) * W[:3]))", HPD),
    ("abs(sum(cholesky(A)[:, 0] * conj(cholesky(A)[:, 1])))", HPD),
    ("sum(abs(qr(A)[1])**2 * [[1, 2, 3]])", TALL43),
    ("sum(real(qr(A)[1] * W[:3]))", TALL43),
    ("sum(imag(qr(A, 'r') * W[:3]))", TALL43),
    ("sum(real(qr(A)[0] * conj(qr(A)[0]) * W))", TALL43),
    ("sum(imag((qr(A)[0] @ qr(A)[1]) * W))", TALL43),
]


@pytest.mark.parametrize("source, a", FACTOR_LOSSES)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_complex_cholesky_and_qr_gradients_match_differences(source, a, mode):
    at = {"A": a, **({"W": WEIGHTS} if "W" in source else {})}
    g = api.grad(source, at=at, wrt=["A"], mode=mode).gradient["A"]
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, differences(source, at, "A"), rtol=1e-6, atol=1e-7)


def test_complex_cholesky_and_qr_values_are_numpys():
    np.testing.assert_allclose(api.evaluate("cholesky(A)", at={"A": HPD}).value, np.linalg.cholesky(HPD),
                               rtol=1e-14, atol=1e-15)
    q, r = np.linalg.qr(TALL43)
    np.testing.assert_allclose(api.evaluate("qr(A)[0]", at={"A": TALL43}).value, q, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(api.evaluate("qr(A)[1]", at={"A": TALL43}).value, r, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(api.evaluate("qr(A, 'r')", at={"A": TALL43}).value, r, rtol=1e-13, atol=1e-15)


def test_complex_cholesky_and_qr_tangents_match_differences():
    """The JVPs alone: J·u of the factors at a complex tangent u, against central differences."""
    from autodiff.engine.diff import forward
    from autodiff.engine.lang.target import load
    u = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
    for source, a, f in [("cholesky(A)", HPD, lambda m: np.linalg.cholesky((m + np.conj(m).T) / 2)),
                         ("qr(A)[0]", TALL43, lambda m: np.linalg.qr(m)[0]),
                         ("qr(A)[1]", TALL43, lambda m: np.linalg.qr(m)[1])]:
        t = u if a.shape == (3, 3) else np.vstack([u, u[:1]])
        _, tangent, _ = forward.jvp(load(source, None, None), {"A": a}, {"A": t}, None)
        h = 1e-6
        np.testing.assert_allclose(tangent, (f(a + h * t) - f(a - h * t)) / (2 * h), rtol=1e-6, atol=1e-8,
                                   err_msg=source)


def test_complex_cholesky_and_qr_are_not_holomorphic_and_check_from_the_cli():
    from autodiff.engine.core import rules
    assert all(rules.TABLE[n].complex_values is True and rules.TABLE[n].holomorphic is False
               for n in ("cholesky", "qr_q", "qr_r"))
    out = run_cli("grad", "sum(abs(cholesky(A))**2)", "--at", "A=[[3,1j],[-1j,2]]", "--check")
    assert out.code == 0 and "A[0, 1].imag" in out.out


# ---- complex eig (issue 32, h6-d2 item 2) ---------------------------------------------------------
# numpy's eig of a complex matrix, or of a real one with complex eigenvalues, returns complex
# values and unit eigenvectors. The truth: numpy's arrays, and central differences of the real
# and imaginary parts of A (each loss real; PyTorch's convention dL/dx + i dL/dy). A loss of the
# eigenvectors must not depend on a vector's phase (v and e^{iφ} v are both numpy's answer).

EIG_A = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
ROTATION = np.array([[0.3, -1.2, 0.4], [1.1, 0.5, -0.2], [0.1, 0.7, 0.9]])     # real, complex eigenvalues
EIG_LOSSES = [
    "abs(eig(A)[0][0])**2 + real(eig(A)[0][1] * (1 - 2j)) + imag(eig(A)[0][2])",
    "sum(real(np.linalg.eig(A)[0] * W[0]))",
    "sum(abs(eig(A)[1])**3 * real(W[:3]))",
    "abs(sum(eig(A)[1][:, 0] * conj(eig(A)[1][:, 1])))",
    "sum(abs(eig(A)[1] @ diag(eig(A)[0])))",
]


def test_complex_eig_values_and_vectors_are_numpys():
    for a in (EIG_A, ROTATION):
        w, v = np.linalg.eig(a)
        assert np.iscomplexobj(w) and np.iscomplexobj(v)
        np.testing.assert_array_equal(api.evaluate("eig(A)[0]", at={"A": a}).value, w)
        np.testing.assert_array_equal(api.evaluate("np.linalg.eig(A)[1]", at={"A": a}).value, v)


@pytest.mark.parametrize("source", EIG_LOSSES)
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_complex_eig_gradients_match_differences(source, mode):
    at = {"A": EIG_A, **({"W": WEIGHTS} if "W" in source else {})}
    g = api.grad(source, at=at, wrt=["A"], mode=mode).gradient["A"]
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, differences(source, at, "A"), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("source", ["real(eig(R)[0][0]) + imag(eig(R)[0][0])**2",
                                    "sum(abs(eig(R)[0] * [1, 2j, 3]))",
                                    "sum(abs(eig(R)[1])**2 * [[1, 2, 3]]) + abs(eig(R)[1][0, 0])"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_eig_of_a_real_matrix_with_complex_eigenvalues_has_a_real_gradient(source, mode):
    g = api.grad(source, at={"R": ROTATION}, mode=mode).gradient["R"]
    assert g.dtype == np.float64
    f = lambda m: api.evaluate(source, at={"R": m}).value
    want = np.zeros((3, 3))
    for k in range(9):
        e = np.zeros(9)
        e[k] = 1e-6
        want.flat[k] = (f(ROTATION + e.reshape(3, 3)) - f(ROTATION - e.reshape(3, 3))) / 2e-6
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)


def test_complex_eig_tangents_match_differences():
    """The JVPs alone: J·u of eig's values and of a phase-free function of its vectors."""
    from autodiff.engine.diff import forward
    from autodiff.engine.lang.target import load
    u = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
    for source, f in [("eig(A)[0]", lambda m: np.linalg.eig(m)[0]),
                      ("abs(eig(A)[1])", lambda m: np.abs(np.linalg.eig(m)[1]))]:
        _, tangent, _ = forward.jvp(load(source, None, None), {"A": EIG_A}, {"A": u}, None)
        h = 1e-6
        np.testing.assert_allclose(tangent, (f(EIG_A + h * u) - f(EIG_A - h * u)) / (2 * h), rtol=1e-6, atol=1e-8,
                                   err_msg=source)


def test_eig_values_are_holomorphic_and_its_vectors_are_not():
    from autodiff.engine.core import rules
    assert rules.TABLE["eig_values"].complex_values is True and rules.TABLE["eig_values"].holomorphic is True
    assert rules.TABLE["eig_vectors"].complex_values is True and rules.TABLE["eig_vectors"].holomorphic is False
    w, v = np.linalg.eig(EIG_A)
    vinv = np.linalg.inv(v)
    j = api.jacobian("eig(A)[0]", at={"A": EIG_A}, holomorphic=True).jacobian["A"]
    np.testing.assert_allclose(j, np.einsum("ij,ki->ijk", vinv, v), rtol=1e-12, atol=1e-13)   # dw_i/dA_jk
    with pytest.raises(SourceError) as e:
        api.jacobian("eig(A)[1]", at={"A": EIG_A}, holomorphic=True)
    assert e.value.kind == "not holomorphic" and "eig_vectors" in e.value.message


def test_a_loss_of_an_eigenvectors_phase_is_refused():
    with pytest.raises(SourceError, match="phase of a complex eigenvector"):
        api.grad("real(sum(eig(A)[1]))", at={"A": EIG_A})


@pytest.mark.parametrize("at, hint", [
    ("z=1+j", "1j"), ("z=[j, 2]", "1j"), ("z=1+y", "give numbers"),
])
def test_at_value_naming_a_variable_hints_what_to_write(at, hint):
    """`--at z=1+j` (the imaginary unit as maths writes it) said only that the value uses 'j'."""
    out = run_cli("grad", "abs(z)", "--at", at)
    assert out.code == 2 and "a value must be a constant" in out.err and "--at z:1:1" in out.err
    assert "hint:" in out.err and hint in out.err.split("hint:")[1]


@pytest.mark.parametrize("text", ["1+2i", "3I"])
def test_imaginary_unit_written_i_hints_j(text):
    """`--at z=1+2i` was told to 'write * to multiply'."""
    out = run_cli("grad", "abs(z)", "--at", f"z={text}")
    assert out.code == 2 and f"--at z:1:{len(text)}" in out.err and "unexpected" in out.err
    assert "hint: the imaginary unit is written j" in out.err and "1+2j" in out.err


@pytest.mark.parametrize("source, reference", [
    ("var(z)", lambda z, A: np.var(z)), ("std(z)", lambda z, A: np.std(z)),
    ("var(z, ddof=1)", lambda z, A: np.var(z, ddof=1)),
    ("var(A, axis=1, keepdims=True)", lambda z, A: np.var(A, axis=1, keepdims=True)),
    ("nanvar(A)", lambda z, A: np.nanvar(A)), ("nanstd(A, axis=0)", lambda z, A: np.nanstd(A, axis=0)),
    ("nanvar(A, axis=1, ddof=1)", lambda z, A: np.nanvar(A, axis=1, ddof=1))])
def test_the_variance_of_complex_values_is_numpys_real_number(source, reference):
    """numpy's var of complex values is the mean of |z - mean|² (a real number: re² + im² added as
    numpy's var adds them, nanvar's real(c * conj(c))); it was the mean of (z - mean)², a complex
    number and a silent wrong answer (var([0.3+0.4j, 1.2-0.7j]) gave -0.1-0.495j for 0.505)."""
    rng = np.random.default_rng(32)
    z = rng.normal(size=7) + 1j * rng.normal(size=7)
    A = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    A[1, 2] = np.nan
    value = np.asarray(autodiff.evaluate(source, at={"A": A} if "A" in source else {"z": z}).value)
    expected = np.asarray(reference(z, A))
    assert value.dtype == expected.dtype == np.float64
    assert np.array_equal(value, expected, equal_nan=True)


def test_the_gradient_of_a_complex_variance_is_pytorchs():
    z = np.array([0.3 + 0.4j, 1.2 - 0.7j, -2 + 0.1j])
    # torch.var(z, unbiased=False).backward(): z.grad = 2 (z - mean) / n
    assert np.allclose(autodiff.grad("var(z)", at={"z": z}).gradient["z"], 2 * (z - z.mean()) / 3, rtol=1e-14)


# numpy's functions on complex values that the language refused or crashed on (issue 32 item 1)
Z2 = np.array([0.3 + 0.4j, 1.2 - 0.7j])
A23 = np.array([[0.3 + 4j, 0.1 - 0.2j, 1.2 - 7.7j], [1 + 1j, 2 - 1j, 0.5j]])


def central_array(source, at, name, h=1e-6):
    """df/dx + i df/dy for each element of the array input `name`, by central differences."""
    x0 = np.asarray(at[name])
    out = np.zeros(x0.shape, complex)
    for idx in np.ndindex(x0.shape):
        for unit in (1, 1j):
            parts = []
            for step in (h, -h):
                x = x0.copy()
                x[idx] += unit * step
                parts.append(api.evaluate(source, at={**at, name: x}).value)
            out[idx] += unit * (parts[0] - parts[1]) / (2 * h)
    return out


@pytest.mark.parametrize("name, reference", [
    ("arcsinh", np.arcsinh), ("asinh", np.arcsinh), ("sign", np.sign), ("cumprod", np.cumprod)])
def test_more_of_numpys_functions_take_complex_values_with_numpys_bits(name, reference):
    v = np.array([0.3 + 0.4j, -1 - 2j, 2 + 0j, 0.5j, 1e-3 - 4j])
    assert np.array_equal(api.evaluate(f"{name}(v)", at={"v": v}).value, reference(v))


@pytest.mark.parametrize("source", ["sum(abs(arcsinh(z))**2)", "sum(real(arcsinh(z)) * imag(asinh(z)))",
                                    "sum(abs(sign(z) * (2 + 1j) + z)**2)", "sum(imag(sign(z))**3)",
                                    "sum(abs(cumprod(z))**2)", "real(cumprod(z)[1] * 1j)",
                                    "abs(logsumexp(z))**2", "imag(logsumexp(z)) + real(logsumexp(z))**2"])
def test_more_of_numpys_functions_have_complex_gradients_that_agree_with_differences(source):
    at = {"z": Z2}
    np.testing.assert_allclose(api.grad(source, at=at).gradient["z"], central_array(source, at, "z"), atol=1e-7)


def test_arcsinhs_derivative_is_holomorphic_at_every_order():
    # arcsinh'(z) = (1 + z²)^(-1/2), arcsinh''(z) = -z (1 + z²)^(-3/2)
    z = 0.3 + 0.4j
    for method in ("reverse", "forward"):
        d = api.derivatives("arcsinh(z)", at={"z": z}, order=2, method=method).derivatives
        assert d == pytest.approx([(1 + z * z) ** -0.5, -z * (1 + z * z) ** -1.5], rel=1e-14)


def torch_sgn_gradient(z, w):
    """PyTorch's gradient of L = sum(|sign(z) w + z|²) (torch.sgn's backward, sgn_backward:
    (gx - sgn² conj(gx)) / 2|z|, 0 at |z| = 0; gx the gradient reaching sgn(z), conj(w) 2u)."""
    s = np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z)))
    u = s * w + z
    gx = 2 * u * np.conj(w)
    through = np.where(z == 0, 0, (gx - s * s * np.conj(gx)) / (2 * np.where(z == 0, 1, np.abs(z))))
    return through + 2 * u


def test_the_gradient_of_complex_sign_is_pytorchs_sgn_backward_and_zero_at_zero():
    z = np.array([0.3 + 0.4j, 1.2 - 0.7j, 0j, -2 + 0j])
    r = api.grad("sum(abs(sign(z) * (2 + 1j) + z)**2)", at={"z": z})
    np.testing.assert_allclose(r.gradient["z"], torch_sgn_gradient(z, 2 + 1j), rtol=1e-14, atol=1e-15)
    assert {k[0] for k in r.kinks} >= {"hypot"}            # sign'(0) = 0: hypot'(0, 0) = 0, noted
    # a real x keeps numpy's -1/0/1, a step function with no gradient
    assert api.grad("sum(sign(x) * x)", at={"x": np.array([-2.0, 0.0, 3.0])}).gradient["x"].tolist() == [-1, 0, 1]


@pytest.mark.parametrize("source, reference", [
    ("logsumexp(A)", lambda a: sp_logsumexp(a)), ("logsumexp(A, axis=1)", lambda a: sp_logsumexp(a, axis=1)),
    ("logsumexp(A, axis=0, keepdims=True)", lambda a: sp_logsumexp(a, axis=0, keepdims=True)),
    ("logsumexp(A[0, 0])", lambda a: sp_logsumexp(a[0, 0]))])
def test_logsumexp_of_complex_values_is_scipys(source, reference):
    # scipy's imaginary part is the principal one, in (-pi, pi]: 4j and -7.7j are wrapped
    np.testing.assert_allclose(api.evaluate(source, at={"A": A23}).value, reference(A23), rtol=1e-15, atol=1e-15)


def sp_logsumexp(*args, **kw):
    from scipy.special import logsumexp
    return logsumexp(*args, **kw)


def test_logsumexp_of_complex_values_has_the_softmax_gradient():
    g = api.grad("abs(logsumexp(A, axis=1)[0])**2", at={"A": A23}).gradient["A"]
    lse = sp_logsumexp(A23[0])
    softmax = np.exp(A23[0] - lse)
    np.testing.assert_allclose(g[0], 2 * lse * np.conj(softmax), rtol=1e-13)     # PyTorch's: 2 conj(dL/dz)
    assert not g[1].any()


CA = np.array([[1 + 0.5j, 0.2 - 0.3j], [0.4 + 0.1j, 2 - 1j]])
TALL = np.array([[1 + 0.5j, 0.2 - 0.3j], [0.4 + 0.1j, 2 - 1j], [0.3 - 0.2j, -1 + 0.6j]])
B3 = np.array([0.3 + 0.4j, 1.2 - 0.7j, -0.5 + 0.1j])


def named_in(source, at):
    """The inputs `source` names (a whole word: T, not the T of True or of A.T)."""
    import re
    return {k: v for k, v in at.items() if re.search(rf"(?<![\w.]){k}(?!\w)", source)}


def _scipy_linalg():
    import scipy.linalg
    return scipy.linalg


@pytest.mark.parametrize("source, reference", [
    ("lstsq(A, z)[0]", lambda sl: np.linalg.lstsq(CA, Z2)[0]),
    ("lstsq(T, b)[0]", lambda sl: np.linalg.lstsq(TALL, B3)[0]),
    ("lstsq(T, b)[1]", lambda sl: np.linalg.lstsq(TALL, B3)[1]),          # real squared residual norms
    ("lstsq(T.T, z)[0]", lambda sl: np.linalg.lstsq(TALL.T, Z2)[0]),      # the least-norm solution
    ("cho_factor(A @ conj(A.T))[0]", lambda sl: np.triu(sl.cho_factor(CA @ CA.conj().T)[0])),
    ("cho_solve(cho_factor(A @ conj(A.T)), z)", lambda sl: sl.cho_solve(sl.cho_factor(CA @ CA.conj().T), Z2)),
    ("cho_solve(cho_factor(A @ conj(A.T), lower=True), z)",
     lambda sl: sl.cho_solve(sl.cho_factor(CA @ CA.conj().T, lower=True), Z2)),
    ("solve_triangular(A, z, trans=2)", lambda sl: sl.solve_triangular(CA, Z2, trans=2)),
    ("solve_triangular(A, z, trans='C', lower=True)", lambda sl: sl.solve_triangular(CA, Z2, trans="C", lower=True))])
def test_complex_least_squares_and_cholesky_solves_are_numpys_and_scipys(source, reference):
    """The conjugate transpose where these took the transpose (a silent wrong answer for complex a)."""
    at = {"A": CA, "z": Z2, "T": TALL, "b": B3}
    value = np.asarray(api.evaluate(source, at=named_in(source, at)).value)
    expected = reference(_scipy_linalg())
    assert value.dtype == expected.dtype
    np.testing.assert_allclose(value, expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("source", ["sum(abs(lstsq(T, b)[0])**2)", "lstsq(T, b)[1][0]",
                                    "sum(abs(cho_solve(cho_factor(T.T @ conj(T)), z))**2)",
                                    "sum(real(solve_triangular(T[0:2], z, trans=2) * 1j))"])
def test_complex_least_squares_and_cholesky_gradients_agree_with_differences(source):
    at = named_in(source, {"T": TALL, "b": B3, "z": Z2})
    g = api.grad(source, at=at).gradient
    for name in at:
        np.testing.assert_allclose(g[name], central_array(source, at, name), atol=1e-7)


@pytest.mark.parametrize("source", ["real(slogdet(A)[0])", "abs(slogdet(A)[0] * 2)", "sum(imag(slogdet(S)[0]) * real(slogdet(S)[1]))"])
def test_the_sign_of_a_complex_slogdet_is_det_over_its_modulus_with_its_gradient(source):
    """numpy's sign of a complex det is det/|det|, a function of A: its gradient was 0 (held as a
    constant), and abs() of it crashed on Python's complex number."""
    at = named_in(source, {"A": CA, "S": np.stack([CA, 1j * CA.T])})
    for name, x in at.items():
        np.testing.assert_allclose(api.evaluate(f"slogdet({name})[0]", at={name: x}).value, np.linalg.slogdet(x)[0],
                                   rtol=1e-15)
        np.testing.assert_allclose(api.grad(source, at=at).gradient[name], central_array(source, at, name), atol=1e-7)


@pytest.mark.parametrize("value", [2 + 0j, 0j, -3 + 4j])
def test_abs_and_sqrt_take_a_python_complex_number(value):
    from autodiff.engine.core import ops
    assert ops.abs(value) == np.abs(value) and ops.sqrt(value) == np.sqrt(value)


@pytest.mark.parametrize("source, reference", [
    ("rint(z)", np.rint), ("round(z)", np.round), ("around(z, 1)", lambda z: np.around(z, 1)),
    ("round(z * 100, -1)", lambda z: np.round(z * 100, -1))])
def test_rounding_a_complex_value_rounds_its_parts_as_numpy(source, reference):
    z = np.array([0.5 + 1.5j, -2.5 - 0.5j, 1.26 - 3.449j, complex(np.inf, np.nan), 0.15 + 0.25j, 2.675 - 1.005j])
    assert np.array_equal(api.evaluate(source, at={"z": z}).value, reference(z), equal_nan=True)
    # a step function: no gradient through it
    g = api.grad(f"sum(abs({source} + z)**2)", at={"z": z[:3]}).gradient["z"]
    np.testing.assert_allclose(g, 2 * (reference(z[:3]) + z[:3]), rtol=1e-15)


@pytest.mark.parametrize("source", ["deg2rad(z)", "rad2deg(z)", "radians(z)", "degrees(z)"])
def test_angle_conversions_refuse_complex_values_as_numpy(source):
    """numpy's deg2rad and rad2deg have no complex loop (a TypeError): not a scaled complex number."""
    with pytest.raises(SourceError) as e:
        api.evaluate(f"abs({source})", at={"z": 1j})
    assert e.value.kind == "type error" and "takes real values" in e.value.message and e.value.span is not None


@pytest.mark.parametrize("name", ["erf", "erfc", "gamma", "digamma"])
def test_scipys_special_functions_of_complex_values_are_scipys(name):
    import scipy.special
    v = np.array([0.3 + 0.4j, -1.5 - 2j, 2 + 0j, 0.5j])
    assert np.array_equal(api.evaluate(f"{name}(v)", at={"v": v}).value, getattr(scipy.special, name)(v))
    assert np.array_equal(api.evaluate("xlogy(v, 2 * v)", at={"v": v}).value, scipy.special.xlogy(v, 2 * v))


@pytest.mark.parametrize("source", ["sum(abs(erf(z))**2)", "sum(imag(erfc(z)))", "sum(abs(gamma(z)))",
                                    "sum(real(xlogy(z, 2 * z + 1)))", "sum(abs(xlogy(1.5, z))**2)", "sum(real(digamma(z)))"])
def test_scipys_special_functions_of_complex_values_have_gradients_that_agree_with_differences(source):
    at = {"z": Z2}
    if "digamma" in source:     # its derivative, polygamma of order 1, has no complex form in scipy: refused, located
        with pytest.raises(SourceError) as e:
            api.grad(source, at=at)
        assert e.value.kind == "not implemented" and "polygamma of order 1" in e.value.message
        assert e.value.span is not None
        return
    np.testing.assert_allclose(api.grad(source, at=at).gradient["z"], central_array(source, at, "z"), atol=1e-7)


def test_the_sign_of_a_complex_value_with_an_infinite_part_is_numpys():
    z = np.array([complex(np.inf, 1), complex(1, -np.inf), complex(-np.inf, np.inf), complex(np.nan, np.inf),
                  complex(np.nan, 1), 0.3 + 0.4j, 0j])
    assert np.array_equal(api.evaluate("sign(z)", at={"z": z}).value, np.sign(z), equal_nan=True)
    assert api.evaluate("sign(z)", at={"z": complex(-np.inf, 2)}).value == -1
