"""Batched replay ("vmap" of a recorded trace): the equations of a `Trace`'s Program
(diff/replay.py) run on a stack of input points at once, each input with a leading axis of B points, every step lifted
over that axis by core/stacked.py. The checks' perturbed points and a plot's grid use it.

A trace that reads no traced value as a plain number (no guard: control flow and constants
independent of the inputs) has every point follow the recorded path. One that carries guards
(diff/replay_guards.py) is batched only for a caller that runs the points whose path changed by
themselves (`crossed`): each guard is checked at each point, its row's values, and a point
whose read differs (or meets a tie) is handed back, its row's numbers left unused. B is chunked
so that no stacked value holds more than STACK_BUDGET_ELEMENTS numbers, and each value is freed
after its last use (a guard's reads count as uses)."""
from __future__ import annotations

from dataclasses import dataclass

from ...parser.errors import SourceError
from ..core.backend import np, to_host
from ..core.errors import EngineError
from ..core.notes import NOTES
from ..core.notes import reset as reset_notes
from ..core.primitives import element_limit, shape, size
from ..core.stacked import stacked_apply
from ..core.tape import Tape, strip
from ..lang.recorded_decisions import recording_decisions
from ..lang.target import Runner, check_output
from .replay import record_trace, replay_output, replay_values
from .bits import same_bits
from .replay_guards import READ_ITSELF
from .replay_release import last_uses
from .fallbacks import Fallback, LoweringRefused, PathChanged, ReplayDiffers, StepFailed, Unsupported, count, differs

# the most numbers one stacked value may hold (B x its size per point): 2**16 float64 are 512 KiB,
# which stay in cache between steps (measured: a pass over 2**21 is slower than the point-by-point
# runs it replaces, 2**16 twice as fast)
STACK_BUDGET_ELEMENTS = 1 << 16


def batchable(trace, guarded: bool = False) -> bool:
    """Whether a trace may be replayed on a stack of points: one with guards only where
    `guarded` (the caller runs the points whose path changed by themselves: replay_stacked's
    `crossed`)."""
    return bool(trace) and (guarded or not trace.guards)


def record_for_batches(target, inputs: dict, limits=None, fallbacks: dict | None = None, guarded: bool = False):
    """The trace of one interpreted run of `target` at `inputs` (every input watched), checked by
    replaying it there; None where the points are to run one by one, the reason counted in
    `fallbacks` (diff/fallbacks.py: AUTODIFF_STRICT=1 raises at one that is not documented).
    `guarded`: a trace with guards is the caller's too (batchable)."""
    fallbacks = {} if fallbacks is None else fallbacks
    notes = reset_notes()
    tape = Tape(persistent=True, keep_values=True)          # a trace reads its values' types
    try:
        with recording_decisions() as logged:              # a value read as a number: no trace
            runner = Runner(target, limits)
            out = runner.run({k: tape.watch(inputs[k]) for k in target.inputs})
        check_output(out, target)
    except (SourceError, EngineError) as error:  # the per-point path reports it, located
        count(fallbacks, StepFailed(f"a batch's recording run raised {type(error).__name__} (the points run "
                                    "one by one, each reporting its own error)"))
        return None
    kinks = list(notes.kinks)
    trace = record_trace(tape, out, runner.interp.signature, runner.interp.steps, logged)
    if not batchable(trace, guarded):
        count(fallbacks, Unsupported(GUARDED if trace else trace.reason))
        return None
    if trace.guards:                   # what a point's replay holds at each read (float, array...)
        trace.annotations[POINT_CLASSES] = [e.value.__class__ for e in trace.equations]
    notes = reset_notes()
    try:
        again = strip(replay_output(trace, replay_values(trace, [inputs[k] for k in target.inputs])))
    except Fallback as fallback:       # a tie: the per-point path
        count(fallbacks, fallback)
        return None
    if not same_bits(again, strip(out)) or notes.kinks != kinks:
        count(fallbacks, differs(same_bits(again, strip(out)), "batch's trace"))
        return None
    trace.seal()                       # its constants kept, not the recorded run's values
    return trace


# why a trace with guards is not batched
GUARDED = "a trace with guards (each point could take its own path): the points run one by one"


def refused_pass(error) -> LoweringRefused:
    """The handover of a batched pass that raised `error`, one a step may raise at some values
    (fallbacks.CONFIRMED_ERRORS: a user's mistake at a moved point, a refused size, numpy's errors
    on values): its points run one by one, each reporting its own error. Any other exception out
    of a batched pass is a bug and propagates."""
    return LoweringRefused(f"a batched pass raised {type(error).__name__} (the points run one by one)",
                           documented=True)


