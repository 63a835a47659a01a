"""`autodiff emit` of the in-program derivatives (issue 31 item 2, engine/emit/derivatives.py):
grad(h)(x), grad(h, k), value_and_grad, `g = jax.grad(h)`, hessian(h)(x) are calls of h's emitted
helpers, which run h's own emitted sweeps; the emitted code matches autodiff.grad to 1e-12 at
five random points. The derivative of such a value (a second order) is reverse over forward (the
adjoint of h's tangent program), h with loops, branches, helpers and recursion; a third order
through grad inside h too; what is not emitted is refused with its line."""
from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.parser.errors import SourceError
from test_replay_nested import ROOT, gradbench_program

BRANCH = """def h(w, b):
    return sin(w) * w * b


def f(x, a):
    v, db = value_and_grad(h, 1)(x, a)
    step = x - 0.1 * stop_gradient(grad(h)(x, a))
    if db > 0.5:
        return step * step * a + v
    return v * a
"""

DESCENT = """import jax


def h(w):
    return sum(w * w * w) / 3.0 + sum(sin(w))


def f(x):
    dh = jax.grad(h)
    y = x * 1.0
    for i in range(3):
        y = y - 0.1 * stop_gradient(dh(y))
    return sum(y * y) * sum(x)
"""

CLOSURE_AND_RULE = """from jax import custom_jvp


@custom_jvp
def softplus(x):
    return log1p(exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return softplus(x), t / (1.0 + exp(-x))


def f(x, a):
    g = lambda t: t * t * a
    slope = stop_gradient(grad(g)(x)) + stop_gradient(grad(softplus)(x))
    return softplus(x) * slope + a * x
"""


DIRECTIONAL = """import jax


def h(w):
    return sin(w) * w


def f(x, a):
    y, t = jax.jvp(h, (x,), (a,))
    r, c = vjp(h, x, 2.0)
    z = jvp(h, x, 1.0)
    return y * a + r * stop_gradient(t) + stop_gradient(c) * x + stop_gradient(z[1])
"""


def emitted(tmp_path, text, mode="both", at=None):
    source = tmp_path / "program.py"
    source.write_text(text)
    out = tmp_path / "program_emitted.py"
    out.write_text(api.emit(str(source), mode=mode, at=at))
    spec = importlib.util.spec_from_file_location("program_emitted", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return source, out.read_text(), module


def assert_validates(tmp_path, source, point):
    """`--validate` of the module emitted from `source` (tmp_path/program_emitted.py) passes at `point`."""
    rows = api.validate_emitted(str(tmp_path / "program_emitted.py"), api.load(str(source)), point)
    assert rows and [r["verdict"] for r in rows] == ["pass"] * len(rows)


def matches(module, source, point, mode="both"):
    expected = autodiff.grad(str(source), at=point)
    args = list(point.values())
    if mode != "tangent":
        value, grads = module.f_vjp(*args)
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        for p, g in zip(point, grads):
            np.testing.assert_allclose(g, expected.gradient[p], rtol=1e-12, atol=1e-12)
    if mode != "adjoint":
        for p in point:
            for k in np.ndindex(np.shape(point[p])):
                d_in = {f"d_{q}": np.zeros(np.shape(point[q])) for q in point}
                d_in[f"d_{p}"][k] = 1.0
                assert module.f_jvp(*args, **d_in)[1] == pytest.approx(
                    np.asarray(expected.gradient[p])[k], rel=1e-12, abs=1e-12)


def test_value_and_grad_and_grad_inside_a_program_with_a_decision_on_the_gradient(tmp_path):
    source, text, module = emitted(tmp_path, BRANCH)
    assert "def h_grad_1(w, b):" in text and "_stack = []" in text.split("def h_grad_1")[1]
    rng = np.random.default_rng(31)
    taken = set()
    for _ in range(5):
        x, a = rng.uniform(0.1, 2.0), rng.uniform(0.2, 1.5)
        taken.add(np.sin(x) * x > 0.5)
        matches(module, source, {"x": x, "a": a})
    assert taken == {True, False}           # both sides of the decision on the inner gradient
    rows = api.validate_emitted(str(tmp_path / "program_emitted.py"), api.load(str(source)), {"x": 1.3, "a": 0.7})
    assert {r["verdict"] for r in rows} <= {"pass", "detached (stop_gradient: differences see through it)"}
    assert [r["verdict"] for r in rows if r["check"] != "tangent vs central differences"] == ["pass"] * 3


def test_a_named_jax_grad_in_a_loop_at_array_shapes(tmp_path):
    rng = np.random.default_rng(4)
    source, text, module = emitted(tmp_path, DESCENT, at={"x": rng.uniform(-1, 1, 3)})
    assert "h_grad(y)" in text and "def h_fwd(_stack, w):" in text
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-1.5, 1.5, 3)})


