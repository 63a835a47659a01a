"""SourceError: every user mistake, with the span at fault and a hint.

This is the one place where lark's exceptions become ours: the rest of the code never sees them.
"""
from __future__ import annotations

import re

from .nodes import Span

_OPTION = re.compile(r"\{opt:([a-z_]+)\}")


def option(name: str) -> str:
    """How an error names a setting (`max_elements`, `fn`, `wrt`) without knowing the front end:
    a placeholder the CLI spells as its flag (`--max-elements`) and the Python API as its keyword
    argument (`max_elements=`). Only `cli/` knows flags."""
    return "{opt:" + name + "}"


# Settings the Python API takes other than as a keyword of the same name.
_API_SPELLINGS = {"max_steps": "Limits(steps=...)", "max_depth": "Limits(depth=...)",
                  "max_elements": "Limits(elements=...)", "seed": "seed="}


def keyword_spelling(name: str) -> str:
    return _API_SPELLINGS.get(name, name + "=")


def spell_options(text: str | None, spelling=keyword_spelling) -> str | None:
    """`text` with every option placeholder written out by `spelling`."""
    if not text or "{opt:" not in text:
        return text
    return _OPTION.sub(lambda m: spelling(m.group(1)), text)


class SourceError(Exception):
    """A mistake in the user's text or input, located in the source.

    kind   -- a short category: "syntax error", "unknown name", "shape mismatch", ...
    span   -- where (1-based line and column), or None when the mistake has no place in the text
    hint   -- an optional suggestion
    source -- the text the span points into (filled in by whoever knows it)
    """

    def __init__(self, kind: str, message: str, span: Span | None = None, hint: str | None = None,
                 source: str | None = None, filename: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.span = span
        self.hint = hint
        self.source = source
        self.filename = filename

    def with_source(self, source: str, filename: str | None = None) -> "SourceError":
        if self.source is None:
            self.source = source
            self.filename = filename
        elif self.filename is None and filename is not None and self.source == source:
            self.filename = filename
        return self

    def spelled(self, spelling=keyword_spelling) -> tuple[str, str | None]:
        """(message, hint) with the settings they mention spelled by the front end."""
        return spell_options(self.message, spelling), spell_options(self.hint, spelling)

    def location(self) -> str:
        if self.span is None:
            return ""
        where = f"{self.filename}:" if self.filename else ""
        return f"{where}{self.span.line}:{self.span.column}"

    def excerpt(self, width: int = 100) -> list[str]:
        """The source line at fault and a caret under the column (lines shortened around it)."""
        if self.span is None or self.source is None:
            return []
        lines = self.source.split("\n")          # as lark counts lines (splitlines also splits at \f)
        if not 1 <= self.span.line <= len(lines):
            return []
        text = lines[self.span.line - 1].rstrip("\r").expandtabs(1)
        col = max(self.span.column - 1, 0)
        end = self.span.end_column - 1 if self.span.end_line == self.span.line else len(text)
        length = max(1, min(end, len(text)) - col)
        start = 0
        if len(text) > width:                       # keep the fault in view on long lines
            start = max(0, min(col - width // 2, len(text) - width))
            text = ("…" if start else "") + text[start:start + width] + ("…" if start + width < len(text) else "")
            col = col - start + (1 if start else 0)
            length = min(length, width - (col - (1 if start else 0)))
        prefix = f"{self.span.line:>4} | "
        # the caret goes under the fault as a terminal shows it: wide (CJK) characters take two cells
        under = _cells(text[:col])
        marks = max(1, min(_cells(text[col:col + length]), 60))
        return [prefix + text, " " * (len(prefix) + under) + "^" * marks]

    def format(self, spelling=keyword_spelling) -> str:
        """Plain text in the style of pip's diagnostics (`spelling=option` keeps the placeholders
        for a front end to spell later)."""
        message, hint = self.spelled(spelling)
        out = [f"error: {self.kind}"]
        loc = self.location()
        out.append(f"  {loc + ': ' if loc else ''}{message}")
        out.extend("  " + line for line in self.excerpt())
        if hint:
            out.append(f"hint: {hint}")
        return "\n".join(out)

    def __str__(self) -> str:
        loc = self.location()
        return f"{loc + ': ' if loc else ''}{spell_options(self.message)}"


def _cells(text: str) -> int:
    """Terminal cells taken by text: 2 for wide East Asian characters, 0 for combining marks."""
    if text.isascii():
        return len(text)
    import unicodedata
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


# The language's words that Python has and we do not: named in the error rather than
# reported as an unexpected name.
UNSUPPORTED_KEYWORDS = {
    "class": "classes are not part of the language",
    "with": "with-statements are not part of the language",
    "try": "try/except is not part of the language",
    "except": "try/except is not part of the language",
    "finally": "try/finally is not part of the language",
    "raise": "raise is not part of the language",
    "global": "global is not part of the language: functions read top-level names directly",
    "nonlocal": "nonlocal is not part of the language",
    "yield": "generators (yield) are not part of the language",
    "async": "async is not part of the language",
    "await": "await is not part of the language",
    "del": "del is not part of the language: rebind the name instead (x = ...)",
    "assert": "assert is not part of the language",
    "is": "`is` is not part of the language: compare numbers with ==",
    "print": "print is not part of the language: the value of the program is printed for you",
}

TOKEN_NAMES = {
    "RPAR": "')'", "LPAR": "'('", "RSQB": "']'", "LSQB": "'['", "COMMA": "','", "COLON": "':'",
    "SEMICOLON": "';'", "EQUAL": "'='", "DOT": "'.'", "NAME": "a name", "NUMBER": "a number",
    "ADD_OP": "'+' or '-'", "MUL_OP": "an operator (* / @)", "POW": "'**'", "COMP_OP": "a comparison",
    "_NEWLINE": "a new line", "_INDENT": "an indented block", "_DEDENT": "the end of a block",
    "$END": "the end of the input", "STRING": "a string", "AUGOP": "'+=' (or another augmented assignment)",
    "IF": "'if'", "ELSE": "'else'", "FOR": "'for'", "WHILE": "'while'", "IN": "'in'", "DEF": "'def'",
    "RETURN": "'return'", "NOT": "'not'", "AND": "'and'", "OR": "'or'", "TRUE": "True", "FALSE": "False",
    "IMPORT": "'import'", "FROM": "'from'", "AS": "'as'", "LAMBDA": "'lambda'", "NONE": "None",
    "ELLIPSIS": "'...'", "VBAR": "'|'", "LBRACE": "'{'", "RBRACE": "'}'",
}


# Characters people paste from papers, and what to write instead.
CHARACTER_HINTS = {"×": "use * for multiplication", "·": "use * for multiplication", "÷": "use /",
                   "−": "use the ASCII minus sign -", "√": "use sqrt(x)", "²": "use x**2", "³": "use x**3",
                   "π": "use pi"}


# ASCII characters from other languages' notations.
ASCII_HINTS = {"^": "`^` is not power: write ** (x**2)"}


def bad_character(ch: str, span: Span) -> "SourceError":
    """An error for a character the language has no use for, with a hint for the usual suspects."""
    if ch.isascii():
        return SourceError("syntax error", f"unexpected character {ch!r}", span, ASCII_HINTS.get(ch))
    hint = CHARACTER_HINTS.get(ch, "only ASCII operators are understood")
    return SourceError("syntax error", f"unexpected character {ch!r} (U+{ord(ch):04X})", span, hint)


def open_brackets(text: str, pos: int) -> str:
    """The brackets still open before `pos` ("([" for `f([1, `), innermost last."""
    stack = []
    for ch in text[:pos]:
        if ch in "([":
            stack.append(ch)
        elif ch in ")]" and stack:
            stack.pop()
    return "".join(stack)


def describe_expected(expected, opened: str | None = None) -> str:
    expected = set(expected)
    if opened is not None:
        # LALR merges states, so its expected sets can name closers of brackets that are
        # not open here: keep only the innermost open bracket's closer (and its comma).
        inner = opened[-1:] if opened else ""
        drop = {"RPAR", "RSQB", "COMMA"} - ({"RPAR", "COMMA"} if inner == "(" else set()) \
            - ({"RSQB", "COMMA"} if inner == "[" else set())
        if inner:
            drop.add("_NEWLINE")          # the indenter ignores line breaks inside brackets
        expected = (expected - drop) or expected
    if {"NAME", "NUMBER"} <= expected:
        # where any operand may start, the list of its first tokens says less than one word
        closers = [TOKEN_NAMES[t] for t in ("RPAR", "RSQB") if t in expected]
        return " or ".join(["an expression"] + closers)
    if {"ADD_OP", "MUL_OP", "POW"} <= expected:
        # after a complete operand: an operator, or whatever may close what is open
        ends = [TOKEN_NAMES[t] for t in ("RPAR", "RSQB", "COMMA", "_NEWLINE", "$END") if t in expected]
        return ", ".join(["an operator"] + ends[:-1]) + (" or " + ends[-1] if ends else "")
    names = sorted({TOKEN_NAMES.get(t, repr(t.lower()) if t.isupper() else t) for t in expected})
    if len(names) > 6:
        return ", ".join(names[:6]) + ", …"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def end_span(text: str) -> Span:
    """The position just after the last character (lark reports end of input as line -1)."""
    stripped = text.rstrip("\n")
    lines = stripped.split("\n") if stripped else [""]
    line = len(lines)
    col = len(lines[-1]) + 1
    return Span(line, col, line, col)


ONE_LINE_HINT = "an expression continues on the next line only inside parentheses: wrap it in ( )"


def convert_lark_error(err, text: str, start: str = "program") -> SourceError:
    """Turn a lark exception into a SourceError with a place and words a person can use."""
    from .lalr import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(err, SourceError):
        return err.with_source(text)
    if isinstance(err, UnexpectedCharacters):
        return _character_error(err, text).with_source(text)
    if isinstance(err, (UnexpectedToken, UnexpectedEOF)):
        token = getattr(err, "token", None)
        expected = getattr(err, "expected", None) or getattr(err, "accepts", None) or set()
        at_end = token is None or token.type == "$END" or getattr(token, "line", -1) in (-1, None) \
            or (token.type in ("_NEWLINE", "_DEDENT") and not text[token.start_pos or 0:].strip())
        error = _end_of_input_error(expected, text) if at_end else _token_error(token, expected, text, start)
        return error.with_source(text)
    return SourceError("syntax error", str(err), None, source=text)


# where a string may stand (parser/numpy_forms.py checks each call's), said by every refusal of one
STRING_PLACES = ("einsum's subscripts, norm's ord and cond's p ('fro', 'nuc'), pad's, convolve's and qr's mode, "
                 "searchsorted's side, the quantiles' method, eigh's and eigvalsh's UPLO, solve_triangular's trans, np.fft's norm and a dtype's name ('float64')")
STRINGS_ONLY = f"strings are not part of the language (only as docstrings, dict keys (d[\"W\"]) and as {STRING_PLACES})"


def _character_error(err, text: str) -> SourceError:
    line, col = err.line, err.column
    span = Span(line, col, line, col + 1)
    ch = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
    if ch in "\"'":
        return SourceError("syntax error", STRINGS_ONLY, span)
    if ch == "\t":
        return SourceError("syntax error", "unexpected tab", span)
    return bad_character(ch, span)


def _end_of_input_error(expected, text: str) -> SourceError:
    """The input ended too soon: where a bracket is still open, that is the place to look (as
    Python says `'(' was never closed`), else just past the last character."""
    opened = open_brackets(text, len(text))
    what = "the input ended"
    msg = f"{what}; expected {describe_expected(expected, opened)}" if expected else what
    bracket = unclosed_bracket(text)
    if bracket is None:
        return SourceError("syntax error", msg, end_span(text))
    line, column = bracket
    return SourceError("syntax error", f"{text_at(text, line, column)!r} was never closed: {msg}",
                       Span(line, column, line, column + 1))


def _token_error(token, expected, text: str, start: str) -> SourceError:
    """An unexpected token: what it is, what could have come instead, and a hint where one fits."""
    line, col = token.line, token.column
    span = Span(line, col, token.end_line or line, token.end_column or col + 1)
    value = str(token.value)
    if token.type == "_INDENT":
        # the indenter dates INDENT at the line break before it: point at the indentation
        line = token.end_line or line
        return SourceError("syntax error", "unexpected indentation", Span(line, 1, line, token.end_column or 2),
                           ONE_LINE_HINT if start == "expression" else
                           "indent only the body of def, if, elif, else, for and while")
    if token.type == "STRING":
        return SourceError("syntax error", STRINGS_ONLY, span)
    python_form = _unsupported_python_form(token, expected, text, start, span)
    if python_form is not None:
        return python_form
    if value == "@" and _starts_line(text, token):
        if start == "expression":          # no decorator in an expression: `@` is matmul missing an operand
            return SourceError("syntax error", "a stray `@`: `@` is matrix multiplication and needs an operand "
                               "on each side", span, "write a @ b")
        return SourceError("syntax error", "decorators are not part of the language", span)
    pos = token.start_pos if token.start_pos is not None else len(text)
    if value in (")", "]") and not open_brackets(text, pos):
        return SourceError("syntax error", f"unmatched {value!r}", span)
    if start == "program" and token.type == "NAME":
        unknown = _unknown_statement(text, token)
        if unknown is not None:
            return unknown
    what = {"_NEWLINE": "unexpected end of line", "_DEDENT": "unexpected end of the indented block"}.get(
        token.type, f"unexpected {value!r}")
    msg = f"{what}; expected {describe_expected(expected, open_brackets(text, pos))}" if expected else what
    hint = None
    if value == "in":
        hint = "`in` is only used in `for NAME in ...`"
    if value == "=" and "==" not in text:
        hint = "to compare, write =="
    if token.type == "NAME" and value in ("i", "I") and pos > 0 and text[pos - 1].isdigit():
        hint = IMAGINARY_HINT               # 1+2i, as maths writes it
    if hint is None and token.type in ("NAME", "NUMBER") and open_brackets(text, pos).endswith("[") \
            and pos > 0 and text[pos - 1] in " \t" and "COMMA" in expected:
        hint = COMMAS_HINT                  # [1 2 3], as numpy prints an array
    if hint is None and token.type in ("NAME", "NUMBER") and "MUL_OP" in expected:
        hint = MULTIPLY_HINT
    if hint is None and start == "expression" and (span.line > 1 or token.type == "_NEWLINE") \
            and not open_brackets(text, pos):
        hint = ONE_LINE_HINT
    return SourceError("syntax error", msg, span, hint)


def _unsupported_python_form(token, expected, text, start, span) -> SourceError | None:
    """Python forms the language leaves out, named with the spelling to use instead."""
    value, before = str(token.value), text[:token.start_pos or 0].rstrip()
    if token.type == "ELLIPSIS":
        return SourceError("syntax error", "`...` is only allowed inside [ ] (x[..., 0])", span)
    if token.type in ("IMPORT", "FROM") and start == "expression":
        return SourceError("unsupported construct", f"`{value}` starts a statement, which an expression cannot "
                           "hold", span, "np.NAME and math.NAME need no import in an expression")
    if value in ("*", "**") and before.endswith(("(", ",", "lambda")):
        return SourceError("unsupported construct", f"unpacking with `{value}` (*args, **kwargs) is not part of "
                           "the language", span, "pass each argument by position or by name")
    if token.type == "FOR" and open_brackets(text, token.start_pos or 0).endswith("("):
        return SourceError("unsupported construct", "generator expressions are not part of the language", span,
                           "write a list comprehension: [... for ... in ...]")
    if token.type in ("COMMA", "RBRACE") and "COLON" in expected and _inside_brace(text, token.start_pos or 0):
        return SourceError("unsupported construct", "set literals ({a, b}) are not part of the language", span,
                           "a dict is written {key: value}; use a list [...] for arrays")
    if value == ":" and "AUGOP" in expected:
        return SourceError("unsupported construct", "type annotations are not part of the language", span,
                           "write the assignment alone: x = 2")
    return None


def _inside_brace(text: str, pos: int) -> bool:
    """Whether the innermost bracket open before `pos` is a brace (a dict or set literal)."""
    stack = []
    for ch in text[:pos]:
        if ch in "([{":
            stack.append(ch)
        elif ch in ")]}" and stack:
            stack.pop()
    return bool(stack) and stack[-1] == "{"


COMMAS_HINT = "separate the entries with commas: [1, 2, 3] (numpy prints arrays without them)"
IMAGINARY_HINT = "the imaginary unit is written j, as Python writes it: 1+2j, 2j"
MULTIPLY_HINT = "write * to multiply (2*x, not 2x) and parentheses to call a function (sin(x))"
STATEMENT_WORDS = ("return", "pass", "break", "continue", "def", "if", "elif", "else", "for", "while")
# A line that so far holds one name: a second name after it means the first was meant as a statement.
_ONE_NAME = re.compile(r"[\t ]*([^\W\d]\w*)[\t ]+")


def _unknown_statement(text: str, token) -> SourceError | None:
    """`retrun y`: a name followed by a name at the start of a statement."""
    lines = text.split("\n")
    if not 1 <= token.line <= len(lines):
        return None
    match = _ONE_NAME.fullmatch(lines[token.line - 1][: token.column - 1])
    if match is None:
        return None
    import difflib
    word = match.group(1)
    column = match.start(1) + 1
    close = difflib.get_close_matches(word, STATEMENT_WORDS, n=1)
    hint = f"did you mean `{close[0]}`?" if close else MULTIPLY_HINT
    return SourceError("syntax error", f"unknown statement {word!r}", Span(token.line, column, token.line,
                                                                           column + len(word)), hint)


def unclosed_bracket(text: str) -> tuple[int, int] | None:
    """(line, column) of the innermost bracket still open at the end of `text` (comments skipped)."""
    stack, line, line_start, in_comment = [], 1, 0, False
    for index, ch in enumerate(text):
        if ch == "\n":
            line, line_start, in_comment = line + 1, index + 1, False
        elif in_comment:
            continue
        elif ch == "#":
            in_comment = True
        elif ch in "([":
            stack.append((line, index - line_start + 1))
        elif ch in ")]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def text_at(text: str, line: int, column: int) -> str:
    return text.split("\n")[line - 1][column - 1]


def _starts_line(text: str, token) -> bool:
    lines = text.splitlines()
    if 1 <= token.line <= len(lines):
        return lines[token.line - 1][: token.column - 1].strip() == ""
    return False
