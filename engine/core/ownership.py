"""Every array the API hands out belongs to its caller alone (docs/design.md, engine convention 9):
no two results, no result and an argument, no result and a later call's result share memory.

The engine does not copy as it goes: a sweep hands the seed on as the adjoint of `x` (so the
gradient of `x` at seed v was v itself), one adjoint reaches two inputs (`sum(x + y)`), a replay's
constant is the same array each call, and the buffer pool lends the large gradients' memory. So
the API's entry points pass what they return through `owned`, once, at the boundary: an array is
handed on as it is where nothing but the result holds it (the common case, a fresh array or a
buffer the pool lent), and copied where anything else does. "Holds" is read from CPython's
reference count, as the buffer pool reads it (core/buffer_pool.py): every name, container,
attribute, view (its `.base`) or memoryview that reaches an array holds a reference to it, so an
array whose count is the result's own reference (and the pool's, for a lent one) is reachable
from nowhere else. A view is kept only where its base is held by result views alone that do not
overlap (two halves of one stacked matrix); a read-only array is copied, so the caller can
write into what it got.

The walk reads a result's `RESULT_FIELDS` (its value and derivatives), dicts, lists and tuples;
`inputs` echo the arguments as bound and are not results."""
from __future__ import annotations

import functools
import sys

from .backend import loaded_np
from .buffer_pool import lent_refs

RESULT_FIELDS = ("value", "gradient", "jacobian", "hessian", "derivatives")
PLAIN = frozenset((float, int, bool, str, type(None)))      # nothing to own: passed over at once
_FIELDS: dict = {}          # a result's class -> the RESULT_FIELDS it declares (none: not a result dataclass)


def _refs(container, key) -> int:
    return sys.getrefcount(container[key])


# the count of an array only a container holds, read the same way (measured on this interpreter)
ALONE = _refs({0: object()}, 0)


def _others(container, key) -> int:
    """How many references to `container[key]` there are besides the container's (and the pool's)."""
    return _refs(container, key) - ALONE - lent_refs(container[key])


class _Walk:
    def __init__(self, numpy):
        self.numpy = numpy
        self.views: dict = {}           # id(base) -> [(container, key), ...] of the views kept so far
        self.bases: dict = {}           # id(base) -> base

    def visit(self, container, key, slack=0) -> None:
        """Own `container[key]` (`slack`: references to it the caller knows of, a tuple's)."""
        item = container[key]
        cls = item.__class__
        if cls is dict:
            for k in list(item):
                if item[k].__class__ not in PLAIN:
                    self.visit(item, k)
        elif cls is list:
            for k in range(len(item)):
                if item[k].__class__ not in PLAIN:
                    self.visit(item, k)
        elif cls is tuple:
            items = list(item)
            del item
            for k in range(len(items)):
                self.visit(items, k, slack=1)
            container[key] = tuple(items)
        elif isinstance(item, self.numpy.ndarray):
            del item
            self.array(container, key, slack)

    def array(self, container, key, slack) -> None:
        a = container[key]
        if _others(container, key) - 1 - slack > 0 or not a.flags.writeable:     # 1: `a`
            container[key] = a.copy()
        elif a.base is not None:
            base = a.base
            if base.__class__ is not self.numpy.ndarray or base.base is not None:
                container[key] = a.copy()           # a base numpy did not make (a buffer, a file)
            else:
                self.bases[id(base)] = base
                self.views.setdefault(id(base), []).append((container, key))

    def views_apart(self) -> None:
        """Keep the views whose base only they hold, copying any that overlaps one kept before it."""
        held = {ident: _others(self.bases, ident) > len(places) for ident, places in self.views.items()}
        for ident, places in self.views.items():
            kept = []
            for container, key in places:
                a = container[key]
                if held[ident] or a.base is not self.bases[ident] or any(self.numpy.shares_memory(a, b) for b in kept):
                    container[key] = a.copy()
                else:
                    kept.append(a)


def _plain(v) -> bool:
    """Whether `v` holds no array (a number, or a dict or list of numbers: a scalar gradient)."""
    cls = v.__class__
    if cls in PLAIN:
        return True
    if cls is dict:
        v = v.values()
    elif cls is not list:
        return False
    for x in v:
        if x.__class__ not in PLAIN:
            return False
    return True


def owned(result):
    """`result` (a result dataclass, a dict, a list or a tuple of them), every array it hands out
    its caller's alone: copied where anything else can reach its memory. A tuple comes back as a
    new tuple; the rest are changed in place and returned."""
    numpy = loaded_np()
    if numpy is None:                       # no array was ever made (the scalar path loads no numpy)
        return result
    declared = _FIELDS.get(result.__class__)
    if declared is None:
        declared = _FIELDS[result.__class__] = tuple(
            name for name in RESULT_FIELDS if name in getattr(result, "__dataclass_fields__", ()))
    fields = result.__dict__ if declared else None
    if fields is not None:
        names = []
        for name in declared:
            v = fields.get(name)
            if v.__class__ not in PLAIN and not _plain(v):
                names.append(name)
        del v                               # (a reference of its own would count as another holder)
        if not names:                       # numbers only (a scalar run): nothing to own
            return result
    elif _plain(result):
        return result
    walk = _Walk(numpy)
    holder = [result]
    del result
    if fields is not None:
        for name in names:
            walk.visit(fields, name)
    else:
        walk.visit(holder, 0)
    walk.views_apart()
    return holder[0]


def handing_out(fn):
    """`fn`, what it returns passed through `owned`: an entry point of the API."""
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        return owned(fn(*args, **kwargs))
    return entry
