"""Values people read line up (issue 13, item 10): a 2-D value continues under its first line
wherever it is printed, and piped output has no trailing spaces, for every command's table."""
import subprocess
import sys

import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.cli.render.common import indented

M = "x=[[1,2],[3,4]]"


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def test_indented_puts_later_lines_under_the_first():
    assert indented("  x: ", "[[3, 12],\n [27, 48]]") == "  x: [[3, 12],\n      [27, 48]]"
    assert indented("  ", "7") == "  7"


@pytest.mark.parametrize("args,first,second", [
    (["run", "x*2", "--at", M], "  [[2, 4],", "   [6, 8]]"),
    (["grad", "sum(x*x)", "--at", M], "x      [[2, 4],", "        [6, 8]]"),
    (["jacobian", "x*2", "--at", M], "  [[2, 4],", "   [6, 8]]"),
    (["hessian", "sum(x*x*x)", "--at", M], "  x: [[3, 12],", "      [27, 48]]"),
])
def test_two_dimensional_values_align(capsys, args, first, second):
    code, out, _ = cli(capsys, *args)
    lines = out.splitlines()
    assert code == 0 and first in lines
    assert lines[lines.index(first) + 1] == second


def test_a_2d_value_inside_a_sentence_stays_on_its_line(capsys):
    code, out, _ = cli(capsys, "graph", "x*2", "--at", M)
    assert code == 0 and "; value [[2, 4], [6, 8]]; adjoints are" in out.splitlines()[0]


@pytest.mark.parametrize("args", [
    ["jacobian", "[x*y, x+y]", "--at", "x=1,y=2"],
    ["jacobian", "x*2", "--at", M],
    ["hessian", "sum(x*x*x)", "--at", M],
    ["derivative", "sin(x)", "--at", "x=1", "-n", "3"],
    ["graph", "x*y + sin(x)", "--at", "x=1,y=2", "--format", "table"],
    ["plot", "abs(x)", "--range", "-1:1", "--points", "21", "--order", "2"],
    ["check", "samples/checks/verdicts.toml", "samples/checks/seeds.toml"],
])
def test_piped_output_has_no_trailing_spaces(args):
    p = subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip(), p.stderr
    assert [line for line in p.stdout.splitlines() if line != line.rstrip()] == []
    assert "\x1b[" not in p.stdout
