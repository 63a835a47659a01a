"""`derivative --explain` (issue 13, item 8): for order k by nested tapes, the reverse sweep of the
tape that recorded f's computation and the sweeps for f' ... f^(k-1), node by node as grad
--explain shows a sweep, with the part of the tape each computation recorded; with --mode
forward, the dual-number pass of order 1 (higher orders are refused, naming --mode reverse).
Every stage's result is the derivative `derivative` prints."""
import json

import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.views import derivative_steps

from test_json_schema import SCHEMA, problems


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def derivative_json(capsys, *args) -> dict:
    code, out, err = cli(capsys, "derivative", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_each_stage_is_the_sweep_of_the_tape_that_recorded_the_orders_below(capsys):
    code, out, err = cli(capsys, "derivative", "sin(x)*x", "--at", "x=0.5", "-n", "2", "--explain")
    assert code == 0, err
    assert "stage 1: f' = the reverse sweep of the tape that recorded f's computation (n1…n3), 3 entries" in out
    assert ("stage 2: f'' = the reverse sweep of the tape that recorded f's computation (n1…n3) and the sweep "
            "for f' (n4…n9), 8 entries") in out
    stage2 = out.split("stage 2:")[1]
    # the sweep for f' was taped: sin's rule recorded cos at sin's place, the seed 1 is a constant
    assert "recorded by the sweep for f':" in stage2 and "n7 = cos(n1) = 0.8775825618903728    [1:1 `sin(x)`]" in stage2
    assert "∂f'/∂n9 = 1  (the seed: n9 is the output)" in stage2
    assert ("∂f'/∂n1 = ∂f'/∂n2 · ∂n2/∂n1 + ∂f'/∂n5 · ∂n5/∂n1 + ∂f'/∂n7 · ∂n7/∂n1 = 1 · 0.8775825618903728 + "
            "0.8775825618903728 · 1 + 0.5 · (-0.479425538604203) = 1.515452354478644") in stage2
    assert "f'' = df'/dx = 1.515452354478644" in stage2
    assert "1.515452354478644" in stage2.split("d^k f / dx^k")[1]          # then the result's table


@pytest.mark.parametrize("args", [
    ["exp(x**2)", "--at", "x=0.7", "-n", "6"],
    ["sin(x)*exp(x)", "--at", "x=0.3", "-n", "5"],
    ["x**3*y + y**2", "--at", "x=2,y=5", "--wrt", "x", "-n", "4"],
    ["samples/higher/perturbation.py", "--at", "x=1.5", "-n", "3"],
    ["abs(x)*x", "--at", "x=-2", "-n", "3"],
])
def test_every_stage_gives_the_derivative_that_derivative_prints(capsys, args, monkeypatch):
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    printed = derivative_json(capsys, *args)
    doc = derivative_json(capsys, *args, "--explain")
    assert problems(doc, SCHEMA["$defs"]["derivative_explain"]) == []
    assert [s["derivative"] for s in doc["stages"]] == printed["derivatives"] == doc["derivatives"]
    assert [s["tape_entries"] for s in doc["stages"]] == printed["cost"]["tape_entries"]
    for stage in doc["stages"]:
        if stage["sweep"]:                 # the sweep ends at the input: its adjoint is the stage's result
            assert stage["sweep"][-1]["node"] == "n1" and stage["sweep"][-1]["adjoint"] == stage["derivative"]
            assert stage["sweep"][0]["seed"] is True and stage["sweep"][0]["adjoint"] == 1.0


def test_the_json_says_which_computation_recorded_each_part(capsys):
    doc = derivative_json(capsys, "sin(x)*x", "--at", "x=0.5", "-n", "3", "--explain")
    assert doc["mode"] == "reverse" and doc["wrt"] == ["x"] and doc["inputs"] == {"x": 0.5}
    assert doc["listed"] == 3 and doc["forward_passes"] == []
    assert [[part["order"] for part in s["recorded"]] for s in doc["stages"]] == [[0], [0, 1], [0, 1, 2]]
    assert [part["by"] for part in doc["stages"][2]["recorded"]] == ["f's computation", "the sweep for f'",
                                                                    "the sweep for f''"]
    assert [(s["of"], s["gives"]) for s in doc["stages"]] == [("f", "f'"), ("f'", "f''"), ("f''", "f'''")]
    nodes = {nd["id"]: nd for nd in doc["stages"][1]["graph"]["nodes"]}
    assert nodes["n7"]["op"] == "cos" and nodes["n7"]["text"] == "sin(x)"      # the rule's op, at sin's place
    assert doc["stages"][1]["graph"]["output_node"] == "n9"
    assert doc["stages"][1]["text"][0] == "∂f'/∂n9 = 1  (the seed: n9 is the output)"


def test_a_constant_derivative_leaves_nothing_to_sweep(capsys):
    code, out, _ = cli(capsys, "derivative", "x*x", "--at", "x=3", "-n", "3", "--explain")
    assert code == 0
    stage3 = out.split("stage 3:")[1]
    assert "f'' does not depend on x (nothing reaching it was recorded): nothing to sweep" in stage3
    assert "f''' = df''/dx = 0" in stage3


def test_long_tapes_are_cut_and_too_long_ones_not_listed(capsys, monkeypatch):
    code, out, _ = cli(capsys, "derivative", "tanh(x)", "--at", "x=0.5", "-n", "7", "--explain")
    stage7 = out.split("stage 7:")[1]
    assert code == 0 and "345 entries" in stage7.splitlines()[0]
    assert "nodes left out" in stage7 and "steps left out" in stage7
    monkeypatch.setattr(derivative_steps, "MAX_LISTED_ENTRIES", 10)
    code, out, _ = cli(capsys, "derivative", "exp(x**2)", "--at", "x=0.7", "-n", "4", "--explain")
    assert code == 0 and "stage 3: f''' = the reverse sweep of the tape that recorded f's computation and the " \
        "sweeps for f' … f'', 19 entries\n  not listed: over 10 entries" in out
    assert out.count("not listed") == 2
    assert "f^(4) = df'''/dx = 64.25057812339564" in out
    doc = derivative_json(capsys, "exp(x**2)", "--at", "x=0.7", "-n", "4", "--explain")
    assert doc["listed"] == 2 and [s["listed"] for s in doc["stages"]] == [True, True, False, False]
    assert "sweep" not in doc["stages"][2] and doc["stages"][3]["derivative"] == doc["derivatives"][3]


def test_forward_mode_shows_the_dual_numbers_of_order_one(capsys):
    code, out, err = cli(capsys, "derivative", "sin(x)*x", "--at", "x=0.5", "--explain", "--mode", "forward")
    assert code == 0, err
    assert "n2 = sin(n1) = 0.479425538604203 + 0.8775825618903728ε" in out
    assert "f' = df/dx = 0.9182168195493894" in out
    doc = derivative_json(capsys, "x*y", "--at", "x=2,y=3", "--wrt", "x", "--explain", "--mode", "forward")
    assert problems(doc, SCHEMA["$defs"]["derivative_explain"]) == []
    assert doc["stages"] == [] and [(p["wrt"], p["derivative"]) for p in doc["forward_passes"]] == [(["x"], 3.0)]
    assert doc["derivatives"] == [3.0]


def test_forward_mode_beyond_order_one_is_refused_naming_reverse(capsys):
    code, out, err = cli(capsys, "derivative", "sin(x)", "--at", "x=0.5", "-n", "2", "--explain", "--mode", "forward")
    assert code == 2 and out == "" and "use --mode reverse" in err and "order 2 nests 2 levels" in err


@pytest.mark.parametrize("extra", [["--check"], ["--out", "d.json"], ["--rtol", "1e-3"], ["--step", "1e-3"]])
def test_explain_with_a_check_or_out_is_a_usage_error(capsys, extra, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "derivative", "sin(x)", "--at", "x=1", "--explain", *extra)
    assert code == 2 and "--explain" in err and extra[0] in err
    assert not (tmp_path / "d.json").exists()


def test_the_python_api_explains_derivatives():
    from autodiff.engine import api
    ex = api.explain_derivatives("x**3*y", at={"x": 2.0, "y": 5.0}, order=3, wrt="x")
    assert [s.derivative for s in ex.stages] == ex.result.derivatives == [60.0, 60.0, 30.0]
    assert [[p.by for p in s.parts] for s in ex.stages] == [[0], [0, 1], [0, 1, 2]]
    with pytest.raises(api.SourceError, match="one level of dual numbers"):
        api.explain_derivatives("sin(x)", at={"x": 1.0}, order=2, mode="forward")
