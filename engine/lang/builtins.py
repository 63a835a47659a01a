"""The language's builtins, numpy-named. Each maps to engine ops (differentiable) or to raw
constructors (arange, zeros...) that make constants. Nothing else of Python is reachable."""
from __future__ import annotations

import math
import weakref

from ...parser.errors import SourceError, option
from ..core import ops
from ..core.backend import is_array, np, xp
from ..core.numbers import is_whole
from ..core.rules import builtin_primitives
from ..core.notes import NOTES
from ..core.sequences import SEQUENCES, as_array
from ..core.tape import BOXES, strip
from .recorded_decisions import constant_of_path
from .loop_forms import enumerate_items, zip_items
from .axes import keep_dims, reduced_count, reduction_axes
from .numpy_builtins import add_library_builtins, add_second_spellings
from .callables import Builtin
from .custom_rules import rule_builtins
from .dtypes import TYPES, cast, read as read_dtype
from .transforms import transform_builtins
from .values import DType, RangeValue, describe, range_arguments, range_items, shape_of
from .values import dtype as working_dtype


def noted_stop_gradient(x):
    """The program's stop_gradient/detach: the engine's, noted where it cuts a traced value, so a
    check can say that its finite differences see through what AD does not. A tuple is the
    array numpy reads it as (its traced elements were passed on with their derivatives)."""
    x = as_array(x)
    if isinstance(x, BOXES):
        NOTES.detach()
    return ops.read(x)                  # a number no tape records: a replay would reuse it



def is_axis(value) -> bool:
    """An untracked whole number, or a tuple of them: what numpy's max(x, axis) takes second."""
    if isinstance(value, tuple):
        return all(is_axis(v) for v in value)
    if strip(value) is not value or isinstance(value, bool):
        return False                        # a value with a derivative is an operand, never an axis
    return isinstance(value, (int, float)) and value == value and abs(value) != math.inf and value == int(value)


def _shape_arg(args, what):
    """A shape given as numbers, a tuple or a list: reshape(x, 2, 3), zeros((2, 3)), zeros([2,3])."""
    if len(args) == 1:
        a = ops.read(args[0])           # a shape read from a traced value: no trace is kept
        if isinstance(a, tuple):
            args = a
        elif is_array(a) and a.ndim == 1:
            args = tuple(a.tolist())
    dims = []
    for d in args:
        d = ops.read(d)
        if is_array(d) and d.ndim == 0:
            d = d.item()
        if isinstance(d, bool) or not isinstance(d, (int, float)) or d != d or int(d) != d:
            raise SourceError("type error", f"{what}: a dimension must be a whole number, not {describe(d)}")
        dims.append(int(d))
    return tuple(dims)


