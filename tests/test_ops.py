"""Engine ops (raw values, boxes, operators, IEEE behaviour) and the language's builtins."""
import math

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.engine.core import ops
from autodiff.engine.core.tape import Dual, Tape, Var, backward, new_level, strip


# ---- raw values: a float in, a float out; numpy's IEEE answers, never an exception -------------

@pytest.mark.parametrize("fn, args, expected", [
    (ops.div, (1.0, 0.0), math.inf), (ops.div, (-1.0, 0.0), -math.inf), (ops.div, (0.0, 0.0), math.nan),
    (ops.pow, (0.0, -1.0), math.inf), (ops.pow, (-8.0, 1 / 3), math.nan), (ops.pow, (10.0, 400.0), math.inf),
    (ops.pow, (-2.0, 2.0), 4.0), (ops.pow, (-2.0, 3.0), -8.0),
    (ops.log, (0.0,), -math.inf), (ops.log, (-1.0,), math.nan), (ops.sqrt, (-1.0,), math.nan),
    (ops.exp, (1000.0,), math.inf), (ops.arcsin, (2.0,), math.nan), (ops.cosh, (1000.0,), math.inf),
    (ops.sigmoid, (-1000.0,), 0.0), (ops.softplus, (1000.0,), 1000.0),
])
def test_float_fast_path_follows_ieee(fn, args, expected):
    r = fn(*args)
    assert r.__class__ is float
    assert (math.isnan(r) and math.isnan(expected)) or r == expected


def test_array_results_of_one_element_reductions_are_python_floats():
    a = np.array([1.0, 2.0, 3.0])
    for r in (ops.sum(a), ops.max(a), ops.min(a), ops.prod(a), ops.norm(a), ops.matmul(a, a), ops.getitem(a, 1)):
        assert r.__class__ is float
    assert ops.sum(a, 0).__class__ is float


def test_array_ops_match_numpy():
    a = np.array([[1.0, -2.0], [3.0, 0.5]])
    np.testing.assert_array_equal(ops.maximum(a, 0.75), np.maximum(a, 0.75))
    np.testing.assert_array_equal(ops.sum(a, 0), a.sum(0))
    np.testing.assert_array_equal(ops.max(a, 1), a.max(1))
    np.testing.assert_array_equal(ops.transpose(a), a.T)
    np.testing.assert_array_equal(ops.reshape(a, (4,)), a.reshape(4))
    np.testing.assert_array_equal(ops.where(a > 0, a, -a), np.abs(a))


def test_matmul_of_scalars_is_refused_with_a_message():
    with pytest.raises(ValueError, match="use \\*"):
        ops.matmul(2.0, 3.0)


# ---- operators on boxes ----------------------------------------------------------------------

@pytest.mark.parametrize("make", ["var", "dual"])
def test_operators_on_boxes_and_reflected_operators(make):
    level = new_level()
    tape = Tape()

    def box(v):
        return tape.watch(v) if make == "var" else Dual(v, 1.0, level)
    x = box(2.0)
    for expr, expected in ((lambda: x + 1.0, 3.0), (lambda: 1.0 + x, 3.0), (lambda: x - 5.0, -3.0),
                           (lambda: 5.0 - x, 3.0), (lambda: x * 3.0, 6.0), (lambda: 3.0 * x, 6.0),
                           (lambda: x / 4.0, 0.5), (lambda: 4.0 / x, 2.0), (lambda: x ** 3.0, 8.0),
                           (lambda: 3.0 ** x, 9.0), (lambda: -x, -2.0), (lambda: +x, 2.0)):
        r = expr()
        assert isinstance(r, (Var, Dual)) and strip(r) == expected
    assert (x < 3.0) is True and (x >= 2.0) is True and (x != 2.0) is False


