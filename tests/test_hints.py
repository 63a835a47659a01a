"""Hints that fit (issue 13, item 12): `ln` suggests `log`, a check-file case without a point says
`at = {...}` in the file's words, and pytest on a check file without the flag says to add it."""
import os
import subprocess
import sys

import pytest

from autodiff.engine import api
from autodiff.engine.checks.files import parse_text
from autodiff.engine.checks.runner import run_case

HERE = os.path.dirname(__file__)


@pytest.mark.parametrize("text,hint", [("ln(x)", "`log`"), ("pow(x, 2)", "`**`"), ("sinn(x)", "`sin`")])
def test_unknown_names_suggest_the_builtin_meant(text, hint):
    with pytest.raises(api.SourceError) as err:
        api.grad(text, at={"x": 1.0})
    assert err.value.hint == f"did you mean {hint}?"


def test_a_case_without_a_point_says_at_in_the_files_words():
    case, = parse_text('[[case]]\nname = "no point"\nf = "x**2 + y"\n')
    result = run_case(case)
    assert result.status == "error"
    assert "add at = { x = ..., y = ... }" in result.message and "--at" not in result.message


def test_pytest_on_a_check_file_without_the_flag_says_to_add_it(tmp_path):
    path = tmp_path / "mine.grad.toml"
    path.write_text('[[case]]\nf = "x**2"\nat = { x = 3 }\n')
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode != 0
    assert "add --autodiff-check" in p.stdout + p.stderr


# ---- issue 29 item 8: messages that point the right way ------------------------------------------

def error_of(text, at=None, **kwargs):
    with pytest.raises(api.SourceError) as err:
        api.grad(text, at=at if at is not None else {"x": 1.0}, **kwargs)
    return err.value


@pytest.mark.parametrize("text,library,spelled", [
    ("torch.exp(x)", "PyTorch", "exp(x)"), ("tf.norm(b)", "TensorFlow", "norm(b)"),
    ("tf.reduce_sum(x * x)", "TensorFlow", "sum(...)"),
    ("tf.math.exp(x)", "TensorFlow", "exp(x)")])
def test_another_librarys_path_in_an_expression_says_the_language_reads_numpy(text, library, spelled):
    err = error_of(text, at={"x": 1.0, "b": 1.0})
    root = text.split(".")[0]
    assert err.message == f"`{root}` is {library}'s: the language reads numpy: write {spelled}"
    assert err.span.line == 1 and err.span.column == 1


def test_another_librarys_path_in_a_file_says_the_language_reads_numpy(tmp_path):
    prog = tmp_path / "m.py"
    prog.write_text("def f(x, b):\n    y = torch.exp(x)\n    return tf.norm(b) + sum(y)\n")
    err = error_of(str(prog), at={"x": 1.0, "b": 1.0})
    assert err.message == "`torch` is PyTorch's: the language reads numpy: write exp(x)"
    assert (err.span.line, err.span.column) == (2, 9)


def test_jaxs_numpy_is_numpy_not_another_library():
    """JAX's `jnp.sum` is numpy's sum (issue 30), where it was refused as another library's."""
    r = api.grad("jnp.sum(x * x) + 1", at={"x": [1.0, 2.0]})
    assert r.value == 6.0 and list(r.gradient["x"]) == [2.0, 4.0]


def test_a_parameter_named_like_a_library_is_still_the_parameter(tmp_path):
    prog = tmp_path / "m.py"
    prog.write_text("def f(tf):\n    return tf.sum() * 2\n")
    assert list(api.grad(str(prog), at={"tf": [1.0, 2.0]}).gradient["tf"]) == [2.0, 2.0]


@pytest.mark.parametrize("text,hint", [
    ("sum(x.detach() * x)", "numpy arrays have no method .detach(): write stop_gradient(x)"),
    ("x.norm()", "numpy arrays have no method .norm(): write norm(x)")])
def test_pytorch_method_spellings_name_the_builtin(text, hint):
    err = error_of(text, at={"x": [1.0, 2.0]})
    assert err.hint == hint


