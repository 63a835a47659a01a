"""`autodiff emit` of the program's own derivative rules (issue 30 item 2, engine/emit/custom.py):
a custom_vjp's adjoint is its fwd and bwd, its tangent refused as in JAX; a custom_jvp's tangent
is its rule, its adjoint the rule's tangent map transposed. The emitted code matches
autodiff.grad (which runs the same rules) to 1e-12, and the rule, not the primal's derivative."""
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
from autodiff.parser.errors import SourceError

ROOT = Path(__file__).resolve().parent.parent

CLIP = """import jax
import jax.numpy as jnp


@jax.custom_vjp
def clip_gradient(x, lo, hi):
    return x


def clip_gradient_fwd(x, lo, hi):
    return x, (lo, hi)


def clip_gradient_bwd(res, g):
    lo, hi = res
    return (jnp.clip(g, lo, hi), None, None)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def f(x):
    return jnp.sum(clip_gradient(10 * x, -1, 1) ** 2) / 20
"""

# a custom_jvp of two arguments whose rule is deliberately not the derivative (2*x*y, rule 3*x*y
# for x): the emitted code follows the rule, as the interpreter does
SKEWED = """from jax import custom_jvp


@custom_jvp
def mul(x, y):
    return x * y


@mul.defjvp
def mul_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    s = 3.0 * y
    return mul(x, y), s * tx + x * ty


def f(a, b):
    u = mul(sin(a), b) + a
    return mul(u, u) * b
"""


# both kinds in a while loop, a custom_jvp rule that decides on its primal
LOOPED = """import jax

@jax.custom_jvp
def sq(x):
    return x * x

@sq.defjvp
def sq_jvp(primals, tangents):
    x, = primals
    t, = tangents
    if x > 0:
        return sq(x), 2.0 * x * t
    return sq(x), 3.0 * x * t

@jax.custom_vjp
def ident(x):
    return x

def ident_fwd(x):
    return x, x

def ident_bwd(r, g):
    return (g * r,)

ident.defvjp(ident_fwd, ident_bwd)

def f(x, n):
    y = x
    i = 0
    while i < n:
        y = sq(y) * 0.5 + ident(y)
        i = i + 1
    return y
"""


def load_module(path: Path, text: str):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"emitted_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def emitted(tmp_path, source_text, mode, at=None, wrt=None, name="program"):
    source = tmp_path / f"{name}.py"
    source.write_text(source_text)
    text = api.emit(str(source), mode=mode, at=at, wrt=wrt)
    return source, text, load_module(tmp_path / f"{name}_emitted.py", text)


def test_custom_vjp_adjoint_is_its_bwd_rule_at_every_point(tmp_path):
    x0 = np.array([0.05, 0.5, 2.0])
    source, text, module = emitted(tmp_path, CLIP, "adjoint", at={"x": x0})
    assert "def clip_gradient_fwd(x, lo, hi):" in text and "def clip_gradient_bwd(res, g):" in text
    value, (g,) = module.f_vjp(x0)
    np.testing.assert_allclose(g, [0.5, 5.0, 10.0], rtol=1e-15)        # the rule's, not the derivative's 20
    assert value == pytest.approx(21.2625, rel=1e-15)
    rng = np.random.default_rng(30)
    for _ in range(5):
        x = rng.uniform(-0.3, 0.3, 3)
        expected = autodiff.grad(str(source), at={"x": x})
        value, (g,) = module.f_vjp(x)
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(g, expected.gradient["x"], rtol=1e-12, atol=1e-12)
    out = tmp_path / "program_emitted.py"
    rows = api.validate_emitted(str(out), api.load(str(source)), {"x": x0})
    assert [r["check"] for r in rows] == ["adjoint vs AD"] and rows[0]["verdict"] == "pass"


def test_custom_vjp_none_cotangent_is_zero_of_the_arguments_shape(tmp_path):
    program = CLIP.replace("def f(x):\n    return jnp.sum(clip_gradient(10 * x, -1, 1) ** 2) / 20",
                           "def f(x, w):\n    return jnp.sum(clip_gradient(10 * x, w, 1) ** 2) / 20")
    source, _, module = emitted(tmp_path, program, "adjoint", at={"x": np.array([0.05, 0.5]), "w": -1.0})
    value, (gx, gw) = module.f_vjp(np.array([0.05, 0.5]), -1.0)
    expected = autodiff.grad(str(source), at={"x": np.array([0.05, 0.5]), "w": -1.0})
    np.testing.assert_allclose(gx, expected.gradient["x"], rtol=1e-12)
    assert np.shape(gw) == () and gw == 0.0 == expected.gradient["w"]


def test_custom_vjp_tangent_is_refused_as_in_jax(tmp_path):
    source = tmp_path / "clip.py"
    source.write_text(CLIP)
    with pytest.raises(SourceError) as err:
        api.emit(str(source), mode="tangent", at={"x": np.array([0.05, 0.5, 2.0])})
    assert err.value.kind == "not differentiable" and "custom_vjp" in err.value.message
    assert "--mode adjoint" in err.value.hint and err.value.span.line == 23


