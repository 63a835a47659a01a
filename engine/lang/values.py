"""What values the language has, and the helpers that look at them without unboxing by hand."""
from __future__ import annotations

import math

from ...parser.errors import SourceError
from ..core import ops
from ..core.backend import is_array, np, to_host, xp
from ..core.complexes import as_complex_number, complex_dtype, is_complex
from ..core.numbers import is_whole
from ..core.primitives import run_dtype
from ..core.primitives import shape as shape_of, size as size_of  # noqa: F401 -- the one shape helper
from ..core.tape import Dual, Var, strip
from .aliases import note_rows
from .callables import Builtin, UserFunction

_dtype = ["float64"]


def set_dtype(name: str) -> None:
    if name not in ("float64", "float32"):
        raise ValueError(f"dtype must be float64 or float32, not {name!r}")
    _dtype[0] = name
    run_dtype[0] = name


def dtype() -> str:
    return _dtype[0]


def literal(v):
    """A number literal in the working dtype, converted once when it is compiled. In float32 a
    literal that float32 cannot hold exactly becomes float32 (0.1 rounds, 1e39 overflows to inf);
    the others stay Python numbers: the same value in either dtype, and usable as indices."""
    if v.__class__ is complex:                  # 2j: a numpy scalar, which no float fast path takes
        return as_complex_number(v, _dtype[0])
    if _dtype[0] == "float64" or v.__class__ not in (float, int):
        return v
    single = np().float32(v)
    return v if float(single) == v else single


def range_arguments(args) -> list | None:
    """[start, stop, step] of range(*args) as the builtin range() takes them (a 0-d array or a
    box counts as its number), or None where an argument is not a whole number. The one reading
    of range()'s arguments: the builtin and a replay's trip-count guard must agree on it."""
    ints = []
    for a in args:
        v = strip(a)
        if is_array(v) and v.ndim == 0:
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or abs(v) == math.inf or int(v) != v:
            return None
        ints.append(int(v))
    if len(ints) == 1:
        return [0, ints[0], 1]
    return ints + [1] if len(ints) == 2 else ints


def range_key(*args):
    """(start, length, step) of range(*args) as the builtin range() makes it, the items a loop
    over it binds; None where range() refuses the arguments: what a trip-count guard compares."""
    ints = range_arguments(args)
    if ints is None or ints[2] == 0:
        return None
    items = range(*ints)
    return items.start, len(items), items.step


def range_items(raw) -> tuple | None:
    """range_key of a tuple of arguments: how a recording run reads range()'s (core/tape.py's
    `read`, its guard on the replayed values)."""
    return range_key(*raw)


class DType:
    """numpy's type objects as values of the language (`np.float64`, `np.int64`, `bool`, `x.dtype`):
    what `dtype=` and `.astype()` take (lang/dtypes.py reads them). Only the name and numpy's kind
    letter ('f', 'i', 'b', 'c'): no Python type is exposed, nothing is called."""
    __slots__ = ("name", "kind")

    def __init__(self, name, kind):
        self.name, self.kind = name, kind

    def __repr__(self):
        return f"dtype('{self.name}')"

    def __eq__(self, other):
        """numpy's dtype equality: `x.dtype == float`, `== np.float64`, `== 'float64'` are the same
        test; np.bool_ and bool are one type (a Builtin compares by its name: float, int, complex)."""
        name = getattr(other, "name", other)
        if not isinstance(name, str):
            return NotImplemented
        return canonical_dtype(self.name) == canonical_dtype(name)

    def __hash__(self):
        return hash(canonical_dtype(self.name))


# the names numpy reads as one dtype: Python's types and numpy 2's spellings of bool
_SAME_TYPE = {"bool_": "bool", "float": "float64", "int": "int64", "complex": "complex128", "double": "float64",
              "f8": "float64", "f4": "float32", "i8": "int64", "c16": "complex128", "c8": "complex64", "?": "bool"}


def canonical_dtype(name: str) -> str:
    """numpy's name of the dtype a spelling names (`float`, `'f8'`, `np.bool_`: float64, float64, bool);
    the language's one table of them (lang/dtypes.py reads dtype= and astype's argument by it)."""
    return _SAME_TYPE.get(name, name)


class RangeValue:
    """The value of range(...): only a for loop takes it."""
    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def is_integer_input(v) -> bool:
    """Whether an input value is integer data (class labels, indices): an array of integers with
    at least one axis (a numpy array, an .npy of ints). It stays integers in the run, a constant
    that is never differentiated. A Python int, a list of them, or a 0-d array is a number."""
    v = strip(v)
    kind = getattr(getattr(v, "dtype", None), "kind", None)
    return kind is not None and kind in "iu" and getattr(v, "ndim", 0) > 0


def floats_only(values) -> bool:
    """Every value a Python float or an array of floats: no integer data, nothing complex (the
    per-call test that lets a call skip the integer-data and defaulted-parameter variants)."""
    for v in values:
        if v.__class__ is not float and getattr(getattr(v, "dtype", None), "kind", None) != "f":
            return False
    return True


def integer_inputs(values: dict) -> list:
    """The names of the inputs given integer data, in order: they have no derivative."""
    return [name for name, v in (values or {}).items() if is_integer_input(v)]


