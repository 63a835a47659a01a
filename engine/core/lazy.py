"""Lazy values: how an interpreted run fuses regions by the fusion pass over its Program
(core/program_regions.py), to the bits of the same run op by op (issue 28 item 4).

On a plain tape (not persistent, keeping no values) an elementwise equation the pass may put in
a region (`program_regions.member_shape`'s conditions: an eligible table entry without
parameters, whose kernels give numpy's bits, over float64 or complex128 arrays whose result has
at least core/fused.py's FUSE_MIN_ELEMENTS elements) is recorded PENDING: its tape entry is a
placeholder (`PENDING`, whose VJPs refuse), its `PendingEquation` (primitive, arguments with
None where a pending value goes, inputs, span, shape, dtype) is kept by position in
`tape.pending`, and its Var has no value. Its value is computed when it is FORCED: when anything
reads the Var's `value` (core/tape.py's `Var.__getattr__`, the one way to read it: a builtin
that is not elementwise, a truth test, an index, the output, a nested level...), except the
ops' float fast paths and the shape helper, which peek (`peek`: the equation, no numbers) and
send it on to `bind`, which records one more pending equation.

Forcing a position makes a REGION of it and the pending equations it reads, back through their
arguments (at most region_plan.MAX_NODES: older ones are forced first, as their own regions):
`program_regions.region_of` builds its plan and core/regions.py runs its kernels, the same
lowering the replay of a large trace uses. Its entry takes the root's place on the tape (its
inputs are the region's leaves); the other equations stay placeholders and their values are
never arrays. A region of one equation is the entry `bind` would have recorded (tape.plain_entry);
a region the kernels decline (a value not finite) runs op by op, equation by equation, each
with its own span (its notes and provenance are the unfused run's).

The kernels' values are numpy's (the pass admits only such equations), so a value forced in any
region is the op-by-op value. The sweep's sums are the op-by-op sweep's too: the region's plan has
a leaf per READ of a value outside it (one symbol in its kernels), so its reverse kernels give
each read's adjoint apart, and the region hands them over where the op-by-op sweep adds them
(`Handover`): the root's own reads at the root, each other equation's at that equation's place,
whose entry becomes a relay; whoever else reads the same value, the sums are added in the same
order. What a region cannot vouch for is its inside: before the sweep (`settle`), a region one of
whose equations but its root was forced later (read outside it) or belongs to another region is
UNDONE: each of its equations becomes the entry `bind` would have recorded, its value computed
again (`RESETTLED` counts them). So a run with regions gives the op-by-op run's values and
gradients bit for bit. A value asked for alone watches its large inputs on a values-only tape
(`Tape.values_only`, diff/reverse.py's evaluate): its regions run their forward kernels alone,
over the leaves' raw values, and hand nothing over (no sweep follows).

Where no other reader of a value comes between a region's first read of it and its root (every
other reader before), the region hands over the sum of its reads' adjoints, which its kernels
add in the op-by-op sweep's order ((a1 + a2) + ...: regions.GradKernels.summed), at its root, as
the sweep's first contribution to that value (`_sum_reads`, at `settle`): one kernel, where a
kernel, an add and a finiteness check a read were before.
"""
from __future__ import annotations

import math
import sys
import weakref

from . import fused
from .backend import np, xp
from .notes import NOTES, READS
from .primitives import PerPosition, Primitive, broadcast_shape, element_limit
from .rules import TABLE
from .tape import LAZY, Dual, Entry, Var, plain_entry, reading_pending

# regions lazy values make of an interpreted run: off, every equation is recorded at once (the
# reference the tests compare with, bit for bit)
ENABLED = [True]
# regions undone before a sweep (see the module's docstring), and regions forced in all
RESETTLED = [0]
FORCED = [0]
# the elements of the equations run inside regions' kernels so far (an undone region's taken
# back): a replay whose pass fuses much less of a run than its interpreted run did replays only its
# values (diff/large_trace.py)
FUSED = [0]
# regions that handed over a value's summed reads at their root (`_sum_reads`)
SUMMED = [0]
# the bytes of the pending values recorded so far: what a recording tape, which keeps every value,
# would hold beyond a plain run's (diff/function.py keeps no trace whose recording would not fit)
PENDING_BYTES = [0]