def test_grad_of_a_closure_and_of_a_custom_jvp_function(tmp_path):
    source, text, module = emitted(tmp_path, CLOSURE_AND_RULE)
    assert "f_g_grad(x, a)" in text and "softplus_grad(x)" in text
    rng = np.random.default_rng(8)
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-2, 2), "a": rng.uniform(-2, 2)})


def test_tangent_mode_alone_writes_the_sweeps_the_gradient_helper_runs(tmp_path):
    source, text, module = emitted(tmp_path, BRANCH, mode="tangent")
    assert "def f_vjp" not in text and "def h_rev(_stack, _out_b):" in text
    for x in (0.4, 1.6):
        matches(module, source, {"x": x, "a": 0.8}, mode="tangent")


def test_jvp_and_vjp_inside_a_program(tmp_path):
    """`y, t = jax.jvp(h, (x,), (a,))`: y the call h(x) (first order), t h's tangent along a;
    vjp's cotangent h's reverse sweep seeded with v; an item of the pair taken by index."""
    source, text, module = emitted(tmp_path, DIRECTIONAL)
    assert "t = h_jvp_along(x, a)[1]" in text and "c = h_vjp_along(x, 2.0)[1]" in text
    assert text.count("def h_jvp(") == 1
    assert module.h_jvp_along(0.3, 2.0)[1] == pytest.approx(2.0 * (np.cos(0.3) * 0.3 + np.sin(0.3)), rel=1e-15)
    assert module.h_vjp_along(0.3, 2.0)[1] == pytest.approx(2.0 * (np.cos(0.3) * 0.3 + np.sin(0.3)), rel=1e-15)
    rng = np.random.default_rng(12)
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-2, 2), "a": rng.uniform(-2, 2)})


SECOND_ORDER = {
    "jvp": ("def h(w):\n    return w * w * w\n\n\ndef f(x):\n    y, t = jvp(h, x, 1.0)\n    return y * t\n", 6, 5),
    "grad": ("from jax import custom_jvp\n\n\n@custom_jvp\ndef h(w):\n    return w * w * w\n\n\n@h.defjvp\n"
             "def h_jvp(primals, tangents):\n    w, = primals\n    t, = tangents\n    return h(w), 3.0 * w * w * t\n\n\n"
             "def f(x):\n    y = x - 0.1 * grad(h)(x)\n    return y * y\n", 17, 19),
}


@pytest.mark.parametrize("kind", sorted(SECOND_ORDER))
def test_a_second_order_derivative_is_refused_with_its_line(tmp_path, kind):
    text, line, column = SECOND_ORDER[kind]
    source = tmp_path / "program.py"
    source.write_text(text)
    with pytest.raises(SourceError) as err:
        api.emit(str(source))
    assert err.value.kind == "not emitted" and "second-order" in err.value.message
    assert (err.value.span.line, err.value.span.column) == (line, column) and "stop_gradient" in err.value.hint
    first_order = text.replace("0.1 * grad(h)(x)", "0.1 * stop_gradient(grad(h)(x))").replace(
        "v + g", "v + stop_gradient(g)").replace("y * t", "y * stop_gradient(t)")
    source.write_text(first_order)
    assert ("def h_jvp_along(" if kind == "jvp" else "def h_grad(") in api.emit(str(source))


