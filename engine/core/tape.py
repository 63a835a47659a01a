"""The tape (a Wengert list in execution order), the boxes that trace values, and `bind`.

A tape's entries are the equations of the run's Program (core/program.py): each `Entry` a
primitive, its inputs by equation position, its static arguments and parameters, its span; the
replay, its sweep plan and its Hessian plan read these same entries (diff/replay.py).

A traced value is a box at a *level*: `Var` for reverse mode (recorded on a Tape) and `Dual` for
forward mode (a primal with its tangent). Nested differentiation makes boxes of boxes; `bind`
always peels the highest level first, so `d/dx (x * d/dy (x + y))` is 1, not 2 (no perturbation
confusion). Derivative rules are written in engine ops, so when an outer level is active the
reverse sweep itself is recorded: that is how Hessians and n-th derivatives come about.
"""
from __future__ import annotations

import sys
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
# core/lazy.py once loaded (it registers itself): pending values of elementwise equations
LAZY: list = [None]
# the code of the functions that read a Var's value only to send what is no float to `bind`
# (core/primitives.py's ops, its shape helper): a pending value is peeked at there, not forced
PEEKS: set = set()


def new_level() -> int:
    _level[0] += 1
    return _level[0]


class Var:
    """A value recorded on a tape (reverse mode). Operators are installed by `ops`."""
    __slots__ = ("value", "tape", "index", "level", "__weakref__")

    def __init__(self, value, tape, index, level):
        self.value = value
        self.tape = tape
        self.index = index
        self.level = level

    def __repr__(self):
        return f"Var(n{self.index}={self.value!r}, level={self.level})"

    def __bool__(self):
        return read(self, bool)



def _read_pending(self, name):
    """Var.__getattr__ while a tape holds pending values (core/lazy.py): only a pending value's
    `value` slot is unset, and reading it forces the value, so no number is read that was not
    computed. The ops' float fast paths and the one shape helper (registered in PEEKS) are handed
    the pending equation instead: it has a shape and a dtype and no numbers, and they send it on
    to `bind`. Installed only while some tape may hold one (`reading_pending`): a class with a
    __getattr__ is one CPython 3.11 does not specialize attribute reads for (every `.value`,
    `.tape`, `.index` read of a scalar run 25% slower to interpret)."""
    if name != "value" or LAZY[0] is None:
        raise AttributeError(name)
    if sys._getframe(1).f_code in PEEKS:
        peeked = LAZY[0].peek(self)
        if peeked is not None:
            return peeked
    value = LAZY[0].force_var(self)
    self.value = value
    return value


def reading_pending(on: bool) -> None:
    """Install (on) or remove Var's __getattr__ (`_read_pending`)."""
    if on:
        Var.__getattr__ = _read_pending
    elif "__getattr__" in Var.__dict__:
        del Var.__getattr__


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
        return read(self, bool)


BOXES = (Var, Dual)


def strip(v):
    """The raw value under every box (what `stop_gradient` returns)."""
    c = v.__class__
    while c is Var or c is Dual:
        v = v.value if c is Var else v.primal
        c = v.__class__
    return v


def read(v, take=None, opname=""):
    """The raw value under every box, read as a plain number, or `take` of it: how a composite
    (core/library) or the interpreter takes a number out of a traced value that no tape records
    (a count, a sort order, a mask, a shift, an index), its type checks included. A run that
    records a trace for replay hears of each box read (READS.hook), with `take` (which must
    give the same result on the same raw value): its replay checks that the new inputs give the
    same result, else the path changed. `strip` is for values a rule records."""
    raw = strip(v)
    if take is not None:
        raw = take(raw)
    hook = READS.hook
    if hook is not None and _holds_box(v):
        hook(v, raw, take, opname, None)
    return raw


def _holds_box(v) -> bool:
    c = v.__class__
    if c is Var or c is Dual:
        return True
    return (c is tuple or c is list) and any(_holds_box(x) for x in v)


class Entry:
    """One recorded primitive application: an equation of the Program (core/program.py). `args`
    holds what the rule needs (values, or shapes)."""
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
        # pending equations (core/lazy.py), only on a plain tape: position -> its equation, and
        # the regions forced so far (root position -> its region)
        self.lazy = not persistent and not keep_values
        # a value's run (diff/reverse.py's evaluate): no sweep follows, regions run their forward
        # kernels alone (core/lazy.py)
        self.values_only = False
        self.pending: dict = {}
        self.watched_pending = False        # core/lazy.py counts it while it lives (Var.__getattr__)
        self.inside: set = set()            # the positions forced so far, in a region or apart
        self.groups: dict = {}

    def watch(self, value, span=None) -> Var:
        if value.__class__ is Var or value.__class__ is Dual:
            # a tape over boxes (a nested derivative's, a derivative inside a program): what it
            # records from them are boxes of the level below, never an array that may pend
            self.lazy = False
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
    return tuple(saved_stand_in(v) for v in vals)


