"""Forward mode (engine/diff/forward.py): jvp, the gradient by forward passes, and its agreement with
reverse mode on every sample program and on random expressions."""
import glob
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.engine import api
from at_syntax import parse_at
from autodiff.engine.diff import forward
from autodiff.parser.errors import SourceError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def close(a, b, rtol=1e-9, atol=1e-12):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol,
                       equal_nan=True)


def test_jvp_is_the_directional_derivative():
    target = api.load("x**2*y + sin(y)")
    value, t, _ = forward.jvp(target, {"x": 3.0, "y": 4.0}, {"x": 0.5, "y": -1.0})
    assert value == 9 * 4 + math.sin(4)
    assert close(t, 0.5 * 2 * 3 * 4 + (-1.0) * (9 + math.cos(4)))


def test_jvp_of_an_array_function_gives_a_column_of_the_jacobian():
    target = api.load("A @ x")
    A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    _, t, _ = forward.jvp(target, {"A": A, "x": np.array([1.0, -1.0])}, {"x": np.array([0.0, 1.0])})
    assert close(t, A[:, 1])


def test_jvp_of_an_output_that_ignores_the_input_is_none():
    target = api.load("y * 2")
    _, t, _ = forward.jvp(target, {"y": 1.0}, {})
    assert t is None


def test_forward_gradient_of_the_seed_example():
    r = api.grad("x**2*y + y + 2", at={"x": 3, "y": 4}, mode="forward")
    assert (r.value, r.gradient["x"], r.gradient["y"], r.mode) == (42.0, 24.0, 10.0, "forward")


def test_forward_gradient_sums_an_array_output_like_reverse():
    at = {"x": np.array([0.1, 0.2, 0.3])}
    f, r = api.grad("exp(x) * x", at=at, mode="forward"), api.grad("exp(x) * x", at=at)
    assert f.reduced == r.reduced == "sum"
    assert close(f.gradient["x"], r.gradient["x"])
    assert close(f.gradient["x"], np.exp(at["x"]) * (1 + at["x"]))


def test_forward_gradient_with_a_seed_is_vjp():
    at = {"x": np.array([1.0, 2.0])}
    seed = np.array([3.0, -1.0])
    f = api.grad("x * x", at=at, seed=seed, mode="forward")
    assert close(f.gradient["x"], seed * 2 * at["x"])


def test_forward_gradient_reports_unconnected_inputs():
    r = api.grad("x * 2", at={"x": 1.0}, mode="forward")
    assert r.unconnected == []
    t = api.load("def f(x, y):\n    return x * 3\n", filename="f.py")
    g = api.grad(None, at={"x": 1.0, "y": 2.0}, target=t, mode="forward")
    assert g.unconnected == ["y"] and g.gradient == {"x": 3.0, "y": 0.0}


def test_forward_mode_follows_the_branch_like_reverse():
    path = os.path.join(ROOT, "samples", "programs", "control.py")
    for a in (0.37, -0.37):
        f = api.grad(path, at={"a": a}, mode="forward")
        r = api.grad(path, at={"a": a})
        assert close(f.gradient["a"], r.gradient["a"])
        assert close(f.gradient["a"], f.value / a)
        assert f.signature == r.signature


def test_forward_mode_is_free_of_perturbation_confusion():
    src = "def f(x):\n    def g(y):\n        return x + y\n    return x * grad(g)(x)\n"
    for x in (-2.0, 0.0, 3.0):
        t = api.load(src, filename="pc.py")
        assert api.grad(None, at={"x": x}, target=t, mode="forward").gradient["x"] == 1.0


# ---- every sample: forward and reverse agree --------------------------------------------------

def _sample_runs(path):
    """The points a sample documents (`--at ...` in its comments), else a default point."""
    text = open(path, encoding="utf-8").read()
    runs = []
    for line in text.splitlines():
        if not line.lstrip().startswith("#") or "--at" not in line:
            continue
        ats = re.findall(r"--at[ =](\"[^\"]*\"|'[^']*'|\S+)", line)
        fn = re.search(r"--fn[ =](\w+)", line)
        of = re.search(r"--of[ =](\w+)", line)
        runs.append(([a.strip("\"'") for a in ats], fn and fn.group(1), of and of.group(1)))
    return runs or [(None, None, None)]


# samples/project/src holds files as researchers write them, with no commands in comments: their
# points are in samples/project/checks (tests/test_files_as_written.py runs both modes on them)
SAMPLES = sorted(p for p in glob.glob(os.path.join(ROOT, "samples", "**", "*.py"), recursive=True)
                 if os.sep + "project" + os.sep not in p)


