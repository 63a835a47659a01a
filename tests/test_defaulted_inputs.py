"""Issue 29 item 3: a parameter with a default is an input when given (`--at k=2` sets it,
`--wrt k` differentiates in it); not given, its default is used and it is a constant. Every
command, check files and the Python API (replays included)."""
import json

import numpy as np
import pytest

import autodiff
from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine import api
from autodiff.engine.checks.files import load_file
from autodiff.engine.checks.runner import run_case

SRC = "import numpy as np\ndef energy(x, k=1.0, rest=1.0):\n    d = x - rest\n    return 0.5 * k * np.sum(d * d)\n"
X = np.array([1.0, 2.0, 3.0])


def energy(x, k=1.0, rest=1.0):
    return 0.5 * k * np.sum((x - rest) ** 2)


def grad_by_hand(x, k=1.0, rest=1.0):
    d = x - rest
    return {"x": k * d, "k": 0.5 * np.sum(d * d), "rest": -k * np.sum(d)}


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "e.py"
    path.write_text(SRC)
    return str(path)


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def test_target_lists_defaulted_inputs_given_after_the_others(program):
    target = api.load(program)
    assert target.inputs == ["x"] and target.defaulted == ["k", "rest"]
    assert target.given({"x": 1.0}) is target
    assert target.given({"x": 1.0, "rest": 0.0, "k": 2.0}).inputs == ["x", "k", "rest"]
    assert target.given({"rest": 0.0}).inputs == ["x", "rest"]


@pytest.mark.parametrize("given", [{}, {"k": 2.0}, {"rest": 0.5}, {"rest": 0.5, "k": 3.0}])
def test_grad_in_the_defaulted_inputs_given(program, given):
    r = autodiff.grad(program, at={"x": X, **given})
    want = grad_by_hand(X, **given)
    assert r.value == pytest.approx(energy(X, **given))
    assert list(r.gradient) == ["x"] + [n for n in ("k", "rest") if n in given]
    assert list(r.inputs) == list(r.gradient)
    for name, g in r.gradient.items():
        np.testing.assert_allclose(g, want[name])


def test_wrt_a_defaulted_input(program):
    r = autodiff.grad(program, at={"x": X, "k": 2.0}, wrt=["k"])
    assert r.gradient == {"k": pytest.approx(2.5)}


def test_wrt_a_defaulted_input_not_given_says_to_give_it(program):
    with pytest.raises(autodiff.SourceError) as e:
        autodiff.grad(program, at={"x": X}, wrt=["k"])
    assert "input only when given" in e.value.message and "k=" in e.value.hint


def test_an_unknown_input_names_the_defaulted_ones(program):
    with pytest.raises(autodiff.SourceError) as e:
        autodiff.grad(program, at={"x": X, "q": 1.0})
    assert "inputs when given: k, rest" in e.value.message


def test_function_calls_with_and_without_a_defaulted_input_keep_their_own_traces(program):
    f = autodiff.function(program)
    for _ in range(4):          # plain, recorded, replayed, replayed
        assert f(x=X) == pytest.approx(energy(X))
        assert f(x=X, k=2.0) == pytest.approx(energy(X, k=2.0))
        assert f(x=X, k=3.0) == pytest.approx(energy(X, k=3.0))
        assert f(x=X, rest=0.0) == pytest.approx(energy(X, rest=0.0))
        g = f.grad(x=X, k=3.0, rest=2.0)
        want = grad_by_hand(X, k=3.0, rest=2.0)
        assert set(g) == {"x", "k", "rest"}
        for name in g:
            np.testing.assert_allclose(g[name], want[name])
        assert set(f.grad(x=X)) == {"x"}
    assert f.replays > 0 and f.given({"k": 1.0}).replays > 0 and f.given({"k": 1.0, "rest": 0}).replays > 0


def test_function_jacobian_hessian_derivatives_in_a_defaulted_input(program):
    f = autodiff.function(program)
    x2 = np.array([1.0, 2.0])
    for _ in range(3):
        assert f.jacobian(x=X, k=2.0)["k"] == pytest.approx(2.5)
        h = f.hessian(x=x2, k=2.0)
        np.testing.assert_allclose(h["x"]["k"], x2 - 1.0)
        assert h["k"]["k"] == 0.0
        assert f.derivatives(x=2.0, k=3.0, wrt="k", order=2) == pytest.approx([0.5, 0.0])


