"""Binary elementwise ops across a broadcast of short rows, as kmeans' `points[:, None, :] -
centroids[None, :, :]` makes them: numpy's broadcast loop runs once per row there (an operand
broadcast along a middle axis cannot be walked as one run), 0.88 ms for a (1000, 100, 8) result,
where copying that operand out to the result's shape (np.repeat copies whole rows) and applying
the op into the copy walks every array as one run: 0.32 ms, 0.99 -> 0.53 ms at (10000, 10, 16),
80 -> 34 µs at (1000, 10, 8). A fact of the table's entry (`broadcast_rows`: add, sub, mul); a
replayed step takes this way where its recorded arguments took it (diff/replay.py's
step_callable), so that no other op pays a test for it (40-70 ns an op, 5% of ode's replay, where
the entries' impl tested every call).

The same ufunc on the same two values at every element, in the same operand order, into a
C-contiguous result as numpy's own: its bits, nan payloads included (a copy moves bits as they
are). Only numpy's float64 and float32 arrays of one dtype (no cast) and as many dimensions (three or
more), both C-contiguous (numpy's result is then C-contiguous too), where one operand is
broadcast along one axis between the first and the last and the other only along leading axes
(or not at all), with rows of 2 to ROW_MAX numbers and at least ELEMENTS_MIN elements in all;
anything else is the op as it is.
tests/test_broadcast_rows.py pins the bits against numpy itself."""
from __future__ import annotations

import math
import sys

from ..backend import np

ROW_MAX = 64                # (1000, 10, 64): 255 -> 195 µs; longer rows are numpy's long runs already
ELEMENTS_MIN = 1 << 12      # (100, 10, 8): 7.9 -> 4.6 µs; below, the checks cost what the copy saves


def forward(prim):
    """A replayed step's forward for a `broadcast_rows` entry (core/primitives.py) whose recorded
    arguments `fits`: `spread` with the entry's ufunc where the values still take it (a replay's
    inputs keep the recorded shapes, not always their layout), else the entry's own impl."""
    impl, name = prim.impl, prim.ufuncs[0]

    def step(x, y):
        numpy = np()
        if x.__class__ is numpy.ndarray and y.__class__ is numpy.ndarray:
            out = spread(getattr(numpy, name), x, y, numpy)
            if out is not None:
                return out
        return impl(x, y)
    step.__name__ = f"{name} across broadcast rows"
    return step


def fits(x, y) -> bool:
    """Whether `spread` takes x and y (numpy arrays of three or more dimensions, different shapes):
    what a trace asks of a step's recorded arguments, once, so that no other op pays a test."""
    numpy = sys.modules.get("numpy")            # (a trace of numbers loads no numpy for the question)
    return (numpy is not None and x.__class__ is numpy.ndarray and y.__class__ is numpy.ndarray
            and x.ndim > 2 and x.shape != y.shape and _plan(x, y) is not None)


def spread(ufunc, x, y, numpy):
    """ufunc(x, y) by a copy of the operand broadcast along a middle axis, or None where the op
    is not such a broadcast of short rows (see above)."""
    plan = _plan(x, y)
    if plan is None:
        return None
    spread_x, axis, count = plan
    if spread_x:
        copy = numpy.repeat(x, count, axis=axis)
        return ufunc(copy, y, out=copy)
    copy = numpy.repeat(y, count, axis=axis)
    return ufunc(x, copy, out=copy)


def _plan(x, y):
    """(whether x is the operand to copy out, the axis, the count) or None."""
    xs, ys = x.shape, y.shape
    if len(xs) != len(ys) or not 2 <= xs[-1] == ys[-1] <= ROW_MAX:
        return None
    shape = tuple(a if a > b else b for a, b in zip(xs, ys))
    if math.prod(shape) < ELEMENTS_MIN or x.dtype != y.dtype or x.dtype.char not in "df" \
            or not (x.flags.c_contiguous and y.flags.c_contiguous):
        return None
    for spread_x, own, other in ((True, xs, ys), (False, ys, xs)):
        axis = _middle_axis(own, shape)
        if axis is not None and _leading_only(other, shape):
            return spread_x, axis, shape[axis]
    return None


def times(a, b):
    """a * b, the mul VJP's product of an adjoint and an argument. Where one is a numpy array
    spread along its last axis (a reduction's adjoint restored as a stride-0 view: kmeans' sum
    over rows of 8) over rows of 2 to ROW_MAX, and the other a C-contiguous array of its shape
    and dtype, at least ELEMENTS_MIN elements: that one copied out (np.repeat) and the product
    taken into the copy, in the same operand order: numpy's bits, each array one run ((1000,
    100, 8) in fresh memory: 1.42 -> 1.17 ms). Shapes, strides and layout decide, which a traced
    rule's probes answer as fixed facts: a generated sweep writes the side it takes."""
    c = a.__class__
    if c is float or c is not b.__class__ or c is not np().ndarray:      # (numbers, boxes, other arrays)
        return a * b
    if a.size >= ELEMENTS_MIN and a.ndim > 1 and a.shape == b.shape:
        m = np()
        for spread_a, one, other in ((True, a, b), (False, b, a)):
            if one.strides[-1] == 0 and _copies(one, other):
                copy = m.repeat(one[..., :1], one.shape[-1], axis=-1)
                return m.multiply(copy, other, out=copy) if spread_a else m.multiply(other, copy, out=copy)
    return a * b


def _copies(one, other) -> bool:
    return (2 <= one.shape[-1] <= ROW_MAX and one.size >= ELEMENTS_MIN and one.dtype == other.dtype
            and one.dtype.char in "df" and other.flags.c_contiguous)


def _middle_axis(own, shape):
    """The one axis, neither the first nor the last, along which an operand of shape `own` is
    broadcast to `shape` (along the first, numpy's loop walks each row of the result once with
    the other operand's: (1000, 8) - (8,) was no quicker copied)."""
    axes = [i for i, (a, b) in enumerate(zip(own, shape)) if a != b]
    return axes[0] if len(axes) == 1 and 0 < axes[0] < len(shape) - 1 and own[axes[0]] == 1 else None


def _leading_only(own, shape) -> bool:
    """An operand of shape `own` is broadcast to `shape` along leading axes only (or not at all):
    its elements are one contiguous block per leading index."""
    lead = 0
    while lead < len(shape) and own[lead] == 1 and shape[lead] != 1:
        lead += 1
    return own[lead:] == shape[lead:]