@pytest.mark.parametrize("text", ["np.linalg.multi_dot(x)", "np.fooo(x)"])
def test_a_missing_numpy_name_never_suggests_an_unrelated_builtin(text, tmp_path):
    prog = tmp_path / "m.py"
    prog.write_text(f"import numpy as np\ndef f(x):\n    return sum({text})\n")
    for err in (error_of(text, at={"x": [[1.0, 2.0], [3.0, 4.0]]}),
                error_of(str(prog), at={"x": [[1.0, 2.0], [3.0, 4.0]]})):
        path = text.split("(")[0]
        assert err.message == f"`{path}` is not among the language's builtins"
        assert "sqrt" not in (err.hint or "") and "floor" not in (err.hint or "")
    linalg = error_of("np.linalg.multi_dot(x)", at={"x": [[1.0, 2.0], [3.0, 4.0]]}).hint
    assert linalg.startswith("the names of np.linalg the language has: cholesky, ")
    assert all(n in linalg.split(": ")[1].split(", ") for n in ("det", "inv", "solve", "svd", "eigh"))
    assert error_of("np.linalg.slogdett(x)", at={"x": [[1.0, 2.0], [3.0, 4.0]]}).hint == \
        "did you mean `np.linalg.slogdet`?"


def test_at_with_spaces_between_entries_says_to_separate_them_with_commas(capsys):
    from autodiff.cli.main import invoke
    from autodiff.cli.render import common as render
    render._consoles.clear()
    code = invoke(["grad", "sum(x)", "--at", "x=[1 2 3]"])
    err = capsys.readouterr().err
    assert code == 2
    assert "hint: separate the entries with commas: [1, 2, 3]" in err


def test_a_target_naming_a_file_without_py_says_so(capsys, tmp_path, monkeypatch):
    from autodiff.cli.main import invoke
    from autodiff.cli.render import common as render
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text("def f(x):\n    return x * x\n")
    (tmp_path / "prog").write_text("def f(x):\n    return x * x\n")
    for args, words in ((["model", "--fn", "f"], "TARGET 'model' is read as an expression; the program is model.py"),
                        (["model"], "the program is model.py"),
                        (["prog"], "TARGET 'prog' names an existing file, but without .py it is read as an "
                                   "expression")):
        render._consoles.clear()
        code = invoke(["grad", *args, "--at", "x=2"])
        err = capsys.readouterr().err
        assert code == 2 and words in err, err
    render._consoles.clear()
    assert invoke(["grad", "prog", "--at", "prog=2"]) == 0          # an expression after all: all inputs given


@pytest.mark.parametrize("text,hint", [
    ('[[case]]\nf = x**2\nat = { x = 1 }\n', 'a formula is a string in TOML: quote it, f = "x**2"'),
    ('[[case]]\nf = "x**2"\nat = { x = 1 }\ngrad = { x = 2*x }\n', 'a formula is a string in TOML: quote it, x = "2*x"')])
def test_an_unquoted_toml_formula_says_to_quote_it(text, hint):
    with pytest.raises(api.SourceError) as err:
        parse_text(text, "c.grad.toml")
    assert err.value.kind == "invalid TOML" and err.value.hint == hint


def test_a_toml_error_that_is_no_formula_gets_no_quote_hint():
    with pytest.raises(api.SourceError) as err:
        parse_text('[[case]]\nf = "x**2"\nat = { x = 1.5.3 }\n', "c.grad.toml")
    assert err.value.hint is None


@pytest.mark.parametrize("source, where", [
    ("import math\ndef f(x):\n    return math.remainder(x, 0.4)\n", (3, 12)),
    ("import math\ndef f(x):\n    r = math.remainder\n    return r(x, 0.4)\n", (3, 9)),
    ("from math import remainder\ndef f(x):\n    return remainder(x, 0.4)\n", (1, 18))])
def test_math_remainder_is_not_numpys_remainder(tmp_path, source, where):
    """`math.NAME` is the builtin NAME, numpy's: math.remainder(1.5, 0.4) gave numpy's x mod y, 0.3,
    where Python's is IEEE's remainder, -0.1 (n = 4, the integer nearest 3.75). The one math function
    whose numpy namesake computes something else is refused, saying what to write."""
    path = tmp_path / "program.py"
    path.write_text(source)
    with pytest.raises(api.SourceError) as err:
        api.grad(str(path), at={"x": 1.5})
    assert "IEEE's remainder" in err.value.message and (err.value.span.line, err.value.span.column) == where
    assert "x - y * round(x / y)" in err.value.hint
    assert api.grad("math.fmod(x, 0.4) + remainder(x, 0.4)", at={"x": 1.5}).value == \
        pytest.approx(2 * (1.5 % 0.4), rel=1e-15)