def kept_args(prim, vals, parents) -> tuple:
    """saved_args on a tape that keeps its values (a trace's, a graph's): the constants as they
    are, so that a replay can run the step again (a traced argument is its parent's value)."""
    return vals if prim.needs_args else _traced_as_stand_ins(vals, parents)


def recorded_constants(equation) -> tuple:
    """An equation's arguments as a kept Program holds them (core/program.py's `seal`): its
    constants as they are, each traced argument's recorded value as its `saved_stand_in` (a
    replay reads its parent's value there, never the recorded one)."""
    return _traced_as_stand_ins(equation.args, equation.parents) if equation.parents else equation.args


def _traced_as_stand_ins(vals, parents) -> tuple:
    """`vals` with the traced positions' values as their `saved_stand_in`."""
    args = list(vals)
    for pos, _ in parents:
        args[pos] = saved_stand_in(args[pos])
    return tuple(args)


def record(prim, tape, level, parents, args, ans, params=None) -> Var:
    """Append one primitive application to the tape; returns its output box. The one place an
    entry is made (bind and the float fast paths of `ops` both call it)."""
    entries = tape.entries
    out = Var(ans, tape, len(entries), level)
    entries.append(Entry(prim, parents, args, ans if prim.needs_ans else None, params, NOTES.span,
                         ans if tape.keep_values else None))
    return out


def plain_entry(prim, parents, vals, ans, params) -> Entry:
    """The entry a tape that keeps no values records for a primitive's application (`bind`'s,
    and core/lazy.py's for a pending equation forced alone): an elementwise primitive over
    arrays as its fused entry (FUSED_RULES), keeping what the VJPs of the traced positions read
    (`vjp_reads`: `sin(x) * 3.0` keeps 3.0, not sin(x)), numbers as they are, `Shape` stand-ins
    for the other arrays: `lean_args`' arguments, written out here for the hot path (a call an
    entry is 3% of a nested derivative; tests/test_lean_tape.py pins the two equal over the
    table). Graph tapes (keep_values) keep everything (`kept_args`)."""
    if prim.elementwise and FUSED_RULES and ans.__class__ is not float:
        prim = FUSED_RULES.get(prim.name, prim)
    reads = prim.reads
    if reads is None:
        return Entry(prim, parents, saved_args(prim, vals), ans if prim.needs_ans else None, params, NOTES.span, None)
    positions, keep_ans = reads[parents[0][0]] if len(parents) == 1 else vjp_reads(prim, parents)
    args = tuple(v if i in positions or v.__class__ is float else saved_stand_in(v) for i, v in enumerate(vals))
    if not keep_ans and ans.__class__ is float and prim.needs_ans:
        keep_ans = True                                # a float costs nothing: as the scalar path
    return Entry(prim, parents, args, ans if keep_ans else None, params, NOTES.span, None)


def vjp_reads(prim, traced) -> tuple:
    """(argument positions, whether the output) that the VJPs of the traced positions `traced`
    ((position, parent), ...) read, by the table's facts: the entry's `reads` per position where
    it states them, else every argument where it `needs_args` (None: all of them) and the output
    where it `needs_ans`. What a lean tape keeps (`plain_entry`) and what a replay may not
    release before its sweep (diff/replay_release.py) are both this."""
    reads = prim.reads
    if reads is None:
        return (None if prim.needs_args else frozenset()), prim.needs_ans
    if len(traced) == 1:                        # (one traced argument: its entry's fact as it is)
        return reads[traced[0][0]]
    if len(traced) == len(reads):               # (every argument traced: the entry's union)
        return prim.reads_all
    positions, reads_ans = frozenset(), False
    for pos, _ in traced:
        read, by_ans = reads[pos]
        positions = positions | read
        reads_ans = reads_ans or by_ans
    return positions, reads_ans


