"""Compiled scalar replay: a trace of Python floats becomes one generated function, built from
the rules table's float forwards and VJPs, whose numbers are the step replay's (and so the
interpreter's) to the last bit; kinks, non-finite numbers and path changes go back to the step
replay or the interpreter."""
import math

import pytest

import autodiff
from autodiff.engine.core import rules
from autodiff.engine.diff import reverse
from autodiff.engine.diff.function import Function
from autodiff.engine.diff.replay import replay_adjoints, replay_values
from autodiff.engine.diff.replay_compiled import compile_trace, same_scalar
from autodiff.engine.diff.replay_results import latest
from autodiff.engine.lang.target import load
from test_replay import assert_same_gradient, kinks_of, same_number

POINTS = [(0.5, 1.5), (1.5, 0.5), (0.0, 0.0), (-0.7, 2.0), (1.0, 1.0), (2.0, -3.0), (0.25, 0.25),
          (-2.5, -0.5), (1e-300, 1e300), (3.0, 0.0)]


def builtin_calls(unary, binary, at) -> list:
    """One expression per differentiable builtin of the table that runs at `at`: `unary` and
    `binary` format a call (e.g. "{}(x)", "{}(x, y)")."""
    out = []
    for prim in rules.builtin_primitives():
        if prim.nondiff or prim.arity not in (1, 2):
            continue
        expr = (unary if prim.arity == 1 else binary).format(prim.builtin)
        try:
            autodiff.evaluate(expr, at=at)
        except autodiff.SourceError:
            continue
        out.append(expr)
    return out


def scalar_cases():
    """One call per differentiable builtin of the table that takes floats, and the operators."""
    return builtin_calls("{}(x)", "{}(x, y)", {"x": 0.5, "y": 0.75}) + [
        "x + y", "x - y", "x * y", "x / y", "x ** y", "-x + 2.0 * y", "x * x * y - y / 3.0",
        "abs(x - y) + maximum(x, 0.5)", "sin(x) * cos(y) + exp(-x * x)", "x / (y * y + 1.0)"]


CASES = scalar_cases()


def trace_of(f):
    return latest(next(entry for entry in f.traces.values() if entry))


@pytest.mark.parametrize("expr", CASES)
def test_every_float_rule_compiles_to_the_step_replays_bits(expr):
    target = load(expr)
    f = Function(target=target)
    first = {k: v for k, v in zip(("x", "y"), (0.6, 1.3)) if k in target.inputs}
    for _ in range(2):
        f.grad_result(first)                    # plain, then recorded
    trace = trace_of(f)
    made = compile_trace(trace, replay_values(trace, list(first.values())))
    assert made is not None, expr
    for x, y in POINTS:
        leaves = [v for k, v in zip(("x", "y"), (x, y)) if k in target.inputs]
        try:
            values = replay_values(trace, list(leaves))
            _, step = replay_adjoints(trace, values, 1.0, list(range(trace.leaves)))
        except Exception:
            continue                            # the step replay refuses too: interpreted
        try:
            value, fast = made.gradient(*leaves, 1.0)
        except (ZeroDivisionError, OverflowError, ValueError):
            continue                            # Python's error where the rule falls back: step replay
        assert same_scalar(value, values[trace.output]) and same_scalar(made.forward(*leaves), value), (expr, x, y)
        assert all(same_scalar(a, b) for a, b in zip(fast, step)), (expr, x, y, fast, step)


@pytest.mark.parametrize("expr", CASES)
def test_compiled_gradients_are_the_interpreters(expr):
    target = load(expr)
    f = Function(target=target)
    for x, y in [(0.6, 1.3)] + POINTS:
        at = {k: v for k, v in zip(("x", "y"), (x, y)) if k in target.inputs}
        ours = f.grad_result(at)
        assert_same_gradient(ours, reverse.grad(None, at, target=target))
        value, plain = f.evaluate_result(at), reverse.evaluate(None, at, target=target)
        assert same_number(value.value, plain.value) and kinks_of(value) == kinks_of(plain)


def test_most_rules_are_traced_into_lines_not_calls():
    f = Function("x * y + x / y - x - -y")
    for _ in range(3):
        f.grad_result({"x": 0.5, "y": 2.0})
    made = trace_of(f).compiled
    assert made and "_rule(" not in made.text         # mul, div, add, sub, neg: all inline
    assert f.grad_result({"x": 1.5, "y": -2.0}).gradient == {"x": -2.0 - 0.5 - 1.0, "y": 1.5 - 1.5 / 4.0 + 1.0}