def test_argnum_past_the_arguments_is_a_located_error(tmp_path):
    source = tmp_path / "program.py"
    source.write_text("def h(w):\n    return w * w\n\n\ndef f(x):\n    return x * stop_gradient(grad(h, 1)(x))\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source))
    assert err.value.kind == "wrong arguments" and "argnum 1" in err.value.message and err.value.span.line == 6


SECOND_ORDER_EMITTED = """def h(w, b):
    return sin(w) * w * b + b * b * w


def f(x, a):
    def g(y):
        return a * y * y * x
    s = grad(g)(x) * a + grad(h, 1)(x, a) * x
    return s * grad(h)(a, x)
"""

NESTED = gradbench_program("nested")       # the benchmark's own text (benchmarks/gradbench_evals.py)


def test_a_derivative_through_grad_emits_reverse_over_forward(tmp_path):
    """The adjoint of g = grad(h, k)(args) adds H(args)[:, k] g_b to each argument's adjoint (a
    closure's captured values too), its tangent H[k, :] d_args: the gradient of h's tangent
    program (`h_tan(w, b, d_w, d_b)`, its adjoint `h_tan_vjp`), by emit's own transformations."""
    source, text, module = emitted(tmp_path, SECOND_ORDER_EMITTED)
    assert "def h_tan_vjp(w, b, d_w, d_b, cotangent=1.0):" in text and "f_g_tan_vjp(" in text
    rng = np.random.default_rng(2)
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-2, 2), "a": rng.uniform(-2, 2)})
    assert_validates(tmp_path, source, {"x": 0.7, "a": -1.1})


def test_perturbation_confusion_gives_one(tmp_path):
    """samples/higher/perturbation.py: f(x) = x * grad(g)(x) with g(y) = x + y: f'(x) = 1, not 2."""
    source, text, module = emitted(tmp_path, (ROOT / "samples" / "higher" / "perturbation.py").read_text())
    for x in (3.0, -0.4):
        assert module.f_vjp(x)[1] == (1.0,) and module.f_jvp(x, d_x=1.0)[1] == 1.0


def test_the_nested_benchmark_eval_emits_its_gradient(tmp_path):
    rng = np.random.default_rng(5)
    source, text, module = emitted(tmp_path, NESTED, at={"x": rng.uniform(-1, 1, 4)})
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-1, 1, 4)})


def test_value_and_grad_second_order_emits(tmp_path):
    source, text, module = emitted(tmp_path, "def h(w):\n    return w * w * w\n\n\ndef f(x):\n"
                                   "    v, g = value_and_grad(h)(x)\n    return v + g\n")
    for x in np.random.default_rng(3).uniform(-2, 2, 5):
        matches(module, source, {"x": x})
        assert module.f_vjp(x)[1][0] == pytest.approx(3 * x * x + 6 * x, rel=1e-14)


THROUGH_CONTROL_FLOW = """def step(v, w):
    return tanh(v * w) + 0.5 * v


def h(w, b):
    s = 0.0
    v = w
    for i in range(4):
        if v > 0.2 * i - 0.5:
            v = step(v, w) * b
        else:
            v = v * v * sin(w)
        s = s + v * v
    k = 0
    while k < 2:
        s = s + cos(v) * w
        k = k + 1
    return s


def f(x, a):
    g = grad(h)(x, a)
    return g ** 2 + grad(h, 1)(a, x) * x
"""

THROUGH_A_LOOP_OF_ARRAYS = """def h(w):
    s = 0.0
    for i in range(3):
        if i < 2:
            s = s + sum(sin(w) * w) * i
        else:
            s = s + sum(w * w * w)
    return s


def f(x):
    return sum(grad(h)(x) ** 2)
"""

THROUGH_RECURSION = """def p(w, n):
    if n <= 0:
        return w
    return sin(p(w, n - 1)) * w


def f(x):
    return grad(p)(x, 3) ** 2 + x
"""


