"""The decisions a run that records a trace takes on traced values, logged so that a replay can
check them again (diff/replay_guards.py): each comparison and truth test of an if/elif/while
condition or of a conditional expression, and the arguments of a `for` loop's range() (its trip
count and items). lang/replayable.py decides from the AST which programs these guards cover.

The hooks are chosen when a program compiles (`condition`, `loop_items`): a program compiled for
an ordinary run gets the ordinary closures and pays nothing for them."""
from __future__ import annotations

from contextlib import contextmanager

from ...parser import nodes
from ..core.backend import is_array, xp
from ..core.notes import NOTES, READS
from ..core.tape import Dual, Var
from .callables import Builtin
from .errors import runtime_error
from .operator_closures import COMPARISONS, compare_values, comparison_closure
from .values import range_arguments, truth


# ---- the decisions a recording run logs --------------------------------------------------------

class DecisionLog:
    """Where a run that records a trace logs its decisions on traced values: `entries` is a list
    while such a run is compiled and goes on (None otherwise). Each entry is (tape length then
    (None: no trace can be kept), left operand (a range's arguments, as a tuple), right operand
    or None, the comparison, "truth", "range" or "read", outcome, span)."""
    __slots__ = ("entries",)

    def __init__(self):
        self.entries = None


DECISIONS = DecisionLog()


@contextmanager
def recording_decisions():
    """Log the decisions of the runs inside (the list is handed out); the log is off after. A
    traced value read as a plain number (core/tape.py's `read`: a composite's count, order or
    mask, int(), stop_gradient) is logged as a decision no guard checks: no trace is kept."""
    before, DECISIONS.entries = DECISIONS.entries, []
    hook, READS.hook = READS.hook, _log_read
    try:
        yield DECISIONS.entries
    finally:
        DECISIONS.entries = before
        READS.hook = hook


def _log_read(value) -> None:
    if DECISIONS.entries is not None:
        DECISIONS.entries.append((None, value, None, "read", None, NOTES.span))


def _log(a, b, opname, outcome, span) -> None:
    """One decision, if it depends on a traced value (a box): with the tape's length at it
    (none while no run records: a program compiled for one may run again after)."""
    if DECISIONS.entries is None:
        return
    length = _trace_length((a, b))
    if length is not None:
        DECISIONS.entries.append((length, a, b, opname, outcome, span))
        return
    if a.__class__ is Dual or b.__class__ is Dual:
        DECISIONS.entries.append((None, a, b, opname, outcome, span))    # no trace is kept


def _trace_length(values):
    """The length of the recording tape at a decision on `values`, or None if none is a Var. A
    nested derivative's box holds the outer level's: the lowest level reached is the trace's."""
    base = None
    for v in values:
        while v.__class__ is Var:
            if base is None or v.level < base.level:
                base = v
            v = v.value
    return None if base is None else len(base.tape.entries)


def _log_unreplayable(a, b) -> None:
    """A decision on traced values that no guard checks (a chain's comparison of arrays): the
    recorded run keeps no trace."""
    if DECISIONS.entries is not None and (a.__class__ in (Var, Dual) or b.__class__ in (Var, Dual)):
        DECISIONS.entries.append((None, a, b, "chain", None, None))


def condition(interp, node, scope):
    """An if/while condition compiled: as any expression, or, compiled for a run that records a
    trace (DECISIONS on), as `recorded_test` (its truth, each decision logged). Chosen when the
    program compiles, so an interpreted run pays nothing for it."""
    if DECISIONS.entries is None:
        return interp.expr(node, scope)
    return recorded_test(interp, node, scope, node.span, "condition")


def recorded_test(interp, node, scope, span, what):
    """A closure giving the condition's truth (as `truth(value, span, what)`), logging each
    decision: one per comparison and per value tested for truth, as the interpreter meets them."""
    if isinstance(node, nodes.BoolOp):
        parts = [recorded_test(interp, v, scope, v.span, f"operand of `{node.op}`") for v in node.values]
        is_and = node.op == "and"

        def boolop(frame):
            t = None
            for part in parts:
                t = part(frame)
                if t != is_and:
                    return t
            return t
        return boolop
    if isinstance(node, nodes.Not):
        part = recorded_test(interp, node.operand, scope, node.operand.span, "operand of `not`")
        return lambda frame: not part(frame)
    if isinstance(node, nodes.Compare):
        if len(node.ops) == 1:
            return _recorded_comparison(interp, node, scope, span, what)
        return _recorded_chain(interp, node, scope, span, what)
    value = interp.expr(node, scope)

    def tested(frame):
        v = value(frame)
        c = truth(v, span, what)
        _log(v, None, "truth", c, span)
        return c
    return tested


