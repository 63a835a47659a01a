"""Issue 32 item 1: np.fft in the language (core/library/fft.py, core/rules/fft.py): numpy's values
and arguments, and gradients of real losses of their outputs against central differences in the
real and imaginary parts of each input (the table's own walk, tests/test_rules.py, checks each
entry's VJP and JVP). The reported gradient of a complex input is PyTorch's convention,
dL/dx + i dL/dy."""
import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.parser.errors import SourceError

from test_cli_grad import run_cli

rng = np.random.default_rng(32)
X = np.array([1.0, 2.0, 3.0, 4.0])
Z = rng.normal(size=5) + 1j * rng.normal(size=5)
M = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
R = rng.normal(size=(3, 4))


def test_the_issues_truth_sum_abs_fft_squared():
    # Parseval: sum |fft(x)|^2 = n sum x^2, so the gradient is 2 n x = [8, 16, 24, 32]
    # (PyTorch complex128 and jax.grad give the same: the input is real)
    r = api.grad("sum(abs(np.fft.fft(x))**2)", at={"x": X})
    np.testing.assert_allclose(r.gradient["x"], [8.0, 16.0, 24.0, 32.0], rtol=1e-15)
    assert r.value == pytest.approx(120.0, rel=1e-15)
    assert not np.iscomplexobj(r.gradient["x"])


@pytest.mark.parametrize("source, reference", [
    ("np.fft.fft(z)", lambda: np.fft.fft(Z)),
    ("np.fft.fft(z, 8)", lambda: np.fft.fft(Z, 8)),
    ("np.fft.fft(z, n=3, norm='ortho')", lambda: np.fft.fft(Z, n=3, norm="ortho")),
    ("np.fft.ifft(z, norm='forward')", lambda: np.fft.ifft(Z, norm="forward")),
    ("np.fft.fft(m, axis=0)", lambda: np.fft.fft(M, axis=0)),
    ("np.fft.rfft(x)", lambda: np.fft.rfft(X)),
    ("np.fft.rfft(r, 5, 0)", lambda: np.fft.rfft(R, 5, 0)),
    ("np.fft.irfft(z)", lambda: np.fft.irfft(Z)),
    ("np.fft.irfft(z, 9, norm='ortho')", lambda: np.fft.irfft(Z, 9, norm="ortho")),
    ("np.fft.fft2(m)", lambda: np.fft.fft2(M)),
    ("np.fft.ifft2(m, s=(2, 6))", lambda: np.fft.ifft2(M, s=(2, 6))),
    ("np.fft.fftn(m)", lambda: np.fft.fftn(M)),
    ("np.fft.fftn(r, s=(5,))", lambda: np.fft.fftn(R, s=(5,), axes=(1,))),
    ("np.fft.ifftn(m, axes=(0,))", lambda: np.fft.ifftn(M, axes=(0,))),
    ("np.fft.fftshift(x)", lambda: np.fft.fftshift(X)),
    ("np.fft.ifftshift(m, axes=1)", lambda: np.fft.ifftshift(M, axes=1)),
    ("np.fft.fftshift(np.fft.fft(z))", lambda: np.fft.fftshift(np.fft.fft(Z))),
])
def test_values_are_numpys(source, reference):
    at = {k: v for k, v in {"x": X, "z": Z, "m": M, "r": R}.items() if k in api.load(source).inputs}
    got = api.evaluate(source, at=at).value
    want = reference()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def differences(source, at, name, h=1e-6):
    """dL/dx + i dL/dy at each element of a complex input (dL/dx for a real one)."""
    f = lambda moved: api.evaluate(source, at={**at, name: moved}).value
    v = np.asarray(at[name])
    out = np.zeros(v.shape, dtype=v.dtype)
    for k in range(v.size):
        for unit in ((1.0, 1j) if np.iscomplexobj(v) else (1.0,)):
            e = np.zeros(v.shape, dtype=v.dtype)
            e.flat[k] = unit * h
            out.flat[k] += unit * (f(v + e) - f(v - e)) / (2 * h)
    return out


