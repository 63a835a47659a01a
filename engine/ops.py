"""The closed set of engine ops: one function per primitive of the rules table, plus the few
composites built from them. Raw values (floats, arrays) go straight to the forward rule; boxed
values go through `bind`, which records them. Operators on boxes are installed here too.
"""
from __future__ import annotations

from . import rules as R
from .backend import xp
from .tape import Dual, Var, bind, strip

__all__ = ["Var", "Dual", "strip"]


def _op1(prim):
    impl = prim.impl

    def op(x):
        c = x.__class__
        if c is Var or c is Dual:
            return bind(prim, (x,), None)
        return impl(x)
    op.__name__ = prim.name
    return op


def _op2(prim):
    impl = prim.impl

    def op(x, y):
        cx, cy = x.__class__, y.__class__
        if cx is Var or cx is Dual or cy is Var or cy is Dual:
            return bind(prim, (x, y), None)
        return impl(x, y)
    op.__name__ = prim.name
    return op


def _opn(prim):
    def op(*args, **params):
        return bind(prim, args, params or None)
    op.__name__ = prim.name
    return op


add, sub, mul, div, pow, matmul = (_op2(p) for p in (R.ADD, R.SUB, R.MUL, R.DIV, R.POW, R.MATMUL))
maximum, minimum, share = _op2(R.MAXIMUM), _op2(R.MINIMUM), _op2(R.SHARE)
lt, le, gt, ge, eq, ne = (_op2(p) for p in (R.LT, R.LE, R.GT, R.GE, R.EQ, R.NE))
neg = _op1(R.NEG)
(sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, exp, log, log2, log10, sqrt,
 abs, sign, step, relu, sigmoid, softplus, floor, prod, norm, prod_except, transpose) = (
    _op1(p) for p in (R.SIN, R.COS, R.TAN, R.ARCSIN, R.ARCCOS, R.ARCTAN, R.SINH, R.COSH, R.TANH,
                      R.EXP, R.LOG, R.LOG2, R.LOG10, R.SQRT, R.ABS, R.SIGN, R.STEP, R.RELU,
                      R.SIGMOID, R.SOFTPLUS, R.FLOOR, R.PROD, R.NORM, R.PROD_EXCEPT, R.TRANSPOSE))
_where = _opn(R.WHERE)
_stack = _opn(R.STACK)


def where(c, x, y):
    return _where(c, x, y)


def stack(items):
    return _stack(*items)


def sum(x, axis=None):
    return bind(R.SUM, (x,), {"axis": axis} if axis is not None else None) if axis is not None \
        else (bind(R.SUM, (x,), None) if x.__class__ in (Var, Dual) else R.SUM.impl(x))


def max(x, axis=None):
    return bind(R.MAX, (x,), {"axis": axis} if axis is not None else None)


def min(x, axis=None):
    return bind(R.MIN, (x,), {"axis": axis} if axis is not None else None)


def reshape(x, shape):
    return bind(R.RESHAPE, (x,), {"shape_": tuple(shape)})


def expand_dims(x, axis):
    return bind(R.EXPAND_DIMS, (x,), {"axis": axis})


def broadcast_to(x, shape):
    return bind(R.BROADCAST_TO, (x,), {"shape_": tuple(shape)})


def sum_to(x, shape):
    return bind(R.SUM_TO, (x,), {"shape_": tuple(shape)})


def getitem(x, index):
    return bind(R.GETITEM, (x,), {"index": index})


def untake(g, index, shape):
    return bind(R.UNTAKE, (g,), {"index": index, "shape_": tuple(shape)})


def zeros_like(x):
    v = strip(x)
    return 0.0 if v.__class__ is float else xp().zeros_like(v)


def stop_gradient(x):
    """Cut the tape: the value, with no history at any level (the seeds' detach())."""
    return strip(x)


# ---- operators on boxes -----------------------------------------------------------------------

def _install(cls):
    # numpy must not treat a box as an object to broadcast over (`array * Var` would become an
    # object array of Vars): None makes ndarray's operators defer to the box's reflected ones.
    cls.__array_ufunc__ = None
    cls.__add__ = lambda a, b: add(a, b)
    cls.__radd__ = lambda a, b: add(b, a)
    cls.__sub__ = lambda a, b: sub(a, b)
    cls.__rsub__ = lambda a, b: sub(b, a)
    cls.__mul__ = lambda a, b: mul(a, b)
    cls.__rmul__ = lambda a, b: mul(b, a)
    cls.__truediv__ = lambda a, b: div(a, b)
    cls.__rtruediv__ = lambda a, b: div(b, a)
    cls.__pow__ = lambda a, b: pow(a, b)
    cls.__rpow__ = lambda a, b: pow(b, a)
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


_install(Var)
_install(Dual)
