"""Reductions: sum, max, min, prod, norm (ties and zero vectors noted as they are evaluated)."""
from __future__ import annotations

import math

from ..backend import np, xp
from ..complexes import is_complex
from ..notes import NOTES
from ..primitives import defprim, params_op, plain_scalar, shape, zeros_like
from ..tape import strip
from .arithmetic import div
from .comparisons import eq, where
from .complexes import conj, real, with_a_zero
from .shapes import broadcast_to, expand_dims, reshape
from .thin_sums import ROW_WIDTH_MAX, numpy_order, row_sums, slab_sums, slabbed, thin


# Below this many elements a reduction's adjoint is spread over its input's shape as a whole
# array, not a stride-0 view: numpy's ops on such a view cost 3 to 9 times the contiguous ones,
# and the VJP after a reduction is mostly a product with it. Above it the view saves the memory.
WHOLE_RESTORE_MAX_ELEMENTS = 1 << 14


def _restore(g, x, axis):
    """Broadcast a reduction's adjoint back over the reduced axis."""
    if axis is not None:
        g = expand_dims(g, axis)
    target = shape(x)
    m = np()
    if (g.__class__ is m.ndarray or g.__class__ is float) and xp() is m and target:
        if math.prod(target) <= WHOLE_RESTORE_MAX_ELEMENTS:   # the values of the view, in a buffer of their own
            whole = m.empty(target, dtype=g.dtype if g.__class__ is m.ndarray else m.float64)
            whole[...] = g
            return whole
    return broadcast_to(g, target)


def _restore_float(g, ans, x, axis=None):
    """sum's VJP for a Python float adjoint (the sum of all of x): g spread over x's shape."""
    target = shape(x)
    m = np()
    if xp() is m and target and math.prod(target) <= WHOLE_RESTORE_MAX_ELEMENTS:
        whole = m.empty(target, dtype=m.float64)
        whole[...] = g
        return whole
    return broadcast_to(g, target)


def _sum(x, axis=None):
    if x.__class__ is float:
        return x
    m = xp()
    if x.__class__ is m.ndarray and m is np():     # np.sum's own reduction, without its Python wrapper
        if axis.__class__ is int:
            if (axis == -1 or axis == x.ndim - 1) and thin(x, ROW_WIDTH_MAX) and numpy_order():
                return row_sums(x)
            if x.ndim > 2 and -x.ndim <= axis < x.ndim and slabbed(x, axis % x.ndim):     # numpy's bits, slab by slab
                axis %= x.ndim
                return slab_sums(x, axis).reshape(x.shape[:axis] + x.shape[axis + 1:])
        return plain_scalar(m.add.reduce(x, axis=axis))
    return plain_scalar(m.sum(x, axis=axis))


_AXIS = params_op("axis", optional=("axis",))      # op(x, axis=None)

sum = defprim("sum", _sum, needs_args=False, make_op=_AXIS, taped_vjp=True, plannable=True,
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis),),
              float_vjp=(_restore_float,),
              jvp=(lambda t, ans, x, axis=None: sum(t, axis),), complex_values=True)


def _extreme(name, fn):
    def impl(x, axis=None):
        if x.__class__ is float:
            return x
        r = fn(x, axis=axis)
        if axis is None:        # one count, not a sum and an any: lse's max at 1e5 is mostly this check
            tied = int(xp().count_nonzero(x == r)) > 1
        else:
            tied = bool(xp().any(xp().sum(x == xp().expand_dims(r, axis), axis=axis) > 1))
        if tied:
            NOTES.kink(name, f"{name} with a tie: the gradient is split evenly among the tied elements")
        return plain_scalar(r)
    return impl


