"""Programs differentiated define-by-run: each gradient against its closed form, the language's
semantics (value semantics, tuple assignment, short circuits...), scripts and --fn selection."""
import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.engine import api
from autodiff.parser.errors import SourceError


def load(src, fn=None, of=None):
    return api.load(textwrap.dedent(src), fn, of, filename="prog.py")


def grad(src, fn=None, of=None, limits=None, **at):
    return api.grad(None, at=at, target=load(src, fn, of), limits=limits)


def run(src, fn=None, of=None, limits=None, **at):
    return api.evaluate(None, at=at, target=load(src, fn, of), limits=limits)


def sample(name):
    from pathlib import Path
    return (Path(__file__).resolve().parent.parent / "samples" / "programs" / name).read_text()


finite = st.floats(min_value=-50, max_value=50, allow_nan=False).filter(lambda v: abs(v) > 1e-3)


# ---- the d2l example ----------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(a=finite)
def test_d2l_scalar_gradient_is_f_over_a(a):
    r = grad(sample("control.py"), a=a)
    assert r.gradient["a"] == pytest.approx(r.value / a, rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(a=st.lists(finite, min_size=2, max_size=5))
def test_d2l_vector_gradient_is_f_over_a(a):
    r = grad(sample("control.py"), a=a)
    np.testing.assert_allclose(r.gradient["a"], np.asarray(r.value) / np.asarray(a), rtol=1e-12)


def test_d2l_branches_are_taken_by_the_data():
    pos, neg = grad(sample("control.py"), a=0.37), grad(sample("control.py"), a=-0.37)
    # the else branch multiplies by 100: for -a the gradient is 100 times larger (same trip count)
    assert neg.gradient["a"] == 100 * pos.gradient["a"]
    lines = sample("control.py").splitlines()
    loop = next(i for i, t in enumerate(lines, 1) if "while" in t)
    branch = next(i for i, t in enumerate(lines, 1) if t.strip().startswith("if sum"))
    (loop_at, trips), (branch_at, taken) = pos.signature
    assert (loop_at, branch_at, taken) == ((loop, 11), (branch, 8), True)
    assert 2.0 ** (trips + 1) == pos.gradient["a"]              # b = a * 2 * 2**trips
    assert neg.signature == [((loop, 11), trips), ((branch, 8), False)]


# ---- numerical algorithms -----------------------------------------------------------------------

@pytest.mark.parametrize("a", [0.25, 2.0, 9.0, 1e4])
def test_newton_sqrt_gradient(a):
    r = grad(sample("newton_sqrt.py"), a=a)
    assert r.value == pytest.approx(math.sqrt(a), rel=1e-14)
    assert r.gradient["a"] == pytest.approx(1 / (2 * math.sqrt(a)), rel=1e-12)


def test_euler_matches_closed_form_of_the_recurrence_and_tends_to_exp():
    src = sample("euler_decay.py")
    k, y0, T, n = 0.5, 2.0, 2.0, 100
    h = T / n
    r = grad(src, k=k, y0=y0)
    assert r.value == pytest.approx(y0 * (1 - k * h) ** n, rel=1e-12)
    assert r.gradient["y0"] == pytest.approx((1 - k * h) ** n, rel=1e-12)
    assert r.gradient["k"] == pytest.approx(-n * h * y0 * (1 - k * h) ** (n - 1), rel=1e-12)
    fine = grad(src.replace("N = 100", "N = 4000"), k=k, y0=y0)
    assert fine.gradient["k"] == pytest.approx(-T * y0 * math.exp(-k * T), rel=1e-3)


def test_logistic_regression_gradient_is_textbook():
    X = np.array([[1.0, 2.0], [2.0, -1.0], [-1.5, 0.5], [0.5, 1.5]])
    Y = np.array([1.0, 0.0, 0.0, 1.0])
    w, b = np.array([0.3, 0.7]), -0.2
    r = grad(sample("logistic_loss.py"), w=w.tolist(), b=b)
    p = 1 / (1 + np.exp(-(X @ w + b)))
    assert r.value == pytest.approx(-np.mean(Y * np.log(p) + (1 - Y) * np.log(1 - p)), rel=1e-12)
    np.testing.assert_allclose(r.gradient["w"], X.T @ (p - Y) / 4, rtol=1e-12)
    assert r.gradient["b"] == pytest.approx(np.mean(p - Y), rel=1e-12)


@pytest.mark.parametrize("z", [[2.0, 1.0, 0.1], [1000.0, 0.0, -1000.0], [-3.0, -3.0, -3.0]])
def test_softmax_cross_entropy_gradient(z):
    r = grad(sample("softmax_xent.py"), z=z)
    z = np.array(z)
    s = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(r.gradient["z"], s - np.eye(3)[1], rtol=1e-12, atol=1e-300)
    assert np.isfinite(r.value)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 10, 13])
