"""core/rules/thin_sums.py: row sums of thin arrays to numpy's bits, column sums to rounding, and
the engine's sum and unbroadcast taking them where numpy's one call is slow."""
import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core.rules import thin_sums
from test_broadcast_rows import _awkward     # values over 20 decades, -0.0, inf and nans of several payloads


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1000, 2), (1000, 4), (448, 7), (3, 500, 5), (20000, 3),
                                   (512, 8), (1000, 8), (3, 500, 8), (100000, 8)])
def test_row_sums_are_numpys_own_bits(shape, dtype):
    x = _awkward(np.random.default_rng(sum(shape)), shape, dtype)
    assert thin_sums.thin(x, thin_sums.ROW_WIDTH_MAX)
    with np.errstate(all="ignore"):
        expected = np.add.reduce(x, axis=-1)
        got = thin_sums.row_sums(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("width", [3, 8])
def test_rows_of_negative_zeros_sum_to_positive_zero_as_numpy(width):
    x = np.full((1000, width), -0.0)
    assert np.signbit(np.add.reduce(x, axis=1)).sum() == 0
    assert np.signbit(thin_sums.row_sums(x)).sum() == 0


def test_rows_of_eight_sum_in_numpys_eight_lanes_not_one_after_the_other():
    x = np.tile([1e16, 1.0, -1e16, 1.0, 1.0, 1.0, 1.0, 1.0], (1000, 1))
    in_order = x[:, 0] + 0.0
    for j in range(1, 8):
        in_order += x[:, j]
    expected = np.add.reduce(x, axis=1)
    assert (expected != in_order).all()            # why a row of 8 is not column adds in order
    assert thin_sums.thin(x, thin_sums.ROW_WIDTH_MAX)
    assert thin_sums.row_sums(x).tobytes() == expected.tobytes()


@pytest.mark.parametrize("shape, is_thin", [((1000, 4), True), ((100, 4), False), ((1000, 1), False),
                                            ((1000, 9), False), ((4, 1000), False)])
def test_only_tall_thin_contiguous_float_arrays_are_thin(shape, is_thin):
    widest = thin_sums.COLUMN_WIDTH_MAX
    assert thin_sums.thin(np.ones(shape), widest) is is_thin
    assert not thin_sums.thin(np.ones(shape, dtype=np.int64), widest)
    assert not thin_sums.thin(np.ones(shape, dtype=np.float16), widest)
    assert not thin_sums.thin(np.ones(shape[::-1]).T, widest)
    assert not thin_sums.thin(np.ones((1000, 9)), thin_sums.ROW_WIDTH_MAX)     # lanes of more than one column


def test_column_sums_agree_with_numpy_to_rounding_and_round_less():
    x = np.random.default_rng(3).normal(size=(5000, 8)) * 1e3 + 1e6
    got = thin_sums.column_sums(x)
    row_by_row = np.add.reduce(x, axis=0)
    np.testing.assert_allclose(got, row_by_row, rtol=1e-13)
    exact = np.array([np.sum(column, dtype=np.longdouble) for column in x.T])
    assert np.abs(got - exact).sum() <= np.abs(row_by_row - exact).sum()


def test_float16_rows_are_left_to_numpy_which_rounds_them_once():
    X = (np.random.default_rng(0).normal(size=(1000, 4)) * 100).astype(np.float16)
    column_adds = X[:, 0] + np.float16(0.0)
    for j in range(1, 4):
        column_adds += X[:, j]
    assert (np.add.reduce(X, axis=1) != column_adds).any()        # why float16 is not thin
    assert not thin_sums.thin(X, thin_sums.ROW_WIDTH_MAX)


def test_the_language_sum_over_the_last_axis_is_numpys():
    X = _awkward(np.random.default_rng(7), (1000, 4), np.float64)
    with np.errstate(all="ignore"):
        value = api.evaluate("sum(X, 1)", at={"X": X}).value
        assert np.asarray(value).tobytes() == np.add.reduce(X, axis=1).tobytes()


def test_a_broadcast_row_gets_its_gradient_summed_down_the_columns():
    rng = np.random.default_rng(11)
    P, c = rng.normal(size=(1000, 4)), rng.normal(size=4)
    result = api.grad("sum((P - c) ** 2)", at={"P": P, "c": c}, wrt=["c"])
    np.testing.assert_allclose(result.gradient["c"], -2.0 * (P - c).sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis", [((1000, 100, 8), 1), ((10000, 10, 16), 1), ((300, 10, 2), 1),
                                         ((256, 3, 4, 8), 1), ((16, 20, 7, 3), 2), ((1000, 2, 32), 1)])
