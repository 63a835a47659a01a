"""Text -> AST. `parse_expression` for `autodiff grad "EXPR"`, `parse_program` for .py files."""
from __future__ import annotations

from .errors import SourceError
from .nodes import Expression, Module, Span

__all__ = ["parse_expression", "parse_program", "SourceError", "Span"]

_parsers: dict = {}


def _import_lark():
    """Import lark without the third-party `regex` module: lark loads it whenever it is
    installed, yet needs it only for options this grammar does not use (regex=True, Unicode
    property classes in terminals), and it costs ~10 ms of every start-up."""
    import sys
    if "lark" in sys.modules:
        return
    hide = "regex" not in sys.modules
    if hide:
        sys.modules["regex"] = None            # makes `import regex` raise ImportError
    try:
        import lark  # noqa: F401
    finally:
        if hide:
            del sys.modules["regex"]


def _cache_file(start: str):
    """Where the LALR tables are cached: a private per-user folder, not lark's default in the
    shared temp dir (lark unpickles the cache file, so others must not be able to plant one).
    False (build the tables every time) when no such folder can be made."""
    import os
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "autodiff")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.path.join(folder, f"grammar-{start}.lark-cache")


def _parser(start: str):
    parser = _parsers.get(start)
    if parser is None:
        _import_lark()
        from lark import Lark

        from .transform import ASTBuilder, Indenter
        # The LALR tables are built once per grammar version and cached; later starts only
        # unpickle them. lark checks the cache against a hash of the grammar and its version.
        parser = Lark.open_from_package("autodiff.parser", "grammar.lark", ("",), parser="lalr", lexer="basic",
                                        start=start, postlex=Indenter(), transformer=ASTBuilder(),
                                        maybe_placeholders=True, cache=_cache_file(start))
        _parsers[start] = parser
    return parser


def _parse(text: str, start: str, filename: str | None):
    _import_lark()
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
