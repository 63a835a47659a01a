"""Every user rule checked where it is used (issue 30 item 3): under --check, in check files, the
pytest plugin and check_gradient, each custom_vjp/custom_jvp rule the run passed through is
verified at its points against AD of its own function and central differences; a deliberate
non-derivative may be declared trusted and is then listed as such."""
import json
import os
import subprocess
import sys

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.gradient import check_gradient

from test_custom_rules import CLIP, SOFTPLUS, text

WRONG_SOFTPLUS = SOFTPLUS.replace("t / (1.0 + np.exp(-x))", "t / (1.0 + np.exp(x))")
SCALAR = "return sum(softplus(x))", "return softplus(x)"


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out + err


def write(folder, name, src):
    p = folder / name
    p.write_text(text(src))
    return str(p)


def test_a_right_rule_passes_where_it_was_used(tmp_path):
    report = check_gradient(write(tmp_path, "softplus.py", SOFTPLUS), at={"x": [-1.3, 0.5]})
    assert report.passed
    assert [(r.label, r.verdict) for r in report.rules] == [("rule `softplus_jvp`, x", "pass")]


def test_a_wrong_rule_fails_naming_the_rule_its_line_the_point_and_the_numbers(tmp_path):
    report = check_gradient(write(tmp_path, "softplus.py", WRONG_SOFTPLUS.replace(*SCALAR)), at={"x": -1.3})
    assert not report.passed
    rule = report.rules[0]
    assert rule.verdict == "fail"
    assert rule.reason == ("custom_jvp rule `softplus_jvp` at softplus.py:8 disagrees with the derivative of "
                           "`softplus` at x = -1.3: rule 0.785835, derivative 0.214165 (central differences give "
                           "0.214165, the rule 0.785835)")


def test_a_clipping_rule_fails_the_check_unless_trusted(tmp_path):
    path = write(tmp_path, "clip.py", CLIP)
    report = check_gradient(path, at={"x": [0.05, 0.5, 2.0]})
    assert not report.passed
    failing = [r for r in report.rules if r.verdict == "fail"]
    assert [r.label for r in failing] == ["rule `clip_gradient_bwd`, x"]
    assert "at x = [0.5, 5, 20], lo = -1, hi = 1, for x (cotangent [0.05, 0.5, 2]): rule [0.05, 0.5, 1], " \
           "derivative [0.05, 0.5, 2]" in failing[0].reason
    trusted = check_gradient(path, at={"x": [0.05, 0.5, 2.0]}, trust_rules=True)
    assert trusted.passed and trusted.verdict == "trusted"
    assert [r.label for r in trusted.rows if r.verdict == "trusted"] == ["x[2]", "rule `clip_gradient_bwd`, x"]


def test_grad_check_from_the_command_line_lists_the_rules(tmp_path, capsys):
    path = write(tmp_path, "clip.py", CLIP)
    code, out = cli(capsys, "grad", path, "--at", "x=[0.05,0.5,2]", "--check")
    assert code == 1
    assert "fail: rule `clip_gradient_bwd`, x: custom_vjp rule `clip_gradient_bwd` at clip.py:9 disagrees" in out
    code, out = cli(capsys, "grad", path, "--at", "x=[0.05,0.5,2]", "--check", "--trust-rules")
    assert code == 0
    assert "trusted: rule `clip_gradient_bwd`, x:" in out and "check passed" in out
    code, out = cli(capsys, "grad", path, "--at", "x=[0.05,0.5,2]", "--check", "--trust-rules", "--json")
    assert [r["verdict"] for r in json.loads(out)["check"]["rules"]] == ["trusted", "pass", "pass"]
    code, out = cli(capsys, "grad", path, "--at", "x=[0.05,0.5,2]", "--trust-rules")
    assert code == 2 and "--trust-rules says which rules a --check lists as trusted" in out


CASES = """
[[case]]
name = "right rule"
program = "good.py"
at = { x = [-1.3, 0.5] }

[[case]]
name = "wrong rule"
program = "bad.py"
at = { x = [-1.3, 0.5] }
"""


def test_a_check_file_with_one_right_and_one_wrong_rule(tmp_path, capsys):
    write(tmp_path, "good.py", SOFTPLUS)
    write(tmp_path, "bad.py", WRONG_SOFTPLUS)
    code, out = cli(capsys, "check", write(tmp_path, "rules.grad.toml", CASES))
    assert code == 1
    assert out.rstrip().splitlines()[-1] == "1 passed, 1 failed"
    assert "FAILED" in out and "wrong rule" in out
    assert "rule `softplus_jvp`, x: fail: custom_jvp rule `softplus_jvp` at bad.py:8 disagrees with the " \
           "derivative of `softplus` at x = [-1.3, 0.5] (tangent [1, 1]): rule [0.785835, 0.377541], " \
           "derivative [0.214165, 0.622459]" in out


