"""`--dtype float32` applies to constant-only expressions too (issue 13, item 5)."""
import json

import numpy as np
import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine import api


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


@pytest.mark.parametrize("text,want", [("0.1+0.2", np.float32(0.1) + np.float32(0.2)), ("1e39", np.inf),
                                       ("1/3", np.float32(1) / np.float32(3))])
def test_constant_only_expressions_compute_in_float32(text, want):
    value = api.evaluate(text, dtype_name="float32").value
    assert np.asarray(value).dtype == np.float32 and float(value) == float(want)


def test_float64_keeps_python_floats():
    assert api.evaluate("0.1+0.2").value == 0.1 + 0.2


def test_whole_literals_stay_indices_in_float32():
    assert float(api.evaluate("x[1] + x[2]", at={"x": [1.0, 2.0, 3.0]}, dtype_name="float32").value) == 5.0


def test_cli_prints_the_float32_value(capsys):
    code, out, _ = cli(capsys, "run", "0.1+0.2", "--dtype", "float32", "--json")
    assert code == 0 and json.loads(out)["value"] == pytest.approx(0.3, abs=1e-7)
    assert "0.30000000000000004" not in out
    code, out, _ = cli(capsys, "run", "1e39", "--dtype", "float32", "--json")
    assert json.loads(out)["value"] == "inf"
