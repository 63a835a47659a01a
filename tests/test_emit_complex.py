"""`autodiff emit` of complex values (issue 32 item 2): a real loss of complex inputs emits, its
`f_vjp` returns the gradient `autodiff grad` reports (PyTorch's convention, dL/dx + i dL/dy),
its `f_jvp` the directional derivative along a complex direction; complex literals, complex(a,
b), real, imag, conj, angle and abs in programs; `--validate` compares complex values part by
part. A complex output's f_vjp(..., cotangent=v) returns J^H v, the real transpose of the engine's
real Jacobian blocks (PyTorch's convention; the in-program vjp's, JAX's, is conj(J^H conj v))."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.engine.checks.emitted import validate
from autodiff.engine.diff.complex_derivatives import hermitian_adjoint
from autodiff.parser.errors import SourceError

ROOT = Path(__file__).resolve().parent.parent

# the issue's truth (PyTorch complex128): a program, its point, the gradient there
TRUTH = {
    "abs(z)**2": ({"z": 1 + 2j}, {"z": 2 + 4j}),
    "real(z*conj(w)) + abs(exp(z))": ({"z": 0.3 + 0.4j, "w": 1 - 2j}, {"z": 2.349858807576003 - 2j, "w": 0.3 + 0.4j}),
}
# programs, each emitted at a point of these values (complex where complex), then compared with
# autodiff.grad at five random points of the same kinds
PROGRAMS = {
    "abs(z)**2": {"z": 1 + 2j},
    "real(z*conj(w)) + abs(exp(z))": {"z": 0.3 + 0.4j, "w": 1 - 2j},
    "angle(z) + imag(z)**2 + abs(complex(x, 2*x)) + real(z * (1-2j))": {"z": 0.3 + 0.4j, "x": 0.5},
    "def f(v, x):\n    y = v * x + conj(v) * (0.5+1j)\n    return sum(abs(y)**2) + real(sum(exp(v) * v))\n":
        {"v": np.array([1 - 1j, 2 + 0.5j, -0.3 + 0.2j]), "x": 0.7},
    "def f(A, b):\n    return sum(abs(A @ b) ** 2) + imag(sum(A * conj(A)))\n":
        {"A": np.array([[1 + 1j, 0.5], [2j, -1 + 0.3j]]), "b": np.array([0.2 - 1j, 1.5 + 0j])},
    # a real value (imag(A[0, 0])) meets a complex adjoint (b's): imag's rule reads its real part,
    # which the text traced at a real adjoint dropped (A's gradient was wrong)
    "def f(A, b, v):\n    return real(sum((A @ conj(b) + b * imag(A[0, 0])) * conj(v)))\n":
        {"A": np.array([[1 + 1j, 0.5], [2j, -1 + 0.3j]]), "b": np.array([0.2 - 1j, 1.5 + 0j]),
         "v": np.array([1 + 0.5j, -0.3 + 2j])},
    # numpy's var of complex values is real (mean |z - mean|²): the emitted var wrote the complex
    # mean of (z - mean)², a wrong primal and adjoint
    "def f(z, x):\n    return var(z) + std(z * x) + var(z, ddof=1) * x\n":
        {"z": np.array([0.3 + 0.4j, 1.2 - 0.7j, -2 + 0.1j]), "x": 0.7},
}


def module_of(tmp_path, source, at, mode="both"):
    """The emitted module's text written and imported, and the loaded target."""
    if source.startswith(("def ", "import ")):
        path = tmp_path / "program.py"
        path.write_text(source)
        target = api.load(str(path), "f")
    else:
        target = api.load(source)
    out = tmp_path / "emitted.py"
    out.write_text(api.emit(None, mode=mode, target=target, at=at))
    spec = importlib.util.spec_from_file_location(f"emitted_complex_{len(os.listdir(tmp_path))}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return target, module, out


def random_like(value, rng):
    shape = np.shape(value)
    if np.iscomplexobj(value):
        z = rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)
        return z if shape else complex(z)
    x = rng.uniform(-2, 2, shape)
    return x if shape else float(x)


