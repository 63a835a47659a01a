"""`grad --explain`: the reverse sweep in chain-rule form (figure D-3), the dual-number forward
sweep (figure D-2); and the kink notes that `grad` prints."""
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.cli.render import common as render
from autodiff.cli.main import invoke
from autodiff.cli.render.views import forward_lines, reverse_lines
from autodiff.engine import api
from autodiff.engine.views import explain as explain_view

SEED = "x**2*y + y + 2"


def cli(capsys, *args):
    render._consoles.clear()
    code = invoke(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def reverse(src, at, **kw):
    r = api.grad(src, at=at, keep_tape=True, **kw)
    return explain_view.reverse(r, src), r


def test_reverse_steps_of_the_seed_in_chain_rule_form():
    ex, _ = reverse(SEED, {"x": 3, "y": 4})
    assert reverse_lines(ex) == [
        "∂f/∂n7 = 1  (the seed: n7 is the output)",
        "∂f/∂n6 = ∂f/∂n7 · ∂n7/∂n6 = 1 · 1 = 1",
        "∂f/∂n5 = ∂f/∂n6 · ∂n6/∂n5 = 1 · 1 = 1",
        "∂f/∂n4 = ∂f/∂n5 · ∂n5/∂n4 = 1 · 4 = 4",
        "∂f/∂n2 = ∂f/∂n5 · ∂n5/∂n2 + ∂f/∂n6 · ∂n6/∂n2 = 1 · 9 + 1 · 1 = 10",
        "∂f/∂n1 = ∂f/∂n4 · ∂n4/∂n1 = 4 · 6 = 24",
    ]


def test_cli_explain_ends_with_each_inputs_partial(capsys):
    code, out, _ = cli(capsys, "grad", SEED, "--at", "x=3,y=4", "--explain")
    assert code == 0
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    assert lines[-2:] == ["∂f/∂x = ∂f/∂n1 = 24", "∂f/∂y = ∂f/∂n2 = 10"]
    assert "n4 = n1 ** n3 = 9    [1:2 `**`]" in lines


EXPRESSIONS = ["sin(x) * exp(y) - x / y", "x**2*y + y + 2", "tanh(x * y) + log(y) * x",
               "sqrt(x * x + y * y) / (1 + x)"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(EXPRESSIONS), st.floats(0.2, 3.0), st.floats(0.2, 3.0))
def test_steps_add_up_to_the_gradient(src, x, y):
    ex, r = reverse(src, {"x": x, "y": y})
    inputs = {nd.op: nd.id for nd in ex.graph.nodes if nd.kind == "input"}
    totals = {s.node: s.total for s in ex.steps}
    for name, g in r.gradient.items():
        assert totals[inputs[name]] == g
    for step in ex.steps:
        if step.seed:
            continue
        assert math.isclose(sum(t.contribution for t in step.terms), step.total, rel_tol=1e-12, abs_tol=1e-12)
        for t in step.terms:
            assert math.isclose(t.g * t.local, t.contribution, rel_tol=1e-12, abs_tol=1e-300)


def test_forward_passes_show_dual_numbers_and_match_reverse():
    r = api.grad(SEED, at={"x": 3, "y": 4}, keep_tape=True)
    passes = explain_view.forward(api.load(SEED), r.inputs, source=SEED)
    assert [(p.input, p.derivative) for p in passes] == [("x", 24.0), ("y", 10.0)]
    lines = forward_lines(passes[0])
    assert lines[0] == "n1 = x = 3 + 1ε    ṅ1 = 1  (the seed)"
    assert "n4 = n1 ** n3 = 9 + 6ε    ṅ4 = ∂n4/∂n1 · ṅ1 = 6 · 1 = 6" in lines
    assert "n5 = n4 * n2 = 36 + 24ε    ṅ5 = ∂n5/∂n4 · ṅ4 = 4 · 6 = 24" in lines
    assert lines[-1] == "n7 = n6 + n3 = 42 + 24ε    ṅ7 = ∂n7/∂n6 · ṅ6 = 1 · 24 = 24"
    assert "n6 = n5 + n2 = 40 + 10ε    ṅ6 = ∂n6/∂n5 · ṅ5 + ∂n6/∂n2 · ṅ2 = 1 · 9 + 1 · 1 = 10" in \
        forward_lines(passes[1])


def test_cli_forward_explain(capsys):
    code, out, _ = cli(capsys, "grad", SEED, "--at", "x=3,y=4", "--mode", "forward", "--explain")
    assert code == 0
    assert "pass for x" in out and "pass for y" in out
    assert "∂f/∂x = ṅ7 = 24" in out and "∂f/∂y = ṅ7 = 10" in out


def test_explain_and_check_together_is_a_usage_error(capsys):
    code, _, err = cli(capsys, "grad", SEED, "--at", "x=3,y=4", "--explain", "--check")
    assert code == 2 and "--explain" in err


def test_arrays_are_shown_by_shape_and_preview(capsys):
    code, out, _ = cli(capsys, "grad", "sum(x * x)", "--at", "x=[1,2,3]", "--explain")
    assert code == 0
    assert "n2 = n1 * n1 = (3,) [1, 4, 9]" in out
    assert ("∂f/∂n1 = ∂f/∂n2 · ∂n2/∂n1 + ∂f/∂n2 · ∂n2/∂n1 = (3,) [1, 2, 3] + (3,) [1, 2, 3] = "
            "(3,) [2, 4, 6]") in out
    code, out, _ = cli(capsys, "grad", "sum(x * x)", "--at", "x=[1,2,3]", "--explain", "--mode", "forward")
    assert code == 0
    assert "∂f/∂x · ones = ṅ3 = 12" in out


def test_explain_json(capsys):
    code, out, _ = cli(capsys, "grad", SEED, "--at", "x=3,y=4", "--explain", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["gradient"] == {"x": 24.0, "y": 10.0}
    n2 = next(s for s in doc["sweep"] if s["node"] == "n2")
    assert n2["adjoint"] == 10.0 and [(t["from"], t["local"]) for t in n2["terms"]] == [("n5", 9.0), ("n6", 1.0)]
    code, out, _ = cli(capsys, "grad", SEED, "--at", "x=3,y=4", "--explain", "--mode", "forward", "--json")
    doc = json.loads(out)
    assert [(p["wrt"], p["derivative"]) for p in doc["forward_passes"]] == [(["x"], 24.0), (["y"], 10.0)]


def test_explain_a_program_with_control_flow(capsys):
    code, out, _ = cli(capsys, "grad", "samples/programs/control.py", "--at", "a=0.37", "--explain")
    assert code == 0
    assert "∂f/∂a = ∂f/∂n1 = 4096" in out


def test_unconnected_input_is_exactly_zero(capsys):
    code, out, _ = cli(capsys, "grad", "x * 2", "--at", "x=1,y=5", "--explain")
    assert code == 2                      # y is not an input of the expression
    code, out, _ = cli(capsys, "grad", "x * 2 + y * 0", "--at", "x=1,y=5", "--explain")
    assert code == 0 and "∂f/∂y = ∂f/∂n2 = 0" in out


# ---- kinks and ties in the normal output -------------------------------------------------------------

@pytest.mark.parametrize("src, at, note", [
    ("abs(x)", "x=0", "line 1, column 1: abs at 0: derivative taken as 0"),
    ("2 * relu(x)", "x=0", "line 1, column 5: relu at 0: derivative taken as 0"),
    ("maximum(x, y)", "x=1,y=1", "line 1, column 1: maximum with equal arguments: the gradient is split evenly"),
    ("max(x)", "x=[1,3,3]", "line 1, column 1: max with a tie: the gradient is split evenly among the tied elements"),
])
def test_kinks_are_noted_with_place_and_convention(capsys, src, at, note):
    code, out, _ = cli(capsys, "grad", src, "--at", at)
    assert code == 0
    assert f"note: {note}" in out


def test_kink_values_follow_the_conventions():
    assert api.grad("abs(x)", at={"x": 0}).gradient["x"] == 0.0
    assert api.grad("maximum(x, y)", at={"x": 1, "y": 1}).gradient == {"x": 0.5, "y": 0.5}


def test_comparison_at_equality_in_a_program_is_noted(tmp_path, capsys):
    prog = tmp_path / "k.py"
    prog.write_text("def f(x):\n    if x >= 0:\n        return x\n    return -x\n")
    code, out, _ = cli(capsys, "grad", str(prog), "--at", "x=0", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["kinks"] == [{"op": "compare", "line": 2, "column": 10,
                             "detail": "`>=` compared equal values: no gradient flows through it"}]
    code, out, _ = cli(capsys, "grad", str(prog), "--at", "x=1")
    assert "note:" not in out                                   # away from the kink: no note


def test_negative_factors_are_parenthesised():
    ex, _ = reverse("cos(x) * 2", {"x": 0.5})
    line = next(x for x in reverse_lines(ex) if x.startswith("∂f/∂n1"))
    assert line == f"∂f/∂n1 = ∂f/∂n2 · ∂n2/∂n1 = 2 · ({-math.sin(0.5)!r}) = {-2 * math.sin(0.5)!r}"


def test_explain_writes_an_index_as_numpy_does(capsys):
    """An indexed node reads as its subscript (numbers, slices with steps, several axes, a chained
    index), not as getitem(index=...); the gradient is numpy's scatter of the adjoints."""
    code, out, _ = cli(capsys, "grad", "x[0, 1] * sum(x[1:, ::2]) + x[-1][0]", "--at", "x=[[1,2,3],[4,5,6]]",
                       "--explain")
    assert code == 0
    for line in ("n2 = n1[0, 1] = 2", "n3 = n1[1:, ::2] = (1, 2) [[4, 6]]", "n6 = n1[-1] = (3,) [4, 5, 6]",
                 "n7 = n6[0] = 4", "∂f/∂x = ∂f/∂n1 = (2, 3) [[0, 10, 0], [3, 0, 2]]"):
        assert line in out, line
