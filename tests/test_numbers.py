"""engine/core/numbers.py: the one text of a number (the CLI's values and the graph's labels share
it), the words for non-finite floats and the whole-number test."""
import math

import numpy as np
import pytest

from autodiff.cli.output import fmt_value
from autodiff.engine.core.numbers import is_whole, nonfinite_word, number_text
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
