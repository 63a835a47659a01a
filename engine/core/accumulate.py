"""Adjoint accumulation in place, into buffers the reverse sweep owns.

`prev + contrib` makes a third array of n for every input used twice; adding into one of the two
saves that allocation (and its page faults). An array is the sweep's own when nothing else refers
to it: CPython's reference count shows it (numpy's own temporary elision uses the same test), so a
user's input, a value a tape entry still keeps, a seed the caller holds, or the base of a live
view is never written. Only plain numpy arrays above a size where allocation costs more than the
test; scalars and boxes (a recorded sweep) add as before.
"""
from __future__ import annotations

import sys

from . import finite_known
from .backend import np
from .buffer_pool import lent_refs

INPLACE_MIN_ELEMENTS = 1 << 14
# references to a buffer nobody else holds, counted inside owned: the adjoint list's slot (or
# the sweep's local for a new contribution), accumulate's argument, owned's argument and
# getrefcount's own (tests/test_lean_tape.py checks both that it is reached and never exceeded);
# one more where it is a region's adjoint that core/buffer_pool.py holds as lent
OWNED_REFS = 4


_counts_as_expected = []      # filled by the first large accumulation: [whether OWNED_REFS holds here]


def accumulate(prev, contrib):
    """prev + contrib, written into prev or contrib when the sweep owns it."""
    numpy = np()
    ndarray = numpy.ndarray
    if prev.__class__ is not ndarray or prev.size < INPLACE_MIN_ELEMENTS:
        return prev + contrib                           # no buffer worth reusing: the sweep of small arrays
    if not _counts_as_expected:
        _counts_as_expected.append(calibrate())
    if not _counts_as_expected[0]:
        return prev + contrib
    if contrib.__class__ is ndarray:
        if owned(prev, contrib) and _fits(prev, contrib):
            finite_known.forget(prev)
            return numpy.add(prev, contrib, out=prev)
        if owned(contrib, prev) and _fits(contrib, prev):
            finite_known.forget(contrib)
            return numpy.add(contrib, prev, out=contrib)
    elif contrib.__class__ is float:
        if owned(prev, contrib) and prev.dtype.kind == "f":
            finite_known.forget(prev)
            return numpy.add(prev, contrib, out=prev)
    return prev + contrib


def owned(buffer, other) -> bool:
    return (buffer.base is None and buffer.flags.writeable and buffer is not other
            and sys.getrefcount(buffer) <= OWNED_REFS + lent_refs(buffer))


def _fits(buffer, other) -> bool:
    """The sum has buffer's shape and dtype (no broadcasting up, no float32 -> float64 loss)."""
    return (buffer.shape == other.shape or np().broadcast_shapes(buffer.shape, other.shape) == buffer.shape) \
        and np().result_type(buffer, other) == buffer.dtype


def calibrate() -> bool:
    """Whether reference counts here read as OWNED_REFS assumes (an interpreter that borrows
    references would read a shared buffer as owned): if not, no adjoint is added in place."""
    adjoints = [np().zeros(1)]
    alone = _probe(adjoints[0])
    extra = adjoints[0]
    shared = _probe(adjoints[0])
    del extra
    return alone and not shared


def _probe(buffer):
    return owned(buffer, None)                 # called as accumulate calls it: the same frames
