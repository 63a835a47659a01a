"""Issue 11, lean memory (core/buffer_pool.py): the regions' buffers come back to the pool when a
kernel frees them and, lent, when the holders of a result drop it; a buffer anyone can still
reach is never written, and the pool stays within its bounds."""
import sys

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import buffer_pool, finite_known, fused, region_kernels
from autodiff.engine.core.notes import READS
from autodiff.engine.diff import reverse

N = fused.FUSE_MIN_ELEMENTS
CHAIN = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
         " + sigmoid(x) * x)")                      # benchmarks/_reference_arrays.CHAIN
ELEMENTWISE = "exp(-x * x) * sin(x) + x * cos(x)"


def lent_result(x):
    """A region's array handed out: the gradient of sum(ELEMENTWISE), interpreted (a value alone
    fuses nothing now: no tape, nothing pending; a Function's second call records a trace)."""
    return reverse.grad(f"sum({ELEMENTWISE})", {"x": x}).gradient["x"]


@pytest.fixture
def empty_pool(monkeypatch):
    monkeypatch.setattr(buffer_pool, "POOL", {})
    monkeypatch.setattr(buffer_pool, "LENT", {})


@pytest.fixture
def misses(monkeypatch, empty_pool):
    """The kernels' asks for a buffer the pool did not have: [count]."""
    count = [0]
    take = region_kernels.take

    def counted(shape):
        buffer = take(shape)
        count[0] += buffer is None
        return buffer
    monkeypatch.setattr(region_kernels, "take", counted)
    return count


def test_dropped_results_come_back_and_calls_make_no_fresh_arrays(misses):
    # each call hands out arrays (a region's output, the gradient); before they were lent, each
    # gradient then faulted in three fresh arrays of n (at 1e7, 7.5 ms or more each)
    x = np.linspace(-2, 2, 2 * N)
    target = api.load(CHAIN)
    expected = api.grad(None, at={"x": x}, target=target).gradient["x"].copy()
    for _ in range(2):
        api.grad(None, at={"x": x}, target=target)
        api.evaluate(None, at={"x": x}, target=target)
    misses[0] = 0
    for _ in range(3):
        gradient = api.grad(None, at={"x": x}, target=target).gradient["x"]
        np.testing.assert_array_equal(gradient, expected)
        del gradient
        api.evaluate(None, at={"x": x}, target=target)
    assert misses[0] == 0


def test_a_held_result_a_view_of_one_or_its_memoryview_is_never_written(empty_pool):
    x = np.linspace(-2, 2, N)
    held = lent_result(x)
    view = lent_result(x)[::3]                                       # its base is held by the view only
    exported = memoryview(lent_result(x))
    gradient = reverse.grad(CHAIN, {"x": x}).gradient["x"]
    kept = [held.copy(), view.copy(), np.frombuffer(exported, dtype=np.float64).copy(), gradient.copy()]
    assert buffer_pool.LENT                                          # they were lent
    for _ in range(4):
        reverse.grad(CHAIN, {"x": x * 0.5})
        lent_result(x * 0.25)
    got = [held, view, np.frombuffer(exported, dtype=np.float64), gradient]
    for before, now in zip(kept, got):
        np.testing.assert_array_equal(now, before)
    free = [b for buffers in buffer_pool.POOL.values() for b in buffers]
    assert free and not any(np.shares_memory(b, a) for b in free for a in got)


def test_a_gradient_accumulates_in_place_into_a_lent_adjoint(empty_pool):
    # x feeds two regions: their adjoints, both lent, add into one of them (accumulate counts the
    # pool's reference apart); a third array of n would be made otherwise
    x = np.linspace(0.2, 0.9, N)
    source = "sum(sin(x) * x + 1.0) * sum(cos(x) * x + 2.0)"
    result = api.grad(source, at={"x": x})
    gradient = result.gradient["x"]
    assert buffer_pool.lent_refs(gradient) == 1
    s, c = np.sum(np.sin(x) * x + 1.0), np.sum(np.cos(x) * x + 2.0)
    expected = (np.cos(x) * x + np.sin(x)) * c + (np.cos(x) - np.sin(x) * x) * s
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)


def test_a_reclaimed_buffer_is_not_taken_as_tested_finite(empty_pool):
    a = np.ones(N)
    buffer_pool.lend(a, np)
    finite_known.note(a)
    key = id(a)
    del a
    assert buffer_pool.take((N,)) is not None
    taken = buffer_pool.POOL.get((N,)) or []
    assert not taken
    assert not finite_known._TESTED.get(key)


def test_only_the_pools_reference_counts_as_dropped():
    table = {0: np.ones(3)}
    assert buffer_pool._refs(table, 0) == buffer_pool.ALONE
    other = table[0]
    assert buffer_pool._refs(table, 0) == buffer_pool.ALONE + 1
    del other


