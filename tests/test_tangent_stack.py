"""Structured tangent stacks (core/tangent_stack.py): Hessians and forward-mode Jacobians seeded
with a TangentStack give the dense stack's numbers to rounding — on every rules-table entry, the
reductions, the samples, programs that must densify, and inf/nan factors — and a program of
elementwise steps and reductions assembles its dense stack once, at the end."""
import numpy as np
import pytest

import autodiff
from autodiff.cli.options import parse_at
from autodiff.engine import api
from autodiff.engine.core import tangent_stack
from autodiff.engine.core.rules.comparisons import tangent_times, where, zero_where_zero
from autodiff.engine.core.tangent_stack import TangentStack
from autodiff.engine.diff import forward, higher, tangents
from test_replay import POINTS, ROOT, TABLE_CASES, moved
from test_samples_programs import SAMPLES, expectations

ISSUE_HESSIAN = "sum(x ** 2 * sin(x)) + log(sum(exp(x))) + sum(x) ** 3"
ISSUE_JACOBIAN = "sin(x) * sum(x) + x ** 3"


@pytest.fixture
def every_size(monkeypatch):
    """Stacks of any number of rows seeded structured (the tests' points have 1 to 9 elements)."""
    monkeypatch.setattr(tangent_stack, "MIN_STRUCTURED_ROWS", 1)


def close(ours, theirs, where=""):
    """Relative 1e-12 of the largest entry (nan where the dense path has nan)."""
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for key in theirs:
            close(ours[key], theirs[key], f"{where}/{key}")
        return
    assert np.shape(ours) == np.shape(theirs), where
    finite = np.abs(np.asarray(theirs, dtype=float))[np.isfinite(theirs)]
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * scale, err_msg=where)


def both(compute, monkeypatch):
    """compute() seeded structured and dense: (structured, dense), or the same error twice."""
    monkeypatch.setattr(tangent_stack, "STRUCTURED", [False])
    try:
        dense = compute()
    except autodiff.SourceError as e:
        monkeypatch.setattr(tangent_stack, "STRUCTURED", [True])
        with pytest.raises(autodiff.SourceError) as raised:
            compute()
        assert str(raised.value) == str(e)
        return None, None
    monkeypatch.setattr(tangent_stack, "STRUCTURED", [True])
    return compute(), dense


def hessians_agree(source, at, monkeypatch, fn=None):
    target = api.load(source, fn)
    at = {k: v for k, v in at.items() if k in target.inputs}
    ours, theirs = both(lambda: higher.hessian(None, at, target=target), monkeypatch)
    if theirs is not None:
        close(ours.hessian, theirs.hessian, source)
        close(ours.gradient, theirs.gradient, source)
        assert ours.kinks == theirs.kinks and ours.detached == theirs.detached


def jacobians_agree(source, at, monkeypatch, fn=None):
    target = api.load(source, fn)
    at = {k: v for k, v in at.items() if k in target.inputs}
    ours, theirs = both(lambda: forward.jacobian(None, at, target=target, mode="forward"), monkeypatch)
    if theirs is not None:
        close(ours.jacobian, theirs.jacobian, source)
        assert ours.kinks == theirs.kinks


@pytest.mark.parametrize("expr", TABLE_CASES)
@pytest.mark.parametrize("points", range(len(POINTS)))
def test_every_table_entry_hessian_is_the_dense_one(expr, points, every_size, monkeypatch):
    for at in POINTS[points]:
        hessians_agree(expr, at, monkeypatch)


