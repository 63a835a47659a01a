"""The closures that evaluate operators: + - * / @ // % and comparisons.

Scalars stay Python floats: a float operand takes Python's own operator, a traced float is
recorded directly, and operands that are constants or local variables are read inline. Anything
else goes through the engine ops, so boxes of any level are recorded.
"""
from __future__ import annotations

from ...parser.errors import SourceError
from ..core import ops
from ..core.backend import is_array, xp
from ..core.notes import NOTES, READS
from ..core.sequences import SEQUENCES, as_array, list_operation, sequence_comparison
from ..core.tape import BOXES, Var, strip
from .errors import runtime_error, unassigned

# The engine op of each operator, and of each comparison. `//` and `%` are numpy's floor_divide
# and mod (Python's // and % for two numbers, y not 0), the builtins floor_divide() and mod().
BINARY_OPS = {"+": ops.add, "-": ops.sub, "*": ops.mul, "/": ops.div, "@": ops.matmul,
              "//": ops.floor_divide, "%": ops.mod}
COMPARISONS = {"<": ops.lt, "<=": ops.le, ">": ops.gt, ">=": ops.ge, "==": ops.eq, "!=": ops.ne}


# ---- operator closures ------------------------------------------------------------------------

# For two Python floats: the table's own float forward of each op (Python's operator where it
# agrees exactly with the engine, IEEE division), called directly: the engine op's call is saved.
FLOAT_OPS = {op: BINARY_OPS[op].float_impl for op in ("+", "-", "*", "/")}


def binary_closure(op, lhs, rhs, span, label):
    """The closure for one binary operator. Floats take Python's operator; anything else (boxes,
    arrays) goes to the engine op, whose errors are located at the operator. The common operand
    shapes (a local or a constant on either side) are read inline."""
    fn = BINARY_OPS[op]
    pyop = FLOAT_OPS.get(op)
    lk, rk = lhs[0], rhs[0]
    repeats = op == "*" and "const" in (lk, rk)      # `[0.0] * 3`: a literal count

    def slow(a, b):                           # boxes and arrays: the engine op, errors located here
        NOTES.span = span
        try:
            if a.__class__ in SEQUENCES or b.__class__ in SEQUENCES:
                joined = list_operation(op, a, b, repeats)   # sequences as Python joins and repeats them
                if joined is not None:
                    return joined
                a, b = as_array(a), as_array(b)
            return fn(a, b)
        except Exception as exc:
            raise runtime_error(exc, span, label, (a, b)) from None

    if pyop is None:                          # // % @: no float shortcut
        left, right = _fetch(lhs), _fetch(rhs)
        return lambda frame: slow(left(frame), right(frame))
    if lk == "local" or rk == "local":
        inline = _local_operand_closure(pyop, slow, lhs, rhs)
        if inline is not None:
            return inline
    return _fetched_operand_closure(pyop, slow, lhs, rhs)


def _local_operand_closure(pyop, slow, lhs, rhs):
    """A local variable with a constant or another local: read from the frame inline (the
    scalar loop's commonest shapes). None for other shapes."""
    lk, lv, lspan = lhs
    rk, rv, rspan = rhs
    if lk == "local" and rk == "const":
        def local_const(frame):
            try:
                a = frame.vars[lv]
            except KeyError:
                raise unassigned(lv, lspan) from None
            if a.__class__ is float:
                return pyop(a, rv)
            return slow(a, rv)
        return local_const
    if lk == "const" and rk == "local":
        def const_local(frame):
            try:
                b = frame.vars[rv]
            except KeyError:
                raise unassigned(rv, rspan) from None
            if b.__class__ is float:
                return pyop(lv, b)
            return slow(lv, b)
        return const_local
    if lk == "local" and rk == "local":
        def local_local(frame):
            d = frame.vars
            try:
                a = d[lv]
                b = d[rv]
            except KeyError:
                missing, where = (lv, lspan) if lv not in d else (rv, rspan)
                raise unassigned(missing, where) from None
            if a.__class__ is float and b.__class__ is float:
                return pyop(a, b)
            return slow(a, b)
        return local_local
    return None


def _fetched_operand_closure(pyop, slow, lhs, rhs):
    """Operands computed by their own closures (or constants), then Python's operator on floats."""
    lk, lv, _ = lhs
    rk, rv, _ = rhs
    left = _fetch(lhs)
    right = _fetch(rhs)
    if rk == "const":
        def expr_const(frame):
            a = left(frame)
            if a.__class__ is float:
                return pyop(a, rv)
            return slow(a, rv)
        return expr_const
    if lk == "const":
        def const_expr(frame):
            b = right(frame)
            if b.__class__ is float:
                return pyop(lv, b)
            return slow(lv, b)
        return const_expr

    def expr_expr(frame):
        a = left(frame)
        b = right(frame)
        if a.__class__ is float and b.__class__ is float:
            return pyop(a, b)
        return slow(a, b)
    return expr_expr


def _fetch(operand):
    kind, v, span = operand
    if kind == "expr":
        return v
    if kind == "const":
        return lambda frame: v

    def load_local(frame):
        try:
            return frame.vars[v]
        except KeyError:
            raise unassigned(v, span) from None
    return load_local


_FLOAT_COMPARE = {op: fn.float_impl for op, fn in COMPARISONS.items()}
_TIE_COMPARE = frozenset(("<=", ">=", "==", "!="))


