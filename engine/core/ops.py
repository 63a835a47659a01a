"""The closed set of engine ops: one function per primitive of the rules table, plus the few
composites built from them. Raw values (floats, arrays) go straight to the forward rule; boxed
values go through `bind`, which records them. Operators on boxes are installed here too.
"""
from __future__ import annotations

import operator

from . import rules as R
from .backend import xp
from .tape import Dual, Var, bind, record, strip

__all__ = ["Var", "Dual", "strip"]


# Python's own operators for floats, where they agree exactly with the forward rule (the fast path
# of a scalar loop skips one call per op). Division is not here: 1.0/0.0 raises in Python.
_FLOAT_IMPL = {R.ADD: operator.add, R.SUB: operator.sub, R.MUL: operator.mul, R.NEG: operator.neg}


def _op1(prim):
    impl = prim.impl
    if prim.nondiff or prim.vjps[0] is None:
        def op(x):
            c = x.__class__
            if c is Var or c is Dual:
                return bind(prim, (x,), None)
            return impl(x)
        op.__name__ = prim.name
        return op
    fimpl = _FLOAT_IMPL.get(prim, impl)

    def op(x):
        c = x.__class__
        if c is Var:
            xv = x.value
            if xv.__class__ is float:           # fast path: one reverse level over a float
                return record(prim, x.tape, x.level, ((0, x.index),), (xv,), fimpl(xv))
            return bind(prim, (x,), None)
        if c is Dual:
            return bind(prim, (x,), None)
        return fimpl(x) if c is float else impl(x)
    op.__name__ = prim.name
    return op


# The most elements an array op may create (--max-elements), set by the interpreter for a run.
# Checked before numpy allocates, on the array paths only: scalars never pay for it.
element_limit = [None]


def _check_result_size(prim, x, y):
    limit = element_limit[0]
    if limit is None:
        return
    sx, sy = R.shape(x), R.shape(y)
    if not sx or not sy:
        return                                  # a scalar with an array: no larger than the array
    if prim is R.MATMUL:
        shape = tuple(sx[:-1]) + tuple(sy[1:]) if len(sy) > 1 else tuple(sx[:-1])
    else:
        try:
            shape = xp().broadcast_shapes(sx, sy)
        except ValueError:
            return                              # the op itself reports the mismatch
    size = 1
    for d in shape:
        size *= d
    if size > limit:
        from ...parser.errors import SourceError
        raise SourceError("too large", f"{prim.name} would make an array of shape {tuple(shape)} "
                          f"({size:,} elements), more than the limit of {limit:,}", None,
                          "raise the limit with --max-elements")


def _op2(prim):
    """A binary op. Traced Python floats under one reverse-mode level (the scalar loop) are
    recorded here directly; every other boxed case goes through `bind`."""
    impl = prim.impl
    if prim.nondiff or prim.vjps[0] is None or prim.vjps[1] is None:
        def op(x, y):
            cx, cy = x.__class__, y.__class__
            if cx is float or cy is float:
                return bind(prim, (x, y), None) if (cx is Var or cx is Dual or cy is Var or cy is Dual) \
                    else impl(x, y)
            _check_result_size(prim, x, y)
            if cx is Var or cx is Dual or cy is Var or cy is Dual:
                return bind(prim, (x, y), None)
            return impl(x, y)
        op.__name__ = prim.name
        return op
    fimpl = _FLOAT_IMPL.get(prim, impl)

    def op(x, y):
        cx, cy = x.__class__, y.__class__
        if cx is Var:
            xv = x.value
            if xv.__class__ is float:
                if cy is float:
                    parents, yv = ((0, x.index),), y
                elif cy is Var and y.level == x.level and y.value.__class__ is float:
                    parents, yv = ((0, x.index), (1, y.index)), y.value
                else:
                    return _slow2(prim, x, y)
                return record(prim, x.tape, x.level, parents, (xv, yv), fimpl(xv, yv))
            return _slow2(prim, x, y)
        if cy is Var:
            yv = y.value
            if cx is float and yv.__class__ is float:
                return record(prim, y.tape, y.level, ((1, y.index),), (x, yv), fimpl(x, yv))
            return _slow2(prim, x, y)
        if cx is float and cy is float:
            return fimpl(x, y)
        if cx is Dual or cy is Dual:
            return _slow2(prim, x, y)
        if cx is not float and cy is not float:
            _check_result_size(prim, x, y)
        return impl(x, y)
    op.__name__ = prim.name
    return op


def _slow2(prim, x, y):
    if x.__class__ is not float and y.__class__ is not float:
        _check_result_size(prim, x, y)
    return bind(prim, (x, y), None)


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
    cls.__array_ufunc__ = None      # `ndarray * box` defers to the box's __rmul__ (no object arrays)
    cls.__getitem__ = lambda a, i: getitem(a, i)


_install(Var)
_install(Dual)
