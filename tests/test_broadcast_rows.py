"""core/rules/broadcast_rows.py: an elementwise op across a broadcast of short rows (kmeans'
points[:, None, :] - centroids[None, :, :]) by a copy of the operand broadcast along a middle
axis, to numpy's own bits (nan payloads, -0.0, inf included), and left to numpy everywhere else;
and the kmeans eval's value and gradient, replayed, to numpy's own operations' bits."""
import numpy as np
import pytest

import autodiff
from autodiff.engine.core.primitives import TABLE
from autodiff.engine.core.rules import broadcast_rows, shapes
from autodiff.engine.diff.replay import takes_rows
from autodiff.engine.core.rules.arithmetic import add, mul, sub


def _awkward(rng, shape, dtype):
    """Values over 20 decades, with -0.0, inf, -inf and nans of several payloads sprinkled in."""
    x = (rng.normal(size=shape) * 10.0 ** rng.integers(-10, 10, size=shape)).astype(dtype)
    pick = rng.random(shape)
    x[pick < 0.1] = -0.0
    x[(pick > 0.1) & (pick < 0.102)] = np.inf
    x[(pick > 0.2) & (pick < 0.202)] = -np.inf
    bits = x.view(np.int64 if dtype == np.float64 else np.int32)
    nan = np.array(np.nan, dtype=dtype).view(bits.dtype)
    bits[(pick > 0.3) & (pick < 0.302)] = nan | 0x5                   # nans with their own payloads
    bits[(pick > 0.4) & (pick < 0.402)] = -(nan | 0x9) if dtype == np.float64 else nan | 0x9
    return x


