"""The replay's planned reverse sweep (diff/replay_sweep.py) and the quicker forms of a few rules
the sweeps of small arrays call on every step: each must give the bits of what it replaced."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from autodiff.engine.core.rules.comparisons import share
from autodiff.engine.core.rules.shapes import expand_dims, untake
from autodiff.engine.core.tape import Entry, Shape, Tape, Var, backward, saved_args, sweep_equations
from autodiff.engine.diff.function import Function
from autodiff.engine.diff.replay import replay_adjoints, replay_values
from autodiff.engine.diff.replay_paths import replay_entry
from autodiff.engine.diff.replay_release import RELEASED
from autodiff.engine.diff.replay_sweep import sweep_plan

PROGRAMS = {
    "mixture": ("""
def term(X, a, m, s):
    d = (X - m) * exp(-s)
    return a + sum(-s) - 0.5 * sum(d * d, 1)

def f(A, M, S, X):
    best = term(X, A[0], M[0], S[0])
    for k in range(1, len(A)):
        best = maximum(best, term(X, A[k], M[k], S[k]))
    return sum(best + log(sum(exp(A - max(A)))))
""", lambda rng: {"A": rng.normal(size=3), "M": rng.normal(size=(3, 4)), "S": 0.1 * rng.normal(size=(3, 4)),
                  "X": rng.normal(size=(6, 4))}),
    "recurrent": ("""
def f(W, U, X):
    h = 0 * (W @ X[0])
    loss = 0.0
    for t in range(len(X) - 1):
        h = tanh(W @ X[t] + U @ h)
        e = h - X[t + 1]
        loss = loss + sum(e * e)
    return loss
""", lambda rng: {"W": 0.3 * rng.normal(size=(4, 4)), "U": 0.3 * rng.normal(size=(4, 4)),
                  "X": rng.normal(size=(5, 4))}),
    "scalars_and_arrays": ("""
def f(x, a, T):
    r = T @ (a * x) + a
    return sum(r * r) * a + min(x) / a
