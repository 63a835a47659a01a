"""A file read as written: its top-level statements parsed one by one, and those the language
cannot read kept aside, with the reason, until something the target reaches needs them.

A researcher's numpy file holds more than the function to differentiate: an
`if __name__ == "__main__":` block, plotting helpers with f-strings, classes and dataclasses,
imports of other libraries. Only what the target reaches must be in the language (the engine's
lang/reach.py decides what that is); the rest is read here and never compiled.

How the file is cut into top-level statements: by Python's own parser (`ast.parse`, which reads
the text and runs nothing), used only for each statement's first and last line and the names it
binds. No hand-written scanner gets triple-quoted strings, brackets across lines, backslash
continuations, decorators and `;` right, and Python's parser is the definition of where a Python
statement ends. Each statement is then parsed by the language's own grammar; one it cannot read
becomes an `Unread` record (its lines, the names it binds, the error), blanked out of the text the
module is finally parsed from, so the spans of everything else are those of the file. A file the
language reads whole (every program of the language's own) never reaches this path; a file that
is not Python either gets the language's own error, as before.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from .errors import UNSUPPORTED_KEYWORDS, SourceError
from .nodes import Module, Span


@dataclass(frozen=True)
class Unread:
    """A top-level statement the language cannot read: an error only when the target reaches one
    of the names it binds."""
    span: Span               # the statement's lines, from its first decorator to its last line
    names: tuple             # the names it binds at the top level
    what: str                # "function NAME", "class NAME", "the __main__ block", "statement"
    error: SourceError       # why the language cannot read it (placed in the file)
    is_def: bool = False     # a function definition (a candidate for --fn)
    runs: bool = True        # False for `if __name__ == "__main__":`, which an import does not run


@dataclass(frozen=True)
class FileProgram:
    """A program file as written: the module of the statements the language reads, and the rest."""
    module: Module
    unread: tuple = ()


def parse_file(text: str, filename: str | None, parse_program) -> FileProgram:
    """The file's statements the language reads, and those it cannot (see the module docstring).
    `parse_program` is the strict parser of a whole program (parser/__init__.py)."""
    try:
        return FileProgram(parse_program(text, filename))
    except SourceError as whole_error:
        if whole_error.kind == "too large":
            raise
        statements = python_statements(text)
        if statements is None:           # not Python either: the language's own error, as before
            raise
    lines = text.split("\n")
    unread, blanked = [], list(lines)
    for first, last, node in statements:
        error = _segment_error("\n".join(lines[first - 1:last]), first, parse_program)
        if error is not None and isinstance(node, ast.ClassDef):      # not its decorator: the class
            at = Span(node.lineno, node.col_offset + 1, node.lineno, node.col_offset + 6)
            error = SourceError("unsupported construct", f"`class`: {UNSUPPORTED_KEYWORDS['class']}", at)
        if error is not None:
            unread.append(_record(node, first, last, lines, error.with_source(text, filename)))
            blanked[first - 1:last] = [""] * (last - first + 1)
    while True:
        try:
            module = parse_program("\n".join(blanked), filename)
            break
        except SourceError as err:        # read alone it parsed, in its place it does not (rare)
            found = _containing(statements, err.span)
            if found is None or any(r.span.line == found[0] for r in unread):
                raise err.with_source(text, filename) from None
            first, last, node = found
            unread.append(_record(node, first, last, lines, err.with_source(text, filename)))
            blanked[first - 1:last] = [""] * (last - first + 1)
    return FileProgram(module, tuple(sorted(unread, key=lambda r: r.span.line)))


def python_statements(text: str):
    """[(first line, last line, ast node)] of the top-level statements, as Python reads them
    (statements sharing a line joined into one); None when Python cannot read the text."""
    try:
        tree = ast.parse(text.lstrip("\ufeff"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        last = node.end_lineno or node.lineno
        if out and first <= out[-1][1]:          # `a = 1; b = 2`: one line, one segment
            out[-1] = (out[-1][0], max(last, out[-1][1]), out[-1][2])
            continue
        out.append((first, last, node))
    return out


def _segment_error(segment: str, first: int, parse_program) -> SourceError | None:
    """Why the language cannot read one top-level statement (lines from `first`), or None."""
    try:
        parse_program(segment)
    except SourceError as err:
        off = first - 1
        s = err.span or Span(1, 1, 1, 1)          # an error of no place: the statement's first line
        err.span = Span(s.line + off, s.column, s.end_line + off, s.end_column)
        err.source = err.filename = None
        return err
    return None


def _containing(statements, span):
    if span is None:
        return None
    return next((s for s in statements if s[0] <= span.line <= s[1]), None)


def _record(node, first, last, lines, error) -> Unread:
    names = tuple(bound_names(node))
    is_def = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    if is_def:
        what = f"function {node.name}"
    elif isinstance(node, ast.ClassDef):
        what = f"class {node.name}"
    elif is_main_block(node):
        what = 'the `if __name__ == "__main__":` block'
    else:
        what = "statement"
    span = Span(first, 1, last, len(lines[last - 1]) + 1)
    return Unread(span, names, what, error, is_def, not is_main_block(node))


def is_main_block(node) -> bool:
    """`if __name__ == "__main__":` (either way round): it runs when the file is a script, never
    when it is read as a module, as here."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def bound_names(node) -> list:
    """The names a top-level statement binds (not those bound inside the functions and classes
    it defines)."""
    out = []
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(x.name)
            if x is not node:
                continue
            stack.extend(x.decorator_list)
            continue
        if isinstance(x, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue                        # their names are their own
        if isinstance(x, (ast.Import, ast.ImportFrom)):
            out.extend((a.asname or a.name).split(".")[0] for a in x.names if a.name != "*")
            continue
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
            out.append(x.id)
        stack.extend(reversed(list(ast.iter_child_nodes(x))))
    seen = set()
    return [n for n in out if not (n in seen or seen.add(n))]
