"""The emitted functions' lines, written from the IR (emit/lower.py) and the rules (through
emit/rule_text.py only): the primal, the adjoint (a forward sweep that pushes what the reverse
sweep pops: overwritten values, branch decisions, trip counts, ranges; then the reverse sweep,
loops kept as loops) and the tangent. Every statement carries its source line as a comment."""
from __future__ import annotations

from .activity import walk_ir
from .lower import OUT, Call, Copy, For, If, Jump, Plain, Prim, While, jumps
from .rule_text import rule_text

INDENT = "    "


def number(v) -> str:
    if v.__class__ is str:
        return v
    if v.__class__ in (bool, int):
        return repr(v) if v >= 0 else f"({v!r})"
    v = float(v)
    text = repr(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)
    return text if v >= 0 else f"({text})"


class Writer:
    """The lines of one emitted function; `explain` adds the chain-rule step of each adjoint."""

    def __init__(self, explain: bool = False):
        self.explain = explain
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"_t{self.count}"

    @staticmethod
    def tagged(text: str, line: int) -> str:
        return f"{text}  # line {line}"

    def primal_expr(self, s, out: list) -> str:
        statements, expr = rule_text(s.prim, "impl", s.operands, self.fresh)
        out += [self.tagged(t, s.line) for t in statements]
        return expr

    def primal(self, body: list, pad: str, helpers=None) -> list:
        """The primal statements; `helpers(s, pad)` writes a call's lines (the plain call by default)."""
        out: list = []
        for s in body:
            if isinstance(s, Prim):
                inner: list = []
                expr = self.primal_expr(s, inner)
                out += [pad + t for t in inner] + [pad + self.tagged(f"{s.target} = {expr}", s.line)]
            elif isinstance(s, Copy):
                out.append(pad + self.tagged(f"{s.target} = {number(s.source)}", s.line))
            elif isinstance(s, Plain):
                out.append(pad + self.tagged(f"{s.target} = {s.text}", s.line))
            elif isinstance(s, Jump):
                out.append(pad + self.tagged(s.kind, s.line))
            elif isinstance(s, Call):
                out += helpers(s, pad) if helpers else \
                    [pad + self.tagged(f"{s.target} = {s.function}({', '.join(map(number, s.args))})", s.line)]
            else:
                out += self.primal_control(s, pad, helpers)
        return out

    def primal_control(self, s, pad, helpers) -> list:
        inner = pad + INDENT
        if isinstance(s, If):
            return [pad + self.tagged(f"if {s.test}:", s.line), *(self.primal(s.body, inner, helpers) or [inner + "pass"]),
                    pad + "else:", *(self.primal(s.orelse, inner, helpers) or [inner + "pass"])]
        if isinstance(s, While) and jumps(s.body):     # a continue must reach the test again
            return [pad + self.tagged("while True:", s.line), *self.primal(s.head, inner, helpers),
                    inner + self.tagged(f"if not {s.test}:", s.line), inner + INDENT + "break",
                    *self.primal(s.body, inner, helpers)]
        if isinstance(s, While):
            head = self.primal(s.head, pad, helpers)
            return [*head, pad + self.tagged(f"while {s.test}:", s.line),
                    *self.primal(s.body, inner, helpers), *self.primal(s.head, inner, helpers)]
        bounds = ", ".join(map(number, s.bounds))
        return [pad + self.tagged(f"for {s.target} in range({bounds}):", s.line),
                *(self.primal(s.body, inner, helpers) or [inner + "pass"])]


def assigned(body) -> dict:
    """name -> how many times the IR assigns it (a loop's body counts twice: it runs again)."""
    counts: dict = {}

    def visit(stmts, weight):
        for s in stmts:
            if isinstance(s, (Prim, Copy, Plain, Call)):
                counts[s.target] = counts.get(s.target, 0) + weight
            elif isinstance(s, If):
                visit(s.body, weight)
                visit(s.orelse, weight)
            elif isinstance(s, While):
                visit(s.head, 2)
                visit(s.body, 2)
            elif isinstance(s, For):
                counts[s.target] = counts.get(s.target, 0) + 2
                visit(s.body, 2)
    visit(body, 1)
    return counts


def read_by_rules(body, active, useful) -> set:
    """The names the reverse sweep reads: the operands and results of the statements it differentiates."""
    names = set()
    for s in walk_ir(body):
        if isinstance(s, (Prim, Call)) and s.target in useful:
            names.add(s.target)
            names.update(o for o in (s.operands if isinstance(s, Prim) else s.args) if o.__class__ is str)
    return names


def ends_in_jump(body) -> bool:
    """Every path through `body` ends in a break or continue."""
    if not body:
        return False
    last = body[-1]
    return isinstance(last, Jump) or (isinstance(last, If) and ends_in_jump(last.body) and ends_in_jump(last.orelse))
