"""Primitives without a gradient (comparisons, sign, step, floor, the share of a tie) and `where`,
whose condition carries none."""
from __future__ import annotations

import math
import operator

from ..backend import xp
from ..primitives import defprim, nondiff, plain_scalar
from .shapes import bcast, unbroadcast


def _compare(name, pyop):
    def impl(x, y):
        r = pyop(x, y)
        return r if r.__class__ is bool else plain_scalar(r)
    impl.__name__ = name
    return nondiff(name, impl, float_impl=pyop)


lt = _compare("lt", operator.lt)
le = _compare("le", operator.le)
gt = _compare("gt", operator.gt)
ge = _compare("ge", operator.ge)
eq = _compare("eq", operator.eq)
ne = _compare("ne", operator.ne)
floor = nondiff("floor", lambda x: float(math.floor(x)) if x.__class__ is float and math.isfinite(x)
                else plain_scalar(xp().floor(x)), builtin="floor")   # floor(inf) is inf, floor(nan) nan


def _sign(x):
    if x.__class__ is float:
        return (x > 0.0) - (x < 0.0) + 0.0
    return plain_scalar(xp().sign(x))


sign = nondiff("sign", _sign, builtin="sign")


def _step(x):
    """1 where x > 0, else 0: relu's derivative (relu'(0) = 0)."""
    if x.__class__ is float:
        return 1.0 if x > 0.0 else 0.0
    return plain_scalar((x > 0).astype(getattr(x, "dtype", float)) if hasattr(x, "astype") else float(x > 0))


step = nondiff("step", _step)


def _share(x, y):
    """x's share of max(x, y): 1 where x > y, 1/2 at a tie, 0 where x < y."""
    if x.__class__ is float and y.__class__ is float:
        return 1.0 if x > y else (0.5 if x == y else 0.0)
    m = xp()
    r = m.where(x > y, 1.0, m.where(x == y, 0.5, 0.0))
    dt = m.result_type(x, y)
    if dt.kind == "f" and r.dtype != dt:           # keep float32 gradients float32
        r = r.astype(dt)
    return plain_scalar(r[()] if r.ndim == 0 else r)


share = nondiff("share", _share)


def _where(c, x, y):
    if c.__class__ is bool and x.__class__ is float and y.__class__ is float:
        return x if c else y
    return plain_scalar(xp().where(c, x, y))


# the language's where() checks its arguments first (lang/builtins.py), so no builtin= here
where = defprim("where", _where, elementwise=True, kink="the branch not taken gets no gradient",
                side="condition",
                vjp=(None,
                     lambda g, ans, c, x, y: unbroadcast(where(c, g, 0.0), x),
                     lambda g, ans, c, x, y: unbroadcast(where(c, 0.0, g), y)),
                jvp=(None,
                     lambda t, ans, c, x, y: bcast(where(c, t, 0.0), ans),
                     lambda t, ans, c, x, y: bcast(where(c, 0.0, t), ans)))
