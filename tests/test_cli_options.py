"""One name per idea, and every computing command takes what it can use (issue 13, items 7 and 8):
--seed N is the random seed everywhere (the old --seed V for vᵀJ and --check-seed still work,
with a warning), check --check fast|full, --rtol/--atol/--step on every check, derivative --wrt
and --check, hessian --explain, check --dtype, and the options matrix of the commands."""
import json
import math
import os
import pathlib

import click
import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks import runner as check_runner

from test_json_schema import SCHEMA, problems

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEEDS = os.path.join(ROOT, "samples", "checks", "seeds.toml")
VERDICTS = os.path.join(ROOT, "samples", "checks", "verdicts.toml")


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


# ---- item 7: --seed, --cotangent, --check-seed, --fast -------------------------------------------

@pytest.mark.parametrize("command", [
    ["grad", "sum(sin(x))", "--at", "x=[1,2,3]"],
    ["jacobian", "sin(x)", "--at", "x=[1,2,3]"],
    ["hessian", "sum(x**3)", "--at", "x=[1,2,3]"],
])
def test_seed_is_the_random_seed_of_check_fast(capsys, command):
    code, out, err = cli(capsys, *command, "--check", "fast", "--seed", "7", "--json")
    assert code == 0 and err == "" and json.loads(out)["check"]["seed"] == 7


@pytest.mark.parametrize("command", [
    ["grad", "sum(sin(x))", "--at", "x=[1,2,3]"],
    ["jacobian", "sin(x)", "--at", "x=[1,2,3]"],
    ["hessian", "sum(x**3)", "--at", "x=[1,2,3]"],
])
def test_check_seed_is_a_hidden_alias_of_seed_that_warns(capsys, command):
    code, out, err = cli(capsys, *command, "--check", "fast", "--check-seed", "9", "--json")
    assert code == 0 and json.loads(out)["check"]["seed"] == 9
    assert err == "warning: --check-seed is deprecated: use --seed\n"
    code, out, _ = cli(capsys, command[0], "--help")
    assert "--check-seed" not in out and "--seed N" in out


@pytest.mark.parametrize("seed,gradient", [("[1,0,2]", [2.0, 0.0, 12.0]), ("2.5", [5.0, 10.0, 15.0]),
                                           ("-1", [-2.0, -4.0, -6.0]), ("2*ones(3)", [4.0, 8.0, 12.0])])
def test_a_seed_that_is_not_a_count_is_the_old_cotangent(capsys, seed, gradient):
    code, out, err = cli(capsys, "grad", "x*x", "--at", "x=[1,2,3]", "--seed", seed, "--json")
    assert code == 0 and json.loads(out)["gradient"]["x"] == gradient
    assert err.count("\n") == 1 and "--seed V for vᵀJ is deprecated: use --cotangent V" in err


def test_a_seed_that_nothing_uses_is_said(capsys):
    code, out, err = cli(capsys, "grad", "x*x", "--at", "x=[1,2,3]", "--seed", "2", "--json")
    assert code == 0 and json.loads(out)["gradient"]["x"] == [2.0, 4.0, 6.0]     # not a cotangent of 2
    assert "--seed 2 is the random seed of --check fast" in err and "--cotangent V" in err


def test_graph_keeps_its_old_seed_as_the_cotangent(capsys):
    code, out, err = cli(capsys, "graph", "x*x", "--at", "x=[1,2,3]", "--seed", "2", "--json")
    assert code == 0 and "deprecated: use --cotangent V" in err
    new = cli(capsys, "graph", "x*x", "--at", "x=[1,2,3]", "--cotangent", "2", "--json")[1]
    assert json.loads(out)["nodes"] == json.loads(new)["nodes"]


