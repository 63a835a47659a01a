"""Reductions over axes as numpy takes them: `axis=` a number or a tuple of numbers, and
`keepdims=`. The core ops reduce over one axis or a tuple; this module checks the axes, keeps
the reduced dimensions as ones where asked, and builds prod over axes from products of slices
(each an engine op, so every order of derivative follows)."""
from __future__ import annotations

import math

from ...parser.errors import SourceError
from ..core import ops
from .values import describe, shape_of


def whole_axis(axis):
    """One axis as an int (None stays None)."""
    if axis is None:
        return None
    a = ops.read(axis)                  # an axis read from a traced value: no trace is kept
    if isinstance(a, bool) or not isinstance(a, (int, float)) or a != a or abs(a) == math.inf or int(a) != a:
        raise SourceError("type error", f"an axis must be a whole number, not {describe(axis)}")
    return int(a)


def checked_axis(name, x, axis):
    """An axis of a reduction, checked against x's dimensions as numpy does (a number has none)."""
    ax = whole_axis(axis)
    if ax is not None:
        n = len(shape_of(x))
        if not -n <= ax < n:
            what = "a number" if n == 0 else f"an array of {n} dimension{'s' if n > 1 else ''}"
            hint = (f"for the {'larger' if name == 'max' else 'smaller'} of two numbers write {name}(a, b), "
                    "without axis=") if name in ("max", "min") and n == 0 else None
            raise SourceError("index error", f"{name}(): axis {ax} is out of bounds for {what}", None, hint)
    return ax


def reduction_axes(name, x, axis):
    """None, one int axis (as the core ops have always been given), or a sorted tuple of
    non-negative axes, each checked once."""
    value = ops.read(axis)
    if not isinstance(value, tuple):
        return checked_axis(name, x, axis)
    ndim = len(shape_of(x))
    axes = [checked_axis(name, x, a) % max(ndim, 1) for a in value]
    if len(set(axes)) != len(axes):
        raise SourceError("value error", f"{name}(): an axis is repeated in {tuple(axes)}")
    return tuple(sorted(axes))


def kept_shape(shape, axes):
    """The shape of a reduction with keepdims: the reduced axes as ones."""
    if axes is None:
        return (1,) * len(shape)
    reduced = {a % len(shape) for a in ((axes,) if isinstance(axes, int) else axes)}
    return tuple(1 if i in reduced else n for i, n in enumerate(shape))


def keep_dims(result, x, axes, keepdims):
    if not ops.read(keepdims) or not shape_of(x):
        return result
    return ops.reshape(result, kept_shape(shape_of(x), axes))


def reduced_count(x, axes):
    """How many elements each result of a reduction over `axes` gathers."""
    shape = shape_of(x)
    if axes is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in ((axes,) if isinstance(axes, int) else axes))
