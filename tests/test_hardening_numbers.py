"""Issue 16, honest numbers: comparison dtype, nan through the scalar fast path, forward mode's
zero tangents, symmetric Hessians at special points, Python's % and //, refused non-numbers."""
import math
import os

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.parser.errors import SourceError


def test_comparison_mask_takes_the_run_dtype():
    r = api.grad("exp(x > 0) * x", at={"x": [1.0, 2.0]})
    assert np.asarray(r.value).tolist() == [math.e, 2 * math.e]
    r32 = api.evaluate("exp(x > 0) * x", at={"x": [1.0, 2.0]}, dtype_name="float32")
    assert np.asarray(r32.value).dtype == np.float32
    assert api.evaluate("floor(x > 1)", at={"x": [2.0, 0.0]}).value.dtype == np.float64
    assert api.evaluate("floor(x > 1)", at={"x": 2.0}).value == 1.0


@pytest.mark.parametrize("source", ["maximum(x, 0)", "maximum(0, x)", "minimum(x, 0)", "minimum(0, x)",
                                    "relu(x)", "sign(x)", "abs(x)"])
def test_nan_propagates_on_the_scalar_fast_path_as_numpy(source):
    scalar = api.evaluate(source, at={"x": math.nan}).value
    assert math.isnan(scalar)
    array = api.evaluate(source, at={"x": [math.nan]}).value
    assert np.isnan(array).all()
    if source != "sign(x)":
        assert math.isnan(api.grad(source, at={"x": math.nan}).gradient["x"])
        assert np.isnan(api.grad(source, at={"x": [math.nan]}).gradient["x"]).all()


def test_nan_keeps_ordinary_values_elsewhere():
    assert api.evaluate("[maximum(1, 0), minimum(1, 0), relu(-2), sign(-3)]").value.tolist() == [1, 0, 0, -1]
    assert api.grad("maximum(x, 0) + relu(x)", at={"x": 2.0}).gradient["x"] == 2.0
    assert api.grad("maximum(x, x)", at={"x": 2.0}).gradient["x"] == 1.0


@pytest.mark.parametrize("source, at", [
    ("sqrt(x)", {"x": [4.0, -1.0]}),
    ("log(x) + x", {"x": [1.0, 0.0, -2.0]}),
    ("1/x + x*y", {"x": [0.0, 1.0], "y": [math.inf, 2.0]}),
    ("x ** y", {"x": [4.0, -1.0], "y": [0.5, 0.5]}),
    ("where(x > 0, sqrt(x), 0)", {"x": [4.0, -1.0]}),
    ("sin(x)", {"x": [1.0, math.nan]}),
])
def test_forward_mode_keeps_other_entries_nan_out(source, at):
    reverse = api.grad(source, at=at)
    forward = api.grad(source, at=at, mode="forward")
    for name in at:
        np.testing.assert_array_equal(np.asarray(forward.gradient[name]), np.asarray(reverse.gradient[name]))


def test_sqrt_forward_matches_reverse_and_jax():
    g = api.grad("sqrt(x)", at={"x": [4.0, -1.0]}, mode="forward").gradient["x"]
    assert g[0] == 0.25 and math.isnan(g[1])


# Each binary rule at its special points: zero base, zero exponent, ties, zero divisor...
BINARY_POINTS = [
    ("x ** y", {"x": 4.0, "y": 0.0}), ("x ** y", {"x": 0.5, "y": 0.0}), ("x ** y", {"x": 2.0, "y": 1.0}),
    ("x ** y", {"x": 3.0, "y": 2.0}), ("x * y", {"x": 0.0, "y": 0.0}), ("x / y", {"x": 0.0, "y": 2.0}),
    ("x + y", {"x": 1.0, "y": 1.0}), ("x - y", {"x": 1.0, "y": 1.0}),
    ("maximum(x, y) * x", {"x": 1.0, "y": 1.0}), ("minimum(x, y) * y", {"x": 1.0, "y": 1.0}),
    ("x % y * x", {"x": 1.5, "y": 0.5}), ("where(x > y, x * y, y * y)", {"x": 1.0, "y": 1.0}),
    ("dot(x, y) * x", {"x": 2.0, "y": 3.0}),
]


