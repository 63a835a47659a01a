"""n-th derivatives (engine/higher.derivatives and `autodiff derivative`) against closed forms."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from autodiff.engine.diff import higher
from autodiff.engine.diff.higher import derivatives, hessian
from autodiff.parser.errors import SourceError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHODS = ("reverse", "forward")


def rel_close(got, want, rtol=1e-12):
    return all(abs(g - w) <= rtol * max(1.0, abs(w)) for g, w in zip(got, want)) and len(got) == len(want)


def exp_x2_derivatives(x, n):
    """f^(k) = p_k(x) e^{x²} with p_0 = 1 and p_{k+1} = p_k' + 2x p_k."""
    P = np.polynomial.Polynomial
    p, out = P([1.0]), []
    for _ in range(n):
        p = p.deriv() + P([0.0, 2.0]) * p
        out.append(p(x) * math.exp(x * x))
    return out


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("x", [0.0, 0.7, -2.3])
def test_sin_to_order_8(method, x):
    r = derivatives("sin(x)", at={"x": x}, order=8, method=method)
    assert r.value == math.sin(x)
    assert rel_close(r.derivatives, [math.sin(x + k * math.pi / 2) for k in range(1, 9)], 1e-15)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("x", [0.0, 0.7, -1.1])
def test_exp_of_x_squared_to_order_8(method, x):
    r = derivatives("exp(x**2)", at={"x": x}, order=8, method=method)
    assert rel_close(r.derivatives, exp_x2_derivatives(x, 8), 1e-13)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("x", [0.0, 1.5, -0.4])
def test_polynomial_derivatives_are_exact_and_vanish_beyond_the_degree(method, x):
    coeffs = [2.0, -3.0, 0.0, 5.0, 1.0, -7.0]            # 2x^5 - 3x^4 + 5x^2 + x - 7
    r = derivatives("2*x**5 - 3*x**4 + 5*x**2 + x - 7", at={"x": x}, order=8, method=method)
    want = [float(np.polyval(np.polyder(coeffs, k), x)) if k <= 5 else 0.0 for k in range(1, 9)]
    assert rel_close(r.derivatives, want, 1e-14)
    assert r.derivatives[5:] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("text,closed", [
    ("log(x)", lambda x, k: (-1) ** (k - 1) * math.factorial(k - 1) / x ** k),
    ("exp(2*x)", lambda x, k: 2 ** k * math.exp(2 * x)),
    ("1/(1 - x)", lambda x, k: math.factorial(k) / (1 - x) ** (k + 1)),
    ("x * exp(x)", lambda x, k: (x + k) * math.exp(x)),
])
def test_more_closed_forms(text, closed):
    r = derivatives(text, at={"x": 0.4}, order=8)
    assert rel_close(r.derivatives, [closed(0.4, k) for k in range(1, 9)], 1e-12)


def test_nested_tapes_and_nested_duals_agree():
    for text in ("tanh(x)", "sqrt(1 + x**2)", "sigmoid(x) * cos(x)"):
        a = derivatives(text, at={"x": 0.3}, order=6, method="reverse")
        b = derivatives(text, at={"x": 0.3}, order=6, method="forward")
        assert rel_close(a.derivatives, b.derivatives, 1e-12)


def test_order_2_is_the_hessian():
    r = derivatives("sin(x) * x**3", at={"x": 0.9}, order=2)
    h = hessian("sin(x) * x**3", at={"x": 0.9})
    assert abs(r.derivatives[0] - h.gradient["x"]) < 1e-14
    assert abs(r.derivatives[1] - h.hessian["x"]["x"]) < 1e-13


def test_tape_sizes_are_reported_per_order_and_do_not_depend_on_n():
    short = derivatives("exp(x**2)", at={"x": 0.5}, order=4)
    long = derivatives("exp(x**2)", at={"x": 0.5}, order=8)
    assert len(long.tape_entries) == 8 and long.tape_entries[:4] == short.tape_entries
    assert all(b > a for a, b in zip(long.tape_entries, long.tape_entries[1:]))
    sine = derivatives("sin(x)", at={"x": 0.5}, order=8)
    # the derivatives of sin stay one term long; those of exp(x**2) swell
    assert sine.tape_entries[-1] < long.tape_entries[-1] / 10


def test_runaway_tapes_stop_with_an_error(monkeypatch):
    monkeypatch.setattr(higher, "MAX_TAPE_ENTRIES", 500)
    with pytest.raises(SourceError) as err:
        derivatives("exp(x**2)", at={"x": 0.5}, order=12)
    assert err.value.kind == "too large" and "order=" in err.value.spelled()[1]


