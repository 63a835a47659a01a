"""engine/checks/higher.py and `jacobian`/`hessian --check`: Jacobian and Hessian checks against
central differences, their verdicts, fast mode, and the `inconclusive` verdict of engine/checks/."""
import copy
import json
import os

import numpy as np
import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine import api
from autodiff.engine.checks.gradient import check_gradient
from autodiff.engine.checks.higher import check_hessian, check_jacobian
from autodiff.engine.diff.forward import jacobian
from autodiff.engine.diff.higher import hessian

HERE = os.path.dirname(__file__)
SOFTMAX = os.path.join(HERE, "..", "samples", "higher", "softmax.py")
ROSENBROCK = os.path.join(HERE, "..", "samples", "higher", "rosenbrock.py")
ROSENBROCK_ND = "sum((1 - x[:-1])**2 + 100*(x[1:] - x[:-1]**2)**2)"


def cli(capsys, *args):
    render._consoles.clear()            # the consoles bind to the stream they first saw
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def jac(source, at, **kw):
    target = api.load(source, kw.pop("fn", None))
    return jacobian(None, at, target=target, **kw), target


def hess(source, at, **kw):
    target = api.load(source, kw.pop("fn", None))
    return hessian(None, at, target=target, **kw), target


def planted(result, field, block, index, delta):
    """A copy of the AD result with one entry of one block moved by `delta` (a wrong AD array)."""
    wrong = copy.deepcopy(result)
    blocks = getattr(wrong, field)
    if isinstance(block, tuple):
        blocks = blocks[block[0]]
        block = block[1]
    a = np.array(blocks[block], dtype=float)
    a[index] += delta
    blocks[block] = a
    return wrong


# ---- Jacobians ---------------------------------------------------------------------------------

def test_softmax_jacobian_check_passes_every_entry():
    z = np.array([1.0, 2.0, 3.0])
    result, target = jac(SOFTMAX, {"z": z}, fn="f")
    report = check_jacobian(result, target)
    assert report.passed and report.verdict == "pass"
    assert [e.label for e in report.entries[:4]] == ["∂f[0]/∂z[0]", "∂f[0]/∂z[1]", "∂f[0]/∂z[2]", "∂f[1]/∂z[0]"]
    assert report.entries[1].index == ("f[0]", "z[1]")
    s = np.exp(z) / np.exp(z).sum()
    exact = np.diag(s) - np.outer(s, s)
    for e, want in zip(report.entries, exact.ravel()):
        assert abs(e.reference - want) <= e.error_estimate + 1e-12
    assert report.evaluations == 1 + 4 * 3


def test_a_wrong_jacobian_entry_fails_and_is_named():
    result, target = jac(SOFTMAX, {"z": np.array([1.0, 2.0, 3.0])}, fn="f")
    wrong = planted(result, "jacobian", "z", (2, 0), 1e-4)
    report = check_jacobian(wrong, target)
    assert not report.passed
    assert [e.label for e in report.failures] == ["∂f[2]/∂z[0]"]
    assert "exceeds the tolerance" in report.failures[0].reason


def test_fast_jacobian_check_finds_a_planted_entry_and_recomputes_in_full():
    x = np.linspace(-1.0, 1.0, 6)
    result, target = jac("tanh(x) * sum(x**2)", {"x": x})
    assert check_jacobian(result, target, mode="fast", seed=11).passed
    wrong = planted(result, "jacobian", "x", (4, 1), 1e-3)
    report = check_jacobian(wrong, target, mode="fast", seed=11)
    assert report.seed == 11 and report.projection.failed
    assert [e.label for e in report.failures] == ["∂f[4]/∂x[1]"]
    assert not report.passed


def test_fast_jacobian_is_reproducible_by_seed():
    result, target = jac("[x*y, sin(x), y**2]", {"x": 0.3, "y": -1.2})
    a = check_jacobian(result, target, mode="fast", seed=5)
    b = check_jacobian(result, target, mode="fast", seed=5)
    assert a.projection.claimed == b.projection.claimed and a.evaluations == 5
    assert check_jacobian(result, target, mode="fast", seed=6).projection.claimed != a.projection.claimed


