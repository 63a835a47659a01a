"""The Python API has what the CLI has (issue 13, item 14): numpy arrays in and out, listed by
dir(autodiff), typed results with docstrings."""
import dataclasses
import os

import numpy as np

import autodiff

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "samples", "checks")
NAMES = ["grad", "evaluate", "jacobian", "hessian", "derivatives", "graph", "explain", "check_gradient",
         "check_file"]


def test_dir_lists_the_entry_points():
    assert set(NAMES) <= set(dir(autodiff))
    for name in NAMES:
        assert callable(getattr(autodiff, name))


def test_results_are_typed_dataclasses_with_docstrings():
    for name in ("GradResult", "RunResult", "JacobianResult", "HessianResult", "DerivativeResult",
                 "CheckReport", "CaseResult"):
        cls = getattr(autodiff, name)
        assert dataclasses.is_dataclass(cls) and cls.__doc__ and len(cls.__doc__) > 30, name


def test_jacobian_hessian_derivatives_take_and_give_numpy_arrays():
    j = autodiff.jacobian("A @ x", at={"A": np.array([[1.0, 2.0], [3.0, 4.0]]), "x": np.ones(2)})
    assert isinstance(j, autodiff.JacobianResult)
    np.testing.assert_allclose(j.jacobian["x"], [[1, 2], [3, 4]])
    h = autodiff.hessian("x**2*y + y + 2", at={"x": 3.0, "y": 4.0})
    assert h.hessian["x"] == {"x": 8.0, "y": 6.0}
    d = autodiff.derivatives("sin(x)", at={"x": 0.0}, order=3)
    assert d.derivatives == [1.0, 0.0, -1.0]


def test_graph_explain_and_check_file():
    g = autodiff.graph("x*2 + sin(x)", at={"x": 1.0})
    assert len(g.ops()) == 3
    e = autodiff.explain("x*2 + sin(x)", at={"x": 1.0})
    assert type(e).__name__ == "ReverseExplanation"
    results = autodiff.check_file(os.path.join(SAMPLES, "seeds.toml"), mode="fast", seed=1)
    assert results and not any(r.failed for r in results)


def test_the_readmes_python_api_example_runs(standin_gpu):     # its device="gpu" line runs on the stand-in
    """Each call of the README's example, made by name with its literal arguments (no eval)."""
    import ast
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text()
    block = readme.split("## Python API", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    calls = [node for node in ast.walk(ast.parse(block)) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
             and node.func.value.id == "autodiff"]
    assert len(calls) >= 8
    cwd = os.getcwd()
    os.chdir(root)                       # the example names files under samples/
    try:
        for call in calls:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
            assert getattr(autodiff, call.func.attr)(*args, **kwargs) is not None
    finally:
        os.chdir(cwd)