@pytest.mark.parametrize("source", [
    "sum(abs(np.fft.fft(z))**2)",
    "sum(real(np.fft.fft(z, 7) * w[0:7]))",
    "sum(imag(np.fft.ifft(z, 3, norm='ortho')) ** 2)",
    "sum(abs(np.fft.rfft(x * x, 6)))",
    "sum(np.fft.irfft(z, 6) * x[0])",
    "sum(np.fft.irfft(z * z, 9, norm='forward') ** 2)",
    "sum(abs(np.fft.fft2(m) - 1) ** 2)",
    "sum(real(np.fft.ifftn(m, s=(4, 3)) * conj(np.fft.fftn(m))[0:3, 0:3][0, 0]))",
    "sum(abs(np.fft.fftshift(np.fft.fft(z)) * w[0:5]))",
    "sum(abs(np.fft.irfft(np.fft.rfft(x)) - x) + x * x)",
])
def test_gradients_match_differences_of_real_and_imaginary_parts(source):
    at = {"z": Z, "x": X, "m": M, "w": rng.normal(size=8) + 1j * rng.normal(size=8)}
    at = {k: v for k, v in at.items() if k in api.load(source).inputs}
    r = api.grad(source, at=at)
    for name in at:
        np.testing.assert_allclose(r.gradient[name], differences(source, at, name), rtol=1e-6, atol=1e-6,
                                   err_msg=name)


# PyTorch 2.13, complex128: the same losses written with torch.fft, backward(), and each input's
# .grad (PyTorch's convention, the one reported here), written down to 16 digits.
ZT = np.array([1 + 1j, 2 - 1j, 0.5j, -1])
AT = np.array([[2 + 1j, 0.5 - 1j], [1j, 3 - 0.5j]])
TORCH = {
    "sum(abs(np.fft.fft(z, 6))**2 * arange(6))": ("z", ZT, [
        32.66025403784438 + 53.78460969082653j, 65.19615242270663 - 52.856406460551014j,
        -18.928203230275507 - 19.64101615137755j, -46.26794919243112 - 9.928203230275507j]),
    "sum(np.fft.irfft(z, 5) * arange(5))**2": ("z", ZT, [
        -4.855688289418881 + 0j, 2.4278441447094394 - 3.3416407864998736j, 2.4278441447094394 - 0.788854381999832j, 0j]),
    "sum(abs(np.fft.rfft(x))**2 * arange(3))": ("x", X, [-12.0, 4.0, -4.0, 12.0]),
    "sum(real(np.fft.fft2(a, norm='ortho')) * [[1, 2], [3, 4]]) + imag(np.fft.fftshift(a)[0, 0])":
        ("a", AT, [[5 + 0j, -1 + 0j], [-2 + 0j, 1j]]),
}


@pytest.mark.parametrize("source", sorted(TORCH))
def test_gradients_are_torchs(source):
    name, value, want = TORCH[source]
    got = api.grad(source, at={name: value}).gradient[name]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got, differences(source, {name: value}, name), rtol=1e-6, atol=1e-6)


def test_a_loss_of_fft_of_complex_input_has_the_hand_gradient():
    # L = sum |fft(z)|^2 = n sum |z|^2: dL/dx + i dL/dy = 2 n z
    r = api.grad("sum(abs(np.fft.fft(z))**2)", at={"z": Z})
    np.testing.assert_allclose(r.gradient["z"], 10 * Z, rtol=1e-13)
    # the rfft of a real x keeps half the spectrum: L = |X0|^2 + |X1|^2 + |X2|^2 for n = 4
    x = np.array([1.0, 2.0, 3.0, 4.0])
    r = api.grad("sum(abs(np.fft.rfft(x))**2)", at={"x": x})
    # X0 = sum x, X2 = x0 - x1 + x2 - x3, |X1|^2 = (x0 - x2)^2 + (x1 - x3)^2
    want = 2 * (x.sum() + (x[0] - x[1] + x[2] - x[3]) * np.array([1, -1, 1, -1])
                + np.array([x[0] - x[2], x[1] - x[3], x[2] - x[0], x[3] - x[1]]))
    np.testing.assert_allclose(r.gradient["x"], want, rtol=1e-14)


