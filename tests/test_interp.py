"""The interpreter: every error of the language with its kind, message and place; the limits;
deep tapes; what the tape keeps."""
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.engine import api
from autodiff.engine.lang.interp import Interpreter
from autodiff.engine.lang.limits import LimitError, Limits
from autodiff.engine.lang.values import RangeValue, truth
from autodiff.engine.core.tape import Shape, Tape, backward
from autodiff.parser.errors import SourceError, option
from autodiff.engine.core import backend

from devices import device, host


def load(src, **kw):
    return api.load(textwrap.dedent(src).lstrip("\n"), filename="prog.py", **kw)


def fail(src, at=None, limits=None, mode="grad"):
    """The SourceError a program raises (at load or at run time)."""
    with pytest.raises(SourceError) as info:
        target = load(src)
        run = api.grad if mode == "grad" else api.evaluate
        run(None, at=at if at is not None else {"x": 2.0}, target=target, limits=limits)
    return info.value


def where(err):
    return (err.span.line, err.span.column) if err.span else None


# ---- constructs outside the language ------------------------------------------------------------

UNSUPPORTED = [
    ("import os\nx + 1\n", "module `os` is not available", (1, 8)),
    ("import numpy as onp\nx + 1\n", "`numpy` may only be bound as np, numpy", (1, 1)),
    ("class A:\n    pass\n", "`class`", (1, 1)),
    ("def f(x):\n    return x.__class__\n", "attribute `.__class__` is not part of the language", (2, 14)),
    ("def f(x):\n    with x:\n        pass\n    return x\n", "`with`", (2, 5)),
    ("def f(x):\n    try:\n        y = x\n    except:\n        y = 0\n    return y\n", "`try`", (2, 5)),
    ("def f(x):\n    global y\n    return x\n", "`global`", (2, 5)),
    ("def f(x):\n    nonlocal y\n    return x\n", "`nonlocal`", (2, 5)),
    ("def f(x):\n    yield x\n", "generators (yield)", (2, 5)),
    # (dict literals are taken since issue 29: tests/test_dicts.py)
    ("def f(x):\n    s = {x}\n    return x\n", "set literals ({a, b}) are not part of the language", (2, 11)),
    ("def f(x):\n    s = {x, 2}\n    return x\n", "set literals ({a, b}) are not part of the language", (2, 11)),
    ("def f(x):\n    return x * 'two'\n", "strings are not part of the language", (2, 16)),
    ("def f(x):\n    return sum(x, \"a\")\n", "strings are not part of the language", (2, 19)),
    ("def f(x):\n    return norm(x, axis='fro')\n", "strings are not part of the language here: 'fro'", (2, 25)),
    ("def f(x):\n    y = [x, 'a']\n    return x\n", "strings are not part of the language here: 'a'", (2, 13)),
    ("def f(x):\n    return einsum(b'i', x)\n", "b-strings are not part of the language", (2, 19)),
    ("def f(x):\n    return x.flat\n", "attribute `.flat` is not part of the language", (2, 14)),
    ("def f(x):\n    return (x + 1).tolist()\n", "attribute `.tolist` is not part of the language", (2, 20)),
    ("def f(x):\n    return x.sum\n", "`.sum` is a method: call it", (2, 14)),
    ("def g(h):\n    return h\n@g\ndef f(x):\n    return x\n", "the decorator `@g` is not part of the language", (3, 1)),
    ("def f(x):\n    x[0][1] = 1\n    return x\n", "item of an item", (2, 5)),
    ("def f(x):\n    x.T = 2\n    return x\n", "assignment to an attribute", (2, 7)),
]


@pytest.mark.parametrize("src,message,at", UNSUPPORTED, ids=[m for _, m, _ in UNSUPPORTED])
def test_constructs_outside_the_subset_are_named_with_their_place(src, message, at):
    err = fail(src)
    assert message in err.message
    assert where(err) == at
    assert err.kind in ("unsupported construct", "syntax error")
    text = err.format()
    assert f"prog.py:{at[0]}:{at[1]}" in text and "^" in text          # location and caret


def test_np_and_math_aliases_are_allowed():
    src = """
    def f(x):
        return np.sin(x) + math.exp(x) + numpy.sqrt(x)
    """
    r = api.grad(None, at={"x": 1.0}, target=load(src))
    assert r.gradient["x"] == pytest.approx(np.cos(1) + np.e + 0.5)