def test_rules_trusted_in_a_check_file_and_on_the_command_line(tmp_path, capsys):
    write(tmp_path, "clip.py", CLIP)
    case = '[[case]]\nname = "clipped"\nprogram = "clip.py"\nat = { x = [0.05, 0.5, 2] }\n'
    plain = write(tmp_path, "plain.grad.toml", case)
    code, out = cli(capsys, "check", plain)
    assert code == 1 and out.rstrip().splitlines()[-1] == "0 passed, 1 failed"
    code, out = cli(capsys, "check", plain, "--trust-rules")
    assert code == 0 and "1 passed, 0 failed" in out
    trusted = write(tmp_path, "trusted.grad.toml", case + 'rules = "trusted"\n')
    code, out = cli(capsys, "check", trusted, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["cases"][0]["status"] == "passed"
    assert any("rule `clip_gradient_bwd`, x: trusted: custom_vjp rule `clip_gradient_bwd` at clip.py:9" in w
               for w in doc["cases"][0]["warnings"])
    bad = write(tmp_path, "bad.grad.toml", case + 'rules = "maybe"\n')
    code, out = cli(capsys, "check", bad)
    assert code == 2 and "bad.grad.toml:5:1: rules must be \"checked\" or \"trusted\", not 'maybe'" in out


def test_the_pytest_plugin_fails_the_case_of_the_wrong_rule(tmp_path):
    write(tmp_path, "good.py", SOFTPLUS)
    write(tmp_path, "bad.py", WRONG_SOFTPLUS)
    write(tmp_path, "rules.grad.toml", CASES)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--autodiff-check"],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "1 failed, 1 passed" in out
    assert "custom_jvp rule `softplus_jvp` at bad.py:8 disagrees" in out


def test_a_rule_right_at_first_order_and_wrong_at_second_fails_where_a_hessian_went_through_it(tmp_path, capsys):
    """PyTorch's custom Functions that pass gradcheck and fail gradgradcheck: a rule whose tangent
    map is right but not differentiable as written (stop_gradient on its factor)."""
    src = SOFTPLUS.replace("    return softplus(x), t / (1.0 + np.exp(-x))",
                           "    s = stop_gradient(1.0 / (1.0 + np.exp(-x)))\n    return softplus(x), t * s")
    path = write(tmp_path, "softplus.py", src)
    code, out = cli(capsys, "grad", path, "--at", "x=[-1.3,0.5]", "--check")
    assert code == 0 and "second order" not in out          # first order: the rule is right
    code, out = cli(capsys, "hessian", path, "--at", "x=[-1.3,0.5]", "--check")
    assert code == 1
    assert "fail: rule `softplus_jvp`, x (second order): custom_jvp rule `softplus_jvp` at softplus.py:8, " \
           "differentiated once more (a higher derivative went through it), disagrees with the second derivative " \
           "of `softplus` at x = [-1.3, 0.5] (tangent [1, 1]): rule [0, 0], derivative [0.168298, 0.235004]" in out
    code, out = cli(capsys, "hessian", write(tmp_path, "right.py", SOFTPLUS), "--at", "x=[-1.3,0.5]", "--check")
    assert code == 0 and "pass: rule `softplus_jvp`, x (second order)" in out


def test_hessian_check_through_a_clipping_rule_fails_unless_trusted(tmp_path, capsys):
    src = CLIP.replace("clip_gradient(10*x, -1, 1)**2)/20", "clip_gradient(10*x, -1, 1)**3)/20")
    path = write(tmp_path, "clip.py", src)
    args = ("hessian", path, "--at", "x=[0.05,0.5,2]", "--mode", "reverse-over-reverse", "--check")
    code, out = cli(capsys, *args)
    assert code == 1 and "fail: ∂²f/∂x[0]∂x[0]: 10 vs 15" in out
    assert "for x (cotangent [1.5, 0, 0]): rule [1, 0, 0], derivative [1.5, 0, 0]" in out
    code, out = cli(capsys, *args, "--trust-rules")
    assert code == 0 and "trusted: ∂²f/∂x[0]∂x[0]: 10 vs 15: the run passed through the trusted rule " \
                         "`clip_gradient_bwd`" in out
    code, out = cli(capsys, *args[:-1], "--trust-rules")
    assert code == 2 and "--trust-rules says which rules a --check lists as trusted" in out