@pytest.mark.parametrize("expr", TABLE_CASES)
@pytest.mark.parametrize("points", range(len(POINTS)))
def test_every_table_entry_forward_jacobian_is_the_dense_one(expr, points, every_size, monkeypatch):
    for at in POINTS[points]:
        jacobians_agree(expr, at, monkeypatch)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_hessians_and_jacobians_are_the_dense_ones(path, every_size, monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = expectations(path)[0][0]
    fn = argv[argv.index("--fn") + 1] if "--fn" in argv else None
    at = parse_at([argv[i + 1] for i, a in enumerate(argv) if a == "--at"])
    for point in (at, moved(at)):
        hessians_agree(argv[1], point, monkeypatch, fn)
        jacobians_agree(argv[1], point, monkeypatch, fn)


REDUCTIONS_AND_DENSIFYING = [
    ISSUE_HESSIAN,
    "sum(x) * mean(x ** 2) + prod(1 + x / 4) + max(x * sin(x)) + logsumexp(x)",
    "sum(cumsum(x) * x) + var(x) + std(x) + norm(x)",
    "sum(x * sum(x * x)) + sum(x / sum(x))",
    "sum((A @ x) * x) + sum(A * outer(x, x))",                 # matmul
    "sum(x[1:] * x[:-1]) + x[0] * x[-1] + sum(x[[0, 2, 2]] ** 2)",   # indexing
    "sum(where(x > 0.5, x ** 2, sin(x)))",                     # where
    "sum(stack([x, x ** 2]) ** 2)",                            # a stack
    "sum(reshape(x, (3, 1)) * x) + sum(reshape(x * x, (1, 3)))",   # reshape
    "sum(maximum(x, 0.5) * x) + sum(abs(x - 0.5) * x) + sum(relu(x - 0.4) ** 2)",
    "sum(x * x) * y + y ** 3 * sum(sin(x))",
]


@pytest.mark.parametrize("source", REDUCTIONS_AND_DENSIFYING)
def test_reductions_and_densifying_programs_are_the_dense_ones(source, every_size, monkeypatch):
    for first, second in POINTS:
        for at in (first, second):
            hessians_agree(source, at, monkeypatch)
    x = np.linspace(-1.0, 1.2, 3)
    hessians_agree(source, {"x": x, "y": 0.3, "A": np.arange(9.0).reshape(3, 3) / 9}, monkeypatch)


@pytest.mark.parametrize("n", [20, 50, 201])
def test_the_issue_hessian_and_jacobian_at_real_sizes(n, monkeypatch):
    x = np.linspace(-2, 2, n)
    hessians_agree(ISSUE_HESSIAN, {"x": x}, monkeypatch)
    jacobians_agree(ISSUE_JACOBIAN, {"x": x}, monkeypatch)
    jacobians_agree("exp(x) * mean(x) - tanh(x) / (1 + sum(x * x))", {"x": x}, monkeypatch)


def test_an_elementwise_program_assembles_its_stack_once(monkeypatch):
    """The issue's Hessian stays structured through all its steps: one dense assembly per pass
    (before, every step worked on the (n, n) stack)."""
    made = []
    assembled = TangentStack.assembled
    monkeypatch.setattr(TangentStack, "assembled", lambda self, by_columns: made.append(self.shape) or
                        assembled(self, by_columns))
    f = autodiff.function(ISSUE_HESSIAN)
    x = np.linspace(-2, 2, 200)
    for _ in range(3):
        f.hessian(x=x)
    api.hessian(None, at={"x": x}, target=api.load(ISSUE_HESSIAN))
    assert made == [(200, 200)] * 4
    made.clear()
    forward.jacobian(None, {"x": x}, target=api.load(ISSUE_JACOBIAN), mode="forward")
    assert made == [(200, 200)]


def test_non_finite_factors_keep_the_strong_zeros(every_size, monkeypatch):
    """A 0 tangent times an inf or nan factor stays 0, as on the dense stack: the zeros a
    diagonal does not store never turn into nan."""
    for source, x in [("sum(x ** 3 * sqrt(x))", [0.0, 1.0, 4.0]), ("sum(x * log(x))", [0.0, 0.5, 2.0]),
                      ("sum(sqrt(x)) * sum(x)", [0.0, 1.0, 2.0]), ("sum(x / x)", [0.0, 1.0, 3.0]),
                      ("sum(exp(x * 800.0))", [0.0, 1.0, 0.5])]:
        hessians_agree(source, {"x": np.array(x)}, monkeypatch)
        jacobians_agree(source.replace("sum(", "(", 1), {"x": np.array(x)}, monkeypatch)


def test_inf_and_nan_factors_on_the_stack_itself():
    stack = TangentStack.identity(3, (3,)) + TangentStack.outer(np.array([1.0, 2.0, 0.0]), (3,))
    factor = np.array([np.inf, 0.0, np.nan])
    for ours, theirs in [(tangent_times(stack, factor), tangent_times(stack.dense(), factor)),
                         (stack * factor, stack.dense() * factor),
                         (stack / np.array([0.0, 1.0, 2.0]), stack.dense() / np.array([0.0, 1.0, 2.0])),
                         (zero_where_zero(stack, stack / 2.0), stack.dense() / 2.0)]:
        np.testing.assert_array_equal(np.asarray(ours), theirs)
        assert ours.__class__ is np.ndarray or np.isfinite(ours.dense()).all()
    diagonal = TangentStack.identity(3, (3,))
    masked = tangent_times(diagonal, np.array([np.inf, 1.0, 2.0]))
    np.testing.assert_array_equal(masked, np.diag([np.inf, 1.0, 2.0]))   # not nan off the diagonal


def test_densifying_operations_give_the_dense_answer():
    stack = TangentStack.identity(4, (4,), offset=1) * np.arange(1.0, 5.0) \
        + TangentStack.outer(np.array([0.5, -1.0, 2.0, 0.25]), (4,)) * np.linspace(0, 1, 4)
    dense = stack.dense()
    expected = np.diag(np.arange(1.0, 4.0), -1) + np.outer([0.5, -1.0, 2.0, 0.25], np.linspace(0, 1, 4))
    np.testing.assert_array_equal(dense, expected)
    matrix = np.arange(16.0).reshape(4, 4)
    for ours, theirs in [(stack @ matrix, dense @ matrix), (stack[1:, ::2], dense[1:, ::2]),
                         (stack[:, [0, 0, 3]], dense[:, [0, 0, 3]]),
                         (np.where(dense > 0.4, stack, 1.0), np.where(dense > 0.4, dense, 1.0)),
                         (stack == 0.0, dense == 0.0), (np.stack([stack, stack]), np.stack([dense, dense])),
                         (stack.T, dense.T), (np.sum(stack, axis=0), np.sum(dense, axis=0)),
                         (np.sin(stack), np.sin(dense)), (stack ** 2, dense ** 2),
                         (np.reshape(stack, (2, 8)), np.reshape(dense, (2, 8))),
                         (stack + dense, dense + dense), (dense - stack, dense - dense)]:
        assert ours.__class__ is not TangentStack
        np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=0)
    for ours, theirs in [(np.sum(stack, axis=1), dense.sum(axis=1)), (np.reshape(stack, (4, 2, 2)), dense.reshape(4, 2, 2)),
                         (np.broadcast_to(TangentStack.outer(np.ones(4), (1,)), (4, 3)), np.ones((4, 3))),
                         (np.expand_dims(stack, 1), dense[:, None]), (-stack, -dense), (stack * 3.0 - stack, 2 * dense),
                         (where(np.array([True, False, True, True]), stack, 0.0),
                          np.where([True, False, True, True], dense, 0.0))]:
        np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-15, atol=1e-15)


