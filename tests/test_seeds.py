"""Every example of the seed texts, with the numbers the seeds give (or that follow from them)."""
import json
import math
import pathlib
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from at_syntax import parse_at


def at(*items):
    """Inputs the way the CLI reads them: `--at x=3,y=4`, `--at x=arange(4)`."""
    return parse_at(list(items))


def test_hands_on_ml_value_and_partials():
    r = autodiff.grad("x**2*y+y+2", at=at("x=3,y=4"))
    assert r.value == 42.0
    assert r.gradient == {"x": 24.0, "y": 10.0}
    assert r.reduced is None and r.unconnected == []


def test_hands_on_ml_scalars_stay_python_floats():
    r = autodiff.grad("x**2*y + y + 2", at={"x": 3, "y": 4})
    assert type(r.value) is float and type(r.gradient["x"]) is float


@pytest.mark.parametrize("x, y", [(3.0, 4.0), (-2.5, 0.5), (0.0, 0.0), (1e3, -7.0)])
def test_symbolic_diff_seed_5_plus_xy(x, y):
    # g(x, y) = 5 + xy: dg/dx = 0 + (0*x + y*1) = y, and likewise dg/dy = x
    r = autodiff.grad("5 + x*y", at={"x": x, "y": y})
    assert r.value == 5 + x * y
    assert r.gradient == {"x": y, "y": x}


def test_d2l_two_dot_x_x():
    r = autodiff.grad("2*dot(x,x)", at=at("x=arange(4)"))
    assert r.value == 28.0
    assert r.gradient["x"].tolist() == [0.0, 4.0, 8.0, 12.0]
    # the gradient is 4x, as the seed checks with `x.grad == 4 * x`
    assert np.array_equal(r.gradient["x"], 4 * np.arange(4.0))


def test_d2l_sum_gives_ones():
    r = autodiff.grad("sum(x)", at=at("x=arange(4)"))
    assert r.value == 6.0
    assert r.gradient["x"].tolist() == [1.0, 1.0, 1.0, 1.0]


def test_d2l_non_scalar_output_is_summed():
    r = autodiff.grad("x*x", at=at("x=arange(4.0)"))
    assert r.value.tolist() == [0.0, 1.0, 4.0, 9.0]
    assert r.gradient["x"].tolist() == [0.0, 2.0, 4.0, 6.0]
    assert r.reduced == "sum"


def test_d2l_seed_vector_gives_vjp():
    # PyTorch's y.backward(gradient=v): v^T J with J = diag(2x)
    r = autodiff.grad("x*x", at=at("x=arange(4.0)"), seed=np.array([1.0, 0.0, 2.0, -1.0]))
    assert r.gradient["x"].tolist() == [0.0, 0.0, 8.0, -6.0]
    assert r.reduced == "seed"


@pytest.mark.parametrize("cut", ["detach", "stop_gradient"])
def test_d2l_detach_gives_u(cut):
    # u = detach(x*x); z = u*x; dz/dx (summed) is u, not 3x**2
    r = autodiff.grad(f"{cut}(x*x)*x", at=at("x=arange(4.0)"))
    assert r.gradient["x"].tolist() == [0.0, 1.0, 4.0, 9.0]
    # and the undetached product gives 3x**2 (the cut is what makes the difference)
    full = autodiff.grad("(x*x)*x", at=at("x=arange(4.0)"))
    assert full.gradient["x"].tolist() == [0.0, 3.0, 12.0, 27.0]


def test_d2l_detach_then_gradient_of_y_itself_still_flows():
    # the seed's second check: y = x*x is still differentiable on its own, d sum(y)/dx = 2x
    r = autodiff.grad("sum(x*x) + 0*sum(detach(x*x)*x)", at=at("x=arange(4.0)"))
    assert r.gradient["x"].tolist() == [0.0, 2.0, 4.0, 6.0]