# ---- run-time errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("src,what", [
    ("def f(x):\n    if x > 0:\n        return x\n    return -x\n", (2, 8)),
    ("def f(x):\n    while x > 0:\n        x = x - 1\n    return x\n", (2, 11)),
    ("def f(x):\n    return 1.0 if x else 0.0\n", (2, 19)),
    ("def f(x):\n    return sum(x and x)\n", (2, 16)),
    ("def f(x):\n    return not x\n", (2, 16)),
])
def test_condition_on_an_array_suggests_any_or_all(src, what):
    err = fail(src, at={"x": [1.0, 2.0]})
    assert err.kind == "ambiguous condition"
    assert "shape (2,)" in err.message
    assert "any(" in err.hint and "all(" in err.hint
    assert where(err) == what


def test_condition_on_a_one_element_array_is_fine():
    src = "def f(x):\n    return x * 2 if x > 0 else x\n"
    assert api.evaluate(None, at={"x": [3.0]}, target=load(src)).value.tolist() == [6.0]


def test_unknown_name_is_reported_before_running_with_a_suggestion():
    err = fail("def f(x):\n    total = 0.0\n    return x + totl\n")
    assert (err.kind, where(err)) == ("unknown name", (3, 16))
    assert "`totl` is not defined" in err.message and "`total`" in err.hint
    err = fail("def f(x):\n    return sine(x)\n")
    assert "`sine`" in err.message and "`sin`" in err.hint


def test_name_used_before_assignment():
    src = "def f(x):\n    if x > 0:\n        y = 1\n    return y * x\n"
    assert api.evaluate(None, at={"x": 2.0}, target=load(src)).value == 2.0
    err = fail(src, at={"x": -2.0})
    assert (err.kind, where(err)) == ("unknown name", (4, 12))
    assert "`y` is used before it is assigned" in err.message


@pytest.mark.parametrize("src,message,what", [
    ("def g(a, b):\n    return a\ndef f(x):\n    return g(x)\n", "g() takes 2 arguments but 1 was given", (4, 12)),
    ("def g(a):\n    return a\ndef f(x):\n    return g(x, x, x)\n", "g() takes 1 argument but 3 were given", (4, 12)),
    ("def f(x):\n    return sin(x, x)\n", "sin() takes 1 argument but 2 were given", (2, 12)),
    ("def f(x):\n    return sum()\n", "sum() takes 1 to 2 arguments but 0 were given", (2, 12)),
])
def test_wrong_number_of_arguments(src, message, what):
    err = fail(src)
    assert (err.kind, err.message, where(err)) == ("wrong arguments", message, what)


def test_calling_what_is_not_a_function():
    err = fail("def f(x):\n    y = 3\n    return y(x)\n")
    assert (err.kind, where(err)) == ("type error", (3, 12))
    assert "not a function" in err.message
    assert "constant, not a function" in fail("def f(x):\n    return pi(x)\n").message


@pytest.mark.parametrize("src", [
    "def f(x):\n    return x + [1.0, 2.0, 3.0]\n",
    "def f(x):\n    return sum(x * ones(3))\n",
])
def test_shape_mismatch_names_the_operator(src):
    err = fail(src, at={"x": [1.0, 2.0]})
    assert err.kind == "shape mismatch"
    assert "(2,)" in err.message and "(3,)" in err.message
    assert where(err)[0] == 2
    line = src.splitlines()[1]
    assert line[where(err)[1] - 1] in "+*"                        # the caret is on the operator


def test_matmul_shape_mismatch():
    err = fail("def f(A, x):\n    return sum(A @ x)\n", at={"A": np.ones((2, 3)).tolist(), "x": [1.0, 2.0]})
    assert (err.kind, where(err)) == ("shape mismatch", (2, 18))


@pytest.mark.parametrize("src,kind,fragment", [
    ("def f(x):\n    return x[5]\n", "index error", "index 5 is out of bounds"),
    ("def f(x):\n    return x[-3]\n", "index error", "out of bounds"),
    ("def f(x):\n    return x[0.5]\n", "type error", "whole number"),
    ("def f(x):\n    return x[0][0]\n", "index error", "cannot index a number"),
])
def test_bad_indexing(src, kind, fragment):
    err = fail(src, at={"x": [1.0, 2.0]})
    assert (err.kind, where(err)[0]) == (kind, 2)
    assert fragment in err.message


def test_negative_and_slice_indexing_work():
    src = "def f(x):\n    return x[-1] * sum(x[1:]) + x[0:3:2][1]\n"
    r = api.grad(None, at={"x": [1.0, 2.0, 3.0]}, target=load(src))
    assert r.value == 3.0 * 5.0 + 3.0
    assert r.gradient["x"].tolist() == [0.0, 3.0, 5.0 + 3.0 + 1.0]


