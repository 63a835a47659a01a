"""core/finite_known.py: a fused region's adjoint, tested finite in the sweep, is not summed again
by api.grad's test of the gradient; anything written into since, an earlier sweep's entry, a dead
array and a second question are tested as before, so a nan or inf is always reported."""
import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import finite_known
from autodiff.engine.core.accumulate import accumulate
from autodiff.engine.core.tape import Tape, backward
from autodiff.engine.views import provenance

LARGE = 1 << 17                        # above the fusion threshold
REGION = "sum(exp(-x * x) * tanh(x) + sin(x) * x)"


@pytest.fixture(autouse=True)
def empty():
    finite_known.clear()
    yield
    finite_known.clear()


def test_a_regions_gradient_is_tested_once(monkeypatch):
    tests = []
    finite = provenance.finite              # the one finiteness test (core/numbers.py): arrays it reads
    monkeypatch.setattr(provenance, "finite", lambda v: (hasattr(v, "shape") and tests.append(v.shape)) or finite(v))
    result = api.grad(REGION, at={"x": np.linspace(-2, 2, LARGE)})
    assert result.nonfinite == [] and np.isfinite(result.gradient["x"]).all()
    # x's adjoint is the sum of the region's reads' adjoints in the op-by-op sweep's order, one
    # kernel's output, which its finiteness check tested (core/lazy.py's settle; before, the sum
    # the sweep added of each read's adjoint, an array no kernel tested: provenance tested it once)
    assert tests == []


def test_an_adjoint_added_into_after_its_test_is_tested_again():
    # x[0] ** 0.5 at 0: the value is finite, its derivative inf; the region, recorded last, is
    # swept first, so its adjoint is the buffer the indexing's contribution is added into
    x = np.linspace(0, 2, LARGE)
    result = api.grad("sum(x[0:1] ** 0.5) + " + REGION, at={"x": x})
    assert np.isinf(result.gradient["x"][0]) and np.isfinite(result.value)
    assert result.nonfinite and result.nonfinite[0]["op"] == "pow"


def test_a_region_whose_gradient_is_not_finite_still_reports_it():
    x = np.linspace(1.0, 2.0, LARGE)
    x[7] = np.inf
    result = api.grad(REGION, at={"x": x})
    assert result.nonfinite


def test_an_entry_is_taken_once():
    a = np.ones(4)
    finite_known.note(a)
    assert finite_known.taken(a) and not finite_known.taken(a)


def test_an_in_place_sum_forgets_its_buffer():
    prev, contrib = np.ones(LARGE), np.full(LARGE, np.inf)
    finite_known.note(prev)
    out = accumulate(prev, contrib)
    assert out is prev and not finite_known.taken(prev)


def test_a_sweep_drops_the_entries_of_the_sweep_before():
    a = np.ones(4)
    finite_known.note(a)
    tape = Tape()
    x = tape.watch(np.ones(3))
    backward(tape, x, np.ones(3))
    assert not finite_known.taken(a)


def test_a_dead_array_is_not_taken_for_a_new_one_at_its_address():
    a = np.ones(4)
    finite_known.note(a)
    address = id(a)
    del a
    for _ in range(1000):                      # a new array at the same address, if the allocator reuses it
        b = np.ones(4)
        if id(b) == address:
            break
    assert not finite_known.taken(b)


def test_the_entries_are_bounded():
    arrays = [np.ones(1) for _ in range(finite_known.MAX_ENTRIES + 5)]
    for a in arrays:
        finite_known.note(a)
    assert len(finite_known._TESTED) == finite_known.MAX_ENTRIES
