"""Text -> AST. `parse_expression` for `autodiff grad "EXPR"`, `parse_program` for .py files."""
from __future__ import annotations

from .errors import SourceError
from .nodes import Expression, Module, Span

__all__ = ["parse_expression", "parse_program", "SourceError", "Span"]

# One parser for both start symbols, made on first use (the generated module is imported only then).
_parsers: dict = {}


def _parser():
    parser = _parsers.get("lalr")
    if parser is None:
        from .lalr import Lark_StandAlone
        from .transform import ASTBuilder, Indenter
        builder, indenter = ASTBuilder(), Indenter()
        indenter.builder = builder
        parser = _parsers["lalr"] = Lark_StandAlone(postlex=indenter, transformer=builder)
    return parser


# Refused before lark sees it: lark's time and memory grow fast with the size of the input
# (8 MB of source took 44 s and 3 GB), and no program or expression comes near this.
MAX_SOURCE_CHARACTERS = 1_000_000
BYTE_ORDER_MARK = "\ufeff"          # what some editors write first in a UTF-8 file


def _parse(text: str, start: str, filename: str | None):
    if len(text) > MAX_SOURCE_CHARACTERS:
        what = "expression" if start == "expression" else "program"
        raise SourceError("too large", f"the {what} is {len(text):,} characters long, over the limit of "
                          f"{MAX_SOURCE_CHARACTERS:,} characters", None, source=text, filename=filename)
    if text.startswith(BYTE_ORDER_MARK):
        text = text[1:]               # columns count from after it, as in Python
    from .lalr import LarkError
    if "\x00" in text:
        raise SourceError("syntax error", "the input contains a NUL character", None, source=text,
                          filename=filename)
    import gc
    collecting = gc.isenabled()
    gc.disable()          # an AST has no cycles: collecting while building a big one only costs time
    try:
        return _parser().parse(text if text.endswith("\n") else text + "\n", start=start)
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
