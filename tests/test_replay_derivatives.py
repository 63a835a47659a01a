"""n-th derivatives replayed from a recorded trace (nested tapes or nested duals over its steps)
give the interpreted driver's derivatives and tape sizes to the bit; anything the driver reports
or handles on its own (a kink, a non-finite number, an error, tapes near the limit) is left to it."""
import numpy as np
import pytest

import autodiff
from autodiff.engine.diff import higher
from autodiff.engine.diff.function import Function
from autodiff.engine.lang.target import load
from test_replay import same_number
from test_replay_compiled import builtin_calls


def scalar_table_expressions():
    """One expression of a scalar y per differentiable builtin of the table, and the operators."""
    return builtin_calls("{}(y)", "{}(y, y * 0.5 + 1)", {"y": 0.5}) + [
        "y * y - y / (y + 3)", "y ** 3 + 2 ** y", "-y + +y * sin(y)", "y ** y"]


SCALAR_CASES = scalar_table_expressions()
POINTS = [{"y": y} for y in (0.7, 0.35, 1.7, 1.35, 0.0, -0.5, 2.5)]


def same_derivatives(ours, theirs):
    assert len(ours.derivatives) == len(theirs.derivatives)
    assert all(same_number(a, b) for a, b in zip(ours.derivatives, theirs.derivatives)), \
        (ours.derivatives, theirs.derivatives)
    assert same_number(ours.value, theirs.value)
    assert (ours.tape_entries, ours.signature, ours.steps, ours.kinks, ours.detached) == \
        (theirs.tape_entries, theirs.signature, theirs.steps, theirs.kinks, theirs.detached)


def derivatives_both_ways(f, points, order, method, wrt=None):
    """f's derivatives at each point (the first two: the plain and the recording calls) against
    the interpreted driver's, or its error."""
    for at in points:
        try:
            theirs = higher.derivatives(None, at, order, method, target=f.target, wrt=wrt)
        except autodiff.SourceError as e:
            with pytest.raises(autodiff.SourceError) as raised:
                f.derivatives_result(at, order, method, wrt)
            assert str(raised.value) == str(e)
            continue
        same_derivatives(f.derivatives_result(at, order, method, wrt), theirs)
    return f


@pytest.mark.parametrize("method", ["reverse", "forward"])
@pytest.mark.parametrize("expr", SCALAR_CASES)
def test_every_scalar_table_entry_replays_its_derivatives(expr, method):
    derivatives_both_ways(Function(expr), POINTS[:2] + POINTS, 3, method)


def test_most_scalar_table_entries_replay():
    replayed = 0
    for expr in SCALAR_CASES:
        f = Function(expr)
        for y in (0.7, 0.7, 0.35):
            f.derivatives_result({"y": y}, 3)
        replayed += f.replays
    assert replayed >= len(SCALAR_CASES) - 3, replayed


@pytest.mark.parametrize("method", ["reverse", "forward"])
def test_guarded_programs_replay_their_derivatives_on_each_path(method):
    f = Function(target=load("def f(x, n):\n    s = x if x > 0 else -x * x\n    for i in range(n):\n"
                             "        s = sin(s) * x + i\n    return s * s if s > 1 else exp(s)\n", filename="program.py"))
    points = [{"x": x, "n": n} for x, n in ((0.5, 2.0), (0.6, 2.0), (0.7, 2.0), (-0.4, 2.0), (-0.5, 2.0),
                                            (0.5, 3.0), (0.9, 3.0), (1.5, 1.0), (0.6, 2.0))]
    derivatives_both_ways(f, points, 5, method, wrt="x")
    assert f.replays >= 4
    assert f.derivatives({"x": 0.6, "n": 2.0}, order=2, wrt="x") == \
        higher.derivatives(None, {"x": 0.6, "n": 2.0}, 2, target=f.target, wrt="x").derivatives


def test_kinks_nan_and_errors_are_left_to_the_interpreter():
    f = Function("abs(x) * x ** 3 + sqrt(x)")
    derivatives_both_ways(f, [{"x": 1.0}, {"x": 2.0}, {"x": 3.0}], 3, "reverse")
    assert f.replays == 1
    derivatives_both_ways(f, [{"x": 0.0}, {"x": -1.0}], 3, "reverse")         # a kink; nan
    derivatives_both_ways(f, [{"x": 1.5}], 0, "reverse")                        # the driver's usage error
    derivatives_both_ways(f, [{"x": 1.5}], 17, "forward")
    assert f.replays == 1
    derivatives_both_ways(f, [{"x": 1.5}], 4, "forward")
    assert f.replays == 2


def test_arrays_and_several_inputs_are_left_to_the_interpreter():
    f = Function("sum(x * x) * y")
    at = {"x": np.array([0.5, 1.0]), "y": 2.0}
    derivatives_both_ways(f, [at, at, at], 2, "reverse")                      # which input: the driver says
    derivatives_both_ways(f, [at, at, at], 2, "reverse", wrt="x")             # not a scalar input
    assert f.replays == 0
    derivatives_both_ways(f, [at, at, at], 2, "reverse", wrt="y")             # (recorded at the second)
    assert f.replays == 3


def test_tapes_near_the_limit_are_left_to_the_interpreter(monkeypatch):
    monkeypatch.setattr(higher, "MAX_TAPE_ENTRIES", 60)     # the one limit: replays sweep through higher's loop
    f = Function("exp(x * x) * sin(x)")
    derivatives_both_ways(f, [{"x": 0.3}, {"x": 0.4}, {"x": 0.5}], 6, "reverse")
    assert f.replays == 0


def test_replayed_nth_derivatives_run_the_one_reverse_sweep(monkeypatch):
    """Issue 28 item 2: a replayed n-th derivative is no plan of its own: the trace's Program runs
    through `bind` on the boxed input (replay_higher.boxed_values) and each nested tape is swept
    by core/tape.py's one sweep, as the interpreter's are: the same tapes swept in the same order
    (their sizes), the same numbers to the bit."""
    from autodiff.engine.core import tape as tape_module
    swept = []
    loop = tape_module._sweep

    def counted(steps, adj, dropped, top, bottom, *rest):
        swept.append(sum(1 for i in range(bottom, top + 1) if steps[i].__class__ is tape_module.Entry))
        return loop(steps, adj, dropped, top, bottom, *rest)
    monkeypatch.setattr(tape_module, "_sweep", counted)
    f = Function("sin(y) * exp(y) - y ** 3 / (y + 2)")
    for at in ({"y": 0.7}, {"y": 0.7}):              # interpreted, then the trace recorded
        f.derivatives_result(at, 4)
    interpreted_sweeps = list(swept)
    del swept[:]
    at = {"y": 0.35}
    replays = f.replays
    replayed = f.derivatives_result(at, 4)
    assert f.replays == replays + 1 and len(swept) == 4 and all(n > 0 for n in swept)   # tape entries
    del swept[:]
    theirs = higher.derivatives(None, at, 4, target=f.target)
    assert len(swept) == 4 and len(interpreted_sweeps) == 8
    same_derivatives(replayed, theirs)
    assert replayed.tape_entries == theirs.tape_entries