def test_forward_mode_on_real_inputs_agrees_with_reverse():
    for source in ("sum(abs(np.fft.fft(x, 6))**2)", "sum(np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(x)))"):
        reverse = api.grad(source, at={"x": X}).gradient["x"]
        forward = api.grad(source, at={"x": X}, mode="forward").gradient["x"]
        np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-12)


def test_module_spellings_and_imports():
    assert np.allclose(api.evaluate("fft(x)", at={"x": X}).value, np.fft.fft(X))
    assert np.allclose(api.evaluate("numpy.fft.rfft(x)", at={"x": X}).value, np.fft.rfft(X))


def test_import_numpy_fft_in_a_program(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("import numpy as np\nfrom numpy import fft\nimport numpy.fft as nf\n\n"
                       "def f(x):\n    return np.sum(np.abs(fft.fft(x)) ** 2) + np.sum(nf.rfft(x).real)\n")
    r = autodiff.grad(str(program), at={"x": X}, fn="f")
    # sum |fft(x)|^2 = 4 sum x^2 gives 8x; sum real(rfft(x)) = sum_j x_j sum_{k<3} cos(pi jk/2), whose
    # gradient is [3, 0, 1, 0]
    want = 8 * X + np.array([3.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(r.gradient["x"], want, rtol=1e-14)


@pytest.mark.parametrize("source, message", [
    ("np.fft.fft(x, norm='unit')", "norm must be one of"),
    ("np.fft.fft(x, 0)", "n must be at least 1"),
    ("np.fft.fft(x, axis=2)", "out of bounds"),
    ("np.fft.fft2(x)", "out of bounds"),
    ("np.fft.fftn(m, axes=(0, 0))", "appears twice"),
    ("np.fft.rfft(z)", "does not take complex values"),
    ("np.fft.fft(2.0)", "at least one dimension"),
    ("np.fft.fftt(x)", "np.fft.fft"),
    # the real and Hermitian transforms
    ("np.fft.rfftn(m)", "does not take complex values"),
    ("np.fft.ihfft(z)", "does not take complex values"),
    ("np.fft.irfftn(x, axes=())", "at least one axis"),
    ("np.fft.rfft2(x)", "out of bounds"),
    ("np.fft.hfft(x, norm='unit')", "norm must be one of"),
])
def test_misuse_is_a_located_error(source, message):
    with pytest.raises(SourceError) as e:
        at = {k: v for k, v in {"x": X, "z": Z, "m": M}.items() if k in api.load(source).inputs}
        api.evaluate(source, at=at)
    assert message in e.value.message + (e.value.hint or "") and e.value.span is not None


def test_cli_grad_of_the_issues_example():
    doc = run_cli("grad", "sum(abs(np.fft.fft(x))**2)", "--at", "x=[1,2,3,4]", "--json").json
    assert doc["gradient"]["x"] == [8.0, 16.0, 24.0, 32.0]
    out = run_cli("grad", "sum(abs(np.fft.fft(z))**2)", "--at", "z=[1+1j,2-1j,0.5j]", "--check")
    assert out.code == 0, out.out + out.err


def test_hessian_and_jacobians_of_real_inputs():
    # sum |fft(x)|^2 = 4 sum x^2: the Hessian 8 I; irfft(rfft(x)^2) is x circularly convolved with
    # itself, whose Jacobian is 2 x_{i-j}
    h = api.hessian("sum(abs(np.fft.fft(x))**2)", at={"x": X}).hessian["x"]["x"]
    np.testing.assert_allclose(h, 8 * np.eye(4), atol=1e-14)
    circulant = 2 * np.array([[X[(i - j) % 4] for j in range(4)] for i in range(4)])
    for mode in ("reverse", "forward"):
        j = api.jacobian("np.fft.irfft(np.fft.rfft(x)**2)", at={"x": X}, mode=mode).jacobian["x"]
        np.testing.assert_allclose(j, circulant, atol=1e-13)


def test_a_function_called_again_agrees_with_a_fresh_gradient():
    f = autodiff.function("sum(abs(np.fft.fft(x))**2) + sum(np.fft.irfft(np.fft.rfft(x) * x[0]))")
    for x in ([1.0, 2.0, 3.0, 4.0], [0.5, 1.0, -2.0, 3.0], [1.0, 2.0, 3.0, 4.0]):
        x = np.array(x)
        fresh = api.grad("sum(abs(np.fft.fft(x))**2) + sum(np.fft.irfft(np.fft.rfft(x) * x[0]))", at={"x": x})
        np.testing.assert_array_equal(f.grad(x=x)["x"], fresh.gradient["x"])


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.1, 3.7])
def test_fftfreq_and_rfftfreq_are_numpys_bits(n, d):
    for name in ("fftfreq", "rfftfreq"):
        got = api.evaluate(f"np.fft.{name}({n}, d={d})").value
        want = getattr(np.fft, name)(n, d)
        assert got.dtype == want.dtype and np.array_equal(got, want), name


def test_fftfreq_is_differentiable_in_its_spacing_and_takes_the_runs_dtype():
    # sum(w * k / (n d)) has derivative -sum(w * k / (n d)) / d
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    r = api.grad("sum(np.fft.fftfreq(5, d) * w)", at={"d": 0.1, "w": w})
    assert r.gradient["d"] == pytest.approx(-np.sum(np.fft.fftfreq(5, 0.1) * w) / 0.1, rel=1e-14)
    assert api.evaluate("np.fft.rfftfreq(6)", dtype_name="float32").value.dtype == np.float32
    with pytest.raises(SourceError) as e:
        api.evaluate("np.fft.fftfreq(0)")
    assert "at least 1" in e.value.message and e.value.span is not None


# rfft2 irfft2 rfftn irfftn hfft ihfft: numpy's own compositions of the entries (core/library/fft.py)
R3 = rng.normal(size=(3, 4, 5))
COMPOSITES = [
    ("np.fft.rfftn(r3)", lambda: np.fft.rfftn(R3)),
    ("np.fft.rfftn(r3, s=(3, 6), norm='ortho')", lambda: np.fft.rfftn(R3, s=(3, 6), norm="ortho")),
    ("np.fft.rfftn(r3, axes=(2, 0))", lambda: np.fft.rfftn(R3, axes=(2, 0))),
    ("np.fft.rfft2(r)", lambda: np.fft.rfft2(R)),
    ("np.fft.rfft2(r3, s=(5, 3), axes=(0, 1), norm='forward')",
     lambda: np.fft.rfft2(R3, s=(5, 3), axes=(0, 1), norm="forward")),
    ("np.fft.irfftn(m)", lambda: np.fft.irfftn(M)),
    ("np.fft.irfftn(m, s=(2, 7), norm='ortho')", lambda: np.fft.irfftn(M, s=(2, 7), norm="ortho")),
    ("np.fft.irfftn(m, axes=(0,))", lambda: np.fft.irfftn(M, axes=(0,))),
    ("np.fft.irfft2(m)", lambda: np.fft.irfft2(M)),
    ("np.fft.irfft2(m, s=(4, 5), axes=(1, 0), norm='forward')",
     lambda: np.fft.irfft2(M, s=(4, 5), axes=(1, 0), norm="forward")),
    ("np.fft.irfft2(r)", lambda: np.fft.irfft2(R)),
    ("np.fft.hfft(z)", lambda: np.fft.hfft(Z)),
    ("np.fft.hfft(z, 7, norm='ortho')", lambda: np.fft.hfft(Z, 7, norm="ortho")),
    ("np.fft.hfft(m, axis=0, norm='forward')", lambda: np.fft.hfft(M, axis=0, norm="forward")),
    ("np.fft.hfft(x)", lambda: np.fft.hfft(X)),
    ("np.fft.ihfft(x)", lambda: np.fft.ihfft(X)),
    ("np.fft.ihfft(r, 6, axis=0, norm='ortho')", lambda: np.fft.ihfft(R, 6, axis=0, norm="ortho")),
    ("np.fft.ihfft(r3, n=3, norm='forward')", lambda: np.fft.ihfft(R3, n=3, norm="forward")),
]


@pytest.mark.parametrize("source, reference", COMPOSITES)
def test_the_real_and_hermitian_transforms_are_numpys_bits(source, reference):
    at = {k: v for k, v in {"x": X, "z": Z, "m": M, "r": R, "r3": R3}.items() if k in api.load(source).inputs}
    got = api.evaluate(source, at=at).value
    want = reference()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("source", [
    "sum(abs(np.fft.rfftn(r3, s=(3, 6), norm='ortho')) ** 2 * arange(4))",
    "sum(real(np.fft.rfft2(r))[0:3, 0:3] * imag(np.fft.rfft2(r, axes=(1, 0))[0:3, 0:3]))",
    "sum(np.fft.irfftn(m, s=(2, 7)) ** 2 * arange(7)) + sum(np.fft.irfft2(m, norm='forward'))",
    "sum(np.fft.hfft(z, 7, norm='ortho') ** 3) + sum(np.fft.hfft(m, axis=0) * r[0:4, 0:4])",
    "sum(abs(np.fft.ihfft(r, 6, axis=0)) ** 2 * arange(4)) + sum(imag(np.fft.ihfft(x * x)) ** 2)",
    "sum(np.fft.irfftn(np.fft.rfftn(r3) * np.fft.rfftn(r3), s=(3, 4, 5)) * r3)",
])
def test_the_real_and_hermitian_transforms_gradients_match_differences(source):
    at = {"z": Z, "x": X, "m": M, "r": np.resize(R, (6, 4)), "r3": R3}
    at = {k: v for k, v in at.items() if k in api.load(source).inputs}
    r = api.grad(source, at=at)
    for name in at:
        np.testing.assert_allclose(r.gradient[name], differences(source, at, name), rtol=1e-6, atol=1e-6,
                                   err_msg=name)
    real_at = {k: v for k, v in at.items() if not np.iscomplexobj(v)}
    if real_at == at:                # forward mode (the entries' JVPs) on real inputs: the same gradient
        forward = api.grad(source, at=at, mode="forward")
        for name in at:
            np.testing.assert_allclose(forward.gradient[name], r.gradient[name], rtol=1e-11, atol=1e-11)


def test_hfft_of_a_hermitian_spectrum_inverts_ihfft_and_its_jacobian_is_numpys_matrix():
    """hfft(ihfft(x)) = x (numpy's pair); the Jacobian of hfft(z) of a real z is numpy's hfft of
    each unit vector (a linear map of real inputs: its columns)."""
    x = np.array([0.5, -1.0, 2.0, 3.0, 1.5])
    np.testing.assert_allclose(api.evaluate("np.fft.hfft(np.fft.ihfft(x), 5)", at={"x": x}).value, x, rtol=1e-14)
    j = api.jacobian("np.fft.hfft(y, 6)", at={"y": X}).jacobian["y"]
    np.testing.assert_allclose(j, np.stack([np.fft.hfft(e, 6) for e in np.eye(4)], axis=1), atol=1e-14)




@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_the_2d_transforms_with_axes_none_take_every_axis_as_numpy_does(name):
    """numpy's fft2(a, axes=None) is fftn over every axis, not over the last two:
    core/library/fft.py took the last two, a silent wrong value for a 3-d array."""
    a = R3 + 1j * R3[::-1] if name in ("ifft2", "irfft2") else R3
    got = api.evaluate(f"np.fft.{name}(a, axes=None)", at={"a": a}).value
    want = getattr(np.fft, name)(a, axes=None)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
