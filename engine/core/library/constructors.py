"""The constructors numpy code starts from: constants, never traced (zeros_like of a traced
value is a constant too), except a traced fill value of full/full_like, which every element
is. `dtype` is the array's float type (the language passes its working one)."""
from __future__ import annotations

from .. import ops
from ..backend import xp
from ..primitives import check_elements, shape
from ..sequences import is_sequence, sequence_array
from .axes import whole


def _dims(dims):
    return tuple(whole(d, "a dimension") for d in (dims if is_sequence(dims) else (dims,)))


def _float_dtype(like, dtype):
    if dtype is not None:
        return dtype
    found = getattr(ops.read(like), "dtype", None)
    return found if found is not None and found.kind == "f" else "float64"


def eye(N, M=None, k=0, dtype=None):
    rows = whole(N, "N")
    check_elements((rows, rows if M is None else whole(M, "M")), "eye()")
    return xp().eye(whole(N, "N"), None if M is None else whole(M, "M"), whole(k, "k"),
                    dtype=dtype or "float64")


def identity(n, dtype=None):
    check_elements((whole(n, "n"),) * 2, "identity()")
    return xp().identity(whole(n, "n"), dtype=dtype or "float64")


def full(shape, fill_value, dtype=None):           # noqa: F811 -- numpy's parameter name
    check_elements(_dims(shape), "full()")
    if isinstance(fill_value, (ops.Var, ops.Dual)):   # a traced fill: every element carries its derivative
        return ops.broadcast_to(fill_value, _dims(shape))
    return xp().full(_dims(shape), ops.read(fill_value), dtype=dtype or "float64")


def zeros_like(a, dtype=None):
    return xp().zeros(shape(a), dtype=_float_dtype(a, dtype)) if shape(a) else 0.0


def ones_like(a, dtype=None):
    return xp().ones(shape(a), dtype=_float_dtype(a, dtype)) if shape(a) else 1.0


def full_like(a, fill_value, dtype=None):
    if isinstance(fill_value, (ops.Var, ops.Dual)):   # a traced fill: every element carries its derivative
        return ops.broadcast_to(fill_value, shape(a)) if shape(a) else fill_value
    value = float(ops.read(fill_value))
    return xp().full(shape(a), value, dtype=_float_dtype(a, dtype)) if shape(a) else value


def asarray(object, dtype=None):
    """An array of the value, the value itself where it is one (numpy's asarray): traced values stay
    traced (a tuple of them is stacked)."""
    if is_sequence(object):
        return sequence_array(object, dtype)
    if isinstance(object, (ops.Var, ops.Dual)) or dtype is None:
        return object if not isinstance(object, (int, bool)) else float(object)
    raw = xp().asarray(object, dtype=dtype)
    return float(raw) if raw.ndim == 0 else raw


def array(object, dtype=None):
    """numpy's array: asarray's, as a copy with its own memory where the value is an array (a write
    into the one does not reach the other, lang/aliases.py)."""
    out = asarray(object, dtype)
    return copy(out) if out is object else out


def copy(a):
    """numpy's copy (`np.copy(a)`, `a.copy()`): a's values in memory of their own, derivatives and
    all (a box: a * 1.0, exact for every float, recorded as such); a number as it is."""
    if isinstance(a, (ops.Var, ops.Dual)):
        return ops.mul(a, 1.0)
    return a.copy() if hasattr(a, "copy") and hasattr(a, "shape") else a
