"""`autodiff emit` of np.fft (engine/emit/library_calls.py, fft_forms.py): each of fft ifft fft2 ifft2 fftn ifftn
rfft irfft fftshift ifftshift fftfreq rfftfreq is written as its table entry (core/rules/fft.py)
(rfft2 irfft2 rfftn irfftn hfft ihfft as the library's compositions of them),
its primal, adjoint and tangent the entry's rules traced at the point (numpy's n, s, axis, axes and
norm resolved as core/library/fft.py resolves them, constants of the text at the point's shapes,
which the emitted functions check); the emitted adjoint is `autodiff.grad`'s at random points,
the tangent the gradient's pairing with the direction, and --validate passes. Before, emit
refused every np.fft call ("the builtin `fft`")."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.engine.diff.complex_derivatives import hermitian_adjoint
from autodiff.parser.errors import SourceError
from test_emit_complex import module_of, random_like     # one way to emit, import and draw points

ROOT = Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(2)
X4 = np.array([1.0, 2.0, 3.0, 4.0])
Z5 = np.array([1 + 1j, 0.5 - 2j, -0.3 + 0.2j, 2.0 + 0j, -1 - 1j])
M34 = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
R34 = RNG.normal(size=(3, 4))

# a real loss of each transform, with numpy's arguments; its point
PROGRAMS = {
    "sum(abs(np.fft.fft(x))**2)": {"x": X4},
    "sum(abs(np.fft.fft(z, 8)) ** 2) + real(sum(np.fft.ifft(z, n=3, norm='ortho') * z[0]))": {"z": Z5},
    "sum(abs(np.fft.ifft(z, norm='forward')) ** 3)": {"z": Z5},
    "sum(real(np.fft.fft(m, axis=0)) * r) + sum(imag(np.fft.fft(m, axis=-2)))": {"m": M34, "r": R34},
    "sum(abs(np.fft.rfft(x, 6, norm='ortho')) ** 2) + sum(imag(np.fft.rfft(r, 5, 0)) ** 2)": {"x": X4, "r": R34},
    "sum(np.fft.irfft(z) ** 2) + sum(np.fft.irfft(z, 9, norm='ortho') * np.fft.irfft(z, 9))": {"z": Z5},
    "sum(np.fft.irfft(np.fft.rfft(x) * 2.0, 4) ** 3)": {"x": X4},
    "sum(abs(np.fft.fft2(m)) ** 2 * r) + sum(abs(np.fft.ifft2(m, s=(2, 6), norm='ortho')))": {"m": M34, "r": R34},
    "sum(abs(np.fft.fftn(m)) ** 2) + sum(real(np.fft.fftn(r, s=(5,))) ** 2) + sum(abs(np.fft.ifftn(m, axes=(0,))))":
        {"m": M34, "r": R34},
    "sum(real(np.fft.fftshift(np.fft.fft(z))) * np.fft.fftfreq(5, 0.5)) + sum(abs(np.fft.ifftshift(m, axes=1)) * r)":
        {"z": Z5, "m": M34, "r": R34},
    "sum(np.fft.fftshift(x) * np.fft.rfftfreq(6, d)) + sum(np.fft.fftfreq(len(x)) * x * d)": {"x": X4, "d": 0.25},
    # the real and Hermitian transforms: the library's composites of the entries (numpy's steps)
    "sum(abs(np.fft.rfftn(r)) ** 2 * arange(3)) + sum(imag(np.fft.rfft2(r, s=(2, 6), axes=(1, 0), norm='ortho')))":
        {"r": R34},
    "sum(np.fft.irfftn(m) ** 2) + sum(np.fft.irfft2(m, s=(4, 5), norm='forward') * arange(5))": {"m": M34},
    "sum(np.fft.hfft(z, 7, norm='ortho') ** 3) + sum(abs(np.fft.ihfft(x, axis=0)) ** 2 * arange(3))":
        {"z": Z5, "x": X4},
    "sum(np.fft.hfft(m, 3, axis=0) * r) + sum(abs(np.fft.rfftn(r, axes=(0,))) ** 2)": {"m": M34, "r": R34},
}
PROGRAM = """import numpy as np