class Builtins:
    """The builtins that need the interpreter (its limits, `grad`). They hold it by a weak
    reference: interpreter -> table -> bound method -> Builtins -> interpreter would be a cycle,
    which only the cyclic GC frees (repeated API calls grew by 16 KB each until gc.collect())."""

    def __init__(self, interp):
        self._interp = weakref.ref(interp) if interp is not None else lambda: None

    @property
    def interp(self):
        return self._interp()

    def check_size(self, count, what):
        limit = self.interp.limits.elements
        if count > limit:
            raise SourceError("too large", f"{what} would have {count:,} elements, more than the limit of "
                              f"{limit:,}", None, f"raise the limit with {option('max_elements')}")

    # -- constructors (constants) --
    def zeros(self, *shape, dtype=None):
        shape, dtype = _shape_and_dtype(shape, dtype, "zeros")
        s = _shape_arg(_constants("zeros", shape), "zeros")
        self._check_dims(s, "zeros")
        return _typed(xp().zeros(s, dtype=working_dtype()) if s else 0.0, dtype, "zeros()")

    def ones(self, *shape, dtype=None):
        shape, dtype = _shape_and_dtype(shape, dtype, "ones")
        s = _shape_arg(_constants("ones", shape), "ones")
        self._check_dims(s, "ones")
        return _typed(xp().ones(s, dtype=working_dtype()) if s else 1.0, dtype, "ones()")

    def _check_dims(self, s, what):
        if any(d < 0 for d in s):
            raise SourceError("value error", f"{what}: negative dimensions {s}")
        self.check_size(math.prod(s), f"{what}{s}")

    def arange(self, *args, dtype=None):
        args = _constants("arange", args)
        vals = [float(strip(a)) for a in args]
        if dtype is not None and read_dtype(dtype, "arange()").kind == "i" and not all(map(is_whole, vals)):
            raise SourceError("value error", "arange() with an integer dtype and bounds or a step that are "
                              "not whole: numpy casts them before counting", None,
                              "give whole bounds and step, or write np.trunc(np.arange(...))")
        if not vals or len(vals) > 3:
            raise SourceError("wrong arguments", "arange() takes 1 to 3 arguments")
        start, stop, step = (0.0, vals[0], 1.0) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1.0)
        if step == 0 or any(v != v or abs(v) == math.inf for v in (start, stop, step)):
            raise SourceError("value error", "arange() needs finite bounds and a non-zero step")
        count = max(0, math.ceil((stop - start) / step))
        if count > 2 and dtype is not None and read_dtype(dtype, "arange()").kind == "b":
            raise SourceError("value error", "arange() with dtype bool makes at most 2 elements, as numpy's",
                              None, "write np.arange(...) > 0 or np.arange(...).astype(bool)")
        self.check_size(count, "arange()")
        return _typed(xp().arange(start, stop, step, dtype=working_dtype()), dtype, "arange()")

    def linspace(self, start, stop, num=50.0, dtype=None):
        made = self._linspace(start, stop, num)
        if dtype is not None and read_dtype(dtype, "linspace()").kind == "i":
            made = ops.floor(made)          # numpy floors the points for an integer dtype
        return _typed(made, dtype, "linspace()")

    def _linspace(self, start, stop, num):
        num, = _constants("linspace", (num,), "the number of points")
        count = int(strip(num)) if is_whole(float(strip(num))) else -1
        if count < 0:
            raise SourceError("value error", "linspace(): the number of points must be a whole number ≥ 0")
        self.check_size(count, "linspace()")
        if not all(math.isfinite(float(ops.read(v))) for v in (start, stop)):
            raise SourceError("value error", "linspace() needs finite bounds")
        points = xp().linspace(float(ops.read(start)), float(ops.read(stop)), count, dtype=working_dtype())
        if not (isinstance(start, BOXES) or isinstance(stop, BOXES)):
            return points
        # traced bounds: start + (stop - start) t, differentiable in both, with numpy's values
        # exactly (the traced part adds an exact 0 to them)
        fractions = xp().linspace(0.0, 1.0, count, dtype=working_dtype())
        traced = ops.add(start, ops.mul(ops.sub(stop, start), fractions))
        return ops.add(points, ops.sub(traced, strip(traced)))

    def range_(self, *args):
        ints = range_arguments(args)
        if ints is None:
            bad = next(a for a in args if range_arguments([a]) is None)
            number = strip(bad)
            shown = repr(float(number)) if number.__class__ is float else describe(bad)
            raise SourceError("type error", f"range() needs whole numbers, not {shown}")
        if ints[2] == 0:
            raise SourceError("value error", "range() step must not be zero")
        if any(a.__class__ in BOXES for a in args):     # its items read from traced values: a guard
            ops.read(args, range_items, "range")
        return RangeValue(*ints)

    def len_(self, x):
        v = strip(x)
        if v.__class__ in SEQUENCES or v.__class__ is dict:
            return float(len(v))
        s = shape_of(v)
        if not s:
            raise SourceError("type error", f"len() of {describe(x)}: a number has no length")
        return float(s[0])

    # -- reductions and linear algebra --
    def sum(self, x, axis=None, *, keepdims=False):
        x = as_array(x)
        axes = reduction_axes("sum", x, axis)
        return keep_dims(ops.sum(x, axes), x, axes, keepdims)

    def mean(self, x, axis=None, *, keepdims=False):
        x = as_array(x)
        axes = reduction_axes("mean", x, axis)
        if not shape_of(x):
            return x * 1.0
        total = ops.div(ops.sum(x, axes), float(reduced_count(x, axes)))   # the mean of nothing is nan
        return keep_dims(total, x, axes, keepdims)

    def max(self, x, *rest, axis=None, keepdims=False):
        return self._extreme("max", ops.max, ops.maximum, x, rest, axis, keepdims)

    def min(self, x, *rest, axis=None, keepdims=False):
        return self._extreme("min", ops.min, ops.minimum, x, rest, axis, keepdims)

    def _extreme(self, name, reduce, pairwise, x, rest, axis, keepdims):
        """numpy's max(x, axis, keepdims=...) when x is an array with dimensions and the one other
        argument an axis (a whole number or a tuple of them); else Python's max(a, b, ...), the
        larger of all its arguments (elementwise, as maximum(), where they are arrays)."""
        x = as_array(x)
        numpy_axis = len(rest) == 1 and (axis is not None or (shape_of(x) and is_axis(rest[0])))
        if rest and not numpy_axis:
            out = x
            for v in rest:
                out = pairwise(out, as_array(v))
            return out
        if rest:
            axis = rest[0]
        axes = reduction_axes(name, x, axis)
        return x if not shape_of(x) else keep_dims(reduce(x, axes), x, axes, keepdims)

    def reshape(self, x, *shape):
        x = as_array(x)
        s = _shape_arg(shape, "reshape")
        return ops.reshape(x, s)

    def where(self, c, x, y):
        c, x, y = as_array(c), as_array(x), as_array(y)
        for a in (c, x, y):           # numpy would make an object array of anything else
            if not _is_numeric(a):
                raise SourceError("type error", f"where() takes numbers or arrays, not {describe(a)}")
        shapes = [shape_of(v) for v in (c, x, y)]
        if sum(1 for sh in shapes if sh) > 1:
            try:
                shape = np().broadcast_shapes(*shapes)     # host tuples: numpy's, on any device
            except ValueError:
                shape = ()                      # where() itself reports the mismatch
            self.check_size(math.prod(shape), f"where() of shapes {', '.join(map(str, shapes))}")
        return ops.where(c, x, y)

    def any_(self, x, axis=None, *, keepdims=False):
        return _truth("any", xp().any, x, axis, keepdims)

    def all_(self, x, axis=None, *, keepdims=False):
        return _truth("all", xp().all, x, axis, keepdims)