def test_numpy_arrays_defer_to_boxes():
    # `array * Var` must be a Var (numpy would otherwise build an object array of Vars)
    tape = Tape()
    x = tape.watch(np.array([1.0, 2.0]))
    for r in (np.array([3.0, 4.0]) * x, np.array([3.0, 4.0]) + x, np.float64(2.0) * x,
              np.array([3.0, 4.0]) - x, np.array([3.0, 4.0]) / x, np.eye(2) @ x):
        assert isinstance(r, Var) and isinstance(r.value, np.ndarray) and r.value.dtype == np.float64
    cmp = np.array([1.5, 1.5]) < x
    assert cmp.dtype == bool and cmp.tolist() == [False, True]
    g = backward(tape, ops.sum(np.array([3.0, 4.0]) * x), 1.0)[x.index]
    assert g.tolist() == [3.0, 4.0]


def test_stack_of_boxes_is_differentiable():
    tape = Tape()
    x, y = tape.watch(2.0), tape.watch(3.0)
    s = ops.stack([x, x * y, 1.0])
    assert isinstance(s, Var) and s.value.tolist() == [2.0, 6.0, 1.0]
    adj = backward(tape, ops.sum(s * np.array([1.0, 10.0, 100.0])), 1.0)
    assert adj[x.index] == 1.0 + 10.0 * 3.0 and adj[y.index] == 10.0 * 2.0


def test_repeated_indices_accumulate():
    tape = Tape()
    x = tape.watch(np.array([1.0, 2.0, 3.0]))
    picked = ops.getitem(x, np.array([0, 0, 2]))
    g = backward(tape, ops.sum(picked), 1.0)[x.index]
    assert g.tolist() == [2.0, 0.0, 1.0]


def test_zeros_like_and_stop_gradient_unbox():
    tape = Tape()
    x = tape.watch(np.array([1.0, 2.0]))
    assert ops.zeros_like(x).tolist() == [0.0, 0.0] and ops.zeros_like(tape.watch(3.0)) == 0.0
    assert isinstance(ops.stop_gradient(x * 2.0), np.ndarray)


# ---- the builtins, against numpy -------------------------------------------------------------

X = [0.25, -0.5, 0.75]
UNARY_BUILTINS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos,
    "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "exp": np.exp,
    "abs": np.abs, "sign": np.sign, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "relu": lambda v: np.maximum(v, 0), "softplus": lambda v: np.log1p(np.exp(v)),
}


@pytest.mark.parametrize("name", sorted(UNARY_BUILTINS))
def test_unary_builtins_match_numpy_on_floats_and_arrays(name):
    ref = UNARY_BUILTINS[name]
    r = autodiff.evaluate(f"{name}(x)", at={"x": X})
    np.testing.assert_allclose(r.value, ref(np.array(X)), rtol=1e-14, atol=1e-15)
    s = autodiff.evaluate(f"{name}(x)", at={"x": X[1]})
    assert type(s.value) is float
    assert s.value == pytest.approx(float(ref(np.float64(X[1]))), rel=1e-14, abs=1e-15)


@pytest.mark.parametrize("name, ref", [("log", np.log), ("log2", np.log2), ("log10", np.log10), ("sqrt", np.sqrt)])
def test_positive_domain_builtins(name, ref):
    r = autodiff.evaluate(f"{name}(x)", at={"x": [0.5, 2.0, 100.0]})
    np.testing.assert_allclose(r.value, ref([0.5, 2.0, 100.0]), rtol=1e-15)


