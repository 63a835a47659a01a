"""engine/core/stacked.py: every lift of a primitive over a leading axis of points gives, to the
bit, what the primitive gives run once per point (the lifts are core/batch.py's for tangents too)."""
import numpy as np
import pytest

from autodiff.engine.core import stacked
from autodiff.engine.core.rules import TABLE

ROWS = 3
X = np.arange(1.0, 1.0 + ROWS * 2 * 3).reshape(ROWS, 2, 3) ** 1.5        # 3 points of shape (2, 3)
V = np.linspace(-1.0, 2.0, ROWS * 4).reshape(ROWS, 4)                  # 3 points of shape (4,)

# (primitive, stacked argument, params): every entry of STACKED_LIFTS, each lift taken
LIFTED = [
    ("getitem", X, {"index": (1, slice(None, None, 2))}),
    ("getitem", V, {"index": -1}),
    ("reshape", X, {"shape_": (3, 2)}),
    ("expand_dims", X, {"axis": 1}),
    ("expand_dims", V, {"axis": -1}),
    ("broadcast_to", V, {"shape_": (2, 4)}),
    ("sum_to", X, {"shape_": (3,)}),
    ("sum_to", X, {"shape_": (2, 1)}),
    ("transpose", X, {}),
    ("transpose", V, {}),
    ("permute_dims", X, {"axes": (1, 0)}),
    ("sum", X, {"axis": None}),
    ("sum", X, {"axis": -1}),
    ("max", X, {"axis": 0}),
    ("min", X, {"axis": (0, 1)}),
    ("cumsum", X, {"axis": 1}),
    ("cumprod", V, {"axis": 0}),
]


def test_every_lift_is_listed_here():
    assert {name for name, _, _ in LIFTED} == set(stacked.STACKED_LIFTS)


@pytest.mark.parametrize("name, x, params", LIFTED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LIFTED)])
def test_a_lift_is_the_primitive_per_point(name, x, params):
    prim = TABLE[name]
    lifted = stacked.STACKED_LIFTS[name](prim, (x,), params, ROWS)
    assert lifted is not None, "the lift is taken, not left to the per-point loop"
    per_point = stacked.per_point(prim, (x,), [True], params, ROWS)
    assert lifted.shape == per_point.shape
    assert np.array_equal(lifted, per_point)
    assert np.array_equal(stacked.stacked_apply(prim, (x,), [True], params, ROWS), per_point)
