"""Arithmetic primitives: + - * / unary minus, and matmul. `div` is an engine op, not Python's
`/`, wherever a rule divides: Python's `/` raises on floats where IEEE gives inf or nan."""
from __future__ import annotations

import operator

from ..backend import np
from ..tape import Dual, Var
from ..primitives import check_result_size, defprim, float_fallback, ndim, plain_scalar, shape
from .broadcast_rows import times
from .comparisons import tangent_times, zero_where_zero
from .joins import permute_dims
from .shapes import bcast, expand_dims, reshape, transpose, unbroadcast


def _div(x, y):
    try:
        return x / y
    except ZeroDivisionError:                   # Python floats: follow IEEE like numpy
        return float_fallback(np().true_divide, x, y)


def _matmul(x, y):
    if not getattr(x, "ndim", 0) or not getattr(y, "ndim", 0):     # a number, or a 0-d array
        raise ValueError("matmul needs arrays of at least one dimension; use * for scalars")
    return plain_scalar(x @ y)


def _div_adjoint_y(g, ans, x, y):
    """div's adjoint of the divisor, -g x / y², 0 where g or x is exactly 0 (the strong zero)."""
    return unbroadcast(zero_where_zero(g, div(-g * x, y * y), x), y)


def _div_adjoint_y_float(g, ans, x, y):
    """_div_adjoint_y for a Python float g: no call but div's."""
    if g == 0.0:
        return 0.0
    r = div(-g * x, y * y)
    return r if (c := r.__class__) is Var or c is Dual or r == r or x != 0.0 else 0.0


# Python's own operators for floats, where they agree exactly with the forward rule (the fast
# path of a scalar loop skips one call per op). Division keeps _div: 1.0/0.0 raises in Python.
add = defprim("add", lambda x, y: x + y, elementwise=True, needs_args=False, float_impl=operator.add,
              numexpr="+", fused_bits=True, complex_bits=True, taped_vjp=True, plannable=True,
              broadcast_rows=True,
              vjp=(lambda g, ans, x, y: unbroadcast(g, x),
                   lambda g, ans, x, y: unbroadcast(g, y)),
              jvp=(lambda t, ans, x, y: bcast(t, ans),
                   lambda t, ans, x, y: bcast(t, ans)), complex_values=True)
sub = defprim("sub", lambda x, y: x - y, elementwise=True, needs_args=False, float_impl=operator.sub,
              numexpr="-", ufuncs=("subtract",), fused_bits=True, complex_bits=True,
              taped_vjp=True, plannable=True, broadcast_rows=True,
              vjp=(lambda g, ans, x, y: unbroadcast(g, x),
                   lambda g, ans, x, y: unbroadcast(-g, y)),
              jvp=(lambda t, ans, x, y: bcast(t, ans),
                   lambda t, ans, x, y: bcast(-t, ans)), complex_values=True)
mul = defprim("mul", lambda x, y: x * y, elementwise=True, float_impl=operator.mul, reads=("y", "x"),
              numexpr="*", fused_bits=True, complex_bits="probe", ufuncs=("multiply",),
              taped_vjp=True, plannable=True, broadcast_rows=True,
              vjp=(lambda g, ans, x, y: unbroadcast(zero_where_zero(g, times(g, y), y), x),
                   lambda g, ans, x, y: unbroadcast(zero_where_zero(g, times(x, g), x), y)),
              # the scalar sweep's float g: no call; a nan product of a zero factor is the strong zero
              # (an outer level's box, in a nested derivative, is never masked)
              float_vjp=(lambda g, ans, x, y: ((r if (c := (r := g * y).__class__) is Var or c is Dual or r == r
                                                or y != 0.0 else 0.0) if g != 0.0 else 0.0),
                         lambda g, ans, x, y: ((r if (c := (r := x * g).__class__) is Var or c is Dual or r == r
                                                or x != 0.0 else 0.0) if g != 0.0 else 0.0)),
              jvp=(lambda t, ans, x, y: bcast(tangent_times(t, y), ans),
                   lambda t, ans, x, y: bcast(tangent_times(t, x), ans)), complex_values=True)
