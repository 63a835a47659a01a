"""Axis arguments as numpy reads them (an int, a tuple of ints, None; negative counts from the
end), and the one gather that every rearranging function is made of."""
from __future__ import annotations


from .. import ops
from ..errors import EngineError
from ..backend import xp
from ..primitives import ndim, shape, size


class ArgumentError(EngineError):
    """An argument numpy would refuse (a ValueError there): the language locates it."""

    def __init__(self, message: str):
        super().__init__("value error", message)


def whole(value, what):
    """A whole number given as an int or an integral float (the language's numbers are floats)."""
    v = ops.read(value)
    if hasattr(v, "ndim") and v.ndim == 0:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")) \
            or int(v) != v:
        raise TypeError(f"{what} must be a whole number, not {v!r}")
    return int(v)


def flag(value, what):
    """A truth value given to a function (rowvar, bias, hermitian): a bool or a number, not an array."""
    v = ops.read(value)
    if hasattr(v, "ndim") and v.ndim == 0:
        v = v.item()
    if not isinstance(v, (bool, int, float)):
        raise ArgumentError(f"{what} must be True or False, not {v!r}")
    return bool(v)


def one_axis(axis, dims):
    """One axis, made non-negative and checked against the dimensions."""
    a = whole(axis, "an axis")
    if not -dims <= a < dims:
        raise IndexError(f"axis {a} is out of bounds for an array of {dims} dimension{'s' if dims != 1 else ''}")
    return a + dims if a < 0 else a


def axes_of(axis, dims):
    """None, or a sorted tuple of distinct non-negative axes (one axis or several)."""
    if axis is None:
        return None
    items = tuple(axis) if isinstance(ops.read(axis), (tuple, list)) else (axis,)
    out = tuple(sorted({one_axis(a, dims) for a in items}))
    if len(out) != len(items):
        raise ArgumentError("an axis appears twice in the axis argument")
    return out


def keep_dims(result, x, axes):
    """A reduction's result with the reduced axes kept as length 1 (numpy's keepdims=True)."""
    if axes is None:
        return ops.reshape(result, (1,) * ndim(x))
    return ops.expand_dims(result, axes)


def reduced_count(x, axes):
    """How many elements each result of a reduction over axes combines."""
    if axes is None:
        return size(x)
    count = 1
    for a in axes:
        count *= shape(x)[a]
    return count


def axes_last(x, axes):
    """x with the given axes moved to the end and merged into one (the reduction becomes one
    over axis -1)."""
    rest = tuple(a for a in range(ndim(x)) if a not in axes)
    moved = ops.permute_dims(x, rest + tuple(axes)) if rest + tuple(axes) != tuple(range(ndim(x))) else x
    return ops.reshape(moved, tuple(shape(x)[a] for a in rest) + (-1,))


def gathered(x, positions_of):
    """x rearranged the way positions_of rearranges an array of positions: a getitem of the
    flattened x, so the gradient scatters back through the permutation or the copies."""
    positions = positions_of(xp().arange(size(x)).reshape(shape(x)))
    return ops.getitem(x if ndim(x) == 1 else ops.reshape(x, (-1,)), positions)
