"""max/min's adjoint: the short way for a whole float64 reduction gives the general rule's bits
(ties, nan, signed zeros, infinities, sizes on both sides of the whole-restore limit), and the
tie check notes what it noted before."""
import numpy as np
import pytest

from autodiff.engine.core import notes
from autodiff.engine.core.rules import reductions


def general(g, ans, x):
    return reductions._restore(g, x, None) * reductions._extreme_share(ans, x, None)


CASES = {
    "unique": np.array([0.5, -2.0, 3.0, 1.0]),
    "tie": np.array([3.0, 1.0, 3.0, 3.0]),
    "nan": np.array([1.0, np.nan, 2.0]),
    "inf": np.array([np.inf, 1.0, np.inf]),
    "zeros": np.array([-0.0, 0.0, -1.0]),
    "large": np.linspace(-1.0, 1.0, (1 << 14) + 3),
    "large tie": np.concatenate([np.ones(20000), np.zeros(5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("which", ["max", "min"])
@pytest.mark.parametrize("g", [1.0, -2.5, 0.0, -0.0, np.inf, np.float64(0.3)])
def test_short_way_gives_the_general_rules_bits(name, which, g):
    x = CASES[name]
    ans = float(getattr(np, which)(x))
    with np.errstate(all="ignore"):
        got = reductions._extreme_vjp(g, ans, x)
        want = general(g, ans, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_other_kinds_take_the_general_rule():
    x32 = np.array([1.0, 3.0, 3.0], dtype=np.float32)
    got = reductions._extreme_vjp(1.0, 3.0, x32)
    assert got.tobytes() == general(1.0, 3.0, x32).tobytes()
    x2 = np.array([[1.0, 4.0], [4.0, 2.0]])
    ans = np.max(x2, axis=0)
    got = reductions._extreme_vjp(np.array([1.0, 2.0]), ans, x2, axis=0)
    want = reductions._restore(np.array([1.0, 2.0]), x2, 0) * reductions._extreme_share(ans, x2, 0)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("x, axis, tied", [
    (np.array([1.0, 3.0, 3.0]), None, True), (np.array([1.0, 3.0, 2.0]), None, False),
    (np.array([1.0, np.nan]), None, False), (np.array([[1.0, 1.0], [0.0, 2.0]]), 1, True),
    (np.array([[1.0, 1.0], [0.0, 2.0]]), 0, False)])
def test_tie_note(x, axis, tied):
    impl = reductions._extreme("max", lambda v, axis: np.max(v, axis=axis))
    assert bool(notes.reset().kinks) is False
    impl(x, axis=axis)
    assert bool(notes.NOTES.kinks) == tied
