"""`autodiff grad/run PROGRAM.py`: output, --fn/--of, --json, the limit flags, and errors that exit
2 with a located, caret-marked message and no traceback."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autodiff.cli.main import invoke

ROOT = Path(__file__).resolve().parent.parent
CONTROL = str(ROOT / "samples" / "programs" / "control.py")


def cli(capsys, *args):
    from autodiff.cli.render import common as render
    render._consoles.clear()             # rich consoles hold the stream: use the captured one
    code = invoke([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def program(tmp_path):
    def write(src, name="prog.py"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(src).lstrip("\n"))
        return str(path)
    return write


def test_grad_prints_value_and_gradient(capsys):
    code, out, _ = cli(capsys, "grad", CONTROL, "--at", "a=0.37")
    assert code == 0
    assert "f(a)" in out and "1515.52" in out and "4096" in out


def test_grad_json_for_a_vector(capsys):
    code, out, _ = cli(capsys, "grad", CONTROL, "--at", "a=[0.37,-0.2]", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["value"] == [1515.52, -819.2] and doc["gradient"]["a"] == [4096.0, 4096.0]
    assert doc["reduced"] == "sum" and doc["tape_entries"] > 10


def test_run_evaluates_without_differentiating(capsys):
    code, out, _ = cli(capsys, "run", CONTROL, "--at", "a=-0.37", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["value"] == -151552.0 and doc["steps"] > 10
    assert "gradient" not in doc


def test_fn_and_the_error_listing_functions(capsys, program):
    path = program("""
    def helper(x):
        return 2 * x
    def g(x):
        return helper(x) ** 2
    """)
    code, _, err = cli(capsys, "grad", path, "--at", "x=1")
    assert code == 2
    assert "several functions (helper, g)" in err and "--fn" in err
    code, out, _ = cli(capsys, "grad", path, "--fn", "g", "--at", "x=1", "--json")
    assert code == 0 and json.loads(out)["gradient"]["x"] == 8.0
    code, _, err = cli(capsys, "grad", path, "--fn", "nope", "--at", "x=1")
    assert code == 2 and "no function 'nope'" in err


def test_script_with_of(capsys, program):
    path = program("""
    y = x * x
    z = y + 1
    z * 2
    """)
    code, out, _ = cli(capsys, "grad", path, "--at", "x=3", "--json")
    assert code == 0 and json.loads(out)["gradient"] == {"x": 12.0}
    code, out, _ = cli(capsys, "grad", path, "--at", "x=3", "--of", "y", "--json")
    assert code == 0 and json.loads(out)["value"] == 9.0


ERRORS = [
    ("def f(x):\n    import os\n    return x\n", "x=1", "unsupported construct", "2:12"),
    ("def f(x):\n    if x > 0:\n        return x\n    return -x\n", "x=[1,2]", "ambiguous condition", "2:8"),
    ("def f(x):\n    return x + yy\n", "x=1", "unknown name", "2:16"),
    ("def g(a, b):\n    return a\ndef f(x):\n    return g(x)\n", "x=1", "wrong arguments", "4:12"),
    ("def f(x):\n    return x + [1.0, 2.0, 3.0]\n", "x=[1,2]", "shape mismatch", "2:14"),
    ("def f(x):\n    return x[5]\n", "x=[1,2]", "index error", "2:12"),
    ("def f(x):\n    return f(x)\n", "x=1", "recursion limit", "2:12"),
    ("def f(x):\n    return x + sum(zeros(10**12))\n", "x=1", "too large", "2:20"),
]


@pytest.mark.parametrize("src,at,kind,place", ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_exit_2_with_place_and_caret(capsys, program, src, at, kind, place):
    path = program(src)
    code, out, err = cli(capsys, "grad", path, "--at", at)
    assert code == 2
    assert f"error: {kind}" in err
    assert f"prog.py:{place}" in err
    line = int(place.split(":")[0])
    assert src.splitlines()[line - 1].strip() in err and "^" in err
    assert "Traceback" not in err and out == ""


def test_limit_flags(capsys, program):
    loop = program("def f(x):\n    while True:\n        x = x + 1\n    return x\n")
    code, _, err = cli(capsys, "grad", loop, "--at", "x=1", "--max-steps", "1000")
    assert code == 2 and "more than 1,000 steps" in err and "--max-steps" in err
    rec = program("""
    def down(x, n):
        return x if n == 0 else down(x, n - 1)
    def f(x):
        return down(x, 300)
    """, "rec.py")
    code, _, err = cli(capsys, "grad", rec, "--at", "x=1")
    assert code == 2 and "recursion deeper than 200" in err
    code, out, _ = cli(capsys, "grad", rec, "--at", "x=1", "--max-depth", "400", "--json")
    assert code == 0 and json.loads(out)["gradient"]["x"] == 1.0
    big = program("def f(x):\n    return x * sum(ones(5000))\n", "big.py")
    code, _, err = cli(capsys, "run", big, "--at", "x=1", "--max-elements", "4000")
    assert code == 2 and "limit of 4,000" in err
    code, out, _ = cli(capsys, "run", big, "--at", "x=1", "--max-elements", "5000", "--json")
    assert code == 0 and json.loads(out)["value"] == 5000.0


def test_huge_array_in_at_is_refused(capsys):
    code, _, err = cli(capsys, "grad", CONTROL, "--at", "a=zeros(10**12)")
    assert code == 2 and "too large" in err


def test_real_process_exit_codes_and_no_traceback(program):
    """The installed entry point, in a process of its own: exit 2 and a clean message."""
    path = program("def f(x):\n    while True:\n        x = x + 1\n    return x\n")
    env = {**os.environ, "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "autodiff", "grad", path, "--at", "x=1", "--max-steps", "100000"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert "step limit" in done.stderr and "Traceback" not in done.stderr
    ok = subprocess.run([sys.executable, "-m", "autodiff", "grad", CONTROL, "--at", "a=2", "--json"],
                        capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0 and json.loads(ok.stdout)["gradient"]["a"] == pytest.approx(
        json.loads(ok.stdout)["value"] / 2)
