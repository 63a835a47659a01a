"""Batched tangents: forward mode carrying a stack of k tangents per value, of shape (k,) + shape,
so one pass gives k Jacobian columns or k Hessian rows.

A level is batched while `batched(level, k)` is active: `bind` then hands its forward-mode step
here. The JVP rules are the table's own; this module only lifts them over the leading axis:
- elementwise primitives (`Primitive.elementwise`): the tangent is aligned to the output's rank
  ((k,) + ones + shape) and the rule runs once, numpy broadcasting over the stack (`bcast`
  broadcasts a stacked tangent to (k,) + the output's shape);
- the shape primitives whose parameters name a shape or an axis get it shifted past the stack;
- any other primitive (matmul, stack, fancy indexing, one added later) runs its rule once per
  tangent of the stack and stacks the results: slower, never wrong.

A stack seeded structured (core/tangent_stack.py: the identity as a diagonal) stays structured
through the rules of elementwise primitives and the sum, broadcast and reshape lifts; a dense
(k,) stack of a scalar (a full sum) that is broadcast to an array becomes a rank-one stack there,
so a Hessian of elementwise steps and reductions costs O(size) per step. Any other primitive
gets the dense stack.
"""
from __future__ import annotations

from contextlib import contextmanager
from math import prod

from .backend import np
from .numbers import finite
from .primitives import shape
from .rules import reductions, shapes
from .stacked import align, leading_broadcast_to, leading_expand_dims, leading_getitem, leading_sum_to, shifted_axis
from .tangent_stack import TangentStack
from .tape import BATCHED, Dual, bind

# the lifts that keep a TangentStack structured (their numpy functions are the ones it knows)
STRUCTURE_KEEPING = frozenset(("broadcast_to", "sum_to", "reshape", "sum", "expand_dims"))


@contextmanager
def batched(level: int, k: int, structured: bool = False):
    """While active, Duals of `level` carry k stacked tangents (`structured`: seeded as a
    TangentStack, so a broadcast scalar's stack is made rank one too)."""
    def batched_bind(prim, args, params):
        """bind's forward-mode step for this level: tape.push_tangents with lifted_jvp, written
        out here (the same primals, JVP calls and sum, two calls fewer per step and per JVP)."""
        primals = tuple([a.primal if (a.__class__ is Dual and a.level == level) else a for a in args])
        ans = bind(prim, primals, params)
        lifted_params = params or NO_PARAMS
        tangent = None
        jvps = prim.jvps
        for i, a in enumerate(args):
            if a.__class__ is Dual and a.level == level and jvps[i] is not None:
                t = lifted_jvp(prim, i, a.tangent, ans, primals, lifted_params, k, structured)
                tangent = t if tangent is None else tangent + t
        if tangent is None:
            return ans
        return Dual(ans, tangent, level)

    BATCHED[level] = batched_bind
    try:
        yield
    finally:
        del BATCHED[level]


NO_PARAMS: dict = {}
ndarray = np().ndarray


def lifted_jvp(prim, i, t, ans, primals, params, k, structured=False):
    """The JVP of `prim` in argument i for k stacked tangents `t`: (k,) + the output's shape."""
    c = ans.__class__              # the shapes written out for arrays and floats: a call each saved
    out_shape = ans.shape if c is ndarray else (() if c is float else shape(ans))
    rule = prim.jvps[i]
    if prim.elementwise:
        arg = primals[i]
        c = arg.__class__
        arg_shape = arg.shape if c is ndarray else (() if c is float else shape(arg))
        if arg_shape != out_shape:
            if structured and t.__class__ is not TangentStack:
                t = rank_one_if_spread(t, arg_shape, out_shape, k)
            if len(out_shape) > len(arg_shape):
                t = align(t, arg_shape, len(out_shape), k)
        r = rule(t, ans, *primals, **params) if params is not NO_PARAMS else rule(t, ans, *primals)
    else:
        if structured and prim.name == "broadcast_to":
            t = rank_one_if_spread(t, shape(primals[0]), params["shape_"], k)
        if t.__class__ is TangentStack:
            r = structured_lift(prim.name, t, out_shape, params)
            if r is not None:
                return r
            if prim.name not in STRUCTURE_KEEPING:
                t = t.dense()                          # matmul, indexing, stack...: the dense stack
        lift = LIFTS.get(prim.name)
        r = lift(t, ans, primals, params, k) if lift is not None else None
        if r is None:
            return per_tangent(rule, t, ans, primals, params, k)
    c = r.__class__
    r_shape = r.shape if c is ndarray or c is TangentStack else shape(r)
    if r_shape and r_shape[0] == k and r_shape[1:] == out_shape:
        return r
    return fitted(r, r_shape, out_shape, k, structured)


