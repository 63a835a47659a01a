"""Issue 29 item 1: a file loads as written. Only what the target reaches (the function, the
functions it calls, the top-level names it reads) must be in the language; the rest of the file
(a main block, classes, dataclasses, plotting helpers, imports of other libraries) is read and
never compiled, and is an error only when reached, naming where it is used and defined. Type
annotations and `from __future__ import annotations` are read and ignored.

samples/project/src/ holds three files as a researcher writes them, each checked unedited (and by
samples/project/checks/models.grad.toml, their hand gradients against AD, from the README)."""
import textwrap
from pathlib import Path

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.cli.main import invoke
from autodiff.engine.lang.target import load
from autodiff.parser import SourceError

DATA = Path(__file__).resolve().parent.parent / "samples" / "project" / "src"


def cli(capsys, *args):
    from autodiff.cli.render import common as render
    render._consoles.clear()
    code = invoke([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def source_file(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return str(path)


def gradient(path, fn, at):
    return api.grad(None, at=at, target=load(path, fn=fn)).gradient


# ---- the three files ------------------------------------------------------------------------

POSITIONS = np.array([[0.0, 0.0, 0.0], [1.1, 0.0, 0.0], [0.0, 1.2, 0.1], [0.9, 0.8, 0.7]])


def lj_forces(x):
    """The file's own hand forces, in numpy."""
    f = np.zeros_like(x)
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            d = x[i] - x[j]
            r2 = d @ d
            s6 = (1.0 / r2) ** 3
            fij = 24.0 * (2.0 * s6 * s6 - s6) / r2 * d
            f[i] += fij
            f[j] -= fij
    return f


def test_the_lennard_jones_file_is_differentiated_as_written(capsys):
    path = DATA / "lennard_jones.py"
    g = gradient(str(path), "loss", {"x": POSITIONS})["x"]
    np.testing.assert_allclose(g, -lj_forces(POSITIONS), rtol=1e-12, atol=1e-12)
    code, out, err = cli(capsys, "grad", path, "--fn", "loss", "--at",
                         "x=[[0,0,0],[1.1,0,0],[0,1.2,0.1],[0.9,0.8,0.7]]")
    assert (code, err) == (0, "")
    assert "loss(x)" in out and "-4.45476458297443" in out


def nll_gradient(mu, L, X):
    """The file's hand gradient, in numpy: d/dmu and d/dL through S = L L^T."""
    n = len(X)
    L = np.tril(L)
    diff = X - mu
    S_inv = np.linalg.inv(L @ L.T)
    alpha = S_inv @ diff.T
    g_S = 0.5 * (n * S_inv - alpha @ alpha.T)
    return -alpha.sum(axis=1), np.tril(2.0 * g_S @ L)


def test_the_gaussian_nll_file_is_differentiated_as_written(capsys):
    mu, L = np.array([0.1, -0.2]), np.array([[1.2, 0.0], [0.3, 0.8]])
    X = np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 0.3]])
    g = gradient(str(DATA / "gaussian_nll.py"), "loss", {"mu": mu, "L": L, "X": X})
    g_mu, g_L = nll_gradient(mu, L, X)
    np.testing.assert_allclose(g["mu"], g_mu, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g["L"], g_L, rtol=1e-12, atol=1e-12)
    code, out, err = cli(capsys, "grad", DATA / "gaussian_nll.py", "--fn", "loss", "--wrt", "mu", "--at",
                         "mu=[0.1,-0.2],L=[[1.2,0],[0.3,0.8]],X=[[1,2],[0.5,-1],[0,0.3]]")
    assert (code, err) == (0, "")
    assert "-0.208333333333333, -2.5" in out


MLP_AT = {"W1": np.array([[0.1, -0.2, 0.4], [0.3, 0.1, -0.5]]), "b1": np.array([0.0, 0.1, -0.1]),
          "W2": np.array([[0.2, -0.1, 0.3], [0.1, 0.4, -0.2], [-0.3, 0.2, 0.1]]), "b2": np.array([0.0, 0.0, 0.1]),
          "X": np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 0.3], [-1.2, 0.4]]), "y": np.array([0.0, 2.0, 1.0, 2.0])}


def mlp_backprop(W1, b1, W2, b2, X, y):
    """The file's hand backprop, in numpy."""
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 + b2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    n = len(X)
    d = p.copy()
    d[np.arange(n), y.astype(int)] -= 1.0
    d /= n
    dh = (d @ W2.T) * (1.0 - h ** 2)
    return {"W1": X.T @ dh, "b1": dh.sum(axis=0), "W2": h.T @ d, "b2": d.sum(axis=0)}