@pytest.mark.parametrize("source", TRUTH)
def test_the_issues_truth(tmp_path, source):
    at, expected = TRUTH[source]
    _, module, _ = module_of(tmp_path, source, at)
    _, grads = module.f_vjp(*at.values())
    for (name, want), got in zip(expected.items(), grads):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), name
        assert np.iscomplexobj(got)


@pytest.mark.parametrize("source", PROGRAMS)
def test_emitted_matches_autodiff_grad_at_five_complex_points(tmp_path, source):
    """The emitted adjoint is autodiff.grad's gradient (the conjugate of the sweep's adjoint, once,
    at f_vjp's return); the tangent along a complex direction u is Re<u, gradient>, the
    derivative of the real output along u (z + t u)."""
    at = PROGRAMS[source]
    target, module, out = module_of(tmp_path, source, at)
    rng = np.random.default_rng(32)
    for _ in range(5):
        point = {k: random_like(v, rng) for k, v in at.items()}
        expected = autodiff.grad(None, point, target=target)
        value, grads = module.f_vjp(*point.values())
        assert value == pytest.approx(expected.value, rel=1e-12)
        for name, got in zip(point, grads):
            assert np.allclose(got, expected.gradient[name], rtol=1e-12, atol=1e-13), name
        directions = {k: random_like(v, rng) for k, v in at.items()}
        _, tangent = module.f_jvp(*point.values(), **{f"d_{k}": u for k, u in directions.items()})
        pairing = sum(np.real(np.sum(np.asarray(u) * np.conj(expected.gradient[k]))) for k, u in directions.items())
        assert tangent == pytest.approx(pairing, rel=1e-10, abs=1e-12)
        assert not np.iscomplexobj(tangent)
    rows = api.validate_emitted(str(out), target, at)
    assert rows and all(r["verdict"] == "pass" for r in rows), rows
    complex_inputs = [k for k, v in at.items() if np.iscomplexobj(v)]
    parts = {(r["of"], r["check"]) for r in rows if r["check"].startswith("tangent")}
    for k in complex_inputs:        # each complex input's differences along both parts
        assert {(k, "tangent vs central differences (real part)"),
                (k, "tangent vs central differences (imaginary part)")} <= parts


def test_the_reported_gradient_is_conjugated_once_at_the_return(tmp_path):
    _, _, out = module_of(tmp_path, "abs(z)**2 + x * real(z)", {"z": 1 + 2j, "x": 0.5})
    text = out.read_text()
    assert "return _out, (np.conj(z_b), np.real(x_b))" in text
    assert text.count("np.conj(") == 1          # the rules' own conjugates are np.conjugate
    assert "# the gradient of a complex input (z): dL/dx + i dL/dy, as `autodiff grad` reports it" in text