def test_check_gradient_in_a_defaulted_input(program):
    report = autodiff.check_gradient(program, at={"x": X, "k": 2.0},
                                     grad={"x": "k * (x - 1.0)", "k": "0.5 * sum((x - 1.0)**2)"})
    assert report.passed and [r.label for r in report.rows][-1] == "k"


@pytest.mark.parametrize("command, expect", [
    (["grad", "--at", "x=[1,2,3],k=2", "--json"], lambda j: j["gradient"] == {"x": [0, 2, 4], "k": 2.5}
     and j["inputs"] == {"x": [1, 2, 3], "k": 2}),
    (["grad", "--at", "x=[1,2,3],k=2", "--wrt", "k", "--json"], lambda j: j["gradient"] == {"k": 2.5}),
    (["grad", "--at", "x=[1,2,3]", "--json"], lambda j: j["gradient"] == {"x": [0, 1, 2]} and list(j["inputs"]) == ["x"]),
    (["run", "--at", "x=[1,2,3],k=3", "--json"], lambda j: j["value"] == 7.5),
    (["jacobian", "--at", "x=[1,2,3],rest=0", "--wrt", "rest", "--json"], lambda j: j["jacobian"]["rest"] == -6),
    (["hessian", "--at", "x=[1,2],k=2", "--json"], lambda j: j["hessian"]["x"]["k"] == [0, 1]),
    (["derivative", "--at", "x=2.0,k=3", "--wrt", "k", "--order", "2", "--json"],
     lambda j: j["derivatives"] == [0.5, 0] and j["inputs"] == {"x": 2, "k": 3}),
    (["grad", "--at", "x=[1,2,3],k=2", "--check", "--json"], lambda j: j["check"]["passed"]),
    (["graph", "--at", "x=[1.0],k=2", "--json"], lambda j: [n["op"] for n in j["nodes"] if n["kind"] == "input"] == ["x", "k"]),
    (["plot", "--at", "x=[1,2,3]", "--range", "k=0:2", "--points", "3", "--json"],
     lambda j: j["series"]["f"] == [0, 2.5, 5] and j["series"]["f'"] == [2.5] * 3),
])
def test_every_command_takes_a_defaulted_input(capsys, program, command, expect):
    code, out, err = cli(capsys, command[0], program, *command[1:])
    assert code == 0, err
    assert expect(json.loads(out)), out


def test_cli_wrt_a_defaulted_input_not_given_is_a_usage_error(capsys, program):
    code, out, err = cli(capsys, "grad", program, "--at", "x=[1,2,3]", "--wrt", "k")
    assert code == 2 and "--at k=" in err and "Traceback" not in err


def test_check_file_cases_with_and_without_a_defaulted_input(tmp_path, program):
    (tmp_path / "e.grad.toml").write_text(
        '[[case]]\nname = "k given"\nprogram = "e.py"\nat = { x = "[1.0, 2.0, 3.0]", k = "2.0" }\n'
        'grad = { x = "k * (x - 1.0)", k = "0.5 * sum((x - 1.0)**2)" }\n'
        '[[case]]\nname = "k wrong"\nprogram = "e.py"\nat = { x = "[1.0, 2.0, 3.0]", k = "2.0" }\n'
        'wrt = ["k"]\ngrad = { k = "sum((x - 1.0)**2)" }\n'
        '[[case]]\nname = "default"\nprogram = "e.py"\nat = { x = "[1.0, 2.0, 3.0]" }\ngrad = { x = "x - 1.0" }\n'
        '[[case]]\nname = "random"\nprogram = "e.py"\nrandom = { count = 3, x = { range = [0, 1], shape = [2] }, rest = [0, 1] }\n'
        'grad = { x = "x - rest", rest = "-sum(x - rest)" }\n')
    results = [run_case(c) for c in load_file(str(tmp_path / "e.grad.toml"))]
    assert [r.status for r in results] == ["passed", "failed", "passed", "passed"], [r.message for r in results]
    assert results[1].entry == "k"