def test_the_mlp_file_is_differentiated_as_written(capsys):
    """Parameters in a dict, class labels indexing p[np.arange(n), y], a dataclass, a main block."""
    path = DATA / "mlp.py"
    g = gradient(str(path), "loss", MLP_AT)
    want = mlp_backprop(**MLP_AT)
    for name in ("W1", "b1", "W2", "b2"):
        np.testing.assert_allclose(g[name], want[name], rtol=1e-12, atol=1e-15)
    code, out, err = cli(capsys, "grad", path, "--fn", "loss", "--wrt", "b2", "--at",
                         "W1=[[0.1,-0.2,0.4],[0.3,0.1,-0.5]],b1=[0,0.1,-0.1],W2=[[0.2,-0.1,0.3],[0.1,0.4,-0.2],"
                         "[-0.3,0.2,0.1]],b2=[0,0,0.1],X=[[1,2],[0.5,-1],[0,0.3],[-1.2,0.4]],y=[0,2,1,2]")
    assert (code, err) == (0, "")
    assert "b2" in out


def test_the_mlp_files_hand_backprop_runs_in_the_language(tmp_path):
    """loss_grad (a dict built item by item, p.copy(), d[np.arange(n), y] -= 1) as written, read
    through a function added after it, equals numpy's."""
    wrappers = "".join(f"\n\ndef grad_{name}(W1, b1, W2, b2, X, y):\n    return loss_grad(W1, b1, W2, b2, X, y)"
                       f"[\"{name}\"]\n" for name in ("W1", "b1", "W2", "b2"))
    path = source_file(tmp_path, (DATA / "mlp.py").read_text() + wrappers, "mlp_plus.py")
    want = mlp_backprop(**MLP_AT)
    for name in ("W1", "b1", "W2", "b2"):
        got = api.evaluate(None, at=MLP_AT, target=load(path, fn="grad_" + name)).value
        np.testing.assert_allclose(got, want[name], rtol=1e-13, atol=1e-15)


# ---- what is not reached is read, never compiled ----------------------------------------------

def test_unreached_functions_imports_and_the_main_block_are_not_compiled(tmp_path):
    path = source_file(tmp_path, '''
        import numpy as np
        import matplotlib.pyplot as plt
        from mypackage.models import Net

        def helper(x):
            return np.diff(x)               # parsed, but no builtin: never compiled

        def report(x):
            print(f"{x:.3f}")

        def f(x):
            return np.sum(x ** 2)

        if __name__ == "__main__":
            report(f(np.ones(3)))
        ''')
    target = load(path)
    assert target.fn_name == "f" and target.inputs == ["x"]
    assert [type(s).__name__ for s in target.node.body] == ["FunctionDef"]
    assert gradient(path, None, {"x": [1.0, 2.0]})["x"].tolist() == [2.0, 4.0]


def test_the_functions_called_and_the_names_read_are_compiled_in_file_order(tmp_path):
    path = source_file(tmp_path, '''
        import numpy as np
        SCALE: float = 3.0
        OFFSET = SCALE + 1.0
        UNUSED = "a string, never read"

        def inner(x: np.ndarray) -> np.ndarray:
            return OFFSET * x

        def loss(x):
            return np.sum(inner(x) ** 2)
        ''')
    target = load(path, fn="loss")
    assert [getattr(s, "name", None) or s.targets[0].id for s in target.node.body] == \
        ["SCALE", "OFFSET", "inner", "loss"]
    assert gradient(path, "loss", {"x": [1.0, -2.0]})["x"].tolist() == [32.0, -64.0]


def test_a_reached_class_is_an_error_naming_the_use_and_the_definition(tmp_path, capsys):
    path = source_file(tmp_path, '''
        from dataclasses import dataclass

        @dataclass
        class Config:
            k: float = 2.0

        def f(x):
            return Config().k * x
        ''')
    with pytest.raises(SourceError) as info:
        load(path)
    err = info.value
    assert (err.span.line, err.span.column) == (8, 12)
    assert err.message == ("`Config` (used at 8:12) is class Config at 3:1, which is not in the language: "
                           "`class`: classes are not part of the language at 4:1")
    code, out, stderr = cli(capsys, "grad", path, "--at", "x=1")
    assert code == 2 and "Traceback" not in stderr and "8:12" in stderr


def test_a_reached_function_the_language_cannot_read_names_its_construct(tmp_path):
    path = source_file(tmp_path, '''
        def show(x):
            return f"{x}"

        def f(x):
            return show(x) * 2

        def g(x):
            return x * 2
        ''')
    err = pytest.raises(SourceError, load, path).value
    assert (err.span.line, err.span.column) == (5, 12)
    assert err.message.startswith("`show` (used at 5:12) is function show at 1:1, which is not in the "
                                  "language: strings are not part of the language")
    assert err.message.endswith("at 2:12")
    err = pytest.raises(SourceError, load, path, fn="show").value
    assert err.message.startswith("`show` is function show at 1:1, which is not in the language: strings")
    assert load(path, fn="g").inputs == ["x"]         # the others load


