"""lark parse events -> AST nodes.

The builder runs inline with the LALR parser (lark's `transformer=` option), so no parse tree is
built and nothing recurses: deeply nested input costs no Python stack here.
"""
from __future__ import annotations

from .lalr import PythonIndenter, Token, Transformer

from . import nodes
from .errors import UNSUPPORTED_KEYWORDS, SourceError
from .decorators import DecoratorsBuilder
from .numpy_forms import NumpyFormsBuilder, misplaced_string
from .spans import checked_name, join, tok_span


class Indenter(PythonIndenter):
    """lark's Python indenter, which also names the Python words the language leaves out and
    measures indentation as Python does (below)."""

    builder = None          # the ASTBuilder this parser runs with (made in parser/__init__.py)

    def process(self, stream):
        self.alt_levels = [0]
        if self.builder is not None:
            self.builder.start_parse()          # each parse starts with no module aliases
        for tok in super().process(stream):
            if tok.type == "NAME" and tok.value in UNSUPPORTED_KEYWORDS:
                raise SourceError("unsupported construct", f"`{tok.value}`: {UNSUPPORTED_KEYWORDS[tok.value]}",
                                  tok_span(tok))
            yield tok


    def handle_NL(self, token):
        """Python's rule (tokenizer.c): a tab moves to the next multiple of 8, and the indentation
        must compare the same way when a tab counts as one column, else it is a TabError. lark
        counts a tab as 8 columns wherever it is, and accepts tabs and spaces mixed ambiguously."""
        if self.paren_level > 0:
            return
        yield token
        indent = token.rsplit("\n", 1)[1]          # the next line's tabs and spaces
        column, alt_column = len(indent.expandtabs(8)), len(indent)
        levels, alt_levels = self.indent_level, self.alt_levels
        if column > levels[-1]:
            if alt_column <= alt_levels[-1]:
                raise indentation_error(TAB_ERROR, token, indent)
            levels.append(column)
            alt_levels.append(alt_column)
            yield Token.new_borrow_pos(self.INDENT_type, indent, token)
            return
        while column < levels[-1]:
            levels.pop()
            alt_levels.pop()
            yield Token.new_borrow_pos(self.DEDENT_type, indent, token)
        if column != levels[-1]:
            raise indentation_error("unindent does not match any outer indentation level", token, indent)
        if alt_column != alt_levels[-1]:
            raise indentation_error(TAB_ERROR, token, indent)


TAB_ERROR = "inconsistent use of tabs and spaces in indentation"


def indentation_error(message: str, newline: Token, indent: str) -> SourceError:
    """An error at the indentation of the line that a newline token leads to."""
    line = newline.end_line or newline.line
    return SourceError("syntax error", message, nodes.Span(line, 1, line, len(indent) + 1))


def _number(text: str):
    """A float, or for an imaginary literal (2j, 1.5e-3J) a complex number, as Python reads it."""
    text = text.replace("_", "")
    if text[-1] in "jJ":
        return complex(0.0, float(text[:-1]))
    return float(text)


