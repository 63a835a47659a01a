"""cli/render/page.py: the plain text of a Page is what rich writes to a pipe, and a piped command
that prints a Page does not import rich."""
import io
import re
import os
import subprocess
import sys

from hypothesis import given, settings, strategies as st

from autodiff.cli.render import page as page_module
from autodiff.cli.render.page import Page, cell_width

CELL_TEXT = st.lists(st.sampled_from(list("ab xyz019.,-[]()∂ᵀ_αβγ") + ["宽", "字", "\n", "e\u0301"]),
                     max_size=12).map("".join)


def rich_rendition(page: Page, stderr: bool = False) -> str:
    """What rich prints for `page` on a pipe (the console the renderers used before Pages)."""
    stream = io.StringIO()
    old = sys.stderr if stderr else sys.stdout
    page_module.CONSOLES.clear()
    try:
        if stderr:
            sys.stderr = stream
        else:
            sys.stdout = stream
        page.show(stderr=stderr, how="rich")
    finally:
        if stderr:
            sys.stderr = old
        else:
            sys.stdout = old
        page_module.CONSOLES.clear()
    return stream.getvalue()


def test_a_gradient_page_reads_as_rich_wrote_it():
    page = Page().line(("value", "bold"), " of expression at x=3, y=4").line("  42").blank()
    page.table(["input", "∂f/∂input"], [["x", "24"], ["y", "[[2, 4],\n [6, 8]]"], ["long_name", "1"]])
    page.blank().line(("note", "yellow"), ": x does not reach the output")
    assert page.text() == rich_rendition(page)
    assert page.text().splitlines()[3:7] == ["input      ∂f/∂input", "x          24",
                                                   "y          [[2, 4],", "            [6, 8]]"]


@settings(max_examples=150, deadline=None)
# Headers are never empty (every Page table names its columns): rich lays out a column of width 0
# (all of its cells empty) in a way of its own, which no renderer here needs.
@given(headers=st.lists(CELL_TEXT.filter(lambda t: "\n" not in t and t.strip()), min_size=1, max_size=3),
       data=st.data(), lines=st.lists(CELL_TEXT, max_size=3))
def test_plain_text_equals_richs_on_a_pipe(headers, data, lines):
    rows = data.draw(st.lists(st.lists(CELL_TEXT, min_size=len(headers), max_size=len(headers)), max_size=4))
    page = Page()
    for text in lines:
        page.line(("note", "yellow"), ": " + text)
    page.table(headers, rows).line("end")
    assert page.text() == rich_rendition(page)


def test_control_characters_are_escaped_and_tabs_expanded():
    page = Page().line("name \x1b[2J\x00 done").line("a\tb")
    assert page.text() == "name \\x1b[2J\\x00 done\na       b\n"
    assert page.text() == rich_rendition(page)


def test_errors_go_to_stderr_the_same_way():
    page = Page().line(("error", "bold red"), ": syntax error").line(("  ^", "bold red"))
    assert page.text() == rich_rendition(page, stderr=True)


def test_cell_width_counts_wide_and_combining_characters():
    assert cell_width("abc") == 3
    assert cell_width("宽字") == 4
    assert cell_width("e\u0301") == 1


def imported_modules(*argv) -> tuple[subprocess.CompletedProcess, set]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "autodiff", *argv], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "NO_COLOR": "1"})
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done, names


def test_piped_grad_and_errors_do_not_import_rich():
    # A fifth of start-up is rich's import: a pipe gets the same text without it.
    done, modules = imported_modules("grad", "x**2*y+y+2", "--at", "x=3,y=4")
    assert done.returncode == 0 and "x      24" in done.stdout
    assert "rich" not in modules and "autodiff.cli.render.page" in modules
    done, modules = imported_modules("grad", "x**", "--at", "x=1")
    assert done.returncode == 2 and "error: syntax error" in done.stderr
    assert "rich" not in modules


class Terminal(io.StringIO):
    def isatty(self):
        return True


def shown(page: Page, monkeypatch, **environment) -> tuple[str, str]:
    """(how the page was printed, the text) on a terminal of 80 columns with `environment`."""
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    how = page.rendering_for(screen)
    page.show(how=how)
    return how, screen.getvalue()


def test_a_terminal_gets_the_plain_layout_with_styles(monkeypatch):
    page = Page().line(("value", "bold"), " of f").table(["input", "∂f/∂input"], [["x", "24"]])
    page.line(("note", "yellow"), ": careful")
    how, text = shown(page, monkeypatch)
    assert how == "styled"
    assert text.splitlines() == ["\x1b[1mvalue\x1b[0m of f", "\x1b[1minput\x1b[0m  \x1b[1m∂f/∂input\x1b[0m",
                                 "x      24", "\x1b[33mnote\x1b[0m: careful"]
    assert re.sub("\x1b\\[[0-9;]*m", "", text) == page.text()


def test_no_color_keeps_bold_and_a_dumb_terminal_gets_plain_text(monkeypatch):
    page = Page().line(("error", "bold red"), ": syntax error").line(("  ^", "bold red"))
    assert shown(page, monkeypatch, NO_COLOR="1")[1] == "\x1b[1merror\x1b[0m: syntax error\n\x1b[1m  ^\x1b[0m\n"
    assert shown(page, monkeypatch, TERM="dumb") == ("plain", page.text())


def test_force_color_styles_a_pipe_and_wide_lines_go_to_rich(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert Page().line("x").rendering_for(io.StringIO()) == "styled"
    how, text = shown(Page().line("x" * 100), monkeypatch)
    assert how == "rich" and "x" * 80 in text               # rich wraps what does not fit


def test_a_terminal_grad_does_not_import_rich():
    # the whole command on a pseudo-terminal, its imports listed (-X importtime): no rich
    from terminal import run_in_terminal
    code, text = run_in_terminal(["grad", "x**2*y+y+2", "--at", "x=3,y=4"],
                                 {"PYTHONPROFILEIMPORTTIME": "1", "COLUMNS": "80"})
    assert code == 0 and "\x1b[1mvalue\x1b[0m" in text and "x      24" in text
    assert "autodiff.cli.render.page" in text and not re.search(r"\|\s+rich(\.|\s|$)", text, re.M)


def test_a_header_in_brackets_is_not_rich_markup():
    # hypothesis found it: rich took the header "[a]" for a style tag and printed nothing
    page = Page().table(["[a]", "x"], [["1", "2"]])
    assert page.text() == rich_rendition(page)
    assert "[a]" in rich_rendition(page)
