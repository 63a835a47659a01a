"""Issue 28 item 4: the rules are traced with plain stand-ins. No stand-in claims another class
(no `__class__` property anywhere in the engine), and no rule asks whether it is being traced:
a rule's quicker form for a Python float adjoint is a field of its table entry (`float_vjp=`),
which the sweeps choose by the adjoint's type, so the tracers run either form as written.

`rule_source` (diff/rule_tracer.py, the tracer both compiled replays use) turns a rule into Python source for given operand names;
the text it gives computes the rule's own numbers to the bit."""
import math
import pathlib
import re

import numpy as np
import pytest

import autodiff
from autodiff.engine.core.primitives import TABLE
from autodiff.engine.core.tape import Tape, backward
from autodiff.engine.diff.bits import same_bits
from autodiff.engine.diff.generated import functions_of
from autodiff.engine.diff.rule_tracer import rule_source

ENGINE = pathlib.Path(autodiff.__file__).parent / "engine"


def sources(folder):
    return {path: path.read_text() for path in sorted(folder.rglob("*.py"))}


def test_no_stand_in_overrides_its_class():
    claims = [f"{path.relative_to(ENGINE)}:{text[:m.start()].count(chr(10)) + 1}"
              for path, text in sources(ENGINE).items()
              for m in re.finditer(r"def\s+__class__\b|__class__\s*=\s*property", text)]
    assert claims == []


def test_no_rule_detects_a_tracer():
    found = [f"{path.name}: {m.group(0)!r}"
             for path, text in sources(ENGINE / "core" / "rules").items()
             for m in re.finditer(r"""["']traced["']|\.traced\b|being traced""", text)]
    assert found == []


def test_the_rules_ask_no_adjoint_its_type_to_pick_a_float_path():
    """The float fast paths of the arithmetic and elementwise VJPs are the table's float_vjps,
    not `g.__class__ is float` in the rule bodies (reductions.py's _restore and _extreme_vjp
    still ask: open)."""
    found = [f"{path.name}: {m.group(0)!r}"
             for path, text in sources(ENGINE / "core" / "rules").items()
             if path.name in ("arithmetic.py", "elementwise.py")
             for m in re.finditer(r"\bg\.__class__ is (not )?float", text)]
    assert found == []
    forms = {name for name, prim in TABLE.items() if prim.float_vjps is not prim.generic_vjps}
    assert {"mul", "div", "pow", "sin", "exp", "tanh", "sum"} <= forms


POINTS = [(1.5, 2.0, -3.0), (0.0, 2.0, math.inf), (math.inf, 2.0, 0.0), (-2.0, 0.0, 5.0),
          (math.nan, 1.0, 0.0), (2.0, -0.0, 3.0)]


@pytest.mark.parametrize("name,pos", [("mul", 0), ("mul", 1), ("div", 0), ("div", 1), ("tanh", 0),
                                      ("exp", 0), ("neg", 0), ("sub", 1)])
def test_rule_source_computes_the_rules_own_numbers(name, pos):
    prim = TABLE[name]
    rule = prim.float_vjps[pos]
    operands = ["x", "y"][:prim.arity]
    names = ["g", "ans" if prim.needs_ans else None, *operands]
    g0, x0, y0 = 1.5, 0.75, -2.0
    examples = {"g": g0, "x": x0, "y": y0, "ans": prim.impl(*(x0, y0)[:prim.arity])}
    text, namespace = rule_source(rule, names, examples)
    head = f"def f(g, ans, {', '.join(operands)}):\n"
    f = functions_of(head + "".join(f"    {line}\n" for line in text.splitlines()) + "    return r\n",
                     namespace, "<rule_source test>")["f"]
    for g, x, y in POINTS:
        args = (x, y)[:prim.arity]
        ans = prim.impl(*args)
        expected = rule(g, ans, *args)
        if name == "div" and y == 0.0 and g != 0.0:     # Python's `/` raises where div falls back to
            with pytest.raises(ZeroDivisionError):      # IEEE: a compiled replay re-runs the step replay
                f(g, ans, *args)
            continue
        assert same_bits(f(g, ans, *args), expected), (g, x, y)
        assert same_bits(prim.vjps[pos](g, ans, *args), expected)     # what every sweep calls


def test_the_sweep_takes_the_float_form_for_a_float_adjoint():
    """A float adjoint takes mul's float form, an array adjoint its generic rule: both the strong
    zero (0 where the adjoint is 0, even times inf), as numpy's answer for the product's terms."""
    tape = Tape()
    x, y = tape.watch(0.0), tape.watch(math.inf)
    out = x * y
    adj = backward(tape, out, 0.0)
    assert adj[0] == 0.0 and adj[1] == 0.0
    tape = Tape()
    x, y = tape.watch(np.array([1.0, 0.0])), tape.watch(np.array([math.inf, 2.0]))
    adj = backward(tape, x * y, np.array([0.0, 1.0]))
    assert same_bits(adj[0], np.array([0.0, 2.0])) and same_bits(adj[1], np.array([0.0, 0.0]))


def test_a_scatter_add_is_a_line_not_the_rule_called_as_it_is():
    """Indexing's VJP scatters g with np.add.at into zeros it made (an index that may repeat): the
    tracer writes the scatter as a statement (issue 31, arrays), and the lines give the rule's own
    numbers at other values of g and the index."""
    rule = TABLE["getitem"].generic_vjps[0]
    x = np.array([0.5, 1.5, -2.0])
    text, namespace = rule_source(rule, ["g", None, "x", "i"], {"g": np.float64(1.25), "x": x, "i": 1})
    called = [k for k, v in namespace.items() if v is rule]
    assert not any(re.search(rf"\b{k}\b", text) for k in called)      # traced, not called as it is
    assert any(v == np.add.at and re.search(rf"^{k}\(", text, re.M) for k, v in namespace.items())
    f = functions_of("def f(g, ans, x, i):\n" + "".join(f"    {line}\n" for line in text.splitlines())
                     + "    return r\n", namespace, "<rule_source test>")["f"]
    for g, i in ((np.float64(-3.0), 0), (np.float64(2.5), 2)):
        np.testing.assert_array_equal(f(g, None, x, i), rule(g, None, x, i))


def test_an_error_of_the_printer_is_raised_not_taken_for_a_rule_it_cannot_trace(monkeypatch):
    """The printer of equations is the tracer's own code: an AttributeError in it (as a merge
    once made, when emit gave it an equation as text) was caught with the rules' own refusals and
    the rule silently called as it is; it propagates, and a rule still traces without it."""
    from autodiff.engine.diff import rule_tracer
    prim = TABLE["mul"]
    examples = {"g": 1.5, "x": 0.75, "y": -2.0, "ans": -1.5}

    def broken(self, equation):
        raise AttributeError("a printer's own bug")
    monkeypatch.setattr(rule_tracer.Tracer, "line", broken)
    with pytest.raises(AttributeError, match="a printer's own bug"):
        rule_source(prim.float_vjps[0], ["g", None, "x", "y"], examples)
    monkeypatch.undo()
    text, _ = rule_source(prim.float_vjps[0], ["g", None, "x", "y"], examples)
    assert "r = " in text