def test_jacobian_kink_warns_with_both_slopes_and_the_convention():
    result, target = jac("[abs(x), x*y]", {"x": 0.0, "y": 2.0})
    report = check_jacobian(result, target)
    by = {e.label: e for e in report.entries}
    kink = by["∂f[0]/∂x"]
    assert kink.verdict == "kink" and (kink.left, kink.right) == (-1.0, 1.0)
    assert "abs at 0" in kink.reason
    assert by["∂f[1]/∂x"].verdict == "pass" and report.passed


def test_jacobian_branch_warns_for_every_output_of_the_perturbed_input(tmp_path):
    p = tmp_path / "piece.py"
    p.write_text("def f(x, y):\n    if x > 1:\n        return [x * y, y]\n    return [2 * x * y, y]\n")
    result, target = jac(str(p), {"x": 1.0, "y": 3.0}, fn="f")
    report = check_jacobian(result, target)
    verdicts = {e.label: e.verdict for e in report.entries}
    assert verdicts == {"∂f[0]/∂x": "branch", "∂f[1]/∂x": "branch", "∂f[0]/∂y": "pass", "∂f[1]/∂y": "pass"}
    assert "line 2, column 8" in report.entries[0].reason and report.passed


def test_jacobian_non_finite_fails():
    result, target = jac("sqrt(x)", {"x": 0.0})
    report = check_jacobian(result, target)
    assert report.verdict == "non-finite" and not report.passed


# ---- Hessians ----------------------------------------------------------------------------------

def test_rosenbrock_hessian_check_passes():
    result, target = hess(ROSENBROCK, {"x": -1.2, "y": 1.0}, fn="f")
    report = check_hessian(result, target)
    assert report.passed and report.verdict == "pass"
    by = {e.label: e for e in report.entries}
    assert set(by) == {"∂²f/∂x∂x", "∂²f/∂x∂y", "∂²f/∂y∂x", "∂²f/∂y∂y"}
    x, y = -1.2, 1.0
    assert abs(by["∂²f/∂x∂x"].reference - (2 - 400 * (y - 3 * x * x))) <= by["∂²f/∂x∂x"].error_estimate
    assert by["∂²f/∂y∂y"].claimed == 200.0


def test_rosenbrock_in_four_dimensions_zeros_are_not_inconclusive():
    # exact zeros beside entries of ~1000 are resolved to rtol * 1000, not to atol
    result, target = hess(ROSENBROCK_ND, {"x": np.array([1.2, 0.7, -0.3, 2.0])})
    report = check_hessian(result, target)
    assert len(report.entries) == 16 and report.verdict == "pass"
    assert report.entries[2].label == "∂²f/∂x[0]∂x[2]" and report.entries[2].index == ("x[0]", "x[2]")


def test_a_wrong_hessian_entry_fails_and_is_named_in_full_and_fast_mode():
    result, target = hess(ROSENBROCK_ND, {"x": np.array([1.2, 0.7, -0.3, 2.0])})
    slightly = planted(result, "hessian", ("x", "x"), (1, 2), 1e-3)     # H[1,2] only, not H[2,1]
    full = check_hessian(slightly, target)
    assert [e.label for e in full.failures] == ["∂²f/∂x[1]∂x[2]"]
    wrong = planted(result, "hessian", ("x", "x"), (1, 2), 0.5)        # one projection sees less finely
    fast = check_hessian(wrong, target, mode="fast", seed=3)
    assert fast.projection.failed and [e.label for e in fast.failures] == ["∂²f/∂x[1]∂x[2]"]
    assert check_hessian(result, target, mode="fast", seed=3).passed


def test_hessian_kink_of_the_gradient_warns():
    result, target = hess("abs(x) * x", {"x": 0.0})
    row, = check_hessian(result, target).entries
    assert row.verdict == "kink" and (row.left, row.right) == (-2.0, 2.0)


def test_hessian_float32_passes_with_float32_tolerances():
    result, target = hess("sum(x**3) + x[0]*x[1]", {"x": np.array([1.0, 2.0], dtype=np.float32)},
                          dtype_name="float32")
    report = check_hessian(result, target, dtype="float32")
    assert report.passed and report.tolerance.rtol == 1e-4


# ---- inconclusive --------------------------------------------------------------------------------

