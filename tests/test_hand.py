"""Hand-derived gradients as code (issue 29 item 4): Python callables, a program's own hand
function (`hand = "loss_grad"`, `--hand loss_grad`), formulas calling the program's functions,
Jacobian/Hessian functions, tangent (jvp) and adjoint (vjp) claims with the dot-product test, and
autodiff.testing.assert_gradient's message."""
import json
import os

import numpy as np
import pytest

import autodiff
from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.files import parse_text
from autodiff.engine.checks.runner import run_case

MODEL = '''import numpy as np

def loss(W, b, X):
    z = X @ W + b
    return np.sum(z**2) + 0.5 * np.sum(W**2)

def loss_grad(W, b, X):
    z = X @ W + b
    dz = 2 * z
    return X.T @ dz + W, np.sum(dz, axis=0)

def loss_grad_no_penalty(W, b, X):
    z = X @ W + b
    dz = 2 * z
    return X.T @ dz, np.sum(dz, axis=0)

def f(x):
    return np.sin(x) * x

def f_jvp(x, u):
    return (np.cos(x) * x + np.sin(x)) * u

def f_vjp(x, v):
    return (np.cos(x) * x + np.sin(x)) * v

def f_vjp_wrong(x, v):
    return np.cos(x) * x * v

def f_jac(x):
    return np.diag(np.cos(x) * x + np.sin(x))

def e(x):
    return np.sum(x**3)

def e_hess(x):
    return np.diag(6 * x)

def e2(x, y):
    return x**2 * y

def e2_hxy(x, y):
    return 2 * x
'''

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]])
W = np.array([[0.5, -1.0], [2.0, 0.25]])
B = np.array([0.1, -0.2])


def model(tmp_path):
    p = tmp_path / "model.py"
    p.write_text(MODEL)
    return str(p)


def reference_grad(W, b, X):
    z = X @ W + b
    return X.T @ (2 * z) + W, np.sum(2 * z, axis=0)


# ---- Python callables --------------------------------------------------------------------------

def test_python_callables_pass_against_central_differences():
    f = lambda x, y: float(np.sum(np.sin(x) * y))
    g = lambda x, y: (np.cos(x) * y, np.sin(x))
    r = autodiff.check_gradient(f, grad=g, at={"x": np.array([0.5, 1.0]), "y": np.array([2.0, 3.0])})
    assert r.passed and r.claimed == "hand" and r.reference == "FD"
    assert [row.label for row in r.entries] == ["x[0]", "x[1]", "y[0]", "y[1]"]
    assert r.entries[0].reference == pytest.approx(np.cos(0.5) * 2.0, rel=1e-9)


def test_python_callables_name_the_wrong_entry():
    f = lambda x: float(np.sum(x**3))
    g = lambda x: 3 * x**2 + np.array([0.0, 1.0, 0.0])
    r = autodiff.check_gradient(f, grad=g, at={"x": np.array([1.0, 2.0, 3.0])})
    assert not r.passed
    assert [row.label for row in r.failures] == ["x[1]"]
    assert r.failures[0].claimed == 13.0 and r.failures[0].reference == pytest.approx(12.0, rel=1e-9)


def test_python_callables_in_fast_mode_project_once_and_check_every_entry_on_a_failure():
    f = lambda x: float(np.sum(x**3))
    at = {"x": np.array([1.0, 2.0, 3.0])}
    good = autodiff.check_gradient(f, grad=lambda x: 3 * x**2, at=at, mode="fast", seed=5)
    assert good.passed and (good.mode, good.seed, good.projection.verdict, good.full) == ("fast", 5, "pass", None)
    bad = autodiff.check_gradient(f, grad=lambda x: 3 * x**2 + np.array([0.0, 1.0, 0.0]), at=at, mode="fast", seed=5)
    assert not bad.passed and bad.projection.verdict == "fail"
    assert [row.label for row in bad.full.failures] == ["x[1]"]
    assert bad.full.failures[0].claimed == 13.0 and bad.full.failures[0].reference == pytest.approx(12.0, rel=1e-9)


def test_python_callables_see_a_kink_as_the_tool_does():
    f = lambda x: float(np.sum(np.abs(x)))
    g = lambda x: np.sign(x)
    r = autodiff.check_gradient(f, grad=g, at={"x": np.array([0.0, 2.0])})
    assert [row.verdict for row in r.entries] == ["kink", "pass"]
    assert (r.entries[0].left, r.entries[0].right) == (pytest.approx(-1.0), pytest.approx(1.0))


