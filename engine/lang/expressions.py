"""Compiling expressions: names, arithmetic, comparisons, conditions, indexing, lists.

A binary operator reads a constant or a local operand inline (see `operand`); the operators'
closures themselves are in operator_closures.py."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError, option
from ..core import ops
from ..core.backend import is_array
from ..core.notes import NOTES
from ..core.sequences import SEQUENCES, as_array, elements_in, numpy_reading
from ..core.tape import Dual, Var
from .aliases import Stale, noting
from .callables import Builtin, UserFunction
from .dicts import item as dict_item
from .errors import runtime_error, unassigned, unknown_name
from .spellings import refuse_math_namesake, unknown_module_name
from .operator_closures import (BINARY_OPS, COMPARISONS, FLOAT_OPS, binary_closure, chain_and, comparison_closure,
                                compare_values)
from .values import RangeValue, as_int, describe, literal, raw_getitem, shape_of, truth

_NESTED_CHAIN = 8           # a + b + ... with more operators than this runs as a loop


class ExpressionCompiler:
    """The Interpreter's expressions (a mixin: `self` is the Interpreter). Fused regions are
    no business of theirs: the tape makes them of pending values (core/lazy.py)."""

    def expr(self, e, scope):
        return getattr(self, "e_" + type(e).__name__)(e, scope)

    def e_Num(self, e, scope):
        v = literal(e.value)
        return lambda frame: v

    def e_Bool(self, e, scope):
        v = e.value
        return lambda frame: v

    def e_Name(self, e, scope):
        name = e.id
        span = e.span
        refuse_math_namesake(e.module, name, span)
        if e.module and name in self.builtins:      # np.median is numpy's even where `median` is a variable
            b = self.builtins[name]
            return lambda frame: b
        where = scope.find(name)
        if where == "local":
            def load_local(frame):
                try:
                    v = frame.vars[name]
                except KeyError:
                    raise unassigned(name, span) from None
                if v.__class__ is Stale:
                    raise v.read(name, span)
                return v
            return load_local
        if where == "free":
            def load_free(frame):
                f = frame.parent
                while f is not None:
                    d = f.vars
                    if name in d:
                        v = d[name]
                        if v.__class__ is Stale:
                            raise v.read(name, span)
                        return v
                    f = f.parent
                raise unassigned(name, span)
            return load_free
        if where == "global":
            globals_ = self.globals
            builtin = self.builtins.get(name)

            def load_global(frame):
                try:
                    v = globals_.vars[name]
                except KeyError:
                    if builtin is not None:
                        return builtin
                    raise unassigned(name, span) from None
                if v.__class__ is Stale:
                    raise v.read(name, span)
                return v
            return load_global
        if name in self.builtins:
            b = self.builtins[name]
            return lambda frame: b
        if e.module:                  # written np.NAME, np.linalg.NAME: NAME is no builtin
            raise unknown_module_name(name, e.module, span, self.builtins)
        if "." in name:               # np.linalg alone: the parser keeps a module path as one name
            raise SourceError("type error", f"`{name}` is a module, not a value", span,
                              f"name a function in it: {name}.NAME(x)")
        raise unknown_name(name, span, list(scope.globals) + list(self.builtins) + scope.enclosing_locals())

    def e_UnaryOp(self, e, scope):
        ev = self.expr(e.operand, scope)
        span = e.span
        if e.op == "+":
            return ev

        def neg(frame):
            v = ev(frame)
            if v.__class__ is float:
                return -v
            NOTES.span = span
            try:
                return ops.neg(as_array(v))
            except Exception as exc:
                raise runtime_error(exc, span, "unary `-`") from None
        return neg

    def e_BinChain(self, e, scope):
        # a - b + c is ((a - b) + c): a short chain nests one binary closure per operator; a long
        # one (a sum of 30,000 terms) is a loop, so running it needs no deep Python stack
        if len(e.ops) <= _NESTED_CHAIN:
            left = self.operand(e.operands[0], scope)
            for op, x, sp in zip(e.ops, e.operands[1:], e.op_spans):
                left = ("expr", binary_closure(op, left, self.operand(x, scope), sp, f"`{op}`"), None)
            return left[1]
        first = self.expr(e.operands[0], scope)
        rest = [(BINARY_OPS[op], FLOAT_OPS.get(op), self.expr(x, scope), sp, f"`{op}`")
                for op, x, sp in zip(e.ops, e.operands[1:], e.op_spans)]

        def chain(frame):
            a = first(frame)
            for fn, pyop, rhs, span, label in rest:
                b = rhs(frame)
                if pyop is not None and a.__class__ is float and b.__class__ is float:
                    a = pyop(a, b)
                    continue
                NOTES.span = span
                try:
                    if a.__class__ in SEQUENCES or b.__class__ in SEQUENCES:
                        a, b = as_array(a), as_array(b)
                    a = fn(a, b)
                except Exception as exc:
                    raise runtime_error(exc, span, label, (a, b)) from None
            return a
        return chain

    def binary(self, op, lhs, rhs, op_span, scope, label):
        """The closure for `lhs op rhs` (AST nodes)."""
        return binary_closure(op, self.operand(lhs, scope), self.operand(rhs, scope), op_span, label)

    def operand(self, e, scope):
        """How a binary operator fetches an operand: a constant and a local variable are read
        inline by the operator's closure (no call of their own); anything else is a closure."""
        if isinstance(e, nodes.Num):
            return ("const", literal(e.value), e.span)
        if isinstance(e, nodes.Name) and scope.find(e.id) == "local":
            return ("local", e.id, e.span)
        return ("expr", self.expr(e, scope), e.span)

    def e_Power(self, e, scope):
        base = self.expr(e.base, scope)
        exp = self.expr(e.exponent, scope)
        span = e.op_span

        def power(frame):
            a = base(frame)
            b = exp(frame)
            NOTES.span = span
            try:
                if a.__class__ in SEQUENCES or b.__class__ in SEQUENCES:
                    a, b = as_array(a), as_array(b)
                return ops.pow(a, b)
            except Exception as exc:
                raise runtime_error(exc, span, "`**`", (a, b)) from None
        return power

    def e_Compare(self, e, scope):
        if len(e.ops) == 1:
            return comparison_closure(self.operand(e.left, scope), COMPARISONS[e.ops[0]],
                             self.operand(e.comparators[0], scope), e.op_spans[0], e.ops[0])
        left = self.expr(e.left, scope)
        rest = [(COMPARISONS[op], self.expr(x, scope), sp, op) for op, x, sp in zip(e.ops, e.comparators, e.op_spans)]

        def compare(frame):
            a = left(frame)
            result = True
            for fn, rhs, span, opname in rest:
                b = rhs(frame)
                r = compare_values(fn, a, b, span, opname)
                if r.__class__ is not bool and not (is_array(r) and r.ndim == 0):
                    result = r if result is True else chain_and(result, r, span, opname)
                elif not r:
                    return False
                a = b
            return result
        return compare

    def e_BoolOp(self, e, scope):
        values = [(self.expr(v, scope), v.span) for v in e.values]
        is_and = e.op == "and"

        def boolop(frame):
            v = None
            for ev, span in values:
                v = ev(frame)
                t = truth(v, span, f"operand of `{e.op}`")
                if t != is_and:
                    return v
            return v
        return boolop

    def e_Not(self, e, scope):
        ev = self.expr(e.operand, scope)
        span = e.operand.span
        return lambda frame: not truth(ev(frame), span, "operand of `not`")

    def e_IfExp(self, e, scope):
        test = self.expr(e.test, scope)
        body = self.expr(e.body, scope)
        orelse = self.expr(e.orelse, scope)
        span = e.test.span
        key = (span.line, span.column)
        sig = self.signature

        def ifexp(frame):
            c = truth(test(frame), span)
            sig.append((key, c))
            return body(frame) if c else orelse(frame)
        return ifexp

    def index_parts(self, items, scope) -> list:
        """A subscript's items compiled: ("slice", [lower, upper, step]), ("const", None or
        Ellipsis: a new axis or `...`, known when the subscript compiles) or ("index", closure),
        each with its span. Shared by subscripts and item assignment."""
        parts = []
        for item in items:
            if isinstance(item, nodes.Slice):
                parts.append(("slice", [self.expr(p, scope) if p is not None else None
                                        for p in (item.lower, item.upper, item.step)], item.span))
            elif isinstance(item, (nodes.NoneLit, nodes.EllipsisLit)) or is_newaxis(item, scope):
                parts.append(("const", Ellipsis if isinstance(item, nodes.EllipsisLit) else None, item.span))
            else:
                parts.append(("index", self.expr(item, scope), item.span))
        return parts

    def e_Subscript(self, e, scope):
        value = self.expr(e.value, scope)
        parts = self.index_parts(e.index, scope)
        span = e.span
        noted = noting(self.may_write)

        def subscript(frame):
            v = value(frame)
            if v.__class__ is dict:
                item = dict_item(v, dict_key(parts, frame, span), span)
                if item.__class__ is Stale:
                    raise item.read(None, span)
                return item
            idx = []
            for kind, ev, sp in parts:
                if kind == "slice":
                    bounds = [as_int(p(frame), sp, "a slice bound") if p is not None else None for p in ev]
                    idx.append(slice(*bounds))
                elif kind == "const":
                    idx.append(ev)
                else:
                    i = ev(frame)
                    if i.__class__ is list:     # x[[0, 2]]: numpy reads the list as an index array
                        i = numpy_reading(i)
                    if (i.__class__ is Var or i.__class__ is Dual) and not shape_of(i):
                        idx.append(as_int(i, sp))   # a traced number: read as a whole number
                        continue
                    iv = ops.read(i)            # an index array read from a traced value
                    if is_array(iv) and iv.ndim > 0:
                        if iv.dtype == bool:
                            idx.append(iv)
                        else:
                            idx.append(iv.astype(int) if bool((iv == iv.astype(int)).all()) else
                                       _bad_index(iv, sp))
                    else:
                        idx.append(as_int(i, sp))
            index = idx[0] if len(idx) == 1 else tuple(idx)
            if v.__class__ is list and not (index.__class__ in (int, slice)):
                v = numpy_reading(v)        # lst[i, j], lst[mask]: numpy's reading of the list
            shp = shape_of(v)
            if v.__class__ in SEQUENCES:
                try:
                    item = v[index]
                except Exception as exc:
                    raise runtime_error(exc, span, "indexing") from None
                if item.__class__ is Stale:
                    raise item.read(None, span)
                return item
            if not shp:
                if all(kind == "const" for kind, _, _ in parts) and _is_number(v):
                    NOTES.span = span          # x[None], x[..., None] on a 0-d value: new axes only
                    return ops.reshape(v, tuple(1 for item in idx if item is None))
                raise SourceError("index error", f"cannot index {describe(v)}", span)
            NOTES.span = span
            try:
                return noted(ops.getitem(v, index) if v.__class__ in (Var, Dual) else raw_getitem(v, index))
            except Exception as exc:
                raise runtime_error(exc, span, "indexing") from None
        return subscript

    def e_Slice(self, e, scope):
        raise SourceError("syntax error", "a slice is only allowed inside [ ]", e.span)

    def e_ListExpr(self, e, scope):
        items = [(self.expr(x, scope), x.span) for x in e.elts]
        span = e.span
        me = self

        def listexpr(frame):
            vals = [ev(frame) for ev, _ in items]
            NOTES.span = span
            try:
                return me.make_array(vals, [sp for _, sp in items], span)
            except SourceError:
                raise
            except Exception as exc:     # e.g. numpy's limit of 64 dimensions for deep nesting
                raise runtime_error(exc, span, "list") from None
        return listexpr

    def make_array(self, vals, spans, span):
        """A list literal: a Python list (`[a] + [b]` joins, `len` counts its items, `.append`
        rebinds), read as the array numpy makes of it wherever an array is expected: an operand
        of arithmetic with an array, an argument of a numpy function, an index, an output
        (core/sequences.py; elements of different shapes are numpy's ragged-sequence error there)."""
        for v, sp in zip(vals, spans):
            if isinstance(v, (UserFunction, Builtin, RangeValue)) or v is None:
                raise SourceError("type error", f"a list element is {describe(v)}, not a number or array", sp)
        count = elements_in(vals)
        if count > self.limits.elements:               # `x = [x, x]` doubles each time
            raise SourceError("too large", f"the list would make an array of {count:,} elements, more than the "
                              f"limit of {self.limits.elements:,}", span, f"raise the limit with {option('max_elements')}")
        return vals

    def e_TupleExpr(self, e, scope):
        items = [self.expr(x, scope) for x in e.elts]
        return lambda frame: tuple(ev(frame) for ev in items)


def is_newaxis(item, scope) -> bool:
    """`np.newaxis` (or `newaxis`) in a subscript, where no variable has that name."""
    return isinstance(item, nodes.Name) and item.id == "newaxis" and scope.find("newaxis") is None


def dict_key(parts, frame, span):
    """The one key of `d[key]` (a subscript's compiled parts, see index_parts)."""
    if len(parts) != 1 or parts[0][0] != "index":
        raise SourceError("index error", "a dict takes one key: d[key]", span)
    return parts[0][1](frame)


def _is_number(v) -> bool:
    return v.__class__ in (float, int, bool, Var, Dual) or is_array(v)


def _bad_index(iv, span):
    raise SourceError("type error", "an index array must hold whole numbers", span)
