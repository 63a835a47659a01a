"""Complex numbers: the one place that says what is complex, which complex dtype pairs with the
run's float dtype (float64 with complex128, float32 with complex64, as numpy promotes), and the
error for an ordering of complex values (comparisons, max/min: numpy orders complex numbers
lexicographically, mathematics does not order them at all).

The derivative convention (README, "Complex numbers"): every rule of the table is the plain
transpose of its real-linear derivative (for a holomorphic f, g * f'(z), the rule real numbers
already have), so the reverse sweep of a real output L gives dL/dx - i dL/dy at z = x + iy
(2 dL/dz, JAX's convention); the gradient reported is its conjugate, dL/dx + i dL/dy (PyTorch's
convention: 2z for |z|^2). A real value that meets a complex adjoint (x * 1j) takes its real part.
"""
from __future__ import annotations

from .backend import np
from .errors import EngineError
from .tape import strip

COMPLEX_OF = {"float64": "complex128", "float32": "complex64"}


def is_complex(v) -> bool:
    """Whether v (a number, an array or a box of one) holds complex values."""
    v = strip(v)
    if v.__class__ is complex:
        return True
    kind = getattr(getattr(v, "dtype", None), "kind", None)
    return kind == "c"


def is_complex_scalar(v) -> bool:
    """Whether v is one complex number (Python's, or a numpy complex scalar as a run's 0-d
    complex values are), not an array of them."""
    return isinstance(v, (complex, np().complexfloating))


def complex_dtype(real_dtype: str) -> str:
    """The complex dtype that pairs with a float dtype's name."""
    return COMPLEX_OF[str(real_dtype)]


def as_complex_number(v, real_dtype: str):
    """A Python complex as a numpy scalar of the run's complex dtype (a box-free value that no
    float fast path mistakes for a float)."""
    return np().dtype(complex_dtype(real_dtype)).type(v)


def point_value(v):
    """A value of a point as numpy holds it: a number, or an array of float64, of complex128 (a
    complex number a numpy complex scalar, as a run's are) where it is complex: its imaginary
    part kept (emit's examples and `emit --validate` run the point so, issue 32 item 2); integer
    data (an array of ints: labels, indices) stays integer, a constant of the run (issue 31)."""
    numpy = np()
    if is_integer_data(v):
        return numpy.asarray(v)
    if is_complex(v):
        return numpy.asarray(v, dtype=complex) if numpy.ndim(v) else numpy.complex128(v)
    return numpy.asarray(v, dtype=float) if numpy.ndim(v) else float(v)


def is_integer_data(v) -> bool:
    """Whether a value of a point is integer data: a numpy array or numpy scalar of integers."""
    return isinstance(v, (np().ndarray, np().integer)) and v.dtype.kind in "iu"


def refuse_ordering(what: str, *values) -> None:
    """Raise for an ordering (a comparison, max, min, sort) of complex values."""
    if any(is_complex(v) for v in values):
        raise EngineError("complex ordering",
                          f"{what} of complex values: complex numbers have no order; "
                          "compare real(z), imag(z) or abs(z) instead")


def wirtinger(gradient):
    """(df/dz, df/dz̄) of a real f at a complex z from its reported gradient g = df/dx + i df/dy:
    df/dz = (df/dx - i df/dy) / 2 = conj(g) / 2 (JAX's grad is 2 df/dz = conj(g)), df/dz̄ = g / 2."""
    g = np().asarray(gradient)
    return np().conj(g)[()] / 2, g[()] / 2