def test_a_wrong_imaginary_part_fails_validation(tmp_path):
    """--validate compares complex values part by part: before, it cast them to float, so a
    gradient with the wrong imaginary part (here JAX's convention, the conjugate) passed."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import numpy as np\n\n\ndef f(z):\n    return np.abs(z) ** 2\n\n\n"
                     "def f_vjp(z, cotangent=1.0):\n    return np.abs(z) ** 2, (2 * np.conj(z) * cotangent,)\n\n\n"
                     "def f_jvp(z, *, d_z):\n    return np.abs(z) ** 2, 2 * np.real(z * d_z)\n")
    rows = validate(str(wrong), "f", ["z"], ["z"], {"z": 1 + 2j}, {"z": 2 + 4j})
    verdicts = {r["check"]: r["verdict"] for r in rows}
    assert verdicts["adjoint vs AD"] == "FAIL"
    assert rows[0]["error"] == 8.0 and rows[0]["emitted"] == 2 - 4j and rows[0]["reference"] == 2 + 4j
    # the tangent 2 Re(z u) is right along a real direction and wrong along an imaginary one
    assert verdicts["tangent vs central differences (real part)"] == "pass"
    assert verdicts["tangent vs central differences (imaginary part)"] == "FAIL"
    # both in JAX's convention, they agree with each other: Re<J u, v> = Re<u, J^T v> holds
    assert verdicts["dot product <J u, v> = <u, J^T v>"] == "pass"
    right = tmp_path / "right.py"
    right.write_text(wrong.read_text().replace("2 * np.conj(z)", "2 * z").replace("z * d_z", "np.conj(z) * d_z"))
    assert all(r["verdict"] == "pass" for r in validate(str(right), "f", ["z"], ["z"], {"z": 1 + 2j}, {"z": 2 + 4j}))


COMPLEX_OUTPUTS = {
    "exp(z) * z": {"z": 0.3 + 0.4j},
    "z * conj(w)": {"z": 0.3 + 0.4j, "w": 1 - 2j},
    "z * conj(w) + x * z": {"z": 1j, "w": 2 - 1j, "x": 0.5},
    "def f(v, x):\n    return v * exp(v) * x + conj(v) * sum(v)\n": {"v": np.array([1j, 2 + 1j, -0.5 - 0.3j]), "x": 0.3},
    "def f(A, b):\n    return A @ conj(b) + b * imag(A[0, 0])\n":
        {"A": np.array([[1 + 1j, 0.5], [2j, -1 + 0.3j]]), "b": np.array([0.2 - 1j, 1.5 + 0j])},
}


@pytest.mark.parametrize("source", COMPLEX_OUTPUTS)
def test_a_complex_outputs_adjoint_is_the_hermitian_adjoint_of_the_engines_jacobian(tmp_path, source):
    """f_vjp(..., cotangent=v) of a complex output is J^H v: the real transpose of the real blocks
    `autodiff jacobian` gives applied to v's (re, im) parts (Re<J u, v> = Re<u, J^H v>), the
    convention of the reported gradient (a real output's, at v = 1); before, it was refused."""
    at = COMPLEX_OUTPUTS[source]
    target, module, out = module_of(tmp_path, source, at)
    rng = np.random.default_rng(31)
    for _ in range(5):
        point = {k: random_like(x, rng) for k, x in at.items()}
        blocks = autodiff.jacobian(None, point, target=target)
        v = random_like(np.asarray(blocks.value), rng)
        value, grads = module.f_vjp(*point.values(), cotangent=v)
        assert np.allclose(value, blocks.value, rtol=1e-12, atol=1e-14)
        expected = hermitian_adjoint(blocks.jacobian, blocks.value, blocks.inputs, v)
        for name, got in zip(point, grads):
            assert np.shape(got) == np.shape(point[name]) and np.iscomplexobj(got) == np.iscomplexobj(point[name])
            assert np.allclose(got, expected[name], rtol=1e-12, atol=1e-13), name
        u = {k: random_like(x, rng) for k, x in point.items()}     # the dot-product test, Re<a, b> = Re sum(a conj b)
        _, tangent = module.f_jvp(*point.values(), **{f"d_{k}": d for k, d in u.items()})
        left = np.real(np.sum(tangent * np.conj(v)))
        right = sum(np.real(np.sum(np.asarray(u[k]) * np.conj(g))) for k, g in zip(point, grads))
        assert left == pytest.approx(right, rel=1e-12, abs=1e-12)
    rows = api.validate_emitted(str(out), target, at)
    checks = {r["check"] for r in rows}
    assert "adjoint vs AD (J^H v, a complex cotangent v)" in checks and "dot product <J u, v> = <u, J^T v>" in checks
    assert all(r["verdict"] == "pass" for r in rows), rows


def test_a_holomorphic_outputs_adjoint_is_conj_f_prime_times_v_and_the_in_program_vjp_its_conjugate(tmp_path):
    """exp(z) z: J^H v = conj(f'(z)) v (PyTorch's), f'(z) = (1+z) e^z; the engine's in-program
    vjp(h, z, v) is JAX's, v f'(z) = conj(J^H conj(v)), which the emitted adjoint gives too."""
    target, module, out = module_of(tmp_path, "exp(z) * z", {"z": 1j})
    program = tmp_path / "inner.py"
    program.write_text("def h(z):\n    return exp(z) * z\n\ndef f(z, v):\n    y, g = vjp(h, z, v)\n    return g\n")
    for z, v in ((1j, 1.0), (0.3 + 0.4j, 0.5 - 1j), (-1.2 + 0.1j, 2j)):
        prime = (1 + z) * np.exp(z)
        value, (got,) = module.f_vjp(z, cotangent=v)
        assert value == pytest.approx(z * np.exp(z), rel=1e-14)
        assert got == pytest.approx(np.conj(prime) * v, rel=1e-13)
        jax_style = api.evaluate(str(program), at={"z": z, "v": v}, fn="f").value
        _, (at_conj,) = module.f_vjp(z, cotangent=np.conj(v))
        assert np.conj(at_conj) == pytest.approx(jax_style, rel=1e-13)
        _, tangent = module.f_jvp(z, d_z=v)           # holomorphic: f'(z) d_z
        assert tangent == pytest.approx(prime * v, rel=1e-13)
    _, tangent = module.f_jvp(1j, d_z=1.0)
    assert tangent == pytest.approx(-0.30117 + 1.38177j, abs=1e-5)
    text = out.read_text()
    assert "_out_b = np.conj(" in text and "# the output is complex: f_vjp(..., cotangent=v) returns J^H v" in text


def test_a_complex_outputs_tangent_alone_is_validated_against_differences(tmp_path):
    target, module, out = module_of(tmp_path, "exp(z) * z", {"z": 1j}, mode="tangent")
    _, along_i = module.f_jvp(1j, d_z=1j)
    assert along_i == pytest.approx(1j * (1 + 1j) * np.exp(1j), rel=1e-14)
    rows = api.validate_emitted(str(out), target, {"z": 1j})
    assert [r["verdict"] for r in rows] == ["pass", "pass"] and np.iscomplexobj(rows[0]["emitted"])


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})


