"""Checks that tell the truth (issue 13, items 1-2): hand formulas are judged against AD in every
mode, and a run through stop_gradient/detach gets the `detached` verdict (warned, not failed)."""
import json
import os

import numpy as np

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.files import parse_text
from autodiff.engine.checks.gradient import check_gradient
from autodiff.engine.checks.runner import run_case

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "samples", "checks")


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


DETACH_CASE = """
[[case]]
name = "detaching u = x*x"
f = "sum(stop_gradient(x*x) * x)"
at = { x = "arange(4.0)" }
grad = { x = "x*x" }
"""


def test_a_right_hand_formula_passes_in_fast_mode_with_every_seed():
    case, = parse_text(DETACH_CASE)
    for seed in range(8):
        result = run_case(case, mode="fast", seed=seed)
        assert not result.failed, result.message
        assert result.verdict == "detached"


def test_a_wrong_hand_formula_fails_in_fast_mode_against_ad():
    case, = parse_text(DETACH_CASE.replace('"x*x" }', '"x*x + 1" }'))
    result = run_case(case, mode="fast", seed=3)
    assert result.failed
    assert any("vs AD" in row["reason"] for row in result.rows)


def test_the_shipped_samples_pass_in_fast_mode(capsys):
    files = sorted(os.path.join(SAMPLES, f) for f in os.listdir(SAMPLES) if f.endswith(".toml"))
    code, out, _ = cli(capsys, "check", *files, "--check", "fast")
    assert code == 0, out
    assert "detached" in out


def test_fast_hand_check_compares_every_entry_with_ad():
    x = np.linspace(-1, 1, 5)
    report = check_gradient("sum(x**2)", at={"x": x}, grad={"x": "2*x"}, mode="fast", seed=1)
    assert report.passed and report.full is not None and report.full.reference == "AD"
    assert len(report.rows) == 5


def test_fd_through_stop_gradient_is_detached_and_names_the_place():
    report = check_gradient("sum(detach(x*x)*x)", at={"x": np.arange(4.0)})
    verdicts = [row.verdict for row in report.entries]
    assert verdicts == ["pass", "detached", "detached", "detached"]
    assert report.passed and report.detached == ["line 1, column 5"]
    assert "stop_gradient at line 1, column 5" in report.entries[1].reason


def test_stop_gradient_of_a_constant_is_not_noted():
    report = check_gradient("stop_gradient(3.0) * x", at={"x": 2.0})
    assert report.detached == [] and report.verdict == "pass"


def test_a_wrong_gradient_elsewhere_still_fails_without_stop_gradient():
    report = check_gradient("x**3", at={"x": 2.0}, grad={"x": 11.0})
    assert not report.passed


def test_grad_check_cli_warns_detached_and_exits_0(capsys):
    code, out, _ = cli(capsys, "grad", "sum(detach(x*x)*x)", "--at", "x=[0,1,2,3]", "--check")
    assert code == 0
    assert "detached: x[1]" in out and "line 1, column 5" in out
    code, out, _ = cli(capsys, "grad", "sum(detach(x*x)*x)", "--at", "x=[0,1,2,3]", "--check", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["check"]["passed"] and doc["check"]["detached"] == ["line 1, column 5"]


def test_jacobian_and_hessian_checks_through_detach_are_detached_not_failed(capsys):
    for args in (["jacobian", "detach(x*x)*x", "--at", "x=[1,2]", "--check"],
                 ["hessian", "sum(detach(x*x)*x)", "--at", "x=[1,2]", "--check"],
                 ["hessian", "sum(detach(x*x)*x)", "--at", "x=[1,2]", "--check", "fast", "--seed", "1"]):
        code, out, _ = cli(capsys, *args, "--json")
        doc = json.loads(out)
        assert code == 0 and doc["check"]["passed"], args
        assert doc["check"]["verdict"] == "detached" and doc["check"]["detached"], args