def elements(equations) -> int:
    """The elements of pending equations' values."""
    return sum(math.prod(e.shape) for e in equations)


def _refused(*args, **kwargs):
    raise AssertionError("an adjoint reached a pending equation: core/lazy.py's settle missed it")


# the placeholder entry of a pending equation: no adjoint ever reaches it (its readers are
# regions, whose inputs are their leaves, or its own entry once it is forced)
PENDING = Primitive("pending", None, vjps=(_refused,) * 3, jvps=(_refused,) * 3, needs_args=False)


class PendingEquation:
    """An equation recorded pending: what `bind` would have computed, and who reads it."""
    __slots__ = ("prim", "args", "parents", "span", "shape", "dtype", "readers", "var", "turn")

    def __init__(self, prim, args, parents, span, shape, dtype):
        self.prim, self.args, self.parents, self.span = prim, args, parents, span
        self.shape, self.dtype = shape, dtype
        self.readers: list = []          # (position, argument position) of the pending equations reading it
        self.var = None                  # a weak reference to its Var: its value goes there, once computed
        self.turn = None                 # (kink notes then, tape position): where bind would note its kinks (_pending)

    @property
    def ndim(self):
        return len(self.shape)


def admitted(prim) -> bool:
    """A table entry a region may hold (region_plan.eligible), that is the table's now (a test
    may stand another entry in for it). Asked afresh: an entry's fields may change (tests do)."""
    return TABLE.get(prim.name) is prim and loaded().eligible(prim)


class Machinery:
    """The region machinery lazy values use (program_regions, region_plan, regions), imported at
    its first use (a run over numbers or small arrays never loads it), then read from here: no
    import a call. `loaded()` gives it."""
    eligible = same_bits_fused = one_way = region_of = regions = None
    max_nodes = 0
    float64 = None          # numpy's float64 dtype


def loaded():
    if Machinery.regions is None:
        from . import regions
        from .program_regions import one_way, region_of, same_bits_fused
        from .region_plan import MAX_NODES, eligible
        Machinery.eligible, Machinery.same_bits_fused, Machinery.one_way = eligible, same_bits_fused, one_way
        Machinery.region_of, Machinery.max_nodes, Machinery.float64 = region_of, MAX_NODES, np().dtype("float64")
        Machinery.regions = regions
    return Machinery


def may_pend(args, tape) -> bool:
    """Whether an elementwise application to `args` on `tape` may be pending, told without numpy:
    a pending argument, or an array of FUSE_MIN_ELEMENTS or more (numbers, a nested derivative's
    boxes and smaller arrays are never pending: small arrays reach the size only broadcast two
    ways, which `one_way` refuses). Asked by bind before `defer`, inline there (its hot path)."""
    least = fused.FUSE_MIN_ELEMENTS
    for a in args:
        if a.__class__ is Var and a.tape is tape:
            if a.index in tape.pending:
                return True
            a = a.value
        c = a.__class__
        if c is not float and c is not Var and c is not Dual and c is not int and getattr(a, "size", 0) >= least:
            return True
    return False


def defer(prim, args, params, level, tape):
    """The pending Var of `prim` over `args` on `tape` (may_pend(args, tape)), or None where it is
    recorded at once."""
    if params or not ENABLED[0] or READS.hook is not None:
        return None
    numpy = np()
    ndarray, float64, complex128 = numpy.ndarray, numpy.float64, numpy.complex128
    device = xp().ndarray                           # the device's arrays (core/regions.py runs its kernels)
    pending = tape.pending
    shapes, vals, parents, complex_ = [], [], [], False
    for i, a in enumerate(args):
        c = a.__class__
        if c is Var:
            if a.level != level or a.tape is not tape:
                return None
            parents.append((i, a.index))
            waiting = pending.get(a.index)
            if waiting is not None:
                shapes.append(waiting.shape)
                complex_ = complex_ or waiting.dtype == complex128
                vals.append(None)
                continue
            a = a.value
            c = a.__class__
        elif c is Dual:
            return None
        if c is float or c is int:
            vals.append(a)
        elif isinstance(a, complex):
            vals.append(a)
            complex_ = True
        elif (c is ndarray or c is device) and (a.dtype == float64 or a.dtype == complex128):
            shapes.append(a.shape)
            complex_ = complex_ or a.dtype == complex128
            vals.append(a)
        else:
            return None
    if not shapes or not parents:
        return None                                  # numbers: the scalar path; nothing traced
    try:
        shape = broadcast_shape(*shapes)
    except ValueError:
        return None                                  # the op itself reports the mismatch
    size = 1
    for d in shape:
        size *= d
    # small arrays (numpy's ops) are told apart before the region machinery is asked (and loaded)
    if size < fused.FUSE_MIN_ELEMENTS or (element_limit[0] is not None and size > element_limit[0]) \
            or not admitted(prim):
        return None
    if len(shapes) > 1 and not Machinery.one_way(shapes, shape):
        return None                                  # broadcast two ways: numpy's op is faster (the pass's rule)
    return _pending(prim, tuple(vals), tuple(parents), shape, size, complex_, level, tape)


