"""What values the language has, and the helpers that look at them without unboxing by hand."""
from __future__ import annotations

from ..core.backend import is_array, np, xp
from ..core.primitives import shape as shape_of, size as size_of  # noqa: F401 -- the one shape helper
from ..core.tape import Dual, Var, strip

_dtype = ["float64"]


def set_dtype(name: str) -> None:
    if name not in ("float64", "float32"):
        raise ValueError(f"dtype must be float64 or float32, not {name!r}")
    _dtype[0] = name


def dtype() -> str:
    return _dtype[0]


def as_input(v):
    """An input value in the working dtype: floats stay Python floats (the fast path) in float64."""
    v = strip(v)
    if dtype() == "float64":
        if v.__class__ in (float, int, bool):
            return float(v)
        a = xp().asarray(v, dtype=xp().float64)
        return float(a) if a.ndim == 0 else a
    m = xp()
    a = m.asarray(v, dtype=m.float32)
    return a[()] if a.ndim == 0 else a


def describe(v) -> str:
    """A short description for messages: 'a number', 'an array of shape (3,)', 'a function'."""
    from .runtime import Builtin, UserFunction
    if isinstance(v, (Var, Dual)):
        v = strip(v)
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, tuple):
        return f"a tuple of {len(v)}"
    if isinstance(v, (UserFunction, Builtin)):
        return "a function"
    if is_array(v):
        return "a number" if v.ndim == 0 else f"an array of shape {tuple(v.shape)}"
    if v is None:
        return "nothing (a function without return?)"
    if type(v).__name__ == "RangeValue":
        return "a range (use it in a for loop)"
    return type(v).__name__


def to_python(v):
    """A value as plain Python data (floats and nested lists) for JSON and tests."""
    from ..core.backend import to_host
    v = to_host(strip(v))
    if isinstance(v, tuple):
        return [to_python(x) for x in v]
    if isinstance(v, (bool, int, float)):
        return float(v) if not isinstance(v, bool) else v
    if is_array(v):
        a = np().asarray(v)
        if a.dtype == np().float32:            # shortest float32 digits: 0.1, not 0.10000000149011612
            shortest = [float(str(f)) for f in a.ravel()]         # str of a float32 scalar: its shortest digits
            return np().array(shortest).reshape(a.shape).tolist() if a.ndim else shortest[0]
        return a.tolist()
    return v
