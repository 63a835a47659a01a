"""`autodiff emit` (issue 31): every sample program emits, and its emitted adjoint and tangent
match autodiff.grad at five random points; what is not emitted yet ends with exit 2 naming the
construct and its line."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.parser.errors import SourceError

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "samples" / "programs"
FUNCTIONS = {"several_functions.py": "energy"}
# the shapes of the sample programs' array inputs (the others are numbers): emitted at a point of
# these shapes, the derivatives are written at them (the arrays' broadcasting, reductions, indexing)
SHAPES = {"logistic_loss.py": {"w": (2,)}, "loop_over_array.py": {"x": (3,)}, "nested_loops.py": {"x": (3,)},
          "softmax_xent.py": {"z": (3,)}, "softplus.py": {"x": (2,)}}
# what emit cannot write yet, and what it says: a program, and the words of the refusal
NOT_YET = {
    "a comprehension with `if` whose list is not summed": "def f(x):\n    y = [v * v for v in x if v > 0]\n"
                                                         "    return sum(y)\n",
    "a comprehension with `if` whose list is not summed is": "def f(x):\n    y = x * 2.0\n"
                                                            "    return sum(array([a * b for a in y for b in x if b > a]))\n",
    "a comprehension whose inner `for` walks what an outer `for` names": "def f(x):\n    y = x * 2.0\n"
                                                                        "    return sum([a * b for a in y for b in x[:a]])\n",
    "a reduction over several axes": "def f(x):\n    B = x * 2.0\n    return norm(B, axis=(0, 1, 2))\n",
    "norm with `ord` of a value whose rank is unknown": "def f(x):\n    B = x * 2.0\n    if x[0] > 0.0:\n"
                                                        "        B = sum(B)\n    return norm(B, 1)\n",
    "norm with ord='nuc' of a matrix whose rank is unknown": "def f(x):\n    A = [[1.0, 2.0], [3.0, 4.0]] * x[0]\n"
                                                              "    return norm(A, 'nuc')\n",
    "an item of the tuple a builtin returns": "def f(x):\n    A = [[1.0, 2.0], [2.0, 5.0]] * x[0]\n"
                                              "    return sum(eigh(A)[0])\n",
    "fails at the point given": "def f(x):\n    return sum([v * v for v in x[3:]])\n",
    "whose shapes change": "def f(x):\n    t = x\n    for i in range(2):\n        t = t[1:] * 2.0\n"
                           "    return sum(t)\n",
    "no point was given": "def f(x):\n    return sum(x * x)\n",
    "(a third order)": "def g(w):\n    return w * w * w\n\n\ndef h(w):\n    y = w\n    while y < 3.0:\n        y = y * 2.0\n"
                       "    return stop_gradient(hessian(g)(y)) * w\n\n\ndef f(x):\n    return sum(grad(h)(x[0]) * x)\n",
    "a call of a function of the program at the top level": "def h(w):\n    return w * w\n\n\nK = h(2.0)\n\n\n"
                                                             "def f(x):\n    return sum(x * K)\n",
    "a third-order derivative": "def h(w):\n    return sum(w * w * w)\n\n\ndef f(x):\n"
                                "    return sum(hessian(h)(x))\n",
}


def emitted(tmp_path, path, fn=None, mode="both", at=None):
    target = api.load(str(path), fn)
    out = tmp_path / "emitted.py"
    out.write_text(api.emit(None, mode=mode, target=target, at=at))
    spec = importlib.util.spec_from_file_location(f"emitted_{path.stem}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return target, module


def random_point(rng, inputs, shapes):
    return {p: rng.uniform(0.5, 2.0, shapes[p]) if p in shapes else float(rng.uniform(0.5, 2.0)) for p in inputs}


SAMPLES = [p.name for p in sorted(PROGRAMS.glob("*.py"))]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_program_emits_and_matches_grad(tmp_path, name):
    fn = FUNCTIONS.get(name)
    rng = np.random.default_rng(31)
    shapes = SHAPES.get(name, {})
    inputs = api.load(str(PROGRAMS / name), fn).inputs
    target, module = emitted(tmp_path, PROGRAMS / name, fn, at=random_point(rng, inputs, shapes) if shapes else None)
    f = fn or "f"
    vjp, jvp, primal = getattr(module, f"{f}_vjp"), getattr(module, f"{f}_jvp"), getattr(module, f)
    for _ in range(5):
        point = random_point(rng, target.inputs, shapes)
        args = [point[p] for p in target.inputs]
        expected = autodiff.grad(str(PROGRAMS / name), at=point, fn=fn)
        value, grads = vjp(*args)
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        assert primal(*args) == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        for p, g in zip(target.inputs, grads):
            assert np.shape(g) == np.shape(point[p])
            assert g == pytest.approx(expected.gradient[p], rel=1e-12, abs=1e-12)
        for p in target.inputs:             # the tangent along each input is that partial derivative
            for k in np.ndindex(np.shape(point[p])):
                d_in = {f"d_{q}": np.zeros(np.shape(point[q])) for q in target.inputs}
                d_in[f"d_{p}"][k] = 1.0
                _, d = jvp(*args, **d_in)
                assert d == pytest.approx(np.asarray(expected.gradient[p])[k], rel=1e-12, abs=1e-12)


def header_point(path):
    """The point and --wrt of a sample's first header command with --at (tests/test_samples_numpy.py's
    headers), its values as the CLI reads them (files named with @ too)."""
    from autodiff.cli.data_options import at_file_reader
    from autodiff.cli.options import parse_at
    from test_samples_programs import expectations
    argv = next(a for a, _, _ in expectations(path) if "--at" in a)
    at = argv[argv.index("--at") + 1]
    wrt = argv[argv.index("--wrt") + 1].split(",") if "--wrt" in argv else None
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return parse_at([at], None, at_file_reader({}, None)), wrt
    finally:
        os.chdir(cwd)


# every sample of samples/numpy and samples/data
ARRAY_SAMPLES = [f"{p.parent.name}/{p.name}" for folder in ("numpy", "data")
                 for p in sorted((ROOT / "samples" / folder).glob("*.py"))]


@pytest.mark.parametrize("name", ARRAY_SAMPLES)
def test_every_numpy_and_data_sample_emits_validates_and_matches_grad(tmp_path, name):
    """Emitted at its header's point, each sample's module passes --validate there, and its adjoint
    and tangent match autodiff.grad to 1e-12 at five random points near it."""
    path = ROOT / "samples" / name
    at, wrt = header_point(path)
    target = api.load(str(path)).given(at)
    out = tmp_path / "emitted.py"
    out.write_text(api.emit(None, wrt=wrt, mode="both", target=target, at=at))
    rows = api.validate_emitted(str(out), target, at, wrt)
    assert rows and all(r["verdict"] == "pass" for r in rows), rows
    spec = importlib.util.spec_from_file_location(f"emitted_{path.stem}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wrt = wrt or target.inputs
    rng = np.random.default_rng(31)
    for _ in range(5):
        point = {p: np.asarray(v, dtype=float) + rng.uniform(-0.1, 0.1, np.shape(v)) for p, v in at.items()}
        point = {p: float(v) if v.ndim == 0 else v for p, v in point.items()}
        args = [point[p] for p in target.inputs]
        expected = autodiff.grad(str(path), at=point, wrt=wrt)
        value, grads = module.f_vjp(*args)
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        assert module.f(*args) == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        for w, g in zip(wrt, grads):
            assert np.shape(g) == np.shape(point[w])
            assert g == pytest.approx(expected.gradient[w], rel=1e-12, abs=1e-12)
        u = {w: rng.uniform(-1.0, 1.0, np.shape(point[w])) for w in wrt}
        _, d = module.f_jvp(*args, **{f"d_{w}": u[w] for w in wrt})
        along = sum(float(np.sum(np.asarray(expected.gradient[w]) * u[w])) for w in wrt)
        assert d == pytest.approx(along, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("words", sorted(NOT_YET))
def test_what_is_not_emitted_names_the_construct_and_its_line(tmp_path, words):
    source = tmp_path / "program.py"
    source.write_text(NOT_YET[words])
    at = None if words == "no point was given" else {"x": np.array([0.5, 1.5, 2.5])}
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at=at)
    assert err.value.kind == "not emitted"
    assert words in err.value.message
    assert err.value.span is not None and err.value.span.line > 1


def test_loops_stay_loops_and_branches_pop_their_decisions(tmp_path):
    """A while loop's trip count is pushed and popped, never unrolled: the emitted adjoint is right
    at points whose trip counts differ from each other."""
    source = tmp_path / "loop.py"
    source.write_text("def f(x):\n    y = x\n    while y < 10:\n        y = y * 2\n"
                      "    if y > 15:\n        y = y * x\n    return y\n")
    target, module = emitted(tmp_path, source)
    text = (tmp_path / "emitted.py").read_text()
    assert "while " in text and "for _ in range(_stack.pop()):" in text and "if _stack.pop():" in text
    for x in (0.3, 1.1, 4.0, 9.5):
        value, (g,) = module.f_vjp(x)
        expected = autodiff.grad(str(source), at={"x": x})
        assert value == expected.value and g == pytest.approx(expected.gradient["x"], rel=1e-12)


def test_the_adjoint_text_comes_from_the_rules_and_names_come_from_the_source():
    text = api.emit("sin(x) * y", mode="adjoint", wrt=["x"])
    assert "np.cos(x)" in text                       # sin's VJP rule, traced
    assert "x_b" in text and "y_b" not in text      # no adjoint for an input not in --wrt
    assert "# differentiated inputs: x" in text
    assert "  # line 1" in text


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})


def test_cli_emit_validate_passes_and_refuses_with_exit_2(tmp_path):
    out = tmp_path / "euler_adjoint.py"
    done = run_cli("emit", "samples/programs/euler_decay.py", "-o", str(out), "--validate", "--at", "k=0.5,y0=2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" pass") == 5 and out.exists()
    refused = run_cli("emit", "samples/programs/softmax_xent.py")
    assert refused.returncode == 2 and "softmax_xent.py:18" in refused.stderr
    assert "no point was given" in refused.stderr and "--at" in refused.stderr
    arrays = run_cli("emit", "samples/programs/softmax_xent.py", "--validate", "--at", "z=[2,1,0.1]")
    assert arrays.returncode == 0 and arrays.stdout.count(" pass") == 3, arrays.stderr
    over_input = run_cli("emit", "samples/programs/euler_decay.py", "-o", "samples/programs/euler_decay.py")
    assert over_input.returncode == 2


def test_explain_states_each_adjoint_statements_chain_rule_step():
    plain = api.emit("x * y + sin(x)", mode="adjoint")
    explained = api.emit("x * y + sin(x)", mode="adjoint", explain=True)
    steps = [line for line in explained.splitlines() if line.strip().startswith("# ") and "rule's VJP" in line]
    accumulations = [line for line in plain.splitlines() if "_b = " in line and "# line" in line]
    assert len(steps) >= 3 and "sin" in explained and len(accumulations) >= 3
    assert explained.count("\n") > plain.count("\n")


def test_a_rule_that_cannot_be_written_names_its_line():
    with pytest.raises(SourceError) as err:
        api.emit("w @ v")
    assert err.value.kind == "not emitted" and "matmul" in err.value.message and err.value.span.line == 1


def test_wrt_orders_the_gradients_and_an_unknown_name_is_a_usage_error(tmp_path):
    source = tmp_path / "g.py"
    source.write_text("def f(a, b):\n    return a * b * b\n")
    target, _ = emitted(tmp_path, source)
    text = api.emit(None, wrt=["b", "a"], target=target)
    (tmp_path / "wrt.py").write_text(text)
    spec = importlib.util.spec_from_file_location("emitted_wrt", tmp_path / "wrt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.f_vjp(3.0, 2.0) == (12.0, (12.0, 4.0))        # (d/db, d/da) = (2ab, b^2)
    with pytest.raises(SourceError) as err:
        api.emit(None, wrt=["c"], target=target)
    assert err.value.kind == "usage"


def test_a_point_naming_no_input_of_the_target_is_refused_as_grad_refuses_it(tmp_path):
    source = tmp_path / "g.py"
    source.write_text("def f(x):\n    return sum(x * x)\n")
    target = api.load(str(source))
    with pytest.raises(SourceError) as err:
        api.emit(None, target=target, at={"x": np.array([1.0, 2.0]), "q": 2.0})     # it was emitted, q unread
    assert err.value.kind == "unknown input"
    assert "q: f(x) has no input 'q' (its inputs: x)" in str(err.value)


def test_symbolic_partials_come_from_the_rules_simplified_by_sympy():
    pytest.importorskip("sympy")
    homl = api.load("5 + x*y")
    assert api.symbolic(homl) == ({"x": "y", "y": "x"}, [])
    assert api.symbolic(homl, form="raw")[0] == {"x": "1 * y", "y": "x * 1"}      # the sweep's own products
    poly = api.load("x**2*y + y + 2")
    assert api.symbolic(poly)[0] == {"x": "2*x*y", "y": "x**2 + 1"}
    assert api.symbolic(poly, form="latex")[0] == {"x": "2 x y", "y": "x^{2} + 1"}
    assert api.symbolic(api.load("sin(x)*exp(y)"), ["x"])[0] == {"x": "exp(y)*cos(x)"}
    # numpy's arctanh is SymPy's atanh (the rules table's alias); np.abs is SymPy's Abs (it was refused)
    assert api.symbolic(api.load("arctanh(x)*y"))[0] == {"x": "-y/(x**2 - 1)", "y": "atanh(x)"}
    assert api.symbolic(api.load("arctan(x)*abs(y)"), ["y"])[0] == {"y": "Piecewise((0, Eq(y, 0)), (y*atan(x)/Abs(y), True))"}


def test_symbolic_of_a_program_is_the_path_taken_with_its_assumptions():
    pytest.importorskip("sympy")
    partials, assumed = api.symbolic(api.load(str(PROGRAMS / "control.py")), values={"a": 0.37})
    assert partials == {"a": "4096"} and assumed[0] == "2*Abs(a) < 1000" and len(assumed) == 13
    partials, assumed = api.symbolic(api.load(str(PROGRAMS / "language_tour.py")), values={"x": 0.5, "y": 2.0})
    assert partials == {"x": "3*y/2 + 8", "y": "3*x/2"} and "x >= 0" in assumed     # 11 and 0.75 there
    assert api.symbolic(api.load(str(PROGRAMS / "recursive_power.py")), values={"x": 1.5}) == ({"x": "10*x**9"}, [])


def test_symbolic_json_and_an_array_refused():
    pytest.importorskip("sympy")
    done = run_cli("grad", "x**2*y + y + 2", "--at", "x=3,y=4", "--symbolic", "--json")
    assert done.returncode == 0, done.stderr
    import json
    assert json.loads(done.stdout)["symbolic"] == {"x": "2*x*y", "y": "x**2 + 1"}
    path = run_cli("grad", "samples/programs/control.py", "--at", "a=0.37", "--symbolic", "--json")
    assert path.returncode == 0 and json.loads(path.stdout)["symbolic"] == {"a": "4096"}
    refused = run_cli("grad", "samples/programs/control.py", "--at", "a=[0.37,0.2]", "--symbolic")
    assert refused.returncode == 2 and "formulas are for numbers" in refused.stderr


def test_validate_at_an_array_point_and_the_one_shape_guard(tmp_path):
    target = api.load(str(PROGRAMS / "control.py"))
    out = tmp_path / "control_emitted.py"
    out.write_text(api.emit(None, mode="both", target=target))
    rows = api.validate_emitted(str(out), target, {"a": np.array([0.37, -0.2])})
    assert [r["verdict"] for r in rows] == ["pass"] * 3
    assert rows[0]["emitted"] == [4096.0, 4096.0]          # the sample's expected gradient
    _, module = emitted(tmp_path, PROGRAMS / "euler_decay.py")
    with pytest.raises(ValueError, match="one shape"):
        module.f_vjp(np.array([0.5, 0.7]), 2.0)


def test_a_wrong_adjoint_fails_validation(tmp_path):
    """The checks judge: a module whose adjoint is off fails its rows (and the command exits 1)."""
    from autodiff.engine.checks.emitted import validate
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def f(x):\n    return x * x\n\n\ndef f_vjp(x, cotangent=1.0):\n"
                     "    return x * x, (3.0 * x * cotangent,)\n\n\ndef f_jvp(x, *, d_x):\n    return x * x, 2.0 * x * d_x\n")
    rows = validate(str(wrong), "f", ["x"], ["x"], {"x": 1.5}, {"x": 3.0})
    verdicts = {r["check"]: r["verdict"] for r in rows}
    assert verdicts["adjoint vs AD"] == "FAIL" and verdicts["dot product <J u, v> = <u, J^T v>"] == "FAIL"
    assert verdicts["tangent vs central differences"] == "pass"


def test_closures_are_lifted_to_helpers_with_their_own_adjoints(tmp_path):
    source = tmp_path / "closure.py"
    source.write_text("def f(x, a):\n    g = lambda t: t * a + sin(t)\n    def h(u):\n        return g(u) * u\n"
                      "    return h(x) + g(a)\n")
    target, module = emitted(tmp_path, source)
    text = (tmp_path / "emitted.py").read_text()
    assert "def f_g_fwd(_stack, t, a):" in text and "def f_h_rev(_stack, _out_b):" in text
    rng = np.random.default_rng(5)
    for _ in range(5):
        x, a = rng.uniform(-2, 2, 2)
        expected = autodiff.grad(str(source), at={"x": x, "a": a})
        value, grads = module.f_vjp(x, a)
        assert value == pytest.approx(expected.value, rel=1e-12)
        assert grads == pytest.approx((expected.gradient["x"], expected.gradient["a"]), rel=1e-12)


# programs on arrays (issue 31, arrays): each emitted at a point of the shapes given, then its
# adjoint and tangent compared with autodiff.grad at five other random points of those shapes
ARRAY_PROGRAMS = {
    "a local named e": ("def f(x):\n    e = x * 2.0\n    return sum(e * e)\n", {"x": (3,)}),
    "index t + 1, range(len(x) - 1)": ("def f(x):\n    s = 0.0\n    for t in range(len(x) - 1):\n"
                                       "        s = s + x[t] * x[t + 1]\n    return s\n", {"x": (4,)}),
    "broadcast, sum and mean over an axis": ("def f(A, b):\n    return mean(sum(A * b, 1) ** 2) + mean(A, 0)[1]\n",
                                            {"A": (3, 2), "b": ()}),
    "matmul, slices, max": ("def f(W, x):\n    h = tanh(W @ x)\n    return max(h[1:]) + sum(h[:-1] * x[0])\n",
                            {"W": (3, 2), "x": (2,)}),
    "kmeans-like minimum, len": ("def f(P, C):\n    best = sum((P - C[0]) ** 2, 1)\n    for k in range(1, len(C)):\n"
                                 "        best = minimum(best, sum((P - C[k]) ** 2, 1))\n    return sum(best) / len(P)\n",
                                 {"P": (5, 2), "C": (3, 2)}),
    "item assignment, +=, in a loop": ("def f(x, a):\n    y = x * 1.0\n    y[0] = a * x[1]\n    y[2] += sin(a)\n"
                                       "    for i in range(1, len(y)):\n        y[i] = y[i] * y[i - 1]\n"
                                       "    return sum(y * y)\n", {"x": (3,), "a": ()}),
    "comprehensions over an array and a range": (
        "def f(x, a):\n    ys = [v * a + sin(v) for v in x]\n    zs = [ys[i] * ys[i + 1] for i in range(len(x) - 1)]\n"
        "    return sum(zs) + sum([r * r for r in ys])\n", {"x": (3,), "a": ()}),
    "solve, inv, cholesky": ("D = [[8.0, 0.0, 0.0], [0.0, 8.0, 0.0], [0.0, 0.0, 8.0]]\n\n\ndef f(S, b):\n"
                             "    M = S + D\n    L = cholesky(M + S * S)\n"
                             "    return sum(L * L) + sum(inv(M) @ b) + sum(solve(M, b) ** 2)\n", {"S": (3, 3), "b": (3,)}),
    "lstm-like loop over rows": ("def f(W, X):\n    h = 0 * (W @ X[0])\n    loss = 0.0\n    for x in X:\n"
                                 "        h = sigmoid(W @ x + h)\n        e = h - x\n        loss = loss + sum(e * e)\n"
                                 "    return loss\n", {"W": (3, 3), "X": (4, 3)}),
}


# the programs whose emitted text holds at other lengths of the same ranks (issue 31, shapes)
AT_OTHER_LENGTHS = {"a local named e", "comprehensions over an array and a range", "index t + 1, range(len(x) - 1)",
                    "item assignment, +=, in a loop", "lstm-like loop over rows", "matmul, slices, max",
                    "broadcast, sum and mean over an axis", "kmeans-like minimum, len"}


@pytest.mark.parametrize("name", sorted(ARRAY_PROGRAMS))
def test_array_programs_emit_at_their_shapes_and_match_grad(tmp_path, name):
    text, shapes = ARRAY_PROGRAMS[name]
    source = tmp_path / "program.py"
    source.write_text(text)
    rng = np.random.default_rng(7)
    inputs = list(shapes)
    target, module = emitted(tmp_path, source, at=random_point(rng, inputs, shapes))
    for _ in range(5):
        point = {p: rng.uniform(-1.5, 1.5, shapes[p]) if shapes[p] else float(rng.uniform(-1.5, 1.5))
                 for p in inputs}
        expected = autodiff.grad(str(source), at=point)
        value, grads = module.f_vjp(*point.values())
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        for p, g in zip(inputs, grads):
            assert np.shape(g) == shapes[p]
            np.testing.assert_allclose(g, expected.gradient[p], rtol=1e-12, atol=1e-12)
        u = {p: rng.standard_normal(shapes[p]) if shapes[p] else float(rng.standard_normal()) for p in inputs}
        _, d = module.f_jvp(*point.values(), **{f"d_{p}": u[p] for p in inputs})
        along = sum(float(np.sum(np.asarray(expected.gradient[p]) * u[p])) for p in inputs)
        assert d == pytest.approx(along, rel=1e-11, abs=1e-12)
    # at other lengths of the same ranks: right where the text held at a second point of other
    # lengths (the module then checks only the ranks, equal lengths and lengths of 1), else refused
    longer = {p: rng.uniform(-1.5, 1.5, tuple(n + 4 if n > 1 else n for n in shapes[p])) if shapes[p]
              else float(rng.uniform(-1.5, 1.5)) for p in inputs}
    generic = "_lengths = " in (tmp_path / "emitted.py").read_text()
    assert generic == (name in AT_OTHER_LENGTHS)
    if generic:
        expected = autodiff.grad(str(source), at=longer)
        value, grads = module.f_vjp(*longer.values())
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        for p, g in zip(inputs, grads):
            np.testing.assert_allclose(g, expected.gradient[p], rtol=1e-12, atol=1e-12)
    else:
        with pytest.raises(ValueError, match="emitted for the shapes"):
            module.f_vjp(*[np.zeros(tuple(n + 1 for n in shapes[p])) for p in inputs])


def test_a_rule_that_decides_is_written_as_an_if_and_holds_at_ties(tmp_path):
    """maximum's share has a fast path where no two operands tie: both sides of its decision are
    emitted, so the emitted adjoint splits a tie evenly as the engine does."""
    source = tmp_path / "program.py"
    source.write_text("def f(x, y):\n    return sum(maximum(x, y) * x)\n")
    x, y = np.array([0.5, 1.5, -2.0]), np.array([0.25, 1.5, 3.0])      # a tie at the middle
    _, module = emitted(tmp_path, source, at={"x": x, "y": y})
    assert "    if " in (tmp_path / "emitted.py").read_text().split("def f_vjp")[1]
    for point in ({"x": x, "y": y}, {"x": x, "y": y + 1.0}, {"x": y, "y": y}):
        expected = autodiff.grad(str(source), at=point)
        _, grads = module.f_vjp(point["x"], point["y"])
        np.testing.assert_array_equal(grads[0], expected.gradient["x"])
        np.testing.assert_array_equal(grads[1], expected.gradient["y"])


def test_a_point_of_numbers_gives_the_shapes_where_a_line_needs_them(tmp_path):
    """An array constant (or a reduction) needs shapes: a point of numbers gives them (the emitted
    functions then take numbers); a program whose lines need none stays elementwise."""
    source = tmp_path / "program.py"
    source.write_text("X = [1.0, 2.0, -0.5]\n\n\ndef f(w):\n    return sum(X * w) * w\n")
    _, module = emitted(tmp_path, source, at={"w": 0.7})
    for w in (0.7, -1.3):
        value, (g,) = module.f_vjp(w)
        assert value == pytest.approx(2.5 * w * w, rel=1e-15) and g == pytest.approx(5.0 * w, rel=1e-15)
    with pytest.raises(ValueError, match="emitted for the shapes"):
        module.f_vjp(np.array([0.7, 0.8]))
    _, module = emitted(tmp_path, PROGRAMS / "euler_decay.py", at={"k": 0.5, "y0": 2.0})
    text = (tmp_path / "emitted.py").read_text()
    assert "emitted for inputs of one shape" in text and "emitted for the shapes" not in text


def test_symbolic_without_sympy_is_a_usage_error_with_the_install_hint(tmp_path):
    """SymPy is an extra: without it `--symbolic` exits 2 saying how to install it (no traceback)."""
    blocker = tmp_path / "sympy.py"
    blocker.write_text("raise ImportError('No module named sympy (blocked by the test)')\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    r = subprocess.run([sys.executable, "-m", "autodiff", "grad", "5 + x*y", "--at", "x=1,y=2", "--symbolic"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "autodiff[symbolic]" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("name, param", [("softmax_xent.py", "z"), ("loop_over_array.py", "x")])
def test_a_sample_emitted_at_n_3_validates_and_matches_grad_at_n_7(tmp_path, name, param):
    """Issue 31, shapes: the rules' text names each operand's shape, so a module emitted at
    arrays of length 3 holds at length 7 (the same rank); another rank is refused at entry."""
    rng = np.random.default_rng(17)
    target, module = emitted(tmp_path, PROGRAMS / name, at={param: rng.uniform(0.5, 2.0, 3)})
    for _ in range(5):
        point = {param: rng.uniform(-2.0, 2.0, 7)}
        rows = api.validate_emitted(str(tmp_path / "emitted.py"), target, point)
        assert [r["verdict"] for r in rows] == ["pass"] * 3
        expected = autodiff.grad(str(PROGRAMS / name), at=point)
        value, (g,) = module.f_vjp(point[param])
        assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(g, expected.gradient[param], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="emitted for the shapes"):
        module.f_vjp(np.ones((7, 2)))


def test_a_point_that_misses_an_input_is_a_usage_error():
    with pytest.raises(SourceError) as err:
        api.emit(str(PROGRAMS / "logistic_loss.py"), at={"w": np.array([0.5, -0.3])})
    assert err.value.kind == "usage" and "no value for b" in err.value.message


def test_a_recursive_target_runs_its_own_sweeps_named_apart(tmp_path):
    """f calling itself: its calls run `f_sweep_fwd`/`f_sweep_rev`/`f_sweep_jvp` (f_vjp and f_jvp
    keep their public signatures); the emitted code raised NameError (exit 70) before."""
    source = tmp_path / "program.py"
    source.write_text("def f(w, n):\n    if n <= 0:\n        return w\n    return sin(f(w, n - 1)) * w\n")
    out = tmp_path / "emitted.py"
    out.write_text(api.emit(str(source), wrt=["w"], mode="both"))
    spec = importlib.util.spec_from_file_location("emitted_recursive", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for w in np.random.default_rng(8).uniform(-2, 2, 5):
        expected = autodiff.grad(str(source), at={"w": w, "n": 3}, wrt=["w"])
        value, (g,) = module.f_vjp(w, 3)
        assert value == pytest.approx(expected.value, rel=1e-12) and g == pytest.approx(expected.gradient["w"], rel=1e-12)
        assert module.f_jvp(w, 3, d_w=1.0)[1] == pytest.approx(expected.gradient["w"], rel=1e-12)


def test_docs_emit_lists_what_is_not_emitted_yet():
    """docs/emit.md's table of what emit cannot write yet names each refusal of NOT_YET in emit's
    own words (a refusal added here without its line in the docs fails)."""
    text = " ".join((ROOT / "docs" / "emit.md").read_text(encoding="utf-8").split())
    missing = [words for words in NOT_YET if words not in text]
    assert not missing, missing


def test_a_defaulted_parameter_keeps_its_default_unless_given_then_is_an_input(tmp_path):
    """As the language treats it: the emitted functions take it as a keyword with its default (a
    constant there); given in --at it is an input, differentiated when --wrt names it; named in
    --wrt without a value it is refused as `autodiff grad` refuses it."""
    source = tmp_path / "program.py"
    source.write_text("def f(w, b, l2=0.01, k=2):\n    return sum(w * w) * l2 + b * k + sum(w) * b\n")
    w = np.array([0.5, -0.25])
    text = api.emit(str(source), mode="both", at={"w": w, "b": 0.1})
    assert "def f(w, b, l2=0.01, k=2.0):" in text and "def f_vjp(w, b, l2=0.01, k=2.0, cotangent=1.0):" in text
    assert "# differentiated inputs: w, b" in text
    module = load_text(tmp_path, text)
    value, (g_w, g_b) = module.f_vjp(w, 0.1)
    expected = autodiff.grad(str(source), at={"w": w, "b": 0.1})
    assert value == pytest.approx(expected.value, rel=1e-12) and module.f(w, 0.1) == pytest.approx(expected.value, rel=1e-12)
    np.testing.assert_allclose(g_w, expected.gradient["w"], rtol=1e-12)
    assert g_b == pytest.approx(expected.gradient["b"], rel=1e-12)
    given = api.emit(str(source), mode="both", wrt=["w", "l2"], at={"w": w, "b": 0.1, "l2": 0.3})
    module = load_text(tmp_path, given, "given")
    value, (g_w, g_l2) = module.f_vjp(w, 0.1, 0.3)
    expected = autodiff.grad(str(source), at={"w": w, "b": 0.1, "l2": 0.3}, wrt=["w", "l2"])
    assert value == pytest.approx(expected.value, rel=1e-12)
    np.testing.assert_allclose(g_w, expected.gradient["w"], rtol=1e-12)
    assert g_l2 == pytest.approx(expected.gradient["l2"], rel=1e-12)
    _, d = module.f_jvp(w, 0.1, 0.3, d_w=np.zeros(2), d_l2=1.0)
    assert d == pytest.approx(expected.gradient["l2"], rel=1e-12)
    with pytest.raises(SourceError) as err:
        api.emit(str(source), wrt=["l2"], at={"w": w, "b": 0.1})
    assert "a parameter with a default is an input only when given" in err.value.message and "l2=" in err.value.hint


def load_text(tmp_path, text, name="emitted_text"):
    out = tmp_path / f"{name}.py"
    out.write_text(text)
    spec = importlib.util.spec_from_file_location(name, out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