def test_a_name_only_the_main_block_defines_is_not_defined(tmp_path):
    """As in Python: importing the file runs no main block."""
    path = source_file(tmp_path, '''
        def f(x):
            return K * x

        if __name__ == "__main__":
            K = 2.0
            print(f"{f(1.0)}")
        ''')
    err = pytest.raises(SourceError, api.grad, None, at={"x": 1.0}, target=load(path)).value
    assert err.kind == "unknown name" and "`K` is not defined" in err.message


def test_functions_the_language_cannot_read_count_for_choosing_the_target(tmp_path):
    path = source_file(tmp_path, '''
        class Model:
            pass

        def plot(x):
            print(f"{x}")

        def loss(x):
            return x ** 2
        ''')
    err = pytest.raises(SourceError, load, path).value
    assert err.kind == "ambiguous function" and "(plot, loss)" in err.message
    err = pytest.raises(SourceError, load, path, fn="nope").value
    assert "(it defines plot, loss)" in err.message


def test_a_script_reaches_all_of_itself(tmp_path):
    path = source_file(tmp_path, '''
        y = x ** 2
        print(f"{y}")
        y
        ''')
    err = pytest.raises(SourceError, load, path).value
    assert "print is not part of the language" in err.message and err.span.line == 2


# ---- annotations -----------------------------------------------------------------------------

def test_type_annotations_and_future_imports_are_read_and_ignored(tmp_path):
    path = source_file(tmp_path, '''
        from __future__ import annotations
        import numpy as np
        RATE: float = 0.5
        count: int

        def f(x: np.ndarray, k: float = 2.0, w: dict[str, np.ndarray] | None = None,
              c: "Config" = 1.0) -> tuple[np.ndarray, ...]:
            y: np.ndarray = x * k * RATE
            g = lambda t: t * c
            return np.sum(g(y) ** 2)
        ''')
    assert gradient(path, None, {"x": [1.0, 2.0]})["x"].tolist() == [2.0, 4.0]
    script = source_file(tmp_path, "from __future__ import annotations\nz: float = x * 3\nz\n", "s.py")
    assert gradient(script, None, {"x": 2.0})["x"] == 3.0


def test_a_reached_import_of_another_library_names_the_use_and_the_import(tmp_path, capsys):
    path = source_file(tmp_path, '''
        import numpy as np
        import matplotlib.pyplot as plt

        def f(x):
            plt.plot(x)
            return np.sum(x)
        ''')
    err = pytest.raises(SourceError, load, path).value
    assert (err.span.line, err.span.column) == (5, 5)
    assert err.message == ("`plt` (used at 5:5) is bound by the import at 2:1: module `matplotlib.pyplot` "
                           "is not available")


def test_a_target_reaches_another_function_of_its_file_when_asked():
    """Target.reaching: the module a hand gradient named by a check file needs compiled too."""
    target = load(str(DATA / "gaussian_nll.py"), fn="loss")
    assert [s.name for s in target.node.body] == ["loss"]
    assert [s.name for s in target.reaching(["loss_grad"]).body] == ["loss", "loss_grad"]
    err = pytest.raises(SourceError, target.reaching, ["fit"]).value
    assert err.message == ("`fit` is function fit at 41:1, which is not in the language: `print`: print is not "
                           "part of the language: the value of the program is printed for you at 48:13")
    assert err.filename.endswith("gaussian_nll.py") and (err.span.line, err.span.column) == (48, 13)


def test_forward_and_reverse_agree_on_the_files_as_written_at_their_check_points():
    """The three files at the points of samples/project/checks/models.grad.toml: forward mode
    gives reverse mode's gradient (the samples' forward/reverse test reads points from comments,
    which these files, written without the tool in mind, do not have)."""
    import tomllib
    import autodiff
    checks = DATA.parent / "checks" / "models.grad.toml"
    cases = tomllib.loads(checks.read_text())["case"]
    for case in cases:
        path = str((checks.parent / case["program"]).resolve())
        wrt = case.get("wrt")
        reverse = autodiff.grad(path, at=case["at"], fn=case["fn"], wrt=wrt)
        forward = autodiff.grad(path, at=case["at"], fn=case["fn"], wrt=wrt, mode="forward")
        assert forward.value == pytest.approx(reverse.value, rel=1e-12)
        for name, g in reverse.gradient.items():
            np.testing.assert_allclose(forward.gradient[name], g, rtol=1e-9, atol=1e-12)
    assert len(cases) == 3