def test_rounding_swamped_difference_is_inconclusive_not_pass():
    report = check_gradient("1e8 + x", at={"x": 1.0})
    row, = report.entries
    assert row.verdict == "inconclusive" and report.passed
    assert row.error_estimate > 100 * row.tolerance and "rounding" in row.reason


def test_too_large_a_step_is_inconclusive_and_would_hide_a_wrong_gradient():
    wrong = {"x": "3*cos(3*x)*1.001"}     # 0.1% off: a sound check must not call this pass
    report = check_gradient("sin(3*x)", at={"x": 1.0}, grad=wrong, mode="fast", step=0.25, seed=1)
    assert report.projection.verdict == "inconclusive" and "smaller step" in report.projection.reason
    assert check_gradient("sin(3*x)", at={"x": 1.0}, grad=wrong, mode="fast", seed=1).projection.verdict == "fail"


def test_ordinary_checks_stay_pass():
    assert check_gradient("sin(x*y) + x**3", at={"x": 0.7, "y": -2.0}).verdict == "pass"


# ---- CLI ---------------------------------------------------------------------------------------

def test_cli_jacobian_check_table_and_exit_0(capsys):
    code, out, _ = cli(capsys, "jacobian", SOFTMAX, "--fn", "f", "--at", "z=[1,2,3]", "--check")
    assert code == 0
    assert "∂f[2]/∂z[1]" in out and "check passed" in out and "FD err est" in out


def test_cli_jacobian_check_json(capsys):
    code, out, _ = cli(capsys, "jacobian", "[abs(x), x*y]", "--at", "x=0,y=2", "--check", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["jacobian"]["x"] == [0.0, 2.0]
    check = doc["check"]
    assert check["kind"] == "jacobian" and check["verdict"] == "kink" and check["passed"] is True
    assert [(e["entry"], e["index"], e["verdict"]) for e in check["entries"]][:2] == \
        [("∂f[0]/∂x", ["f[0]", "x"], "kink"), ("∂f[0]/∂y", ["f[0]", "y"], "pass")]


def test_cli_jacobian_check_fast_prints_the_seed(capsys):
    code, out, _ = cli(capsys, "jacobian", "[x*y, exp(x)]", "--at", "x=1,y=2", "--check", "fast",
                       "--seed", "42")
    assert code == 0 and "seed 42" in out and "vᵀJd" in out


def test_cli_hessian_check_exit_codes_and_json(capsys):
    code, out, _ = cli(capsys, "hessian", ROSENBROCK, "--fn", "f", "--at", "x=1,y=1", "--check", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["check"]["kind"] == "hessian" and doc["check"]["verdict"] == "pass"
    assert [e["entry"] for e in doc["check"]["entries"]] == ["∂²f/∂x∂x", "∂²f/∂x∂y", "∂²f/∂y∂x", "∂²f/∂y∂y"]
    code, out, _ = cli(capsys, "hessian", "sqrt(x)", "--at", "x=0", "--check")
    assert code == 1 and "non-finite" in out and "check failed" in out
    code, out, _ = cli(capsys, "hessian", "x**4", "--at", "x=2", "--check", "fast", "--seed", "7", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["check"]["seed"] == 7 and doc["check"]["projection"]["entry"] == "uᵀHd"


def test_cli_jacobian_check_fails_with_exit_1_on_non_finite(capsys):
    code, out, _ = cli(capsys, "jacobian", "log(x)", "--at", "x=1e-12", "--check")
    assert code == 1 and "non-finite" in out


def test_cli_check_with_no_inputs_is_an_empty_pass(capsys):
    for command in ("jacobian", "hessian"):
        code, out, _ = cli(capsys, command, "2+3", "--check", "fast", "--json")
        assert code == 0 and json.loads(out)["check"]["entries"] == []


def test_batch_check_reports_inconclusive_as_a_warning(capsys, tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[[case]]\nname = "swamped"\nf = "1e8 + x"\nat = { x = 1 }\n')
    code, out, _ = cli(capsys, "check", str(p))
    assert code == 0 and "inconclusive" in out
    assert out.rstrip().splitlines()[-1] == "1 passed, 0 failed, 1 with warnings"
