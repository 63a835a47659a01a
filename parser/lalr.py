"""The one LALR parser of grammar.lark (lalr_parser.py, written by lark's standalone tool through
`python -m autodiff.parser.generate`), loaded without the third-party `regex` module: lark's code
imports it whenever it is installed, yet needs it only for options this grammar does not use
(regex=True, Unicode property classes in terminals), and it costs ~5 ms of every start-up."""
from __future__ import annotations

import sys


def _import_generated():
    hide = "regex" not in sys.modules
    if hide:
        sys.modules["regex"] = None            # makes `import regex` raise ImportError
    try:
        from . import lalr_parser
    finally:
        if hide:
            del sys.modules["regex"]
    return lalr_parser


_generated = _import_generated()
Lark_StandAlone = _generated.Lark_StandAlone
LarkError = _generated.LarkError
PythonIndenter = _generated.PythonIndenter
Token = _generated.Token
Transformer = _generated.Transformer
UnexpectedCharacters = _generated.UnexpectedCharacters
UnexpectedEOF = _generated.UnexpectedEOF
UnexpectedToken = _generated.UnexpectedToken