def any_equal(a, b) -> bool:
    """Whether two values (boxed or not) are equal anywhere: a comparison at a tie."""
    a, b = strip(a), strip(b)
    if a.__class__ is float and b.__class__ is float:
        return a == b
    try:
        return bool(xp().any(xp().asarray(a) == xp().asarray(b)))
    except Exception:
        return False


def _may_tie(a, b) -> bool:
    """Whether a comparison of these operands (boxed or not) can meet a tie that matters: a traced
    operand holds floats (or complex numbers), which a derivative may move. Traced integers
    (integer data watched by a recording run: indices, parents, labels) carry no derivative, and
    a plain run, where integer data is a constant, notes no tie of theirs."""
    for v in (a, b):
        if v.__class__ in BOXES:
            value = strip(v)
            kind = getattr(getattr(value, "dtype", None), "kind", None)
            if value.__class__ is not int and value.__class__ is not bool and (kind is None or kind in "fc"):
                return True
    return False


def compare_values(fn, a, b, span, opname):
    NOTES.span = span
    try:
        if a.__class__ in SEQUENCES and b.__class__ in SEQUENCES:
            return sequence_comparison(opname, a, b)        # Python's: one truth value
        if a.__class__ in SEQUENCES or b.__class__ in SEQUENCES:
            a, b = as_array(a), as_array(b)
        traced = a.__class__ in BOXES or b.__class__ in BOXES
        r = fn(strip(a), strip(b)) if traced and READS.hook is not None else fn(a, b)
    except Exception as exc:
        raise runtime_error(exc, span, f"`{opname}`", (a, b)) from None
    if traced:
        ties = opname in _TIE_COMPARE and _may_tie(a, b)
        if READS.hook is not None:          # read as a number: its guard recomputes it
            READS.hook((a, b), r, Compared(fn, opname), opname, _TIES if ties else None)
        if ties and any_equal(a, b):
            NOTES.kink("compare", f"`{opname}` compared equal values: no gradient flows through it")
    return r


class Compared:
    """A comparison on raw operands (a pair), as the comparison closures make it: Python's
    operator on two floats, the engine op otherwise (a 0-d result as a bool): what a guard of a
    comparison of traced values recomputes."""
    __slots__ = ("fn", "pyop")

    def __init__(self, fn, opname):
        self.fn, self.pyop = fn, _FLOAT_COMPARE[opname]

    def __call__(self, raw):
        x, y = raw
        if x.__class__ is float and y.__class__ is float:
            return self.pyop(x, y)
        return self.fn(x, y)


def _ties(raw) -> bool:
    """Whether a comparison's raw operands (a pair) are equal anywhere: where the interpreter notes
    a tie of `<=`, `>=`, `==` or `!=` (a guard hands such a call to the interpreter)."""
    return any_equal(*raw)


_TIES = _ties


def _read_comparison(a, b, result, opname) -> None:
    """A comparison of traced floats, read as a number while a run records (its guard)."""
    READS.hook((a, b), result, Compared(COMPARISONS[opname], opname), opname,
               _TIES if opname in _TIE_COMPARE else None)


def chain_and(result, r, span, opname):
    """A chain's comparisons combined elementwise (`a < b < c`: a < b and b < c at each
    element); results whose shapes do not broadcast are a shape mismatch at the operator."""
    try:
        return xp().logical_and(result, r)
    except ValueError:
        raise SourceError("shape mismatch", f"`{opname}`: this comparison gives shape {tuple(r.shape)}, the "
                          f"comparisons before it in the chain shape {tuple(result.shape)}, and these do "
                          "not broadcast together", span,
                          "compare arrays whose shapes broadcast, or write the comparisons apart") from None


def comparison_closure(lhs, fn, rhs, span, opname):
    """One comparison. Comparisons carry no gradient, so traced floats are compared as floats.
    A local variable compared with a constant (`x > 0`, `i < n`) is read inline."""
    pyop = _FLOAT_COMPARE[opname]
    ties = opname in _TIE_COMPARE

    def general(a, b):
        x = a.value if a.__class__ is Var else a
        y = b.value if b.__class__ is Var else b
        if x.__class__ is float and y.__class__ is float:
            if a.__class__ is Var or b.__class__ is Var:                         # traced values only
                if ties and x == y:
                    NOTES.span = span
                    NOTES.kink("compare", f"`{opname}` compared equal values: no gradient flows through it")
                if READS.hook is not None:
                    NOTES.span = span
                    r = pyop(x, y)
                    _read_comparison(a, b, r, opname)
                    return r
            return pyop(x, y)
        r = compare_values(fn, a, b, span, opname)
        return bool(r) if is_array(r) and r.ndim == 0 else r

    if lhs[0] == "local" and rhs[0] == "const" and not ties:
        name, lspan, c = lhs[1], lhs[2], rhs[1]

        def local_const(frame):
            try:
                a = frame.vars[name]
            except KeyError:
                raise unassigned(name, lspan) from None
            if a.__class__ is float:
                return pyop(a, c)
            if a.__class__ is Var and a.value.__class__ is float and READS.hook is None:
                return pyop(a.value, c)
            return general(a, c)
        return local_const
    left, right = _fetch(lhs), _fetch(rhs)

    def compare(frame):
        return general(left(frame), right(frame))
    return compare