def _truth(name, reduce, x, axis, keepdims):
    """numpy's any/all: a bool for a whole array (or a number), an array of bools over axis."""
    x = as_array(x)
    if not shape_of(x):
        return bool(ops.read(x))
    axes = reduction_axes(name, x, axis)
    found = reduce(ops.read(x), axis=axes, keepdims=bool(keepdims))
    return bool(found) if found.ndim == 0 else found


def _numeric(name, fn, tuples_are_arrays=True):
    """A math function that names the builtin when given something that is not a number. Every
    argument of a table primitive is an array: a tuple there is the array numpy reads it as.
    numpy's library functions take tuples of axes and shapes too: they read their array
    arguments themselves (numpy_builtins.py). A range is no number anywhere."""
    def op(*args, **kwargs):                   # keywords by numpy's names pass straight through
        for a in args:
            c = a.__class__
            if c is RangeValue:
                raise SourceError("type error", f"{name}() takes numbers or arrays, not {describe(a)}")
            if c in SEQUENCES and tuples_are_arrays:
                args = tuple(as_array(v) for v in args)
        try:
            return fn(*args, **kwargs)
        except TypeError:
            bad = next((a for a in args if not _is_numeric(a)), None)
            if bad is None:
                raise
            raise SourceError("type error", f"{name}() takes numbers or arrays, not {describe(bad)}") from None
    op.__name__ = name
    if hasattr(fn, "accepted_keywords"):       # a library function's keywords (lang/keywords.py)
        op.accepted_keywords = fn.accepted_keywords
    return op


def _shape_and_dtype(shape, dtype, name):
    """(shape, dtype) of zeros/ones: numpy's `zeros((2, 3), float)` gives the dtype second."""
    if dtype is None and len(shape) == 2 and isinstance(shape[1], (DType, Builtin, str)):
        return shape[:1], shape[1]
    return shape, dtype


def _typed(made, dtype, who):
    """A constructor's array in the dtype the program gave (lang/dtypes.py), or as made."""
    return made if dtype is None else cast(made, dtype, who)


