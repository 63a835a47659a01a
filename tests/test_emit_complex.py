"""`autodiff emit` of complex values (issue 32 item 2): a real loss of complex inputs emits, its
`f_vjp` returns the gradient `autodiff grad` reports (PyTorch's convention, dL/dx + i dL/dy),
its `f_jvp` the directional derivative along a complex direction; complex literals, complex(a,
b), real, imag, conj, angle and abs in programs; `--validate` compares complex values part by
part. What is still refused (a complex output's adjoint, fft) is refused with its line."""
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
}


def module_of(tmp_path, source, at, mode="both"):
    """The emitted module's text written and imported, and the loaded target."""
    if source.startswith("def "):
        path = tmp_path / "program.py"
        path.write_text(source)
        target = api.load(str(path))
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


def test_a_complex_output_has_its_tangent_emitted_and_its_adjoint_refused(tmp_path):
    with pytest.raises(SourceError, match="the output is complex") as refused:
        api.emit("x + z*z", at={"z": 1 + 1j, "x": 2.0}, mode="both")
    assert (refused.value.span.line, refused.value.span.column) == (1, 1)
    target, module, out = module_of(tmp_path, "exp(z) * z", {"z": 1j}, mode="tangent")
    value, tangent = module.f_jvp(1j, d_z=1.0)      # holomorphic: f'(z) d_z, (1+z) e^z
    assert tangent == pytest.approx((1 + 1j) * np.exp(1j), rel=1e-14)
    assert tangent == pytest.approx(-0.30117 + 1.38177j, abs=1e-5)
    _, along_i = module.f_jvp(1j, d_z=1j)
    assert along_i == pytest.approx(1j * (1 + 1j) * np.exp(1j), rel=1e-14)
    # validated without a gradient (a complex output has none): its tangent against differences
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
    fft = run_cli("emit", "sum(abs(fft(v))**2)", "--at", "v=[1+1j,2,3,4]")
    assert fft.returncode == 2 and "1:9" in fft.stderr and "`fft` is not emitted yet" in fft.stderr
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
