"""The quicker paths of the small-array sweep (an LSTM's matrix-vector products, same-shape
adjoints, the sweep plan's gathered arguments): each gives the bits of the path it skips."""
from __future__ import annotations

import itertools
from operator import itemgetter

import numpy as np
import pytest

from autodiff.engine.core import primitives
from autodiff.engine.core.errors import TooLarge
from autodiff.engine.core.rules import arithmetic
from autodiff.engine.core.rules.arithmetic import matmul
from autodiff.engine.core.rules.comparisons import zero_where_zero
from autodiff.engine.core.rules.shapes import reshape, transpose, unbroadcast
from autodiff.engine.core.rules.elementwise import sigmoid_of_array
from autodiff.engine.core.tape import Shape, Var, backward
from autodiff.engine.diff.function import Function
from autodiff.engine.diff.replay import replay_adjoints, replay_values
from test_replay_sweep import replay_tape
from autodiff.engine.diff.replay_paths import replay_entry
from autodiff.engine.diff.replay_sweep import rows, sweep_plan

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e308, 3.0])


def same_bits(a, b):
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def with_specials(rng, shape, dtype=np.float64):
    v = rng.normal(size=shape) * 10.0 ** rng.integers(-200, 200, size=shape)
    flat = v.reshape(-1)
    flat[rng.integers(0, flat.size, 3)] = rng.choice(SPECIALS, 3)
    return v.astype(dtype)


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64, np.float64), (np.float32, np.float64, np.float32),
                                    (np.float32, np.float32, np.float32)])
def test_a_matrix_vector_products_adjoints_are_the_engine_ops(dtypes):
    rng = np.random.default_rng(7)
    vjp_x, vjp_y = matmul.primitive.vjps
    with np.errstate(all="ignore"):
        for _ in range(50):
            n, k = rng.integers(1, 9, 2)
            g, x, y = (with_specials(rng, s, d) for s, d in zip(((n,), (n, k), (k,)), dtypes))
            assert same_bits(vjp_x(g, None, x, y), reshape(g, (-1, 1)) * y)
            assert same_bits(vjp_y(g, None, x, y), matmul(transpose(x), g))


