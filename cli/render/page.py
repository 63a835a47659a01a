"""A few lines of styled text and simple aligned tables, printed without importing rich where
nothing needs it.

The results people see most (a value, a gradient, notes, an error) need nothing of rich: no
wrapping when they fit the terminal, five styles, no colour at all on a pipe. Importing and
setting up rich cost about a third of a `grad` command's start-up, so those renderers describe
what they print as a Page: on a pipe it is plain text (what rich writes there: its borderless
table layout, columns two spaces apart, multi-line cells top-aligned, no trailing blanks; a
test compares the two), on a terminal the same text with SGR styles. rich prints a Page only
when it has something to do: a line wider than the terminal, or Windows' console.
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

    def show(self, stderr: bool = False, how: str | None = None) -> None:
        """Print on stdout (or stderr). `how`: "plain", "styled" or "rich" (None: what suits the stream)."""
        stream = sys.stderr if stderr else sys.stdout
        how = how or self.rendering_for(stream)
        if how == "rich":
            self.show_rich(stderr)
            return
        stream.write(self.text(styles=how == "styled"))
        stream.flush()

    def rendering_for(self, stream) -> str:
        """plain on a pipe or a dumb terminal, rich where lines must be fitted, else styled.
        NO_COLOR and FORCE_COLOR mean what they mean to rich."""
        terminal = stream.isatty() or bool(os.environ.get("FORCE_COLOR"))
        if not terminal or os.environ.get("TERM") in ("dumb", "unknown"):
            return "plain"
        if sys.platform == "win32":
            return "rich"                  # legacy consoles: rich knows how to style them
        if not stream.isatty():
            return "styled"                # forced colours on a pipe: no width to fit (as console())
        width = terminal_width(stream)
        if any(cell_width(line) > width for line in self.text().split("\n")):
            return "rich"
        return "styled"

    def text(self, styles: bool = False) -> str:
        """The page as text, with SGR styles or without (control characters escaped)."""
        out = []
        colours = styles and not os.environ.get("NO_COLOR")
        for kind, content in self.items:
            if kind == "line":
                out.append("".join(styled(*(span if isinstance(span, tuple) else (span, None)),
                                          styles=styles, colours=colours) for span in content))
            else:
                headers, rows = content
                lines = table_lines(headers, rows)
                if styles:             # the header row in bold, as rich's header_style
                    widths = [cell_width(header) for header in headers]
                    lines[0] = "  ".join(styled(h, "bold", styles=True) + " " * (len_ - w) for h, w, len_ in
                                         zip(headers, widths, column_widths(headers, rows)))
                out.extend(lines)
        return _TRAILING_BLANKS.sub("", "\n".join(out) + "\n")

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
                table.add_column(Text(header))            # a header is no markup either
            for row in rows:
                table.add_row(*(Text(cell) for cell in row))      # Text: "[inf, 1]" is not markup
            screen.print(table)


_SGR = {"bold": "1", "red": "31", "yellow": "33", "magenta": "35", "cyan": "36"}


def styled(text: str, style: str | None, styles: bool = False, colours: bool = True) -> str:
    """`text` with control characters escaped and tabs expanded, in `style` ("bold red") when
    `styles` (colours dropped unless `colours`, as NO_COLOR asks)."""
    text = printable(text).expandtabs(8)
    if not (styles and style and text):
        return text
    codes = [_SGR[word] for word in style.split() if word in _SGR and (colours or word == "bold")]
    return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if codes else text


def terminal_width(stream) -> int:
    """Columns of the terminal `stream` writes to: COLUMNS first, else the terminal's size, else
    80 (as rich decides it: a pseudo-terminal may report 0)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError, AttributeError):
        return 80


def column_widths(headers: list[str], rows: list[list[str]]) -> list[int]:
    grid = [headers, *rows]
    return [max(cell_width(line) for row in grid for line in row[column].split("\n"))
            for column in range(len(headers))]


def table_lines(headers: list[str], rows: list[list[str]]) -> list[str]:
    """rich's borderless table as plain lines: each column as wide as its widest line."""
    widths = column_widths(headers, rows)
    lines = []
    for row in [headers, *rows]:
        cells = [cell.split("\n") for cell in row]
        for depth in range(max(len(cell) for cell in cells)):
            parts = []
            for column, cell in enumerate(cells):
                text = cell[depth] if depth < len(cell) else ""
                parts.append(styled(text, None) + " " * (widths[column] - cell_width(text)))
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
