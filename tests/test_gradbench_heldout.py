"""benchmarks/gradbench_heldout.py: every held-out program (gradbench_heldout_evals.py, GradBench's
evals written as people write them) still runs and gives the right gradient at its smallest size,
checked against central differences (--check-only: nothing is timed, no torch needed); the check
itself catches a wrong gradient. No times are checked (it is a benchmark)."""
import sys

import numpy as np
import pytest

import autodiff
from test_readme_tables import ROOT, benchmark_script as load

EVALS = ["llsq", "lse", "kmeans", "gmm", "ode", "det", "lstm", "ht", "particle", "saddle"]


@pytest.mark.parametrize("name", EVALS)
def test_the_held_out_program_gives_the_gradient_at_its_smallest_size(name, capsys):
    heldout = load("gradbench_heldout")
    status = heldout.main(["--check-only", "--sizes", "smallest", "--reference", "fd", "--evals", name])
    out = capsys.readouterr().out
    row = [line for line in out.splitlines() if line.startswith(name + " ")]
    assert status == 0 and len(row) == 1 and row[0].endswith(" ok"), out


def test_every_eval_has_a_program_a_reference_sizes_and_inputs_in_wrt():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    evals = load("gradbench_heldout_evals")
    assert sorted(evals.PROGRAMS) == sorted(EVALS) == sorted(evals.REFERENCES) == sorted(evals.SIZES)
    for name in EVALS:
        at = evals.inputs(name, evals.SIZES[name][0])
        assert set(evals.WRT[name]) <= set(at), name


def test_central_differences_catch_a_wrong_gradient(tmp_path):
    heldout = load("gradbench_heldout")
    program = tmp_path / "cube.py"
    program.write_text("def f(x):\n    return sum(x ** 3)\n")
    f = autodiff.function(str(program))
    x = np.array([0.5, -1.0, 2.0])
    right = heldout.central_differences(f, {"x": x}, ["x"], {"x": 3 * x ** 2})
    wrong = heldout.central_differences(f, {"x": x}, ["x"], {"x": 3 * x ** 2 + np.array([0.0, 0.0, 1e-6])})
    assert right <= heldout.TOLERANCE < wrong
    assert wrong == pytest.approx(1e-6 / 12.0, rel=1e-3)     # |error| / max(1, |fd|) at x = 2


def test_an_unknown_eval_is_refused_with_a_usage_message(capsys):
    heldout = load("gradbench_heldout")
    with pytest.raises(SystemExit) as stopped:
        heldout.main(["--evals", "llsq,nosuch"])
    assert stopped.value.code == 2 and "unknown eval 'nosuch'" in capsys.readouterr().err


def test_the_ode_program_gives_the_gradient_where_the_steps_reach_the_last_element(tmp_path):
    # at GradBench's sizes (4 s < n) the last element's gradient is exactly 0, so the check above
    # compares zeros; with n = 8 and s = 10 every x[i] moves y[-1]
    heldout = load("gradbench_heldout")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    evals = load("gradbench_heldout_evals")
    program = tmp_path / "ode.py"
    program.write_text(evals.PROGRAMS["ode"])
    f = autodiff.function(str(program))
    at = evals.inputs("ode", (8, 10))
    grads = f.grad(at, wrt=["x"])
    assert np.all(grads["x"] != 0.0)
    assert heldout.central_differences(f, at, ["x"], grads, per_input=8) <= heldout.TOLERANCE