@pytest.mark.parametrize("method", ["forward-over-reverse", "reverse-over-reverse"])
@pytest.mark.parametrize("source, at", BINARY_POINTS)
def test_every_binary_rule_has_a_symmetric_hessian(source, at, method):
    h = api.hessian(source, at=at, method=method).hessian
    assert float(h["x"]["y"]) == pytest.approx(float(h["y"]["x"]), rel=1e-12, abs=1e-15)


def test_pow_mixed_partial_at_zero_exponent_is_one_over_x():
    for method in ("forward-over-reverse", "reverse-over-reverse"):
        h = api.hessian("x ** y", at={"x": 4.0, "y": 0.0}, method=method).hessian
        assert float(h["x"]["y"]) == 0.25 and float(h["y"]["x"]) == 0.25
    assert float(api.hessian("x ** y", at={"x": 0.0, "y": 2.0}).hessian["x"]["x"]) == 2.0


def test_mod_and_floordiv_give_pythons_values():
    values = api.evaluate("[1 % 0.1, 1 // 1e-8, -7 % 3, 7 % -3, 5.5 // 2]").value.tolist()
    assert values == [1 % 0.1, 1 // 1e-8, -7 % 3, 7 % -3, 5.5 // 2]
    assert api.evaluate("x % 0.1", at={"x": [1.0, 2.0]}).value.tolist() == [1 % 0.1, 2 % 0.1]
    r = api.grad("x % y", at={"x": 1.0, "y": 0.1})
    assert r.value == 1 % 0.1 and r.gradient == {"x": 1.0, "y": -(1 // 0.1)}
    assert math.isnan(api.evaluate("1 % 0").value) and api.evaluate("1 // 0").value == math.inf


@pytest.mark.parametrize("source, at", [("transpose(range(3))", {}), ("sin(range(2))", {})])
def test_builtins_refuse_ranges(source, at):
    with pytest.raises(SourceError, match="takes numbers or arrays"):
        api.evaluate(source, at=at)


def test_builtins_read_tuples_as_numpy_does():
    # (issue 27 item 18: a tuple is the array numpy reads it as, as in every operator)
    assert api.evaluate("maximum(A, (1, 2))", at={"A": [3.0, 0.0]}).value.tolist() == [3.0, 2.0]
    assert api.evaluate("sin((1, 2))").value.tolist() == np.sin((1.0, 2.0)).tolist()


def test_grad_of_a_comparison_value_is_a_number():
    assert api.evaluate("grad(abs)(floor(x > 1))", at={"x": 2.0}).value == 1.0
    assert api.evaluate("grad(abs)(x > 1)", at={"x": 2.0}).value == 1.0


def test_a_bare_path_with_a_slash_is_an_expression(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("x")
    (tmp_path / "x" / "y").write_text("def f(a):\n    return a\n")
    assert api.evaluate("x/y", at={"x": 6.0, "y": 2.0}).value == 3.0
    assert api.looks_like_file("./x/y")
    assert not api.looks_like_file("x/y")


def test_kink_notes_only_for_traced_values():
    assert api.grad("x + sum(maximum(arange(3.0) - 1, 0))", at={"x": 1.0}).kinks == []
    kinks = api.grad("maximum(x, 0) + abs(x)", at={"x": 0.0}).kinks
    assert [op for op, _, _ in kinks] == ["maximum", "abs"]


# hardening III item 7: one kink convention for every driver. A tie or kink is noted where the op
# that meets it is applied to a traced value (one the requested derivative depends on: an input in
# `wrt`, or a value computed from one), in reverse and forward mode, interpreted or replayed, by
# the API and the CLI alike; a tie among constants or inputs outside `wrt` is not noted.
TRACED_KINKS = [
    ("x*3 + minimum(y, 2.0)", {"x": 1.0, "y": 2.0}, ["x"], []),
    ("x*3 + minimum(y, 2.0)", {"x": 1.0, "y": 2.0}, None, ["minimum"]),
    ("x*3 + minimum(y, 2.0)", {"x": 1.0, "y": 2.0}, ["y"], ["minimum"]),
    ("x * max(y)", {"x": 1.0, "y": [1.0, 1.0]}, ["x"], []),
    ("x * max(y)", {"x": 1.0, "y": [1.0, 1.0]}, None, ["max"]),
    ("maximum(x, 1.0) + max(ones(2))", {"x": 1.0}, None, ["maximum"]),
    ("x * max(ones(2)) + abs(y - 1)", {"x": 1.0, "y": 1.0}, ["x"], []),
    ("x * max(ones(2)) + abs(y - 1)", {"x": 1.0, "y": 1.0}, ["y"], ["abs"]),
    ("sum(sqrt(x) * relu(y))", {"x": [0.0, 4.0], "y": [0.0, 1.0]}, ["y"], ["relu"]),
    ("sum(sqrt(x) * relu(y))", {"x": [0.0, 4.0], "y": [0.0, 1.0]}, ["x"], ["sqrt"]),
    ("x + norm(y * 0.0)", {"x": 1.0, "y": [1.0, 2.0]}, ["x"], []),
    ("x + norm(y * 0.0)", {"x": 1.0, "y": [1.0, 2.0]}, ["y"], ["norm"]),
]


def _ops(kinks) -> list:
    return [op for op, _, _ in kinks]


@pytest.mark.parametrize("source, at, wrt, expected", TRACED_KINKS)
def test_kink_notes_agree_across_modes_calls_and_the_cli(source, at, wrt, expected):
    from test_cli_grad import run_cli
    for call in range(5):                       # interpreted, recorded, replayed (the third on)
        for mode in ("reverse", "forward"):
            assert _ops(api.grad(source, at=at, wrt=wrt, mode=mode).kinks) == expected, (call, mode)
    f = api.function(source)
    for call in range(5):
        assert _ops(f.grad_result(at, wrt).kinks) == expected, call
        assert _ops(f.forward_grad_result(at, wrt).kinks) == expected, call
    for mode in ("reverse", "forward"):
        assert _ops(api.jacobian(source, at=at, wrt=wrt, mode=mode).kinks) == expected, mode
    for method in ("forward-over-reverse", "reverse-over-reverse"):
        assert _ops(api.hessian(source, at=at, wrt=wrt, method=method).kinks) == expected, method
    at_text = ",".join(f"{k}={v}".replace(" ", "") for k, v in at.items())
    args = ["grad", source, "--at", at_text, "--json"] + (["--wrt", ",".join(wrt)] if wrt else [])
    outcome = run_cli(*args)
    assert outcome.code == 0, outcome.err
    assert [k["op"] for k in outcome.json["kinks"]] == expected


SHARED_PLACE = """
def low(t):
    return minimum(t, 2.0)

def f(x, y):
    return low(x) * 3.0 + low(y)
"""


def test_a_replay_tells_a_traced_tie_from_an_untraced_one_at_the_same_place(tmp_path):
    # low(x) and low(y) meet their ties at one place; with wrt x only the first is noted, and a
    # replay, which cannot tell the two notes apart by their place, leaves them to the interpreter
    path = tmp_path / "shared.py"
    path.write_text(SHARED_PLACE)
    f = api.function(str(path))
    for call in range(5):
        kinks = f.grad_result({"x": 2.0, "y": 2.0}, ["x"]).kinks
        assert [(op, span.line) for op, span, _ in kinks] == [("minimum", 3)], call
        assert _ops(f.grad_result({"x": 1.0, "y": 2.0}, ["x"]).kinks) == [], call
        assert _ops(f.grad_result({"x": 2.0, "y": 1.0}, ["x"]).kinks) == ["minimum"], call
        assert _ops(f.grad_result({"x": 2.0, "y": 2.0}).kinks) == ["minimum", "minimum"], call
    assert f.replays > 0


# ---- claims at kinks and ties, and tiny functions ----------------------------------------------

def _check(source, at, grad, mode="full"):
    return api.check_gradient(source, at=at, grad=grad, mode=mode)


def test_a_claim_at_a_tie_must_match_where_f_is_smooth():
    report = _check("maximum(x, x)*3", {"x": 1.0}, {"x": "100"})
    assert not report.passed and report.entries[0].verdict == "fail"
    assert _check("maximum(x, x)*3", {"x": 1.0}, {"x": "3"}).passed


def test_a_claim_at_a_kink_must_lie_between_the_one_sided_slopes():
    inside = _check("abs(x)", {"x": 0.0}, {"x": "0.5"})
    assert inside.passed and inside.entries[0].verdict == "kink"
    outside = _check("abs(x)", {"x": 0.0}, {"x": "2"})
    assert not outside.passed and "outside the one-sided slopes" in outside.entries[0].reason
    assert _check("relu(x)", {"x": 0.0}, {"x": "1"}).passed


def test_atol_does_not_swallow_a_wrong_claim_for_a_tiny_function():
    assert not _check("1e-10*x", {"x": 1.0}, {"x": "0"}).passed
    assert _check("1e-10*x", {"x": 1.0}, {"x": "1e-10"}).passed
    from autodiff.engine.checks.differences import Objective, full_check
    from autodiff.engine.checks.report import tolerance_for
    from autodiff.engine.lang.target import Runner
    objective = Objective(Runner(api.load("1e-10*x*x")))
    rows, _ = full_check(objective, {"x": 1.0}, {"x": 0.0}, tolerance_for("float64", None, None, None), ["x"])
    assert rows[0].verdict == "fail"
    assert api.check_gradient("1e-10*x*x", at={"x": 1.0}).passed


def test_linspace_is_differentiable_in_its_bounds():
    r = api.grad("linspace(0, x, 5)", at={"x": 1.0})
    assert r.gradient["x"] == 2.5 and r.unconnected == []
    assert np.asarray(r.value).tolist() == np.linspace(0, 1, 5).tolist()
    for mode in ("reverse", "forward"):
        assert api.grad("sum(linspace(x, 2*x, 3) ** 2)", at={"x": 1.0}, mode=mode).gradient["x"] == 14.5
    assert api.check_gradient("sum(linspace(x, y, 7) ** 3)", at={"x": 0.3, "y": 1.7}).passed


@pytest.mark.parametrize("source", ["sum(arange(x))", "sum(zeros(x))", "sum(ones((x, 2)))", "sum(linspace(0, 1, x))"])
def test_constructors_refuse_traced_counts_and_shapes(source):
    with pytest.raises(SourceError, match="does not depend smoothly") as err:
        api.grad(source, at={"x": 3.0})
    assert "stop_gradient" in err.value.hint
    assert api.evaluate(source, at={"x": 3.0}).value is not None          # no derivative: fine
    assert api.grad(source.replace("x", "stop_gradient(x)") + " + x", at={"x": 3.0}).gradient["x"] == 1.0


def test_mod_by_a_traced_infinity_keeps_pythons_value():
    for mode in ("reverse", "forward"):
        r = api.grad("1 % y + x % y", at={"x": 2.0, "y": math.inf}, mode=mode)     # found by the fuzz test
        assert r.value == 3.0 and r.gradient == {"x": 1.0, "y": 0.0}
    r = api.grad("x % y", at={"x": [1.0, -1.0, 2.0], "y": [math.inf, math.inf, 0.3]})
    assert np.asarray(r.value).tolist() == [1.0, math.inf, 2.0 % 0.3]


# An untaken where() branch with a non-finite local derivative: reverse mode's adjoint there is
# 0, and 0 times inf or nan stays 0 in every binary rule, as forward mode's zero tangent does.
SPECIAL_X = [0.0, 0.0, math.inf, math.nan, -1.0, 0.0, 2.0]
SPECIAL_Y = [math.inf, 0.0, 0.0, 1.0, 0.5, -1.0, 3.0]
BINARY_RULES = ["x * y", "x / y", "x ** y", "x + y", "x - y", "maximum(x, y)", "minimum(x, y)", "x * log(x) + y"]


@pytest.mark.parametrize("rule", BINARY_RULES)
def test_forward_and_reverse_agree_where_an_untaken_branch_is_not_finite(rule):
    source = f"sum(where(k > 5, {rule}, 0))"
    at = {"x": SPECIAL_X, "y": SPECIAL_Y, "k": list(range(len(SPECIAL_X)))}
    with np.errstate(all="ignore"):
        reverse = api.grad(source, at=at, wrt=["x", "y"])
        forward = api.grad(source, at=at, wrt=["x", "y"], mode="forward")
    for name in ("x", "y"):
        r, f = np.asarray(reverse.gradient[name]), np.asarray(forward.gradient[name])
        np.testing.assert_array_equal(r, f)
        assert (r[:-1] == 0).all()                   # the untaken entries: 0, not nan
    for x, y in zip(SPECIAL_X[:-1], SPECIAL_Y[:-1]):  # the scalar sweep, one point at a time
        scalar = {"x": x, "y": y, "k": 0.0}
        with np.errstate(all="ignore"):
            got = api.grad(f"where(k > 5, {rule}, 0)", at=scalar, wrt=["x", "y"]).gradient
        assert got == {"x": 0.0, "y": 0.0}, (x, y, got)


def test_grad_of_x_log_x_guarded_at_zero_is_zero_there():
    g = api.grad("sum(where(x > 0, x*log(x), 0))", at={"x": [0.0, 1.0]}).gradient["x"]
    assert g.tolist() == [0.0, 1.0]


# An exact zero factor times an inf or nan derivative is 0 in both modes (the strong zero of
# rules/comparisons.tangent_times): reverse mode's adjoint g * a is 0 where a primal factor a is 0,
# and forward mode's term a * t must be too; before, these gave 0 one way and nan the other.
STRONG_ZERO = [("x**3*sqrt(x)", {"x": 0.0}, {"x": 0.0}),
               ("sqrt(0*x)", {"x": 2.0}, {"x": 0.0}),
               ("0*log(x)", {"x": 0.0}, {"x": 0.0}),
               ("maximum(x, 0)*sqrt(x)", {"x": 0.0}, {"x": 0.0}),
               ("sum(x*sqrt(y))", {"x": np.array([0.0, 1.0]), "y": np.array([-1.0, 4.0])},
                {"x": [math.nan, 2.0], "y": [0.0, 0.25]}),
               ("sum(sqrt(x*y))", {"x": np.array([0.0, 1.0]), "y": np.array([1.0, 4.0])},
                {"x": [math.inf, 1.0], "y": [0.0, 0.25]})]


@pytest.mark.parametrize("source,at,expected", STRONG_ZERO, ids=[s for s, _, _ in STRONG_ZERO])
def test_a_zero_factor_times_an_infinite_derivative_is_zero_in_both_modes(source, at, expected):
    for mode in ("reverse", "forward"):
        gradient = api.grad(source, at, mode=mode).gradient
        got = {k: np.asarray(v, dtype=float).tolist() for k, v in gradient.items()}
        assert str(got) == str(expected), (mode, got)


# ---- issue 27 (hardening III) item 20: numpy's floor division and signed zeros -----------------

FLOOR_X = [math.inf, -math.inf, math.nan, 5.0, -5.0, 1.0, -1.0, 0.0, -0.0, 2.0, 7.5]
FLOOR_Y = [2.0, 2.0, 2.0, 2.0, 2.0, 0.1, math.inf, -1.0, 1.0, 0.0, -0.0]


def same_numbers(got, want):
    """Equal as numpy's, nan to nan and the sign of a zero too."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True), (got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)


@pytest.mark.parametrize("source", ["x // y", "floor_divide(x, y)", "x % y", "mod(x, y)", "remainder(x, y)"])
def test_floor_division_and_modulo_are_numpys_for_arrays_and_numbers(source):
    """`u // 2` at ±inf was ±inf (floor of inf / 2; numpy and Python: nan), `x // 0.1` at 1 was 10
    (numpy and Python: 9), and mod(1, 0.1) was 0 (numpy: 0.0999...95)."""
    x, y = np.array(FLOOR_X), np.array(FLOOR_Y)
    numpy_fn = np.floor_divide if "//" in source or "floor" in source else np.mod
    with np.errstate(all="ignore"):
        want = numpy_fn(x, y)
        same_numbers(api.evaluate(source, at={"x": x, "y": y}).value, want)
        for a, b, w in zip(FLOOR_X, FLOOR_Y, want):              # the scalar path: Python floats
            same_numbers(api.evaluate(source, at={"x": a, "y": b}).value, w)
        same_numbers(api.evaluate(source.replace("y", "2"), at={"x": x}).value, numpy_fn(x, 2.0))


@pytest.mark.parametrize("name", ["ceil", "trunc", "rint", "floor", "round"])
def test_integral_functions_keep_the_sign_of_zero(name):
    """ceil(-0.5) was 0.0 (numpy: -0.0): math's integer results lose the sign."""
    points = [-0.5, -0.4, -0.0, 0.0, 0.4, -1.5, 2.5, -2.5, math.inf, -math.inf, math.nan]
    numpy_fn = {"round": np.round}.get(name, getattr(np, name))
    for p in points:
        same_numbers(api.evaluate(f"{name}(x)", at={"x": p}).value, numpy_fn(p))
    same_numbers(api.evaluate(f"{name}(x)", at={"x": np.array(points)}).value, numpy_fn(np.array(points)))
    same_numbers(api.evaluate(f"{name}(-0.5)").value, numpy_fn(-0.5))


def test_modulo_gradients_keep_their_convention():
    """x % y: 1 for x, -floor_divide(x, y) for y, numpy's quotient (at 1 and 0.1: 9, not 10)."""
    for mode in ("reverse", "forward"):
        for source in ("x % y", "mod(x, y)"):
            r = api.grad(source, at={"x": np.array([1.0, -7.0, 2.0]), "y": np.array([0.1, 3.0, math.inf])}, mode=mode)
            assert r.gradient["x"].tolist() == [1.0, 1.0, 1.0], (source, mode)
            assert r.gradient["y"].tolist() == [-9.0, 3.0, 0.0], (source, mode)
        r = api.grad("sum(x // y) + sum(floor_divide(x, y))", at={"x": np.array([1.0, 5.0]), "y": np.array([0.1, 2.0])},
                     mode=mode)
        assert [np.asarray(g).tolist() for g in r.gradient.values()] == [[0.0, 0.0], [0.0, 0.0]], mode
    g = api.grad("fmod(x, y)", at={"x": 1.0, "y": 0.1}).gradient        # fmod's quotient toward 0: 9 too
    assert g == {"x": 1.0, "y": -9.0}


@pytest.mark.parametrize("order", ["1", "-1", "inf", "-inf", "'fro'", "'nuc'", "2", "-2"])
@pytest.mark.parametrize("axis", [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)])
def test_a_matrix_norms_axes_are_read_in_the_order_given(order, axis):
    """norm(B, 1, axis=(1, 0)) is numpy's: the row axis first (the axes were sorted, so the
    transposed matrix's norm came back), and 'nuc'/2/-2 over axes other than the last two."""
    import numpy as np
    import autodiff
    B = np.random.default_rng(5).normal(size=(2, 3, 4))      # full rank: distinct singular values
    r = autodiff.grad(f"sum(norm(B, {order}, axis={axis}))", at={"B": B})
    want = np.linalg.norm(B, want_order(order), axis=axis)
    np.testing.assert_allclose(r.value, want.sum(), rtol=1e-13)
    h = 1e-6
    E = np.zeros_like(B)
    E[1, 2, 3] = h
    fd = (np.linalg.norm(B + E, want_order(order), axis=axis).sum()
          - np.linalg.norm(B - E, want_order(order), axis=axis).sum()) / (2 * h)
    np.testing.assert_allclose(r.gradient["B"][1, 2, 3], fd, rtol=1e-6, atol=1e-8)


def want_order(order):
    return {"inf": float("inf"), "-inf": float("-inf"), "'fro'": "fro", "'nuc'": "nuc"}.get(order) or int(order)