def test_grad_of_a_vector_function_inside_a_program():
    err = fail("def g(x):\n    return x * [1.0, 2.0]\ndef f(x):\n    return grad(g)(x)\n")
    assert err.kind == "shape mismatch" and "sum(" in err.hint


# ---- limits -------------------------------------------------------------------------------------

def test_default_limits():
    lim = Limits()
    assert (lim.steps, lim.depth, lim.elements) == (10_000_000, 200, 250_000_000)


@pytest.mark.parametrize("mode", ["run", "grad"])
def test_endless_loop_stops_at_the_step_limit(mode):
    src = "def f(x):\n    while True:\n        x = x + 1\n    return x\n"
    err = fail(src, limits=Limits(steps=20_000), mode=mode)
    assert isinstance(err, LimitError)
    assert (err.kind, where(err)) == ("step limit", (2, 11))
    assert "20,000 steps" in err.message and "Limits(steps=...)" in err.spelled()[1]


def test_a_huge_range_is_not_materialised_and_stops_at_the_step_limit():
    err = fail("def f(x):\n    for i in range(10**15):\n        x = x + i\n    return x\n", limits=Limits(steps=5000))
    assert err.kind == "step limit"


def test_exponential_recursion_stops_at_the_step_limit():
    src = """
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)
    def f(x):
        return x * fib(60)
    """
    assert fail(src, limits=Limits(steps=50_000)).kind == "step limit"


def test_recursion_limit_says_recursion_under_pythons_default_stack():
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)                           # Python's default: the API needs no set-up
    try:
        err = fail("def f(x):\n    return f(x)\n")
    finally:
        sys.setrecursionlimit(old)
    assert isinstance(err, LimitError)
    assert (err.kind, where(err)) == ("recursion limit", (2, 12))
    assert "recursion deeper than 200 calls" in err.message and "Limits(depth=...)" in err.spelled()[1]


def test_recursion_within_the_limit_and_a_raised_limit():
    src = """
    def down(x, n):
        if n == 0:
            return x
        return down(x * 1.0, n - 1) + 0.0
    def f(x):
        return down(x, DEPTH)
    """
    ok = api.grad(None, at={"x": 2.0}, target=load(src.replace("DEPTH", "190")))
    assert ok.gradient["x"] == 1.0
    assert fail(src.replace("DEPTH", "250")).kind == "recursion limit"
    deep = api.grad(None, at={"x": 2.0}, target=load(src.replace("DEPTH", "1000")), limits=Limits(depth=1200))
    assert deep.gradient["x"] == 1.0


def test_interpreter_is_reusable_after_a_recursion_error():
    interp = Interpreter()
    target = load("def f(x):\n    return f(x)\n")
    with pytest.raises(LimitError):
        api.run_target(target, {"x": 1.0}, interp)
    assert interp.depth == 0


@pytest.mark.parametrize("expr", ["zeros(10**12)", "ones(10**6, 10**6)", "arange(1e12)",
                                  "linspace(0, 1, 1e12)", "zeros([10**6, 10**7])"])
