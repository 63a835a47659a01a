"""Guards: the decisions a recorded run took on traced values (an `if`, `elif` or `while`
condition, a conditional expression's, a `for` loop's range), kept in its trace so that a
replay can check them on the new values.

A recording run logs each decision (lang/recorded_decisions.py: DECISIONS) with the tape's
length at that moment; here each becomes a `Guard` whose `check` recomputes the condition from
the replayed values (a comparison of two of them or of one with a constant, one value's truth,
or the items of range() of them), with the comparison's own op. A replay runs the steps in
order and checks each guard once the values it reads exist: the first outcome that differs
raises `PathChanged` (the call falls back to the interpreter, which records the new path). A
comparison at a tie raises it too, with no outcome (the interpreter notes that tie as a kink,
with its span), as does a range that range() refuses (the interpreter reports it)."""
from __future__ import annotations

from dataclasses import dataclass

from ..core.backend import is_array
from ..core.tape import BOXES, Var
from ..lang.operator_closures import COMPARISONS, any_equal
from ..lang.recorded_decisions import range_key
from ..lang.values import truth
from .fallbacks import PathChanged  # noqa: F401  (the guards raise it)

# comparisons true at equal values: the interpreter notes a kink there (operator_closures)
TIE_COMPARISONS = frozenset(("<=", ">=", "==", "!="))


@dataclass
class Guard:
    """One recorded decision."""
    position: int           # the tape's length at the decision: checked once that many values exist
    check: object           # values -> None, or PathChanged if the decision differs
    outcome: object         # the recorded decision: True/False, or a range's (start, count, step)
    span: object            # the comparison's (or the condition's, the range's) place in the source
    opname: str = ""        # the comparison, "truth" or "range"
    sources: tuple = ()     # per operand (tape index, None) or (None, the constant)


def resolve_guards(tape, logged) -> list | None:
    """The guards of a run's logged decisions (lang/recorded_decisions.py's DECISIONS entries) on `tape`,
    or None if one reads a box the trace does not hold (another tape, a dual number). A box of a
    nested derivative's level (a Var of an inner tape) stands for the value it holds: the trace's
    Var, or a constant of the path."""
    guards = []
    for position, left, right, opname, outcome, span in logged:
        if position is None:
            return None
        sources = []
        for v in (left if opname == "range" else (left, right)):
            while v.__class__ is Var and v.tape is not tape and v.level > tape.level:
                v = v.value                             # a nested derivative's box: what it holds
            if v.__class__ is Var and v.tape is tape and v.value.__class__ not in BOXES:
                sources.append((v.index, None))
            elif v.__class__ in BOXES:
                return None
            else:
                sources.append((None, v))               # fixed on this path: a constant
        number = len(guards)
        if opname == "truth":
            check = truth_check(number, sources[0][0], outcome, span)
        elif opname == "range":
            check = range_check(number, sources, outcome)
        else:
            check = comparison_check(number, sources[0], sources[1], opname, outcome, span)
        guards.append(Guard(position=position, check=check, outcome=outcome, span=span, opname=opname,
                            sources=tuple(sources[:1] if opname == "truth" else sources)))
    return guards


def truth_check(number, index, outcome, span):
    def check(values):
        if truth(values[index], span) != outcome:
            raise PathChanged(number, not outcome)
    return check


def range_check(number, sources, outcome):
    """A loop's range on the replayed values: the same items (start, count, step), or
    PathChanged with the new ones (None where range() refuses them: the interpreter says why)."""
    def check(values):
        items = range_key(*[a if i is None else values[i] for i, a in sources])
        if items != outcome:
            raise PathChanged(number, items)
    return check


def comparison_check(number, left, right, opname, outcome, span):
    """The comparison on the replayed values, as the interpreter's comparison closure makes it:
    Python's operator on two floats, the engine op otherwise."""
    compare = COMPARISONS[opname]
    float_compare = compare.float_impl
    ties = opname in TIE_COMPARISONS
    (i, a), (j, b) = left, right

    def check(values):
        x = a if i is None else values[i]
        y = b if j is None else values[j]
        if x.__class__ is float and y.__class__ is float:
            if ties and x == y:
                raise PathChanged(number, None)
            result = float_compare(x, y)
        else:
            if ties and any_equal(x, y):
                raise PathChanged(number, None)
            result = compare(x, y)
            if is_array(result) and result.ndim == 0:
                result = bool(result)
        if truth(result, span) != outcome:
            raise PathChanged(number, not outcome)
    return check


def guarded_values(trace, values: list) -> list:
    """`values` (the inputs) extended by every step of a guarded trace, each guard checked as
    soon as the values it reads exist (PathChanged at the first that differs)."""
    forwards = trace.forwards
    append = values.append
    done = 0
    offset = trace.leaves
    for guard in trace.guards:
        upto = guard.position - offset
        while done < upto:
            append(forwards[done](values))
            done += 1
        guard.check(values)
    for forward in forwards[done:]:
        append(forward(values))
    return values


def decisions(trace) -> tuple:
    """A trace's path: the outcome of each of its guards, in order."""
    return tuple(guard.outcome for guard in trace.guards)
