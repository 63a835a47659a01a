"""The fused regions' pool of float64 buffers, so that a kernel writes into memory already
faulted in.

A fresh array of n float64 costs its page faults, which at 1e6 elements take longer than a
numexpr kernel over it, and at 1e7 (80 MB) about 7.5 ms, over 100 ms while the kernel compacts
memory for numpy's huge pages. A buffer comes back to the pool two ways:

- given: a kernel's temporary read for the last time, or a value the reverse sweep has read,
  when nothing else refers to it (core/region_kernels.py);
- lent: a region's output handed out (a forward's value, an input's gradient) is remembered, and
  taken back once its holders have all dropped it. Without this each call handed the memory of
  its results back to the system, and the next call faulted in as many fresh arrays.

Taking one back is safe for the reason accumulating in place is (core/accumulate.py): CPython's
reference count shows that the pool's is the only reference left, and every view, memoryview or
array made over a buffer holds a reference to it, so no one can see the memory a kernel writes
next. The pool is bounded (MAX_POOLED buffers, MAX_POOLED_BYTES in all, lent ones counted), and
holds only plain, writeable, contiguous float64 numpy arrays that own their memory.
"""
from __future__ import annotations

import sys

from . import finite_known

MAX_POOLED = 16
# a region's gradient at 1e7 float64 makes nine arrays of 80 MB (the chain's seven saved ones, its
# output and the adjoint): under 512 MB the pool kept six of the seven freed, and each gradient made
# four fresh arrays instead of three
MAX_POOLED_BYTES = 1 << 30
POOL: dict = {}             # shape -> [free buffers of that shape]
LENT: dict = {}             # id -> a region's output handed out (oldest first); the dict holds it


def poolable(buffer, numpy) -> bool:
    return (buffer.__class__ is numpy.ndarray and buffer.base is None and buffer.dtype == numpy.float64
            and buffer.flags.c_contiguous and buffer.flags.writeable)


def retained() -> tuple:
    """(buffers, bytes) the pool holds, free and lent. (Snapshots: list() of a dict is one step,
    so another thread's kernel changing the pool meanwhile cannot break the loop.)"""
    free = [buffer for buffers in list(POOL.values()) for buffer in list(buffers)]
    lent = list(LENT.values())
    return len(free) + len(lent), sum(b.nbytes for b in free) + sum(b.nbytes for b in lent)


def fits(nbytes) -> bool:
    count, total = retained()
    return count < MAX_POOLED and total + nbytes <= MAX_POOLED_BYTES


def take(shape):
    """A free buffer of `shape`, or None; lent ones nobody holds any longer are taken back first."""
    buffers = POOL.get(shape)
    if not buffers and LENT:
        reclaim()
        buffers = POOL.get(shape)
    try:
        return buffers.pop() if buffers else None
    except IndexError:                      # taken meanwhile by another thread's kernel
        return None


def keep(buffer) -> None:
    """Keep a freed buffer, which the caller has checked is its own alone."""
    if fits(buffer.nbytes) or make_room(buffer):
        POOL.setdefault(buffer.shape, []).append(buffer)


def lend(buffer, numpy):
    """`buffer`, handed out, remembered so that it comes back once its holders drop it. Making
    room frees the buffers of shapes no longer met first (`make_room`), then forgets the oldest
    lent: freed by its holders, then, or now if it has none. (Before, lent ones went first: a pool
    full of another shape's buffers kept them, and each gradient of the chain made 6 fresh arrays.)"""
    if not poolable(buffer, numpy) or id(buffer) in LENT:
        return buffer
    if not fits(buffer.nbytes):
        make_room(buffer)
    while LENT and not fits(buffer.nbytes):
        LENT.pop(next(iter(list(LENT)), None), None)
    if fits(buffer.nbytes):
        LENT[id(buffer)] = buffer
    return buffer


def make_room(buffer) -> bool:
    """Free buffers of other shapes than `buffer`'s until it fits (whether it does): the pool
    follows the shapes in use, where buffers of a size no longer met would fill it for good."""
    for shape in list(POOL):
        while shape != buffer.shape and POOL.get(shape):
            try:
                POOL[shape].pop()
            except IndexError:              # taken meanwhile by another thread's kernel
                break
            if fits(buffer.nbytes):
                return True
    return False


def lent_refs(buffer) -> int:
    """1 where the pool holds `buffer` as lent (a reference its owner's test must not count)."""
    return 1 if LENT and LENT.get(id(buffer)) is buffer else 0


def _refs(table, key) -> int:
    return sys.getrefcount(table.get(key))


# the count of an object only a dict holds, read the same way: measured, not assumed, since how
# many references an interpreter's own frames hold differs between versions (3.14 borrows some)
ALONE = _refs({0: object()}, 0)


def alone(table, key) -> bool:
    """Whether `table` (a dict) holds the only reference to its value at `key`."""
    return _refs(table, key) == ALONE


def reclaim() -> None:
    """Move the lent buffers that only the pool still holds to the free ones."""
    for key in [key for key in list(LENT) if alone(LENT, key)]:
        buffer = LENT.pop(key, None)
        if buffer is not None:              # (not taken back meanwhile by another thread)
            finite_known.forget(buffer)     # its next contents are not what was tested
            POOL.setdefault(buffer.shape, []).append(buffer)


def release() -> int:
    """Drop every free buffer and forget every lent one; the bytes freed (lent buffers nobody
    holds any longer, and the free ones)."""
    reclaim()
    freed = sum(buffer.nbytes for buffers in list(POOL.values()) for buffer in list(buffers))
    POOL.clear()
    LENT.clear()
    return freed
