"""The tape (a Wengert list in execution order), the boxes that trace values, and `bind`.

A traced value is a box at a *level*: `Var` for reverse mode (recorded on a Tape) and `Dual` for
forward mode (a primal with its tangent). Nested differentiation makes boxes of boxes; `bind`
always peels the highest level first, so `d/dx (x * d/dy (x + y))` is 1, not 2 (no perturbation
confusion). Derivative rules are written in engine ops, so when an outer level is active the
reverse sweep itself is recorded: that is how Hessians and n-th derivatives come about.
"""
from __future__ import annotations

import weakref

from . import finite_known
from .accumulate import accumulate
from .errors import TapeTooLong
from .notes import NOTES, READS

_level = [0]
# level -> its forward-mode step while that level's Duals carry stacked tangents (core/batch.py)
BATCHED: dict = {}
# name -> the table entry with fused VJP kernels, for elementwise primitives over arrays (core/fused.py)
FUSED_RULES: dict = {}


def new_level() -> int:
    _level[0] += 1
    return _level[0]


class Var:
    """A value recorded on a tape (reverse mode). Operators are installed by `ops`."""
    __slots__ = ("value", "tape", "index", "level")

    def __init__(self, value, tape, index, level):
        self.value = value
        self.tape = tape
        self.index = index
        self.level = level

    def __repr__(self):
        return f"Var(n{self.index}={self.value!r}, level={self.level})"

    def __bool__(self):
        return bool(strip(self))


class Dual:
    """A primal value and its tangent (forward mode, figure D-2's dual numbers)."""
    __slots__ = ("primal", "tangent", "level")

    def __init__(self, primal, tangent, level):
        self.primal = primal
        self.tangent = tangent
        self.level = level

    def __repr__(self):
        return f"Dual({self.primal!r} + {self.tangent!r}ε, level={self.level})"

    def __bool__(self):
        return bool(strip(self))


BOXES = (Var, Dual)


def strip(v):
    """The raw value under every box (what `stop_gradient` returns)."""
    c = v.__class__
    while c is Var or c is Dual:
        v = v.value if c is Var else v.primal
        c = v.__class__
    return v


def read(v):
    """The raw value under every box, read as a plain number: how a composite (core/library)
    takes a number out of a traced value that no tape records (a count, a sort order, a mask, a
    shift), its type checks included. A run that records a trace for replay hears of each box
    read (READS.hook): a replay would reuse the number. `strip` is for values a rule records."""
    hook = READS.hook
    if hook is not None and _holds_box(v):
        hook(v)
    return strip(v)


def _holds_box(v) -> bool:
    c = v.__class__
    if c is Var or c is Dual:
        return True
    return (c is tuple or c is list) and any(_holds_box(x) for x in v)


class Entry:
    """One recorded primitive application. `args` holds what the rule needs (values, or shapes)."""
    __slots__ = ("prim", "parents", "args", "ans", "params", "span", "value")

    def __init__(self, prim, parents, args, ans, params, span, value):
        self.prim = prim          # None for a watched input (a leaf)
        self.parents = parents    # ((position, tape index), ...) of the traced arguments
        self.args = args
        self.ans = ans            # the output, kept only when the rule uses it
        self.params = params
        self.span = span
        self.value = value        # the output for graph views (persistent tapes only), else None


class Tape:
    """The Wengert list. `persistent=False` frees each entry as the reverse sweep passes it
    (TensorFlow's GradientTape semantics); persistent tapes can be swept many times (Jacobians)
    and keep node values for the graph views."""

    def __init__(self, persistent: bool = False, keep_values: bool = False):
        self.level = new_level()
        self.entries: list = []
        LIVE_TAPES.add(self)
        self.persistent = persistent
        self.keep_values = keep_values

    def watch(self, value, span=None) -> Var:
        var = Var(value, self, len(self.entries), self.level)
        self.entries.append(Entry(None, (), (), None, None, span, value))
        return var

    def __len__(self):
        return len(self.entries)


# Every tape still alive, so a limit on recorded entries can be checked now and then (by the
# interpreter's loops, and after each nested derivative) instead of on each record.
LIVE_TAPES = weakref.WeakSet()


def check_entries(limit: int | None) -> None:
    """TapeTooLong if the live tapes hold more than `limit` entries in all."""
    if limit is None:
        return
    total = sum(len(tape.entries) for tape in LIVE_TAPES)
    if total > limit:
        raise TapeTooLong(f"the program recorded more than {limit:,} operations on its tapes ({total:,}): "
                          "an endless loop, or a derivative that grows too fast?")


