"""The parser's files: source as editors write it (BOM, tabs), its size limit, and the LALR tables
shipped in the package (no cache read from or written to a user-writable folder)."""
import json

import pytest

from autodiff.parser import SourceError, Span, parse_expression, parse_program


def error_of(text, program=False):
    with pytest.raises(SourceError) as info:
        (parse_program if program else parse_expression)(text)
    return info.value


# ---- source files as editors write them, and their size ----------------------------------------

def test_a_byte_order_mark_at_the_start_is_accepted():
    assert parse_program("\ufeffy = 1\nz = y\n") == parse_program("y = 1\nz = y\n")
    assert parse_expression("\ufeffx*x") == parse_expression("x*x")
    err = error_of("\ufeffy = $\n", program=True)
    assert (err.span.line, err.span.column) == (1, 5) and err.excerpt()[0].endswith("| y = $")


@pytest.mark.parametrize("text, line", [
    ("if x:\n\ty = 1\n        z = 2\n", 3),           # a tab, then eight spaces: equal only at tab size 8
    ("if x:\n        y = 1\n\tz = 2\n", 3),
    ("if x:\n    y = 1\n\tz = 2\n", 3),               # deeper at tab size 8, shallower at tab size 1
    ("def f(x):\n  \tif x:\n\t  return x\n", 3),         # column 10 after 8, yet 3 after 3 at tab size 1
])
def test_ambiguous_tabs_and_spaces_are_a_tab_error(text, line):
    err = error_of(text, program=True)
    assert err.message == "inconsistent use of tabs and spaces in indentation"
    assert (err.span.line, err.span.column) == (line, 1) and err.excerpt()


@pytest.mark.parametrize("text", ["if x:\n\ty = 1\n\tz = 2\n", "if x:\n\ty = 1\n\tif y:\n\t    z = 2\nw = 3\n",
                                  "def f(x):\n\treturn x\n"])
def test_consistent_tabs_are_accepted(text):
    assert parse_program(text) == parse_program(text.replace("\t", " "))          # lark: a tab is one column


def test_source_over_the_size_limit_is_refused_before_parsing():
    from autodiff.parser import MAX_SOURCE_CHARACTERS
    for parse_text, what in ((parse_program, "program"), (parse_expression, "expression")):
        with pytest.raises(SourceError) as info:
            parse_text("x = 1\n" * (MAX_SOURCE_CHARACTERS // 6 + 1))
        err = info.value
        assert err.kind == "too large" and err.span is None
        assert what in err.message and f"{MAX_SOURCE_CHARACTERS:,}" in err.message


# ---- the shipped LALR tables ---------------------------------------------------------------------

def test_shipped_tables_match_the_grammar():
    from autodiff.parser import tables
    current = tables.fingerprint()
    for start in tables.STARTS:
        with open(tables.tables_file(start), encoding="utf-8") as file:
            shipped = json.load(file)
        assert (shipped["grammar_bytes"], shipped["grammar_crc32"]) == \
            (current["grammar_bytes"], current["grammar_crc32"]), \
            "grammar.lark changed: regenerate the tables with `python -m autodiff.parser.tables`"
        assert shipped["lark_version"] == current["lark_version"]
        assert tables.read_tables(start) is not None


def test_the_shipped_runtime_is_what_lark_generates():
    import lark

    from autodiff.parser import lark_runtime, tables
    if lark.__version__ != lark_runtime.__version__:
        # a newer lark than the runtime was made with: it still parses (its own code and tables
        # ship together); regenerate when the project moves to it
        pytest.skip(f"runtime made with lark {lark_runtime.__version__}, lark {lark.__version__} installed")
    with open(tables.RUNTIME_FILE, encoding="utf-8") as file:
        assert file.read() == tables.runtime_text(tables.build("expression")), \
            "regenerate with `python -m autodiff.parser.tables`"


def test_parsing_does_not_import_lark():
    # lark's grammar compiler was a tenth of start-up: the shipped runtime parses without it
    import subprocess
    import sys
    code = ("import sys; from autodiff.parser import parse_expression, parse_program; "
            "parse_expression('x**2*y'); parse_program('def f(x):\\n    return x\\n')\n"
            "try:\n    parse_expression('x +')\nexcept Exception as err:\n    print(type(err).__name__)\n"
            "print(sorted(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout == "SourceError\n[]\n", done.stderr


SAMPLES = ["x**2*y+y+2", "sin(x) + 2*y", "[1, 2][0] if x > 1 else -x", "a[1:2, ::3] @ b", "x +", "f(x",
           "2x", "x = = 1", "(x +\n y))", "{1}", "x**", "not x and y or z"]
PROGRAMS = ["def f(x):\n    return x*x\nf(3)\n", "for i in range(3):\n    y += i\n", "x = 1\n    y = 2\n",
            "while x < 3:\n    x = x + 1\nelse\n", "if x:\n  pass\nelif y:\n  break\nelse:\n  continue\n"]


def outcome(parser, text):
    try:
        return parser.parse(text + "\n")
    except Exception as err:                  # compare lark's errors by kind and place
        return type(err).__name__, getattr(err, "line", None), getattr(err, "column", None)


def test_the_shipped_tables_parse_like_the_grammar():
    from autodiff.parser import tables
    for start, texts in (("expression", SAMPLES), ("program", PROGRAMS)):
        shipped, built = tables.load(start), tables.from_tables(tables.fresh_tables(start))
        for text in texts:
            assert outcome(shipped, text) == outcome(built, text), text


def test_stale_tables_are_detected_and_the_grammar_is_used(tmp_path, monkeypatch):
    from autodiff.parser import tables
    with open(tables.tables_file("expression"), encoding="utf-8") as file:
        shipped = json.load(file)
    stale = tmp_path / "tables-expression.json"
    stale.write_text(json.dumps({**shipped, "grammar_crc32": 0}))
    monkeypatch.setattr(tables, "tables_file", lambda start: str(stale))
    assert tables.read_tables("expression") is None
    built = []
    monkeypatch.setattr(tables, "fresh_tables", lambda start, real=tables.fresh_tables: built.append(start) or real(start))
    assert tables.load("expression").parse("x*x\n").span == Span(1, 1, 1, 4) and built == ["expression"]


def test_no_cache_folder_is_read_or_written(tmp_path):
    """lark's cache is a pickle: one planted in a user-writable folder would run code when loaded."""
    import os
    import pickle
    import subprocess
    import sys
    home, temp, marker = tmp_path / "home", tmp_path / "tmp", tmp_path / "planted-code-ran"
    for cache in (home / ".cache" / "autodiff", home / "xdg" / "autodiff", temp):
        cache.mkdir(parents=True)
        payload = pickle.dumps(PlantedPayload(str(marker)))
        for start in ("expression", "program"):
            (cache / f"grammar-{start}.lark-cache").write_bytes(payload)
    before = {str(path): path.read_bytes() if path.is_file() else None for path in tmp_path.rglob("*")}
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "xdg"), "TMPDIR": str(temp)}
    code = ("from autodiff.parser import parse_expression, parse_program; "
            "print(parse_expression('x**2*y').span); parse_program('y = 1\\n')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout == "line 1, column 1\n" and p.stderr == "", p.stderr
    assert not marker.exists()
    assert {str(path): path.read_bytes() if path.is_file() else None for path in tmp_path.rglob("*")} == before


class PlantedPayload:
    """What an attacker would plant: unpickling it makes a folder (here harmless, and visible)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        import os
        return (os.mkdir, (self.path,))