PAIRS = [((1000, 1, 8), (1, 100, 8)), ((1, 100, 8), (1000, 1, 8)), ((300, 1, 4, 8), (1, 20, 4, 8)),
         ((50, 1, 2), (50, 90, 2)), ((60, 90, 2), (60, 1, 2)), ((100, 1, 64), (1, 10, 64))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply"])
@pytest.mark.parametrize("x_shape, y_shape", PAIRS)
def test_a_broadcast_of_short_rows_is_copied_out_to_numpys_bits(x_shape, y_shape, name, dtype):
    rng = np.random.default_rng(sum(x_shape) + 7 * sum(y_shape))
    x, y = _awkward(rng, x_shape, dtype), _awkward(rng, y_shape, dtype)
    ufunc = getattr(np, name)
    with np.errstate(all="ignore"):
        expected = ufunc(x, y)
        got = broadcast_rows.spread(ufunc, x, y, np)
    assert got is not None                            # the copy's way was taken
    assert got.dtype == expected.dtype and got.shape == expected.shape and got.flags.c_contiguous
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("op, ufunc", [(add, np.add), (sub, np.subtract), (mul, np.multiply)])
def test_add_sub_and_mul_replay_it_as_a_fact_of_their_entries_to_numpys_bits(op, ufunc):
    rng = np.random.default_rng(5)
    p, c = _awkward(rng, (1000, 8), np.float64), _awkward(rng, (10, 8), np.float64)
    x, y = p[:, None, :], c[None, :, :]
    assert op.primitive.broadcast_rows and broadcast_rows.fits(x, y) and broadcast_rows.fits(y, x)
    step = broadcast_rows.forward(op.primitive)
    with np.errstate(all="ignore"):
        assert step(x, y).tobytes() == ufunc(x, y).tobytes()
        assert step(y, x).tobytes() == ufunc(y, x).tobytes()
        # a replay's values in another layout than the recorded ones: numpy's own op
        assert step(x, np.asfortranarray(c)[None]).tobytes() == ufunc(x, c[None]).tobytes()
    assert not any(TABLE[name].broadcast_rows for name in ("div", "pow", "matmul", "maximum", "eq"))


@pytest.mark.parametrize("x, y", [
    (np.ones((1000, 8)), np.ones(8)),                              # two dimensions: numpy's loop is quick
    (np.ones((1000, 1, 8)), np.ones((1, 100, 8), dtype=np.float32)),     # a cast
    (np.ones((1000, 1, 8), dtype=np.int64), np.ones((1, 100, 8), dtype=np.int64)),
    (np.ones((1000, 1, 8)), np.ones((1, 100, 8))[:, ::-1]),        # not C-contiguous
    (np.ones((1000, 1, 80)), np.ones((1, 100, 80))),               # long rows
    (np.ones((1000, 1, 1)), np.ones((1, 100, 1))),                 # rows of one
    (np.ones((10, 1, 8)), np.ones((1, 10, 8))),                    # too few elements
    (np.ones((1000, 100, 1)), np.ones((1, 1, 8))),                 # along the last axis
    (np.ones((1, 100, 8)), np.ones((1000, 100, 8))),               # along the first axis: one run already
    (np.ones((1000, 1, 1, 8)), np.ones((1, 10, 10, 8))),           # along two axes
    (np.ones((1000, 10, 8)), np.ones((1000, 10, 8))),              # no broadcast
])
def test_other_broadcasts_are_left_to_numpy(x, y):
    assert broadcast_rows.spread(np.subtract, x, y, np) is None and not broadcast_rows.fits(x, y)
    assert broadcast_rows.forward(sub.primitive)(x, y).tobytes() == (x - y).tobytes()


def test_numbers_are_left_to_the_entrys_impl():
    assert not broadcast_rows.fits(1.0, 3.0) and not broadcast_rows.fits(np.ones((1000, 1, 8)), 2.0)
    assert broadcast_rows.forward(sub.primitive)(1.0, 3.0) == -2.0
    assert broadcast_rows.forward(mul.primitive)(3, 4) == 12


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1000, 100, 8), (300, 10, 2), (64, 64, 64), (20, 30, 4, 8)])
def test_the_mul_vjps_product_with_a_spread_adjoint_is_copied_out_to_numpys_bits(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    reduced, other = _awkward(rng, shape[:-1] + (1,), dtype), _awkward(rng, shape, dtype)
    spread = np.broadcast_to(reduced, shape)          # a sum's adjoint restored over its rows
    assert spread.strides[-1] == 0
    with np.errstate(all="ignore"):
        for a, b in ((spread, other), (other, spread)):
            got, expected = broadcast_rows.times(a, b), a * b
            assert got.dtype == expected.dtype and got.flags.c_contiguous and expected.flags.c_contiguous
            assert got.tobytes() == expected.tobytes()
            assert got.base is None                   # a buffer of its own (accumulate may add into it)


@pytest.mark.parametrize("a, b", [
    (np.broadcast_to(np.ones((1000, 100, 1)), (1000, 100, 80)), np.ones((1000, 100, 80))),    # long rows
    (np.broadcast_to(np.ones((10, 10, 1)), (10, 10, 8)), np.ones((10, 10, 8))),               # few elements
    (np.broadcast_to(np.ones((1000, 100, 1)), (1000, 100, 8)), np.ones((1000, 100, 16))[..., ::2]),
    (np.broadcast_to(np.ones((1000, 100, 1)), (1000, 100, 8)), np.ones((1000, 100, 8), dtype=np.float32)),
    (np.ones((1000, 100, 8)), np.ones((1000, 100, 8))),
    (2.0, np.ones((1000, 100, 8))),
])
def test_other_products_are_numpys_own(a, b):
    assert broadcast_rows.times(a, b).tobytes() == (a * b).tobytes()
    assert broadcast_rows.times(b, a).tobytes() == (b * a).tobytes()


@pytest.mark.parametrize("index", [(slice(None), None, slice(None)), (None, slice(None)), (Ellipsis, 1),
                                   (None, Ellipsis, slice(0, 2))])
def test_an_index_with_none_or_ellipsis_is_basic_and_its_adjoint_adds_as_add_at(index):
    assert shapes.basic_index(index)
    g_full = np.array([[-0.0, 1.5, np.nan], [2.0, -0.0, np.inf], [0.0, -3.0, 4.0]])
    g = g_full[index]
    expected = np.zeros((3, 3))
    np.add.at(expected, index, g)
    assert shapes.untake(g, index, (3, 3)).tobytes() == expected.tobytes()


def test_an_index_with_an_array_or_a_bool_is_not_basic():
    assert not shapes.basic_index((slice(None), np.array([0, 1])))
    assert not shapes.basic_index((None, True))


KMEANS = """
import numpy as np

def f(points, centroids):
    d = points[:, None, :] - centroids[None, :, :]
    dist = np.sum(d * d, axis=2)
    return np.sum(np.min(dist, axis=1))
"""


def _kmeans_by_numpy(p, c):
    """The kmeans eval's value and gradient by numpy's own operations, in the engine's rules'
    order (the sums by add.reduce itself, the broadcasts as numpy broadcasts them)."""
    d = p[:, None, :] - c[None, :, :]
    dist = np.add.reduce(d * d, axis=2)
    nearest = np.min(dist, axis=1)
    value = np.add.reduce(nearest, axis=None)
    share = (dist == nearest[:, None]).astype(np.float64)
    share = share / np.add.reduce(share, axis=1)[:, None]
    g6 = np.broadcast_to(np.ones(len(p))[:, None], dist.shape) * share
    g5 = np.broadcast_to(g6[:, :, None], d.shape)
    g4 = g5 * d
    g4 += d * g5
    return value, 0.0 + np.add.reduce(g4, axis=1), 0.0 + np.add.reduce(-g4, axis=0)


def test_the_kmeans_eval_replays_to_numpys_own_bits(tmp_path):
    path = tmp_path / "kmeans.py"
    path.write_text(KMEANS)
    f = autodiff.function(str(path))
    rng = np.random.default_rng(17)
    for step in range(5):
        points = rng.random((300, 8)) * 10.0 ** rng.integers(-3, 3, size=(300, 8))
        centroids = np.ascontiguousarray(points[-10:] + 0.5 * step)
        value, grads = f.value_and_grad({"points": points, "centroids": centroids}, wrt=["points", "centroids"])
        expected, g_points, g_centroids = _kmeans_by_numpy(points, centroids)
        assert np.float64(value).tobytes() == np.float64(expected).tobytes()
        assert grads["points"].tobytes() == g_points.tobytes()
        assert grads["centroids"].tobytes() == g_centroids.tobytes()
    assert f.replays >= 3 and f.fallbacks == {}
    trace, = f.traces.values()                        # its broadcast difference replays across rows
    called = [cell.cell_contents for forward in trace.forwards for cell in forward.__closure__
              if getattr(cell.cell_contents, "__name__", "").endswith("across broadcast rows")]
    assert [step.__name__ for step in called] == ["subtract across broadcast rows"]


def test_a_step_takes_the_rows_forward_where_its_recorded_arguments_fit():
    from autodiff.engine.core.tape import Tape
    tape = Tape(keep_values=True)
    p, c = tape.watch(np.ones((1000, 8))), tape.watch(np.ones((10, 8)))
    d = sub(p[:, None, :], c[None, :, :])
    e = mul(d, d)
    entries = tape.entries
    assert takes_rows(entries, entries[d.index]) and not takes_rows(entries, entries[e.index])
