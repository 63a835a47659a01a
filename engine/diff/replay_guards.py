"""Guards: what a recording run read of traced values as plain numbers, kept as the guard
equations of its Program (core/program.py) so that a replay can check them on the new values.

A recording run logs each read as it happens (lang/recorded_decisions.py: a branch's truth, a
comparison, a loop's range, an index, int(), a composite's read, a primitive without a
derivative...), with the tape's length at that moment; here each becomes a `Guard`, a guard
equation at that equation position, whose `check`
recomputes, from the replayed values, what the run took (`take` of the raw values) and compares
it with what it took then, to the bit (`outcome_key`). A replay runs the steps in order and
checks each guard once the values it reads exist: the first that differs raises `PathChanged`
with the new outcome (the call falls back to the interpreter, which records the new path). A
comparison at a tie raises it with no outcome (the interpreter notes that tie as a kink, with
its span), as does a read the new values make fail (range() refused, an index no whole number:
the interpreter reports it). A read no guard can state (a forward-mode derivative's value, a box
of another tape) keeps no trace; its reason is recorded."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..core.backend import is_array, np, to_host
from ..core.notes import NOTES
from ..core.tape import BOXES, Applied, Var, strip
from ..lang.operator_closures import Compared
from .fallbacks import CONFIRMED_ERRORS, PathChanged

# comparisons true at equal values: the interpreter notes a kink there (operator_closures)
TIE_COMPARISONS = frozenset(("<=", ">=", "==", "!="))


@dataclass
class Guard:
    """One recorded read of traced values: a guard equation of the Program."""
    position: int           # the equations before it (the tape's length at the read): checked once
    #                         that many values exist
    check: object           # values -> None, or PathChanged if the read gives another outcome
    outcome: object         # what the run took (outcome_key): True/False, a range's (start, count, step)...
    span: object            # the read's place in the source
    opname: str = ""        # a comparison, "truth", "range", or "" (any other read)
    sources: tuple = ()     # per box or constant read, in order: (tape index, None) or (None, the constant)
    compared: object = None     # a comparison of two operands (sources): its Compared, whose `pyop` a
    #                             batched replay applies to every point's operands at once
    ties: bool = False          # whether equal operands anywhere hand the read to the interpreter
    applied: object = None      # a read of a primitive's result (an Applied on the sources, in order) or
    #                             of the one source itself (READ_ITSELF): a batched replay recomputes it
    #                             at every point at once


def outcome_key(v):
    """What a read took, as a value that compares (and hashes) equal exactly when the bits do:
    numbers as they are (a float's sign of zero and nan by its bits), arrays by shape, dtype and
    bytes, sequences item by item."""
    c = v.__class__
    if c is bool or c is int or v is None:
        return v
    if c is float:
        return v if v == v and v != 0.0 else ("float", struct.pack("<d", v))     # nan's sign too
    if c is tuple or c is list:
        return tuple(outcome_key(x) for x in v)
    if c in BOXES:
        return outcome_key(strip(v))
    if is_array(v) or isinstance(v, np().generic):
        a = np().asarray(to_host(v))
        return ("array", a.shape, a.dtype.str, a.tobytes())
    return (c.__name__, repr(v))


class Unguarded(Exception):
    """A read no guard can state: `reason` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def resolve_guards(tape, logged) -> tuple:
    """(the guards of a run's logged reads on `tape`, whether the run took a derivative inside
    the program, the inputs (tape leaves) a derivative may not be taken in on this path);
    Unguarded where one reads a box the trace does not hold (another tape, a dual number) or the
    run logged a read no guard states. A box of a nested derivative's level (a Var of an inner
    tape) stands for the value it holds: the trace's Var, or a constant of the path. A count a
    value's recording run read as a constant of the path (lang/recorded_decisions.py's
    `constant_of_path`) makes the inputs it depends on ones no derivative is taken in: a run
    differentiating one of them refuses that count."""
    guards, nested, constants = [], False, set()
    for read in logged:
        if read.opname == "nested":
            nested = True
            continue
        if read.opname == "constant":
            constants |= inputs_reached(tape, read.value.index)
            continue
        if read.position is None:
            raise Unguarded(read.reason)
        sources = []
        template = _template(read.value, tape, sources)
        number = len(guards)
        outcome = outcome_key(read.result)
        sources = tuple(sources)
        compared, applied = None, _applied(read, template, len(sources))
        if read.opname == "truth" and len(sources) == 1 and template == 0:
            check = _truth_check(number, sources[0], read.take, outcome)
        elif read.take.__class__ is Compared and template == (tuple, [0, 1]):
            check = _comparison_check(number, sources, read.take, read.tie, outcome, read.span)
            compared = read.take
        else:
            check = _check(number, template, sources, read.take, read.tie, outcome, read.span)
        guards.append(Guard(position=read.position, check=check, outcome=outcome, span=read.span,
                            opname=read.opname, sources=sources, compared=compared, ties=read.tie is not None,
                            applied=applied))
    return guards, nested, frozenset(constants)


READ_ITSELF = "the value itself"      # Guard.applied of a read of one source's raw value


def _applied(read, template, count):
    """Guard.applied of a read: its Applied where it recomputes a primitive on the sources in order
    (an Applied, or the engine op of one on one source), READ_ITSELF where it takes one source as
    it is, else None (and None where ties count)."""
    if read.tie is not None:
        return None
    if read.take is None and template == 0:
        return READ_ITSELF
    if read.take.__class__ is Applied and template == (tuple, list(range(count))):
        return read.take
    prim = getattr(read.take, "primitive", None)   # an engine op (rint): its primitive
    if prim is not None and template == 0:
        return Applied(prim, None)
    return None


def inputs_reached(tape, index: int) -> set:
    """The watched inputs (tape leaves) the tape's entry `index` depends on."""
    entries, seen, reached, todo = tape.entries, set(), set(), [index]
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        entry = entries[i]
        if entry.prim is None:
            reached.add(i)
        todo.extend(j for _, j in entry.parents)
    return reached


def _template(v, tape, sources):
    """How to rebuild a read value from the replayed values: a leaf's number in `sources` (each
    (tape index, None) or (None, a constant)), or (tuple or list, [templates])."""
    c = v.__class__
    if c is tuple or c is list:
        return (c, [_template(x, tape, sources) for x in v])
    while v.__class__ is Var and v.tape is not tape and v.level > tape.level:
        v = v.value                             # a nested derivative's box: what it holds
    if v.__class__ is Var and v.tape is tape and v.value.__class__ not in BOXES:
        sources.append((v.index, None))
    elif v.__class__ in BOXES:
        raise Unguarded("a value of another tape or of a forward-mode derivative read as a number")
    else:
        sources.append((None, v))               # fixed on this path: a constant
    return len(sources) - 1


def _rebuild(template, leaves):
    if template.__class__ is int:
        return leaves[template]
    cls, parts = template
    return cls(_rebuild(t, leaves) for t in parts)


def _truth_check(number, source, take, outcome):
    """One traced value's truth (the commonest guard, made without the general rebuild)."""
    i, constant = source

    def check(values):
        if take(constant if i is None else values[i]) != outcome:
            raise PathChanged(number, not outcome)
    return check


def _comparison_check(number, sources, compared, tie, outcome, span):
    """A comparison of two floats (the commonest guard: a branch on a number) by Python's
    operator, as the comparison closures make it; any other operands as `_check` does."""
    (i, a), (j, b) = sources
    pyop = compared.pyop

    def check(values):
        x = a if i is None else values[i]
        y = b if j is None else values[j]
        if x.__class__ is float and y.__class__ is float:
            if tie is not None and x == y:
                raise PathChanged(number, None)
            if pyop(x, y) is not outcome:
                raise PathChanged(number, not outcome)
            return
        _read_again(number, (x, y), compared, tie, outcome, span)
    return check


def _check(number, template, sources, take, tie, outcome, span):
    """The read again on the replayed values: PathChanged with the new outcome where it differs,
    with none where the values meet a tie or the read fails on them (the interpreter's to say)."""
    def check(values):
        leaves = [constant if i is None else values[i] for i, constant in sources]
        _read_again(number, _rebuild(template, leaves), take, tie, outcome, span)
    return check


def _read_again(number, raw, take, tie, outcome, span) -> None:
    NOTES.span = span                           # a note the read makes is made where the run made it
    if tie is not None and tie(raw):
        raise PathChanged(number, None)
    try:
        result = raw if take is None else take(raw)
    except CONFIRMED_ERRORS:
        raise PathChanged(number, None) from None
    key = outcome_key(result)
    if key != outcome:
        raise PathChanged(number, key)


def guarded_values(trace, values: list, drops=None) -> list:
    """`values` (the inputs) extended by every step of a guarded trace, each guard checked as
    soon as the values it reads exist (PathChanged at the first that differs). `drops`: per
    step, the values dropped once it ran (diff/replay_release.py; a value a guard reads, once the
    step after that guard ran)."""
    forwards = trace.forwards
    append = values.append
    done = 0
    offset = trace.leaves
    for guard in trace.guards:
        upto = guard.position - offset
        while done < upto:
            append(forwards[done](values))
            if drops is not None:
                _drop(values, drops[done])
            done += 1
        guard.check(values)
    for forward in forwards[done:]:
        append(forward(values))
        if drops is not None:
            _drop(values, drops[done])
        done += 1
    return values


def _drop(values: list, positions: list) -> None:
    for j in positions:
        values[j] = None


def decisions(trace) -> tuple:
    """A trace's path: the outcome of each of its guards, in order."""
    return tuple(guard.outcome for guard in trace.guards)