def test_views_other_dtypes_and_read_only_arrays_are_not_lent(empty_pool):
    base = np.ones(2 * N)
    read_only = np.ones(N)
    read_only.flags.writeable = False
    for a in (base[::2], base.astype(np.float32), read_only, np.ones((N, 2)).T):
        assert buffer_pool.lend(a, np) is a
    assert not buffer_pool.LENT


def test_results_held_keep_the_pool_within_its_bounds(empty_pool, monkeypatch):
    monkeypatch.setattr(buffer_pool, "MAX_POOLED_BYTES", 6 * 8 * N)
    x = np.linspace(-2, 2, N)
    values = [lent_result(x) for _ in range(12)]
    count, total = buffer_pool.retained()
    assert count <= buffer_pool.MAX_POOLED and total <= buffer_pool.MAX_POOLED_BYTES
    assert buffer_pool.lent_refs(values[-1]) == 1 and not buffer_pool.lent_refs(values[0])   # the newest
    del values
    reverse.grad(CHAIN, {"x": x})
    count, total = buffer_pool.retained()
    assert total <= buffer_pool.MAX_POOLED_BYTES


def test_buffers_of_a_shape_no_longer_used_make_room(misses):
    stale = [np.ones(N + 1) for _ in range(buffer_pool.MAX_POOLED)]
    for buffer in stale:
        buffer_pool.keep(buffer)
    del stale, buffer
    assert buffer_pool.retained()[0] == buffer_pool.MAX_POOLED
    x = np.linspace(-2, 2, N)
    target = api.load(CHAIN)
    for _ in range(2):
        api.grad(None, at={"x": x}, target=target)
    misses[0] = 0
    api.grad(None, at={"x": x}, target=target)
    assert misses[0] == 0
    assert (N + 1,) not in buffer_pool.POOL or len(buffer_pool.POOL[(N + 1,)]) < buffer_pool.MAX_POOLED


def test_threads_sharing_the_pool_get_their_own_results(empty_pool):
    import threading
    xs = [np.linspace(-2, 2, 2 * N), np.linspace(-1, 3, 2 * N)]
    expected = [api.grad(CHAIN, at={"x": x}).gradient["x"].copy() for x in xs]
    for x in xs:        # what each signature keeps is settled here: no two threads record at once
        api.grad(CHAIN, at={"x": x})        # (a recording run's log of reads is the process's one,
        for _ in range(2):                  # lang/recorded_decisions.py: two at once left its hook set,
            api.evaluate(ELEMENTWISE, at={"x": x})      # and no later run fused lazily)
    wrong = []

    def work(i):
        try:
            for _ in range(8):
                gradient = api.grad(CHAIN, at={"x": xs[i]}).gradient["x"]
                api.evaluate(ELEMENTWISE, at={"x": xs[i]})
                wrong.extend([i] if not np.array_equal(gradient, expected[i]) else [])
        except Exception as error:              # noqa: BLE001 (any error fails the test below)
            wrong.append(repr(error))
    threads = [threading.Thread(target=work, args=(i % 2,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
    assert READS.hook is None


def test_release_buffers_lets_the_pool_go_and_keeps_held_results(empty_pool):
    import autodiff
    x = np.linspace(-2, 2, 2 * N)
    held = reverse.grad(CHAIN, {"x": x}).gradient["x"]
    kept = held.copy()
    reverse.grad(CHAIN, {"x": x})                       # dropped: its gradient comes back free
    free = sum(b.nbytes for buffers in buffer_pool.POOL.values() for b in buffers)
    assert free > 0
    assert autodiff.release_buffers() >= free + 8 * 2 * N   # the free ones and the dropped gradient
    assert buffer_pool.retained() == (0, 0)
    assert autodiff.release_buffers() == 0
    np.testing.assert_array_equal(held, kept)
    np.testing.assert_array_equal(reverse.grad(CHAIN, {"x": x}).gradient["x"], kept)


def test_a_held_temporary_is_not_pooled_where_the_interpreter_counts_fewer_references(monkeypatch, empty_pool):
    # Python 3.14 borrows some references its frames held before, so sys.getrefcount reads lower:
    # the pool's test of "nobody else holds it" is measured on this interpreter, not a constant
    real = sys.getrefcount
    probe = object()
    extra = (lambda o: real(o))(probe) - real(probe)            # what a wrapper's own frame adds
    monkeypatch.setattr(sys, "getrefcount", lambda o: real(o) - extra - 1)      # one reference fewer
    monkeypatch.setattr(buffer_pool, "ALONE", buffer_pool._refs({0: object()}, 0))  # as measured at import
    held = np.ones(N)
    names = {"t1": held, "t2": np.ones(N)}
    region_kernels.give(names, "t1")
    region_kernels.give(names, "t2")
    assert not names
    free = buffer_pool.POOL.get((N,), [])
    assert len(free) == 1 and free[0] is not held