def spectrum(x):
    return abs(np.fft.rfft(x, norm="ortho")) ** 2

def f(x, w):
    total = 0.0
    for k in range(2):
        y = np.fft.irfft(np.fft.rfft(x) * w, len(x))
        total = total + sum(spectrum(y) * np.fft.rfftfreq(len(x), 0.1))
        x = y * 0.5
    return total
"""


def test_the_issues_truth(tmp_path):
    _, module, out = module_of(tmp_path, "sum(abs(np.fft.fft(x))**2)", {"x": X4})
    value, (gradient,) = module.f_vjp(X4)
    assert value == pytest.approx(120.0, rel=1e-15)
    np.testing.assert_allclose(gradient, [8.0, 16.0, 24.0, 32.0], rtol=1e-15)
    assert not np.iscomplexobj(gradient)
    text = out.read_text()
    assert "np.fft.fft(x, 4, 0, 'backward')" in text        # numpy's n, axis and norm, resolved at the point
    assert "emitted for the shapes x (4,)" in text


@pytest.mark.parametrize("source", [*PROGRAMS, PROGRAM])
def test_emitted_fft_matches_autodiff_grad_at_five_points(tmp_path, source):
    at = PROGRAMS.get(source, {"x": np.array([1.0, -2.0, 0.5, 3.0, 1.5, -1.0]), "w": np.array([1.0, 0.5, 2.0, -1.0])})
    target, module, out = module_of(tmp_path, source, at)
    rng = np.random.default_rng(31)
    for _ in range(5):
        point = {k: random_like(v, rng) for k, v in at.items()}
        expected = autodiff.grad(None, point, target=target)
        value, grads = module.f_vjp(*point.values())
        assert value == pytest.approx(expected.value, rel=1e-12)
        assert module.f(*point.values()) == pytest.approx(expected.value, rel=1e-12)
        for name, got in zip(point, grads):
            assert np.iscomplexobj(got) == np.iscomplexobj(point[name])
            np.testing.assert_allclose(got, expected.gradient[name], rtol=1e-12, atol=1e-12, err_msg=name)
        u = {k: random_like(v, rng) for k, v in at.items()}
        _, tangent = module.f_jvp(*point.values(), **{f"d_{k}": d for k, d in u.items()})
        pairing = sum(np.real(np.sum(np.asarray(d) * np.conj(expected.gradient[k]))) for k, d in u.items())
        assert tangent == pytest.approx(pairing, rel=1e-11, abs=1e-11)
    rows = api.validate_emitted(str(out), target, at)
    assert rows and all(r["verdict"] == "pass" for r in rows), rows


def test_a_complex_output_of_fft_has_its_hermitian_adjoint(tmp_path):
    """fft's output is complex: f_vjp(..., cotangent=v) is J^H v of the engine's Jacobian (its real
    blocks' transpose); for fft, J^H v = n ifft(v), of a real input its real part."""
    for source, at in (("np.fft.fft(z, 6, norm='ortho') * z[1]", {"z": Z5}),
                       ("np.fft.fftshift(np.fft.rfft(x, 6))", {"x": X4}),
                       ("np.fft.fft(x)", {"x": X4})):
        target, module, out = module_of(tmp_path, source, at)
        blocks = autodiff.jacobian(None, at, target=target)
        v = random_like(np.asarray(blocks.value), np.random.default_rng(5))
        _, grads = module.f_vjp(*at.values(), cotangent=v)
        expected = hermitian_adjoint(blocks.jacobian, blocks.value, blocks.inputs, v)
        for name, got in zip(at, grads):
            np.testing.assert_allclose(got, expected[name], rtol=1e-12, atol=1e-12, err_msg=source)
        if source == "np.fft.fft(x)":
            np.testing.assert_allclose(grads[0], np.real(4 * np.fft.ifft(v)), rtol=1e-13)
        assert all(r["verdict"] == "pass" for r in api.validate_emitted(str(out), target, at))


@pytest.mark.parametrize("source, at, message, where", [
    ("sum(abs(np.fft.fft(x, norm='sideways')))", {"x": X4},
     "fft\\(\\): norm must be one of 'backward', 'ortho' or 'forward', not 'sideways'", (1, 9)),
    ("sum(abs(np.fft.fft(x, n)))", {"x": X4, "n": 4.0}, "the n of fft that is not written as a number", (1, 23)),
    ("sum(abs(np.fft.fft(x, 0)))", {"x": X4}, "fft\\(\\): invalid number of data points \\(0\\) specified", (1, 9)),
    ("sum(abs(np.fft.fft(x, axis=3)))", {"x": X4}, "fft\\(\\): axis 3 is out of bounds", (1, 9)),
])
def test_what_emit_cannot_write_is_a_located_error(source, at, message, where):
    """np.fft's arguments are the library's to resolve (core/library/fft.py, as emit records it):
    a wrong one is refused with the library's words at the call, as `autodiff grad` refuses it."""
    with pytest.raises(SourceError, match=message) as refused:
        api.emit(source, at=at)
    assert (refused.value.span.line, refused.value.span.column) == where
    if source.startswith("sum(abs(np.fft.fft(x, n)))"):        # emit's own: n must be a constant of the text
        return
    with pytest.raises(SourceError, match=message) as ran:
        autodiff.grad(source, at=at)
    assert (ran.value.span.line, ran.value.span.column) == where


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})


