"""Reductions: sum, max, min, prod, norm (ties and zero vectors noted as they are evaluated)."""
from __future__ import annotations

from ..backend import xp
from ..notes import NOTES
from ..primitives import NotImplementedRule, defprim, params_op, plain_scalar, shape, zeros_like
from ..tape import strip
from .arithmetic import div
from .comparisons import eq
from .shapes import broadcast_to, expand_dims


def _restore(g, x, axis):
    """Broadcast a reduction's adjoint back over the reduced axis."""
    if axis is not None:
        g = expand_dims(g, axis)
    return broadcast_to(g, shape(x))


def _sum(x, axis=None):
    if x.__class__ is float:
        return x
    return plain_scalar(xp().sum(x, axis=axis))


_AXIS = params_op("axis", optional=("axis",))      # op(x, axis=None)

sum = defprim("sum", _sum, needs_args=False, make_op=_AXIS,
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis),),
              jvp=(lambda t, ans, x, axis=None: sum(t, axis),))


def _extreme(name, fn):
    def impl(x, axis=None):
        if x.__class__ is float:
            return x
        r = fn(x, axis=axis)
        ties = xp().sum(x == (r if axis is None else xp().expand_dims(r, axis)), axis=axis)
        if bool(xp().any(ties > 1)):
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


max = defprim("max", _extreme("max", lambda x, axis: xp().max(x, axis=axis)), needs_ans=True, make_op=_AXIS,
              kink="ties split the gradient evenly", side="argmax",
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis) * _extreme_share(ans, x, axis),),
              jvp=(lambda t, ans, x, axis=None: sum(t * _extreme_share(ans, x, axis), axis),))
min = defprim("min", _extreme("min", lambda x, axis: xp().min(x, axis=axis)), needs_ans=True, make_op=_AXIS,
              kink="ties split the gradient evenly", side="argmin",
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis) * _extreme_share(ans, x, axis),),
              jvp=(lambda t, ans, x, axis=None: sum(t * _extreme_share(ans, x, axis), axis),))


def _prod(x):
    return x if x.__class__ is float else plain_scalar(xp().prod(x))


def _prod_except(x):
    """For each element, the product of all the others (exact with zeros, no division)."""
    m = xp()
    flat = m.ravel(x)
    left = m.concatenate([m.ones(1, flat.dtype), m.cumprod(flat)[:-1]])
    right = m.concatenate([m.cumprod(flat[::-1])[:-1][::-1], m.ones(1, flat.dtype)])
    return m.reshape(left * right, m.shape(x))


prod_except = defprim("prod_except", _prod_except,
                      vjp=(NotImplementedRule("the second derivative of prod at a point where an element "
                                              "is 0 is not implemented"),),
                      jvp=(NotImplementedRule("the second derivative of prod at a point where an element "
                                              "is 0 is not implemented"),))


def _prod_vjp(g, ans, x):
    if x.__class__ is float:
        return g
    if bool(xp().all(strip(x) != 0)):
        return div(g * ans, x)            # written in ops: differentiable to any order
    return g * prod_except(x)


prod = defprim("prod", _prod, needs_ans=True, builtin="prod",
               vjp=(_prod_vjp,),
               jvp=(lambda t, ans, x: sum(_prod_vjp(t, ans, x)),))


def _norm(x):
    if x.__class__ is float:
        return abs(x)
    return plain_scalar(xp().sqrt(xp().sum(x * x)))


def _norm_vjp(g, ans, x):
    # x / |x|, with the zero vector's gradient taken as 0 (DESIGN convention)
    if strip(ans) == 0:
        NOTES.kink("norm", "norm of a zero vector: gradient taken as 0")
        return g * zeros_like(x)
    return div(g * x, ans)


norm = defprim("norm", _norm, needs_ans=True, builtin="norm", kink="norm'(0) = 0",
               vjp=(_norm_vjp,),
               jvp=(lambda t, ans, x: sum(_norm_vjp(t, ans, x)),))
