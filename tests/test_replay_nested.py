"""Replay of programs that take derivatives themselves (`grad(h)(x)`, `value_and_grad(h, 1)(...)`,
grad of grad): the outer gradient's tape holds the inner derivative's forward and its sweep in
outer-level primitives, and Function's gradient replays it, to the last bit of the interpreter's,
checking the inner function's decisions too; a run whose inner sweep would read a traced value
as a plain number (abs's sign, a tie share, pow's where() on a traced exponent) is not kept."""
import importlib.util
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.engine.diff import forward, higher, reverse
from autodiff.engine.diff.function import Function, ReplayRunner
from autodiff.engine.lang.target import load
from test_hypothesis import coordinates, expressions
from test_replay import assert_same_gradient, kinks_of, same_number

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "higher"

def gradbench_program(name) -> str:
    """An eval's program as benchmarks/gradbench_evals.py writes it (the benchmark's own text)."""
    spec = importlib.util.spec_from_file_location("gradbench_evals", ROOT / "benchmarks" / "gradbench_evals.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS[name]


NESTED = gradbench_program("nested")


def program(source) -> Function:
    return Function(target=load(source, filename="program.py"))


def recorded(f, at):
    """f with its trace recorded at `at` (a plain run, then the run that records)."""
    f.grad_result(at)
    f.grad_result(at)
    return f


def agrees(f, at, wrt=None):
    """f's gradient at `at` (replayed or not) is a fresh interpreter's, to the bit."""
    ours = f.grad_result(at, wrt=wrt)
    theirs = reverse.grad(None, at, wrt, target=f.target)
    assert_same_gradient(ours, theirs)
    return ours


def test_a_nested_grad_in_a_loop_replays_with_the_interpreters_bits():
    rng = np.random.default_rng(3)
    for size in (1, 4, 16):
        f = recorded(program(NESTED), {"x": rng.uniform(-1, 1, size)})
        for _ in range(3):
            before = f.replays
            agrees(f, {"x": rng.uniform(-1, 1, size)})
            assert f.replays == before + 1
    assert f.blocker is None and f.gradient_only


def test_a_loop_whose_trip_count_changes_records_the_new_length():
    f = recorded(program(NESTED), {"x": np.array([0.1, 0.2, 0.3])})
    agrees(f, {"x": np.array([0.4, -0.2, 0.9])})
    assert f.replays == 1
    agrees(f, {"x": np.array([0.5, 0.7])})       # another shape: another signature, interpreted
    assert f.replays == 1


def test_grad_of_grad_of_a_closure_replays():
    f = recorded(Function(str(SAMPLES / "nested_grad.py")), {"a": 0.5})
    for a in (0.7, -1.3, 2.0):
        result = agrees(f, {"a": a})
        assert result.gradient["a"] == 12 * a
    assert f.replays == 3


def test_perturbation_confusion_sample_replays_its_gradient_of_one():
    f = recorded(Function(str(SAMPLES / "perturbation.py")), {"x": 3.0})
    for x in (-1.0, 0.25):
        assert agrees(f, {"x": x}).gradient["x"] == 1.0
    assert f.replays == 2


VALUE_AND_GRAD = """
def h(u, v):
    return u * exp(v) + v * v / (1 + u * u)

def f(x, y):
    both = value_and_grad(h, 1)(x, y * x)
    return both[0] * both[1] + grad(grad(h))(y, x)
"""


def test_value_and_grad_with_an_argnum_and_grad_of_grad_replay():
    f = recorded(program(VALUE_AND_GRAD), {"x": 0.3, "y": -0.4})
    for x, y in ((0.9, 0.2), (-1.5, 1.1)):
        agrees(f, {"x": x, "y": y})
    assert f.replays == 2


BRANCHING = """
def h(w):
    if w >= 0.5:
        return w * w * w
    return sin(w) * w

def f(x, y):
    return grad(h)(x * y) * y + grad(h)(0.75) * x
"""


def test_an_inner_function_that_branches_falls_back_where_the_branch_changes():
    f = recorded(program(BRANCHING), {"x": 1.0, "y": 1.0})
    agrees(f, {"x": 2.0, "y": 1.5})                  # the same branch: replayed
    assert (f.replays, f.interpreted) == (1, 2)
    agrees(f, {"x": 0.1, "y": 1.0})                  # the other: interpreted, recorded as a path
    assert f.replays == 1
    agrees(f, {"x": 0.2, "y": -1.0})                 # that path, replayed
    agrees(f, {"x": 3.0, "y": 1.0})                  # and the first one again
    assert f.replays == 3
    tie = agrees(f, {"x": 0.5, "y": 1.0})            # a tie: the interpreter notes it
    assert f.replays == 3 and kinks_of(tie)


UNTAPED = {
    "abs": "abs(w) * w",                     # abs's VJP: g * sign(w), a number the tape never holds
    "maximum": "maximum(w, 0.25) * w",       # its tie share
    "traced exponent": "w ** w",             # pow's where() on its exponent
    "relu": "relu(w) * w",
}


def test_an_inner_sweep_that_reads_traced_values_as_numbers_is_never_replayed():
    for name, body in UNTAPED.items():
        f = recorded(program(f"def h(w):\n    return {body}\n\ndef f(x):\n    return grad(h)(x) * x\n"),
                     {"x": 0.75})
        for x in (0.5, -0.5, 1.25):             # -0.5: abs's sign and relu's step differ there
            agrees(f, {"x": x})
        assert f.replays == 0, name


def test_other_results_of_a_nested_program_stay_interpreted():
    """Plain runs sweep the inner tapes on plain numbers (the rules' shortcuts for them): values,
    Jacobians, Hessians, derivatives and gradients in some inputs are the interpreter's."""
    f = recorded(program(VALUE_AND_GRAD), {"x": 0.3, "y": -0.4})
    at = {"x": 0.8, "y": 0.1}
    assert same_number(f.evaluate_result(at).value, reverse.evaluate(None, at, target=f.target).value)
    agrees(f, at, wrt=["y"])
    interpreted = higher.hessian(None, at, None, target=f.target).hessian
    assert same_number(f.hessian(at)["x"]["y"], interpreted["x"]["y"])
    jacobian = forward.jacobian(None, at, None, "auto", target=f.target).jacobian
    assert same_number(f.jacobian(at)["y"], jacobian["y"])
    assert f.replays == 0
    runner = ReplayRunner(f.target)
    assert runner.blocker is not None
    for x in (0.3, 0.4, 0.5):
        assert same_number(runner({"x": x, "y": 0.2}), reverse.evaluate(None, {"x": x, "y": 0.2},
                                                                          target=f.target).value)


@settings(max_examples=40, deadline=None)
@given(expressions, st.tuples(coordinates, coordinates), st.tuples(coordinates, coordinates))
def test_random_inner_functions_replay_as_interpreted(expr, first, second):
    source = f"def h(x, y):\n    return {expr}\n\n" \
             "def f(a, b):\n    return grad(h)(a * b, b) + value_and_grad(h, 1)(b, a)[1] * a\n"
    f = program(source)
    at = [{"a": a, "b": b} for a, b in (first, second)]
    try:
        reverse.grad(None, at[0], target=f.target)
    except Exception:
        return                                 # an error there (a domain edge): nothing to replay
    recorded(f, at[0])
    try:
        theirs = reverse.grad(None, at[1], target=f.target)
    except Exception:
        return
    assert_same_gradient(f.grad_result(at[1]), theirs)


@settings(max_examples=25, deadline=None)
@given(expressions, expressions, st.lists(st.tuples(coordinates, coordinates), min_size=3, max_size=5),
       st.sampled_from(["<", ">=", "<="]))
def test_random_branching_inner_functions_replay_their_paths_as_interpreted(first, second, points, op):
    """An inner function (under grad of grad too) whose if and while read its arguments: each
    point's gradient, replayed on a kept path or interpreted where the path is new, is the
    interpreter's."""
    source = f"def h(x, y):\n    if x {op} y * 0.5:\n        return {first}\n    n = 0\n" \
             f"    while x * x > 0.25 and n < 3:\n        x = x * 0.5\n        n = n + 1\n    return {second}\n\n" \
             "def f(a, b):\n    return grad(h)(a * b, b) + grad(grad(h), 1)(b, a) * a\n"
    f = program(source)
    for a, b in points:
        try:
            theirs = reverse.grad(None, {"a": a, "b": b}, target=f.target)
        except Exception:
            return                             # an error there (a domain edge): the rest is not asked
        assert_same_gradient(f.grad_result({"a": a, "b": b}), theirs)