def test_slab_sums_are_numpys_own_bits(shape, axis, dtype):
    x = _awkward(np.random.default_rng(sum(shape) + axis), shape, dtype)
    assert thin_sums.slabbed(x, axis)
    with np.errstate(all="ignore"):
        expected = np.add.reduce(x, axis=axis, keepdims=True)
        got = thin_sums.slab_sums(x, axis)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_slabs_of_negative_zeros_sum_to_positive_zero_as_numpy():
    x = np.full((300, 5, 4), -0.0)
    assert np.signbit(np.add.reduce(x, axis=1)).sum() == 0
    assert np.signbit(thin_sums.slab_sums(x, 1)).sum() == 0


@pytest.mark.parametrize("shape, axis, expected", [((1000, 10, 8), 1, True), ((256, 2, 2), 1, True),
                                                   ((100, 100, 8), 1, False), ((1000, 10, 64), 1, False),
                                                   ((1000, 10, 1), 1, False), ((1000, 10, 8), 0, False),
                                                   ((1000, 10, 8), 2, False), ((1000, 1, 8), 1, False)])
def test_only_many_slabs_of_short_rows_are_slabbed(shape, axis, expected):
    assert thin_sums.slabbed(np.ones(shape), axis) is expected
    assert not thin_sums.slabbed(np.ones(shape, dtype=np.int64), axis)
    assert not thin_sums.slabbed(np.ones(shape, dtype=np.float16), axis)
    assert not thin_sums.slabbed(np.ones(shape[::-1]).T, axis)


@pytest.mark.parametrize("source", ["np.sum(D, axis=1)", "np.sum(D, axis=-2)", "np.sum(D, 2)"])
def test_the_language_sums_over_a_middle_axis_and_rows_of_eight_are_numpys(source):
    D = _awkward(np.random.default_rng(5), (1000, 10, 8), np.float64)
    axis = {"np.sum(D, axis=1)": 1, "np.sum(D, axis=-2)": 1, "np.sum(D, 2)": 2}[source]
    with np.errstate(all="ignore"):
        value = api.evaluate(source, at={"D": D}).value
        assert np.asarray(value).tobytes() == np.add.reduce(D, axis=axis).tobytes()


def test_a_broadcast_difference_gets_its_gradient_summed_slab_by_slab_to_numpys_bits():
    rng = np.random.default_rng(13)
    W = rng.normal(size=(1000, 10, 8)) * 10.0 ** rng.integers(-10, 10, size=(1000, 10, 8))
    W[rng.random(W.shape) < 0.1] = -0.0
    P, C = rng.normal(size=(1000, 8)), rng.normal(size=(10, 8))
    result = api.grad("np.sum(W * (P[:, None, :] - C[None, :, :]))", at={"P": P, "C": C, "W": W}, wrt=["P"])
    assert np.asarray(result.gradient["P"]).tobytes() == (np.add.reduce(W, axis=1) + 0.0).tobytes()


@pytest.mark.parametrize("axis", [3, -4, 7])
def test_an_axis_out_of_range_is_numpys_error_not_a_wrapped_slab_sum(axis):
    from autodiff.engine.core.rules.reductions import sum as sum_op
    x = np.ones((1000, 10, 8))
    with pytest.raises(np.exceptions.AxisError):
        np.add.reduce(x, axis=axis)
    with pytest.raises(np.exceptions.AxisError):
        sum_op(x, axis)


def test_the_orders_are_asked_of_this_numpy_and_left_to_it_where_it_adds_otherwise(monkeypatch):
    # row_sums and slab_sums repeat the order this numpy adds in; another numpy may add otherwise:
    # a probe asks numpy itself once, and where it disagrees numpy's own reduction runs
    from autodiff.engine.core.rules import reductions
    assert thin_sums.numpy_order()          # this numpy (the suite's): the fast paths run
    x = _awkward(np.random.default_rng(3), (1000, 8), np.float64)
    d = _awkward(np.random.default_rng(4), (300, 6, 4), np.float64)
    taken = []
    monkeypatch.setattr(reductions, "row_sums", lambda a: taken.append("rows") or thin_sums.row_sums(a))
    monkeypatch.setattr(reductions, "slab_sums", lambda a, k: taken.append("slabs") or thin_sums.slab_sums(a, k))
    expected = np.add.reduce(x, axis=-1), np.add.reduce(d, axis=1)
    got = reductions._sum(x, axis=-1), reductions._sum(d, axis=1)
    assert taken == ["rows", "slabs"] and all(a.tobytes() == b.tobytes() for a, b in zip(got, expected))
    monkeypatch.setattr(thin_sums, "_AGREES", [False])
    taken.clear()
    got = reductions._sum(x, axis=-1), reductions._sum(d, axis=1)
    assert taken == [] and all(a.tobytes() == b.tobytes() for a, b in zip(got, expected))
