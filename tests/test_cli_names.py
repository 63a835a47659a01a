"""One name per idea (issue 13, item 7): --mode for every choice of AD mode, --cotangent for the v
of vᵀJ; the old spellings still work, hidden from --help, with a warning."""
import json

import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def test_cotangent_contracts_the_output(capsys):
    code, out, err = cli(capsys, "grad", "x*x", "--at", "x=[1,2,3]", "--cotangent", "[1,0,2]", "--json")
    assert code == 0 and json.loads(out)["gradient"]["x"] == [2.0, 0.0, 12.0] and "warning" not in err


@pytest.mark.parametrize("command", [["grad", "x*x", "--at", "x=[1,2,3]"], ["graph", "x*x", "--at", "x=[1,2,3]"]])
def test_the_old_seed_spelling_still_works_with_a_warning(capsys, command):
    code, out, err = cli(capsys, *command, "--seed", "[1,0,2]", "--json")
    assert code == 0 and "warning: --seed V for vᵀJ is deprecated: use --cotangent V" in err
    assert err.count("warning") == 1 and "warning" not in out
    json.loads(out)                                     # stdout is still one document


@pytest.mark.parametrize("args,mode", [
    (["hessian", "x**2*y", "--at", "x=1,y=2"], "reverse-over-reverse"),
    (["derivative", "sin(x)", "--at", "x=1", "-n", "2"], "forward"),
])
def test_mode_chooses_the_method_and_method_warns(capsys, args, mode):
    code, out, err = cli(capsys, *args, "--mode", mode, "--json")
    assert code == 0 and json.loads(out)["mode"] == mode and err == ""
    code, out, err = cli(capsys, *args, "--method", mode, "--json")
    assert code == 0 and json.loads(out)["mode"] == mode
    assert "warning: --method is deprecated: use --mode" in err


@pytest.mark.parametrize("command,hidden", [("grad", "--seed"), ("graph", "--seed"), ("hessian", "--method"),
                                            ("derivative", "--method")])
def test_old_spellings_are_hidden_from_help(capsys, command, hidden):
    code, out, _ = cli(capsys, command, "--help")
    assert code == 0 and f"{hidden} " not in out and "--mode" in out or "--cotangent" in out


def test_engine_errors_name_the_new_flags(capsys):
    code, _, err = cli(capsys, "derivative", "sin(x)", "--at", "x=1", "--mode", "forward", "-n", "20")
    assert code == 2 and "--mode forward" in err and "--method" not in err