def _recorded_comparison(interp, node, scope, span, what):
    left, right = interp.expr(node.left, scope), interp.expr(node.comparators[0], scope)
    held = [None, None]         # the operands, as the comparison fetched them

    def lhs(frame):
        held[0] = v = left(frame)
        return v

    def rhs(frame):
        held[1] = v = right(frame)
        return v
    opname = node.ops[0]
    compare = comparison_closure(("expr", lhs, node.left.span), COMPARISONS[opname],
                                 ("expr", rhs, node.comparators[0].span), node.op_spans[0], opname)

    def compared(frame):
        # an operand may call a function that runs this same comparison (recursion): what it
        # holds belongs to the comparison outside, restored as it was
        outside = held[0], held[1]
        try:
            c = truth(compare(frame), span, what)
            _log(held[0], held[1], opname, c, node.op_spans[0])
        finally:
            held[0], held[1] = outside
        return c
    return compared


def _recorded_chain(interp, node, scope, span, what):
    """A chained comparison `a < b < c` as a condition: as the interpreter's (expressions.py
    e_Compare), each comparison logged as a decision of its own; one on arrays of several
    elements logs none and cannot be replayed (its truth is the whole chain's)."""
    left = interp.expr(node.left, scope)
    rest = [(COMPARISONS[op], interp.expr(x, scope), sp, op)
            for op, x, sp in zip(node.ops, node.comparators, node.op_spans)]

    def chain(frame):
        a = left(frame)
        result = True
        for compare, rhs, op_span, opname in rest:
            b = rhs(frame)
            r = compare_values(compare, a, b, op_span, opname)
            if r.__class__ is not bool and not (is_array(r) and r.ndim == 0):
                _log_unreplayable(a, b)
                result = r if result is True else xp().logical_and(result, r)
            else:
                _log(a, b, opname, bool(r), op_span)
                if not r:
                    return False
            a = b
        return truth(result, span, what)
    return chain


# ---- loops over range(): the trip count as a decision -------------------------------------------

def range_key(*args):
    """(start, length, step) of range(*args) as the builtin range() makes it (lang/builtins.py),
    the items a loop over it binds; None where range() refuses the arguments."""
    ints = range_arguments(args)
    if ints is None or ints[2] == 0:
        return None
    items = range(*ints)
    return items.start, len(items), items.step


def loop_items(interp, node, scope):
    """A `for` loop's iterable compiled: as any expression, or, compiled for a run that records
    a trace (DECISIONS on) where it is a call of the builtin range(), as that call with its
    arguments logged as one decision (its outcome: range_key). Chosen when the program compiles."""
    if DECISIONS.entries is None or not isinstance(node, nodes.Call) or not isinstance(node.func, nodes.Name) \
            or node.func.id != "range" or node.keywords or scope.find("range") is not None \
            or not isinstance(interp.builtins.get("range"), Builtin) or not 1 <= len(node.args) <= 3:
        return interp.expr(node, scope)
    args = [interp.expr(a, scope) for a in node.args]
    make = interp.builtins["range"].fn
    span = node.span

    def items(frame):
        values = [a(frame) for a in args]
        NOTES.span = span
        try:
            made = make(*values)
        except Exception as exc:
            raise runtime_error(exc, span, "range()") from None
        _log_range(values, range_key(made.start, made.stop, made.step), span)
        return made
    return items


def _log_range(values, outcome, span) -> None:
    """A loop's range, if an argument is a traced value: one entry whose operands are the
    arguments (a tuple), its decision `outcome`."""
    if DECISIONS.entries is None:
        return
    length = _trace_length(values)
    if length is not None:
        DECISIONS.entries.append((length, tuple(values), None, "range", outcome, span))
        return
    for v in values:
        if v.__class__ is Dual:
            DECISIONS.entries.append((None, tuple(values), None, "range", outcome, span))
            return