@pytest.mark.parametrize("path", SAMPLES, ids=[os.path.relpath(p, ROOT) for p in SAMPLES])
def test_forward_and_reverse_agree_on_every_sample(path):
    checked = 0
    for ats, fn, of in _sample_runs(path):
        try:
            target = api.load(path, fn, of)
            at = parse_at(ats) if ats is not None else \
                {name: 0.37 + 0.11 * i for i, name in enumerate(target.inputs)}
        except SourceError:
            continue                                   # a sample of an error: nothing to compare
        try:
            reverse = api.grad(None, at=at, target=target)
        except SourceError as err:
            with pytest.raises(SourceError) as forward_err:
                api.grad(None, at=at, target=api.load(path, fn, of), mode="forward")
            assert forward_err.value.kind == err.kind
            checked += 1
            continue
        fwd = api.grad(None, at=at, target=api.load(path, fn, of), mode="forward")
        assert close(fwd.value, reverse.value)
        for name in reverse.gradient:
            assert close(fwd.gradient[name], reverse.gradient[name], rtol=1e-9, atol=1e-9), name
        assert fwd.unconnected == reverse.unconnected
        checked += 1
    assert checked


# ---- random expressions: forward and reverse agree --------------------------------------------

LEAVES = st.sampled_from(["x", "y", "x", "y", "0.5", "2", "1.5"])
UNARY = ["sin({})", "cos({})", "tanh({})", "exp(0.3*{})", "log(1 + ({})**2)", "sqrt(2 + sin({}))",
         "sigmoid({})", "arctan({})", "({})**2", "({})**3", "softplus({})", "-({})"]
BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.5 + cos({}))", "maximum({}, {})"]


def _expr(depth):
    if depth == 0:
        return LEAVES
    sub = _expr(depth - 1)
    return st.one_of(
        LEAVES,
        st.tuples(st.sampled_from(UNARY), sub).map(lambda p: p[0].format(p[1])),
        st.tuples(st.sampled_from(BINARY), sub, sub).map(lambda p: p[0].format(p[1], p[2])),
    )


@settings(max_examples=60, deadline=None)
@given(_expr(4), st.floats(-2, 2), st.floats(-2, 2))
def test_forward_and_reverse_agree_on_random_expressions(text, x, y):
    target = api.load(text)
    at = {k: v for k, v in (("x", x), ("y", y)) if k in target.inputs}
    reverse = api.grad(None, at=at, target=target)
    fwd = api.grad(None, at=at, target=api.load(text), mode="forward")
    assert close(fwd.value, reverse.value)
    for name in reverse.gradient:
        assert close(fwd.gradient[name], reverse.gradient[name], rtol=1e-9, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(_expr(3), st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_forward_and_reverse_agree_on_random_array_expressions(text, values):
    text = re.sub(r"\by\b", "v[::-1]", re.sub(r"\bx\b", "v", text))
    target = api.load(f"sum({text}) + 0 * sum(v)")
    at = {"v": np.array(values)}
    reverse = api.grad(None, at=at, target=target)
    fwd = api.grad(None, at=at, target=api.load(target.source), mode="forward")
    assert close(fwd.gradient["v"], reverse.gradient["v"], rtol=1e-9, atol=1e-9)


# ---- the command line -------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_cli_grad_mode_forward_prints_the_same_json_as_reverse():
    fwd = _cli("grad", "x**2*y + y + 2", "--at", "x=3,y=4", "--mode", "forward", "--json")
    rev = _cli("grad", "x**2*y + y + 2", "--at", "x=3,y=4", "--json")
    assert fwd.returncode == rev.returncode == 0
    f, r = json.loads(fwd.stdout), json.loads(rev.stdout)
    assert f["mode"] == "forward" and r["mode"] == "reverse"
    assert (f["value"], f["gradient"]) == (r["value"], r["gradient"]) == (42.0, {"x": 24.0, "y": 10.0})


def test_cli_grad_mode_forward_says_how_many_passes():
    out = _cli("grad", "sum(x*x)", "--at", "x=[1,2,3]", "--mode", "forward")
    assert out.returncode == 0
    assert "3 forward passes" in out.stdout


def test_cli_grad_rejects_an_unknown_mode():
    out = _cli("grad", "x", "--at", "x=1", "--mode", "sideways")
    assert out.returncode == 2