def fitted(r, r_shape, out_shape, k, structured):
    """A rule's result `r` of shape r_shape that is not (k,) + out_shape made so."""
    if structured and r.__class__ is not TangentStack:
        r = rank_one_if_spread(r, r_shape[1:], out_shape, k)
    return full(r, k, out_shape)


def takes_same_shape(prim, argument, out) -> bool:
    """Whether same_shape_jvp serves prim's JVP in an argument of this value for this output (the
    plans decide it once per trace, from any point's values)."""
    return prim.elementwise and shape(argument) == shape(out)


def same_shape_jvp(rule, t, ans, primals, params, k, structured):
    """lifted_jvp for an elementwise primitive whose argument (tangents `t`, of shape (k,) + the
    output's) has the output's shape, `rule` its JVP there: a plan decides that once per trace
    (diff/hessian_plan.py, diff/replay_tangents.py), so the shapes are not asked again."""
    r = rule(t, ans, *primals, **params) if params is not NO_PARAMS else rule(t, ans, *primals)
    c = r.__class__
    if c is ndarray or c is TangentStack:
        if r.shape == t.shape:
            return r
        r_shape = r.shape
    else:
        r_shape = shape(r)
    return fitted(r, r_shape, t.shape[1:], k, structured)


def structured_lift(name, t, out_shape, params):
    """The sum, broadcast and reshape lifts of a TangentStack taken by its own methods (what
    LIFTS would reach through the ops and numpy's dispatch), or None."""
    if name == "sum" or name == "sum_to":
        whole = params.get("axis") is None if name == "sum" else not params["shape_"]
        return t.summed() if whole else None
    if name == "broadcast_to":
        return t.broadcast((t.k,) + tuple(out_shape))
    if name == "reshape" or name == "expand_dims":
        return t.reshaped((t.k,) + tuple(out_shape))
    return None


def rank_one_if_spread(t, arg_shape, out_shape, k):
    """A dense stack of one value per tangent (a scalar's) that is to spread over more values
    as a rank-one TangentStack; anything else as it is."""
    if t.__class__ is not np().ndarray or prod(out_shape) <= 1 or t.size != k:
        return t
    if not finite(t):                            # a TangentStack holds finite numbers only
        return t
    return TangentStack.outer(t.reshape(k), (1,) * len(out_shape))


def full(t, k, out_shape):
    want = (k,) + tuple(out_shape)
    if shape(t) == want:
        return t
    return shapes.broadcast_to(align(t, shape(t)[1:], len(out_shape), k), want)


def per_tangent(rule, t, ans, primals, params, k):
    """The rule once per stacked tangent: any primitive, at k calls' cost."""
    out_shape = shape(ans)
    rows = []
    t = t.dense() if t.__class__ is TangentStack else t
    for j in range(k):
        r = rule(shapes.getitem(t, j), ans, *primals, **params)
        rows.append(r if shape(r) == out_shape else shapes.broadcast_to(r, out_shape))
    return shapes.stack(rows)


def _lift_sum(t, ans, primals, params, k):
    axis = params.get("axis")
    if axis is None or isinstance(axis, int):
        return reductions.sum(t, shifted_axis(axis, len(shape(t))))
    return None


# The shape primitives' JVPs over k tangents: core/stacked.py's lifts of a leading axis.
LIFTS = {
    "broadcast_to": lambda t, ans, primals, params, k: leading_broadcast_to(t, shape(primals[0]), params["shape_"], k),
    "sum_to": lambda t, ans, primals, params, k: leading_sum_to(t, params["shape_"], k),
    "reshape": lambda t, ans, primals, params, k: shapes.reshape(t, (k,) + tuple(shape(ans))),
    "sum": _lift_sum,
    "getitem": lambda t, ans, primals, params, k: leading_getitem(t, params["index"]),
    "expand_dims": lambda t, ans, primals, params, k: leading_expand_dims(t, params["axis"]),
}
