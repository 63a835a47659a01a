"""Quicker forms of steps a sweep over small numpy arrays takes on every call, where numpy's
cost per call, not per element, decides; each gives the bits of the form it stands for
(tests/test_replay_small_arrays.py). A Python float operand costs numpy a weak-scalar conversion
on every call (more than an add of eight elements); a 0-d float64 array of the same value gives
a float64 array the same result without it, so these apply to float64 arrays only."""
from __future__ import annotations

from ..backend import np

_float64 = []          # [numpy's float64 dtype, 0.0 and 1.0 as 0-d float64 arrays], made on first use


def _constants():
    if not _float64:
        numpy = np()
        _float64.extend((numpy.dtype(numpy.float64), numpy.zeros((), numpy.float64), numpy.ones((), numpy.float64)))
    return _float64


def sigmoid_of_negative(x):
    """What elementwise.py's `_sigmoid(-x)` returns, to the bit, for a float64 numpy array of at
    least one dimension, in one numpy call fewer and without its two float operands; None for
    anything else. The same steps on the same numbers: abs(-x) is abs(x), and -x >= 0 is x <= 0
    (both false for a nan)."""
    numpy = np()
    if x.__class__ is not numpy.ndarray or not x.ndim:
        return None
    float64, zero, one = _float64 or _constants()
    if x.dtype is not float64:
        return None
    e = numpy.abs(x)
    numpy.negative(e, out=e)
    numpy.exp(e, out=e)
    denominator = numpy.add(e, one)
    numpy.copyto(e, one, where=numpy.less_equal(x, zero))
    return numpy.divide(e, denominator, out=e)