def test_a_dict_from_a_callable_hand_gradient():
    f = lambda a, b: a * b
    r = autodiff.check_gradient(f, grad=lambda a, b: {"b": a, "a": b}, at={"a": 3.0, "b": 4.0})
    assert r.passed and [row.label for row in r.entries] == ["a", "b"]


def test_a_language_target_with_a_callable_hand_gradient():
    good = autodiff.check_gradient("sin(x)*y", grad=lambda x, y: (np.cos(x) * y, np.sin(x)), at={"x": 1.0, "y": 2.0})
    assert good.passed and good.reference == "AD"
    bad = autodiff.check_gradient("sin(x)*y", grad=lambda x, y: (np.cos(x), np.sin(x)), at={"x": 1.0, "y": 2.0})
    assert [row.label for row in bad.failures] == ["x"]


def test_a_hand_gradient_of_the_wrong_length_is_an_input_error():
    with pytest.raises(autodiff.SourceError, match="returned 1 value.* 2 inputs"):
        autodiff.check_gradient("x*y", grad=lambda x, y: (y,), at={"x": 1.0, "y": 2.0})


# ---- a program's own hand function -------------------------------------------------------------

def test_a_program_function_as_the_hand_gradient(tmp_path):
    path = model(tmp_path)
    r = autodiff.check_gradient(path, fn="loss", grad="loss_grad", at={"W": W, "b": B, "X": X}, wrt=["W", "b"])
    assert r.passed and len(r.entries) == 6
    bad = autodiff.check_gradient(path, fn="loss", grad="loss_grad_no_penalty", at={"W": W, "b": B, "X": X},
                                  wrt=["W", "b"])
    assert [row.label for row in bad.failures] == ["W[0, 0]", "W[0, 1]", "W[1, 0]", "W[1, 1]"]


def case_of(text, tmp_path):
    model(tmp_path)
    p = tmp_path / "m.grad.toml"
    p.write_text(text)
    from autodiff.engine.checks.files import load_file
    return load_file(str(p))


POINT = 'at = { W = [[0.5, -1.0], [2.0, 0.25]], b = [0.1, -0.2], X = [[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]] }'


def test_check_file_hand_names_a_function_of_the_program(tmp_path):
    good, bad = case_of(f'''
[[case]]
name = "good"
program = "model.py"
fn = "loss"
wrt = ["W", "b"]
hand = "loss_grad"
{POINT}

[[case]]
name = "no penalty"
program = "model.py"
fn = "loss"
wrt = ["W", "b"]
hand = "loss_grad_no_penalty"
{POINT}
''', tmp_path)
    assert run_case(good).status == "passed"
    result = run_case(bad)
    assert result.status == "failed" and result.entry == "W[1, 0]"
    assert "misses the term through `**` at 5:41" in result.message


def test_check_file_formulas_call_the_programs_functions(tmp_path):
    (case,) = case_of(f'''
[[case]]
program = "model.py"
fn = "loss"
grad = {{ W = "loss_grad(W, b, X)[0]", b = "loss_grad(W, b, X)[1]" }}
wrt = ["W", "b"]
{POINT}
''', tmp_path)
    assert run_case(case).status == "passed"


def test_check_file_hand_and_grad_together_is_refused(tmp_path):
    with pytest.raises(autodiff.SourceError, match="give one of grad and hand"):
        case_of('[[case]]\nprogram = "model.py"\nfn = "f"\nhand = "f_jvp"\ngrad = { x = 1 }\nat = { x = 1 }\n',
                tmp_path)


def test_check_file_jacobian_and_hessian_functions(tmp_path):
    jac, hess = case_of('''
[[case]]
name = "jacobian"
program = "model.py"
fn = "f"
jacobian = "f_jac"
at = { x = [0.5, 2.0] }

[[case]]
name = "hessian"
program = "model.py"
fn = "e"
hessian = "e_hess"
at = { x = [0.5, 2.0] }
''', tmp_path)
    assert run_case(jac).status == "passed"
    assert run_case(hess).status == "passed"


