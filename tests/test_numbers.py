"""engine/core/numbers.py: the one text of a number (the CLI's values and the graph's labels share
it), the words for non-finite floats, the whole-number test and the one finiteness test."""
import math

import numpy as np
import pytest

from autodiff.cli.output import fmt_value
from autodiff.engine.core import numbers
from autodiff.engine.core.numbers import all_finite, finite, finite_array, is_whole, nonfinite_word, number_text
from autodiff.engine.views.graph import short


@pytest.mark.parametrize("x, text", [(3.0, "3"), (3, "3"), (-0.5, "-0.5"), (0.1 + 0.2, "0.30000000000000004"),
                                     (1e-12, "1e-12"), (1e22, "1e+22"), (-0.0, "-0"), (np.float64(2.5), "2.5"),
                                     (math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf")])
def test_a_number_reads_back_as_the_same_float(x, text):
    assert number_text(x) == text
    assert short(x) == text and fmt_value(x) == text          # the graph's labels and the CLI's values
    if nonfinite_word(x) is None:
        assert float(text) == float(x)


def test_whole_numbers():
    assert [is_whole(v) for v in (3, 3.0, True, 10 ** 400, 3.5, math.nan, math.inf)] == \
        [True, True, True, True, False, False, False]


def _with(a, index, bad):
    a = a.copy()
    a.flat[index] = bad
    return a


HUGE = 10 ** 400
FINITENESS_CASES = [
    1.5, math.nan, math.inf, -math.inf, 0, True, HUGE, 1 + 2j, complex(1.0, math.nan), complex(math.inf, 0.0),
    np.float64(2.0), np.float64(math.nan), np.float32(math.inf), np.float32(1.0), np.complex128(complex(0, math.inf)),
    np.int64(3), np.array(1.0), np.array(math.nan), np.array([], dtype=float), np.arange(5), np.array([True, False]),
    np.linspace(-1.0, 1.0, 3), np.linspace(-1.0, 1.0, 200).reshape(10, 20), np.linspace(-1.0, 1.0, 400)[::3],
    np.ones((30, 40)).T, np.linspace(-1.0, 1.0, 5000), np.ones(4096, dtype=np.float32),
    np.array([1e308, 1e308]), np.full(6000, 1e308), np.array([1e308, -1e308, math.inf]),   # sums that overflow
    np.array([1 + 1j, complex(0.0, math.inf)]), np.array([1 + 1j, 2 - 1j]), np.array([1e308 + 0j, 1e308 + 0j]),
    [1.0, 2.0], [1.0, math.nan],
] + [_with(np.linspace(-1.0, 1.0, size), size // 2, bad) for size in (3, 200, 5000)
     for bad in (math.nan, math.inf, -math.inf)]


@pytest.mark.parametrize("v", FINITENESS_CASES, ids=range(len(FINITENESS_CASES)))
def test_finite_is_numpys_isfinite_of_every_number(v):
    want = v is HUGE or bool(np.isfinite(np.asarray(v)).all())       # (numpy cannot hold HUGE)
    assert finite(v) == want and all_finite([v]) == want and all_finite([1.0, v, 2.0]) == want
    if isinstance(v, np.ndarray) and v.dtype.kind in "fc":
        assert finite_array(v) == want                  # the undispatched test of a host array


def test_a_sum_that_overflows_is_finite():
    # a tangent stack read [1e308, 1e308] as not finite (its sum overflows) and went dense; the
    # one test asks again, entry by entry, wherever the sum is not finite
    for a in (np.array([1e308, 1e308]), np.full(6000, 1e308), np.array([[1e308], [1e308]])):
        assert finite(a) and finite_array(a)
    assert not finite(np.array([1e308, 1e308, math.nan]))


def test_an_object_array_is_finite_not_an_error():
    # diff/bits.all_finite raised TypeError on it (numpy's isfinite takes no objects)
    assert finite(np.array([1.0, "a"], dtype=object)) and all_finite([np.array([None], dtype=object)])


def test_all_finite_stops_at_the_first_not_finite():
    assert all_finite([]) and all_finite((v for v in (1.0, np.ones(3))))
    assert not all_finite([1.0, np.array([1.0, math.nan]), "never read"])


def test_finite_arrays_keep_one_ones_vector_whatever_the_sizes():
    # one ones vector per size asked was kept for the process: 64 MiB after sizes 1 .. 4096
    for size in range(1, numbers.ONES_CACHED_MAX + 1, 37):
        assert finite_array(np.linspace(-1.0, 1.0, size))
    assert len(numbers._ones) == 1 and numbers._ones[0].size == numbers.ONES_CACHED_MAX
    bad = np.ones(300)
    bad[7] = np.inf
    assert not finite_array(bad)
