"""The forward rules' helpers on plain arrays and tangent stacks: bcast's early return and
tangent_times' structured product give what their general paths give."""
import numpy as np
import pytest

from autodiff.engine.core.backend import np as engine_numpy
from autodiff.engine.core.primitives import shape
from autodiff.engine.core.rules.comparisons import tangent_times, zero_where_zero
from autodiff.engine.core.rules.shapes import bcast, broadcast_to
from autodiff.engine.core.tangent_stack import TangentStack


def general_bcast(t, ans):
    """bcast as it was written before its early return (the reference)."""
    s, ts = shape(ans), shape(t)
    if ts == s:
        return t
    if len(ts) == len(s) + 1:
        return t if ts[1:] == s else broadcast_to(t, ts[:1] + s)
    return broadcast_to(t, s)


@pytest.fixture(autouse=True)
def backend_chosen():
    engine_numpy()


@pytest.mark.parametrize("t_shape, ans_shape", [((3,), (3,)), ((5, 3), (3,)), ((), ()), ((4,), ()),
                                                ((1,), (3,)), ((5, 1), (3,)), ((), (2, 3)),
                                                ((2, 3), (2, 3)), ((7, 2, 3), (2, 3)), ((7, 1, 3), (2, 3))])
def test_bcast_of_arrays_is_the_general_one(t_shape, ans_shape):
    t = np.arange(float(np.prod(t_shape))).reshape(t_shape) + 1.0
    ans = np.zeros(ans_shape)
    got, want = bcast(t, ans), general_bcast(t, ans)
    assert got.shape == want.shape and np.array_equal(got, want)
    assert (got is t) == (want is t)


def test_bcast_of_a_stack_and_a_float_is_the_general_one():
    stack = TangentStack.identity(4, (4,))
    assert bcast(stack, np.zeros(4)) is stack is general_bcast(stack, np.zeros(4))
    assert bcast(2.0, np.zeros(3)).tolist() == general_bcast(2.0, np.zeros(3)).tolist()
    assert bcast(2.0, 1.5) == general_bcast(2.0, 1.5) == 2.0


def test_a_stack_times_a_factor_is_the_structured_product():
    stack = TangentStack.identity(3, (3,))
    d = np.array([2.0, 0.0, -1.5])
    got = tangent_times(stack, d)
    assert got.__class__ is TangentStack
    want = zero_where_zero(stack, stack * d, d)
    assert np.array_equal(got.dense(), want.dense())