def test_check_file_jvp_vjp_and_the_dot_product_test(tmp_path):
    good, bad = case_of('''
[[case]]
name = "pair"
program = "model.py"
fn = "f"
jvp = "f_jvp"
vjp = "f_vjp"
at = { x = [0.5, 2.0, -1.0] }

[[case]]
name = "wrong adjoint"
program = "model.py"
fn = "f"
jvp = "f_jvp"
vjp = "f_vjp_wrong"
at = { x = [0.5, 2.0, -1.0] }
''', tmp_path)
    result = run_case(good)
    assert result.status == "passed", result.message
    labels = {row["entry"] for row in run_case(bad).rows}
    assert labels == {"vjp x[0]", "vjp x[1]", "vjp x[2]", "⟨J·u, v⟩ = ⟨u, Jᵀ·v⟩"}


# ---- the command line --------------------------------------------------------------------------

def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


AT = "W=[[0.5,-1.0],[2.0,0.25]],b=[0.1,-0.2],X=[[1.0,2.0],[3.0,-1.0],[0.5,0.25]]"


def test_cli_hand_passes_and_fails(tmp_path, capsys):
    path = model(tmp_path)
    code, out, err = cli(capsys, "grad", path, "--fn", "loss", "--at", AT, "--wrt", "W,b", "--hand", "loss_grad")
    assert code == 0, err
    assert "hand-derived" in out or "pass" in out
    code, out, err = cli(capsys, "grad", path, "--fn", "loss", "--at", AT, "--wrt", "W,b", "--hand",
                         "loss_grad_no_penalty", "--json")
    assert code == 1
    doc = json.loads(out)
    failing = [e for e in doc["check"]["entries"] if e["verdict"] == "fail"]
    assert [e["entry"] for e in failing] == ["W[0, 0]", "W[0, 1]", "W[1, 0]", "W[1, 1]"]
    assert "misses the term through `**` at 5:41" in failing[0]["reason"]


def test_cli_hand_names_no_function(tmp_path, capsys):
    path = model(tmp_path)
    code, _, err = cli(capsys, "grad", path, "--fn", "loss", "--at", AT, "--hand", "los_grad")
    assert code == 2 and "los_grad" in err and "loss_grad" in err


def test_cli_jacobian_and_hessian_hand(tmp_path, capsys):
    path = model(tmp_path)
    code, _, err = cli(capsys, "jacobian", path, "--fn", "f", "--at", "x=[0.5,2.0]", "--hand", "f_jac")
    assert code == 0, err
    code, _, err = cli(capsys, "hessian", path, "--fn", "e", "--at", "x=[0.5,2.0]", "--hand", "e_hess")
    assert code == 0, err
    code, _, _ = cli(capsys, "hessian", path, "--fn", "e", "--at", "x=[0.5,2.0]", "--hand", "f_jac")
    assert code == 1


# ---- autodiff.testing --------------------------------------------------------------------------

def test_assert_gradient_passes_quietly():
    from autodiff.testing import assert_gradient
    assert_gradient(lambda x: float(np.sum(x**2)), grad=lambda x: 2 * x, at={"x": np.array([1.0, 2.0])})


def test_assert_gradient_message_names_the_wrong_entries():
    from autodiff.testing import assert_gradient
    with pytest.raises(AssertionError) as info:
        assert_gradient("sin(x)*x", grad={"x": "cos(x)*x"}, at={"x": 2.0})
    text = str(info.value)
    assert text.splitlines()[0] == "the hand-derived gradient is wrong at 1 of 1 entries (verdict: fail)"
    assert "x: claimed -0.832294, reference 0.0770038" in text
    assert "misses the term through `*` at 1:7 (0.909)" in text
    assert "EntryCheck" not in text and "CheckReport" not in text


def test_cli_hand_and_explain_are_separate_views(tmp_path, capsys):
    path = model(tmp_path)
    code, _, err = cli(capsys, "jacobian", path, "--fn", "f", "--at", "x=[0.5,2.0]", "--hand", "f_jac", "--explain")
    assert code == 2 and "--explain and --hand are separate views" in err
    code, _, err = cli(capsys, "grad", path, "--fn", "e", "--at", "x=[0.5,2.0]", "--hand", "f_jac", "--explain")
    assert code == 2 and "--explain and --hand are separate views" in err


def test_assert_gradient_of_python_functions_names_central_differences():
    import autodiff
    with pytest.raises(AssertionError) as info:
        autodiff.testing.assert_gradient(lambda x: float(np.sum(x**3)), grad=lambda x: 3 * x,
                                         at={"x": np.array([1.0, 2.0])})
    lines = str(info.value).splitlines()
    assert lines[0] == "the hand-derived gradient is wrong at 1 of 2 entries (verdict: fail)"
    assert lines[1] == "  x[1]: claimed 6, reference 12 (central differences): fail"