def lean_args(prim, traced, vals) -> tuple:
    """What a lean tape keeps of a step's arguments `vals` whose traced positions are `traced`:
    those their VJPs read (vjp_reads) as they are, numbers as they are, `Shape` stand-ins for the
    other arrays (saved_args, where the entry states no `reads`): `plain_entry`'s arguments, for a
    replay's sweep plan."""
    positions = vjp_reads(prim, traced)[0]
    if positions is None:
        return vals
    return tuple(v if i in positions else saved_stand_in(v) for i, v in enumerate(vals))


def as_is(v) -> bool:
    """Whether a saved argument keeps `v` as it is (a Python number), not a `Shape` stand-in."""
    c = v.__class__
    return c is float or c is int or c is bool


def saved_stand_in(v):
    """What a saved argument keeps of `v` where its VJPs read not its value: `v` itself where it is
    a Python number (`as_is`, spelled out here: the hot path), else a `Shape` stand-in."""
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
        raw = tuple(strip(a) for a in args)
        ans = prim.impl(*raw, **params) if params else prim.impl(*raw)
        if READS.hook is not None:              # a value no derivative follows: read as a number
            READS.hook(args, ans, Applied(prim, params), "", None)
        return ans

    notes = NOTES
    noted = len(notes.kinks)
    if top.__class__ is Var:
        if prim.elementwise and top.tape.lazy and LAZY[0] is not None and LAZY[0].may_pend(args, top.tape):
            out = LAZY[0].defer(prim, args, params, level, top.tape)
            if out is not None:
                return out
        vals = tuple(a.value if (a.__class__ is Var and a.level == level) else a for a in args)
        # the values one level down: by the primitive's op where it has a float fast path (the
        # first tape of a nested derivative over a number records there, without a bind)
        ans = prim.float_op(*vals) if prim.float_op is not None and not params else bind(prim, vals, params)
        if len(notes.kinks) != noted:               # a kink met on a traced value
            notes.traced_since(noted)
        vjps = prim.vjps
        parents = tuple((i, a.index) for i, a in enumerate(args)
                        if a.__class__ is Var and a.level == level and vjps[i] is not None)
        if READS.hook is not None:
            _read_underived(args, vjps, level)
        if not parents:
            return ans
        tape = top.tape
        if not tape.keep_values:
            entries = tape.entries
            out = Var(ans, tape, len(entries), level)
            entries.append(plain_entry(prim, parents, vals, ans, params))
            return out
        return record(prim, tape, level, parents, kept_args(prim, vals, parents), ans, params)

    # forward mode: push tangents through the JVP rules
    out = BATCHED[level](prim, args, params) if BATCHED and level in BATCHED else \
        push_tangents(prim, args, params, level)
    if len(notes.kinks) != noted:                   # a kink met on a traced value (or by its JVP)
        notes.traced_since(noted)
    return out




class Applied:
    """A primitive's forward on raw arguments (a tuple): what a guard recomputes of a primitive
    that no derivative follows (`bind`'s nondiff case)."""
    __slots__ = ("prim", "params")

    def __init__(self, prim, params):
        self.prim, self.params = prim, params

    def __call__(self, raw):
        return self.prim.impl(*raw, **self.params) if self.params else self.prim.impl(*raw)


def _read_underived(args, vjps, level) -> None:
    """A traced argument where its primitive has no derivative (where's condition): its value
    enters the step as a constant, read as a number (a guard checks it)."""
    for i, a in enumerate(args):
        if a.__class__ is Var and a.level == level and vjps[i] is None:
            READS.hook(a, strip(a), None, "", None)


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


def backward(tape: Tape, out, seed, stop_at: int = 0, check=None, on_step=None, keep: bool = False,
             rerun: bool = False) -> list:
    """The reverse sweep of the tape from its output `out` (a Var; anything else: nothing
    depends on the inputs, every adjoint is None). See `sweep` for the hooks."""
    index = out.index if out.__class__ is Var and out.tape is tape else None
    return sweep(tape, index, seed, stop_at, check, on_step, keep, rerun)


def sweep(tape: Tape, index, seed, stop_at: int = 0, check=None, on_step=None, keep: bool = False,
          rerun: bool = False) -> list:
    """The reverse sweep of a tape: `sweep_equations` over its entries, each freed as the sweep
    passes it unless the tape is persistent, after forgetting what an earlier sweep tested finite."""
    finite_known.clear()                               # what an earlier sweep tested is not trusted
    if getattr(tape, "pending", None) or getattr(tape, "groups", None):    # (a view's copy has none)
        LAZY[0].settle(tape, index)                    # pending values: their regions settle first
    return sweep_equations(tape.entries, index, seed, stop_at, check=check, on_step=on_step, keep=keep,
                           rerun=rerun, free=not tape.persistent)


