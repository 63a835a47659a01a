"""Every sample program runs with the command in its header and gives the numbers it promises.

A header holds one or more blocks:
    #   autodiff grad samples/programs/NAME.py --at ...
    # expect value: NUMBER-OR-LIST
    # expect gradient NAME: NUMBER-OR-LIST
"""
import json
import math
import shlex
from pathlib import Path

import pytest

from autodiff.cli.main import invoke

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "samples" / "programs").glob("*.py"))


def expectations(path):
    """[(argv, expected value, {input: expected gradient})] from the sample's header comment."""
    blocks = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        text = line[1:].strip()
        if text.startswith("autodiff "):
            blocks.append((shlex.split(text)[1:], None, {}))
        elif text.startswith("expect value:"):
            argv, _, grads = blocks[-1]
            blocks[-1] = (argv, json.loads(text.split(":", 1)[1]), grads)
        elif text.startswith("expect gradient "):
            name, value = text[len("expect gradient "):].split(":", 1)
            blocks[-1][2][name.strip()] = json.loads(value)
    return blocks


def close(got, want):
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(close, got, want))
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


CASES = [(p, argv, value, grads) for p in SAMPLES for argv, value, grads in expectations(p)]


def test_every_sample_has_a_command_and_expectations():
    assert len(SAMPLES) >= 12
    for path in SAMPLES:
        blocks = expectations(path)
        assert blocks, f"{path.name} has no command in its header"
        for argv, value, grads in blocks:
            assert argv[1] == f"samples/programs/{path.name}"
            assert value is not None and grads, f"{path.name}: {argv} has no expectations"


@pytest.mark.parametrize("path,argv,value,grads", CASES,
                         ids=[f"{p.stem}:{' '.join(a[2:])}" for p, a, _, _ in CASES])
def test_sample_gives_what_its_header_promises(path, argv, value, grads, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert_promise(argv, value, grads, capsys)


def assert_promise(argv, value, grads, capsys, extra=()):
    """The command of a sample's header, with --json, gives the value and gradients it promises."""
    code = invoke(argv + ["--json", *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert close(doc["value"], value), (doc["value"], value)
    assert set(doc["gradient"]) == set(grads)
    for name, want in grads.items():
        assert close(doc["gradient"][name], want), (name, doc["gradient"][name], want)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_also_runs_without_differentiating(path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv, value, _ = expectations(path)[0]
    code = invoke(["run"] + argv[1:] + ["--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert close(json.loads(out.out)["value"], value)


def test_every_sample_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Sample programs", 1)[1].split("`samples/numpy/`", 1)[0]   # "also `fibonacci.py`, ..."
    missing = [p.name for p in SAMPLES if f"samples/programs/{p.name}" not in readme and f"`{p.name}`" not in section]
    assert not missing, f"README does not mention {missing}"