@pytest.mark.parametrize("text, point", [
    (THROUGH_CONTROL_FLOW, lambda rng: {"x": rng.uniform(-1, 1), "a": rng.uniform(-1, 1)}),
    (THROUGH_A_LOOP_OF_ARRAYS, lambda rng: {"x": rng.uniform(-1, 1, 3)}),
    (THROUGH_RECURSION, lambda rng: {"x": rng.uniform(-1, 1)})], ids=["loops-if-helper", "arrays", "recursion"])
def test_a_derivative_through_grad_of_h_with_control_flow_is_the_adjoint_of_hs_tangent(tmp_path, text, point):
    """h with for and while loops, an if, a helper call, recursion: the derivative through
    grad(h) is the adjoint of h's tangent program (`h_tan_vjp`), loops kept as loops (its stacks),
    equal to autodiff.grad at five random points, and --validate passes."""
    rng = np.random.default_rng(11)
    at = point(rng)
    source, text, module = emitted(tmp_path, text, at=at if np.ndim(next(iter(at.values()))) else None)
    assert "_tan_vjp(" in text and "_stack.append(" in text
    for _ in range(5):
        matches(module, source, point(rng))
    assert_validates(tmp_path, source, point(rng))


HESSIAN = """def h(w):
    s = 0.0
    for i in range(len(w)):
        if w[i] > 0:
            s = s + w[i] ** 3
        else:
            s = s + sin(w[i]) * w[0]
    return s


def f(x):
    H = stop_gradient(hessian(h)(x))
    return sum(H @ x * x) + sum(grad(h)(x) * x)
"""


def test_hessian_inside_a_program_is_a_row_per_element_of_the_tangents_adjoint(tmp_path):
    """hessian(h)(x) is `h_hessian(x)`: one Hessian-vector product (the adjoint of h's tangent
    program along a unit vector) per element of x; the value matches autodiff's, and the gradient
    (through grad(h), the Hessian cut) matches autodiff.grad's."""
    rng = np.random.default_rng(4)
    source, text, module = emitted(tmp_path, HESSIAN, mode="adjoint", at={"x": np.array([0.3, -0.5, 0.8])})
    assert "def h_hessian(w):" in text
    for _ in range(5):
        x = rng.uniform(-1, 1, 3)
        matches(module, source, {"x": x}, mode="adjoint")
        expected = np.array([[6 * w if w > 0 else -np.sin(w) * x[0] for w in x][j] * (j == k) for j in range(3)
                             for k in range(3)]).reshape(3, 3)
        expected[0, 1:] += [np.cos(w) if w <= 0 else 0.0 for w in x[1:]]
        expected[1:, 0] += [np.cos(w) if w <= 0 else 0.0 for w in x[1:]]
        expected[0, 0] += 2 * np.cos(x[0]) if x[0] <= 0 else 0.0
        np.testing.assert_allclose(module.h_hessian(x), expected, rtol=1e-12, atol=1e-12)


def test_the_derivative_of_a_hessian_is_refused_as_a_third_order(tmp_path):
    source = tmp_path / "program.py"
    source.write_text(HESSIAN.replace("stop_gradient(hessian(h)(x))", "hessian(h)(x)"))
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": np.array([0.3, -0.5, 0.8])})
    assert err.value.kind == "not emitted" and "third-order" in err.value.message
    assert (err.value.span.line, err.value.span.column) == (12, 9) and "stop_gradient" in err.value.hint


@pytest.mark.parametrize("call, words", [("grad(h)(x)", "h() takes 2 arguments but 1 was given"),
                                         ("stop_gradient(hessian(h)(x, x))", "hessian(h) takes 1 argument but 2 were")])
def test_an_in_program_derivative_called_with_the_wrong_count_is_refused_as_the_language_refuses_it(tmp_path, call, words):
    """The count was not checked: emit said "`b` is read before it is bound" with no line."""
    source = tmp_path / "program.py"
    source.write_text(f"def h(w, b):\n    return w * b\n\n\ndef f(x):\n    return sum({call} * x)\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": np.array([0.5, 1.0])})
    assert err.value.kind == "wrong arguments" and words in err.value.message and err.value.span.line == 6


