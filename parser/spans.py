"""Source spans of lark tokens and AST nodes, and the check that a NAME is a Python identifier."""
from __future__ import annotations

from .lalr import Token

from . import nodes
from .errors import bad_character


def tok_span(tok: Token) -> nodes.Span:
    return nodes.Span(tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + len(tok))


def span_of(item) -> nodes.Span:
    if isinstance(item, Token):
        return tok_span(item)
    return item.span


def join(first, last) -> nodes.Span:
    return span_of(first).to(span_of(last))


def checked_name(tok: Token) -> str:
    """The lexer's NAME is any run of word characters; Python identifiers are narrower
    (`x²` is not one): point at the first character that does not belong."""
    text = str(tok)
    if not text.isidentifier():
        for i, ch in enumerate(text):
            if not ("a" + ch).isidentifier():
                col = tok.column + i
                raise bad_character(ch, nodes.Span(tok.line, col, tok.line, col + 1))
    return text
