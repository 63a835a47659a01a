"""Issue 29 item 2: integer inputs stay integers. Class labels `y` given as integer data (an .npy
of ints, a numpy int array to the API, a check file's data file of ints) stay an int array in
the run (indexing `p[np.arange(n), y]`), are left out of the default wrt (`--wrt y` is an error
that says why), are constants of a check (finite differences never move them) and are part of
the compiled function's variant key, so replays at moving labels stay right."""
import json

import numpy as np
import pytest

import autodiff
from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.files import load_file
from autodiff.engine.checks.runner import run_case

SRC = '''import numpy as np


def loss(W, b, X, y):
    z = X @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    n = X.shape[0]
    return -np.mean(np.log(p[np.arange(n), y]))


def loss_grad(W, b, X, y):
    z = X @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    n = X.shape[0]
    d = p.copy()
    d[np.arange(n), y] -= 1.0
    d = d / n
    return X.T @ d, np.sum(d, axis=0)


def loss_grad_all(W, b, X, y):
    dW, db = loss_grad(W, b, X, y)
    z = X @ W + b
    p = np.exp(z - np.max(z, axis=1, keepdims=True))
    p = p / np.sum(p, axis=1, keepdims=True)
    p[np.arange(X.shape[0]), y] -= 1.0
    return dW, db, p @ W.T / X.shape[0]
'''
rng = np.random.default_rng(29)
W, B, X = rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(6, 4))
Y = np.array([0, 2, 1, 2, 0, 1])


def loss(W, b, X, y):
    z = X @ W + b
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.log(p[np.arange(X.shape[0]), y]))


def loss_grad(W, b, X, y):
    z = X @ W + b
    p = np.exp(z - np.max(z, axis=1, keepdims=True))
    p = p / np.sum(p, axis=1, keepdims=True)
    p[np.arange(X.shape[0]), y] -= 1.0
    d = p / X.shape[0]
    return X.T @ d, np.sum(d, axis=0)


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(SRC)
    for name, value in {"W": W, "b": B, "X": X, "y": Y}.items():
        np.save(tmp_path / f"{name}.npy", value)
    return tmp_path


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


AT = "W=@W.npy,b=@b.npy,X=@X.npy,y=@y.npy"


def test_api_int_labels_stay_integers_and_are_not_differentiated(model):
    at = {"W": W, "b": B, "X": X, "y": Y}
    result = autodiff.grad(str(model / "model.py"), fn="loss", at=at)
    assert list(result.gradient) == ["W", "b", "X"]
    assert result.value == pytest.approx(loss(W, B, X, Y), rel=1e-14)
    gw, gb = loss_grad(W, B, X, Y)
    np.testing.assert_allclose(result.gradient["W"], gw, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.gradient["b"], gb, rtol=1e-12, atol=1e-15)
    assert result.inputs["y"].dtype.kind == "i" and result.inputs["y"].tolist() == Y.tolist()
    doubled = autodiff.evaluate("y + y", at={"y": Y}).value
    assert doubled.dtype.kind == "i" and doubled.tolist() == (2 * Y).tolist()   # the run sees integers


def test_wrt_an_integer_input_is_an_error_that_says_so(model, capsys):
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.grad(str(model / "model.py"), fn="loss", at={"W": W, "b": B, "X": X, "y": Y}, wrt=["y"])
    assert "integer input" in info.value.message and "no derivative" in info.value.message
    code, out, err = cli(capsys, "grad", str(model / "model.py"), "--fn", "loss", "--at", AT, "--wrt", "y")
    assert code == 2 and "y is an integer input" in err and "Traceback" not in err