def test_cli_hand_formulas_for_an_expression(capsys):
    code, out, _ = cli(capsys, "grad", "sin(x)*x", "--at", "x=2", "--hand", "x=cos(x)*x")
    assert code == 1
    assert "the claim equals the term through `sin(x)` at 1:1 (-0.832) and misses the term through `*` at 1:7 " \
           "(0.909)" in " ".join(out.split())
    code, _, _ = cli(capsys, "grad", "sin(x)*y", "--at", "x=2,y=3", "--hand", "x=cos(x)*y, y=sin(x)")
    assert code == 0
    code, _, err = cli(capsys, "grad", "sin(x)*y", "--at", "x=2,y=3", "--hand", "x=cos(x)*y, sin(x)")
    assert code == 2 and "neither a function name nor NAME=FORMULA" in err


def test_a_formula_calling_a_misspelt_function_of_the_program(tmp_path):
    (case,) = case_of(f'''
[[case]]
program = "model.py"
fn = "loss"
grad = {{ W = "los_grad(W, b, X)[0]" }}
wrt = ["W"]
{POINT}
''', tmp_path)
    result = run_case(case)
    assert result.status == "error"
    assert "uses 'los_grad', which is not an input nor a function of the program" in result.message
    assert "did you mean 'loss_grad'?" in result.message


def test_an_error_in_a_formula_calling_the_program_is_told_in_the_formula(tmp_path):
    (case,) = case_of(f'''
[[case]]
program = "model.py"
fn = "loss"
grad = {{ W = "loss_grad(W, b, X)[5]" }}
wrt = ["W"]
{POINT}
''', tmp_path)
    result = run_case(case)
    assert result.status == "error"
    assert "grad W:1:1: indexing: tuple index out of range" in result.message
    assert "1 | loss_grad(W, b, X)[5]" in result.message


def test_cli_hand_returning_fewer_values_than_inputs_says_wrt(tmp_path, capsys):
    path = model(tmp_path)
    code, _, err = cli(capsys, "grad", path, "--fn", "loss", "--at", AT, "--hand", "loss_grad")
    assert code == 2
    assert "the hand-derived grad loss_grad returned 2 values for 3 inputs (W, b, X)" in err
    assert "name the inputs it returns with --wrt" in err


def test_a_hand_function_names_its_parameters_as_it_likes(tmp_path):
    p = tmp_path / "named.py"
    p.write_text("def loss(W, b):\n    return sum(W * W) + b\n\ndef loss_grad(weights, bias):\n"
                 "    return 2 * weights, 1.0\n")
    r = autodiff.check_gradient(str(p), fn="loss", grad="loss_grad", at={"W": np.array([1.0, 2.0]), "b": 3.0})
    assert r.passed and [row.claimed for row in r.entries] == [2.0, 4.0, 1.0]


def test_a_callable_that_changes_its_argument_in_place_changes_no_input():
    def g(x):
        out = 3 * x**2
        x += 1.0                 # numpy code may reuse its argument
        return out
    r = autodiff.check_gradient(lambda x: float(np.sum(x**3)), grad=g, at={"x": np.array([1.0, 2.0])})
    assert r.passed and [row.reference for row in r.entries] == [pytest.approx(3.0, rel=1e-9),
                                                                 pytest.approx(12.0, rel=1e-9)]


def test_a_python_f_that_changes_its_argument_in_place_is_still_differenced_at_the_point():
    def f(x):
        x **= 3                  # in place, as numpy code may do
        return float(np.sum(x))
    r = autodiff.check_gradient(f, grad=lambda x: 3 * x**2, at={"x": np.array([1.0, 2.0])})
    assert r.passed and [row.reference for row in r.entries] == [pytest.approx(3.0, rel=1e-9),
                                                                 pytest.approx(12.0, rel=1e-9)]


def test_check_file_function_claims_need_a_program(tmp_path):
    with pytest.raises(autodiff.SourceError) as info:
        case_of('[[case]]\nf = "x**2"\nat = { x = 1 }\nhand = "g"\n', tmp_path)
    assert info.value.message == "hand = 'g' names a function of a program, but this case differentiates an " \
                                 "expression (f)"
    assert (info.value.span.line, info.value.span.column) == (4, 1)
    with pytest.raises(autodiff.SourceError, match="jvp must name a function of the program"):
        case_of('[[case]]\nprogram = "model.py"\nfn = "f"\nat = { x = 1 }\njvp = 3\n', tmp_path)


