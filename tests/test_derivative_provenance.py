"""NaN provenance for `derivative` (issue 13, item 9): the first order whose derivative (or the
value) is not finite is traced to the first node where a nan/inf appeared, as grad's is."""
import json

from autodiff.engine import api
from autodiff.engine.views import provenance_derivatives
from test_nan_provenance import brief, cli          # the same findings, read the same way


def test_second_order_of_sqrt_at_zero_names_the_rule_recorded_by_the_first_sweep():
    r = api.derivatives("sqrt(x)", at={"x": 0}, order=2)
    assert r.derivatives == [float("inf"), float("-inf")]
    assert brief(r.nonfinite) == [("forward", "n4", "div", "inf", 1, 1)]     # sqrt's rule 0.5 / ans
    assert "the sweep that gave f' (recorded on the tape swept for f'')" in r.nonfinite[0]["message"]
    assert "(`sqrt(x)`)" in r.nonfinite[0]["message"]


def test_the_last_order_is_swept_again_as_grad_sweeps():
    r = api.derivatives("sqrt(x) + 1", at={"x": 0}, order=1)
    assert brief(r.nonfinite) == [("reverse", "n2", "sqrt", "inf", 1, 1)]
    assert "∂f/∂n1 (∂f/∂x)" in r.nonfinite[0]["message"] and "sqrt'(0) = +inf" in r.nonfinite[0]["message"]
    assert r.nonfinite == api.grad("sqrt(x) + 1", at={"x": 0}).nonfinite


def test_a_nan_that_only_boxed_adjoints_make_is_found():
    # f' = 3x²·sqrt(x) + x³·(0.5/sqrt(x)): at 0 the sweeps under outer tapes keep 0 * inf = nan
    # (a boxed zero is never masked). f' and f'' are 0 (each recomputed alone, as grad gives f':
    # higher.orders_as_alone); f''' (truly 0) is that nan
    r = api.derivatives("x**3*sqrt(x)", at={"x": 0}, order=4)
    assert r.derivatives[:2] == [0.0, 0.0] and r.derivatives[2] != r.derivatives[2]
    assert brief(r.nonfinite)[0][:2] == ("forward", "n10") and brief(r.nonfinite)[0][4:] == (1, 6)
    assert "the sweep that gave f'" in r.nonfinite[0]["message"]


def test_a_value_that_is_not_finite_is_traced_in_f():
    r = api.derivatives("log(x)", at={"x": 0}, order=3)
    assert brief(r.nonfinite)[0] == ("forward", "n2", "log", "-inf", 1, 1)
    assert r.nonfinite[1]["sweep"] == "reverse"


def test_forward_mode_traces_the_dual_pass():
    r = api.derivatives("sqrt(x)", at={"x": 0}, order=2, method="forward")
    assert brief(r.nonfinite) == [("forward", "n2", "sqrt", "inf", 1, 1)]
    assert "in the dual pass (nested dual numbers), in the f' coefficient" in r.nonfinite[0]["message"]
    r = api.derivatives("log(x)", at={"x": -1}, order=2, method="forward")
    assert brief(r.nonfinite) == [("forward", "n2", "log", "nan", 1, 1)]


def test_a_partial_derivative_holds_the_other_inputs():
    r = api.derivatives("x * sqrt(y)", at={"x": 2, "y": 0}, order=2, wrt="y")
    assert r.nonfinite and r.nonfinite[0]["line"] == 1 and r.nonfinite[0]["column"] == 5


def test_finite_runs_pay_one_check_per_order(monkeypatch):
    calls = []
    real = provenance_derivatives.not_finite
    monkeypatch.setattr(provenance_derivatives, "not_finite", lambda v: calls.append(v) or real(v))
    r = api.derivatives("sin(x)", at={"x": 0.5}, order=4)
    assert r.nonfinite == [] and len(calls) == 5                    # the value and f', ..., f''''


def test_a_failed_diagnosis_is_not_an_error(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(provenance_derivatives, "record_nested", broken)
    r = api.derivatives("sqrt(x)", at={"x": 0}, order=2)
    assert r.derivatives[0] == float("inf") and r.nonfinite == []


def test_cli_notes_and_json(capsys):
    code, out, _ = cli(capsys, "derivative", "sqrt(x)", "--at", "x=0", "-n", "2")
    assert code == 0
    assert "the first at order 1" in out
    assert "inf first appeared in the sweep that gave f'" in " ".join(out.split())
    code, out, _ = cli(capsys, "derivative", "sqrt(x)", "--at", "x=0", "-n", "2", "--json")
    assert code == 0 and brief(json.loads(out)["nonfinite"]) == [("forward", "n4", "div", "inf", 1, 1)]
    code, out, _ = cli(capsys, "derivative", "sin(x)", "--at", "x=0", "-n", "2", "--json")
    assert json.loads(out)["nonfinite"] == []
    code, out, _ = cli(capsys, "derivative", "sqrt(x)", "--at", "x=0", "-n", "2", "--explain", "--json")
    assert code == 0 and json.loads(out)["nonfinite"][0]["op"] == "div"
