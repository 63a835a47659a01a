"""numpy's protocols and Python's operators for structured stacks (core/tangent_stack.py): the
cases a stack keeps its structure under go to its own methods (`scaled`, `plus`, `negated`,
`summed`, `reshaped`, `broadcast`), anything else to its dense array, so an operation the
structure does not know is computed exactly as on a dense stack."""
from __future__ import annotations

from .backend import np
from .tape import Dual, Var

BOXED = (Var, Dual)


def joint_shape(a: tuple, b: tuple):
    """numpy's broadcast of two shapes, or None where they do not broadcast (np.broadcast_shapes
    costs microseconds, about a structured step's arithmetic at n = 200)."""
    if a == b:
        return a
    pad = len(a) - len(b)
    if pad > 0:
        b = (1,) * pad + b
    elif pad < 0:
        a = (1,) * -pad + a
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


class StackArray:
    """What a structured stack answers to numpy and to Python's operators. A subclass gives
    `dense()` and the structured methods, each returning None where it cannot keep the structure."""
    __slots__ = ()

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:
            r = _structured_ufunc(ufunc, inputs)
            if r is not None:
                return r
        inputs = tuple(dense(a) for a in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(dense(a) for a in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        structured = ARRAY_FUNCTIONS.get(func.__name__)
        if structured is not None:
            r = structured(*args, **kwargs)
            if r is not None:
                return r
        return func(*_densified(args), **{key: _densified(v) for key, v in kwargs.items()})

    def __mul__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        r = self.scaled(other) if not isinstance(other, StackArray) else None
        return r if r is not None else self.dense() * dense(other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        r = self.scaled(other, divide=True) if not isinstance(other, StackArray) else None
        return r if r is not None else self.dense() / dense(other)

    def __rtruediv__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        return dense(other) / self.dense()

    def __add__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        r = self.plus(other)
        return r if r is not None else self.dense() + dense(other)

    def __radd__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        r = self.plus(other) if isinstance(other, StackArray) else None
        return r if r is not None else dense(other) + self.dense()

    def __sub__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        r = self.plus(other, negate=True)
        return r if r is not None else self.dense() - dense(other)

    def __rsub__(self, other):
        if other.__class__ in BOXED:
            return NotImplemented
        return dense(other) - self.dense()

    def __neg__(self):
        return self.negated()

    def __pos__(self):
        return self


def _dense_operator(name):
    def operator_method(self, *others):
        if any(o.__class__ in BOXED for o in others):
            return NotImplemented
        return getattr(self.dense(), name)(*(dense(o) for o in others))
    operator_method.__name__ = name
    return operator_method


# everything else an array does, on the dense array
for _name in ("__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__eq__", "__ne__", "__lt__", "__le__",
              "__gt__", "__ge__", "__abs__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
              "__bool__", "__float__", "__iter__"):
    setattr(StackArray, _name, _dense_operator(_name))
StackArray.__hash__ = None


def dense(a):
    """The dense array of a structured stack; anything else as it is."""
    return a.dense() if isinstance(a, StackArray) else a


def _densified(a):
    if isinstance(a, StackArray):
        return a.dense()
    if a.__class__ in (list, tuple):
        return a.__class__(_densified(v) for v in a)
    return a


def _structured_ufunc(ufunc, inputs):
    """The ufuncs a structured stack keeps its structure under, or None."""
    m = np()
    if len(inputs) == 1:
        return inputs[0].negated() if ufunc is m.negative else (inputs[0] if ufunc is m.positive else None)
    a, b = inputs
    if any(v.__class__ in BOXED for v in inputs):
        return None
    if ufunc is m.multiply:
        if isinstance(a, StackArray) and not isinstance(b, StackArray):
            return a.scaled(b)
        if isinstance(b, StackArray) and not isinstance(a, StackArray):
            return b.scaled(a)
        return None
    if ufunc is m.true_divide and isinstance(a, StackArray) and not isinstance(b, StackArray):
        return a.scaled(b, divide=True)
    if ufunc is m.add and isinstance(a, StackArray):
        return a.plus(b)
    if ufunc is m.subtract and isinstance(a, StackArray):
        return a.plus(b, negate=True)
    return None


def _summed(stack, axis=None, dtype=None, out=None, keepdims=False, **rest):
    if dtype is not None or out is not None or rest:
        return None
    value_axes = tuple(range(1, stack.ndim))
    if isinstance(axis, int) and not isinstance(axis, bool):
        axis = (axis,)
    if axis is None or tuple(a % stack.ndim for a in axis) != value_axes or not value_axes:
        return None
    return stack.summed(keepdims)


def _expanded(stack, axis):
    if not isinstance(axis, int) or isinstance(axis, bool):
        return None
    position = axis if axis >= 0 else stack.ndim + 1 + axis
    if position < 1 or position > stack.ndim:
        return None
    shape = stack.shape
    return stack.reshaped(shape[:position] + (1,) + shape[position:])


def _masked(condition, x, y):
    """where(condition, stack, 0) or where(condition, 0, stack) for a raw condition on the values
    (a mask the same for every tangent): the stack times the mask, exactly (its numbers are
    finite), or None."""
    if isinstance(condition, StackArray) or condition.__class__ in BOXED:
        return None
    if isinstance(x, StackArray) and y.__class__ in (float, int) and y == 0:
        stack, keep = x, condition
    elif isinstance(y, StackArray) and x.__class__ in (float, int) and x == 0:
        stack, keep = y, np().logical_not(condition)
    else:
        return None
    if keep.__class__ is bool:
        keep = np().bool_(keep)                   # a Python False keeps nothing, as numpy's where
    if getattr(keep, "dtype", None) != bool:
        return None
    if keep.all():
        values = joint_shape(stack.vshape, np().shape(keep))
        return None if values is None else stack.broadcast((stack.k,) + values)
    return stack.scaled(keep)


def _first_is_stack(method):
    return lambda stack, *args, **kwargs: method(stack, *args, **kwargs) if isinstance(stack, StackArray) else None


ARRAY_FUNCTIONS = {
    "sum": _first_is_stack(_summed),
    "reshape": _first_is_stack(lambda stack, shape, *rest, **kw: None if rest or kw else stack.reshaped(
        shape if isinstance(shape, tuple) else (shape,))),
    "broadcast_to": _first_is_stack(lambda stack, shape, *rest, **kw: None if rest or kw else stack.broadcast(
        shape if isinstance(shape, tuple) else (shape,))),
    "expand_dims": _first_is_stack(_expanded),
    "where": lambda condition, x=None, y=None, *rest, **kw: None if rest or kw or x is None else _masked(condition, x, y),
}
