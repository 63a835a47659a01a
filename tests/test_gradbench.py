"""benchmarks/gradbench.py's JAX engine: its child gives our answers on every eval, and a Python
without jax leaves the JAX columns out with a note. No times are checked (it is a benchmark).

The child needs a Python with jax (never a project dependency): this one, or the one named by
AUTODIFF_BENCH_JAX_PYTHON; without either the child's test is skipped."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_gradbench():
    spec = importlib.util.spec_from_file_location("gradbench", ROOT / "benchmarks" / "gradbench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_with_jax():
    for python in (os.environ.get("AUTODIFF_BENCH_JAX_PYTHON"), sys.executable):
        if python and subprocess.run([python, "-c", "import jax"], capture_output=True).returncode == 0:
            return python
    pytest.skip("no Python with jax (set AUTODIFF_BENCH_JAX_PYTHON)")


def test_a_python_without_jax_skips_the_jax_columns_with_a_note(capsys):
    gradbench = load_gradbench()
    assert gradbench.find_jax_python(str(ROOT / "no-such-python")) is None
    assert "jax is not importable" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["llsq", "lse", "kmeans", "ode", "gmm", "lstm", "nested"])
def test_the_jax_child_gives_our_answers_at_the_smallest_size(name):
    jax_python = python_with_jax()
    gradbench = load_gradbench()
    from_evals = importlib.util.spec_from_file_location("gradbench_evals", ROOT / "benchmarks" / "gradbench_evals.py")
    evals = importlib.util.module_from_spec(from_evals)
    from_evals.loader.exec_module(evals)
    args = [name, str(evals.SIZES[name][0]), "--repeats", "1"]
    jitted = gradbench.spawn(jax_python, ["jax", *args])
    ours = gradbench.spawn(sys.executable, ["ours", *args])
    assert "error" not in jitted and "error" not in ours, (jitted, ours)
    assert gradbench.agree(ours, jitted), (ours, jitted)
    assert sorted(jitted["grad"]) == sorted(ours["grad"]) and jitted["first"] > 0 and len(jitted["times"]) == 1


@pytest.mark.parametrize("flag, value", [("--rounds", "0"), ("--warm-up", "-1")])
def test_a_count_below_its_least_is_refused_with_a_usage_message(flag, value, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    gradbench = load_gradbench()
    with pytest.raises(SystemExit) as stopped:
        gradbench.main([flag, value])
    assert stopped.value.code == 2 and flag in capsys.readouterr().err


def test_an_engine_whose_python_is_missing_gives_an_error_not_a_crash():
    gradbench = load_gradbench()
    out = gradbench.spawn(str(ROOT / "no-such-python"), ["torch", "llsq", "10", "--repeats", "1"])
    assert out["error"].startswith(f"cannot run {ROOT / 'no-such-python'}: ")
