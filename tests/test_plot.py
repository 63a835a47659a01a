"""`autodiff plot`: f and its derivatives by AD over a grid, kinks and branch switches marked,
drawn in the terminal or written as an image."""
import json
import math
import sys

import pytest

from autodiff.cli.render import common as render
from autodiff.cli.main import invoke
from autodiff.engine import api
from autodiff.engine.views.plotdata import sample


def cli(capsys, *args):
    render._consoles.clear()
    code = invoke(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_derivatives_of_sin_are_exact_at_every_point():
    data = sample(api.load("sin(x)"), "x", -7.0, 7.0, 41, order=3)
    for x, f, d1, d2, d3 in zip(data.xs, *data.series):
        assert f == math.sin(x)
        assert math.isclose(d1, math.cos(x), rel_tol=1e-15, abs_tol=1e-15)
        assert math.isclose(d2, -math.sin(x), rel_tol=1e-15, abs_tol=1e-15)
        assert math.isclose(d3, -math.cos(x), rel_tol=1e-15, abs_tol=1e-15)
    assert data.marks == []


def test_orders_of_a_polynomial():
    # (x = 0 left out: the pow rule's 4th derivative there is 0 · inf = nan, reported upstream)
    data = sample(api.load("x**3 - 2*x"), "x", 0.25, 2.0, 5, order=4)
    for x, f, d1, d2, d3, d4 in zip(data.xs, *data.series):
        assert math.isclose(f, x**3 - 2 * x, abs_tol=1e-15)
        assert math.isclose(d1, 3 * x * x - 2, abs_tol=1e-15)
        assert math.isclose(d2, 6 * x, abs_tol=1e-15)
        assert (d3, d4) == (6.0, 0.0)
    assert data.marks == []


def test_kink_at_a_grid_point_and_kinks_crossed_between_points():
    at_point = sample(api.load("abs(x)"), "x", -1.0, 1.0, 21)
    assert [(m.kind, m.x, m.line, m.column) for m in at_point.marks] == [("kink", 0.0, 1, 1)]
    between = sample(api.load("abs(x) + relu(x - 0.5)"), "x", -1.0, 1.0, 20)
    crossed = [(m.kind, m.op, m.column) for m in between.marks]
    assert crossed == [("kink crossed", "abs", 1), ("kink crossed", "relu", 10)]
    lo, hi = between.marks[0].between
    assert lo < 0.0 < hi
    lo, hi = between.marks[1].between
    assert lo < 0.5 < hi


def test_branch_switch_in_a_program(tmp_path):
    prog = tmp_path / "branch.py"
    prog.write_text("def f(x):\n    if x > 1:\n        return x * x\n    return 2 * x - 1\n")
    tgt = api.load(str(prog))
    data = sample(tgt, "x", 0.0, 2.0, 10)
    switches = [m for m in data.marks if m.kind == "branch switch"]
    assert len(switches) == 1
    m = switches[0]
    assert m.between[0] < 1.0 < m.between[1] and (m.line, m.column) == (2, 8)
    assert m.detail == "the condition changes from False to True"
    i = data.xs.index(m.between[1])
    assert data.series[1][i] == 2 * data.xs[i] and data.series[1][i - 1] == 2.0


def _braille(text) -> bool:
    return any(0x2800 < ord(ch) <= 0x28FF for ch in text)


def test_terminal_drawing(capsys):
    code, out, _ = cli(capsys, "plot", "sin(x)", "--range", "-7:7")
    assert code == 0
    assert "plot of sin(x) over x in [-7, 7]" in out
    assert "-7" in out and " 7\n" in out


def test_with_colour_curves_are_braille_dots_told_apart_by_colour():
    from autodiff.cli.render.plot_term import draw
    xs = [i / 10 for i in range(-70, 71)]
    lines, _ = draw(xs, [[math.sin(x) for x in xs], [math.cos(x) for x in xs]], ["f", "f′ = df/dx"], [])
    text = "\n".join(line.plain for line in lines)
    assert _braille(text) and "━━ f   ━━ f′ = df/dx" in text
    assert {span.style for line in lines[:-3] for span in line.spans} >= {"cyan", "magenta"}


def _curve_glyphs(out) -> set:
    canvas = [line.split("┤", 1)[1] for line in out.splitlines() if "┤" in line]
    return set("".join(canvas)) - {" ", "┈", "┆"}


def test_without_colour_each_curve_has_its_own_glyph_named_in_the_legend(capsys):
    code, out, _ = cli(capsys, "plot", "sin(x)", "--range", "-7:7", "--order", "2")     # piped: no colour
    assert code == 0 and not _braille(out)
    assert _curve_glyphs(out) == {"•", "+", "x"}
    assert "•• f   ++ f′ = df/dx   xx f″ = d²f/dx²" in out
    code, out, _ = cli(capsys, "plot", "abs(x)", "--range", "-1:1", "--points", "21")
    assert "┆ kink / branch switch" in out and "┆" in out.split("└")[0]


def _real_plot(env_extra, tty):
    """The plot as a real process writes it: to a pipe, or to a pseudo-terminal (colour on)."""
    import os
    import subprocess
    from terminal import run_in_terminal
    args = ["plot", "sin(x)", "--range", "-7:7", "--order", "1"]
    env = {**env_extra, "COLUMNS": "80"}
    if tty:
        return run_in_terminal(args, env)[1]
    env = {**{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}, **env}
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True, env=env,
                          timeout=60).stdout