@pytest.mark.parametrize("expr, expected", [
    ("maximum(x, 0)", [0.25, 0.0, 0.75]), ("minimum(x, 0)", [0.0, -0.5, 0.0]),
    ("where(x > 0, x, 10*x)", [0.25, -5.0, 0.75]), ("sum(x)", 0.5), ("mean(x)", 0.5 / 3),
    ("prod(x)", 0.25 * -0.5 * 0.75), ("max(x)", 0.75), ("min(x)", -0.5), ("dot(x, x)", 0.875),
    ("matmul(x, x)", 0.875), ("x @ x", 0.875), ("norm(x)", math.sqrt(0.875)), ("len(x)", 3.0),
    ("transpose(x)", X), ("reshape(x, 3, 1)", [[0.25], [-0.5], [0.75]]), ("reshape(x, (1, 3))", [X]),
    ("arange(3)", [0.0, 1.0, 2.0]), ("arange(1, 2, 0.5)", [1.0, 1.5]), ("linspace(0, 1, 5)", [0, 0.25, 0.5, 0.75, 1]),
    ("zeros(2)", [0.0, 0.0]), ("ones((2, 2))", [[1.0, 1.0], [1.0, 1.0]]), ("zeros(2, 1)", [[0.0], [0.0]]),
    ("pi", math.pi), ("e", math.e), ("np.pi * 0 + math.e", math.e),
    ("stop_gradient(x)", X), ("detach(x)", X), ("sum(x, 0)", 0.5), ("mean([[1, 2], [3, 5]], 0)", [2.0, 3.5]),
    ("max([[1, 4], [3, 2]], 1)", [4.0, 3.0]), ("min([[1, 4], [3, 2]], 0)", [1.0, 2.0]),
])
def test_builtins_values(expr, expected):
    at = {"x": X} if "x" in expr.replace("max", "").replace("exp", "") else None
    v = autodiff.evaluate(expr, at=at).value
    np.testing.assert_allclose(np.asarray(v, dtype=float), np.asarray(expected, dtype=float), rtol=1e-15, atol=1e-16)


