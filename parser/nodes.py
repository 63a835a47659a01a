"""The AST: frozen dataclasses, each node with the source span it came from.

Long left-associative chains (`a + b - c + ...`) are one flat node, so a 100,000-character
sum is a wide node rather than a 50,000-deep tree: nothing downstream has to recurse that deep.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"

    def to(self, other: "Span") -> "Span":
        return Span(self.line, self.column, other.end_line, other.end_column)


# ---- expressions ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Num:
    value: float
    span: Span


@dataclass(frozen=True, slots=True)
class Bool:
    value: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Name:
    id: str
    span: Span


@dataclass(frozen=True, slots=True)
class UnaryOp:
    op: str                  # '-' or '+'
    operand: object
    span: Span


@dataclass(frozen=True, slots=True)
class BinChain:
    """operands[0] ops[0] operands[1] ops[1] ... evaluated left to right (+ - * / @)."""
    operands: tuple
    ops: tuple               # operator strings
    op_spans: tuple          # the span of each operator token, for errors and the graph
    span: Span


@dataclass(frozen=True, slots=True)
class Power:
    base: object
    exponent: object
    op_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class Compare:
    """left ops[0] comparators[0] ops[1] comparators[1] ... (chained, like Python)."""
    left: object
    ops: tuple
    comparators: tuple
    op_spans: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class BoolOp:
    op: str                  # 'and' / 'or'
    values: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class Not:
    operand: object
    span: Span


@dataclass(frozen=True, slots=True)
class IfExp:
    test: object
    body: object
    orelse: object
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    func: object             # an expression; usually a Name
    args: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class Slice:
    lower: object | None
    upper: object | None
    step: object | None
    span: Span


@dataclass(frozen=True, slots=True)
class Subscript:
    value: object
    index: tuple             # expressions and Slices, one per axis
    span: Span


@dataclass(frozen=True, slots=True)
class ListExpr:
    elts: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class TupleExpr:
    elts: tuple
    span: Span


# ---- statements -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Assign:
    targets: tuple           # Names; more than one for `a, b = ...`
    value: object
    unpack: bool             # True for a tuple target
    span: Span


@dataclass(frozen=True, slots=True)
class AugAssign:
    target: Name
    op: str                  # '+', '-', '*', '/'
    value: object
    op_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class ExprStmt:
    value: object
    span: Span


@dataclass(frozen=True, slots=True)
class Return:
    value: object | None
    span: Span


@dataclass(frozen=True, slots=True)
class Pass:
    span: Span


@dataclass(frozen=True, slots=True)
class Break:
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    span: Span


@dataclass(frozen=True, slots=True)
class If:
    test: object
    body: tuple
    orelse: tuple            # empty, or the statements of else (an elif is a nested If)
    span: Span


@dataclass(frozen=True, slots=True)
class While:
    test: object
    body: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    target: Name
    iter: object
    body: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class FunctionDef:
    name: str
    params: tuple            # parameter names
    body: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class Module:
    body: tuple
    span: Span


@dataclass(frozen=True, slots=True)
class Expression:
    """What `autodiff grad "EXPR"` parses: one expression."""
    body: object
    span: Span
