"""NaN provenance: a nan or inf in the value or the gradient is traced to the first node where it
appeared, in the forward or the reverse sweep, with its source place."""
import json

from autodiff.cli.render import common as render
from autodiff.cli.main import invoke
from autodiff.engine import api
from at_syntax import parse_at


def cli(capsys, *args):
    render._consoles.clear()
    code = invoke(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def brief(findings):
    return [(f["sweep"], f["node"], f["op"], f["value"], f["line"], f["column"]) for f in findings]


def test_log_of_negative_times_zero_is_traced_to_the_log():
    r = api.grad("log(x) * 0", at={"x": -1})
    assert r.value != r.value and r.gradient["x"] == 0.0         # the gradient stays finite
    assert brief(r.nonfinite) == [("forward", "n2", "log", "nan", 1, 1)]
    assert "n2 = log(n1) at line 1, column 1 (`log(x)`)" in r.nonfinite[0]["message"]


def test_sqrt_at_zero_has_an_infinite_adjoint_from_the_sqrt_rule():
    r = api.grad("sqrt(x) + 1", at={"x": 0})
    assert r.value == 1.0 and r.gradient["x"] == float("inf")
    assert brief(r.nonfinite) == [("reverse", "n2", "sqrt", "inf", 1, 1)]
    msg = r.nonfinite[0]["message"]
    assert "∂f/∂n1 (∂f/∂x)" in msg and "sqrt'(0) = +inf" in msg


def test_program_line_and_both_sweeps(tmp_path):
    prog = tmp_path / "p.py"
    prog.write_text("def f(x):\n    a = x * 2\n    b = log(a - 4)\n    return b * x\n")
    r = api.grad(None, {"x": 2.0}, target=api.load(str(prog)))
    assert r.value == float("-inf")
    found = brief(r.nonfinite)
    assert found[0] == ("forward", "n6", "log", "-inf", 3, 9)   # n2, n4: the constants 2, 4
    assert found[1][0] == "reverse" and found[1][4] == 4            # b * x sends -inf back to x


def test_finite_results_have_no_findings():
    r = api.grad("log(x) * y", at={"x": 2, "y": 3})
    assert r.nonfinite == [] and r.tape is None                      # the happy path keeps no tape


def test_array_element_and_a_constant():
    r = api.grad("sum(log(x))", at={"x": parse_at(["x=[1, -1, 2]"])["x"]})
    assert brief(r.nonfinite)[0] == ("forward", "n2", "log", "nan", 1, 5)
    r = api.grad("x * log(-1)", at={"x": 1})
    assert "its constant argument n2 is already nan" in r.nonfinite[0]["message"]


def test_an_input_that_is_already_nan():
    r = api.grad("x + 1", at={"x": float("nan")})
    assert r.nonfinite[0]["message"] == "the input x is nan"


def test_run_reports_the_forward_origin(capsys):
    r = api.evaluate("exp(x) * 0 + 1 / (x - 1000)", at={"x": 1000})
    assert brief(r.nonfinite) == [("forward", "n2", "exp", "inf", 1, 1)]
    code, out, _ = cli(capsys, "run", "log(x) * 0", "--at", "x=-1")
    assert code == 0 and "note: nan first appeared in the forward sweep at n2 = log(n1)" in out


def test_cli_notes_and_json(capsys):
    code, out, _ = cli(capsys, "grad", "sqrt(x)", "--at", "x=0")
    assert code == 0 and "note: inf first appeared in the reverse sweep" in out
    code, out, _ = cli(capsys, "grad", "log(x) * 0", "--at", "x=-1", "--json")
    doc = json.loads(out)
    assert doc["value"] == "nan"
    assert [(f["sweep"], f["node"], f["line"], f["column"]) for f in doc["nonfinite"]] == [("forward", "n2", 1, 1)]
    assert any("log(n1)" in n for n in doc["notes"])


# ---- jacobian and hessian report it as grad does (issue 13, item 9) -----------------------------

def test_jacobian_names_the_row_and_the_rule_in_both_modes():
    for mode in ("reverse", "forward"):
        r = api.jacobian("[x*y, sqrt(x)]", at={"x": 0.0, "y": 1.0}, mode=mode)
        assert brief(r.nonfinite) == [("reverse", "n4", "sqrt", "inf", 1, 7)], mode
        assert "∂f[1]/∂n1 (∂f[1]/∂x)" in r.nonfinite[0]["message"]
    assert api.jacobian("[x*y, sqrt(x)]", at={"x": 1.0, "y": 1.0}).nonfinite == []


def test_jacobian_traces_a_value_that_is_not_finite_to_the_forward_sweep():
    r = api.jacobian("[x, log(x - 1)]", at={"x": 1.0})
    assert brief(r.nonfinite) == [("forward", "n4", "log", "-inf", 1, 5), ("reverse", "n4", "log", "inf", 1, 5)]


def test_hessian_traces_its_own_row_through_the_gradient_sweep():
    r = api.hessian("x**1.5 + y*y", at={"x": 0.0, "y": 1.0})
    assert r.gradient["x"] == 0.0 and r.hessian["x"]["x"] == float("inf")      # only the Hessian
    assert [(f["sweep"], f["value"], f["line"]) for f in r.nonfinite] == [("reverse", "inf", 1)]
    assert "∂(∂f/∂x)/∂n1 (∂(∂f/∂x)/∂x)" in r.nonfinite[0]["message"]
    for method in ("forward-over-reverse", "reverse-over-reverse"):
        r = api.hessian("log(x) + y", at={"x": 0.0, "y": 1.0}, method=method)
        assert [f["sweep"] for f in r.nonfinite] == ["forward", "reverse"]
        assert "log(n1) at line 1, column 1" in r.nonfinite[0]["message"]
    assert api.hessian("x*x*y", at={"x": 1.0, "y": 2.0}).nonfinite == []


def test_jacobian_and_hessian_json_and_notes_use_grads_key(capsys):
    for args in (["jacobian", "[x*y, sqrt(x)]", "--at", "x=0,y=1"], ["hessian", "x**1.5 + y*y", "--at", "x=0,y=1"]):
        code, out, _ = cli(capsys, *args)
        assert code == 0 and "note: inf first appeared in the reverse sweep" in out
        code, out, _ = cli(capsys, *args, "--json")
        doc = json.loads(out)
        assert code == 0 and [f["sweep"] for f in doc["nonfinite"]] == ["reverse"]
        assert doc["nonfinite"][0]["message"] in doc["notes"]


def test_a_diagnosis_leaves_the_kinks_of_the_result_alone():
    r = api.jacobian("[abs(x), sqrt(x)]", at={"x": 0.0})
    assert r.nonfinite and [k[0] for k in r.kinks] == ["abs", "sqrt"]


def test_the_word_for_a_complex_value_reads_both_parts():
    """A complex array whose imaginary part is nan (its real part finite) is 'nan', not '-inf': the
    word was read from the values cast to float, which drops the imaginary part."""
    import numpy as np
    from autodiff.engine.core import backend
    from autodiff.engine.views.provenance import _word
    backend.np()                              # the backend's numpy loaded, as in a run over arrays
    assert _word(np.array([1.0 + 1j, complex(2.0, float("nan"))])) == "nan"
    assert _word(np.array([complex(1.0, float("inf"))])) == "inf"
    assert _word(np.array([complex(-float("inf"), 1.0)])) == "-inf"