def _pending(prim, vals, parents, shape, size, complex_, level, tape):
    """Record the pending equation where the pass would take it into a region."""
    same_bits_fused = Machinery.same_bits_fused
    numpy = np()
    dtype = Machinery.float64
    if complex_:
        module = xp()                                # the run's array module (the device's, there)
        probe = prim.impl(*(v if v.__class__ in (float, int) or isinstance(v, complex)
                            else module.zeros(1, numpy.complex128 if v is None else v.dtype) for v in vals))
        dtype = probe.dtype
        if dtype not in (numpy.float64, numpy.complex128):
            return None
    equation = PendingEquation(prim, vals, parents, NOTES.span, shape, dtype)
    seen = equation
    if complex_:                                     # the inputs' dtypes, as a recorded equation's Shapes say
        args = list(vals)
        for pos, j in parents:
            if args[pos] is None:
                args[pos] = numpy.empty(0, tape.pending[j].dtype)
        seen = PendingEquation(prim, tuple(args), parents, None, shape, dtype)
    if not same_bits_fused(prim, seen, numpy.empty(0, dtype) if complex_ else None, real=not complex_):
        return None
    entries = tape.entries
    index = len(entries)
    PENDING_BYTES[0] += size * dtype.itemsize
    entries.append(Entry(PENDING, parents, (), None, None, NOTES.span, None))
    tape.pending[index] = equation
    equation.turn = (len(NOTES.kinks), index)
    for pos, j in parents:
        waiting = tape.pending.get(j)
        if waiting is not None and j != index:
            waiting.readers.append((index, pos))
    if not tape.watched_pending:
        _watch(tape)
    var = Var.__new__(Var)
    var.tape, var.index, var.level = tape, index, level
    equation.var = weakref.ref(var)
    return var


# the tapes alive that have held a pending Var (whose `value` slot may be unset while the tape
# lives: a Var keeps its tape alive): Var's __getattr__ is installed while there is one
HOLDING = [0]


def _watch(tape) -> None:
    tape.watched_pending = True
    HOLDING[0] += 1
    if HOLDING[0] == 1:
        reading_pending(True)
    weakref.finalize(tape, _released)


def _released() -> None:
    HOLDING[0] -= 1
    if HOLDING[0] == 0:
        reading_pending(False)


def peek(var):
    """A pending Var's equation (its shape and dtype, no numbers), for the PEEKS functions;
    None where it is no longer pending."""
    return var.tape.pending.get(var.index)


def force_var(var):
    """The value of a pending Var, forced (`_done` sets it in the Var)."""
    return force(var.tape, var.index)


