"""Issue 16, runtime: repeated API calls keep memory flat; limits that hold."""
import gc

from autodiff.engine import api


def _objects_after(calls, target, at):
    for _ in range(calls):
        api.grad(None, at=at, target=target)
    return len(gc.get_objects())


def test_ten_thousand_api_calls_keep_memory_flat():
    target, at = api.load("x**2*y + y + 2"), {"x": 3, "y": 4}
    assert gc.isenabled()
    before = _objects_after(100, target, at)
    after = _objects_after(10_000, target, at)
    assert gc.isenabled()
    assert after - before < 2_000           # was about 200 objects (16 KB) more per call


def test_repeated_program_calls_keep_memory_flat():
    at = {"a": 0.37}
    target = api.load("samples/programs/control.py")
    before = _objects_after(50, target, at)
    after = _objects_after(1_500, target, at)
    assert after - before < 300_000         # without collecting, some 650,000 (a cycle per call)
    assert api.grad(None, at=at, target=target).gradient["a"] == 4096.0
