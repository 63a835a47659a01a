"""numpy's in-place writes under the language's value semantics: a read that would differ is an error.

The language's item assignment (`x[i] = v`, `x[i] += v`), augmented assignment of an array or a
list (`x += v`), `d[k] = v` and `lst.append(v)` rebind the name to an updated copy: the tape keeps
every value a derivative reads, so nothing is written in place. Python and numpy write in place:
every other name that holds the same object, a view of the written elements (`b = a[0:2]`,
`a.T`, `x.reshape(...)`, a row of `for row in A`) or a list or dict holding either sees the
write, in the caller's frames too (`def update(w): w -= g`). So at each such write, every other
name of the running calls and of the module whose value numpy would change is rebound to a `Stale`
value (a list or dict holding one: a copy holding one), which any use refuses, naming the write: a
program that reads it gets an error where numpy would give another answer; one that rebinds it
first, or never reads it, runs as before. Which memory a write reaches is numpy's own answer on
the run's arrays (np.shares_memory of the written elements); after a write the written name's copy
carries the old buffers as shadows, so a later write to it still reaches the views made before.
Writes through fancy or boolean indexes count the whole array as written (a view of elements the
index did not touch is then refused too: the one approximation)."""
from __future__ import annotations

from ...parser.errors import SourceError
from ..core.backend import is_array, xp
from ..core.tape import Dual, Var

HINT = ("where it should keep its values, copy it before the write (`y = x.copy()`); where it should see the "
        "write, take it again after it (a function that writes its argument: return the new value, `w = step(w)`)")


class Stale:
    """The value of a name numpy would have changed in place: reading the name, or any use of the
    value (an item of a list or dict), is an error naming the write."""
    __slots__ = ("message",)

    def __init__(self, message):
        self.message = message

    def read(self, name, span) -> SourceError:
        """The error of reading `name` (at `span`), whose value this is."""
        return SourceError("stale value", f"`{name}` {self.message}", span, HINT)

    def refuse(self, *args, **kwargs):
        raise SourceError("stale value", f"this value {self.message}", None, HINT)

    __bool__ = __len__ = __iter__ = __getitem__ = __float__ = __int__ = __index__ = __complex__ = refuse
    __array__ = __array_ufunc__ = __array_function__ = __neg__ = __pos__ = __abs__ = __invert__ = refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = refuse
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = refuse
    __hash__ = None

    def __getattr__(self, name):
        self.refuse()

    def __repr__(self):
        return "<stale value>"


def _raw(v):
    """The array under a value (a box's), or None for anything that is not an array of one axis or more."""
    c = v.__class__
    if c is Var:
        v = v.value
    elif c is Dual:
        while v.__class__ is Dual:
            v = v.primal
        if v.__class__ is Var:
            v = v.value
    return v if is_array(v) and v.ndim >= 1 else None


def in_place(v) -> bool:
    """Whether numpy's augmented assignment writes v in place: an array of one axis or more."""
    return _raw(v) is not None


def _root(a):
    """The array owning a's memory (numpy's base chain, to its last array)."""
    while is_array(a.base):
        a = a.base
    return a


def _region(raw, index):
    """The elements a write at `index` reaches, as a view where numpy's basic indexing makes one
    (a whole-number index: the 0-d view of that element); the whole array for a fancy index."""
    if index is None:
        return raw
    try:
        region = raw[(*index, Ellipsis) if index.__class__ is tuple else (index, Ellipsis)]
    except (IndexError, TypeError, ValueError):
        return raw
    return region if is_array(region) and region.base is not None else raw


class Writes:
    """One run's record of the in-place writes numpy would make: the call stack's frames (pushed by
    the interpreter's calls) and, per written name's new value, the old buffers it stands for."""

    def __init__(self):
        self.frames: list = []
        self.shadows: dict = {}        # id(new value) -> (new value, [old arrays of its elements])

    def written(self, frame, name, old, index, line, how, globals_frame):
        """`name` (in `frame`) is about to be rebound to an updated copy of `old` by a write at
        `index` (None: all of it) on source line `line`: every other name numpy would change is
        made Stale. Returns what the new value's shadows must be (give them to `rebound`)."""
        raw = _raw(old)
        regions = []
        if raw is not None:
            regions.append(_region(raw, index))
            regions += [_region(s, index) for s in self._shadows_of(old)]
        roots = {id(_root(r)) for r in regions}
        message = (f"was changed at line {line} by {how}: in Python and numpy it is, views or holds what that "
                   f"`{name}` is, which they write in place; the language wrote a copy, so numpy would read other "
                   "values here")
        survivors = False
        for f in self._visible(frame, globals_frame):
            for n, v in list(f.vars.items()):
                if f is frame and n == name:
                    continue
                changed = self._changed(v, old, regions, roots, message)
                if changed is True:
                    f.vars[n] = Stale(message)
                elif changed is not None:
                    f.vars[n] = changed
                elif raw is not None and not survivors:
                    rv = _raw(v)
                    survivors = rv is not None and id(_root(rv)) in roots
        return [raw] + self._shadows_of(old) if survivors else []

    def rebound(self, new, shadows):
        """The new value of a written name, standing for the old buffers `shadows` (views of which
        other names still hold)."""
        if shadows:
            self.shadows[id(new)] = (new, shadows)

    def _shadows_of(self, value):
        entry = self.shadows.get(id(value))
        return list(entry[1]) if entry is not None and entry[0] is value else []

    def _visible(self, frame, globals_frame):
        seen, out = set(), []
        for f in [*self.frames, frame, globals_frame]:
            while f is not None:
                if id(f) not in seen:
                    seen.add(id(f))
                    out.append(f)
                f = f.parent
        return out

    def _changed(self, v, old, regions, roots, message, depth=0):
        """True where numpy's write changes v itself (it is `old`, or an array sharing the written
        memory); a copy of a list, tuple or dict with such items made Stale; None where it does not."""
        if v is old:
            return True
        c = v.__class__
        if c is list or c is tuple:
            items = [self._changed(x, old, regions, roots, message, depth + 1) if depth < 8 else None for x in v]
            if all(x is None for x in items):
                return None
            return c(Stale(message) if x is True else v[k] if x is None else x for k, x in enumerate(items))
        if c is dict:
            items = {k: self._changed(x, old, regions, roots, message, depth + 1) if depth < 8 else None for k, x in v.items()}
            if all(x is None for x in items.values()):
                return None
            return {k: Stale(message) if x is True else v[k] if x is None else x for k, x in items.items()}
        rv = _raw(v)
        if rv is None or id(_root(rv)) not in roots:
            return None
        return True if any(bool(xp().shares_memory(rv, r)) for r in regions) else None
