"""Shape primitives: reshape, transpose, broadcasting and its inverse, indexing, stack. Their rules
use only each other, so every other rule module may build on them (unbroadcast, bcast)."""
from __future__ import annotations

from ..backend import np, xp
from ..primitives import PerPosition, defprim, params_op, plain_scalar, shape
from ..tape import Shape, bind
from .thin_sums import COLUMN_WIDTH_MAX, column_sums, slab_sums, slabbed, thin


def unbroadcast(g, target):
    """Undo numpy broadcasting: sum g down to the shape of `target` (the one helper for it)."""
    c = g.__class__
    if c is float and target.__class__ is float:
        return g
    if c is np().ndarray and (target.__class__ is c or target.__class__ is Shape) and g.shape == target.shape:
        return g                                # the common case of a small-array sweep, without shape()'s calls
    ts = shape(target)
    if shape(g) == ts:
        return g
    return sum_to(g, ts)


def bcast(t, ans):
    """A tangent broadcast up to the output's shape (forward mode's counterpart of unbroadcast)."""
    if t.__class__ is not float and ans.__class__ is np().ndarray:
        ts = getattr(t, "shape", None)      # arrays and tangent stacks (Var, Dual: shape() below)
        if ts is not None and ts.__class__ is tuple and (ts == ans.shape or ts[1:] == ans.shape):
            return t                        # already the output's shape, or a stack of k of it
    s = shape(ans)
    ts = shape(t)
    if ts == s:
        return t
    if len(ts) == len(s) + 1:                  # a stack of k tangents (core/batch.py)
        return t if ts[1:] == s else broadcast_to(t, ts[:1] + s)
    return broadcast_to(t, s)


def _reshape(x, shape_):
    m = xp()
    return x.reshape(shape_) if x.__class__ is m.ndarray else m.reshape(x, shape_)   # the method: no wrapper


def _transpose(x):
    if x.__class__ is float:
        return x
    m = xp()
    return x.transpose() if x.__class__ is m.ndarray else m.transpose(x)


reshape = defprim("reshape", _reshape, needs_args=False, taped_vjp=True, plannable=True, emits_at_shapes=True,
                  make_op=params_op("shape_", shapes=("shape_",)),
                  vjp=(lambda g, ans, x, shape_: reshape(g, shape(x)),),
                  jvp=(lambda t, ans, x, shape_: reshape(t, shape_),), complex_values=True)
# no `builtin=`: the language's transpose() is core/library's, with numpy's axes
transpose = defprim("transpose", _transpose, emits_at_shapes=True,
                    needs_args=False, taped_vjp=True, plannable=True,
                    vjp=(lambda g, ans, x: transpose(g),),
                    jvp=(lambda t, ans, x: transpose(t),), complex_values=True)
def _expand_dims(x, axis):
    """numpy's expand_dims, as the one reshape it makes where the axis is one int: its Python
    wrapper costs ten times the view, and every reduction's adjoint over an axis calls it."""
    m = xp()
    if x.__class__ is m.ndarray and axis.__class__ is int and -x.ndim - 1 <= axis <= x.ndim:
        at = axis % (x.ndim + 1)
        return x.reshape(x.shape[:at] + (1,) + x.shape[at:])
    return m.expand_dims(x, axis)


expand_dims = defprim("expand_dims", _expand_dims, needs_args=False, taped_vjp=True, plannable=True, emits_at_shapes=True,
                      make_op=params_op("axis"),
                      vjp=(lambda g, ans, x, axis: reshape(g, shape(x)),),
                      jvp=(lambda t, ans, x, axis: expand_dims(t, axis),), complex_values=True)