def batch_differs(what: str) -> ReplayDiffers:
    """The handover of a batched pass whose `what` differs from the point-by-point runs' (a bug:
    AUTODIFF_STRICT=1 raises)."""
    return ReplayDiffers(f"a batched pass's {what} differs from the point-by-point runs'")


def largest_value(trace, inputs: list) -> int:
    """The most numbers any value of the trace holds at one point (replayed there once)."""
    return max((size(v) for v in replay_values(trace, inputs)), default=1)


def rows_per_pass(per_point_elements: int, budget: int | None = None) -> int:
    """Points per batched pass: B x the largest value per point within the budget."""
    budget = STACK_BUDGET_ELEMENTS if budget is None else budget
    return max(1, budget // max(1, per_point_elements))


POINT_CLASSES = ("point classes",)    # per equation position, its value's class in a point's run


def replay_stacked(trace, inputs: list, stacked: list, rows: int, last=None, record=None, crossed=None):
    """(output, whether it is stacked) of the trace at `rows` points at once: inputs[i] (tape
    index i) holds one value per point along its leading axis where stacked[i], else the value
    all points share. Steps whose arguments are all shared run as the point replay runs them.
    Kink notes are made per pass (a kink at any point of it), each with its step's span.
    `record`, a list, gets per step a StepRecord (for a plot's kink sides and notes). A trace
    with guards checks each at each point as it comes: `crossed`, a set, gets the rows whose
    read differs (their numbers are not that point's); without it the first raises PathChanged."""
    last = last_uses(trace) if last is None else last
    values = list(inputs)
    flags = list(stacked)
    keep = trace.output
    guards = GuardRows(trace, values, flags, rows, crossed)
    saved_limit = element_limit[0]
    element_limit[0] = None               # the stack is ours, not the program's: its limit is per point
    try:
        for i, e in enumerate(trace.body()):
            guards.check_before(i)
            prim, parents, args, params, span = e.prim, e.parents, e.args, e.params, e.span
            point_stacked = [False] * len(args)
            for pos, j in parents:
                point_stacked[pos] = flags[j]
            if any(point_stacked):
                full = list(args)
                for pos, j in parents:
                    full[pos] = values[j]
                NOTES.span = span
                values.append(stacked_apply(prim, tuple(full), point_stacked, params, rows))
                flags.append(True)
                if record is not None:
                    record.append(StepRecord(prim, span, params, True, len(NOTES.kinks),
                                             tuple(zip(full, point_stacked)) if prim.side else ()))
            else:
                values.append(trace.forwards[i](values))
                flags.append(False)
                if record is not None:
                    record.append(StepRecord(prim, span, params, False, len(NOTES.kinks), ()))
            for _, j in parents:
                if last[j] == i and j != keep:
                    values[j] = None               # its last reader has run
        guards.check_before(len(trace.equations))       # the guards after the last step
    finally:
        element_limit[0] = saved_limit
    if trace.output is None:
        return trace.constant, False
    return values[trace.output], flags[trace.output]


class GuardRows:
    """A batched pass's guards, each checked at each point once the values it reads exist, on
    the point's own values as a point replay holds them (POINT_CLASSES: a float, a 0-d array...)."""

    def __init__(self, trace, values, flags, rows, crossed):
        self.guards, self.leaves = trace.guards, trace.leaves
        self.values, self.flags, self.rows, self.crossed = values, flags, rows, crossed
        self.classes = trace.annotations.get(POINT_CLASSES) if self.guards else None
        self.next = 0

    def check_before(self, step: int) -> None:
        """Check the guards that precede body step `step` (all that are left, past the last)."""
        guards = self.guards
        while self.next < len(guards) and guards[self.next].position - self.leaves <= step:
            guard = guards[self.next]
            self.next += 1
            if not any(j is not None and self.flags[j] for j, _ in guard.sources):
                self._check_all(guard)           # every point reads the shared values: once
                continue
            if self.crossed is not None and guard.compared is not None and self._compare_all(guard):
                continue
            if self.crossed is not None and guard.applied is not None and self._recompute_all(guard):
                continue
            for r in range(self.rows):
                if self.crossed is not None and r in self.crossed:
                    continue
                try:
                    guard.check(PointValues(self.values, self.flags, r, self.classes))
                except PathChanged:
                    if self.crossed is None:
                        raise
                    self.crossed.add(r)

    def _compare_all(self, guard) -> bool:
        """A comparison of operands that are numbers or of the recorded result's shape, at every
        point at once: its operator on the stacks, each point's elements against the recorded
        ones; a point that differs anywhere, or meets a tie where ties count, crosses. False where
        the operands are of other shapes (each point is then checked by itself)."""
        xp, rows = np(), self.rows
        expected = outcome_array(guard.outcome)
        if expected is None:
            return False
        operands = []
        for j, constant in guard.sources:
            v = constant if j is None else self.values[j]
            stacked = j is not None and self.flags[j]
            point = shape(v)[1:] if stacked else shape(v)
            if point != () and point != expected.shape:
                return False
            if stacked and point == () and expected.ndim:
                v = xp.asarray(v).reshape((rows,) + (1,) * expected.ndim)
            operands.append(v)
        with xp.errstate(all="ignore"):
            got = xp.broadcast_to(xp.asarray(guard.compared.pyop(*operands)), (rows,) + expected.shape)
            differ = (got.reshape(rows, -1) != expected.reshape(1, -1)).any(axis=1)
            if guard.ties:
                equal = xp.broadcast_to(xp.asarray(operands[0] == operands[1]), (rows,) + expected.shape)
                differ |= equal.reshape(rows, -1).any(axis=1)
        self.crossed.update(xp.flatnonzero(differ).tolist())
        return True

    def _recompute_all(self, guard) -> bool:
        """A read of a primitive's result (or of a value itself) that the run took as an array, at
        every point at once: the primitive lifted over the stack as the pass lifts its steps,
        each point's bytes against the recorded ones (replay_guards.outcome_key compares bytes).
        False where the result is not such an array (each point is then checked by itself)."""
        xp, rows, key = np(), self.rows, guard.outcome
        if not (key.__class__ is tuple and len(key) == 4 and key[0] == "array"):
            return False
        leaves = [constant if j is None else self.values[j] for j, constant in guard.sources]
        flags = [j is not None and self.flags[j] for j, _ in guard.sources]
        if guard.applied is READ_ITSELF:
            got = leaves[0]
        else:
            with xp.errstate(all="ignore"):
                got = stacked_apply(guard.applied.prim, tuple(leaves), flags, guard.applied.params or None, rows)
        got = xp.asarray(to_host(got))
        if got.shape != (rows,) + tuple(key[1]) or got.dtype.str != key[2]:
            return False
        bits = xp.dtype(f"u{got.dtype.itemsize}") if got.dtype.itemsize in (1, 2, 4, 8) else xp.dtype("u1")
        mine = xp.ascontiguousarray(got).reshape(rows, -1).view(bits)     # bit by bit: nan and -0.0 too
        differ = (mine != xp.frombuffer(key[3], dtype=bits).reshape(1, -1)).any(axis=1)
        self.crossed.update(xp.flatnonzero(differ).tolist())
        return True

    def _check_all(self, guard) -> None:
        try:
            guard.check(self.values)
        except PathChanged:
            if self.crossed is None:
                raise
            self.crossed.update(range(self.rows))


def outcome_array(outcome):
    """A comparison's recorded result (replay_guards.outcome_key) as a bool array, or None."""
    if outcome.__class__ is bool:
        return np().asarray(outcome)
    if outcome.__class__ is tuple and len(outcome) == 4 and outcome[0] == "array" and outcome[2] == "|b1":
        return np().frombuffer(outcome[3], dtype=bool).reshape(outcome[1])
    return None


class PointValues:
    """Point r's values of a batched pass, read by index as a guard reads a point replay's."""
    __slots__ = ("values", "flags", "row", "classes")

    def __init__(self, values, flags, row, classes):
        self.values, self.flags, self.row, self.classes = values, flags, row, classes

    def __getitem__(self, j):
        v = self.values[j]
        if not self.flags[j]:
            return v
        v = v[self.row]
        cls = self.classes[j] if self.classes is not None and j < len(self.classes) else None
        if cls is float or cls is int or cls is bool:
            return cls(v)
        if cls is not None and cls is not v.__class__ and isinstance(v, np().generic):
            return np().asarray(v)                # a 0-d array in the point replay
        return v


@dataclass
class StepRecord:
    """What a batched pass did at one step."""
    prim: object
    span: object
    params: object
    stacked: bool            # whether it ran on the points' own values (else on shared ones)
    notes: int               # the kink notes made so far in the pass, this step's included
    args: tuple              # (argument, whether stacked) pairs, kept for primitives with a kink side


def stacked_rows(out, is_stacked: bool, rows: int):
    """The raw output per point as a (rows, size) float64 host array."""
    raw = np().asarray(to_host(strip(out)), dtype=np().float64)
    if not is_stacked:
        raw = np().broadcast_to(raw.reshape(1, -1), (rows, raw.size))
    return raw.reshape(rows, -1)


def point_shape(out, is_stacked: bool) -> tuple:
    s = shape(out)
    return s[1:] if is_stacked else s
