"""The LALR tables and the runtime that reads them, generated from grammar.lark ahead of time and
shipped in the package.

Nothing is read from or written to a user-writable place: lark's own cache is a pickle, and a
pickle that another local user plants in a cache folder runs code when it is loaded. The shipped
tables are plain JSON (`tables-<start>.json` next to this file). The runtime is lark's own parser
code, as lark's standalone tool writes it (`lark_runtime.py`, generated, MPL-2.0 as its header
says): a parse then never imports lark itself, whose grammar compiler (and the tempfile, pickle,
hashlib and logging it loads) was a tenth of a command's start-up.

The tables record the size and CRC-32 of the grammar and the lark version they were made from
(a check of a few microseconds: this is about staleness after an edit, not about trust — the
files ship together). They are used only when both match the grammar file and the runtime;
otherwise lark builds the tables in memory (a slower start, the same parser).

After editing grammar.lark or upgrading lark, regenerate both:  python -m autodiff.parser.tables
"""
from __future__ import annotations

import json
import os
import zlib

FOLDER = os.path.dirname(os.path.abspath(__file__))
GRAMMAR_FILE = os.path.join(FOLDER, "grammar.lark")
RUNTIME_FILE = os.path.join(FOLDER, "lark_runtime.py")
STARTS = ("expression", "program")
# Where lark's standalone output turns from its code to the tables of one grammar (those ship as JSON)
RUNTIME_END = "import pickle, zlib, base64"

# Options passed when the parser is made, not stored with the tables: objects, not data.
RUNTIME_OPTIONS = {"postlex", "transformer", "import_paths", "source_path", "tree_class",
                   "lexer_callbacks", "_plugins"}
# JSON keys are strings; lark's tables have dicts keyed by numbers (states, tokens, memo ids).
NUMBER_KEYS = "__number_keys__"


def import_lark():
    """Import lark (to build tables) without the third-party `regex` module: lark loads it
    whenever it is installed, yet needs it only for options this grammar does not use
    (regex=True, Unicode property classes in terminals), and it costs ~10 ms."""
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
    """What the tables depend on: the grammar text and the lark version of the shipped runtime."""
    from .lark_runtime import __version__ as runtime_version
    with open(GRAMMAR_FILE, "rb") as grammar:
        text = grammar.read()
    return {"grammar_bytes": len(text), "grammar_crc32": zlib.crc32(text), "lark_version": runtime_version}


def parser_options() -> dict:
    from .transform import ASTBuilder, Indenter
    builder, indenter = ASTBuilder(), Indenter()
    indenter.builder = builder
    return {"postlex": indenter, "transformer": builder}


def build(start: str):
    """lark's own parser made from the grammar (no cache, nothing written), for its tables: those
    depend on the indenter's token names only, so it gets lark's indenter and no AST builder."""
    import_lark()
    from lark import Lark
    from lark.indenter import PythonIndenter
    return Lark.open_from_package("autodiff.parser", "grammar.lark", ("",), parser="lalr", lexer="basic",
                                  start=start, maybe_placeholders=True, cache=False, postlex=PythonIndenter())


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
    """The tables of a built parser as JSON-ready data (the fingerprint is added by the caller)."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {key: value for key, value in data["options"].items() if key not in RUNTIME_OPTIONS}
    return {"data": _encode_keys(data), "memo": _encode_keys(memo)}


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


def fresh_tables(start: str) -> dict:
    """The tables made from grammar.lark now, as read_tables would return them."""
    return json.loads(json.dumps(serialize(build(start))), object_hook=_decode_keys)


def from_tables(tables: dict):
    """lark's runtime parser on `tables`, building the AST as it parses."""
    from .lark_runtime import Lark
    return Lark._load_from_dict(tables["data"], tables["memo"], **parser_options())


def load(start: str):
    """The parser for `start`: on the shipped tables, or on tables made now when the grammar has
    changed since they were."""
    return from_tables(read_tables(start) or fresh_tables(start))


def runtime_text(parser) -> str:
    """lark's standalone parser code (the part before the tables of `parser`'s grammar)."""
    from lark.tools.standalone import gen_standalone
    lines = []
    gen_standalone(parser, output=lambda *parts: lines.append(" ".join(str(p) for p in parts)))
    code = "\n".join(lines)
    if RUNTIME_END not in code:
        raise RuntimeError("lark's standalone output changed shape: update parser/tables.py")
    header = ("# Generated by `python -m autodiff.parser.tables` from lark's standalone tool: do not edit.\n"
              "# The parser runtime only; the tables are tables-*.json beside it.\n")
    # After its tables the tool rebinds the parse actions to ints, as the loaded tables expect
    after_tables = code[code.index("\nShift = 0"):code.index("\ndef Lark_StandAlone")]
    return header + code[:code.index(RUNTIME_END)].rstrip() + "\n" + after_tables.strip() + "\n"


def write_tables() -> list[str]:
    """Regenerate the runtime and the shipped tables from grammar.lark (a developer step)."""
    import lark
    parsers = {start: build(start) for start in STARTS}
    with open(RUNTIME_FILE, "w", encoding="utf-8") as file:
        file.write(runtime_text(parsers[STARTS[0]]))
    with open(GRAMMAR_FILE, "rb") as grammar:
        text = grammar.read()
    stamp = {"grammar_bytes": len(text), "grammar_crc32": zlib.crc32(text), "lark_version": lark.__version__}
    written = [RUNTIME_FILE]
    for start, parser in parsers.items():
        path = tables_file(start)
        with open(path, "w", encoding="utf-8") as file:
            json.dump({**stamp, **serialize(parser)}, file, separators=(",", ":"), sort_keys=True)
            file.write("\n")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_tables():
        print("wrote", written_path)
