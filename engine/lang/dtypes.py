"""numpy's dtypes as programs write them: `dtype=float`, `dtype=np.float64`, `dtype=int`,
`dtype=bool`, `dtype=complex`, `dtype=x.dtype`, `.astype(...)`. The language computes in one
float type (float64, or float32 under the run's dtype setting) and the complex type that pairs
with it; numpy's integers are its whole numbers (floats, as `x.astype(int)` makes them: a step
function, derivative 0; integer data stays integers) and numpy's booleans are its booleans.
Each spelling is read to a DType value (lang/values.py) of one of those four kinds, and `cast`
is the one conversion that astype() and every constructor's dtype= apply."""
from __future__ import annotations

from ...parser.errors import SourceError, option
from ..core import ops
from ..core.backend import xp
from ..core.complexes import as_complex_number, complex_dtype, is_complex
from ..core.tape import BOXES, strip
from .callables import Builtin
from .values import DType, canonical_dtype, describe, dtype, is_integer_input

# numpy's type objects the language names (`np.float64`, or `float64` alone), by numpy's kind letter;
# `bool` is Python's and numpy 2's np.bool
TYPES = {name: DType(name, kind) for name, kind in (
    ("float64", "f"), ("float32", "f"), ("int64", "i"), ("bool_", "b"), ("bool", "b"),
    ("complex128", "c"), ("complex64", "c"))}
SPELLINGS = "float, int, bool, complex, np.float64, np.int64, np.complex128 or x.dtype"


def read(spec, who: str) -> DType:
    """The DType a program's dtype argument names; anything else is a type error naming `who`."""
    if isinstance(spec, DType):
        return spec
    if isinstance(spec, Builtin) and canonical_dtype(spec.name) in TYPES:     # Python's float, int, complex, bool
        return TYPES[canonical_dtype(spec.name)]
    if isinstance(spec, str) and canonical_dtype(spec) in TYPES:    # numpy's names: dtype='float64', 'f8'
        return TYPES[canonical_dtype(spec)]
    if isinstance(spec, str):
        raise SourceError("type error", f"{who}: dtype {spec!r} is not one the language has", None,
                          f"write {SPELLINGS}, or their names ('float64', 'int64', 'bool', 'complex128')")
    raise SourceError("type error", f"{who}: dtype must be a type numpy takes, not {describe(spec)}",
                      None, f"write {SPELLINGS}")


def spelled_kind(name: str) -> str | None:
    """numpy's kind letter of a dtype written as a name (`float`, `int64`), as a float64 run
    reads it; None for float32 and complex64 and for any other name (emit's reading of astype's
    argument, which it writes without running the program)."""
    dt = TYPES.get(canonical_dtype(name))
    return None if dt is None or dt.name in ("float32", "complex64") else dt.kind


def kind_of(spec, who: str) -> str:
    """numpy's kind letter of a dtype argument ('f', 'i', 'b', 'c'), refusing the types the run
    does not compute in: float32 (complex64) in a float64 run. float64 in a float32 run is the
    run's float, as JAX reads it without 64-bit mode."""
    dt = read(spec, who)
    if dt.name in ("float32", "complex64") and dtype() == "float64":
        raise SourceError("type error", f"{who}: dtype={dt.name} in a float64 run: a run computes in one "
                          "float type", None, f"write dtype=float, or run the whole program in float32 "
                          f"({option('dtype_name')} float32)")
    return dt.kind


def dtype_of(v) -> DType:
    """`x.dtype`: numpy's type of the value as the run holds it."""
    raw = strip(v)
    found = getattr(raw, "dtype", None)
    if raw.__class__ is bool or (found is not None and found.kind == "b"):
        return TYPES["bool"]
    if is_integer_input(raw):
        return TYPES["int64"]
    if is_complex(raw):
        return TYPES[complex_dtype(dtype())]
    return TYPES[dtype()]


def cast(x, spec, who: str):
    """x as numpy's `x.astype(spec)`, in the run's types: a float type keeps the value and its
    derivative; int truncates toward zero (derivative 0; integer data stays as it is); bool is
    x != 0 (no derivative); complex adds 0j (derivative as of x)."""
    kind = kind_of(spec, who)
    if kind in "fi" and is_complex(x):
        raise SourceError("type error", f"{who}: casting complex values to a real type would drop "
                          "their imaginary part", None, "write x.real (or abs(x)) for the real number wanted")
    if kind == "b":
        return ops.ne(x, 0.0) if isinstance(x, BOXES) else _constant(xp().asarray(x) != 0)
    if kind == "c":
        if is_complex(x):
            return x
        if isinstance(x, BOXES):
            return ops.add(x, as_complex_number(0j, dtype()))
        return _constant(xp().asarray(x, dtype=complex_dtype(dtype())))
    if is_integer_input(x):
        return x if kind == "i" else xp().asarray(x, dtype=dtype())
    if isinstance(x, BOXES):
        return ops.trunc(x) if kind == "i" else x
    made = xp().asarray(x, dtype=dtype())
    return _constant(xp().trunc(made) if kind == "i" else made)


def _constant(a):
    """A cast constant as the language holds one: a 0-d float64 as a Python float, a 0-d bool as
    a Python bool, any other 0-d array as numpy's scalar."""
    if a.ndim:
        return a
    if a.dtype.kind == "b":
        return bool(a)
    return float(a) if a.dtype.name == "float64" else a[()]