""", lambda rng: {"x": rng.normal(size=3), "a": 1.5, "T": rng.normal(size=(4, 3))}),
}


def program(tmp_path, source):
    path = tmp_path / "program.py"
    path.write_text(source.lstrip())
    return Function(str(path))


def recorded(tmp_path, name, seed=0):
    source, make = PROGRAMS[name]
    f = program(tmp_path, source)
    at = make(np.random.default_rng(seed))
    f.grad_result(at)
    f.grad_result(at)                               # records the trace
    entry = next(iter(f.traces.values()))
    return f, entry, make(np.random.default_rng(seed + 1))


def same_bits(a, b):
    if a is None or b is None:
        return a is b
    return np.asarray(a).dtype == np.asarray(b).dtype and np.asarray(a).shape == np.asarray(b).shape \
        and np.asarray(a).tobytes() == np.asarray(b).tobytes()


def replay_tape(trace, values: list, watched: list):
    """The oracle of the planned sweep (it was diff/replay.py's until the plan replaced it
    everywhere): the tape the interpreter would have recorded watching the inputs at tape indices `watched`
    (in that order), holding the replayed values: only the steps that depend on those inputs,
    each with the parents among them. Returns (tape, where): where[i] is the new index of the
    trace's entry i (-1: not on the tape). A rule that reads only its arguments' shapes keeps
    the recorded stand-ins (the same shapes)."""
    tape = Tape()
    entries = tape.entries
    where = [-1] * len(values)
    for i in watched:
        where[i] = len(entries)
        entries.append(Entry(None, (), (), None, None, None, values[i]))
    index = trace.leaves
    for e in trace.body():
        prim, parents, args, params = e.prim, e.parents, e.args, e.params
        live = tuple((pos, where[j]) for pos, j in parents if where[j] >= 0)
        if live:
            if prim.needs_args or len(live) < len(parents) or not all(a.__class__ is Shape for a in args):
                full = list(args)
                for pos, j in parents:
                    full[pos] = values[j]
                args = saved_args(prim, tuple(full))
            where[index] = len(entries)
            entries.append(Entry(prim, live, args, values[index] if prim.needs_ans else None, params, e.span, None))
        index += 1
    return tape, where


def tape_adjoints(trace, values, seed, watched):
    """What replay_adjoints gave before the plan: backward over replay_tape's tape."""
    tape, where = replay_tape(trace, values, watched)
    out = where[trace.output]
    if out < 0:
        return len(tape), [None] * len(watched)
    return len(tape), backward(tape, Var(values[trace.output], tape, out, tape.level), seed)[:len(watched)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_planned_sweep_is_the_tapes_sweep_for_every_set_of_watched_inputs(tmp_path, name):
    f, entry, at = recorded(tmp_path, name)
    leaves = [np.asarray(v) if not isinstance(v, float) else v for v in at.values()]
    trace, values = replay_entry(entry, leaves)
    for count in range(1, trace.leaves + 1):
        for watched in itertools.combinations(range(trace.leaves), count):
            planned = replay_adjoints(trace, values, 1.0, list(watched))
            taped = tape_adjoints(trace, replay_values(trace, leaves), 1.0, list(watched))
            assert planned[0] == taped[0]
            assert all(same_bits(a, b) for a, b in zip(planned[1], taped[1])), (name, watched)


def test_a_replayed_gradient_builds_no_tape_and_plans_once(tmp_path, monkeypatch):
    f, entry, at = recorded(tmp_path, "recurrent")

    def no_tape(*args, **kwargs):
        raise AssertionError("a replayed gradient built a tape")
    monkeypatch.setattr(Tape, "__init__", no_tape)
    first = f.grad_result(at)
    plans = dict(entry.annotations)
    second = f.grad_result(at)
    # one plan of the sweep (keyed by the watched inputs), made once; a replay this small releases
    # nothing (diff/replay_release.py's RELEASE_FROM_BYTES), so no release is worked out
    assert f.replays == 2 and sum(key.__class__ is tuple for key in plans) == 1 and RELEASED not in plans
    assert entry.annotations == plans
    assert all(same_bits(first.gradient[k], second.gradient[k]) for k in first.gradient)


def test_a_partly_watched_gradient_is_the_tapes(tmp_path):
    f = program(tmp_path, "def f(x, y):\n    return sum(x * x) + 0 * y[0]\n")
    at = {"x": np.array([1.0, 2.0]), "y": np.array([3.0])}
    f.grad_result(at)
    f.grad_result(at)
    trace = next(iter(f.traces.values()))
    values = replay_values(trace, list(at.values()))
    assert replay_adjoints(trace, values, 1.0, [1])[1][0] is not None       # 0 * y[0] is recorded
    g = f.grad_result(at, wrt=["y"])
    assert same_bits(g.gradient["y"], np.array([0.0]))


@pytest.mark.parametrize("source, at", [
    ("def f(x, y):\n    z = x * y + sin(x)\n    return z * z / y\n", {"x": 0.7, "y": 1.3}),
    ("def f(x, y):\n    return sum(tanh(x * y) * x) + sum(y)\n", {"x": np.array([0.5, -1.0, 2.0]), "y": np.array([1.5, 0.25, -0.5])}),
])
def test_the_replay_and_the_interpreter_run_the_one_reverse_sweep(tmp_path, monkeypatch, source, at):
    """Issue 28 item 2: one reverse sweep over a Program's equations. The interpreted run sweeps
    its tape's entries and the replay its plan's steps, both through core/tape.py's one loop (no
    second hand-written sweep in diff/replay_sweep.py), and the gradients agree to the bit."""
    from autodiff.engine.core import tape as tape_module
    swept = []
    loop = tape_module._sweep

    def counted(steps, adj, dropped, top, bottom, *rest):
        swept.append([type(steps[i]).__name__ for i in range(top, bottom - 1, -1) if steps[i] is not None])
        return loop(steps, adj, dropped, top, bottom, *rest)
    monkeypatch.setattr(tape_module, "_sweep", counted)
    f = program(tmp_path, source)
    first = f.grad_result(at, wrt=["x"])          # (all the floats' inputs: the compiled replay's)
    assert (f.interpreted, f.replays) == (1, 0) and swept and all(set(kinds) <= {"Entry"} for kinds in swept)
    f.grad_result(at, wrt=["x"])                  # records the trace
    del swept[:]
    replayed = f.grad_result(at, wrt=["x"])
    assert f.replays == 1 and swept and all(set(kinds) == {"PlannedStep"} for kinds in swept)
    assert all(same_bits(first.gradient[k], replayed.gradient[k]) for k in first.gradient)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_one_sweeps_hooks_see_a_plan_as_they_see_the_tape(tmp_path, name):
    """The hooks of the one sweep hold over a replay's plan: `on_step` is told the same chain-rule
    terms (positions mapped from the tape's indices to the equations'), `keep` keeps every
    adjoint, and `before(i)` is told before each of equation i's VJPs, in sweep order."""
    f, entry, at = recorded(tmp_path, name)
    leaves = [np.asarray(v) if not isinstance(v, float) else v for v in at.values()]
    trace, values = replay_entry(entry, leaves)
    watched = list(range(trace.leaves))
    plan = sweep_plan(trace, watched)
    planned, told = [], []
    kept = sweep_equations(plan.at, trace.output, 1.0, trace.leaves, values=values, keep=True, before=told.append,
                           on_step=lambda i, pos, j, g, c: planned.append((i, pos, j, c)))
    tape, where = replay_tape(trace, replay_values(trace, leaves), watched)
    taped = []
    adj = backward(tape, Var(values[trace.output], tape, where[trace.output], tape.level), 1.0, keep=True,
                   on_step=lambda i, pos, j, g, c: taped.append((i, pos, j, c)))
    back = {w: i for i, w in enumerate(where) if w >= 0}
    assert [(i, pos, j) for i, pos, j, _ in planned] == [(back[i], pos, back[j]) for i, pos, j, _ in taped]
    assert all(same_bits(a[3], b[3]) for a, b in zip(planned, taped))
    assert all(same_bits(kept[i], adj[w]) for i, w in back.items())
    assert told == [i for i, _, _, _ in planned] and told == sorted(told, reverse=True)


@pytest.mark.parametrize("index", [0, 2, -1, (1, 2), (slice(None), 1), (slice(1, None, 2), slice(None, None, -1)),
                                   slice(None, 2)])
def test_untake_of_a_basic_index_adds_as_add_at(index):
    g_full = np.array([[-0.0, 1.5, np.nan], [2.0, -0.0, np.inf], [0.0, -3.0, 4.0]])
    g = g_full[index]
    expected = np.zeros((3, 3))
    np.add.at(expected, index, g)
    assert same_bits(untake(g, index, (3, 3)), expected)


def test_untake_of_an_array_index_still_adds_repeats():
    out = untake(np.array([1.0, 2.0, 3.0]), (np.array([0, 0, 2]),), (3,))
    assert same_bits(out, np.array([3.0, 0.0, 3.0]))


@pytest.mark.parametrize("x, y", [
    (np.array([1.0, 2.0, 3.0]), np.array([0.0, 5.0, 1.0])),            # no tie: 1 or 0
    (np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 3.0])),            # ties: 1/2
    (np.array([1.0, np.nan, 3.0]), 2.0),                               # a nan: nan
    (np.array([1.0, 2.0], dtype=np.float32), np.float32(1.5)),         # float32 stays float32
    (np.array([[1.0], [4.0]]), np.array([0.0, 2.0, 9.0])),             # broadcast
])
def test_share_is_the_where_chain(x, y):
    chain = np.where(x > y, 1.0, np.where(x == y, 0.5, np.where(x < y, 0.0, np.nan)))
    dt = np.result_type(x, y)
    chain = chain.astype(dt) if chain.dtype != dt else chain
    assert same_bits(share(x, y), chain)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_expand_dims_is_numpys(shape):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    for axis in range(-len(shape) - 1, len(shape) + 1):
        assert same_bits(expand_dims(x, axis), np.expand_dims(x, axis))
    with pytest.raises(np.exceptions.AxisError):
        expand_dims(x, len(shape) + 1)


@pytest.mark.parametrize("g, shape_, axis", [
    (2.5, (3, 4), None), (-0.0, (5,), None), (np.array([1.0, -0.0, np.nan]), (3, 2), 1),
    (np.array([[1.0, 2.0]], dtype=np.float32)[0], (3, 2), 0), (np.array([np.inf, 1.0]), (2, 4), -1),
])
def test_a_small_reductions_adjoint_is_spread_whole_with_the_views_values(g, shape_, axis):
    from autodiff.engine.core.rules.reductions import WHOLE_RESTORE_MAX_ELEMENTS, sum as sum_op
    restore = sum_op.primitive.vjps[0]                 # sum's adjoint: g spread back over x
    x = np.zeros(shape_)
    spread = restore(g, None, x) if axis is None else restore(g, None, x, axis)
    view = np.broadcast_to(g if axis is None else np.expand_dims(g, axis), shape_)
    assert same_bits(spread, view) and spread.flags.c_contiguous and spread.base is None
    large = np.zeros(WHOLE_RESTORE_MAX_ELEMENTS + 1)
    assert restore(1.0, None, large).strides == (0,)           # a large one stays a view: no memory
