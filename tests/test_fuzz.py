"""Fuzzing the API and the CLI (issue 16): generated expressions, programs, inputs and argv.

Asserts: no exception other than the tool's own SourceError, exit codes in {0, 1, 2}, and forward
mode equal to reverse mode wherever both are finite. Bounded for CI (a few seconds); set
AUTODIFF_FUZZ_EXAMPLES=5000 (say) for a longer run.
"""
import math
import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine import api
from autodiff.engine.lang.limits import Limits
from autodiff.parser.errors import SourceError

EXAMPLES = int(os.environ.get("AUTODIFF_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="AUTODIFF_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=list(HealthCheck))
SMALL = Limits(steps=20_000, depth=30, elements=100_000, tape_entries=200_000)

UNARY = ["sin", "cos", "tanh", "exp", "log", "sqrt", "abs", "relu", "sigmoid", "softplus", "sign", "floor",
         "arctan", "sum", "mean", "max", "min", "transpose", "stop_gradient"]
BINARY_FUNCS = ["maximum", "minimum", "dot"]
OPS = ["+", "-", "*", "/", "**", "%", "//", "<", ">=", "=="]
leaves = st.sampled_from(["x", "y", "1", "2.5", "0", "-1", "1e-8", "inf", "nan", "pi", "[1, 2]", "(1, 2)",
                          "arange(3.0)", "range(3)"])
expressions = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(UNARY), inner).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(BINARY_FUNCS), inner, inner).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(inner, st.sampled_from(OPS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(inner, inner, inner).map(lambda t: f"where({t[0]} > 0, {t[1]}, {t[2]})"),
        st.tuples(inner).map(lambda t: f"[{t[0]}, {t[0]}]"),
        st.tuples(inner).map(lambda t: f"grad(sin)({t[0]})"),
    ),
    max_leaves=8)
numbers = st.one_of(st.floats(-5, 5), st.sampled_from([0.0, 1.0, -1.0, math.nan, math.inf, 1e-300]))
points = st.fixed_dictionaries({"x": st.one_of(numbers, st.lists(numbers, min_size=1, max_size=3)),
                                "y": numbers})


def _inputs_of(source, at):
    try:
        names = api.load(source).inputs
    except SourceError:
        return None
    return {k: v for k, v in at.items() if k in names}


def _finite(v):
    return bool(np.all(np.isfinite(np.asarray(v, dtype=float))))


@FUZZ
@given(expressions, points)
def test_generated_expressions_raise_only_source_errors_and_modes_agree(source, at):
    at = _inputs_of(source, at)
    if at is None:
        return
    try:
        reverse = api.grad(source, at=at, limits=SMALL)
    except SourceError:
        return
    try:
        forward = api.grad(source, at=at, limits=SMALL, mode="forward")
    except SourceError:
        return
    for name in reverse.gradient:
        r, f = reverse.gradient[name], forward.gradient[name]
        if _finite(r) and _finite(f):
            np.testing.assert_allclose(np.asarray(f, dtype=float), np.asarray(r, dtype=float),
                                       rtol=1e-9, atol=1e-12, err_msg=source)


@FUZZ
@given(st.text(max_size=60))
def test_any_text_is_an_answer_or_a_source_error(text):
    try:
        api.evaluate(text, at={}, limits=SMALL)
    except SourceError:
        pass


PROGRAM_LINES = st.sampled_from(["y = x * 2", "y = sin(y) + x", "while y < 10:\n        y = y * 2 + 1",
                                 "for i in range(3):\n        y = y + i * x", "if x > 0:\n        y = -y",
                                 "y = [y, y]", "return y", "y = y % 0.3", "z = grad(cos)(y)", "y = z * y"])


@FUZZ
@given(st.lists(PROGRAM_LINES, min_size=1, max_size=6), numbers)
def test_generated_programs_raise_only_source_errors(tmp_path_factory, lines, x):
    path = tmp_path_factory.mktemp("fuzz") / "p.py"
    path.write_text("def f(x):\n    y = x\n    z = x\n" + "".join(f"    {line}\n" for line in lines) + "    return y\n")
    try:
        api.grad(str(path), at={"x": x}, limits=SMALL)
    except SourceError:
        pass


COMMANDS = st.sampled_from(["grad", "run", "jacobian", "hessian", "derivative", "graph", "plot", "check",
                            "nonsense", "--help"])
ARGS = st.sampled_from(["--at", "x=1", "x=[1,2]", "y=nan", "--json", "--mode", "forward", "reverse",
                        "--order", "3", "--max-steps", "7", "--max-elements", "2", "--check", "--seed", "[1,0]",
                        "--wrt", "x", "--fn", "f", "--of", "y", "--dtype", "float32", "--", "-x", "x*y",
                        "sin(x)", "x/y", "samples/programs/control.py", "samples/checks/verdicts.toml",
                        "--jobs", "0", "\x1b[2J", "[", "--format", "dot", "mermaid"])


@FUZZ
@given(COMMANDS, st.lists(st.one_of(ARGS, st.text(max_size=8)), max_size=6))
def test_random_argv_exits_0_1_or_2(capsys, command, args):
    render._consoles.clear()
    code = climain.invoke([command, *args])
    capsys.readouterr()
    assert int(code) in (0, 1, 2), (command, args)
