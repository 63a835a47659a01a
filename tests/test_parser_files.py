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


# ---- the generated parser ------------------------------------------------------------------------

def canonical_tables(module) -> dict:
    """A generated parser's tables with lark's run-to-run numbering taken out (its LALR states and
    token numbers follow the iteration order of sets, which changes from one run of the tool to the
    next): states renumbered in the order a walk from the start states meets them, tokens by name,
    rules and terminals by their content."""
    memo, data = module.MEMO, module.DATA
    table, names = data["parser"]["parser"], data["parser"]["parser"]["tokens"]

    def content(ref):
        return repr(memo[ref["@"]]) if isinstance(ref, dict) and "@" in ref else repr(ref)

    number: dict = {}
    for start in sorted(table["start_states"]):
        number.setdefault(table["start_states"][start], len(number))
    order = sorted(number, key=number.get)
    for state in order:                     # order grows as the walk meets new states
        for token, (kind, target) in sorted(table["states"][state].items(), key=lambda item: names[item[0]]):
            if kind == 0 and target not in number:
                number[target] = len(number)
                order.append(target)
    states = [sorted((names[token], kind, number[target] if kind == 0 else content(target))
                     for token, (kind, target) in table["states"][state].items()) for state in order]
    return {"states": states, "count": len(table["states"]),
            "start": {name: number[state] for name, state in table["start_states"].items()},
            "end": {name: number.get(state) for name, state in table["end_states"].items()},
            "rules": sorted(content(rule) for rule in data["rules"]),
            "terminals": sorted(content(term) for term in data["parser"]["lexer_conf"]["terminals"]),
            "options": data["options"]}


def load_module(path, name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_parser_is_what_lark_generates_from_the_grammar(tmp_path):
    import lark

    from autodiff.parser import generate, lalr_parser
    if lark.__version__ != lalr_parser.__version__:
        # a newer lark than the parser was made with: it still parses (its own code and tables
        # ship together); regenerate when the project moves to it
        pytest.skip(f"parser made with lark {lalr_parser.__version__}, lark {lark.__version__} installed")
    fresh_path = tmp_path / "fresh_parser.py"
    fresh_path.write_text(generate.generated_text(), encoding="utf-8")
    fresh = load_module(fresh_path, "fresh_parser")
    stale = "grammar.lark or lark changed: regenerate with `python -m autodiff.parser.generate`"
    assert canonical_tables(lalr_parser) == canonical_tables(fresh), stale
    with open(generate.PARSER_FILE, encoding="utf-8") as file:
        shipped_lines = file.read().splitlines()
    fresh_lines = fresh_path.read_text(encoding="utf-8").splitlines()
    tables_at = {index for index, line in enumerate(fresh_lines) if line in ("DATA = (", "MEMO = (")}
    assert len(shipped_lines) == len(fresh_lines) and len(tables_at) == 2, stale
    for index, (mine, theirs) in enumerate(zip(shipped_lines, fresh_lines)):
        if index - 1 not in tables_at:             # the line after each opener is its table
            assert mine == theirs, stale


def test_a_table_changed_by_hand_is_told_from_a_renumbered_one(tmp_path):
    from autodiff.parser import generate, lalr_parser
    copy = tmp_path / "copy_parser.py"
    copy.write_text(open(generate.PARSER_FILE, encoding="utf-8").read(), encoding="utf-8")
    edited = load_module(copy, "copy_parser")
    assert canonical_tables(edited) == canonical_tables(lalr_parser)
    state, actions = next(iter(edited.DATA["parser"]["parser"]["states"].items()))
    token = next(iter(actions))
    del actions[token]
    assert canonical_tables(edited) != canonical_tables(lalr_parser)


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


def outcome(parse, text):
    try:
        return parse(text + "\n")
    except Exception as err:                  # compare lark's errors by kind and place
        return type(err).__name__, getattr(err, "line", None), getattr(err, "column", None)


def plain(tree):
    """A parse tree of either parser as nested tuples (lark's own names rules with Tokens)."""
    if hasattr(tree, "children"):
        return str(tree.data), tuple(plain(child) for child in tree.children)
    if hasattr(tree, "type"):
        return tree.type, str(tree)
    return tree


def test_the_shipped_parser_parses_like_lark_built_from_the_grammar():
    import lark
    from lark.indenter import PythonIndenter

    from autodiff.parser import generate, lalr_parser
    built = lark.Lark.open(generate.GRAMMAR_FILE, parser="lalr", lexer="basic", start=list(generate.STARTS),
                           maybe_placeholders=True, postlex=PythonIndenter())
    shipped = lalr_parser.Lark_StandAlone(postlex=lalr_parser.PythonIndenter())
    for start, texts in (("expression", SAMPLES), ("program", PROGRAMS)):
        for text in texts:
            mine = plain(outcome(lambda t: shipped.parse(t, start=start), text))
            theirs = plain(outcome(lambda t: built.parse(t, start=start), text))
            assert mine == theirs, text


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