def test_a_real_process_piped_or_with_no_color_draws_glyphs():
    piped = _real_plot({}, tty=False)
    assert not _braille(piped) and "\x1b[" not in piped and "•• f   ++ f′ = df/dx" in piped
    no_color = _real_plot({"NO_COLOR": "1"}, tty=True)
    assert not _braille(no_color) and "•• f" in no_color and "++ f′ = df/dx" in no_color
    coloured = _real_plot({}, tty=True)
    assert _braille(coloured) and "\x1b[" in coloured and "━━" in coloured


def test_terminal_marks_listed(capsys):
    code, out, _ = cli(capsys, "plot", "abs(x)", "--range", "-1:1", "--points", "21", "--order", "2")
    assert code == 0
    assert "note: kink at 0 (line 1, column 1: abs at 0: derivative taken as 0)" in out
    assert "f″ = d²f/dx²" in out


def test_png_written_and_readable(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from matplotlib import image
    path = tmp_path / "f.png"
    code, out, _ = cli(capsys, "plot", "abs(x) + sin(x)", "--range", "-3:3", "--order", "2", "-o", str(path))
    assert code == 0 and f"wrote {path}" in out
    pixels = image.imread(str(path))
    assert pixels.shape[:2] == (450, 800)


def test_svg_written(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "f.svg"
    code, _, _ = cli(capsys, "plot", "x**2", "--range", "0:1", "-o", str(path))
    assert code == 0 and path.read_text().lstrip().startswith("<?xml")


def test_missing_matplotlib_is_a_clear_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # as if it were not installed
    code, _, err = cli(capsys, "plot", "x", "--range", "0:1", "-o", str(tmp_path / "f.png"))
    assert code == 2 and "autodiff[plot]" in err


def test_json_series_and_marks(capsys):
    code, out, _ = cli(capsys, "plot", "x*y", "--range", "y=0:1", "--at", "x=2", "--points", "5", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["wrt"] == ["y"] and doc["x"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert doc["series"] == {"f": [0.0, 0.5, 1.0, 1.5, 2.0], "f'": [2.0] * 5}


def test_points_that_fail_are_gaps(capsys):
    code, out, _ = cli(capsys, "plot", "samples/programs/control.py", "--range", "-1:1", "--points", "21",
                       "--max-steps", "2000", "--json")
    assert code == 0
    doc = json.loads(out)
    assert [e["x"] for e in doc["errors"]] == [0.0]
    assert doc["series"]["f"][10] == "nan"
    assert any(m["kind"] == "branch switch" for m in doc["marks"])


def test_domain_gaps_and_poles(capsys):
    code, out, _ = cli(capsys, "plot", "log(x)", "--range", "-1:1", "--points", "20")
    assert code == 0 and "f is not finite at 10 of 20 points" in out
    code, out, _ = cli(capsys, "plot", "1/x", "--range", "-1:1", "--points", "201")
    assert code == 0 and "clipped" in out and "f is not finite at 1 of 201 points" in out


def test_y_range_clips_poles_only():
    from autodiff.cli.render.plot_term import y_range
    xs = [i / 100 for i in range(-300, 301)]
    lo, hi, clipped = y_range([[math.sin(x) for x in xs]])
    assert not clipped and lo == min(math.sin(x) for x in xs) and hi == max(math.sin(x) for x in xs)
    lo, hi, clipped = y_range([[math.tan(x) for x in xs]])
    assert clipped and -20 < lo < -3 and 3 < hi < 20


@pytest.mark.parametrize("args, fragment", [
    (["--range", "3:1"], "start must be below"),
    (["--range", "a:b"], "must be a constant"),
    (["--range", "1"], "A:B"),
    (["--range", "z=0:1"], "no input 'z'"),
    (["--range", "0:1", "--order", "7"], "7"),
    (["--range", "0:1", "-o", "f.gif"], ".png"),
])
def test_usage_errors(capsys, args, fragment):
    code, _, err = cli(capsys, "plot", "sin(x)", *args)
    assert code == 2 and fragment in err


def test_several_inputs_need_a_name(capsys):
    code, _, err = cli(capsys, "plot", "x*y", "--range", "0:1")
    assert code == 2 and "--range NAME=A:B" in err


@pytest.mark.parametrize("src", ["x * [1, 2]", "(x, x)"])
def test_non_scalar_output_is_refused(capsys, src):
    code, _, err = cli(capsys, "plot", src, "--range", "0:1", "--points", "3")
    assert code == 2 and "scalar" in err


def test_kinks_sample_marks():
    data = sample(api.load("samples/views/kinks.py"), "x", -2.0, 3.0, 201)
    assert [(m.kind, m.line) for m in data.marks] == [("kink", 8), ("branch switch", 9), ("kink", 12)]
    assert [m.x for m in data.marks if m.kind == "kink"] == [-0.5, 2.0]


def test_derivative_curves_break_at_kinks():
    from autodiff.engine.views.plotdata import breaks
    data = sample(api.load("abs(x)"), "x", -1.0, 1.0, 21)            # x = 0 is the 11th point
    assert breaks(data) == {10, 11}
    assert data.series[1][10] == 0.0                                  # abs'(0) = 0, the convention
    between = sample(api.load("abs(x)"), "x", -1.0, 1.0, 20)
    assert breaks(between) == {10}