def test_check_takes_check_fast_and_the_old_fast_warns(capsys):
    code, out, err = cli(capsys, "check", SEEDS, "--check", "fast", "--seed", "4", "--json")
    assert code == 0 and err == ""
    cases = json.loads(out)["cases"]
    assert {c["mode"] for c in cases} == {"fast"} and {c["seed"] for c in cases} == {4}
    code, old, err = cli(capsys, "check", SEEDS, "--fast", "--seed", "4", "--json")
    assert code == 0 and err == "warning: --fast is deprecated: use --check fast\n"
    assert [c["verdict"] for c in json.loads(old)["cases"]] == [c["verdict"] for c in cases]
    code, out, _ = cli(capsys, "check", "--help")
    assert "--fast" not in out and "--check [full|fast]" in out


def test_check_full_overrides_a_case_in_fast_mode(capsys):
    code, out, _ = cli(capsys, "check", VERDICTS, "-k", "fast mode", "--json")
    assert [c["mode"] for c in json.loads(out)["cases"]] == ["fast"]
    code, out, _ = cli(capsys, "check", VERDICTS, "-k", "fast mode", "--check", "full", "--json")
    assert code == 0 and [c["mode"] for c in json.loads(out)["cases"]] == ["full"]


# ---- item 8: --rtol, --atol, --step --------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["grad", "sin(x)*y", "--at", "x=1,y=2"],
    ["jacobian", "[x*y, sin(x)]", "--at", "x=1,y=2"],
    ["hessian", "x**3*y", "--at", "x=1,y=2"],
    ["derivative", "sin(x)", "--at", "x=1", "-n", "3"],
])
def test_tolerances_reach_every_check(capsys, command):
    code, out, err = cli(capsys, *command, "--check", "--rtol", "1e-3", "--atol", "0", "--step", "1e-4", "--json")
    assert code == 0, err
    check = json.loads(out)["check"]
    assert check["rtol"] == 1e-3 and check["atol"] == 0.0
    assert {e["step"] for e in check["entries"]} <= {2.0 ** -13, 2.0 ** -12, 2.0 ** -14}


@pytest.mark.parametrize("command", ["grad", "jacobian", "hessian", "derivative"])
@pytest.mark.parametrize("flag,value", [("--rtol", "-1"), ("--atol", "nan"), ("--step", "0"), ("--step", "inf"),
                                        ("--rtol", "abc")])
def test_bad_tolerances_are_usage_errors_naming_the_flag(capsys, command, flag, value):
    code, _, err = cli(capsys, command, "x*x", "--at", "x=1", "--check", flag, value)
    assert code == 2 and flag in err


def test_a_tolerance_without_a_check_is_a_usage_error(capsys):
    code, _, err = cli(capsys, "grad", "x*x", "--at", "x=1", "--rtol", "1e-3", "--step", "1e-4")
    assert code == 2 and "--rtol, --step set the tolerances of --check" in err and "add --check" in err


def test_check_overrides_the_files_tolerances_and_dtype(capsys, monkeypatch):
    seen = []
    real = check_runner.check_gradient

    def spy(**kwargs):
        seen.append((kwargs["dtype"], kwargs["rtol"], kwargs["atol"], kwargs["step"]))
        return real(**kwargs)
    monkeypatch.setattr(check_runner, "check_gradient", spy)
    real_run = check_runner.run_cases          # in this process: the spy does not follow a worker
    monkeypatch.setattr(check_runner, "run_cases", lambda *args, **kw: real_run(*args, **{**kw, "isolate": False}))
    code, out, err = cli(capsys, "check", VERDICTS, "-k", "float32", "--json")
    assert code == 0 and seen and seen[-1][0] == "float32"
    seen.clear()
    code, out, err = cli(capsys, "check", SEEDS, "--dtype", "float32", "--rtol", "0.01", "--atol", "0.001",
                         "--step", "0.001", "--json")
    assert code == 0, err
    assert seen and set(seen) == {("float32", 0.01, 0.001, 0.001)} and json.loads(out)["dtype"] == "float32"
    code, _, err = cli(capsys, "check", SEEDS, "--step", "-1")
    assert code == 2 and "--step" in err


