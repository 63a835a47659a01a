"""Issue 16, runtime: repeated API calls keep memory flat; limits that hold."""
import gc
import re
import time

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


# ---- limits that hold -------------------------------------------------------------------------

import pytest  # noqa: E402

from autodiff.engine.lang.limits import Limits  # noqa: E402
from autodiff.parser.errors import SourceError  # noqa: E402

DOUBLING = "def f(x):\n    while True:\n        x = [x, x]\n    return x\n"
ENDLESS = "def f(x):\n    y = x\n    while True:\n        y = y * 1.0 + x * 0.0\n    return y\n"


def _program(tmp_path, text, name="p.py"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_list_literals_count_against_the_element_limit():
    with pytest.raises(SourceError, match="6 elements, more than the limit of 5") as err:
        api.evaluate("[x, x, x]", at={"x": [1.0, 2.0]}, limits=Limits(elements=5))
    assert err.value.kind == "too large"


def test_the_doubling_loop_is_refused_before_it_allocates(tmp_path):
    with pytest.raises(SourceError, match="more than the limit of 1,000") as err:
        api.evaluate(_program(tmp_path, DOUBLING), at={"x": 1.0}, limits=Limits(elements=1000))
    assert err.value.span.line == 3


@pytest.mark.parametrize("call", ["jacobian", "hessian"])
def test_jacobian_and_hessian_sizes_are_checked_first(call, monkeypatch):
    import autodiff.engine.diff.common as common
    if call == "jacobian":
        for mode in ("forward", "reverse"):
            with pytest.raises(SourceError, match="Jacobian would have 10,000 elements"):
                api.jacobian("x * x", at={"x": list(range(100))}, mode=mode, limits=Limits(elements=5000))
    else:
        monkeypatch.setattr(common, "sweep", lambda *a, **k: pytest.fail("a pass ran"))
        with pytest.raises(SourceError, match="Hessian would have 10,000 elements"):
            api.hessian("sum(x * x)", at={"x": list(range(100))}, limits=Limits(elements=5000))


def test_linspace_needs_finite_bounds():
    for source in ("linspace(0, inf, 5)", "linspace(nan, 1, 5)", "linspace(0, 1, inf)", "arange(0, inf)"):
        with pytest.raises(SourceError):
            api.evaluate(source)


def test_an_endless_loop_stops_at_the_tape_entry_limit(tmp_path):
    with pytest.raises(SourceError, match="more than 20,000 operations") as err:
        api.grad(_program(tmp_path, ENDLESS), at={"x": 1.0}, limits=Limits(tape_entries=20_000))
    assert err.value.kind == "tape limit" and err.value.span.line == 3
    assert "max_tape_entries" in err.value.hint


def test_nested_derivatives_are_bounded_by_the_tape_entry_limit():
    source = "grad(" * 12 + "tanh" + ")" * 12 + "(x)"
    with pytest.raises(SourceError, match="operations on its tapes"):
        api.evaluate(source, at={"x": 0.5}, limits=Limits(tape_entries=5_000))


def test_a_nested_derivative_stops_during_its_sweep_near_the_entry_limit():
    source = "grad(" * 22 + "tanh" + ")" * 22 + "(x)"    # each op is recorded on all 22 tapes
    with pytest.raises(SourceError, match="operations on its tapes") as err:
        api.evaluate(source, at={"x": 0.5}, limits=Limits(tape_entries=300_000))
    recorded = int(re.search(r"\(([\d,]+)\)", err.value.message).group(1).replace(",", ""))
    assert recorded < 360_000          # checked every few thousand swept entries, not after the sweep


def test_a_nested_derivative_is_held_to_the_tape_memory_limit():
    source = "grad(" * 22 + "tanh" + ")" * 22 + "(x)"     # tapes of 2 GB by the entry limit
    start = time.perf_counter()
    with pytest.raises(SourceError, match="over the tape-memory limit of 100 MB") as err:
        api.evaluate(source, at={"x": 0.5}, limits=Limits(tape_mb=100))
    assert err.value.kind == "tape too large" and "in grad(grad(" in err.value.message
    assert time.perf_counter() - start < 30