def test_cli_validates_complex_points_and_refuses_what_is_not_emitted(tmp_path):
    path = tmp_path / "mixed.py"
    path.write_text("def f(x, v):\n    y = x * 2\n    return y + sum(abs(v)**2)\n")
    done = run_cli("emit", str(path), "--validate", "--at", "x=1", "--at", "v=[1-1j,2+0.5j]")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" pass") == 6 and "FAIL" not in done.stdout
    fft = run_cli("emit", "sum(abs(fft(v, norm='sideways'))**2)", "--at", "v=[1+1j,2,3,4]")
    assert fft.returncode == 2 and "1:9" in fft.stderr and "norm must be one of 'backward', 'ortho' or 'forward', " \
        "not 'sideways'" in fft.stderr          # the library's words, as `autodiff grad` says them
    literal = run_cli("emit", "abs(x*(1+2j))**2")      # a complex constant's rules need the point's values
    assert literal.returncode == 2 and "1:10" in literal.stderr and "--at" in literal.stderr
    assert "Traceback" not in fft.stderr + literal.stderr


def test_a_module_emitted_at_a_real_point_refuses_complex_inputs(tmp_path):
    """Its rules were written for real values: called with a complex one it raised nothing and
    returned a wrong number (abs(z)**2 at 1+2j gave a real gradient)."""
    import numpy as np
    from autodiff.engine.api import emit
    from autodiff.engine.checks.emitted import imported
    path = tmp_path / "m.py"
    path.write_text(emit("abs(z)**2", at={"z": 1.5}))
    _, vjp, _ = imported(str(path), "f")
    assert vjp(1.5)[1][0] == 3.0
    for z in (1 + 2j, np.array([1 + 2j])):
        with pytest.raises(TypeError, match="emitted for real inputs"):
            vjp(z)


def test_the_sign_of_a_complex_slogdet_is_refused_and_its_log_emitted(tmp_path):
    """The sign of a complex det, det/|det|, has a derivative (the engine's); emit wrote it as the
    constant a real det's sign is, and its module's gradient was wrong."""
    a = np.array([[1 + 0.5j, 0.2 - 0.3j], [0.4 + 0.1j, 2 - 1j]])
    with pytest.raises(SourceError) as e:
        api.emit(None, target=api.load("real(slogdet(A)[0]) + slogdet(A)[1]"), at={"A": a})
    assert e.value.kind == "not emitted" and "slogdet" in e.value.message and e.value.span.column == 6
    target, module, _ = module_of(tmp_path, "slogdet(A)[1]", {"A": a})
    value, (gradient,) = module.f_vjp(a)
    np.testing.assert_allclose(gradient, api.grad(None, at={"A": a}, target=target).gradient["A"], rtol=1e-14)
