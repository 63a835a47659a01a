"""Shell completion (issue 13, item 13): click's, through a real process, completes files for
TARGET, check files and -o, and command names."""
import os
import subprocess
import sys

import pytest


def complete(words):
    env = {**os.environ, "COMP_WORDS": " ".join(words), "COMP_CWORD": str(len(words) - 1),
           "_AUTODIFF_COMPLETE": "bash_complete"}
    code = "import sys; from autodiff.cli.main import cli; cli.main(prog_name='autodiff')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    return p.stdout.split()


@pytest.mark.parametrize("words", [["autodiff", "grad", "sa"], ["autodiff", "check", "sam"],
                                   ["autodiff", "plot", "sin(x)", "-o", "ou"]])
def test_file_arguments_complete_as_files(words):
    assert complete(words) == [f"file,{words[-1]}"]


def test_command_names_complete():
    assert complete(["autodiff", "jac"]) == ["plain,jacobian"]
