"""The `autodiff check` table reads well (issue 13, item 10): it fits 80 columns however long the
case names, keeps each file's name on a multi-file run (a heading per file), and leaves "where"
empty for an exact pass. Through click's runner and through a real terminal."""
import re

from autodiff.cli import main as climain
from autodiff.cli.render import common as render

LONG = "a case whose name goes on and on, the way people describe what they check in CI"

CASES = f'''
[[case]]
name = "{LONG}"
f = "x**2*y + y + 2"
at = {{ x = 3, y = 4 }}

[[case]]
name = "another long one: the gradient of a smooth function of two inputs at random points"
f = "sin(x) * exp(y)"
at = {{ x = 0.3, y = -0.2 }}

[[case]]
name = "kink: abs at 0, where one-sided slopes differ and the convention applies"
f = "abs(x)"
at = {{ x = 0 }}
'''


def files(tmp_path):
    first, second = tmp_path / "first.toml", tmp_path / "second.toml"
    first.write_text(CASES)
    second.write_text('[[case]]\nname = "short"\nf = "x*x"\nat = { x = 2 }\n')
    return str(first), str(second)


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def table_lines(out) -> list:
    """The lines before the warnings and the closing line."""
    return out.split("\n\nwarning")[0].split("\n\n0 failed")[0].splitlines()


def test_the_table_fits_80_columns_with_long_names(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    first, second = files(tmp_path)
    code, out, _ = cli(capsys, "check", first, second)
    assert code == 0
    lines = table_lines(out)
    assert lines and max(len(line) for line in lines) <= 80
    text = " ".join(" ".join(line.split()) for line in lines)
    assert all(word in text for word in LONG.split())      # wrapped in its cell, not cut
    case_lines = [line for line in lines if line.startswith(("a case", "another", "kink", "short"))]
    assert len(case_lines) == 4                             # every case starts on its own line


def test_a_multi_file_run_names_each_file_in_a_heading(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    first, second = files(tmp_path)
    code, out, _ = cli(capsys, "check", first, second)
    lines = out.splitlines()
    assert first in lines and second in lines               # a heading line per file
    assert lines.index(first) < lines.index(second)
    assert "::" not in out.split("warning")[0]              # no file prefix on every row
    code, out, _ = cli(capsys, "check", second)
    assert second not in out.splitlines()                    # one file: no heading


WHERE_CASES = """
[[case]]
name = "exact"
f = "x*x"
at = { x = 2 }

[[case]]
name = "inexact"
f = "sin(x) * exp(y)"
at = { x = 0.3, y = -0.2 }

[[case]]
name = "kink"
f = "abs(x)"
at = { x = 0 }

[[case]]
name = "several points"
f = "exp(sin(x)) * log(x)"
points = [ { x = 1.5 }, { x = 2.5 } ]
"""


def test_where_is_empty_for_exact_passes_only(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    path = tmp_path / "where.toml"
    path.write_text(WHERE_CASES)
    code, out, _ = cli(capsys, "check", str(path))
    assert code == 0
    rows = {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line)[1:] for line in table_lines(out)[1:]}
    assert rows["exact"] == ["1", "pass", "0", "0"]                   # no error: nothing to point at
    assert rows["inexact"][:2] == ["1", "pass"] and rows["inexact"][-1] in ("x", "y")
    assert rows["kink"] == ["1", "kink", "0", "0", "x"]               # a warning has its place
    assert rows["several points"][-1] in ("point 1: x", "point 2: x")  # which point, on several


def test_piped_without_columns_each_case_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    first, _ = files(tmp_path)
    code, out, _ = cli(capsys, "check", first)
    assert any(line.startswith(LONG) for line in out.splitlines())


def test_a_real_terminal_of_80_columns(tmp_path):
    from terminal import run_in_terminal, screen_lines
    first, second = files(tmp_path)
    code, text = run_in_terminal(["check", first, second], {"COLUMNS": "80", "LINES": "50"})
    lines = [line.rstrip() for line in screen_lines(text)]
    assert code == 0 and max(len(line) for line in lines) <= 80
    assert first in lines and second in lines
    assert any(line.startswith("a case whose name") for line in lines)


MATRIX_CASE = '''
[[case]]
name = "matrix"
f = "sum(W**2)/2"
at = { W = [[100, 2, 1], [3, 4, 5]] }
grad = { W = "where(W > 50, W + 9.95, W + 9.5)" }
'''


def test_the_table_tells_the_truth_about_a_matrix_entry(capsys, monkeypatch, tmp_path):
    """issue 29 item 7: "where" shows the whole entry (`W[0, 2]`, not `2]`); "abs err" is the
    largest absolute error of the case (9.95 at W[0, 0]), not the one at the worst relative error
    (9.5 at W[0, 2]); the JSON message names the entry `entry` names."""
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "m.grad.toml"
    path.write_text(MATRIX_CASE)
    code, out, _ = cli(capsys, "check", str(path))
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("matrix"))
    assert row.split() == ["matrix", "1", "fail", "9.95", "0.905", "W[0,", "2]"]
    assert row.rstrip().endswith("W[0, 2]")
    code, out, _ = cli(capsys, "check", str(path), "--json")
    case = __import__("json").loads(out)["cases"][0]
    assert abs(case["worst_abs_err"] - 9.95) < 1e-9
    assert abs(case["worst_rel_err"] - 9.5 / 10.5) < 1e-12
    assert case["entry"] == "W[0, 2]"
    assert case["where"] == "point 1 (W=[[100.0, 2.0, 1.0], [3.0, 4.0, 5.0]]), W[0, 2]"
    assert case["message"].startswith(case["where"] + ": fail: hand-derived 10.5 vs AD 1:")
    assert [f["entry"] for f in case["failures"]][:3] == ["W[0, 0]", "W[0, 1]", "W[0, 2]"]
