"""Hints that fit (issue 13, item 12): `ln` suggests `log`, a check-file case without a point says
`at = {...}` in the file's words, and pytest on a check file without the flag says to add it."""
import os
import subprocess
import sys

import pytest

from autodiff.engine import api
from autodiff.engine.checks.files import parse_text
from autodiff.engine.checks.runner import run_case

HERE = os.path.dirname(__file__)


@pytest.mark.parametrize("text,hint", [("ln(x)", "`log`"), ("pow(x, 2)", "`**`"), ("sinn(x)", "`sin`")])
def test_unknown_names_suggest_the_builtin_meant(text, hint):
    with pytest.raises(api.SourceError) as err:
        api.grad(text, at={"x": 1.0})
    assert err.value.hint == f"did you mean {hint}?"


def test_a_case_without_a_point_says_at_in_the_files_words():
    case, = parse_text('[[case]]\nname = "no point"\nf = "x**2 + y"\n')
    result = run_case(case)
    assert result.status == "error"
    assert "add at = { x = ..., y = ... }" in result.message and "--at" not in result.message


def test_pytest_on_a_check_file_without_the_flag_says_to_add_it(tmp_path):
    path = tmp_path / "mine.grad.toml"
    path.write_text('[[case]]\nf = "x**2"\nat = { x = 3 }\n')
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode != 0
    assert "add --autodiff-check" in p.stdout + p.stderr