def test_a_kink_in_a_compiled_trace_is_noted_with_its_span():
    f = Function("x * 2.0 + abs(y)")
    for y in (1.0, 2.0, 3.0):
        f.grad_result({"x": 1.0, "y": y})
    assert trace_of(f).compiled
    r = f.grad_result({"x": 1.0, "y": 0.0})
    assert kinks_of(r) == [("abs", (1, 11), "abs at 0: derivative taken as 0")]
    assert r.gradient == {"x": 2.0, "y": 0.0}


def test_division_by_zero_and_non_finite_numbers_are_the_interpreters():
    f = Function("x / y + log(x)")
    for y in (1.0, 2.0, 3.0):
        f.grad_result({"x": 1.0, "y": y})
    assert trace_of(f).compiled
    r = f.grad_result({"x": 1.0, "y": 0.0})
    fresh = reverse.grad(None, {"x": 1.0, "y": 0.0}, target=f.target)
    assert r.value == math.inf and r.nonfinite == fresh.nonfinite
    assert_same_gradient(r, fresh)


def test_guards_in_a_compiled_trace_fall_back_on_a_new_path():
    source = "def f(x, y):\n    if x * y > 1.0:\n        return x * x\n    return y - x\n"
    f = Function(target=load(source, filename="program.py"))
    for x in (1.0, 2.0, 3.0):
        f.grad_result({"x": x, "y": 1.5})
    assert trace_of(f).compiled and trace_of(f).guards
    for x, y in ((2.5, 1.0), (0.1, 1.0), (0.2, 2.0), (4.0, 4.0), (-1.0, -1.5)):
        at = {"x": x, "y": y}
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))


def test_a_long_trace_is_compiled_once_replayed_often_enough():
    source = "def f(x):\n    s = x\n    for i in range(100):\n        s = s * 0.5 + x\n    return s\n"
    f = Function(target=load(source, filename="program.py"))
    for k in range(3):                                      # plain, recorded, replayed step by step
        f.grad_result({"x": 0.5 + k})
    trace = trace_of(f)
    assert trace.operations() == 200 and trace.compiled is None
    for k in range(200 // 64):
        at = {"x": 1.5 - k}
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    assert trace.compiled


def test_the_replay_runner_uses_the_compiled_forward_and_notes_kinks_as_the_runner():
    from autodiff.engine.core.notes import reset
    from autodiff.engine.diff.function import ReplayRunner
    from autodiff.engine.lang.target import Runner
    target = load("def f(x, y):\n    if x > y:\n        return abs(x) * y\n    return x / y\n", filename="program.py")
    replaying, plain = ReplayRunner(target), Runner(target)
    for x, y in [(2.0, 1.0)] * 3 + [(3.0, 1.0), (0.0, -1.0), (0.5, 1.0), (0.25, 2.0), (1.0, 0.0), (4.0, 2.0)]:
        at = {"x": x, "y": y}
        notes = reset()
        ours = replaying(at)
        ours_kinks = [(op, (s.line, s.column)) for op, s, _ in notes.kinks]
        notes = reset()
        theirs = plain(at)
        assert same_number(ours, theirs) and replaying.signature == plain.signature
        assert ours_kinks == [(op, (s.line, s.column)) for op, s, _ in notes.kinks]
    assert trace_of(replaying).compiled


def test_alternating_paths_each_run_their_compiled_function():
    source = "def f(x, y):\n    if x * y > 1.0:\n        return x * x\n    return y - x\n"
    f = Function(target=load(source, filename="program.py"))
    for x in (1.0, 2.0, 3.0, 0.1, 0.2, 0.3):                # both paths recorded and replayed
        f.grad_result({"x": x, "y": 1.5})
    paths = next(iter(f.traces.values()))
    interpreted, replays = f.interpreted, f.replays
    for k in range(8):
        at = {"x": (2.0, 0.25)[k % 2] + k * 0.01, "y": 1.5}
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    assert f.interpreted == interpreted and f.replays == replays + 8
    assert len(paths) == 2 and all(trace.compiled for trace in paths.traces.values())
