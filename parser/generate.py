"""Writes lalr_parser.py, the one LALR parser of grammar.lark for both start symbols, with lark's
documented standalone tool (`python -m lark.tools.standalone`): lark's parser code and the tables
of this grammar in one module, MPL-2.0 as its header says. A parse then never imports lark, which
is needed only here, to generate (the `test` extra installs it; tests/test_parser_files.py checks
the shipped module is what this writes).

After editing grammar.lark or upgrading lark:  python -m autodiff.parser.generate
"""
from __future__ import annotations

import os
import subprocess
import sys

FOLDER = os.path.dirname(os.path.abspath(__file__))
GRAMMAR_FILE = os.path.join(FOLDER, "grammar.lark")
PARSER_FILE = os.path.join(FOLDER, "lalr_parser.py")
STARTS = ("expression", "program")
# The options this grammar's parser is made with; the postlex indenter and the AST builder are
# objects, given when the parser is loaded (parser/lalr.py)
TOOL_ARGUMENTS = ["--lexer", "basic", "--maybe_placeholders", *[arg for start in STARTS for arg in ("-s", start)]]


def generated_text() -> str:
    """What lark's standalone tool writes for grammar.lark now."""
    done = subprocess.run([sys.executable, "-m", "lark.tools.standalone", *TOOL_ARGUMENTS, GRAMMAR_FILE],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"lark's standalone tool failed:\n{done.stderr}")
    return done.stdout


def write() -> str:
    """Regenerate lalr_parser.py (a developer step), atomically."""
    text = generated_text()
    temporary = PARSER_FILE + ".tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temporary, PARSER_FILE)
    return PARSER_FILE


if __name__ == "__main__":
    print("wrote", write())