@pytest.mark.parametrize("text,at,kind", [
    ("x * y", {"x": 1.0, "y": 2.0}, "not one input"),
    ("sum(v)", {"v": np.array([1.0, 2.0])}, "not a scalar"),
    ("[x, x]", {"x": 1.0}, "not a scalar"),
    ("3 + 4", {}, "not one input"),
])
def test_user_errors(text, at, kind):
    with pytest.raises(SourceError) as err:
        derivatives(text, at=at, order=2)
    assert err.value.kind == kind


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_cli_json():
    out = _cli("derivative", "sin(x)", "--at", "x=0.5", "--order", "4", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["value"] == math.sin(0.5)
    assert rel_close(doc["derivatives"], [math.cos(0.5), -math.sin(0.5), -math.cos(0.5), math.sin(0.5)], 1e-15)
    assert len(doc["cost"]["tape_entries"]) == 4 and "tape of order k" in doc["cost"]["explanation"]


def test_cli_table_explains_the_cost():
    out = _cli("derivative", "exp(x**2)", "--at", "x=0.7", "-n", "8")
    assert out.returncode == 0, out.stderr
    assert "tape entries" in out.stdout and "records" in out.stdout and "faster than linearly" in out.stdout


@pytest.mark.parametrize("args", [
    ["x * y", "--at", "x=1,y=2"],
    ["sum(v)", "--at", "v=[1,2]"],
    ["sin(x)", "--at", "x=1", "--order", "0"],
])
def test_cli_user_errors_exit_2(args):
    out = _cli("derivative", *args)
    assert out.returncode == 2 and "Traceback" not in out.stderr


def _highest_fitting_order(text):
    """The truth, by brute force: the orders that run, one after another, until one does not."""
    n = 1
    while True:
        try:
            derivatives(text, at={"x": 0.5}, order=n + 1)
        except SourceError:
            return n
        n += 1


@pytest.mark.parametrize("text", ["tanh(x)", "exp(x**2)", "sin(x)*exp(x)"])
def test_the_order_limit_names_the_true_highest_order_whatever_was_asked(monkeypatch, text):
    monkeypatch.setattr(higher, "MAX_TAPE_ENTRIES", 30_000)
    truth = _highest_fitting_order(text)
    for asked in (truth + 1, truth + 4, truth + 15):
        with pytest.raises(SourceError) as err:
            derivatives(text, at={"x": 0.5}, order=asked)
        assert err.value.hint.endswith(f" {truth} or less"), (asked, err.value.hint)
        assert f"the highest order within the limit is {truth}" in err.value.message


def test_the_order_limit_is_found_before_the_sweep_that_cannot_fit(monkeypatch):
    monkeypatch.setattr(higher, "MAX_TAPE_ENTRIES", 30_000)
    swept = []
    real_sweep = higher.sweep

    def counting_sweep(tape, out, seed, target):
        swept.append(len(tape))
        return real_sweep(tape, out, seed, target)
    monkeypatch.setattr(higher, "sweep", counting_sweep)
    with pytest.raises(SourceError):
        derivatives("tanh(x)", at={"x": 0.5}, order=30)
    # order 30 keeps 29 tapes: the first run stops long before its tapes reach the limit
    assert max(swept) < 30_000


def test_an_order_is_the_same_whatever_order_is_asked():
    # x**3*sqrt(x) at 0: f' is 0 by the zero-adjoint convention (as grad gives it); a nested run's
    # inner sweep cannot apply it (its adjoints are boxed), so order 1 is recomputed alone there
    from autodiff.engine import api
    first = [api.derivatives("x**3*sqrt(x)", {"x": 0.0}, order=n).derivatives for n in (1, 2, 3, 4, 5)]
    assert first[0] == [0.0] and api.grad("x**3*sqrt(x)", {"x": 0.0}).gradient["x"] == 0.0
    for n, ders in enumerate(first, 1):
        assert ders[:2] == [0.0, 0.0][:n] and len(ders) == n
        for k in range(3, n):
            assert str(ders[k - 1]) == str(first[k - 1][k - 1])          # nan where -n k gives nan


def test_finite_nested_runs_are_not_rerun(monkeypatch):
    from autodiff.engine.diff import higher
    calls = []
    real = higher._nested_tapes
    monkeypatch.setattr(higher, "_nested_tapes", lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    assert higher.derivatives("sin(x)*exp(x)", {"x": 0.5}, order=4).derivatives[3] != 0
    assert calls == [4]


def test_forward_mode_reaches_the_true_orders_at_a_zero_factor():
    # x**3.5 at 0: the first three derivatives are 0, the fourth +inf, the fifth -inf; nested duals
    # keep exact zeros (the strong zero: a zero primal factor times an inf tangent is 0)
    from autodiff.engine import api
    ders = api.derivatives("x**3*sqrt(x)", {"x": 0.0}, order=5, method="forward").derivatives
    assert ders == [0.0, 0.0, 0.0, math.inf, -math.inf]
