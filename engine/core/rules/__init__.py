"""THE derivative table, one module per group of primitives (each entry's forward, VJP and JVP
stand together; see core/primitives.py). The groups build on each other in this order, so no
module imports one after it: shapes, joins, comparisons, complexes, arithmetic, elementwise, reductions,
numeric, scans, special, linalg, factorizations, fft (indexing builds on shapes only).

Kink conventions (README, "Conventions: non-differentiable points, complex numbers") are declared on the entries
(`Primitive.kink`): abs'(0)=0, relu'(0)=0, sign'=0, ties in max/min/maximum/minimum split the
gradient evenly, comparisons carry no gradient, sqrt'(0)=+inf, norm of a zero vector and hypot at
the origin have gradient 0. Each kink or tie evaluated is noted with its source span.

Every primitive has a rule for each differentiable argument or is declared nondiff;
tests/test_rules.py walks TABLE and fails on a primitive that has neither.
"""
from __future__ import annotations

from ..primitives import TABLE, Primitive
from ..tape import Dual, Var
from . import arithmetic, comparisons, complexes, elementwise, indexing, reductions, shapes
from . import joins, linalg, numeric, scans, special  # noqa: F401 -- imported to fill the table
from . import factorizations  # noqa: F401 -- after linalg, whose inv it uses
from . import fft  # noqa: F401 -- np.fft's transforms

__all__ = ["TABLE", "Primitive", "builtin_primitives"]


def builtin_primitives() -> list:
    """The primitives the language exposes as builtins under their own names."""
    return [prim for prim in TABLE.values() if prim.builtin]


def _install_operators(cls):
    # numpy must not treat a box as an object to broadcast over (`array * Var` would become an
    # object array of Vars): None makes ndarray's operators defer to the box's reflected ones.
    cls.__array_ufunc__ = None
    add, sub, mul, div, neg = arithmetic.add, arithmetic.sub, arithmetic.mul, arithmetic.div, arithmetic.neg
    matmul, power, getitem = arithmetic.matmul, elementwise.pow, shapes.getitem
    lt, le, gt, ge, eq, ne = (comparisons.lt, comparisons.le, comparisons.gt, comparisons.ge,
                              comparisons.eq, comparisons.ne)
    cls.__add__ = lambda a, b: add(a, b)
    cls.__radd__ = lambda a, b: add(b, a)
    cls.__sub__ = lambda a, b: sub(a, b)
    cls.__rsub__ = lambda a, b: sub(b, a)
    cls.__mul__ = lambda a, b: mul(a, b)
    cls.__rmul__ = lambda a, b: mul(b, a)
    cls.__truediv__ = lambda a, b: div(a, b)
    cls.__rtruediv__ = lambda a, b: div(b, a)
    cls.__pow__ = lambda a, b: power(a, b)
    cls.__rpow__ = lambda a, b: power(b, a)
    cls.__matmul__ = lambda a, b: matmul(a, b)
    cls.__rmatmul__ = lambda a, b: matmul(b, a)
    cls.__neg__ = lambda a: neg(a)
    cls.__pos__ = lambda a: a
    cls.__lt__ = lambda a, b: lt(a, b)
    cls.__le__ = lambda a, b: le(a, b)
    cls.__gt__ = lambda a, b: gt(a, b)
    cls.__ge__ = lambda a, b: ge(a, b)
    cls.__eq__ = lambda a, b: eq(a, b)
    cls.__ne__ = lambda a, b: ne(a, b)
    cls.__hash__ = object.__hash__
    cls.__getitem__ = lambda a, i: getitem(a, i)


# The rules compute on boxes with Python's operators (`g * y`): installed as soon as the table is.
_install_operators(Var)
_install_operators(Dual)
