"""Arithmetic primitives: + - * / unary minus, and matmul. `div` is an engine op, not Python's
`/`, wherever a rule divides: Python's `/` raises on floats where IEEE gives inf or nan."""
from __future__ import annotations

import operator

from ..backend import np
from ..primitives import defprim, float_fallback, ndim, plain_scalar, shape
from .comparisons import tangent_times
from .shapes import bcast, reshape, transpose, unbroadcast


def _div(x, y):
    try:
        return x / y
    except ZeroDivisionError:                   # Python floats: follow IEEE like numpy
        return float_fallback(np().true_divide, x, y)


def _matmul(x, y):
    xs, ys = shape(x), shape(y)
    if not xs or not ys:
        raise ValueError("matmul needs arrays of at least one dimension; use * for scalars")
    if len(xs) > 2 or len(ys) > 2:
        raise ValueError("matmul supports vectors and matrices (at most 2 dimensions)")
    return plain_scalar(x @ y)


# Python's own operators for floats, where they agree exactly with the forward rule (the fast
# path of a scalar loop skips one call per op). Division keeps _div: 1.0/0.0 raises in Python.
add = defprim("add", lambda x, y: x + y, needs_args=False, float_impl=operator.add,
              vjp=(lambda g, ans, x, y: unbroadcast(g, x),
                   lambda g, ans, x, y: unbroadcast(g, y)),
              jvp=(lambda t, ans, x, y: bcast(t, ans),
                   lambda t, ans, x, y: bcast(t, ans)))
sub = defprim("sub", lambda x, y: x - y, needs_args=False, float_impl=operator.sub,
              vjp=(lambda g, ans, x, y: unbroadcast(g, x),
                   lambda g, ans, x, y: unbroadcast(-g, y)),
              jvp=(lambda t, ans, x, y: bcast(t, ans),
                   lambda t, ans, x, y: bcast(-t, ans)))
mul = defprim("mul", lambda x, y: x * y, float_impl=operator.mul,
              vjp=(lambda g, ans, x, y: unbroadcast(g * y, x),
                   lambda g, ans, x, y: unbroadcast(x * g, y)),
              jvp=(lambda t, ans, x, y: bcast(tangent_times(t, y), ans),
                   lambda t, ans, x, y: bcast(tangent_times(t, x), ans)))
div = defprim("div", _div,
              vjp=(lambda g, ans, x, y: unbroadcast(div(g, y), x),
                   lambda g, ans, x, y: unbroadcast(div(-g * x, y * y), y)),
              jvp=(lambda t, ans, x, y: bcast(tangent_times(t, div(1.0, y)), ans),
                   lambda t, ans, x, y: bcast(tangent_times(-t, div(x, y * y)), ans)))
neg = defprim("neg", lambda x: -x, needs_args=False, float_impl=operator.neg,
              vjp=(lambda g, ans, x: -g,),
              jvp=(lambda t, ans, x: -t,))


def _matmul_vjp_x(g, ans, x, y):
    if ndim(x) == 1 and ndim(y) == 1:
        return g * y
    if ndim(y) == 1:                                        # (n,k) @ (k,) -> (n,)
        return reshape(g, (-1, 1)) * y
    if ndim(x) == 1:                                        # (k,) @ (k,m) -> (m,)
        return matmul(y, g)
    return matmul(g, transpose(y))


def _matmul_vjp_y(g, ans, x, y):
    if ndim(x) == 1 and ndim(y) == 1:
        return g * x
    if ndim(y) == 1:
        return matmul(transpose(x), g)
    if ndim(x) == 1:
        return reshape(x, (-1, 1)) * g
    return matmul(transpose(x), g)


matmul = defprim("matmul", _matmul, builtin="matmul",
                 vjp=(_matmul_vjp_x, _matmul_vjp_y),
                 jvp=(lambda t, ans, x, y: matmul(t, y),
                      lambda t, ans, x, y: matmul(x, t)))