def test_recursive_power(n):
    src = sample("recursive_power.py").replace("power(x, 10)", f"power(x, {n})")
    r = grad(src, x=1.3)
    assert r.value == pytest.approx(1.3 ** n, rel=1e-13)
    assert r.gradient["x"] == pytest.approx(n * 1.3 ** (n - 1) if n else 0.0, rel=1e-13)
    assert r.unconnected == (["x"] if n == 0 else [])


def test_nested_loops_quadratic_form():
    A = np.array([[2.0, 1.0, 0.0], [-1.0, 3.0, 4.0], [0.5, 0.0, 1.0]])
    x = np.array([0.3, -1.2, 2.5])
    r = grad(sample("nested_loops.py"), x=x.tolist())
    assert r.value == pytest.approx(x @ A @ x, rel=1e-12)
    np.testing.assert_allclose(r.gradient["x"], (A + A.T) @ x, rtol=1e-12)


def test_stop_gradient_inside_a_function():
    assert grad(sample("stop_gradient.py"), x=3.0).gradient["x"] == 2.0
    without = sample("stop_gradient.py").replace("stop_gradient(scale)", "scale")
    assert grad(without, x=3.0).gradient["x"] == pytest.approx(1.0)


# ---- the language -------------------------------------------------------------------------------

def test_for_over_an_array_walks_the_first_axis():
    src = """
    def f(M):
        total = 0.0
        for row in M:
            total += row[0] * row[1]
        return total
    """
    M = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    r = grad(src, M=M)
    assert r.value == 44.0
    np.testing.assert_array_equal(r.gradient["M"], [[2.0, 1.0], [4.0, 3.0], [6.0, 5.0]])
    assert grad(sample("loop_over_array.py"), x=[2.0, -1.0]).gradient["x"].tolist() == [12.0, 0.0]


def test_for_over_a_constant_array():
    src = """
    W = [1.0, 2.0, 3.0]
    def f(x):
        s = 0.0
        for w in W:
            s += w * x
        return s
    """
    assert grad(src, x=2.0).gradient["x"] == 6.0


def test_tuple_assignment_swaps_simultaneously():
    src = """
    def f(x, y):
        a, b = x, y
        a, b = b, a
        return a - 10 * b
    """
    r = grad(src, x=1.0, y=2.0)
    assert r.value == 2.0 - 10.0
    assert (r.gradient["x"], r.gradient["y"]) == (-10.0, 1.0)
    assert grad(sample("fibonacci.py"), x=0.5).gradient["x"] == 55.0


def test_tuple_assignment_unpacks_an_array_row_by_row():
    src = """
    def f(v):
        a, b = v
        return a * b
    """
    assert grad(src, v=[3.0, 4.0]).gradient["v"].tolist() == [4.0, 3.0]
    with pytest.raises(SourceError, match="cannot unpack 3 values into 2 names"):
        grad(src, v=[3.0, 4.0, 5.0])


