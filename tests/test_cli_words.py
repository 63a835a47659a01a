"""How the commands read their words (issue 13, item 6): typos get suggestions on every command,
an unknown option is not swallowed as the target, and targets that start with '-' still work."""
import json

import pytest

from autodiff.cli import main as climain
from autodiff.cli.parsing import values_after_dashes
from autodiff.cli.commands.evaluate import grad
from autodiff.cli.render import common as render

COMMANDS = ["grad", "run", "jacobian", "hessian", "derivative", "graph", "plot"]


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_mistyped_option_gets_the_closest_spelling_on_every_command(capsys, command):
    code, _, err = cli(capsys, command, "x", "--at", "x=1", "--jsno")
    assert code == 2
    assert "No such option '--jsno'. Did you mean '--json'?" in err


def test_a_mistyped_option_before_the_target_is_not_the_target(capsys):
    code, _, err = cli(capsys, "grad", "--att", "x=1", "x")
    assert code == 2 and "Did you mean '--at'?" in err


def test_a_mistyped_command_gets_the_closest_command(capsys):
    code, _, err = cli(capsys, "jacobain")
    assert code == 2 and "Did you mean 'jacobian'?" in err


@pytest.mark.parametrize("args,value", [
    (["grad", "-x**2", "--at", "x=3"], -9.0),            # cannot be an option
    (["grad", "--at", "x=3", "--", "-x"], -3.0),         # could be one: after --
    (["run", "-1"], -1.0),
    (["grad", "--cotangent", "-1", "2*x", "--at", "x=1"], 2.0),   # an option's value stays its value
])
def test_targets_that_start_with_a_dash(capsys, args, value):
    code, out, err = cli(capsys, args[0], "--json", *args[1:])
    assert code == 0, err
    assert json.loads(out)["value"] == value


def test_words_that_cannot_be_options_move_after_dashes():
    assert values_after_dashes(grad, ["-x**2", "--at", "x=1"]) == ["--at", "x=1", "--", "-x**2"]
    assert values_after_dashes(grad, ["x", "--json"]) == ["x", "--json"]


def test_graph_json_with_another_format_is_a_usage_error(capsys):
    code, out, _ = cli(capsys, "graph", "x*2", "--at", "x=1", "--json", "--format", "dot")
    assert code == 2 and json.loads(out)["error"]["kind"] == "usage"


def test_check_k_selects_cases_by_name(capsys):
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "samples", "checks", "verdicts.toml")
    code, out, _ = cli(capsys, "check", path, "-k", "KINK", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["cases"] and all("kink" in c["name"].lower() for c in doc["cases"])
    code, _, err = cli(capsys, "check", path, "-k", "no such case")
    assert code == 2 and "selects none" in err


def test_piped_tables_have_no_trailing_spaces():
    import subprocess
    import sys
    for args in (["grad", "sum(x*x)", "--at", "x=[1,2]", "--check"], ["hessian", "x**2*y", "--at", "x=1,y=2"]):
        p = subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and p.stdout.strip()
        assert [line for line in p.stdout.splitlines() if line != line.rstrip()] == []