class Forcing:
    """Marks an exception raised while a value is forced (`forced_here`): the reader that forced it
    (a builtin, an operator) did not raise it, so the interpreter does not locate it there as the
    user's mistake (lang/errors.py). Swallows nothing."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if exc is not None and not hasattr(exc, "forced_here"):
            exc.forced_here = True
        return False


def force_all(tape, out) -> None:
    """A run's end (diff/common.py's watched_run): its output forced, then every value still
    pending that no forced region holds, the latest first. Such a value nothing read: the op-by-op
    run computes it all the same (numpy's eager semantics) and notes what its rules note there (a
    kink of sqrt in a statement whose value goes unused), so this run does too. Then the kinks
    that values computed after their turn noted go where the op-by-op run notes them
    (NOTES.in_run_order)."""
    pending = tape.pending
    if pending:
        index = out.index if out.__class__ is Var and out.tape is tape else None
        if index is not None and index in pending:
            force(tape, index)
        for r in sorted(pending, reverse=True):
            if r in pending and r not in tape.inside:
                force(tape, r)
    NOTES.in_run_order()


def forced_here(exc) -> bool:
    """Whether `exc` was raised while a pending value was forced (a bug, not the reader's)."""
    return getattr(exc, "forced_here", False)


def force(tape, r):
    """Compute pending position `r` of `tape` (see the module's docstring): its value, which its
    Var (where one is alive) then holds, and each pending reader as its argument (`_done`)."""
    with Forcing():
        return _force(tape, r)


def _force(tape, r):
    pending = tape.pending
    while True:
        members, older = _members(tape, r)
        if not older:
            break
        for j in sorted(older):                      # the older ones first, as regions of their own
            if j in pending:
                _force(tape, j)
    FORCED[0] += 1
    tape.inside.update(members)
    value = _region(tape, r, members) if len(members) > 1 else None
    if value is None:
        value = _one_by_one(tape, sorted(members), r)
    return value


def _members(tape, r) -> tuple:
    """The pending equations of r's region (r and back through its pending arguments, the
    latest first, at most MAX_NODES), and the pending arguments left out of it."""
    pending = tape.pending
    members, candidates = {r}, {j for _, j in pending[r].parents if j in pending}
    while candidates and len(members) < Machinery.max_nodes:
        j = max(candidates)
        candidates.discard(j)
        members.add(j)
        candidates.update(k for _, k in pending[j].parents if k in pending and k not in members)
    return members, candidates - members


def _filled(tape, eq, values) -> tuple:
    """An equation's arguments, its pending inputs taken from `values` (position -> value)."""
    args = list(eq.args)
    for pos, j in eq.parents:
        if args[pos] is None:
            args[pos] = values[j]
    return tuple(args)


def _one_by_one(tape, positions, root):
    """The equations at `positions` computed and recorded one by one, as `bind` records them:
    each its own span, its entry in its place. Returns the root's value."""
    values: dict = {}
    for m in positions:
        eq = tape.pending.get(m)
        if eq is None:                               # forced meanwhile: its readers have its value
            continue
        args = _filled(tape, eq, values)
        value = values[m] = _computed(eq, args, traced=True)
        tape.entries[m] = plain_entry(eq.prim, eq.parents, args, value, None)
        _done(tape, m, value)
    return values[root]


def _computed(eq, args, traced):
    """A pending equation's value from its table impl at its own span (its notes are the op-by-op
    run's); `traced`: a kink it notes is a traced value's (NOTES.traced_since), as bind has it."""
    span = NOTES.span
    NOTES.span = eq.span
    noted = len(NOTES.kinks)
    try:
        value = eq.prim.impl(*args)
        if len(NOTES.kinks) != noted:
            if traced:
                NOTES.traced_since(noted)
            NOTES.noted_at(noted, eq.turn)           # (its turn came when it was recorded)
    finally:
        NOTES.span = span
    return value


def _done(tape, m, value) -> None:
    """Pending position m has its value: its Var holds it (where one is alive: nothing else keeps
    a value no Var and no reader can read) and its pending readers take it as an argument."""
    eq = tape.pending.pop(m)
    var = eq.var() if eq.var is not None else None
    if var is not None:
        var.value = value
    for q, pos in eq.readers:
        reader = tape.pending.get(q)
        if reader is not None:
            args = list(reader.args)
            args[pos] = value
            reader.args = tuple(args)


class Group:
    """A forced region: its positions (ascending, the root last), their equations, its plan's
    region and the entry its kernels recorded (`_hand_over`'s)."""
    __slots__ = ("positions", "equations", "region", "entry")

    def __init__(self, positions, equations, region, entry):
        self.positions, self.equations, self.region, self.entry = positions, equations, region, entry


def _region(tape, r, members):
    """The root's value from the region's kernels, its entries in place (`_hand_over`); None
    where the kernels decline (then it runs op by op)."""
    regions, region_of = Machinery.regions, Machinery.region_of
    positions = sorted(members)
    pending = tape.pending
    equations = {m: pending[m] for m in positions}
    region = region_of(equations, positions, per_read=True)
    leaves = []
    values_only = tape.values_only
    for (kind, ref), read in zip(region.leaves, region.reads):
        if kind == "constant":
            leaves.append(ref)
        else:
            p, pos = read
            raw = equations[p].args[pos]
            leaves.append(raw if values_only else Var(raw, tape, ref, tape.level))
    if not Machinery.one_way([getattr(v.value if v.__class__ is Var else v, "shape", ()) for v in leaves],
                              pending[r].shape):
        return None                                  # its leaves broadcast two ways: op by op, as the pass says
    span = NOTES.span
    NOTES.span = pending[r].span
    try:
        out = regions.run(region.plan, leaves)
    finally:
        NOTES.span = span
    if values_only:                                  # no sweep follows: the forward kernels' array
        if out is None:
            return None
        FUSED[0] += elements(equations.values())
        _done(tape, r, out)
        return out
    if out.__class__ is not Var:
        return None
    entry = tape.entries.pop()                      # handed over at `settle`, before the sweep
    tape.groups[r] = Group(tuple(positions), equations, region, entry)
    FUSED[0] += elements(equations.values())
    value = out.value
    _done(tape, r, value)
    return value


class Handover:
    """The adjoints of one forced region's reads, computed by its reverse kernels when the sweep
    reaches its root (`g`, the root's adjoint) and handed out one read at a time: the root's own
    reads at the root, each other equation's reads at that equation's place, where the op-by-op
    sweep adds them (its entry is a relay the root passes a token to). So every leaf's adjoint
    adds the same contributions in the same order as op by op, whoever else reads it."""
    __slots__ = ("entry", "adjoints", "wanted")

    def __init__(self, entry, wanted):
        self.entry, self.adjoints, self.wanted = entry, None, wanted

    def at_root(self, g) -> None:
        if self.adjoints is None:
            entry = self.entry
            vjps, args = entry.prim.vjps, entry.args
            self.adjoints = {pos: vjps[pos](g, None, *args) for pos in self.wanted}
            self.entry = None

    def take(self, pos):
        return self.adjoints.pop(pos)


TOKEN = "relay"             # what a region's root passes to its relays (no adjoint: a signal)


def _hand_over(tape, region, entry, groups=()) -> None:
    """The region's root entry and its relays (see Handover), in the tape in place of the root
    and of the region's equations that read a leaf. `groups` (GradKernels.read_groups): values
    whose reads' adjoints the kernels sum (`_summed`), handed over at the root, at their first
    leaf, where the sweep's first contribution to them would be added."""
    summed = {leaf for _, leaves in groups for leaf in leaves}
    firsts = {symbol for symbol, _ in groups}
    traced = {pos for pos, _ in entry.parents}
    reads: dict = {}                                 # reader position -> [(leaf position, tape position)]
    root = region.positions[-1]
    own = []
    for leaf, ((kind, j), read) in enumerate(zip(region.leaves, region.reads)):
        if kind == "equation" and leaf in traced:
            if leaf in firsts:
                own.append((leaf, j))
            if leaf not in summed:
                reads.setdefault(read[0], []).append((read[1], leaf, j))
    handover = Handover(entry, [leaf for leaf in sorted(traced) if leaf not in summed or leaf in firsts])
    for p, taken in reads.items():
        taken.sort()
        if p != root:
            tape.entries[p] = _entry([(leaf, j) for _, leaf, j in taken], handover, False, tape.entries[p].span)
    own += [(leaf, j) for _, leaf, j in sorted(reads.get(root, []))]
    relays = [(None, p) for p in sorted(reads) if p != root]
    tape.entries[root] = _entry(own + relays, handover, True, entry.span)


def _handed_over(root):
    """The VJP by argument position of a region's entry (`root`: it first computes the region's
    adjoints): the adjoint of the read its leaf stands for, or the relay's token where it has
    none. Its entry's arguments are (handover, leaf per position)."""
    def per_position(pos):
        if root:
            def own(g, ans, handover, leaves):
                handover.at_root(g)
                leaf = leaves[pos]
                return TOKEN if leaf is None else handover.take(leaf)
            return own
        return lambda g, ans, handover, leaves: handover.take(leaves[pos])
    return PerPosition(per_position)


# the entries a forced region leaves on the tape (one primitive each, any number of reads: the
# handover and the leaves are the entry's arguments, so no primitive is made a region)
ROOT = Primitive("fused region", None, vjps=_handed_over(True), needs_args=False)
RELAY = Primitive("a read of a fused region", None, vjps=_handed_over(False), needs_args=False)


def _entry(parents, handover, root, span) -> Entry:
    """An entry whose VJPs hand over adjoints (root: first computes them; a leaf of None: a
    relay's token)."""
    return Entry(ROOT if root else RELAY, tuple((i, j) for i, (_, j) in enumerate(parents)),
                 (handover, tuple(leaf for leaf, _ in parents)), None, None, span, None)


def settle(tape, index) -> None:
    """Before a sweep from `index`: the output forced, and every region undone one of whose
    equations but its root was forced later or belongs to another region (read outside it:
    its adjoint is not the region's alone)."""
    if index is not None and index in tape.pending:
        force(tape, index)
    groups = tape.groups
    while groups:
        owners: dict = {}
        for group in groups.values():
            for m in group.positions:
                owners[m] = owners.get(m, 0) + 1
        wrong = [r for r, group in groups.items()
                 if owners[r] > 1 or any(m not in tape.pending or owners[m] > 1 for m in group.positions[:-1])]
        if not wrong:
            break
        for r in wrong:
            _undo(tape, groups.pop(r))
    if groups:
        summed = _sum_reads(tape, groups)
        for r, group in groups.items():
            _hand_over(tape, group.region, group.entry, summed.get(r, ()))
    tape.groups = {}


def _sum_reads(tape, groups) -> dict:
    """A region whose kernels can sum a value's reads (GradKernels.summed) hands over that sum
    at its root where the op-by-op sweep would add nothing else to that value between: every
    other reader of it comes before the region's first read of it (the sweep reaches it after
    the whole sum), and the value has the region's shape (no read's adjoint reduced apart). The
    sweep's sums, in one kernel instead of a kernel and an add per read."""
    wanted: dict = {}                                # tape position -> its readers' positions
    candidates = []
    for group in groups.values():
        state = group.entry.args[0]
        kernels = getattr(state, "kernels", None)
        if getattr(kernels, "summed", None) is None:
            continue
        shape = group.equations[group.positions[-1]].shape
        values = {group.region.leaves[symbol][1]: symbol for symbol, _ in kernels.read_groups}
        if all(getattr(state.values[symbol], "shape", None) == shape for symbol in values.values()):
            candidates.append((group, state, kernels, values))
            for j in values:
                wanted[j] = []
    summed: dict = {}                                # root -> the read groups its kernels sum
    if not candidates:
        return summed
    for i, e in enumerate(tape.entries):
        for _, j in e.parents:
            readers = wanted.get(j)
            if readers is not None:
                readers.append(i)
    for group, state, kernels, values in candidates:
        inside = set(group.positions)
        if all(r in inside or r < min(p for p, _ in _reads_of(group.region, j)) for j in values for r in wanted[j]):
            state.summed = True
            SUMMED[0] += 1
            summed[group.positions[-1]] = kernels.read_groups
    return summed


def _reads_of(region, j) -> list:
    return [read for (kind, ref), read in zip(region.leaves, region.reads) if kind == "equation" and ref == j]


def _undo(tape, group) -> None:
    """A region's equations recorded one by one, as `bind` records them (their values again)."""
    RESETTLED[0] += 1
    FUSED[0] -= elements(group.equations.values())
    values: dict = {}
    root = group.positions[-1]
    for m in group.positions:
        eq = group.equations[m]
        args = _filled(tape, eq, values)
        value = values[m] = _computed(eq, args, traced=False)
        if m == root or m in tape.pending:           # (else forced meanwhile: its own entry is in place)
            tape.entries[m] = plain_entry(eq.prim, eq.parents, args, value, None)
        if m in tape.pending:
            _done(tape, m, value)


LAZY[0] = sys.modules[__name__]          # the tape reaches this module through LAZY (it is below it)
