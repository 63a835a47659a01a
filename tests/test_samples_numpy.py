"""The numpy samples (samples/numpy/: a Gaussian mixture, least squares by cumprod, an LSTM
cell, logistic regression) give the numbers their headers promise, checked independently
against numpy/scipy when they were written; and each is in the README."""
from pathlib import Path

import pytest

from test_samples_programs import assert_promise, expectations

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples" / "numpy").glob("*.py"))
# the samples written in numpy's own spelling (np., keywords, methods), beside the plain ones
NP_SPELLING_SAMPLES = {"gaussian_mixture", "lstm_cell", "logistic_regression"}
CASES = [(p, argv, value, grads) for p in SAMPLES for argv, value, grads in expectations(p)]


def test_the_four_samples_are_there_with_commands_and_numbers():
    assert {p.stem for p in SAMPLES} == {"gmm", "least_squares", "lstm", "logistic_loss_stable"} | NP_SPELLING_SAMPLES
    assert {p for p, _, _, _ in CASES} == set(SAMPLES), "every sample has a command and its numbers"
    for path, argv, value, grads in CASES:
        assert argv[1] == f"samples/numpy/{path.name}" and value is not None and grads


@pytest.mark.parametrize("path,argv,value,grads", CASES, ids=[p.stem for p, _, _, _ in CASES])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_numpy_sample_gives_what_its_header_promises(path, argv, value, grads, mode, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert_promise(argv, value, grads, capsys, ["--mode", "forward"] if mode == "forward" else [])


def test_every_numpy_sample_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Sample programs", 1)[1].split("`samples/numpy/`", 1)[1].split("`samples/project/`", 1)[0]
    assert [p.name for p in SAMPLES if f"samples/numpy/{p.name}" not in readme and f"`{p.name}`" not in section] == []
