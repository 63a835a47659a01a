"""benchmarks/compare_builds.py and the --json figures the benchmarks print for it
(benchmarks/_figures.py): a build that cannot run a script is reported as failed for that script
while the other build's figures are still tabled; the verdict compares the ranges. No times are
checked (it is a benchmark)."""
import subprocess
import sys

import pytest

from test_readme_tables import ROOT, benchmark_script as load


def test_the_figures_line_is_read_back_and_a_run_without_one_gives_none():
    figures = load("_figures")
    text = "a table\n" + '{"figures": {"a (ms)": {"median": 2.0, "unit": "ms"}}}\n'
    assert figures.read_figures(text) == {"a (ms)": {"median": 2.0, "unit": "ms"}}
    assert figures.read_figures("a table\n") is None
    assert figures.of_samples([3.0, 1.0, 2.0], "ms", 1e3) == {"median": 2000.0, "min": 1000.0, "max": 3000.0,
                                                              "unit": "ms"}


def test_verdicts_compare_the_ranges_of_the_two_builds():
    compare = load("compare_builds")
    # (median, lowest, highest, best run, worst run, unit)
    before = (10.0, 9.0, 11.0, 9.5, 10.5, "ms")
    assert compare.verdict(before, (13.0, 12.0, 14.0, 12.5, 13.5, "ms")) == "worse"
    assert compare.verdict(before, (6.0, 5.0, 7.0, 5.5, 6.5, "ms")) == "better"
    assert compare.verdict(before, (10.5, 9.5, 12.0, 10.0, 11.0, "ms")) == "~"
    assert compare.verdict((1.0, 1.0, 1.0, 1.0, 1.0, "ms"), (2.0, 2.0, 2.0, 2.0, 2.0, "ms")) == "-"
    assert compare.verdict((130.0,) * 5 + ("entries",), (131.0,) * 5 + ("entries",)) == "worse"


def test_a_build_that_cannot_run_a_script_is_reported_failed_and_the_other_tabled(tmp_path, capsys):
    compare = load("compare_builds")
    bare = tmp_path / "bare"                         # a build without numpy or autodiff
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    assert compare.main([str(bare), sys.executable, "--runs", "1", "--scripts", "derivative_cost"]) == 0
    out = capsys.readouterr().out
    assert "BEFORE failed (1 of its runs): exit 1: ModuleNotFoundError" in out
    derivative_cost = load("derivative_cost")
    entries = sum(derivative_cost.tape_entries("sin(x)"))
    row = next(line for line in out.splitlines() if line.startswith("sin(x) tape entries"))
    assert row.split()[4:6] == ["-", f"{entries}"], row


def test_a_build_without_a_python_is_refused_with_a_usage_message(tmp_path, capsys):
    compare = load("compare_builds")
    with pytest.raises(SystemExit) as stopped:
        compare.main([str(tmp_path / "nowhere"), sys.executable])
    assert stopped.value.code == 2 and "BEFORE: no Python at" in capsys.readouterr().err