def _extreme_share(ans, x, axis):
    """Each element's share of a max/min: ties split evenly (a mask over the count)."""
    full = ans if axis is None else expand_dims(ans, axis)
    equal = eq(x, full)
    dt = getattr(strip(x), "dtype", None)
    mask = equal.astype(dt) if dt is not None else equal * 1.0      # float32 stays float32
    return div(mask, sum(mask, axis) if axis is None else expand_dims(sum(mask, axis), axis))


def _extreme_vjp(g, ans, x, axis=None):
    """g spread over the extremes' shares. A whole float64 reduction with a plain 0-d adjoint (a
    first-order sweep on the CPU) takes a short way to the same bits: the share times g (a product
    is commutative), and no division where the extreme is unique (mask / 1.0 is the mask)."""
    m = np()
    if g.__class__ is m.ndarray and g.ndim == 0 and g.dtype == m.float64:
        return _extreme_vjp_float(g, ans, x, axis)
    return _restore(g, x, axis) * _extreme_share(ans, x, axis)


def _extreme_vjp_float(g, ans, x, axis=None):
    """max's and min's VJP for a Python float adjoint (the table's float form, chosen by the
    sweeps): the short way where the reduction is whole and float64 on the CPU."""
    m = np()
    if axis is None and x.__class__ is m.ndarray and x.dtype == m.float64 and xp() is m:
        share = (x == ans).astype(m.float64)
        if m.count_nonzero(share) != 1:
            share = div(share, sum(share))
        return m.multiply(share, g, out=share)
    return _restore(g, x, axis) * _extreme_share(ans, x, axis)


max = defprim("max", _extreme("max", lambda x, axis: xp().max(x, axis=axis)), needs_ans=True, make_op=_AXIS,
              kink="ties split the gradient evenly", side="argmax",
              vjp=(_extreme_vjp,), float_vjp=(_extreme_vjp_float,),
              jvp=(lambda t, ans, x, axis=None: sum(t * _extreme_share(ans, x, axis), axis),),
              complex_values="ordering")
min = defprim("min", _extreme("min", lambda x, axis: xp().min(x, axis=axis)), needs_ans=True, make_op=_AXIS,
              kink="ties split the gradient evenly", side="argmin",
              vjp=(_extreme_vjp,), float_vjp=(_extreme_vjp_float,),
              jvp=(lambda t, ans, x, axis=None: sum(t * _extreme_share(ans, x, axis), axis),),
              complex_values="ordering")


def _prod(x, axis=None):
    return x if x.__class__ is float else plain_scalar(xp().prod(x, axis=axis))


def pair_masks(n, axis, ndim):
    """Boolean masks over a pair of axes (i at `axis`, j at `axis + 1`, size n each, broadcastable
    against an array of ndim + 1 dimensions): the diagonal i == j, and j >= i."""
    m = xp()
    i, j = m.arange(n).reshape(n, 1), m.arange(n).reshape(1, n)
    lead, trail = (1,) * axis, (1,) * (ndim - axis - 1)
    return (m.reshape(i == j, lead + (n, n) + trail),
            m.reshape(j >= i, lead + (n, n) + trail))


def without_each(x, axis):
    """x with a new axis i at `axis` (the old one moves to axis + 1) and, in row i, element i
    replaced by 1: products over axis + 1 then leave each element out in turn."""
    n = shape(x)[axis]
    diagonal, _ = pair_masks(n, axis, len(shape(x)))
    return where(diagonal, 1.0, expand_dims(x, axis))


def _prod_except(x, axis):
    """For each element, the product of the others along axis: running products from both ends,
    no division (exact with zeros), in O(n)."""
    m = xp()
    ones = m.ones_like(m.take(x, [0], axis=axis))
    before = m.concatenate([ones, m.cumprod(m.take(x, m.arange(x.shape[axis] - 1), axis=axis), axis)], axis)
    flipped = m.flip(x, axis)
    after = m.flip(m.concatenate([ones, m.cumprod(m.take(flipped, m.arange(x.shape[axis] - 1), axis=axis),
                                                  axis)], axis), axis)
    return before * after