def _constants(name, args, what="an argument") -> tuple:
    """`args` of a constructor whose result does not depend smoothly on them (a count, a shape,
    arange's bounds), each traced value among them read as a number where a plain run takes it
    as one (lang/recorded_decisions.py's `constant_of_path`: a box a recording run watches only
    to record it; a guard); any other traced value is an error, never a silent zero gradient."""
    return tuple(_constant(name, a, what) for a in args)


def _constant(name, a, what):
    if isinstance(a, BOXES):
        if constant_of_path(a):
            return ops.read(a)
        raise SourceError("not differentiable", f"{name}(): {what} depends on an input being "
                          "differentiated, but the result does not depend smoothly on it", None,
                          "wrap it in stop_gradient(...) to use its value as a constant")
    if isinstance(a, SEQUENCES) and any(isinstance(v, BOXES) for v in a):
        return a.__class__(_constant(name, v, what) for v in a)
    return a


def _is_numeric(v):
    v = strip(v)
    return isinstance(v, (float, int, bool)) or is_array(v)


def make_builtins(interp) -> dict:
    """The builtins of one interpreter: those that need it (limits, derivatives of functions)
    made for it, beside the shared ones, which are made once per process."""
    from .callables import Builtin
    methods = Builtins(interp)
    table = dict(_shared_builtins())

    def add(name, fn, lo, hi=None, instead=None):
        table[name] = Builtin(name, fn, lo, lo if hi is None else hi, instead)

    add("where", methods.where, 3)
    add("sum", methods.sum, 1, 2)          # keepdims= by keyword only, as numpy
    add("mean", methods.mean, 1, 2)
    add("max", methods.max, 1, 99)
    add("min", methods.min, 1, 99)
    add("reshape", methods.reshape, 2, 99)
    add("arange", methods.arange, 1, 3, instead="makes an array of constants from its bounds and step")
    add("linspace", methods.linspace, 2, 3)
    add("zeros", methods.zeros, 1, 99, instead="reads its argument as a shape")
    add("ones", methods.ones, 1, 99, instead="reads its argument as a shape")
    add("len", methods.len_, 1, instead="counts the rows of its argument")
    add("range", methods.range_, 1, 3, instead="makes the range a for loop counts through")
    add("enumerate", enumerate_items, 1, 2, instead="makes the pairs a for loop takes")   # for i, x in enumerate(xs)
    add("zip", zip_items, 1, 99, instead="makes the pairs a for loop takes")
    add("any", methods.any_, 1, 2)          # keepdims= by keyword only, as numpy
    add("all", methods.all_, 1, 2)
    table.update(transform_builtins(interp))          # grad, value_and_grad, hessian, jvp, vjp
    table.update(rule_builtins(interp))               # custom_vjp, custom_jvp
    add_second_spellings(table)
    return table


# the names of stop_gradient (the tape's cut), and the language's constants: here only (emit
# and the API read them from here)
STOP_GRADIENT = ("stop_gradient", "detach")
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}
_SHARED: dict = {}


def _shared_builtins() -> dict:
    """The builtins that hold no interpreter: the table's primitives, numpy's library functions,
    stop_gradient and the constants. Made once: an interpreter per API call would otherwise make
    some 2,000 objects for them."""
    if _SHARED:
        return _SHARED
    from .callables import Builtin

    def add(name, fn, lo, hi=None):
        _SHARED[name] = Builtin(name, fn, lo, lo if hi is None else hi)

    for prim in builtin_primitives():          # the table's entries the language exposes as is
        for name in filter(None, (prim.builtin, prim.alias)):
            add(name, _numeric(name, prim.op), prim.arity)
    add_library_builtins(add, lambda name, fn: _numeric(name, fn, tuples_are_arrays=False))
    for name in STOP_GRADIENT:
        add(name, noted_stop_gradient, 1)
    _SHARED.update(CONSTANTS)
    _SHARED.update(TYPES)             # numpy's type objects, values dtype= and astype() take
    _SHARED["newaxis"] = None         # numpy's name for None in a subscript: x[:, np.newaxis]
    return _SHARED


def builtin_names() -> frozenset:
    return frozenset(make_builtins(None))
