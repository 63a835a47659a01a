"""Arrays a reverse sweep has already tested finite, so that the caller's test of the same
gradient (views/provenance.not_finite) takes the answer instead of reading n numbers again.

A fused region tests its adjoints (core/regions.py: a nan or inf there means the op-by-op rules
run instead) and most often hands one on unchanged as an input's gradient, which api.grad then
tested again (0.4-0.7 ms of the chain's 30 ms gradient at 1e6). An entry holds its array weakly
(it keeps nothing alive), is asked once, is forgotten when a sweep adds into its array in place
(core/accumulate.py), and all are dropped as each sweep starts (core/tape.backward): an array a
user changed after an earlier call is never taken as tested."""
from __future__ import annotations

import weakref

MAX_ENTRIES = 64            # the adjoints of one sweep's regions; more are not kept
_TESTED: dict = {}          # id(array) -> a weak reference to it


def note(a) -> None:
    """`a` was just tested finite (and nothing else holds it to write into)."""
    if len(_TESTED) < MAX_ENTRIES:
        try:
            _TESTED[id(a)] = weakref.ref(a)
        except TypeError:                       # no weak references to it: it is tested again
            pass


def forget(a) -> None:
    """`a` is about to be written into."""
    if _TESTED:
        _TESTED.pop(id(a), None)


def clear() -> None:
    if _TESTED:
        _TESTED.clear()


def taken(a) -> bool:
    """Whether `a` was tested finite in this sweep and not written since; asked once."""
    ref = _TESTED.pop(id(a), None) if _TESTED else None
    return ref is not None and ref() is a