class Shape:
    """Stands in for an argument whose rule needs only its shape (add, sub, sum...)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)


def saved_args(prim, vals):
    """What an entry keeps of its arguments: the values if the rule reads them, else numbers as
    they are and `Shape` stand-ins for arrays."""
    if prim.needs_args:
        return vals
    return tuple(_saved_shape(v) for v in vals)


def record(prim, tape, level, parents, args, ans, params=None) -> Var:
    """Append one primitive application to the tape; returns its output box. The one place an
    entry is made (bind and the float fast paths of `ops` both call it)."""
    entries = tape.entries
    out = Var(ans, tape, len(entries), level)
    entries.append(Entry(prim, parents, args, ans if prim.needs_ans else None, params, NOTES.span,
                         ans if tape.keep_values else None))
    return out


def record_reads(prim, tape, level, parents, vals, ans, params) -> Var:
    """Record keeping only what the VJPs of the traced positions read (`Primitive.reads`):
    `sin(x) * 3.0` keeps 3.0, not sin(x). Graph tapes (keep_values) keep everything."""
    keep, keep_ans = set(), False
    reads = prim.reads
    for pos, _ in parents:
        positions, reads_ans = reads[pos]
        keep.update(positions)
        keep_ans = keep_ans or reads_ans
    args = tuple(v if i in keep else _saved_shape(v) for i, v in enumerate(vals))
    entries = tape.entries
    out = Var(ans, tape, len(entries), level)
    if not keep_ans and ans.__class__ is float and prim.needs_ans:
        keep_ans = True                                # a float costs nothing: as the scalar path
    entries.append(Entry(prim, parents, args, ans if keep_ans else None, params, NOTES.span, None))
    return out


def _saved_shape(v):
    c = v.__class__
    if c is float or c is int or c is bool:
        return v
    sv = strip(v)
    return Shape(getattr(sv, "shape", ()), getattr(sv, "dtype", None))


def bind(prim, args: tuple, params):
    """Apply a primitive to arguments that may be boxed (the tracing dispatcher)."""
    level = -1
    top = None
    for a in args:
        c = a.__class__
        if (c is Var or c is Dual) and a.level > level:
            level = a.level
            top = a
    if top is None:
        return prim.impl(*args, **params) if params else prim.impl(*args)
    if prim.nondiff:
        return bind(prim, tuple(strip(a) for a in args), params)

    notes = NOTES
    noted = len(notes.kinks)
    if top.__class__ is Var:
        vals = tuple(a.value if (a.__class__ is Var and a.level == level) else a for a in args)
        ans = bind(prim, vals, params)
        if len(notes.kinks) != noted:               # a kink met on a traced value
            notes.traced_since(noted)
        vjps = prim.vjps
        parents = tuple((i, a.index) for i, a in enumerate(args)
                        if a.__class__ is Var and a.level == level and vjps[i] is not None)
        if not parents:
            return ans
        tape = top.tape
        if prim.elementwise and FUSED_RULES and ans.__class__ is not float and not tape.keep_values:
            prim = FUSED_RULES.get(prim.name, prim)
        if prim.reads is not None and not tape.keep_values:
            return record_reads(prim, tape, level, parents, vals, ans, params)
        return record(prim, tape, level, parents, saved_args(prim, vals), ans, params)

    # forward mode: push tangents through the JVP rules
    out = BATCHED[level](prim, args, params) if BATCHED and level in BATCHED else \
        push_tangents(prim, args, params, level)
    if len(notes.kinks) != noted:                   # a kink met on a traced value (or by its JVP)
        notes.traced_since(noted)
    return out




def push_tangents(prim, args, params, level):
    """Forward mode's step at `level`: the primal result, and the sum over the Dual arguments of
    their JVP rules, in argument order (core/batch.py's stacked bind and diff/replay_tangents.py
    sum lifted JVPs in the same order)."""
    primals = tuple([a.primal if (a.__class__ is Dual and a.level == level) else a for a in args])
    ans = bind(prim, primals, params)
    tangent = None
    jvps = prim.jvps
    for i, a in enumerate(args):
        if a.__class__ is Dual and a.level == level and jvps[i] is not None:
            rule = jvps[i]
            t = rule(a.tangent, ans, *primals, **params) if params else rule(a.tangent, ans, *primals)
            tangent = t if tangent is None else tangent + t
    if tangent is None:
        return ans
    return Dual(ans, tangent, level)


SWEEP_CHUNK = 2048        # entries swept between two calls of a sweep's `check` (the limits)


def backward(tape: Tape, out, seed, stop_at: int = 0, check=None) -> list:
    """Sweep the tape from `out` back to the start; returns the list of adjoints by tape index
    (None where nothing flowed: a symbolic zero). Adjoints accumulate with `+`, which records on
    any outer tape, so the sweep is itself differentiable. `check()`, if given, is called after
    every SWEEP_CHUNK entries while more remain: a nested sweep records on the outer tapes, and
    its limits must hold during the sweep, not only after it."""
    entries = tape.entries
    adj = [None] * len(entries)
    finite_known.clear()                               # what an earlier sweep tested is not trusted
    if out.__class__ is not Var or out.tape is not tape:
        return adj                                     # the output does not depend on the inputs
    adj[out.index] = seed
    free = not tape.persistent
    top = out.index
    noted = len(NOTES.kinks)
    if check is not None:
        while top - SWEEP_CHUNK >= stop_at:
            sweep(entries, adj, top, top - SWEEP_CHUNK + 1, free)
            top -= SWEEP_CHUNK
            check()
    sweep(entries, adj, top, stop_at, free)
    if len(NOTES.kinks) != noted:                      # a rule's kink (norm's): of a traced op
        NOTES.traced_since(noted)
    return adj


def sweep(entries: list, adj: list, top: int, bottom: int, free: bool) -> None:
    """The reverse sweep over entries top, top-1, ..., bottom: adjoints flow to the parents."""
    for i in range(top, bottom - 1, -1):
        g = adj[i]
        if g is None:
            if free:
                entries[i] = None
            continue
        e = entries[i]
        prim = e.prim
        if prim is None:                               # a leaf keeps its adjoint
            continue
        NOTES.span = e.span
        args = e.args
        params = e.params
        ans = e.ans
        vjps = prim.vjps
        for pos, j in e.parents:
            contrib = vjps[pos](g, ans, *args, **params) if params else vjps[pos](g, ans, *args)
            prev = adj[j]
            if prev is None:
                adj[j] = contrib
            elif prev.__class__ is float:
                adj[j] = prev + contrib
            else:                                      # an array: in place where the sweep owns it
                prev = None
                adj[j] = accumulate(adj[j], contrib)
        adj[i] = None
        if free:
            entries[i] = None