def _prod_except_partials(x, axis):
    """d prod_except(x)_i / d x_j = the product of all but x_i and x_j (0 for j == i), with i at
    `axis`, j at `axis + 1`: the same entry over `without_each`, so every order is exact."""
    diagonal, _ = pair_masks(shape(x)[axis], axis, len(shape(x)))
    return where(diagonal, 0.0, prod_except(without_each(x, axis), axis + 1))


# prod_except(x, axis): axis an int, not negative. The second derivative of prod where elements
# are 0 goes through its rules, which cost O(n²) memory along the axis (the first, O(n)).
prod_except = defprim("prod_except", _prod_except, make_op=params_op("axis"),
                      vjp=(lambda g, ans, x, axis: sum(expand_dims(g, axis + 1) * _prod_except_partials(x, axis),
                                                       axis),),
                      jvp=(lambda t, ans, x, axis: sum(_prod_except_partials(x, axis) * expand_dims(t, axis),
                                                       axis + 1),), complex_values=True)


def _others(x, axis):
    """prod_except along axis, or over all of x for None."""
    if axis is None:
        return reshape(prod_except(reshape(x, (-1,)), 0), shape(x))
    return prod_except(x, axis)


def _no_zero(x):
    return bool(xp().all(strip(x) != 0))


def _prod_vjp(g, ans, x, axis=None):
    if x.__class__ is float:
        return g
    if _no_zero(x):
        return div(_restore(g * ans, x, axis), x)       # written in ops: differentiable to any order
    return _restore(g, x, axis) * _others(x, axis)


def _prod_jvp(t, ans, x, axis=None):
    if x.__class__ is float:
        return t
    if _no_zero(x):
        return sum(div(t * _restore(ans, x, axis), x), axis)
    return sum(t * _others(x, axis), axis)


# prod(x, axis): axis an int (not negative) or None; the library moves keepdims and tuples here
prod = defprim("prod", _prod, needs_ans=True, make_op=_AXIS, vjp=(_prod_vjp,), jvp=(_prod_jvp,), complex_values=True,
               emits_at_shapes=True, other_side=with_a_zero)


def _norm(x):
    if x.__class__ is float or x.__class__ is complex:
        return abs(x)
    if is_complex(x):
        return plain_scalar(xp().sqrt(xp().sum((x * x.conj()).real)))
    return plain_scalar(xp().sqrt(xp().sum(x * x)))


def _norm_vjp(g, ans, x):
    # x / |x|, with the zero vector's gradient taken as 0 (DESIGN convention); for complex
    # entries d|x| = Re(sum conj(x) dx) / |x|, whose adjoint is real(g) conj(x) / |x|. Written in
    # ops: the zero vector is told by eq(ans, 0), a comparison, which a run recording a trace
    # makes a guard (core/tape.py's bind), so a sweep on an outer level's boxes tapes all it reads
    # (taped_vjp: a derivative inside a program through norm replays)
    if eq(ans, 0.0):
        NOTES.kink("norm", "norm of a zero vector: gradient taken as 0")
        return g * zeros_like(x)
    if is_complex(x):
        return div(real(g) * conj(x), ans)
    return div(g * x, ans)


def _norm_jvp(t, ans, x):
    if is_complex(x):
        if eq(ans, 0.0):
            NOTES.kink("norm", "norm of a zero vector: gradient taken as 0")
            return 0.0 * real(sum(t))
        return div(real(sum(conj(x) * t)), ans)
    return sum(_norm_vjp(t, ans, x))


# no `builtin=`: the language's norm() is core/library's, with numpy's ord, axis and keepdims
norm = defprim("norm", _norm, needs_ans=True, kink="norm'(0) = 0",
               vjp=(_norm_vjp,), jvp=(_norm_jvp,), complex_values=True, taped_vjp=True,
               emits_at_shapes=True, other_side=lambda x: x * 0.0)