class ASTBuilder(NumpyFormsBuilder, DecoratorsBuilder, Transformer):
    # ---- atoms ----
    def name(self, c):
        return nodes.Name(checked_name(c[0]), tok_span(c[0]))

    def number(self, c):
        return nodes.Num(_number(c[0]), tok_span(c[0]))

    def true(self, c):
        return nodes.Bool(True, tok_span(c[0]))

    def false(self, c):
        return nodes.Bool(False, tok_span(c[0]))

    def paren(self, c):
        return c[0]

    def list_expr(self, c):
        elts = tuple(c[0])
        span = nodes.Span(elts[0].span.line, elts[0].span.column - 1, elts[-1].span.end_line,
                          elts[-1].span.end_column + 1)
        for x in elts:
            if isinstance(x, nodes.Str):
                raise misplaced_string(x)
            if isinstance(x, nodes.Keyword):
                raise SourceError("syntax error", f"`{x.name}=` is a keyword argument, not a list element", x.span)
        return nodes.ListExpr(elts, span)

    def empty_list(self, c):
        """`[]`: what numpy makes of it where an array is wanted, an array of shape (0,)."""
        return nodes.ListExpr((), join(c[0], c[1]))

    def dict_expr(self, c):
        """{key: value, ...}: a dict, as ML code keeps parameters (issue 29 item 2)."""
        items = c[1] or ()
        return nodes.DictExpr(tuple(k for k, _ in items), tuple(v for _, v in items), join(c[0], c[-1]))

    def dict_comp(self, c):
        """{key: value for ...}: a comprehension whose items are (key, value) pairs."""
        key, value = c[1]
        return nodes.ListComp(nodes.TupleExpr((key, value), join(key, value)), tuple(c[2:-1]), join(c[0], c[-1]),
                              True)

    def dict_items(self, c):
        return [x for x in c if x is not None]

    def dict_item(self, c):
        return (c[0], c[1])

    def args(self, c):
        return list(c)

    def tuple_items(self, c):
        items = tuple(x for x in c if x is not None)
        return nodes.TupleExpr(items, join(items[0], items[-1]))

    # ---- postfix ----
    def subscript(self, c):
        value, items = c
        return nodes.Subscript(value, tuple(items), join(value, items[-1]))

    def subscripts(self, c):
        return [x for x in c if x is not None]

    def slice(self, c):
        # children: [lower] COLON [upper] [COLON [step]] with placeholders for missing ones
        parts, colons, current = [], [], None
        for x in c:
            if isinstance(x, Token) and x.type == "COLON":
                parts.append(current)
                colons.append(x)
                current = None
            else:
                current = x if x is not None else current
        parts.append(current)
        while len(parts) < 3:
            parts.append(None)
        present = [p for p in parts if p is not None]
        span = join(present[0], present[-1]) if present else tok_span(colons[0])
        return nodes.Slice(parts[0], parts[1], parts[2], span)

    # ---- operators ----
    def power(self, c):
        base, op, exponent = c
        return nodes.Power(base, exponent, tok_span(op), join(base, exponent))

    def unary(self, c):
        op, operand = c
        return nodes.UnaryOp(str(op), operand, join(op, operand))

    def _chain(self, c):
        operands, ops, spans = [c[0]], [], []
        for i in range(1, len(c), 2):
            ops.append(str(c[i]))
            spans.append(tok_span(c[i]))
            operands.append(c[i + 1])
        return nodes.BinChain(tuple(operands), tuple(ops), tuple(spans), join(operands[0], operands[-1]))

    arith = _chain
    term = _chain

    def comparison(self, c):
        operands, ops, spans = [c[0]], [], []
        for i in range(1, len(c), 2):
            ops.append(str(c[i]))
            spans.append(tok_span(c[i]))
            operands.append(c[i + 1])
        return nodes.Compare(operands[0], tuple(ops), tuple(operands[1:]), tuple(spans),
                             join(operands[0], operands[-1]))

    def or_op(self, c):
        vals = tuple(x for x in c if not isinstance(x, Token))
        return nodes.BoolOp("or", vals, join(vals[0], vals[-1]))

    def and_op(self, c):
        vals = tuple(x for x in c if not isinstance(x, Token))
        return nodes.BoolOp("and", vals, join(vals[0], vals[-1]))

    def not_op(self, c):
        return nodes.Not(c[-1], join(c[0], c[-1]))

    def ifexp(self, c):
        body, test, orelse = [x for x in c if not isinstance(x, Token)]
        return nodes.IfExp(test, body, orelse, join(body, orelse))

    # ---- statements ----
    def simple_stmt(self, c):
        return [s for s in c if s is not None]

    def expr_stmt(self, c):
        return nodes.ExprStmt(c[0], c[0].span)

    def string_stmt(self, c):
        return None                                 # docstrings and bare strings: ignored

    def assign(self, c):
        target, value = c
        if isinstance(target, nodes.TupleExpr):
            names = tuple(_target(t) for t in target.elts)
            return nodes.Assign(names, value, True, join(target, value))
        if isinstance(target, nodes.Subscript):
            return self.subscript_assign(target, None, None, value)
        return nodes.Assign((_target(target),), value, False, join(target, value))

    def augassign(self, c):
        target, op, value = c
        if isinstance(target, nodes.TupleExpr):
            raise SourceError("syntax error", "augmented assignment needs one name on the left", target.span)
        if isinstance(target, nodes.Subscript):
            return self.subscript_assign(target, str(op)[:-1], op, value)
        return nodes.AugAssign(_target(target), str(op)[:-1], value, tok_span(op), join(target, value))

    def pass_stmt(self, c):
        return nodes.Pass(tok_span(c[0]))

    def break_stmt(self, c):
        return nodes.Break(tok_span(c[0]))

    def continue_stmt(self, c):
        return nodes.Continue(tok_span(c[0]))

    def return_stmt(self, c):
        kw, value = c
        return nodes.Return(value, join(kw, value) if value is not None else tok_span(kw))

    def suite(self, c):
        out = []
        for s in c:
            if isinstance(s, list):
                out.extend(s)
            elif s is not None:
                out.append(s)
        return tuple(out)

    def if_stmt(self, c):
        kw, test, body, *rest = c
        orelse = rest[-1] if rest and (rest[-1] is None or isinstance(rest[-1], tuple)) else None
        elifs = [x for x in rest if isinstance(x, nodes.If)]
        tail = orelse or ()
        for clause in reversed(elifs):          # elif chains become nested Ifs
            tail = (nodes.If(clause.test, clause.body, tail, clause.span),)
        return nodes.If(test, body, tail, join(kw, test))

    def elif_clause(self, c):
        test, body = [x for x in c if not isinstance(x, Token)]
        return nodes.If(test, body, (), test.span)

    def while_stmt(self, c):
        kw, test, body = c
        return nodes.While(test, body, join(kw, test))

    def for_stmt(self, c):
        kw, target, iterable, body = [x for x in c if not (isinstance(x, Token) and x.type == "IN")]
        return nodes.For(target, iterable, body, join(kw, iterable))

    def for_target(self, c):
        """One name, or a tuple of names to unpack each item into (`for a, b in pairs`)."""
        names = [nodes.Name(checked_name(tok), tok_span(tok)) for tok in c if isinstance(tok, Token)
                 and tok.type == "NAME"]
        if len(names) == 1:
            return names[0]
        return nodes.TupleExpr(tuple(names), join(names[0], names[-1]))

    def program(self, c):
        body = []
        for s in c:
            if isinstance(s, list):
                body.extend(s)
            elif s is not None and not isinstance(s, Token):
                body.append(s)
        span = body[0].span.to(body[-1].span) if body else nodes.Span(1, 1, 1, 1)
        return nodes.Module(tuple(body), span)

    def expression(self, c):
        body = [x for x in c if not isinstance(x, Token)][0]
        if isinstance(body, nodes.Lambda):
            raise SourceError("unsupported construct", "a lambda alone is a function, not an expression to "
                              "differentiate", body.span, "write its body: lambda x: x**2 is x**2")
        return nodes.Expression(body, body.span)


def _target(node) -> nodes.Name:
    if isinstance(node, nodes.Name):
        return node
    if isinstance(node, nodes.Subscript):
        raise SourceError("unsupported construct", "item assignment inside a tuple assignment "
                          "(a, x[i] = ...) is not part of the language", node.span, "assign each item on its own line")
    if isinstance(node, nodes.Attribute):
        raise SourceError("unsupported construct", f"assignment to an attribute (`.{node.attr} = ...`) is not "
                          "part of the language: arrays are values", node.attr_span)
    raise SourceError("syntax error", "can only assign to a name", node.span)