@pytest.mark.parametrize("op,expect", [("+=", 5.0), ("-=", -1.0), ("*=", 6.0), ("/=", 2 / 3)])
def test_augmented_assignment(op, expect):
    src = f"""
    def f(x, y):
        z = x
        z {op} y
        return z
    """
    assert run(src, x=2.0, y=3.0).value == pytest.approx(expect)


def test_augmented_assignment_rebinds_and_never_mutates_the_input():
    src = """
    C = [1.0, 2.0]
    def f(x):
        z = x
        z += 10
        c = C
        c *= 3
        return 100 * sum(c) + 1000 * sum(z)
    """
    r = grad(src, x=[1.0, 2.0])
    assert r.value == 100 * 9.0 + 1000 * 23.0             # c *= 3 repeats the list, as Python's
    assert r.gradient["x"].tolist() == [1000.0, 1000.0]
    assert r.inputs["x"].tolist() == [1.0, 2.0]          # the input array itself is untouched


@pytest.mark.parametrize("read, name", [("sum(alias)", "alias"), ("sum(C)", "C"), ("sum(x)", "x")])
def test_an_alias_of_what_augmented_assignment_wrote_is_not_read(read, name):
    """numpy's `z += 10` and Python's list `c *= 3` write in place: `alias`, `x` (z's array) and the
    module's C see it. The language gave their old values (3.0, 3.0, 3.0) silently; now each read
    is an error naming the write."""
    src = f"""
    C = [1.0, 2.0]
    def f(x):
        z = x
        alias = z
        z += 10
        c = C
        c *= 3
        return {read} + sum(z)
    """
    with pytest.raises(SourceError) as err:
        grad(src, x=[1.0, 2.0])
    assert err.value.kind == "stale value" and err.value.message.startswith(f"`{name}` was changed at line ")


@pytest.mark.parametrize("x,expect", [(-0.5, 0.0), (0.0, 0.0), (0.5, 1.0), (1.0, 0.0), (2.0, 0.0)])
def test_chained_comparison(x, expect):
    src = """
    def f(x):
        return 1.0 if 0 < x < 1 else 0.0
    """
    assert run(src, x=x).value == expect


def test_chained_comparison_evaluates_the_middle_once_and_short_circuits():
    src = """
    def f(x):
        return 3 < x < 1 < log(-1)
    """
    assert run(src, x=5.0).value is False


def test_and_or_not_return_values_and_short_circuit():
    src = """
    def f(x):
        a = x > 0 and sqrt(x)
        b = x or 7
        c = not (x > 0)
        return (a if x > 0 else 0.0) + b + (1 if c else 0)
    """
    r = grad(src, x=4.0)
    assert r.value == 2.0 + 4.0
    assert r.gradient["x"] == pytest.approx(0.25 + 1.0)
    r = grad(src, x=0.0)                              # x > 0 is False: sqrt is never evaluated
    assert r.value == 7.0 + 1
    assert r.unconnected == ["x"]


def test_conditional_expression_follows_the_data():
    src = """
    def f(x):
        return x * x if x > 0 else -3 * x
    """
    assert grad(src, x=2.0).gradient["x"] == 4.0
    assert grad(src, x=-2.0).gradient["x"] == -3.0


def test_docstrings_comments_and_helpers_calling_each_other():
    src = '''
    """A module docstring."""
    # a comment
    def is_even(n):
        """Mutual recursion."""
        return 1.0 if n == 0 else is_odd(n - 1)   # trailing comment
    def is_odd(n):
        return 0.0 if n == 0 else is_even(n - 1)
    def f(x):
        return x * is_even(6) + x * x * is_odd(6)
    '''
    r = grad(src, x=3.0)
    assert (r.value, r.gradient["x"]) == (3.0, 1.0)