def sweep_equations(steps: list, index, seed, stop_at: int = 0, *, values=None, check=None, on_step=None,
                    before=None, keep: bool = False, rerun: bool = False, free: bool = False,
                    mark: bool = True, add=None) -> list:
    """THE reverse sweep over a Program's equations (core/program.py): the interpreter's, the
    replay's, a replayed Hessian's (diff/hessian_plan.py) and a fused region's op-by-op VJP
    (core/regions.py's region_vjp): from equation `index` (seeded with `seed`; None: nothing
    flowed) back to `stop_at`; returns the adjoints by equation position (None where nothing
    flowed: a symbolic zero).
    `steps[i]` is the equation itself (a tape's `Entry`), or a replay's plan of it
    (`PlannedStep`: its VJPs' arguments and output taken from `values`, the replayed values by
    position, or the pass a Hessian plan's VJPs take), or None where no adjoint reaches it.
    Adjoints add through `add` (None: `accumulate`, in place only into a buffer nobody else holds),
    whose `+` records on any outer tape, so the sweep is itself differentiable; a float adds as
    it adds. Hooks:
    - `check()` is called after every SWEEP_CHUNK entries while more remain: a nested sweep
      records on the outer tapes, and its limits must hold during the sweep, not only after it;
    - `on_step(i, pos, j, g, contribution)` is told each chain-rule term: entry i, whose adjoint
      is g, passes `contribution` to its parent j through its argument `pos` (the views); what it
      keeps is never added into (accumulate counts its references); `before(i)` is told before
      each of equation i's VJPs runs (diff/hessian_plan.py's Recording);
    - `add(prev, contribution)`: a non-float adjoint and a contribution to it summed, as
      `accumulate` sums them (diff/hessian_plan.py's `planned_add` writes out the sum of two
      Duals of one shape, which `accumulate` reaches through the ops' dispatch);
    - `keep`: every adjoint stays in the list (else each is dropped once passed on);
    - `free`: each equation is dropped from `steps` as the sweep passes it (a tape not persistent);
    - `rerun`: the rules re-run a sweep already made (the views): NOTES' span and kinks are left
      as they were found, else (`mark`) a kink a rule meets is noted as met on a traced value.
    The hooks cost the plain sweep nothing: `on_step` and `before` are told by the rules they
    wrap (`_told`), and a kept adjoint is "dropped" into a scratch list."""
    adj = [None] * len(steps)
    if index is None:
        return adj
    adj[index] = seed
    if add is None:
        add = accumulate
    told = on_step is not None or before is not None
    swept = _told(steps, index, on_step, before) if told else steps
    dropped = [None] * len(steps) if keep else adj
    top = index
    span, kinks = NOTES.span, list(NOTES.kinks) if rerun else None
    noted = len(NOTES.kinks)
    try:
        if check is not None:
            while top - SWEEP_CHUNK >= stop_at:
                _sweep(swept, adj, dropped, top, top - SWEEP_CHUNK + 1, free, values, add)
                top -= SWEEP_CHUNK
                check()
        _sweep(swept, adj, dropped, top, stop_at, free, values, add)
    finally:
        if rerun:
            NOTES.span = span
            NOTES.kinks[:] = kinks
    if told and free:                                  # the tape's own entries, not the wrappers
        steps[stop_at:index + 1] = [None] * (index + 1 - stop_at)
    if mark and len(NOTES.kinks) != noted:             # a rule's kink (norm's): of a traced op
        NOTES.traced_since(noted)
    return adj


class PlannedStep:
    """A replay's plan of one equation for `sweep_equations` (diff/replay_sweep.py makes them
    once per trace and watched inputs, with `planned_step`). `prim` is None, as a leaf's: the
    sweep's one test of a tape entry's primitive sends it to the plan's branch, so a tape's
    sweep pays nothing for plans. `run` is the plan as the sweep reads it, decided once (by
    planned_step) so that the sweep tests nothing it can know before: (traced arguments
    ((position, parent position), ...), VJPs, their float forms, by position, recorded arguments
    or None, gather(values) giving them or None, whether the VJPs read the output, params or
    None, span)."""
    __slots__ = ("prim", "run")

    def __init__(self, run: tuple):
        self.prim = None
        self.run = run


def _rebuilding(equation):
    """values -> the arguments a planned step keeps as saved_args of `equation`'s arguments, its
    traced ones the replayed values (their parents' positions)."""
    def gather(values):
        full = list(equation.args)
        for pos, j in equation.parents:
            full[pos] = values[j]
        return saved_args(equation.prim, tuple(full))
    return gather


