"""A few lines of styled text and simple aligned tables, printed through rich on a terminal and as
plain text everywhere else, without importing rich.

The results people see most (a value, a gradient, notes, an error) need nothing of rich when the
output is piped: no colours, no width to wrap at. Importing rich costs about a fifth of a
`grad` command's start-up, so those renderers describe what they print as a Page, and only a
terminal pays for rich. The plain text is what rich writes to a pipe (its table layout without
borders: columns two spaces apart, multi-line cells top-aligned, no trailing blanks); a test
compares the two renditions.
"""
from __future__ import annotations

import os
import re
import sys
import unicodedata

from ..output import printable

_TRAILING_BLANKS = re.compile(r"[ \t]+(?=\n)")


def cell_width(text: str) -> int:
    """Terminal columns of `text`: wide East Asian characters take two, combining marks none."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return width


class Page:
    """Lines (each a sequence of spans: plain strings or (text, style) pairs) and tables, in order."""

    def __init__(self):
        self.items: list = []

    def line(self, *spans) -> "Page":
        self.items.append(("line", spans))
        return self

    def blank(self) -> "Page":
        return self.line()

    def table(self, headers: list[str], rows: list[list[str]]) -> "Page":
        """Columns without borders, a bold header row; cells may hold several lines."""
        self.items.append(("table", (headers, rows)))
        return self

    def show(self, stderr: bool = False, plain: bool | None = None) -> None:
        """Print on stdout (or stderr): through rich on a terminal, as plain text otherwise."""
        stream = sys.stderr if stderr else sys.stdout
        if plain is None:
            plain = not stream.isatty()
        if plain:
            stream.write(self.plain_text())
            stream.flush()
        else:
            self.show_rich(stderr)

    def plain_text(self) -> str:
        out = []
        for kind, content in self.items:
            if kind == "line":
                out.append("".join(span if isinstance(span, str) else span[0] for span in content))
            else:
                out.extend(table_lines(*content))
        text = printable("\n".join(out) + "\n").expandtabs(8)
        return _TRAILING_BLANKS.sub("", text)

    def show_rich(self, stderr: bool) -> None:
        from rich.table import Table
        from rich.text import Text
        screen = console(stderr=stderr)
        for kind, content in self.items:
            if kind == "line":
                screen.print(Text.assemble(*content))
                continue
            headers, rows = content
            table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
            for header in headers:
                table.add_column(header)
            for row in rows:
                table.add_row(*(Text(cell) for cell in row))      # Text: "[inf, 1]" is not markup
            screen.print(table)


def table_lines(headers: list[str], rows: list[list[str]]) -> list[str]:
    """rich's borderless table as plain lines: each column as wide as its widest line."""
    grid = [[cell.split("\n") for cell in row] for row in [headers, *rows]]
    widths = [max(cell_width(line) for row in grid for line in row[column]) for column in range(len(headers))]
    lines = []
    for row in grid:
        for depth in range(max(len(cell) for cell in row)):
            parts = []
            for column, cell in enumerate(row):
                text = cell[depth] if depth < len(cell) else ""
                parts.append(text + " " * (widths[column] - cell_width(text)))
            lines.append("  ".join(parts))
    return lines


CONSOLES: dict = {}          # (stderr, id(stream)) -> the rich console made for it


class TrimmedLines:
    """A piped stream without the spaces rich pads a table's last column with: lines end at their
    text, so pipes and diffs see no trailing blanks."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(re.sub(r"[ \t]+(?=\n)", "", text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", "utf-8")


def console(stderr: bool = False):
    """A rich console that follows the terminal and NO_COLOR; plain text when piped."""
    stream = sys.stderr if stderr else sys.stdout
    screen = CONSOLES.get((stderr, id(stream)))      # keyed by stream: callers may swap sys.stdout
    if screen is None:
        tty = stream.isatty()
        screen = _escaping_console_class()(file=stream if tty else TrimmedLines(stream), stderr=stderr, highlight=False, soft_wrap=not tty,
                                           no_color=bool(os.environ.get("NO_COLOR")) or None,
                                           width=None if tty else 10_000)
        for key in [k for k in CONSOLES if k[0] == stderr]:
            del CONSOLES[key]
        CONSOLES[(stderr, id(stream))] = screen
    return screen


_escaping_console = []


def _escaping_console_class():
    """rich's Console, but every text segment (not rich's own control codes: colours, the progress
    bar) has its control characters escaped: an ANSI escape in a case name or a source line is
    shown as `\x1b`, never obeyed by the terminal. Every renderer prints through this one."""
    if not _escaping_console:
        from rich.console import Console
        from rich.segment import Segment

        class EscapingConsole(Console):
            def render(self, renderable, options=None):
                for segment in super().render(renderable, options):
                    if segment.control is None:
                        text = printable(segment.text)
                        if text is not segment.text:
                            segment = Segment(text, segment.style)
                    yield segment
        _escaping_console.append(EscapingConsole)
    return _escaping_console[0]