def test_where_with_a_constant_condition_is_numpys():
    stack = TangentStack.identity(4, (4,)) * np.arange(1.0, 5.0)
    dense = stack.dense()
    for condition in (False, True, np.False_, np.True_):
        np.testing.assert_array_equal(np.asarray(np.where(condition, stack, 0.0)), np.where(condition, dense, 0.0))
        np.testing.assert_array_equal(np.asarray(np.where(condition, 0.0, stack)), np.where(condition, 0.0, dense))


def test_too_many_rank_one_terms_densify():
    stack = TangentStack.identity(5, (5,))
    for j in range(tangent_stack.MAX_RANK_ONE + 1):
        stack = stack + TangentStack.outer(np.full(5, j + 1.0), (5,)) * np.arange(5.0) ** j
    assert stack.__class__ is np.ndarray


def test_replayed_passes_of_several_inputs_and_chunks_are_the_dense_ones(monkeypatch):
    """Several inputs in one replayed pass (diagonals at their rows' offsets) and inputs taken in
    chunks of rows (diagonals starting before the stack) give the dense numbers."""
    source = "sum(x * sin(z)) + sum(x) * sum(z ** 2) + sum(exp(x) * x) * y"
    at = {"x": np.linspace(-1, 1, 20), "z": np.linspace(0.5, 2, 20), "y": 0.7}
    f = autodiff.function(source)
    for _ in range(3):
        replayed = f.hessian(at)
    assert f.replays == 1
    monkeypatch.setattr(tangent_stack, "STRUCTURED", [False])
    dense = higher.hessian(None, at, target=f.target).hessian
    close(replayed, dense)
    jacobian = autodiff.function("sin(x) * sum(z) + z ** 2 * x")
    for _ in range(3):
        ours_jacobian = jacobian.jacobian({"x": at["x"], "z": at["z"]}, mode="forward")
    close(ours_jacobian, forward.jacobian(None, {"x": at["x"], "z": at["z"]}, target=jacobian.target,
                                          mode="forward").jacobian)
    monkeypatch.setattr(tangent_stack, "STRUCTURED", [True])
    monkeypatch.setattr(tangents, "TANGENT_BUDGET_ELEMENTS", 20 * 7)     # chunks of 7 rows,
    monkeypatch.setattr(tangent_stack, "MIN_STRUCTURED_ROWS", 1)        # structured too
    chunked = higher.hessian(None, at, target=f.target)
    assert chunked.passes == 3 + 3 + 1
    close(chunked.hessian, dense)