def test_huge_arrays_are_refused_before_any_allocation(expr):
    tracemalloc.start()
    try:
        err = fail(f"def f(x):\n    return x + sum({expr})\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.kind == "too large" and option("max_elements") in err.hint
    assert "250,000,000" in err.message
    assert where(err)[0] == 2
    assert peak < 10_000_000                            # nothing near the array was allocated


def test_element_limit_is_the_flag():
    src = "def f(x):\n    return x * sum(zeros(N))\n"
    assert fail(src.replace("N", "2000"), limits=Limits(elements=1000)).kind == "too large"
    ok = api.evaluate(None, at={"x": 1.0}, target=load(src.replace("N", "1000")), limits=Limits(elements=1000))
    assert ok.value == 0.0


@pytest.mark.parametrize("body", [
    "v = arange(1e5)\n    return x + sum(reshape(v, 100000, 1) * v)",
    "v = x * arange(1e5)\n    return sum(reshape(v, 100000, 1) @ reshape(v, 1, 100000))",
    "v = arange(1e5)\n    return x + sum(where(reshape(v, 100000, 1) > 1, v, 0.0))",
])
def test_broadcasting_past_the_element_limit_is_refused(body):
    err = fail(f"def f(x):\n    {body}\n")
    assert err.kind == "too large" and "10,000,000,000 elements" in err.message
    assert where(err)[0] == 3


def test_truth():
    assert truth(1.0, None) is True and truth(0.0, None) is False
    assert truth(np.array([2.0]), None) is True
    with pytest.raises(SourceError, match="neither true nor false"):
        truth(np.array([1.0, 2.0]), None)
    with pytest.raises(SourceError, match="not a number"):
        truth(RangeValue(0, 3, 1), None)


# ---- deep tapes ---------------------------------------------------------------------------------

def test_a_100000_iteration_loop_differentiates_without_recursion_errors():
    src = """
    def f(x):
        y = x
        for i in range(100000):
            y = y * 0.99999 + 0.00001
        return y
    """
    r = api.grad(None, at={"x": 3.0}, target=load(src))
    assert r.tape_length == 1 + 2 * 100000
    assert r.gradient["x"] == pytest.approx(0.99999 ** 100000, rel=1e-9)
    assert r.value == pytest.approx(1 + 2 * 0.99999 ** 100000, rel=1e-9)


def test_a_deep_tape_over_arrays():
    src = """
    def f(x):
        for i in range(20000):
            x = x + 0.5 * x * 0.0001
        return sum(x)
    """
    r = api.grad(None, at={"x": [1.0, 2.0]}, target=load(src))
    np.testing.assert_allclose(r.gradient["x"], [1.00005 ** 20000] * 2, rtol=1e-9)


def _record(src, x):
    """Run f on a watched x; return the tape and the output."""
    tape = Tape()
    interp = Interpreter()
    target = load(src)
    out = api.run_target(target, {"x": tape.watch(device(x))}, interp)
    return tape, out


def test_the_tape_keeps_only_what_the_rules_need():
    src = """
    def f(x):
        y = x + 1.0
        z = y * x
        return sum(exp(z) - z)
    """
    x = np.array([0.5, 1.5, 2.5])
    tape, out = _record(src, x)
    by_prim = {e.prim.name: e for e in tape.entries if e.prim is not None}
    add, mul, exp, sub, total = (by_prim[k] for k in ("add", "mul", "exp", "sub", "sum"))
    for e in (add, sub, total):                       # linear ops keep only shapes
        assert all(isinstance(a, Shape) or isinstance(a, float) for a in e.args)
        assert any(isinstance(a, Shape) and a.shape == (3,) for a in e.args)
        assert e.ans is None
    assert all(isinstance(a, backend.xp().ndarray) for a in mul.args) and mul.ans is None
    assert exp.ans is not None                        # exp' reuses its output
    assert all(e.value is None for e in tape.entries[1:])   # no node values unless asked for
    adj = backward(tape, out, 1.0)
    y = x + 1
    np.testing.assert_allclose(host(adj[0]), (np.exp(y * x) - 1) * (2 * x + 1))
    assert all(e is None for e in tape.entries[1:])   # a non-persistent sweep frees as it goes


def test_scalar_fast_path_records_the_same_entries_as_bind():
    from autodiff.engine.core import ops
    from autodiff.engine.core.tape import bind
    for prim, op in ((ops.add.primitive, ops.add), (ops.sub.primitive, ops.sub), (ops.mul.primitive, ops.mul),
                     (ops.div.primitive, ops.div), (ops.pow.primitive, ops.pow)):
        for args in ((0, 2.0), (3.0, 0), (0, 1)):
            fast, slow = Tape(), Tape()
            fa = [fast.watch(2.5) if a == 0 else fast.watch(1.5) if a == 1 else a for a in args]
            sa = [slow.watch(2.5) if a == 0 else slow.watch(1.5) if a == 1 else a for a in args]
            fo, so = op(*fa), bind(prim, tuple(sa), None)
            assert fo.value == so.value
            fe, se = fast.entries[-1], slow.entries[-1]
            assert (fe.prim, fe.parents, fe.args, fe.ans) == (se.prim, se.parents, se.args, se.ans)


@settings(max_examples=30, deadline=None)
@given(x=st.floats(-3, 3), y=st.floats(-3, 3))
def test_float_and_numpy_scalar_adjoints_agree(x, y):
    """A Python float adjoint and a numpy float64 one give the same adjoints (1/0 included)."""
    from autodiff.engine.core import ops
    results = []
    for seed in (1.0, np.float64(1.0)):
        tape = Tape()
        a, b = tape.watch(x), tape.watch(y)
        out = ops.div(-(a * b - a) + b * 3.0, b) + ops.div(1.0, a - a) * 0.0 + 2.0 - a / 4.0
        adj = backward(tape, out, seed)
        results.append((float(adj[0]), float(adj[1])))
    np.testing.assert_array_equal(results[0], results[1])


def test_second_derivative_through_the_fast_path():
    src = """
    def g(x):
        return x * x * x - 2 * x / (x + 1)
    def f(x):
        return grad(g)(x)
    """
    r = api.grad(None, at={"x": 1.5}, target=load(src))
    assert r.value == pytest.approx(3 * 1.5 ** 2 - 2 / 2.5 ** 2)
    assert r.gradient["x"] == pytest.approx(6 * 1.5 + 4 / 2.5 ** 3)


@pytest.mark.parametrize("src,what,at", [
    ("def f(x):\n    break\n    return x\n", "`break` outside a loop", (2, 5)),
    ("def f(x):\n    if x > 0:\n        continue\n    return x\n", "`continue` outside a loop", (3, 9)),
    ("def f(x):\n    for i in range(3):\n        def g(y):\n            break\n    return x\n",
     "`break` outside a loop", (4, 13)),
])
def test_break_and_continue_outside_a_loop(src, what, at):
    err = fail(src)
    assert (err.kind, err.message, where(err)) == ("syntax error", what, at)


@pytest.mark.parametrize("src,at,fragment", [
    ("def f(x):\n    return sum(x, 5)\n", 2.0, "axis 5 is out of bounds for a number"),
    ("def f(x):\n    return max(x, 1)\n", [1.0, 2.0], "axis 1 is out of bounds for an array of 1 dimension"),
    ("def f(x):\n    return mean(x, -2)\n", [1.0, 2.0], "axis -2 is out of bounds"),
])
def test_reduction_axis_out_of_bounds_is_refused_before_running(src, at, fragment):
    err = fail(src, at={"x": at})
    assert (err.kind, where(err)) == ("index error", (2, 12))
    assert fragment in err.message


def test_a_range_is_not_a_value():
    err = fail("def f(x):\n    return [x, range(2)]\n")
    assert "a list element is a range" in err.message


def test_the_gc_is_restored_after_a_run_and_after_an_error():
    import gc
    ok = load("def f(x):\n    for i in range(100):\n        x = x * 1.5\n    return x\n")
    bad = load("def f(x):\n    while True:\n        x = x + 1\n    return x\n")
    assert gc.isenabled()
    api.grad(None, at={"x": 1.0}, target=ok)
    assert gc.isenabled()
    with pytest.raises(LimitError):
        api.grad(None, at={"x": 1.0}, target=bad, limits=Limits(steps=1000))
    assert gc.isenabled()
    gc.disable()
    try:
        api.grad(None, at={"x": 1.0}, target=ok)
        assert not gc.isenabled()                         # a caller's choice is left as it was
    finally:
        gc.enable()


def test_a_failed_run_frees_its_partial_tape():
    tape = Tape()
    x = tape.watch(1.0)
    target = load("def f(x):\n    while True:\n        x = x * 1.0001\n    return x\n")
    with pytest.raises(LimitError):
        api.run_target(target, {"x": x}, Interpreter(Limits(steps=1000)))
    assert len(tape.entries) == 0


def test_a_long_sum_and_deep_nesting_need_no_deep_stack():
    wide = "def f(x):\n    return " + " + ".join(["x * x"] * 5000) + " - x / 2\n"
    r = api.grad(None, at={"x": 2.0}, target=load(wide))
    assert (r.value, r.gradient["x"]) == (5000 * 4.0 - 1.0, 5000 * 4.0 - 0.5)
    short = "def f(x, y):\n    return x - y + x * y - 3 / x + y\n"
    r = api.grad(None, at={"x": 2.0, "y": 5.0}, target=load(short))
    assert r.value == 2.0 - 5.0 + 10.0 - 1.5 + 5.0
    assert (r.gradient["x"], r.gradient["y"]) == (1 + 5.0 + 3 / 4, -1 + 2.0 + 1)


def test_equal_comparison_of_untraced_values_is_no_kink(tmp_path):
    # a loop counter reaching its bound is not a point where a gradient is cut
    from autodiff.engine.api import grad
    path = tmp_path / "loop.py"
    path.write_text("def f(x):\n    i = 0\n    while i != 3:\n        i = i + 1\n        x = x * 2\n    return x\n")
    result = grad(str(path), at={"x": 1.0})
    assert result.gradient["x"] == 8.0 and result.kinks == []
    traced = grad("x if x >= 1 else -x", at={"x": 1.0})
    assert [k[0] for k in traced.kinks] == ["compare"]


def test_a_bare_word_is_an_expression_even_if_a_file_has_that_name(tmp_path, monkeypatch):
    from autodiff.engine.api import grad
    (tmp_path / "x").write_text("not a program")
    monkeypatch.chdir(tmp_path)
    assert grad("x", at={"x": 2.0}).gradient == {"x": 1.0}