@pytest.mark.parametrize("expr, grad", [
    ("mean(x)", [1 / 3] * 3), ("prod(x)", [-0.5 * 0.75, 0.25 * 0.75, 0.25 * -0.5]),
    ("dot(x, [1, 2, 3])", [1.0, 2.0, 3.0]), ("sum(transpose(reshape(x, 3, 1)) * 2)", [2.0, 2.0, 2.0]),
    ("norm(x)", [v / math.sqrt(0.875) for v in X]), ("max(x) - min(x)", [0.0, -1.0, 1.0]),
    ("sum(stop_gradient(x) * x)", X), ("len(x) * sum(x)", [3.0, 3.0, 3.0]),
])
def test_builtins_gradients(expr, grad):
    r = autodiff.grad(expr, at={"x": X})
    np.testing.assert_allclose(r.gradient["x"], grad, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("expr, kind", [
    ("sin(x, x)", "wrong arguments"), ("sum()", "wrong arguments"), ("arange(0, 1, 0)", "value error"),
    ("zeros(-1)", "value error"), ("reshape(x, 2)", "shape mismatch"), ("len(2)", "type error"),
    ("pi(x)", "type error"), ("sum(x, 0.5)", "type error"), ("zeros(1e12)", "too large"),
])
def test_builtin_misuse_is_a_source_error(expr, kind):
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.evaluate(expr, at={"x": X} if "x" in expr.replace("exp", "") else None)
    assert info.value.kind == kind, info.value.message
    assert info.value.span is not None


@pytest.mark.parametrize("expr", ["sin(sin)", "maximum(x, sin)", "where(x > 0, sin, 1)", "exp(range(3))"])
def test_builtins_name_a_non_numeric_argument(expr):
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.evaluate(expr, at={"x": X} if "x" in expr.replace("exp", "") else None)
    assert info.value.kind == "type error" and "numbers or arrays" in info.value.message


def test_mean_of_nothing_is_nan_and_a_bad_axis_is_named():
    assert math.isnan(autodiff.evaluate("mean(zeros(0))").value)
    with pytest.raises(autodiff.SourceError, match="axis -3"):
        autodiff.evaluate("mean(x, -3)", at={"x": X})


@pytest.mark.parametrize("expr", ["sum(y, 0)", "mean(y, 0)", "sum(x, 1)", "max(x, -2)", "min(x, 3)",
                                  "sum(sum(y, 0))"])
def test_reduction_axes_are_checked_like_numpy(expr):
    with pytest.raises(autodiff.SourceError) as info:
        inputs = api.load(expr).inputs
        autodiff.grad(expr, at={k: v for k, v in (("x", X), ("y", 2.0)) if k in inputs})
    assert info.value.kind == "index error" and "out of bounds" in info.value.message


@pytest.mark.parametrize("expr, value, slope", [("max(y, 0)", 2.0, 1.0), ("min(y, 0)", 0.0, 0.0),
                                                ("max(y, 3)", 3.0, 0.0), ("min(y, 2.5, 2 * y)", 2.0, 1.0)])
def test_min_and_max_of_numbers_are_pythons(expr, value, slope):
    # a number has no axis: max(y, 0) is the larger of the two, as in Python (issue 15)
    for mode in ("reverse", "forward"):
        r = autodiff.grad(expr, at={"y": 2.0}, mode=mode)
        assert (r.value, r.gradient["y"]) == (value, slope)


def test_negative_reduction_axes():
    r = autodiff.grad("sum(sum(A, -1) * [1, 2])", at={"A": [[1.0, 2.0], [3.0, 4.0]]})
    assert r.value == 3.0 + 2 * 7.0 and r.gradient["A"].tolist() == [[1.0, 1.0], [2.0, 2.0]]


# ---- the README's builtins list is the table's and the language's ------------------------------

def test_readme_lists_every_builtin():
    """The README's **Builtins** list names each builtin primitive of the table (core/rules/) and
    each of the language's own builtins: an entry added with builtin= but not documented fails."""
    import pathlib
    import re

    from autodiff.engine.core.rules import builtin_primitives
    from autodiff.engine.lang.builtins import make_builtins

    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    paragraph = readme.split("**Builtins**", 1)[1].split("\n\n", 1)[0]
    listed = set(max(re.findall(r"`([^`]+)`", paragraph), key=len).split())      # the long list
    aliases = {prim.alias for prim in builtin_primitives() if prim.alias}
    # the constants, stop_gradient/detach and grad are described after the list, in words
    described = {"pi", "e", "inf", "nan", "stop_gradient", "detach", "grad"}
    # custom_vjp and custom_jvp are the decorators of user rules: the language section tells them
    from autodiff.parser.decorators import RULE_DECORATORS
    assert {prim.builtin for prim in builtin_primitives()} <= listed
    # numpy's type objects (np.float64, bool, ...) are values dtype= takes, not functions: the Numbers paragraph
    from autodiff.engine.lang.dtypes import TYPES
    assert listed == set(make_builtins(None)) - aliases - described - set(RULE_DECORATORS) - set(TYPES)
    assert all(f"`{name}" in paragraph for name in described)


# ---- the core knows no parser, language or CLI ---------------------------------------------------

def test_the_core_imports_nothing_above_it():
    import pathlib
    import re

    core = pathlib.Path(ops.__file__).resolve().parent
    for path in core.rglob("*.py"):
        for line in path.read_text().splitlines():
            if re.match(r"\s*(from|import)\s", line):
                assert not re.search(r"\b(parser|lang|cli)\b|\.\.\.", line), f"{path.name}: {line.strip()}"


def test_the_element_limit_raises_an_engine_error_naming_the_setting():
    from autodiff.engine.core.errors import EngineError, TooLarge

    old = ops.element_limit[0]
    ops.element_limit[0] = 10
    try:
        with pytest.raises(TooLarge) as info:
            ops.mul(np.ones((4, 1)), np.ones(4))
    finally:
        ops.element_limit[0] = old
    err = info.value
    assert isinstance(err, EngineError) and err.kind == "too large" and err.setting == "max_elements"
    assert "16 elements" in err.message and "--" not in err.message