def test_top_level_constants_and_nested_functions():
    src = """
    SCALE = 2.0
    OFFSET = SCALE * 3
    def f(x):
        def inner(t):
            return SCALE * t + OFFSET + x
        return inner(x) * inner(1.0)
    """
    r = grad(src, x=1.0)
    # inner(x) = 3x + 6, inner(1) = 8 + x; product' = 3(8 + x) + (3x + 6) at x = 1
    assert (r.value, r.gradient["x"]) == (9.0 * 9.0, 27.0 + 9.0)


def test_while_loop_with_break_continue_and_elif():
    src = """
    def f(x):
        i = 0
        total = 0.0
        while True:
            i += 1
            if i > 6:
                break
            elif i % 2 == 0:
                continue
            total += x ** i
        return total
    """
    r = grad(src, x=2.0)                               # i = 1, 3, 5
    assert r.value == 2 + 8 + 32
    assert r.gradient["x"] == 1 + 3 * 4 + 5 * 16


def test_return_inside_loops_leaves_the_function():
    src = """
    def f(x):
        for i in range(100):
            for j in range(100):
                if i * 10 + j > 12:
                    return x * (i * 10 + j)
        return 0.0
    """
    r = grad(src, x=1.0)
    assert r.gradient["x"] == 13.0


def test_grad_builtin_inside_a_program_gives_second_derivatives():
    src = """
    def g(x):
        return x ** 3
    def f(x):
        return grad(g)(x)
    """
    r = grad(src, x=2.0)
    assert (r.value, r.gradient["x"]) == (12.0, 12.0)


def test_any_and_all_builtins():
    src = """
    def f(x):
        if any(x > 2):
            return sum(x)
        if all(x > 0):
            return 2 * sum(x)
        return 3 * sum(x)
    """
    assert run(src, x=[1.0, 3.0]).value == 4.0
    assert run(src, x=[1.0, 2.0]).value == 6.0
    assert run(src, x=[-1.0, 2.0]).value == 3.0


def test_control_flow_signature_records_decisions_and_trip_counts():
    src = """
    def f(x):
        n = 0
        while x < 100:
            x = x * 3
            n += 1
        for i in range(2):
            if x > 200:
                x = x - 1
        return x
    """
    r = run(src, x=5.0)                                # 15, 45, 135: 3 trips; 135 < 200
    assert r.signature == [((4, 11), 3), ((8, 12), False), ((8, 12), False), ((7, 14), 2)]


def test_steps_count_statements_and_loop_trips():
    src = """
    def f(x):
        for i in range(10):
            x = x + 1
        return x
    """
    # the def (1), then the call: for and return (2), 10 trips and 10 body statements
    assert run(src, x=0.0).steps == 1 + 2 + 10 + 10


# ---- scripts and --fn ---------------------------------------------------------------------------

def test_script_inputs_are_its_free_variables_and_output_its_last_expression():
    src = """
    k = 3.0
    y = k * x + z
    y * y
    """
    t = load(src)
    assert (t.kind, t.inputs) == ("script", ["x", "z"])
    r = grad(src, x=1.0, z=2.0)
    assert (r.value, r.gradient["x"], r.gradient["z"]) == (25.0, 30.0, 10.0)
    r = grad(src, of="y", x=1.0, z=2.0)
    assert (r.value, r.gradient["x"], r.gradient["z"]) == (5.0, 3.0, 1.0)


def test_script_errors():
    with pytest.raises(SourceError, match="no expression statement"):
        load("y = 2 * x\n")
    with pytest.raises(SourceError, match="assigns no variable 'q'"):
        load("y = 2 * x\ny\n", of="q")
    with pytest.raises(SourceError, match="defines no functions"):
        load("y = 2 * x\ny\n", fn="g")


