"""Nested differentiation inside programs: `grad(f)`, `grad(grad(f))`, closures, levels."""
import math
import os

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.diff.higher import derivatives, hessian
from autodiff.parser.errors import SourceError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERTURBATION = """\
def f(x):
    def g(y):
        return x + y
    return x * grad(g)(x)
"""


def program(src):
    return api.load(src, filename="prog.py")


def run(src, **at):
    return api.evaluate(None, at=at, target=program(src)).value


def grad(src, mode="reverse", **at):
    return api.grad(None, at=at, target=program(src), mode=mode)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("x", [-3.0, 0.0, 0.5, 7.0])
def test_perturbation_confusion_gives_derivative_1(mode, x):
    r = grad(PERTURBATION, mode=mode, x=x)
    assert r.value == x and r.gradient["x"] == 1.0


def test_perturbation_confusion_sample_from_the_command_line_api():
    path = os.path.join(ROOT, "samples", "higher", "perturbation.py")
    assert api.grad(path, at={"x": 3.0}).gradient["x"] == 1.0
    assert api.grad(path, at={"x": 3.0}, mode="forward").gradient["x"] == 1.0


def test_three_levels_of_nesting_keep_their_perturbations_apart():
    src = """\
def f(x):
    def g(y):
        def h(z):
            return x * y * z
        return grad(h)(y)
    return grad(g)(x)
"""
    # h'(z) = x y, so g(y) = x y, g'(y) = x, f(x) = x
    for mode in ("reverse", "forward"):
        r = grad(src, mode=mode, x=2.5)
        assert (r.value, r.gradient["x"]) == (2.5, 1.0)


def test_grad_of_a_user_function_and_of_a_builtin():
    src = """\
def cube(t):
    return t**3
def f(x):
    return grad(cube)(x) + grad(sin)(x)
"""
    assert math.isclose(run(src, x=0.8), 3 * 0.64 + math.cos(0.8), rel_tol=1e-15)


@pytest.mark.parametrize("x", [0.3, -1.7])
def test_grad_of_grad_is_the_second_derivative(x):
    src = """\
def f(x):
    return grad(grad(sin))(x) + grad(grad(grad(exp)))(x)
"""
    assert math.isclose(run(src, x=x), -math.sin(x) + math.exp(x), rel_tol=1e-14)
    # and the program can itself be differentiated: f'(x) = -cos x + e^x
    for mode in ("reverse", "forward"):
        assert math.isclose(grad(src, mode=mode, x=x).gradient["x"], -math.cos(x) + math.exp(x), rel_tol=1e-14)


def test_closure_reads_the_enclosing_functions_variables():
    path = os.path.join(ROOT, "samples", "higher", "nested_grad.py")
    r = api.grad(path, at={"a": 0.5})
    assert (r.value, r.gradient["a"]) == (6 * 0.25, 12 * 0.5)
    d = derivatives(path, at={"a": 0.5}, order=3)
    assert d.derivatives == [6.0, 12.0, 0.0]


def test_closure_sees_the_value_at_call_time_in_a_loop():
    src = """\
def f(x):
    total = 0
    for k in range(1, 4):
        def g(y):
            return k * y**2 + x * y
        total = total + grad(g)(x)
    return total
"""
    # grad(g)(x) = 2 k x + x = (2k + 1) x; summed over k = 1, 2, 3: 15 x
    for mode in ("reverse", "forward"):
        r = grad(src, mode=mode, x=2.0)
        assert (r.value, r.gradient["x"]) == (30.0, 15.0)


def test_grad_of_a_function_of_an_array():
    src = """\
def f(v):
    def energy(u):
        return sum(u * u) / 2 + sum(sin(u))
    return sum(grad(energy)(v) * v)
"""
    v = np.array([0.1, -0.4, 1.2])
    r = api.grad(None, at={"v": v}, target=program(src))
    assert math.isclose(r.value, float(np.sum((v + np.cos(v)) * v)), rel_tol=1e-14)
    assert np.allclose(r.gradient["v"], 2 * v + np.cos(v) - v * np.sin(v), rtol=1e-14)


def test_hessian_and_derivative_of_a_program_with_nested_grad():
    src = """\
def f(x):
    def h(t):
        return x * t**4
    return grad(h)(x)
"""
    # f(x) = 4 x^4: f' = 16 x^3, f'' = 48 x^2
    h = hessian(None, at={"x": 0.5}, target=program(src))
    assert math.isclose(h.hessian["x"]["x"], 48 * 0.25, rel_tol=1e-14)
    d = derivatives(None, at={"x": 0.5}, order=5, target=program(src))
    assert d.derivatives == [16 * 0.125, 48 * 0.25, 96 * 0.5, 96.0, 0.0]


@pytest.mark.parametrize("src,kind", [
    ("def f(x):\n    return grad(x)(x)\n", "type error"),
    ("def f(x):\n    def g(u):\n        return [u, u]\n    return grad(g)(x)\n", "shape mismatch"),
    ("def f(x):\n    def g(u, w):\n        return u * w\n    return grad(g)(x)\n", "wrong arguments"),
    ("def f(x):\n    return grad(sin)(x, x)\n", "wrong arguments"),
])
def test_misuse_of_grad_is_a_located_user_error(src, kind):
    with pytest.raises(SourceError) as err:
        grad(src, x=1.0)
    assert err.value.kind == kind and err.value.span is not None


@pytest.mark.parametrize("transform", ["grad({})(x)", "value_and_grad({})(x)", "hessian({})(x)",
                                       "jvp({}, x, 1.0)", "vjp({}, x, 1.0)"])
@pytest.mark.parametrize("name", ["range", "len", "zeros", "ones", "arange", "enumerate", "zip"])
def test_a_builtin_that_is_no_function_of_numbers_is_refused(transform, name):
    # issue 27 item 18: grad(range)(x) gave 0 with exit 0
    with pytest.raises(SourceError) as err:
        api.evaluate(transform.format(name), at={"x": 3.0})
    assert err.value.kind == "type error" and err.value.span is not None
    assert f"{name}() is none" in err.value.message


@pytest.mark.parametrize("src", [
    "def f(x):\n    def g(u):\n        return (u, u)\n    return grad(g)(x)\n",
    "def f(x):\n    def g(u):\n        return range(2)\n    return grad(g)(x)\n",
    "def f(x):\n    return jvp(lambda u: (u, u), x, 1.0)[1]\n",
    "def f(x):\n    return vjp(lambda u: range(2), x, 1.0)[1]\n",
])
def test_a_function_whose_output_is_no_number_is_refused(src):
    with pytest.raises(SourceError) as err:
        run(src, x=3.0)
    assert err.value.kind == "type error" and "needs a function whose output is a number" in err.value.message


def test_numeric_builtins_still_differentiate():
    assert api.evaluate("grad(sin)(x)", at={"x": 3.0}).value == math.cos(3.0)
    assert api.evaluate("grad(grad(sin))(x)", at={"x": 3.0}).value == -math.sin(3.0)
    assert api.evaluate("grad(sign)(x)", at={"x": 3.0}).value == 0.0