def test_cli_npy_of_ints_and_json_names_the_integer_inputs(model, capsys):
    code, out, err = cli(capsys, "grad", str(model / "model.py"), "--fn", "loss", "--at", AT, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["wrt"] == ["W", "b", "X"] and doc["integers"] == ["y"] and doc["inputs"]["y"] == Y.tolist()
    np.testing.assert_allclose(doc["gradient"]["W"], loss_grad(W, B, X, Y)[0], rtol=1e-12, atol=1e-15)
    assert any(n.startswith("y is integer data") for n in doc["notes"])
    code, out, err = cli(capsys, "grad", str(model / "model.py"), "--fn", "loss", "--at", AT)
    assert code == 0 and "y is integer data" in out


def test_cli_check_never_moves_the_labels(model, capsys):
    code, out, err = cli(capsys, "grad", str(model / "model.py"), "--fn", "loss", "--at", AT, "--check", "--json")
    assert code == 0, out + err
    check = json.loads(out)["check"]
    assert check["passed"] and {e["entry"].split("[")[0] for e in check["entries"]} == {"W", "b", "X"}


def test_function_replays_at_moving_points_and_labels(model):
    f = autodiff.function(str(model / "model.py"), fn="loss")
    for k in range(5):
        y = rng.integers(0, 3, size=6)
        w = W + 0.1 * k
        value, g = f.value_and_grad(W=w, b=B, X=X, y=y)
        assert value == pytest.approx(loss(w, B, X, y), rel=1e-13)
        np.testing.assert_allclose(g["W"], loss_grad(w, B, X, y)[0], rtol=1e-12, atol=1e-15)
        assert list(g) == ["W", "b", "X"]
    g = f.grad(W=W, b=B, X=X, y=Y.astype(float))     # float labels: an input as before, its own trace
    assert list(g) == ["W", "b", "X", "y"]


def test_check_gradient_with_int_labels_checks_the_float_inputs_only(model):
    gw, gb = loss_grad(W, B, X, Y)
    report = autodiff.check_gradient(str(model / "model.py"), fn="loss", at={"W": W, "b": B, "X": X, "y": Y},
                                     grad={"W": gw, "b": gb, "X": "loss_grad_all(W, b, X, y)[2]"})
    assert report.passed, report
    assert {r.label.split("[")[0] for r in report.rows} == {"W", "b", "X"}
    report = autodiff.check_gradient(str(model / "model.py"), fn="loss", at={"W": W, "b": B, "X": X, "y": Y})
    assert report.passed and {r.label.split("[")[0] for r in report.rows} == {"W", "b", "X"}, report


def test_check_file_with_a_data_file_of_ints(model):
    (model / "ce.grad.toml").write_text(
        '[[case]]\nname = "labels"\nprogram = "model.py"\nfn = "loss"\n'
        'at = { W = "@W.npy", b = "@b.npy", X = "@X.npy", y = "@y.npy" }\nwrt = ["W", "b"]\nhand = "loss_grad"\n'
        '[[case]]\nname = "all by default"\nprogram = "model.py"\nfn = "loss"\n'
        'at = { W = "@W.npy", b = "@b.npy", X = "@X.npy", y = "@y.npy" }\nhand = "loss_grad_all"\n'
        '[[case]]\nname = "a wrong X"\nprogram = "model.py"\nfn = "loss"\n'
        'at = { W = "@W.npy", b = "@b.npy", X = "@X.npy", y = "@y.npy" }\n'
        'grad = { W = "loss_grad(W, b, X, y)[0]", b = "loss_grad(W, b, X, y)[1]", X = "2 * loss_grad_all(W, b, X, y)[2]" }\n')
    results = [run_case(c) for c in load_file(str(model / "ce.grad.toml"))]
    assert [r.status for r in results] == ["passed", "passed", "failed"], [r.message for r in results]
    assert results[2].entry.startswith("X"), results[2].message


def test_astype_int_spells_integer_data_on_the_command_line_and_in_a_check_file(model, capsys):
    labels = ", ".join(str(v) for v in Y)
    at = f"W=@W.npy,b=@b.npy,X=@X.npy,y=[{labels}].astype(int)"
    code, out, err = cli(capsys, "grad", str(model / "model.py"), "--fn", "loss", "--at", at, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["integers"] == ["y"] and doc["inputs"]["y"] == Y.tolist() and doc["wrt"] == ["W", "b", "X"]
    assert doc["value"] == pytest.approx(loss(W, B, X, Y), rel=1e-14)
    code, out, err = cli(capsys, "run", "y", "--at", "y=[0.5, -1.5, 2.0].astype(int)", "--json")
    assert json.loads(out)["value"] == [0, -1, 2]                  # numpy's cast: toward zero
    (model / "c.grad.toml").write_text(
        '[[case]]\nprogram = "model.py"\nfn = "loss"\n'
        f'at = {{ W = "@W.npy", b = "@b.npy", X = "@X.npy", y = "[{labels}].astype(int)" }}\nhand = "loss_grad_all"\n')
    results = [run_case(c) for c in load_file(str(model / "c.grad.toml"))]
    assert [r.status for r in results] == ["passed"], [r.message for r in results]


def test_python_callables_keep_int_labels_and_never_move_them():
    def hand(W, b, X, y):
        dW, db = loss_grad(W, b, X, y)
        return {"W": dW, "b": db}
    at = {"W": W, "b": B, "X": X, "y": Y}
    report = autodiff.check_gradient(loss, grad=hand, at=at, wrt=["W", "b"])
    assert report.passed and {r.label.split("[")[0] for r in report.rows} == {"W", "b"}
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.check_gradient(loss, grad=hand, at=at, wrt=["W", "y"])
    assert "y is an integer input" in info.value.message


def test_equal_integer_data_is_no_tie_of_a_replay(tmp_path):
    # a recording run watches integer data; `idx[0] == 1` at equal integers is no tie (no derivative
    # flows through integers): no kink the plain run does not note, and the trace is kept
    path = tmp_path / "branch.py"
    path.write_text("def f(x, idx):\n    if idx[0] == 1:\n        return sum(x * x)\n    return sum(x)\n")
    f = autodiff.function(str(path))
    idx = np.array([1, 0])
    results = [f.evaluate_result({"x": np.array([1.0, 2.0]) * k, "idx": idx}) for k in (1, 2, 3, 4)]
    assert [r.value for r in results] == [5.0, 20.0, 45.0, 80.0]
    assert [r.kinks for r in results] == [[], [], [], []]
    assert (f.replays, f.interpreted, f.fallbacks) == (2, 2, {})
    assert f({"x": np.array([1.0, 2.0]), "idx": np.array([0, 0])}) == 3.0     # other data: the other path