def hand_derivative(x):
    # f(x) = log(x**2) sin(x) + 1/x  ->  f'(x) = (2/x) sin x + log(x**2) cos x - 1/x**2
    return 2 / x * math.sin(x) + math.log(x * x) * math.cos(x) - 1 / (x * x)


@pytest.mark.parametrize("x", [0.3, 1.0, 2.0, math.pi, 7.5, -1.7, -0.05])
def test_d2l_exercise_log_sin_against_hand_derivative(x):
    r = autodiff.grad("log(x**2)*sin(x) + x**-1", at={"x": x})
    assert r.value == pytest.approx(math.log(x * x) * math.sin(x) + 1 / x, rel=1e-14, abs=1e-14)
    assert r.gradient["x"] == pytest.approx(hand_derivative(x), rel=1e-12, abs=1e-12)


def test_d2l_exercise_on_an_array_matches_hand_derivative_elementwise():
    xs = np.linspace(0.25, 6.0, 24)
    r = autodiff.grad("log(x**2)*sin(x) + x**-1", at={"x": xs})
    expected = [hand_derivative(float(x)) for x in xs]
    np.testing.assert_allclose(r.gradient["x"], expected, rtol=1e-12, atol=1e-12)


def test_d2l_exercise_hand_derivative_as_an_expression_agrees():
    # a hand-derived gradient is a formula in the same language, evaluated at the same point
    xs = np.linspace(-3.0, 3.0, 10)
    r = autodiff.grad("log(x**2)*sin(x) + x**-1", at={"x": xs})
    hand = autodiff.evaluate("2/x*sin(x) + log(x**2)*cos(x) - x**-2", at={"x": xs}).value
    np.testing.assert_allclose(r.gradient["x"], hand, rtol=1e-12, atol=1e-12)


def test_integer_numbers_are_floats_and_int_arrays_are_integer_data():
    r = autodiff.grad("x**2", at={"x": 3})
    assert r.gradient["x"] == 6.0
    r = autodiff.grad("sum(x**2)", at={"x": [0, 1, 2]})           # a list of ints: numbers
    assert r.gradient["x"].dtype == np.float64 and r.gradient["x"].tolist() == [0.0, 2.0, 4.0]
    # issue 29 item 2: an int array from the caller is integer data (labels), with no derivative
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.grad("sum(x**2)", at={"x": np.arange(3)})
    assert "every input is integer data (x)" in info.value.message


# ---- samples/expressions/README.md: every command listed there, with its expected result ----------

SAMPLES = pathlib.Path(__file__).resolve().parent.parent / "samples" / "expressions" / "README.md"


def sample_commands():
    """(command, expected JSON) pairs: each ```sh block followed by a ```json block."""
    blocks = re.findall(r"```(sh|json)\n(.*?)```", SAMPLES.read_text(encoding="utf-8"), re.S)
    pairs = []
    for (kind, text), (next_kind, expected) in zip(blocks, blocks[1:]):
        if kind == "sh" and next_kind == "json":
            pairs.append((text.strip(), json.loads(expected)))
    return pairs


def test_samples_page_lists_the_seed_examples():
    commands = [c for c, _ in sample_commands()]
    assert len(commands) >= 9
    for expr in ("x**2*y + y + 2", "5 + x*y", "2*dot(x,x)", "sum(x)", "detach(x*x)*x", "log(x**2)*sin(x) + x**-1"):
        assert any(f'"{expr}"' in c for c in commands), expr


def assert_matches(actual, expected, where):
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert key in actual, f"{where}: no key {key!r}"
            assert_matches(actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_matches(a, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-12, abs=1e-14), where
    else:
        assert actual == expected, where


@pytest.mark.parametrize("command, expected", sample_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_sample_command_gives_its_expected_result(command, expected):
    argv = shlex.split(command)
    assert argv[0] == "autodiff"
    p = subprocess.run([sys.executable, "-m", "autodiff", *argv[1:]], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert_matches(json.loads(p.stdout), expected, command)
