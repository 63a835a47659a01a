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

import sys

from ...parser.errors import SourceError
from ..core.backend import is_array, xp
from ..core.lazy import peek
from ..core.tape import PEEKS, Dual, Var
from .callables import Builtin, UserFunction
from .names import walk

HINT = ("where it should keep its values, copy it before the write (`y = x.copy()`); where it should see the "
        "write, take it again after it (a function that writes its argument: return the new value, `w = step(w)`)")


class Stale:
    """The value of a name numpy would have changed in place: reading the name, or any use of the
    value (an item of a list or dict), is an error naming the write."""
    __slots__ = ("message",)

    def __init__(self, message):
        self.message = message

    def read(self, name, span) -> SourceError:
        """The error of reading `name` (at `span`; None: an item of a list or dict), whose value
        this is."""
        return SourceError("stale value", f"{f'`{name}`' if name else 'this item'} {self.message}", span, HINT)

    def refuse(self, *args, **kwargs):
        """Any use of the value itself (an item of a list or dict read by a builtin, an operator)."""
        raise self.read(None, None)

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


# values no write in place reaches (numbers, strings, functions, the language's own)
SKIPPED = frozenset((float, int, bool, str, type(None), UserFunction, Builtin))


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
    """Whether numpy's augmented assignment writes v in place: an array of one axis or more (a
    pending one's shape says so: core/lazy.py; it is not computed for the question)."""
    if v.__class__ is Var:
        equation = pending(v)
        if equation is not None:
            return len(equation.shape) >= 1
    return _raw(v) is not None


def pending(v):
    """The equation of a pending Var (core/lazy.py), else None. A pending value is an array of
    its own (no view of another's memory, none made of it yet): only the same object is it."""
    return peek(v) if v.__class__ is Var and v.tape is not None and v.tape.pending else None


def _root(a):
    """The array owning a's memory (numpy's base chain, to its last array; numpy makes a view's base
    the owner already, so this is mostly one step)."""
    base = a.base
    while base is not None and is_array(base):
        a, base = base, base.base
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


# the roots (ids of the arrays owning memory) of which the program has made a view (a slice, a
# transpose, a reshape, a row): a write elsewhere needs no search of the frames (lang/aliases.py)
VIEWED: set = set()


def writes_in_place(module) -> bool:
    """Whether a module writes anything numpy would write in place (an item assignment, an
    augmented assignment, `.append`): without one, no name can go stale, and the interpreter
    compiles its calls and subscripts without noting views (lang/interp.py compile_module)."""
    from ...parser import nodes
    for x in walk(module):
        if isinstance(x, (nodes.SubscriptAssign, nodes.AugAssign)):
            return True
        if isinstance(x, nodes.Attribute) and x.attr == "append":
            return True
    return False


def note(value):
    """A value the language hands the program, which may be a view of another's memory: its root is
    remembered (a list's or tuple's items too). Returns the value. (On every subscript and builtin
    call: a number or an array that owns its memory costs an attribute read.)"""
    c = value.__class__
    if c is Var:
        raw = value.value
    elif c is float or c is int or c is bool:
        return value
    elif c is list or c is tuple:
        for v in value:
            note(v)
        return value
    else:
        raw = value
    base = getattr(raw, "base", None)
    if base is not None and is_array(base):
        VIEWED.add(id(_root(base)))
    return value


def _same(value):
    return value


def noting(may_write):
    """What a call or a subscript hands its result to: `note` where the program writes in place
    (lang/interp.py's may_write), else the result as it is (no view can matter)."""
    return note if may_write else _same


def note_rows(value):
    """An array whose rows a loop takes (each row a view of it)."""
    raw = _raw(value)
    if raw is not None and raw.ndim >= 2:
        VIEWED.add(id(_root(raw)))


def _own_references() -> int:
    """What sys.getrefcount reports for an object held by one dict and passed as one parameter (the
    interpreter's own references, measured on this Python): the written value's baseline."""
    d = {"n": object()}

    def written(old):
        return sys.getrefcount(old)
    return written(d["n"])


HELD = _own_references()


class Writes:
    """One run's record of the in-place writes numpy would make: the call stack's frames (pushed by
    the interpreter's calls) and, per written name's new value, the old buffers it stands for."""

    def __init__(self):
        self.frames: list = []
        self.shadows: dict = {}        # id(new value) -> (new value, [old arrays of its elements])
        self.searches = 0              # writes that searched the frames (tests and benchmarks)

    def start(self):
        """A run's first call: no frame, no shadow, no view noted yet."""
        self.frames.clear()
        self.shadows.clear()
        VIEWED.clear()

    def written(self, frame, name, old, index, line, how, globals_frame, own=1, held=None):
        """`name` (in `frame`) is about to be rebound to an updated copy of `old` by a write at
        `index` (None: all of it) on source line `line`: every other name numpy would change is
        made Stale. Returns what the new value's shadows must be (give them to `rebound`). `own`:
        the references the caller's locals hold to `old` (beyond the frame's and this call's);
        `held`: the caller's own count, taken before a step of its own held `old`.
        Nothing is searched where no one else holds `old` (its reference count) and its memory has
        no view the program made and no shadow."""
        if held is None:
            held = sys.getrefcount(old)             # (before `raw`, which may be `old` itself)
        else:
            held += HELD - 1                        # a count the caller took (its `old` and its frame's)
        if held <= HELD + own and id(old) not in self.shadows and pending(old) is not None:
            return []                               # (not computed for the question)
        raw = _raw(old)
        if held <= HELD + own and id(old) not in self.shadows and (raw is None or id(_root(raw)) not in VIEWED):
            return []
        self.searches += 1
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
            d = f.vars
            for n, v in list(d.items()):
                c = v.__class__
                if c in SKIPPED or (f is frame and n == name):
                    continue                                  # numbers, functions: nothing numpy writes
                changed = self._changed(v, old, regions, roots, message)
                if changed is True:
                    d[n] = Stale(message)
                elif changed is not None:
                    d[n] = changed
                elif raw is not None and not survivors and c not in (list, tuple, dict) and pending(v) is None:
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
        if c is float or c is int or c is bool or c is str or v is None or pending(v) is not None:
            return None
        rv = _raw(v)
        if rv is None or id(_root(rv)) not in roots:
            return None
        m = xp()
        return True if any(m.may_share_memory(rv, r) and m.shares_memory(rv, r) for r in regions) else None


# a pending value (core/lazy.py) is fresh, never a view: `note` peeks at it rather than force it
# (`_raw` forces it: a write's search reads the arrays themselves)
PEEKS.add(note.__code__)
