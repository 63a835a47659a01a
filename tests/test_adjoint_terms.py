"""engine/views/adjoint_terms.py (issue 29 item 5): a failing claim against AD's adjoint split into
its terms, one per use of the input, with the source spans; and the simple slips named."""
import json

import numpy as np
import pytest

import autodiff
from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.files import parse_text
from autodiff.engine.checks.runner import run_case


def reason_of(source, at, grad, **kw):
    r = autodiff.check_gradient(source, at=at, grad=grad, **kw)
    assert not r.passed
    return r.failures[0].reason


def test_the_issue_example_names_the_matched_and_the_missed_term():
    reason = reason_of("sin(x)*x", {"x": 2.0}, {"x": "cos(x)*x"})
    assert reason.endswith("the claim equals the term through `sin(x)` at 1:1 (-0.832) and misses the term "
                           "through `*` at 1:7 (0.909)")


def test_the_terms_themselves():
    from autodiff.engine.views.adjoint_terms import terms_of
    from autodiff.engine.lang.target import load
    terms = terms_of(load("sin(x)*x"), {"x": 2.0}, ["x"])["x"]
    assert [(t.text, t.line, t.column) for t in terms] == [("sin(x)", 1, 1), ("*", 1, 7)]
    assert float(terms[0].value) == 2.0 * np.cos(2.0)
    assert float(terms[1].value) == np.sin(2.0)
    assert float(terms[0].value) + float(terms[1].value) == pytest.approx(np.sin(2.0) + 2 * np.cos(2.0), rel=1e-15)


def test_a_use_in_a_loop_is_one_term():
    from autodiff.engine.views.adjoint_terms import terms_of
    from autodiff.engine.lang.target import load
    prog = "def f(x):\n    s = 0.0\n    for i in range(3):\n        s = s + x * x\n    return s\n"
    terms = terms_of(load(prog, filename="loop.py"), {"x": 1.5}, ["x"])["x"]
    assert [(t.text, t.line, t.column) for t in terms] == [("*", 4, 19)]
    assert float(terms[0].value) == 9.0


def test_a_factor_of_two():
    assert reason_of("x**2 + y", {"x": 3.0, "y": 1.0}, {"x": "12.0", "y": 1.0}).endswith(
        "the claim is 2 times AD's gradient of x")


def test_half():
    assert reason_of("x**2", {"x": 3.0}, {"x": "3.0"}).endswith("the claim is 1/2 times AD's gradient of x")


def test_a_sign():
    assert reason_of("x**3", {"x": 2.0}, {"x": "-12.0"}).endswith("the claim is AD's gradient of x with the sign flipped")


def test_a_transpose():
    at = {"A": np.array([[1.0, 2.0], [3.0, 4.0]]), "M": np.array([[1.0, 5.0], [-2.0, 0.5]])}
    reason = reason_of("sum(A * M)", at, {"A": at["M"].T.tolist(), "M": at["A"].tolist()})
    assert reason.endswith("the claim is the transpose of AD's gradient of A")


def test_a_missing_penalty_term():
    at = {"w": np.array([1.0, -2.0]), "X": np.array([[1.0, 0.5], [2.0, 1.0]]), "y": np.array([0.5, 1.0])}
    claim = (2 * at["X"].T @ (at["X"] @ at["w"] - at["y"])).tolist()
    reason = reason_of("sum((X @ w - y)**2) + 0.1*sum(w**2)", at, {"w": claim}, wrt=["w"])
    # entry w[0]: the data term 2 Xᵀ(Xw - y) = [-5, -2.5], the penalty 0.2 w = [0.2, -0.4]
    assert reason.endswith("the claim equals the term through `@` at 1:8 (-5) and misses the term through `**` "
                           "at 1:32 (0.2)")


def test_a_term_counted_twice():
    reason = reason_of("sin(x)*x", {"x": 2.0}, {"x": float(2 * np.cos(2.0) + 2 * np.sin(2.0))})
    assert reason.endswith("the claim adds the term through `*` at 1:7 (0.909) once more")


def test_no_sentence_when_nothing_explains_the_difference():
    reason = reason_of("sin(x)*x", {"x": 2.0}, {"x": "5.0"})
    assert "the claim" not in reason


def test_a_check_file_and_json_say_it(tmp_path, capsys):
    p = tmp_path / "c.grad.toml"
    p.write_text('[[case]]\nname = "wrong"\nf = "sin(x)*x"\nat = { x = 2 }\ngrad = { x = "cos(x)*x" }\n')
    (case,) = parse_text(p.read_text(), str(p))
    result = run_case(case)
    assert result.message.endswith("misses the term through `*` at 1:7 (0.909)")
    render._consoles.clear()
    code = climain.invoke(["check", str(p), "--json"])
    out, _ = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)
    assert doc["cases"][0]["failures"][0]["reason"].endswith("misses the term through `*` at 1:7 (0.909)")


def test_a_transposed_claim_of_a_rectangular_input_is_named():
    at = {"A": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])}
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.check_gradient("sum(A**2)", at=at, grad={"A": (2 * at["A"]).T.tolist()})
    assert info.value.message == "the hand-derived grad for A has shape (3, 2), but A has shape (2, 3)"
    assert info.value.hint == "the claim has the shape of A's transpose: transpose it (.T)"