def test_custom_jvp_follows_its_rule_in_both_modes(tmp_path):
    """Numbers, no point: the rule's text elementwise; the adjoint transposes the rule's tangent
    map in (tx, ty); the tangent is the rule; both match autodiff.grad, not the true derivative."""
    source, text, module = emitted(tmp_path, SKEWED, "both")
    assert "def mul_jvp_tangent(x, y, tx, ty):" in text
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, b = rng.uniform(-1.5, 1.5, 2)
        expected = autodiff.grad(str(source), at={"a": a, "b": b})
        value, grads = module.f_vjp(a, b)
        assert value == pytest.approx(expected.value, rel=1e-12)
        assert grads == pytest.approx((expected.gradient["a"], expected.gradient["b"]), rel=1e-12, abs=1e-12)
        for da, db, want in ((1.0, 0.0, expected.gradient["a"]), (0.0, 1.0, expected.gradient["b"])):
            assert module.f_jvp(a, b, d_a=da, d_b=db)[1] == pytest.approx(want, rel=1e-12, abs=1e-12)
    u = np.sin(0.4) * 0.9 + 0.4
    true_da = 2 * u * (np.cos(0.4) * 0.9 + 1) * 0.9
    assert module.f_vjp(0.4, 0.9)[1][0] != pytest.approx(true_da, rel=1e-3)    # the rule's, deliberately


def test_custom_jvp_with_one_argument_differentiated(tmp_path):
    source, text, module = emitted(tmp_path, SKEWED, "both", wrt=["b"])
    assert "a_b" not in text
    expected = autodiff.grad(str(source), at={"a": 0.3, "b": -0.7}, wrt=["b"])
    assert module.f_vjp(0.3, -0.7)[1][0] == pytest.approx(expected.gradient["b"], rel=1e-12)
    assert module.f_jvp(0.3, -0.7, d_b=1.0)[1] == pytest.approx(expected.gradient["b"], rel=1e-12)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})


def test_cli_emit_validate_custom_rules(tmp_path):
    clip = tmp_path / "clip.py"
    clip.write_text(CLIP)
    done = run_cli("emit", str(clip), "--mode", "adjoint", "--validate", "--at", "x=[0.05,0.5,2]")
    assert done.returncode == 0 and done.stdout.count(" pass") == 1, done.stderr
    refused = run_cli("emit", str(clip), "--validate", "--at", "x=[0.05,0.5,2]")
    assert refused.returncode == 2 and "clip.py:23" in refused.stderr and "custom_vjp" in refused.stderr
    assert "Traceback" not in refused.stderr
    softplus = run_cli("emit", "samples/programs/softplus.py", "--validate", "--at", "x=[-1.3,0.5]")
    assert softplus.returncode == 0 and softplus.stdout.count(" pass") == 3, softplus.stderr


BAD_RULES = {
    "reading its primals or tangents other than by unpacking": (
        "from jax import custom_jvp\n\n\n@custom_jvp\ndef g(x):\n    return x * x\n\n\n@g.defjvp\n"
        "def g_jvp(primals, tangents):\n    return g(primals[0]), 2.0 * primals[0] * tangents[0]\n\n\n"
        "def f(x):\n    return g(x)\n", 10),
    "that is not a pair": (
        "from jax import custom_jvp\n\n\n@custom_jvp\ndef g(x):\n    return x * x\n\n\n@g.defjvp\n"
        "def g_jvp(primals, tangents):\n    x, = primals\n    t, = tangents\n    return 2.0 * x * t\n\n\n"
        "def f(x):\n    return g(x)\n", 13),
}


@pytest.mark.parametrize("words", sorted(BAD_RULES))
def test_a_rule_emit_cannot_read_names_its_line(tmp_path, words):
    text, line = BAD_RULES[words]
    source = tmp_path / "program.py"
    source.write_text(text)
    with pytest.raises(SourceError) as err:
        api.emit(str(source))
    assert words in err.value.message and err.value.span.line == line and "primals" in err.value.hint


def test_custom_rules_in_a_loop_push_and_pop_their_own(tmp_path):
    """Each trip's fwd residuals and the rule's tangent sweep go on the stack and come back in
    order; the rule's branch is the rule's (2x or 3x), at every point."""
    source, _, module = emitted(tmp_path, LOOPED, "adjoint", wrt=["x"])
    rng = np.random.default_rng(2)
    for n in (1, 2, 3, 0, 2):
        x = float(rng.uniform(-1, 1))
        expected = autodiff.grad(str(source), at={"x": x, "n": float(n)}, wrt=["x"])
        value, (g,) = module.f_vjp(x, float(n))
        assert value == pytest.approx(expected.value, rel=1e-12)
        assert g == pytest.approx(expected.gradient["x"], rel=1e-12, abs=1e-12)