def test_check_dtype_float32_changes_the_numbers(capsys):
    args = ["check", SEEDS, "-k", "smooth function of three", "--json"]
    code, out, _ = cli(capsys, *args)
    wide = json.loads(out)["cases"][0]["worst_rel_err"]
    code, out, _ = cli(capsys, *args, "--dtype", "float32")
    narrow = json.loads(out)["cases"][0]["worst_rel_err"]
    assert code == 0 and narrow > 100 * wide and narrow > 1e-8            # FD in float32 is coarser


# ---- item 8: check -k --------------------------------------------------------------------------

def test_k_selects_by_plain_substring_case_insensitive_as_pytest(capsys):
    code, out, _ = cli(capsys, "check", SEEDS, VERDICTS, "-k", "DETACH", "--json")
    names = [c["name"] for c in json.loads(out)["cases"]]
    assert code == 0 and names == ["d2l 2.5.3: detaching u = x*x"]
    code, out, _ = cli(capsys, "check", SEEDS, "-k", "d2l 2.5.1", "--json")
    assert [c["name"] for c in json.loads(out)["cases"]] == ["d2l 2.5.1: y = 2 xᵀx", "d2l 2.5.1: y = sum(x)"]
    code, _, err = cli(capsys, "check", SEEDS, "-k", "no such case")
    assert code == 2 and "-k 'no such case' selects none" in err


# ---- item 8: derivative --wrt and --check --------------------------------------------------------

