"""Scans along one axis: cumsum (also reversed, which is its own adjoint) and cumprod, exact
where elements are 0 at every order. cummax, cummin, sort and the like are gathers (getitem with
an index computed from the values: engine/core/library/), so they need no entry here."""
from __future__ import annotations

from ..backend import xp
from ..primitives import defprim, params_op, plain_scalar, shape
from ..tape import strip
from .arithmetic import div
from .comparisons import where
from .elementwise import has_zero
from .reductions import with_a_zero, pair_masks, sum, without_each
from .shapes import expand_dims


def _cumsum(x, axis, reverse=False):
    m = xp()
    if reverse:
        return plain_scalar(m.flip(m.cumsum(m.flip(x, axis), axis), axis))
    return m.cumsum(x, axis)


# cumsum(x, axis, reverse): the adjoint of a running sum is the running sum from the other end
cumsum = defprim("cumsum", _cumsum, needs_args=False, make_op=params_op("axis", "reverse"), emits_at_shapes=True,
                 vjp=(lambda g, ans, x, axis, reverse=False: cumsum(g, axis, not reverse),),
                 jvp=(lambda t, ans, x, axis, reverse=False: cumsum(t, axis, reverse),), complex_values=True)


def _cumprod_partials(x, axis):
    """d ans_j / d x_i = prod_{k <= j, k != i} x_k for j >= i, else 0 (no division: exact at 0).
    Returned with i at `axis`, j at `axis + 1`."""
    n = shape(x)[axis]
    _, later = pair_masks(n, axis, len(shape(x)))
    return where(later, cumprod(without_each(x, axis), axis + 1), 0.0)


def _cumprod_vjp(g, ans, x, axis):
    if has_zero(x):
        return sum(_cumprod_partials(x, axis) * expand_dims(g, axis), axis + 1)
    return div(cumsum(g * ans, axis, True), x)          # written in ops: any order


def _cumprod_jvp(t, ans, x, axis):
    if has_zero(x):
        return sum(_cumprod_partials(x, axis) * expand_dims(t, axis + 1), axis)
    return ans * cumsum(div(t, x), axis)


cumprod = defprim("cumprod", lambda x, axis: xp().cumprod(x, axis), needs_ans=True, emits_at_shapes=True,
                  other_side=with_a_zero,
                  make_op=params_op("axis"), vjp=(_cumprod_vjp,), jvp=(_cumprod_jvp,),
                  complex_values=True)         # holomorphic: the same products, numpy's complex cumprod
