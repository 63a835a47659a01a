

def test_the_word_for_a_complex_value_reads_both_parts():
    """A complex array whose imaginary part is nan (its real part finite) is 'nan', not '-inf': the
    word was read from the values cast to float, which drops the imaginary part."""
    import numpy as np
    from autodiff.engine.views.provenance import _word
    assert _word(np.array([1.0 + 1j, complex(2.0, float("nan"))])) == "nan"
    assert _word(np.array([complex(1.0, float("inf"))])) == "inf"
    assert _word(np.array([complex(-float("inf"), 1.0)])) == "-inf"