def test_cli_emits_and_validates_fft(tmp_path):
    done = run_cli("emit", "sum(abs(fft(v))**2) + sum(irfft(v, 6) ** 2)", "--validate", "--at", "v=[1+1j,2,3,4]")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" pass") == 4 and "FAIL" not in done.stdout
    no_point = run_cli("emit", "sum(abs(fft(v))**2)")
    assert no_point.returncode == 2 and "--at" in no_point.stderr and "Traceback" not in no_point.stderr


def test_emit_resolves_nps_fft_arguments_through_the_library_itself(tmp_path, monkeypatch):
    """Issue 28 item 4: numpy's n, axis and norm are resolved once, by core/library/fft.py, which
    emit records at the call: a change there (here fft's norm taken as 'ortho' where none is given,
    rfft's n one longer) is what the emitted module computes; emit kept its own resolution before."""
    from autodiff.engine.core.library import fft
    plain_fft, plain_rfft = fft.fft, fft.rfft
    source = "def f(x):\n    return sum(abs(np.fft.fft(x)) ** 2) + sum(abs(np.fft.rfft(x, 6, axis=0)) ** 2)\n"
    with monkeypatch.context() as patched:      # while emit writes only (the interpreter keeps what it met)
        patched.setattr(fft, "fft", lambda a, n=None, axis=-1, norm=None: plain_fft(a, n, axis, norm or "ortho"))
        patched.setattr(fft, "rfft", lambda a, n=None, axis=-1, norm=None: plain_rfft(a, n + 1, axis, norm))
        _, module, _ = module_of(tmp_path, source, {"x": X4})
    value, (gradient,) = module.f_vjp(X4)
    expected = np.sum(np.abs(np.fft.fft(X4, norm="ortho")) ** 2) + np.sum(np.abs(np.fft.rfft(X4, 7)) ** 2)
    assert value == pytest.approx(float(expected), rel=1e-13)
    same = tmp_path / "same.py"
    same.write_text("def f(x):\n    return sum(abs(np.fft.fft(x, norm='ortho')) ** 2) + sum(abs(np.fft.rfft(x, 7)) ** 2)\n")
    np.testing.assert_allclose(gradient, autodiff.grad(str(same), at={"x": X4}).gradient["x"], rtol=1e-12)
    plain = np.sum(np.abs(np.fft.fft(X4)) ** 2) + np.sum(np.abs(np.fft.rfft(X4, 6)) ** 2)     # the library as it is
    assert autodiff.grad(source.replace("def f(x):\n    return ", ""), at={"x": X4}).value == pytest.approx(plain, rel=1e-13)