def as_input(v):
    """An input value in the working dtype: floats stay Python floats (the fast path) in float64.
    Integer data (is_integer_input) stays an array of integers; complex values take the complex
    dtype that pairs with the working one (complex128 with float64, complex64 with float32)."""
    v = strip(v)
    if _dtype[0] == "float64":                  # the per-call fast paths: a number, a float array
        if v.__class__ is float:
            return v
        if getattr(getattr(v, "dtype", None), "kind", None) == "f":
            a = xp().asarray(v, dtype=xp().float64)
            return float(a) if a.ndim == 0 else a
    if is_integer_input(v):
        return xp().asarray(v)
    if is_complex(v):
        a = xp().asarray(v, dtype=complex_dtype(dtype()))
        return a[()] if a.ndim == 0 else a
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
    if isinstance(v, (Var, Dual)):
        v = strip(v)
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, complex):
        return "a complex number"
    if isinstance(v, tuple):
        return f"a tuple of {len(v)}"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    if isinstance(v, dict):
        return f"a dict of {len(v)}"
    if isinstance(v, (UserFunction, Builtin)):
        return "a function"
    if is_array(v):
        return "a number" if v.ndim == 0 else f"an array of shape {tuple(v.shape)}"
    if v is None:
        return "nothing (a function without return?)"
    if isinstance(v, RangeValue):
        return "a range (use it in a for loop)"
    if isinstance(v, DType):
        return f"the dtype {v.name}"
    return type(v).__name__


def to_python(v):
    """A value as plain Python data (floats and nested lists) for JSON and tests."""
    v = to_host(strip(v))
    if isinstance(v, (tuple, list)):
        return [to_python(x) for x in v]
    if isinstance(v, (bool, int, float)):
        return float(v) if not isinstance(v, bool) else v
    if is_array(v):
        a = np().asarray(v)
        if a.dtype == np().float32:            # shortest float32 digits: 0.1, not 0.10000000149011612
            shortest = [float(str(f)) for f in a.ravel()]         # str of a float32 scalar: its shortest digits
            return np().array(shortest).reshape(a.shape).tolist() if a.ndim else shortest[0]
        if a.dtype == np().complex64:          # each part's shortest float32 digits
            shortest = [complex(float(str(f.real)), float(str(f.imag))) for f in a.ravel()]
            return np().array(shortest).reshape(a.shape).tolist() if a.ndim else shortest[0]
        return a.tolist()
    return v


def truth(v, span, what="condition"):
    """A value as a branch decision; arrays of several elements are ambiguous, as in numpy."""
    c = v.__class__
    if c is bool:
        return v
    if c is float:
        return v != 0.0
    if c is Var or c is Dual:               # a traced value's truth: read as a number (a guard)
        return ops.read(v, _Truth(span, what), "truth")
    if v.__class__ in (bool, float, int):
        return bool(v)
    if is_array(v):
        if v.size == 1:
            return bool(v.reshape(()))
        raise SourceError("ambiguous condition", f"the {what} is an array of shape {tuple(v.shape)}; "
                          "an array of several elements is neither true nor false", span,
                          "use any(...) or all(...) to say which you mean")
    if isinstance(v, RangeValue) or v is None or isinstance(v, (UserFunction, Builtin, tuple)):
        raise SourceError("type error", f"the {what} is {describe(v)}, not a number", span)
    return bool(v)


class _Truth:
    """A value's truth as `truth` takes it, on raw values (the guard of a traced value's)."""
    __slots__ = ("span", "what")

    def __init__(self, span, what):
        self.span, self.what = span, what

    def __call__(self, raw):
        return truth(raw, self.span, self.what)


def as_int(v, span, what="an index"):
    """A whole number as an index, a slice bound or a count; a traced value is read as a number
    (its guard compares the whole number it gives)."""
    if v.__class__ is Var or v.__class__ is Dual:
        return ops.read(v, lambda raw: _whole_number(raw, span, what))
    return _whole_number(v, span, what)


def _whole_number(v, span, what):
    v = strip(v)
    if is_array(v) and v.ndim == 0:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SourceError("type error", f"{what} must be a whole number, not {describe(v)}", span)
    if not is_whole(v):
        raise SourceError("type error", f"{what} must be a whole number, not {v!r}", span)
    return int(v)


def raw_getitem(v, index):
    """v[index] of an unboxed array; a float64 element as a Python float (the fast path)."""
    r = v[index]
    return float(r) if r.__class__ is np().float64 else r


def iterate(seq, span):
    """The items a for loop takes from a range, a tuple or an array (its rows)."""
    if isinstance(seq, RangeValue):
        return map(float, range(seq.start, seq.stop, seq.step))
    shp = shape_of(seq)
    if isinstance(seq, (tuple, list)):
        return iter(seq)
    if seq.__class__ is dict:                       # for k in params: its keys, in order
        return iter(list(seq))
    if not shp:
        raise SourceError("type error", f"cannot loop over {describe(seq)}", span,
                          "loop over range(n) or over an array")
    note_rows(seq)                                  # each row a view of seq's memory (lang/aliases.py)
    if seq.__class__ in (Var, Dual):
        return (ops.getitem(seq, i) for i in range(shp[0]))
    return (raw_getitem(seq, i) for i in range(shp[0]))