THIRD_ORDER = """def g(w, a):
    s = w
    for i in range(2):
        s = sin(s) * a + w
    return s * w


def h(w, a):
    return grad(g)(w, a) * w + a


def f(x, a):
    return grad(h)(x, a) ** 2 + x
"""


def test_a_derivative_through_grad_of_h_that_takes_grad_itself_is_a_third_order_emitted(tmp_path):
    """grad(g) inside h: h's tangent program has grad(h_tan_g, 0)(w, a, d_w, d_a) for its tangent,
    whose own derivative the adjoint of that program writes as any in-program gradient's: the
    third derivative, equal to autodiff.grad's at five random points; --validate passes."""
    source, text, module = emitted(tmp_path, THIRD_ORDER)
    assert not re.search(r"(?<![\w.])grad\(", text) and "def h_tan_vjp(" in text and "h_tan_g_tan" in text
    rng = np.random.default_rng(12)
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-1, 1), "a": rng.uniform(-1, 1)})
    assert_validates(tmp_path, source, {"x": 0.4, "a": -0.7})


def test_hessian_of_a_function_with_a_custom_rule_is_refused_naming_it(tmp_path):
    source = tmp_path / "program.py"
    source.write_text(SECOND_ORDER["grad"][0].replace("    y = x - 0.1 * grad(h)(x)\n    return y * y\n",
                                                      "    return x * stop_gradient(hessian(h)(x))\n"))
    with pytest.raises(SourceError) as err:
        api.emit(str(source))
    assert err.value.kind == "not emitted" and "`hessian(h)` is not emitted yet: `h` has a custom rule" in err.value.message
    assert (err.value.span.line, err.value.span.column) == (17, 30) and "autodiff hessian" in err.value.hint


NESTED_GRADS = """def h(x, y):
    return sin(x) * y ** 3 + x * x * y


def f(a, b):
    g = grad(grad(h, 1), 0)(a, b)
    t = grad(grad(grad(h)))(a, b)
    return g * b + t + a
"""


def test_a_derivative_of_a_derivative_is_one_of_a_helper_returning_the_inner_one(tmp_path):
    """grad(grad(h))(a) (samples/higher/nested_grad.py, h a closure), grad(grad(h, 1), 0) and a
    third grad of a function of the program: the inner grad(h) is a helper `grad_h` returning
    its value, the outer taken of it, each emitted as a derivative through grad(h) is; they match
    autodiff.grad at five points (before: refused, `grad(...) other than grad(h)`)."""
    source, text, module = emitted(tmp_path, (ROOT / "samples" / "higher" / "nested_grad.py").read_text())
    assert "def f_grad_h(x, a):" in text
    for a in (0.5, -1.3, 2.0, 0.1, -0.7):
        assert module.f_vjp(a) == (pytest.approx(6 * a * a, rel=1e-14), (pytest.approx(12 * a, rel=1e-14),))
    source, text, module = emitted(tmp_path, NESTED_GRADS)
    rng = np.random.default_rng(5)
    for _ in range(5):
        matches(module, source, {"a": rng.uniform(-2, 2), "b": rng.uniform(-2, 2)})
    assert_validates(tmp_path, source, {"a": 0.7, "b": -1.1})


LAMBDAS = """def f(x, a):
    s = grad(lambda t: t * t * a)(x)
    for i in range(3):
        s = s + grad(lambda t: sin(t * i) * a)(x) * s
    return s + grad(grad(lambda t: t ** 3 * a))(x)
"""


def test_a_derivative_of_a_lambda_is_one_of_a_closure_named_for_it(tmp_path):
    """grad(lambda t: ...) (in a loop, reading its variable; under another grad) is the derivative
    of a closure of the lambda defined just before the statement: it matches autodiff.grad at five
    points (before: refused, `grad(...) other than grad(h)`)."""
    source, text, module = emitted(tmp_path, LAMBDAS)
    assert "def f_lambda(t, a):" in text
    rng = np.random.default_rng(9)
    for _ in range(5):
        matches(module, source, {"x": rng.uniform(-2, 2), "a": rng.uniform(-2, 2)})