def test_derivative_wrt_holds_the_other_inputs(capsys):
    code, out, err = cli(capsys, "derivative", "x**3*y + y**2", "--at", "x=2,y=5", "--wrt", "x", "-n", "4", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["derivatives"] == [60.0, 60.0, 30.0, 0.0] and doc["wrt"] == ["x"] and doc["value"] == 65.0
    code, out, _ = cli(capsys, "derivative", "x**3*y + y**2", "--at", "x=2,y=5", "--wrt", "y", "-n", "2",
                       "--mode", "forward", "--json")
    assert json.loads(out)["derivatives"] == [18.0, 2.0]
    code, out, _ = cli(capsys, "derivative", "x**3*y + y**2", "--at", "x=2,y=5", "--wrt", "x", "-n", "2")
    assert code == 0 and "∂^k f / ∂x^k" in out           # a partial derivative says so
    code, out, _ = cli(capsys, "derivative", "x**3", "--at", "x=2", "-n", "2")
    assert code == 0 and "d^k f / dx^k" in out


def test_derivative_of_several_inputs_without_wrt_says_how(capsys):
    code, _, err = cli(capsys, "derivative", "x*y", "--at", "x=1,y=2")
    assert code == 2 and "--wrt x" in err
    code, _, err = cli(capsys, "derivative", "x*y", "--at", "x=1,y=2", "--wrt", "x,y")
    assert code == 2 and "one input" in err
    code, _, err = cli(capsys, "derivative", "x*y", "--at", "x=1,y=2", "--wrt", "z")
    assert code == 2 and "--wrt z: not an input" in err


def test_derivative_check_compares_each_order_with_the_one_below(capsys):
    code, out, err = cli(capsys, "derivative", "exp(x**2)", "--at", "x=0.7", "-n", "5", "--check", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert problems(doc, SCHEMA["$defs"]["derivative"]) == []
    check = doc["check"]
    assert check["kind"] == "derivative" and check["passed"] and check["evaluations"] == 5
    assert [e["entry"] for e in check["entries"]][:3] == ["f′ = df/dx", "f″ = df′/dx", "f‴ = df″/dx"]
    assert [e["claimed"] for e in check["entries"]] == doc["derivatives"]
    code, out, _ = cli(capsys, "derivative", "sin(x)*y", "--at", "x=0.5,y=3", "--wrt", "x", "-n", "3", "--check")
    assert code == 0 and "check passed" in out and "f‴ = ∂f″/∂x" in out


def test_derivative_check_fails_and_exits_1(capsys):
    code, out, _ = cli(capsys, "derivative", "sqrt(x)", "--at", "x=0", "-n", "2", "--check")
    assert code == 1 and "check failed" in out


def test_derivative_check_says_detached(capsys):
    code, out, _ = cli(capsys, "derivative", "detach(x*x)*x", "--at", "x=2", "-n", "1", "--check", "--json")
    check = json.loads(out)["check"]
    assert code == 0 and check["verdict"] == "detached" and check["detached"]


# ---- item 8: hessian --explain -------------------------------------------------------------------

def test_hessian_explain_shows_both_stages(capsys):
    code, out, err = cli(capsys, "hessian", "x**2*y + y + 2", "--at", "x=3,y=4", "--explain")
    assert code == 0, err
    assert "stage 1: the gradient by the reverse sweep" in out
    assert ("  n1 = x = 3\n  n2 = y = 4\n  n3 = 2  (constant)\n  n4 = n1 ** n3 = 9\n  n5 = n4 * n2 = 36\n"
            "  n6 = n5 + n2 = 40\n  n7 = n6 + n3 = 42\n") in out          # the nodes, without their places
    assert "∂f/∂n1 = ∂f/∂n4 · ∂n4/∂n1 = 4 · 6 = 24" in out
    assert "x: ∂(∂f/∂x)/∂x = 8   ∂(∂f/∂y)/∂x = 6" in out and "y: ∂(∂f/∂x)/∂y = 6   ∂(∂f/∂y)/∂y = 0" in out
    assert "2 directions in 2 passes" in out
    code, out, _ = cli(capsys, "hessian", "x**2*y", "--at", "x=3,y=4", "--explain", "--mode", "reverse-over-reverse")
    assert code == 0 and "from ∂f/∂x: ∂(∂f/∂x)/∂x = 8   ∂(∂f/∂x)/∂y = 6" in out and "outer sweeps" in out


def test_hessian_explain_json_is_the_hessian_with_its_stages(capsys):
    code, out, _ = cli(capsys, "hessian", "sum(x**3)", "--at", "x=[1,2]", "--explain", "--json")
    doc = json.loads(out)
    assert code == 0 and problems(doc, SCHEMA["$defs"]["hessian_explain"]) == []
    gradient, second = doc["stages"]
    assert gradient["how"] == "reverse sweep" and gradient["sweep"][0]["seed"] is True
    assert [r["row"]["x"] for r in second["rows"]] == [[6.0, 0.0], [0.0, 12.0]] == doc["hessian"]["x"]["x"]


@pytest.mark.parametrize("extra", [["--check"], ["--out", "h.json"], ["--rtol", "1e-3"]])
def test_hessian_explain_with_a_check_or_out_is_a_usage_error(capsys, extra, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "hessian", "x*x", "--at", "x=1", "--explain", *extra)
    assert code == 2 and "--explain" in err and extra[0] in err


# ---- item 8: jacobian --explain ------------------------------------------------------------------

def test_jacobian_explain_reverse_shows_a_sweep_per_row(capsys):
    code, out, err = cli(capsys, "jacobian", "[x*y, x+y]", "--at", "x=1,y=2", "--explain")
    assert code == 0, err
    assert "row f[0]: the sweep seeded with v = the unit vector of f[0]" in out
    assert "∂f[0]/∂x = 2   ∂f[0]/∂y = 1" in out and "∂f[1]/∂x = 1   ∂f[1]/∂y = 1" in out
    code, out, _ = cli(capsys, "jacobian", "[x*y, x+y]", "--at", "x=1,y=2", "--explain", "--json")
    doc = json.loads(out)
    assert problems(doc, SCHEMA["$defs"]["jacobian_explain"]) == []
    assert [s["row"] for s in doc["sweeps"]] == ["f[0]", "f[1]"] and doc["forward_passes"] == []
    assert doc["jacobian"] == {"x": [2.0, 1.0], "y": [1.0, 1.0]}


def test_jacobian_explain_forward_shows_a_pass_per_column(capsys):
    code, out, _ = cli(capsys, "jacobian", "[x*y, x+y]", "--at", "x=1,y=2", "--explain", "--mode", "forward")
    assert code == 0 and "column for x: seed tangent 1" in out and "∂f/∂y = (2,) [1, 1]" in out
    code, out, _ = cli(capsys, "jacobian", "[x*y, x+y]", "--at", "x=1,y=2", "--explain", "--mode", "forward",
                       "--json")
    doc = json.loads(out)
    assert problems(doc, SCHEMA["$defs"]["jacobian_explain"]) == []
    assert [(p["wrt"][0], p["column"]) for p in doc["forward_passes"]] == [("x", [2.0, 1.0]), ("y", [1.0, 1.0])]
    code, _, err = cli(capsys, "jacobian", "sin(x)", "--at", "x=[1,2]", "--explain", "--mode", "forward")
    assert code == 2 and "--mode reverse" in err
    code, _, err = cli(capsys, "jacobian", "sin(x)", "--at", "x=[1,2]", "--explain", "--check")
    assert code == 2 and "--explain and --check" in err


# ---- contradictory combinations ------------------------------------------------------------------

def test_graph_json_with_another_format_is_a_usage_error(capsys):
    for fmt in ("dot", "mermaid", "table"):
        code, out, err = cli(capsys, "graph", "x*x", "--at", "x=1", "--json", "--format", fmt)
        assert code == 2 and "--json and --format " + fmt in err and json.loads(out)["error"]["kind"] == "usage"


def test_explain_with_json_is_one_document(capsys):
    # not a contradiction: --json is the explanation's machine-readable form
    code, out, _ = cli(capsys, "grad", "x*x", "--at", "x=3", "--explain", "--json")
    assert code == 0 and json.loads(out)["mode"] == "reverse"


# ---- help and the options matrix -----------------------------------------------------------------

COMPUTING = ["run", "grad", "jacobian", "hessian", "derivative", "graph", "plot", "check", "emit"]

# What each command can use of --at/--inputs --wrt --dtype --json --check --explain --debug (and
# the check's --seed --rtol --atol --step). run, graph and plot check nothing; run and plot
# differentiate in no chosen input; graph is itself the explanation.
MATRIX = {
    "run": {"--at", "--inputs", "--dtype", "--json", "--debug"},
    "grad": {"--at", "--inputs", "--wrt", "--dtype", "--json", "--check", "--explain", "--debug", "--seed",
             "--rtol", "--atol", "--step"},
    "jacobian": {"--at", "--inputs", "--wrt", "--dtype", "--json", "--check", "--explain", "--debug", "--seed",
                 "--rtol", "--atol", "--step"},
    "hessian": {"--at", "--inputs", "--wrt", "--dtype", "--json", "--check", "--explain", "--debug", "--seed",
                "--rtol", "--atol", "--step"},
    "derivative": {"--at", "--inputs", "--wrt", "--dtype", "--json", "--check", "--explain", "--debug", "--rtol",
                   "--atol", "--step"},
    "graph": {"--at", "--inputs", "--wrt", "--dtype", "--json", "--debug"},
    "plot": {"--at", "--inputs", "--dtype", "--json", "--debug"},
    "check": {"--dtype", "--json", "--check", "--debug", "--seed", "--rtol", "--atol", "--step", "-k"},
    "emit": {"--at", "--inputs", "--wrt", "--dtype", "--json", "--explain", "--debug"},
}
HIDDEN = {"grad": {"--check-seed"}, "jacobian": {"--check-seed"}, "hessian": {"--check-seed", "--method"},
          "derivative": {"--method"}, "graph": {"--seed"}, "check": {"--fast"}}


def _visible_options(command) -> set:
    return {opt for p in command.params if isinstance(p, click.Option) and not p.hidden for opt in p.opts}


@pytest.mark.parametrize("name", COMPUTING)
def test_every_command_has_the_options_it_can_use(name):
    command = climain.cli.get_command(None, name)
    assert MATRIX[name] <= _visible_options(command), MATRIX[name] - _visible_options(command)
    hidden = {opt for p in command.params if isinstance(p, click.Option) and p.hidden for opt in p.opts}
    assert hidden == HIDDEN.get(name, set())
    for p in command.params:
        if isinstance(p, click.Option) and not p.hidden:
            assert p.help, f"{name} {p.opts[0]} has no help text"


@pytest.mark.parametrize("name", COMPUTING)
def test_every_help_has_examples(capsys, name):
    code, out, _ = cli(capsys, name, "--help")
    examples = [line.strip() for line in out.splitlines() if line.strip().startswith(f"autodiff {name} ")]
    assert code == 0 and len(examples) >= 2, out
    assert "--dtype [float64|float32]" in out


def _help_examples(capsys) -> list:
    examples = []
    for name in COMPUTING:
        out = cli(capsys, name, "--help")[1]
        examples += [line.strip() for line in out.splitlines() if line.strip().startswith(f"autodiff {name} ")]
    return examples


def test_the_help_examples_run(capsys, tmp_path, monkeypatch):
    # those that pipe, write an image or name a file of the user's (model.py) are the README's to show
    import glob
    import shlex
    runnable = [e for e in _help_examples(capsys) if not any(mark in e for mark in ("|", " -o ", "model.py"))]
    assert len(runnable) >= 20
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    monkeypatch.chdir(tmp_path)
    for example in runnable:
        argv = [match for word in shlex.split(example, comments=True)[1:]
                for match in (sorted(glob.glob(word)) if word.endswith("*.toml") else [word])]
        code, out, err = cli(capsys, *argv)
        assert code == 0, (example, err)


def test_top_level_help_does_not_cut_descriptions_short(capsys):
    code, out, _ = cli(capsys, "--help")
    lines = out.split("Commands:")[1].strip().splitlines()
    assert code == 0 and len(lines) == len(COMPUTING)
    assert not any(line.rstrip().endswith("...") for line in lines)
    assert all(line.rstrip().endswith((".", ")")) for line in lines)


def test_steps_of_a_finite_check_are_finite():
    # the defaults named in --rtol/--atol/--step's help are the engine's
    from autodiff.engine.checks.report import TOLERANCES
    assert TOLERANCES["float64"].rtol == 1e-6 and TOLERANCES["float64"].atol == 1e-9
    assert TOLERANCES["float32"].rtol == 1e-4 and TOLERANCES["float32"].atol == 1e-6
    assert TOLERANCES["float64"].step == 2.0 ** -17 and TOLERANCES["float32"].step == 2.0 ** -8
    assert all(math.isfinite(t.step) for t in TOLERANCES.values())


def test_grad_explain_with_a_tolerance_is_a_usage_error(capsys):
    code, _, err = cli(capsys, "grad", "x*x", "--at", "x=1", "--explain", "--atol", "1e-3")
    assert code == 2 and "--atol" in err


def test_the_python_api_has_the_new_entry_points():
    from autodiff.engine import api
    ex = api.explain_hessian("x**2*y", at={"x": 3.0, "y": 4.0})
    assert [(r.direction, r.row) for r in ex.rows] == [("x", {"x": 8.0, "y": 6.0}), ("y", {"x": 6.0, "y": 0.0})]
    from autodiff.engine.lang.target import load
    target = load("x**3*y")
    result = api.derivatives(None, {"x": 2.0, "y": 5.0}, 3, target=target, wrt="x")
    assert result.derivatives == [60.0, 60.0, 30.0]
    assert api.check_derivatives(result, target, rtol=1e-8).passed
    ex = api.explain_jacobian("[x*y, x+y]", at={"x": 1.0, "y": 2.0})
    assert ex.mode == "reverse" and [label for label, _ in ex.sweeps] == ["f[0]", "f[1]"]


def test_check_file_takes_the_overrides_too():
    from autodiff.engine import api
    wide = api.check_file(SEEDS)
    narrow = api.check_file(SEEDS, dtype="float32", rtol=1e-3)
    assert not any(r.failed for r in narrow) and len(narrow) == len(wide)
    assert max(r.worst_rel or 0 for r in narrow) > max(r.worst_rel or 0 for r in wide)