def planned_step(prim, live, args, gather, params, span, equation) -> PlannedStep:
    """The plan of one equation: the primitive's VJPs and their float forms (by position: a
    variadic one's resolved once), the traced arguments the adjoint reaches ((position, parent
    position), ...), the recorded arguments the VJPs take or None, then `gather(values)` giving
    them in one call or None: rebuilt as saved_args of `equation`'s arguments with the replayed
    values filled in; whether the VJPs read the output; the equation's params and span
    (references, not copies: one tuple read a step)."""
    vjps, float_vjps = prim.vjps, prim.float_vjps
    if vjps.__class__ is not tuple:
        vjps, float_vjps = {pos: vjps[pos] for pos, _ in live}, {pos: float_vjps[pos] for pos, _ in live}
    if gather is None and args is None:
        gather = _rebuilding(equation)
    return PlannedStep((tuple(live), vjps, float_vjps, args, gather, prim.needs_ans, params or None, span))


def _sweep(steps: list, adj: list, dropped: list, top: int, bottom: int, free: bool, values, add) -> None:
    """The sweep's loop over equations top, top-1, ..., bottom: adjoints flow to the parents. A
    float adds as `accumulate` adds it (`prev + contrib`), without the call: the hot path; any
    other adjoint through `add`.
    `dropped` is `adj` itself, or a scratch list where the sweep keeps every adjoint."""
    notes = NOTES
    for i in range(top, bottom - 1, -1):
        g = adj[i]
        if g is None:
            if free:
                steps[i] = None
            continue
        e = steps[i]
        prim = e.prim
        if prim is not None:                           # a tape's entry (the hot path: as it was)
            notes.span = e.span
            parents = e.parents
            args = e.args
            params = e.params
            ans = e.ans
            vjps = prim.float_vjps if g.__class__ is float else prim.vjps     # the table's forms: once per step
        elif e.__class__ is Entry:                     # a leaf keeps its adjoint
            continue
        else:                                          # planned: arguments from the replayed values
            parents, vjps, float_vjps, args, gather, needs_ans, params, notes.span = e.run
            if g.__class__ is float:
                vjps = float_vjps
            if gather is not None:
                args = gather(values)
            ans = values[i] if needs_ans else None
        for pos, j in parents:
            contrib = vjps[pos](g, ans, *args, **params) if params else vjps[pos](g, ans, *args)
            prev = adj[j]
            if prev is None:
                adj[j] = contrib
            elif prev.__class__ is float:
                adj[j] = prev + contrib
            else:                                      # an array: in place where the sweep owns it
                prev = None
                adj[j] = add(adj[j], contrib)
        dropped[i] = None
        if free:
            steps[i] = None


class _Told:
    """An entry's primitive as a sweep with hooks sees it: the VJPs of its traced positions (by
    position: a variadic primitive's are made on demand), each telling `before` and `on_step`."""
    __slots__ = ("vjps", "float_vjps")

    def __init__(self, vjps, float_vjps, i, parents, on_step, before):
        self.vjps = {pos: _telling(vjps[pos], i, pos, j, on_step, before) for pos, j in parents}
        self.float_vjps = {pos: _telling(float_vjps[pos], i, pos, j, on_step, before) for pos, j in parents}


def _telling(vjp, i, pos, j, on_step, before):
    """`vjp` telling the hooks."""
    def told(g, ans, *args, **params):
        if before is not None:
            before(i)
        contrib = vjp(g, ans, *args, **params)
        if on_step is not None:
            on_step(i, pos, j, g, contrib)
        return contrib
    return told


def _told(steps, index, on_step, before) -> list:
    """The steps up to `index` with their primitives wrapped to call the hooks."""
    out = list(steps[:index + 1])
    for i, e in enumerate(out):
        if e is None:
            continue
        if e.__class__ is PlannedStep:                 # its VJPs wrapped, the rest as planned
            live, vjps, float_vjps, *rest = e.run
            told = _Told(vjps, float_vjps, i, live, on_step, before)
            out[i] = PlannedStep((live, told.vjps, told.float_vjps, *rest))
        elif e.prim is not None:
            told = _Told(e.prim.vjps, e.prim.float_vjps, i, e.parents, on_step, before)
            out[i] = Entry(told, e.parents, e.args, e.ans, e.params, e.span, e.value)
    return out