div = defprim("div", _div, elementwise=True, reads=("y", "x y"),
              numexpr="/", fused_bits=True, ufuncs=("divide", "true_divide"), taped_vjp=True,
              plannable=True,
              vjp=(lambda g, ans, x, y: unbroadcast(zero_where_zero(g, div(g, y)), x),
                   _div_adjoint_y),
              float_vjp=(lambda g, ans, x, y: div(g, y) if g != 0.0 else 0.0,
                         _div_adjoint_y_float),
              jvp=(lambda t, ans, x, y: bcast(tangent_times(t, div(1.0, y)), ans),
                   lambda t, ans, x, y: bcast(tangent_times(-t, div(x, y * y)), ans)), complex_values=True)
neg = defprim("neg", lambda x: -x, elementwise=True, needs_args=False, float_impl=operator.neg,
              numexpr="-", ufuncs=("negative",), fused_bits=True, complex_bits=True,
              taped_vjp=True, plannable=True,
              vjp=(lambda g, ans, x: -g,),
              jvp=(lambda t, ans, x: -t,), complex_values=True)


def _stacked_vjp(g, x, y, of_x):
    """matmul's adjoint for stacks of matrices (> 2 dimensions): vectors made matrices, the
    product transposed, the batch axes summed back down to the argument's."""
    x2 = reshape(x, (1,) + shape(x)) if ndim(x) == 1 else x
    y2 = reshape(y, shape(y) + (1,)) if ndim(y) == 1 else y
    g2 = expand_dims(g, -2) if ndim(x) == 1 else g
    g2 = expand_dims(g2, -1) if ndim(y) == 1 else g2
    grad = matmul(g2, matrix_transpose(y2)) if of_x else matmul(matrix_transpose(x2), g2)
    target = x if of_x else y
    return reshape(unbroadcast(grad, x2 if of_x else y2), shape(target))


def matrix_transpose(v):
    """The transpose of each matrix of a stack (the last two axes swapped)."""
    axes = tuple(range(ndim(v)))
    return permute_dims(v, axes[:-2] + (axes[-1], axes[-2]))


def _matrix_vector_vjp(g, x, y, of_x):
    """matmul's adjoints for a numpy matrix times a vector with a numpy adjoint, or None: the
    general path's own numpy calls (g as a column times y; x transposed times g) without the
    engine ops' dispatch around them, which costs more than the products on small arrays."""
    ndarray = np().ndarray
    if g.__class__ is not ndarray or x.__class__ is not ndarray or y.__class__ is not ndarray \
            or x.ndim != 2 or y.ndim != 1:
        return None
    if of_x:
        return np().multiply.outer(g, y)        # g as a column times y: the same products, one call
    transposed = x.transpose()
    check_result_size(matmul.primitive, transposed, g)
    return transposed @ g


def _matmul_vjp_x(g, ans, x, y):
    fast = _matrix_vector_vjp(g, x, y, True)
    if fast is not None:
        return fast
    nx, ny = len(shape(x)), len(shape(y))          # once: a sweep of small products pays per call
    if nx > 2 or ny > 2:
        return _stacked_vjp(g, x, y, True)
    if nx == 1 and ny == 1:
        return g * y
    if ny == 1:                                             # (n,k) @ (k,) -> (n,)
        return reshape(g, (-1, 1)) * y
    if nx == 1:                                             # (k,) @ (k,m) -> (m,)
        return matmul(y, g)
    return matmul(g, transpose(y))


def _matmul_vjp_y(g, ans, x, y):
    fast = _matrix_vector_vjp(g, x, y, False)
    if fast is not None:
        return fast
    nx, ny = len(shape(x)), len(shape(y))
    if nx > 2 or ny > 2:
        return _stacked_vjp(g, x, y, False)
    if nx == 1 and ny == 1:
        return g * x
    if ny == 1:
        return matmul(transpose(x), g)
    if nx == 1:
        return reshape(x, (-1, 1)) * g
    return matmul(transpose(x), g)


matmul = defprim("matmul", _matmul, builtin="matmul", taped_vjp=True, emits_at_shapes=True,
                 vjp=(_matmul_vjp_x, _matmul_vjp_y),
                 jvp=(lambda t, ans, x, y: matmul(t, y),
                      lambda t, ans, x, y: matmul(x, t)), complex_values=True)
