"""The AST: frozen dataclasses, each node with the source span it came from.

Long left-associative chains (`a + b - c + ...`) are one flat node, so a 100,000-character
sum is a wide node rather than a 50,000-deep tree: nothing downstream has to recurse that deep.

Why `@node` and not `@dataclass(frozen=True)`: the standard decorator compiles six methods per
class with exec, which for these 30 classes cost ~20 ms of every start-up (a third of
importing numpy). `@node` makes the same slotted dataclasses (fields(), replace(), asdict(),
match statements all work) and takes __init__, __repr__, __eq__, __hash__ and immutability from
one shared base class instead: no exec at all.
"""
from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, dataclass


class Node:
    """Behaviour shared by every AST class (and Span): frozen, compared and hashed by value."""
    __slots__ = ()
    _fields: tuple = ()
    _defaults: dict = {}

    def __init__(self, *args, **kwargs):
        names = self._fields
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments but {len(args)} were given")
        setter = object.__setattr__
        for name, value in zip(names, args):
            setter(self, name, value)
        if len(args) < len(names) or kwargs:
            defaults = self._defaults
            for name in names[len(args):]:
                if name in kwargs:
                    setter(self, name, kwargs.pop(name))
                elif name in defaults:
                    setter(self, name, defaults[name])
                else:
                    raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
            if kwargs:
                raise TypeError(f"{type(self).__name__}() got an unexpected argument {next(iter(kwargs))!r}")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __repr__(self):
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash((self.__class__, self._values()))

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self):
        return self._values()

    def __setstate__(self, state):
        for name, value in zip(self._fields, state):
            object.__setattr__(self, name, value)


def node(cls):
    """A slotted dataclass with Node's methods (see the module docstring)."""
    cls = dataclass(slots=True, init=False, repr=False, eq=False)(cls)
    cls._fields = tuple(cls.__dataclass_fields__)
    cls._defaults = {name: f.default for name, f in cls.__dataclass_fields__.items() if f.default is not MISSING}
    return cls


@node
class Span(Node):
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"

    def to(self, other: "Span") -> "Span":
        return Span(self.line, self.column, other.end_line, other.end_column)


# ---- expressions ------------------------------------------------------------------------------

@node
class Num(Node):
    value: float
    span: Span


@node
class Str(Node):
    """A string literal: only as an argument of the builtins that take one (parser/numpy_forms.py)."""
    value: str
    span: Span


@node
class Bool(Node):
    value: bool
    span: Span


@node
class Name(Node):
    id: str
    span: Span
    module: str = ""         # the module path it was written through: `np.linalg` for np.linalg.det


@node
class UnaryOp(Node):
    op: str                  # '-' or '+'
    operand: object
    span: Span


@node
class BinChain(Node):
    """operands[0] ops[0] operands[1] ops[1] ... evaluated left to right (+ - * / @)."""
    operands: tuple
    ops: tuple               # operator strings
    op_spans: tuple          # the span of each operator token, for errors and the graph
    span: Span


@node
class Power(Node):
    base: object
    exponent: object
    op_span: Span
    span: Span


@node
class Compare(Node):
    """left ops[0] comparators[0] ops[1] comparators[1] ... (chained, like Python)."""
    left: object
    ops: tuple
    comparators: tuple
    op_spans: tuple
    span: Span


@node
class BoolOp(Node):
    op: str                  # 'and' / 'or'
    values: tuple
    span: Span


@node
class Not(Node):
    operand: object
    span: Span


@node
class IfExp(Node):
    test: object
    body: object
    orelse: object
    span: Span


@node
class Call(Node):
    func: object             # an expression; usually a Name, or an Attribute for a method
    args: tuple
    span: Span
    keywords: tuple = ()     # Keywords, in source order


@node
class Keyword(Node):
    """`name=value` in a call."""
    name: str
    value: object
    span: Span               # the name's


@node
class Attribute(Node):
    """`value.attr` on an array (module paths like np.sin are resolved to Names by the parser)."""
    value: object
    attr: str
    attr_span: Span
    span: Span


@node
class NoneLit(Node):
    """`None`: only meaningful in a subscript (a new axis, numpy's newaxis)."""
    span: Span


@node
class EllipsisLit(Node):
    """`...` in a subscript."""
    span: Span


@node
class ListComp(Node):
    """[elt for target in iter if cond ...]: clauses is a tuple of (target, iter, conds), each
    target a Name or a TupleExpr of Names. as_dict: {key: value for ...}, whose elt is the
    TupleExpr (key, value)."""
    elt: object
    clauses: tuple
    span: Span
    as_dict: bool = False


@node
class Lambda(Node):
    params: tuple            # parameter names
    defaults: tuple          # expressions for the last len(defaults) parameters
    body: object
    span: Span


@node
class Slice(Node):
    lower: object | None
    upper: object | None
    step: object | None
    span: Span


@node
class Subscript(Node):
    value: object
    index: tuple             # expressions and Slices, one per axis
    span: Span


@node
class ListExpr(Node):
    elts: tuple
    span: Span


@node
class DictExpr(Node):
    """{key: value, ...}: keys and values are expressions (a key a Str or a number)."""
    keys: tuple
    values: tuple
    span: Span


@node
class TupleExpr(Node):
    elts: tuple
    span: Span


# ---- statements -------------------------------------------------------------------------------

@node
class Assign(Node):
    targets: tuple           # Names; more than one for `a, b = ...`
    value: object
    unpack: bool             # True for a tuple target
    span: Span


@node
class AugAssign(Node):
    target: Name
    op: str                  # '+', '-', '*', '/'
    value: object
    op_span: Span
    span: Span


@node
class SubscriptAssign(Node):
    """`x[i] = v` (op None) or `x[i] += v`: x is rebound to an updated copy (value semantics)."""
    target: object           # a Subscript whose value is a Name
    op: str | None
    value: object
    op_span: Span
    span: Span


@node
class Import(Node):
    """`import numpy as np`, `from math import pi`: declarations naming builtins; names is a tuple
    of (name, bound_as, span) for the from-form, empty for `import MODULE`."""
    module: str
    alias: str | None
    names: tuple
    module_span: Span
    span: Span


@node
class ExprStmt(Node):
    value: object
    span: Span


@node
class Return(Node):
    value: object | None
    span: Span


@node
class Pass(Node):
    span: Span


@node
class Break(Node):
    span: Span


@node
class Continue(Node):
    span: Span


@node
class If(Node):
    test: object
    body: tuple
    orelse: tuple            # empty, or the statements of else (an elif is a nested If)
    span: Span


@node
class While(Node):
    test: object
    body: tuple
    span: Span


@node
class For(Node):
    target: object           # a Name, or a TupleExpr of Names to unpack each item into
    iter: object
    body: tuple
    span: Span


@node
class FunctionDef(Node):
    name: str
    params: tuple            # parameter names
    body: tuple
    span: Span
    defaults: tuple = ()     # expressions for the last len(defaults) parameters


@node
class Module(Node):
    body: tuple
    span: Span


@node
class Expression(Node):
    """What `autodiff grad "EXPR"` parses: one expression."""
    body: object
    span: Span
