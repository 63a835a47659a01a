"""Everything people read: rich tables and diagnostics. Machines get JSON from output.py.

rich and the engine are imported inside the functions: JSON output uses notes_for without loading
rich, and a usage error is rendered without loading the engine.
"""
from __future__ import annotations

import os
import re
import sys

from ..output import fmt_value, non_finite, printable

_consoles = {}


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
    screen = _consoles.get((stderr, id(stream)))      # keyed by stream: callers may swap sys.stdout
    if screen is None:
        tty = stream.isatty()
        screen = _escaping_console_class()(file=stream if tty else TrimmedLines(stream), stderr=stderr, highlight=False, soft_wrap=not tty,
                                           no_color=bool(os.environ.get("NO_COLOR")) or None,
                                           width=None if tty else 10_000)
        for key in [k for k in _consoles if k[0] == stderr]:
            del _consoles[key]
        _consoles[(stderr, id(stream))] = screen
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


def error(err) -> None:
    """A SourceError in pip's style: `error: kind`, the message, the line with a caret, a hint."""
    screen = console(stderr=True)
    from rich.markup import escape
    from rich.text import Text
    from ..options import flag_spelling
    message, hint = err.spelled(flag_spelling)
    loc = err.location()
    screen.print(Text.assemble(("error", "bold red"), f": {err.kind}"))
    screen.print(Text("  " + (loc + ": " if loc else "") + message))
    for line in err.excerpt():
        screen.print(Text("  " + line, style="cyan" if "^" not in line else "bold red"))
    if hint:
        screen.print(Text.assemble(("hint", "bold magenta"), ": " + hint))
    del escape


def indented(lead: str, text: str) -> str:
    """`lead` then `text`, its later lines indented under the first: `  [[2, 4],` / `   [6, 8]]`."""
    return lead + text.replace("\n", "\n" + " " * len(lead))


def inputs_line(inputs: dict) -> str:
    return ", ".join(f"{k}={' '.join(fmt_value(v, 40).split())}" for k, v in inputs.items())


def notes_for(result) -> list:
    """Warnings a user should see next to a result: non-finite values, kinks, unconnected inputs."""
    notes = []
    if getattr(result, "reduced", None) == "sum":
        from ...engine.lang.values import shape_of
        notes.append(f"the output has shape {shape_of(result.value)}: differentiated the sum of its elements "
                     "(use --cotangent V for vᵀJ)")
    if non_finite(result.value):
        notes.append("the value is not finite (nan or inf): check the inputs against the functions' domains")
    for name, g in (getattr(result, "gradient", None) or {}).items():
        if non_finite(g):
            notes.append(f"the gradient for {name} is not finite (nan or inf)")
    for finding in getattr(result, "nonfinite", ()) or ():     # NaN provenance: where it began
        notes.append(finding["message"])
    for name in getattr(result, "unconnected", ()) or ():
        notes.append(f"{name} does not reach the output: its gradient is exactly 0 (unconnected)")
    seen = set()
    for op, span, detail in getattr(result, "kinks", ()) or ():
        key = (op, span.line if span else None, span.column if span else None)
        if key in seen:
            continue
        seen.add(key)
        where = f"line {span.line}, column {span.column}: " if span else ""
        notes.append(f"{where}{detail}")
        if len(seen) >= 10:
            notes.append("… (more kinks not shown)")
            break
    return notes


def grad_result(target, result) -> None:
    from rich.table import Table
    from rich.text import Text
    screen = console()
    title = target.describe()
    screen.print(Text.assemble(("value", "bold"), f" of {title} at {inputs_line(result.inputs)}"))
    screen.print(Text("  " + fmt_value(result.value).replace("\n", "\n  ")))
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("input")
    table.add_column("∂f/∂input" if result.reduced is None else
                     ("∂sum(f)/∂input" if result.reduced == "sum" else "vᵀJ"))
    for name, g in result.gradient.items():
        table.add_row(Text(name), Text(fmt_value(g)))      # Text: "[inf, 1]" is not markup
    screen.print()
    screen.print(table)
    print_notes(notes_for(result))


def run_result(target, result) -> None:
    from rich.text import Text
    screen = console()
    screen.print(Text.assemble(("value", "bold"), f" of {target.describe()}" +
                          (f" at {inputs_line(result.inputs)}" if result.inputs else "")))
    screen.print(Text("  " + fmt_value(result.value).replace("\n", "\n  ")))
    print_notes(notes_for(result))


def print_notes(notes) -> None:
    if not notes:
        return
    from rich.text import Text
    screen = console()
    screen.print()
    for note in notes:
        screen.print(Text.assemble(("note", "yellow"), ": " + note))