def test_a_wrong_adjoint_names_the_term_it_misses(tmp_path):
    import zlib
    (case,) = case_of('[[case]]\nname = "adjoint"\nprogram = "model.py"\nfn = "f"\nvjp = "f_vjp_wrong"\n'
                      'at = { x = [0.5, 2.0, -1.0] }\n', tmp_path)
    result = run_case(case)
    x = np.array([0.5, 2.0, -1.0])
    rng = np.random.default_rng([zlib.crc32(b"adjoint") & 0x7FFFFFFF, 29])
    rng.standard_normal(3)                                  # u: the tangent's direction
    v = rng.standard_normal(3)                              # v: the adjoint's
    row = next(r for r in result.rows if r["entry"] == "vjp x[1]")
    assert row["reason"].endswith(f"the claim equals the term through `np.sin(x)` at 18:12 "
                                  f"({v[1] * x[1] * np.cos(x[1]):.3g}) and misses the term through `*` at 18:22 "
                                  f"({v[1] * np.sin(x[1]):.3g})")


def test_a_float32_case_with_a_tangent_stays_in_float32(tmp_path):
    (case,) = case_of('[[case]]\nprogram = "model.py"\nfn = "f"\njvp = "f_jvp"\nvjp = "f_vjp"\ndtype = "float32"\n'
                      'at = { x = [0.5, 2.0, -1.0] }\n', tmp_path)
    assert run_case(case).status == "passed"
    from autodiff.engine.lang.values import dtype, set_dtype
    left = dtype()
    set_dtype("float64")
    assert left == "float32"        # the AD runs of the tangent and adjoint did not switch the case to float64


def test_check_file_hessian_formulas_call_the_programs_functions(tmp_path):
    good, bad = case_of('''
[[case]]
name = "good"
program = "model.py"
fn = "e2"
hessian = { x = { y = "e2_hxy(x, y)", x = "2 * y" } }
at = { x = 3, y = 4 }

[[case]]
name = "bad"
program = "model.py"
fn = "e2"
hessian = { x = { y = "e2_hxy(x, y) + 1" } }
at = { x = 3, y = 4 }
''', tmp_path)
    assert run_case(good).status == "passed"
    result = run_case(bad)
    assert result.status == "failed" and "hand-derived 7 vs the engine's Hessian 6" in result.message


# ---- complex inputs (issue 32 item 3): part by part, and the other convention named ----------------

def test_hand_gradient_of_a_complex_input_is_compared_part_by_part():
    """|z|^2 = x^2 + y^2 at 1+2j: the reported gradient is 2+4j (PyTorch's convention). A claim of
    2 conj(z) = 2-4j used to pass (the imaginary parts were dropped); now it fails on z.imag."""
    from autodiff.engine.checks.gradient import check_gradient
    ok = check_gradient("abs(z)**2", at={"z": 1 + 2j}, grad={"z": "2*z"})
    assert ok.passed and [r.label for r in ok.entries] == ["z.real", "z.imag"]
    assert [r.claimed for r in ok.entries] == [2.0, 4.0]
    wrong = check_gradient("abs(z)**2", at={"z": 1 + 2j}, grad={"z": "2*real(z)"})
    assert not wrong.passed and "JAX" not in wrong.entries[1].reason


def test_hand_gradient_in_jaxs_convention_fails_naming_it():
    from autodiff.engine.checks.gradient import check_gradient
    v = np.array([1 - 1j, 2 + 0.5j])
    r = check_gradient("sum(abs(v)**2)", at={"v": v}, grad={"v": "2*conj(v)"})
    assert not r.passed
    assert [row.label for row in r.failures] == ["v[0].imag", "v[1].imag"]
    assert all("this is JAX's convention: the conjugate of the reported gradient" in row.reason for row in r.failures)
    mixed = check_gradient("real(z*conj(w)) + abs(exp(z))", at={"z": 0.3 + 0.4j, "w": 1 - 2j},
                           grad={"z": "1 + exp(real(z)) + 2j", "w": "0.3 - 0.4j"})
    assert {row.label for row in mixed.failures} == {"z.imag", "w.imag"}
    assert all("JAX's convention" in row.reason for row in mixed.failures)
