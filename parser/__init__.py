"""Text -> AST. `parse_expression` for `autodiff grad "EXPR"`, `parse_program` for .py files."""
from __future__ import annotations

from .errors import SourceError
from .nodes import Expression, Module, Span

__all__ = ["parse_expression", "parse_program", "SourceError", "Span"]

# One parser per start symbol, made on first use (lark is imported only then).
_parsers: dict = {}


def _parser(start: str):
    parser = _parsers.get(start)
    if parser is None:
        from .tables import load            # lark and the tables load on first parse, not on import
        parser = _parsers[start] = load(start)
    return parser


def _parse(text: str, start: str, filename: str | None):
    from .tables import import_lark
    import_lark()
    from lark.exceptions import LarkError
    if "\x00" in text:
        raise SourceError("syntax error", "the input contains a NUL character", None, source=text,
                          filename=filename)
    import gc
    collecting = gc.isenabled()
    gc.disable()          # an AST has no cycles: collecting while building a big one only costs time
    try:
        return _parser(start).parse(text if text.endswith("\n") else text + "\n")
    except SourceError as err:
        raise err.with_source(text, filename) from None
    except LarkError as err:
        from .errors import convert_lark_error
        inner = getattr(err, "orig_exc", None)          # errors raised inside the AST builder
        if isinstance(inner, SourceError):
            raise inner.with_source(text, filename) from None
        raise convert_lark_error(err, text, start).with_source(text, filename) from None
    finally:
        if collecting:
            gc.enable()


def parse_expression(text: str, filename: str | None = None) -> Expression:
    if not text.strip():
        raise SourceError("syntax error", "the expression is empty", None, source=text, filename=filename)
    return _parse(text, "expression", filename)


def parse_program(text: str, filename: str | None = None) -> Module:
    return _parse(text, "program", filename)
