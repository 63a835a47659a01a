"""The LALR tables, generated from grammar.lark ahead of time and shipped in the package.

Nothing is read from or written to a user-writable place: lark's own cache is a pickle, and a
pickle that another local user plants in a cache folder runs code when it is loaded. The shipped
tables are plain JSON (`tables-<start>.json` next to this file), and they record the hash of the
grammar and the lark version they were made from. They are used only when both match; otherwise
the tables are built in memory (a slower start, the same parser).

After editing grammar.lark, regenerate them:  python -m autodiff.parser.tables
"""
from __future__ import annotations

import hashlib
import json
import os

FOLDER = os.path.dirname(os.path.abspath(__file__))
GRAMMAR_FILE = os.path.join(FOLDER, "grammar.lark")
STARTS = ("expression", "program")

# Options passed when the parser is made, not stored with the tables: objects, not data.
RUNTIME_OPTIONS = {"postlex", "transformer", "import_paths", "source_path", "tree_class",
                   "lexer_callbacks", "_plugins"}
# JSON keys are strings; lark's tables have dicts keyed by numbers (states, tokens, memo ids).
NUMBER_KEYS = "__number_keys__"


def import_lark():
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


def tables_file(start: str) -> str:
    return os.path.join(FOLDER, f"tables-{start}.json")


def fingerprint() -> dict:
    """What the tables depend on: the grammar text and the lark version that serialises them."""
    import lark
    with open(GRAMMAR_FILE, "rb") as grammar:
        digest = hashlib.sha256(grammar.read()).hexdigest()
    return {"grammar_sha256": digest, "lark_version": lark.__version__}


def parser_options() -> dict:
    from .transform import ASTBuilder, Indenter
    builder, indenter = ASTBuilder(), Indenter()
    indenter.builder = builder
    return {"postlex": indenter, "transformer": builder}


def build(start: str):
    """The parser made from the grammar itself (no cache, nothing written)."""
    from lark import Lark
    return Lark.open_from_package("autodiff.parser", "grammar.lark", ("",), parser="lalr", lexer="basic",
                                  start=start, maybe_placeholders=True, cache=False, **parser_options())


def _encode_keys(value):
    """JSON's default hook for lark's number-keyed dicts (json.dump only calls it for dicts it
    cannot write, so this is applied by walking the tables first)."""
    if isinstance(value, dict):
        if any(not isinstance(key, str) for key in value):
            return {NUMBER_KEYS: [[key, _encode_keys(item)] for key, item in value.items()]}
        return {key: _encode_keys(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode_keys(item) for item in value]
    return value


def _decode_keys(obj: dict):
    if NUMBER_KEYS in obj:
        return {key: item for key, item in obj[NUMBER_KEYS]}
    return obj


def serialize(parser) -> dict:
    """The tables of a built parser as JSON-ready data, with the fingerprint they depend on."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {key: value for key, value in data["options"].items() if key not in RUNTIME_OPTIONS}
    return {**fingerprint(), "data": _encode_keys(data), "memo": _encode_keys(memo)}


def read_tables(start: str) -> dict | None:
    """The shipped tables for `start`, or None when missing or made from another grammar or lark."""
    try:
        with open(tables_file(start), encoding="utf-8") as file:
            shipped = json.load(file, object_hook=_decode_keys)
    except (OSError, ValueError):
        return None
    current = fingerprint()
    if any(shipped.get(key) != value for key, value in current.items()):
        return None
    return shipped


def load(start: str):
    """The parser for `start`: from the shipped tables when they are current, else built."""
    import_lark()
    shipped = read_tables(start)
    if shipped is None:
        return build(start)
    from lark import Lark
    return Lark._load_from_dict(shipped["data"], shipped["memo"], **parser_options())


def write_tables() -> list[str]:
    """Regenerate the shipped tables from grammar.lark (a developer step after a grammar edit)."""
    written = []
    for start in STARTS:
        path = tables_file(start)
        with open(path, "w", encoding="utf-8") as file:
            json.dump(serialize(build(start)), file, separators=(",", ":"), sort_keys=True)
            file.write("\n")
        written.append(path)
    return written


if __name__ == "__main__":
    import_lark()
    for written_path in write_tables():
        print("wrote", written_path)