def test_a_matrix_vector_products_adjoints_call_no_engine_op(monkeypatch):
    def refuse(*args):
        raise AssertionError("an engine op on the small-array path")
    monkeypatch.setattr(arithmetic, "reshape", refuse)
    monkeypatch.setattr(arithmetic, "transpose", refuse)
    vjp_x, vjp_y = matmul.primitive.vjps
    g, x, y = np.array([1.0, 2.0]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.array([1.0, -1.0, 0.5])
    assert same_bits(vjp_x(g, None, x, y), np.outer(g, y))
    assert same_bits(vjp_y(g, None, x, y), x.T @ g)


def test_a_matrix_vector_adjoint_keeps_the_element_limit():
    """matmul(transpose(x), g) checked its result against the limit: the quick path does too."""
    vjp_y = matmul.primitive.vjps[1]
    saved = primitives.element_limit[0]
    primitives.element_limit[0] = 2
    try:
        with pytest.raises(TooLarge):
            vjp_y(np.ones(1), None, np.ones((1, 3)), np.ones(3))
        assert same_bits(vjp_y(np.ones(3), None, np.ones((3, 2)), np.ones(2)), np.full(2, 3.0))
    finally:
        primitives.element_limit[0] = saved


@pytest.mark.parametrize("x, y", [(np.ones((2, 3, 4)), np.ones(4)), (np.ones(3), np.ones((3, 2))),
                                  (np.ones((2, 3)), np.ones((3, 2))), (np.ones(3), np.ones(3))])
def test_other_matmul_shapes_keep_their_adjoints(x, y):
    vjp_x, vjp_y = matmul.primitive.vjps
    g = np.ones(np.shape(x @ y))
    assert np.shape(vjp_x(g, None, x, y)) == x.shape and np.shape(vjp_y(g, None, x, y)) == y.shape


def test_unbroadcast_returns_an_adjoint_of_the_targets_shape_as_it_is():
    g = np.array([[1.0, -0.0], [np.nan, 2.0]])
    assert unbroadcast(g, np.zeros((2, 2))) is g
    assert unbroadcast(g, Shape((2, 2), np.float64)) is g
    assert same_bits(unbroadcast(g, Shape((2,), np.float64)), np.add.reduce(g, axis=0))
    assert same_bits(unbroadcast(g, np.zeros((2, 1))), np.add.reduce(g, axis=1, keepdims=True))
    assert unbroadcast(2.5, 1.0) == 2.5


def test_zero_where_zero_masks_only_a_non_finite_product():
    g = np.array([0.0, 1.0, -2.0])
    finite = g * np.array([-3.0, 2.0, 1.0])
    assert zero_where_zero(g, finite) is finite                    # -0.0 kept: nothing to mask
    with np.errstate(invalid="ignore"):
        masked = zero_where_zero(g, g * np.array([np.inf, 2.0, 1.0]), np.array([np.inf, 2.0, 1.0]))
    assert same_bits(masked, np.array([0.0, 2.0, -2.0]))
    huge = np.array([1e308, 1e308])                                # finite, but its sum is not
    assert same_bits(zero_where_zero(np.array([0.0, 1.0]), -0.0 * huge + huge * np.array([0.0, 1.0])),
                     np.array([0.0, 1e308]))


SOURCE = """
def f(W, U, X, a):
    h = 0 * (W @ X[0])
    loss = 0.0
    for t in range(len(X) - 1):
        z = W @ X[t] + U @ h
        h = tanh(z) * sigmoid(z) + a * h
        e = h - X[t + 1]
        loss = loss + sum(e * e) + sum(h * h) + sum((U @ X[t]) * 2.0)
    return loss * a
"""


def recorded(tmp_path):
    path = tmp_path / "program.py"
    path.write_text(SOURCE.lstrip())
    f = Function(str(path))
    rng = np.random.default_rng(3)
    at = {"W": 0.3 * rng.normal(size=(4, 4)), "U": 0.3 * rng.normal(size=(4, 4)), "X": rng.normal(size=(5, 4)),
          "a": 0.7}
    f.grad_result(at)
    f.grad_result(at)
    return f, next(iter(f.traces.values())), at


def test_the_plan_gathers_the_arguments_of_steps_that_read_them_all(tmp_path):
    f, entry, at = recorded(tmp_path)
    trace, _ = replay_entry(entry, list(at.values()))
    plan = sweep_plan(trace, list(range(trace.leaves)))
    every = list(rows(trace, plan, len(trace.equations) - 1))
    gathered = {row[4].prim.name for row in every if row[3].__class__ is itemgetter}     # in one C call
    assert {"matmul", "mul", "sigmoid"} <= gathered
    for row in every:
        prim, parents, args = row[4].prim, row[4].parents, row[4].args
        if row[3].__class__ is itemgetter:      # all traced, in order: the values at the parents
            assert prim.needs_args and [pos for pos, _ in parents] == list(range(len(args)))
        elif row[3] is not None and not prim.needs_args:     # VJPs that read no argument: the recorded
            assert any(args[pos].__class__ is not Shape for pos, _ in parents)     # stand-ins, a traced float filled in


def test_the_gathered_sweep_is_the_tapes_for_every_set_of_watched_inputs(tmp_path):
    f, entry, at = recorded(tmp_path)
    leaves = list(at.values())
    trace, values = replay_entry(entry, leaves)
    for count in range(1, trace.leaves + 1):
        for watched in itertools.combinations(range(trace.leaves), count):
            planned = replay_adjoints(trace, values, 1.0, list(watched))
            tape, where = replay_tape(trace, replay_values(trace, leaves), list(watched))
            out = where[trace.output]
            taped = backward(tape, Var(values[trace.output], tape, out, tape.level), 1.0)[:len(watched)]
            assert planned[0] == len(tape)
            assert all(same_bits(a, b) for a, b in zip(planned[1], taped)), watched


def test_sigmoid_of_a_negated_float64_array_is_sigmoids_bits():
    from autodiff.engine.core.rules.elementwise import _sigmoid
    rng = np.random.default_rng(11)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-310, -1e-310, 750.0, -750.0, 36.0, -36.0])
    for _ in range(500):
        n = int(rng.integers(1, 40))
        x = rng.normal(size=n) * 10.0 ** rng.integers(-5, 3, size=n)
        x[rng.integers(0, n, 2)] = rng.choice(edges, 2)
        for v in (x, x.reshape(1, -1), x[::2], x.reshape(-1, 1).T):
            assert same_bits(sigmoid_of_array(v, negated=True), _sigmoid(-v))
    assert same_bits(sigmoid_of_array(edges, negated=True), _sigmoid(-edges))
    x32 = x.astype(np.float32)
    assert same_bits(sigmoid_of_array(x32, negated=True), _sigmoid(-x32))
    assert same_bits(sigmoid_of_array(x32), _sigmoid(x32))


def test_sigmoids_adjoint_is_the_same_with_and_without_the_quick_form():
    from autodiff.engine.core.rules.elementwise import sigmoid
    vjp = sigmoid.primitive.vjps[0]
    x = np.array([-3.0, -0.0, 0.0, 2.0, np.nan, 40.0])
    g, ans = np.array([1.0, 0.5, -2.0, 0.0, 1.0, 3.0]), sigmoid(x)
    with np.errstate(invalid="ignore"):
        assert same_bits(vjp(g, ans, x), g * (ans * sigmoid(-x)))
        x32 = x.astype(np.float32)
        assert same_bits(vjp(g.astype(np.float32), sigmoid(x32), x32), g.astype(np.float32) * (sigmoid(x32) * sigmoid(-x32)))
    assert vjp(2.0, sigmoid(0.5), 0.5) == 2.0 * (sigmoid(0.5) * sigmoid(-0.5))