def test_function_selection():
    src = """
    def helper(x):
        return 2 * x
    def g(x):
        return helper(x) ** 2
    """
    with pytest.raises(SourceError) as info:
        load(src)
    assert info.value.kind == "ambiguous function"
    assert "helper, g" in info.value.message and "fn=" in info.value.spelled()[1]
    assert grad(src, fn="g", x=1.0).gradient["x"] == 8.0
    assert grad(src, fn="helper", x=1.0).gradient["x"] == 2.0
    with pytest.raises(SourceError, match="defines no function 'nope'.*helper, g"):
        load(src, fn="nope")
    assert load(textwrap.dedent(src) + "def f(x):\n    return x\n").fn_name == "f"            # f wins
    assert load("def only(y):\n    return y\n").fn_name == "only"            # the only one


def test_wrong_inputs_are_named():
    with pytest.raises(SourceError, match="no value for a"):
        grad(sample("control.py"))
    with pytest.raises(SourceError, match="no input 'b'"):
        grad(sample("control.py"), a=1.0, b=2.0)


def test_floor_division_and_modulo_follow_python_and_ieee_at_zero():
    src = """
    def f(x, y):
        return x // y + 10 * (x % y)
    """
    r = grad(src, x=7.5, y=2.0)
    assert r.value == 7.5 // 2.0 + 10 * (7.5 % 2.0)
    assert (r.gradient["x"], r.gradient["y"]) == (10.0, -10.0 * (7.5 // 2.0))
    assert run(src, x=-7.5, y=2.0).value == -7.5 // 2.0 + 10 * (-7.5 % 2.0)
    assert math.isnan(run(src, x=1.0, y=0.0).value)                 # x % 0 is nan, as in numpy
    assert run("def f(x):\n    return x // 0\n", x=1.0).value == math.inf


def test_floor_of_non_finite_values_follows_numpy():
    src = "def f(x):\n    return floor(x) + floor(-x)\n"
    assert math.isnan(run(src, x=math.inf).value)
    assert run("def f(x):\n    return floor(x)\n", x=-math.inf).value == -math.inf


def test_pass_does_nothing_in_a_body_a_branch_and_a_loop():
    """`pass` as Python runs it: an empty branch, an empty loop body, a function whose first
    statement it is."""
    src = """
        def f(x):
            pass
            y = x
            if x > 0:
                pass
            else:
                y = -x
            for i in range(3):
                pass
            return y * y * x
        """
    r = grad(src, x=1.5)
    assert (r.value, r.gradient["x"]) == (1.5 ** 3, 3 * 1.5 ** 2)
    r = grad(src, x=-2.0)
    assert (r.value, r.gradient["x"]) == (-8.0, 12.0)


@pytest.mark.parametrize("src, fn, of, place", [
    ("def f(x):\n    if x > 0:\n        y = x\n    return sin(y)\n", "f", None, ("y", 4, 16)),       # a local
    ("def f(x):\n    if x > 0:\n        y = x\n    return y * 2.0\n", "f", None, ("y", 4, 12)),     # an operand
    ("def f(x):\n    if x > 0:\n        y = x\n    return 2.0 * y\n", "f", None, ("y", 4, 18)),
    ("def f(x):\n    def g():\n        return sin(z)\n    r = g()\n    z = x\n    return r\n", "f", None,
     ("z", 3, 20)),                                                                                    # a free name
    ("y = sin(z)\nz = x\n", None, "y", ("z", 1, 9)),                                                  # a global
    ("y = z * x\nz = x\n", None, "y", ("z", 1, 5)),
])
def test_a_name_read_before_the_run_binds_it_is_located(src, fn, of, place):
    """Python's UnboundLocalError/NameError as the language says it (lang/errors.unassigned, the
    one message for every way a name is read), at the name."""
    with pytest.raises(SourceError) as info:
        api.grad(None, at={"x": -1.0}, target=api.load(src, fn, of, filename="prog.py"))
    name, line, column = place
    assert info.value.message == f"`{name}` is used before it is assigned"
    assert (info.value.span.line, info.value.span.column) == (line, column)