def _sum_to(x, shape_):
    """Sum x down to shape_ (the inverse of broadcasting)."""
    if x.__class__ is float:
        return x
    m = xp()
    lead = len(x.shape) - len(shape_)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape_) if n == 1 and x.shape[lead + i] != 1)
    # numpy's arrays: np.sum's own reduction, without its Python wrapper (a few µs a call)
    total = m.add.reduce if x.__class__ is m.ndarray and m is np() else m.sum
    if axes == (0,) and x.ndim == 2 and total is not m.sum and thin(x, COLUMN_WIDTH_MAX):
        return column_sums(x).reshape(shape_)
    if x.ndim > 2 and len(axes) == 1 and total is not m.sum and slabbed(x, axes[0]):   # numpy's bits, slab by slab
        return slab_sums(x, axes[0]).reshape(shape_)
    r = total(x, axis=axes, keepdims=True) if axes else x
    if not shape_:
        return plain_scalar(total(r, axis=None))
    return plain_scalar(r.reshape(shape_) if r.__class__ is m.ndarray else m.reshape(r, shape_))


broadcast_to = defprim("broadcast_to", lambda x, shape_: xp().broadcast_to(x, shape_), needs_args=False,
                       make_op=params_op("shape_", shapes=("shape_",)), taped_vjp=True, plannable=True,
                       vjp=(lambda g, ans, x, shape_: unbroadcast(g, x),),
                       jvp=(lambda t, ans, x, shape_: broadcast_to(t, shape_),), complex_values=True)
sum_to = defprim("sum_to", _sum_to, needs_args=False, taped_vjp=True, plannable=True,
                 make_op=params_op("shape_", shapes=("shape_",)),
                 vjp=(lambda g, ans, x, shape_: broadcast_to(g, shape(x)),),
                 jvp=(lambda t, ans, x, shape_: sum_to(t, shape_),), complex_values=True)


def _untake(g, index, shape_):
    """Scatter-add g into zeros of shape_ at index: the adjoint of indexing."""
    m = xp()
    dtype = getattr(g, "dtype", None)
    if dtype is None:                    # a Python number: complex128 for a complex one (imag's adjoint, -1j)
        dtype = m.complex128 if g.__class__ is complex else m.float64
    out = m.zeros(shape_, dtype=dtype)
    if basic_index(index):               # no element twice: += on the view adds as add.at does, 3x quicker
        out[index] += g
    else:
        m.add.at(out, index, g)
    return out


def basic_index(index) -> bool:
    """An index of ints, slices, None and ... only (numpy's basic indexing: a view, no element
    twice; kmeans' points[:, None, :] is one, whose adjoint add.at took 1 ms to scatter at
    (10000, 16), += on the view 0.1 ms)."""
    if index.__class__ is int or index.__class__ is slice:
        return True
    return index.__class__ is tuple and all(i.__class__ is int or i.__class__ is slice or i is None or i is Ellipsis
                                            for i in index)


getitem = defprim("getitem", lambda x, index: plain_scalar(x[index]), needs_args=False, taped_vjp=True,
                  make_op=params_op("index"),
                  vjp=(lambda g, ans, x, index: untake(g, index, shape(x)),),
                  jvp=(lambda t, ans, x, index: getitem(t, index),), complex_values=True)
untake = defprim("untake", _untake, needs_args=False, taped_vjp=True,
                 make_op=params_op("index", "shape_", shapes=("shape_",)),
                 vjp=(lambda g, ans, x, index, shape_: getitem(g, index),),
                 jvp=(lambda t, ans, x, index, shape_: untake(t, index, shape_),), complex_values=True)


def _stack_jvp(i):
    def jvp(t, ans, *xs):
        s = shape(ans)[1:]
        return untake(t if shape(t) == s else broadcast_to(t, s), i, shape(ans))
    return jvp


def _stack_op(prim):
    def stack(items):
        return bind(prim, tuple(items), None)
    return stack


# stack takes any number of arguments: its rules are made per position on demand
stack = defprim("stack", lambda *xs: xp().stack([xp().asarray(v) for v in xs]), needs_args=False,
                arity=None, make_op=_stack_op, taped_vjp=True,
                vjp=PerPosition(lambda i: lambda g, ans, *xs: getitem(g, i)),
                jvp=PerPosition(_stack_jvp), complex_values=True)
