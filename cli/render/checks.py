"""Rich output of numerical checks: the per-entry table of `grad --check` and the per-case table
of `autodiff check`. Machines get JSON (cli/checks.py) or JUnit XML (cli/junit.py).

rich is imported inside the functions: `check --json` uses summary_line without loading it.
"""
from __future__ import annotations

import math
import os
import re

from ...engine.checks.report import WARNING
from ...engine.core.numbers import nonfinite_word
from ..options import with_flags
from ..output import printable
from .common import console

_STYLE = {"pass": "green", "fail": "bold red", "non-finite": "bold red", "branch": "yellow",
          "kink": "yellow", "inconclusive": "yellow", "detached": "yellow", "trusted": "yellow", "error": "bold red", "skipped": "dim", "passed": "green", "failed": "bold red"}


def num(x) -> str:
    if x is None:
        return "—"
    if nonfinite_word(x):
        return nonfinite_word(x)
    if x == 0:
        return "0"
    return f"{x:.6g}" if 1e-4 <= abs(x) < 1e7 else f"{x:.3e}"


def num_full(x) -> str:
    """AD and FD values: enough digits to see where they part."""
    if x is None or x != x or x in (math.inf, -math.inf) or x == 0:
        return num(x)
    return f"{x:.12g}"


def _verdict(v):
    from rich.text import Text
    return Text(v, style=_STYLE.get(v, ""))


def gradient_check(report) -> None:
    """The table of a `--check` run, one row per entry (or the projection in fast mode)."""
    from rich.text import Text
    screen = console()
    screen.print()
    kind = getattr(report, "kind", "gradient")
    if report.mode == "fast":
        projection = {"jacobian": f"{report.projection.label} (v, d: random weights and steps)",
                      "hessian": "uᵀHd (u, d: random weights and steps; a directional difference of uᵀ∇f)"
                      }.get(kind, "dᵀ∇f")
        screen.print(Text.assemble(("check", "bold"), f" (fast): a random projection {projection} against a "
                                   f"directional central difference, seed {report.seed} "
                                   f"(rerun with --seed {report.seed})"))
        _table(screen, [report.projection], report)
        if report.full is not None and report.full.reference == "AD":
            screen.print()
            screen.print(Text.assemble(("check", "bold"), ": every entry of the hand-derived gradient against AD"))
            _table(screen, report.full.entries, report.full)
        elif report.full is not None:
            screen.print()
            screen.print(Text.assemble(("the projection disagrees", "bold red"),
                                  ": recomputed in full to find the wrong entries"))
            _table(screen, report.full.entries, report.full)
    else:
        what = {"jacobian": "the AD Jacobian against central differences of the output",
                "hessian": "the AD Hessian against central differences of the AD gradient",
                "derivative": "each order by AD against central differences of the order below"}.get(
            kind, "AD against central differences") + " (Richardson extrapolation, with an error estimate)"
        if report.mode == "complex-step":
            what = ("hand-derived gradient" if report.claimed == "hand" else "AD") + \
                " against the complex step Im f(x + ih)/h, h = 1e-20 (no subtraction: good to rounding)"
        elif report.claimed == "hand":
            what = {"jacobian": "hand-derived Jacobian against AD", "hessian": "hand-derived Hessian against AD"}.get(
                kind, "hand-derived gradient against " + ("AD" if report.reference == "AD" else
                                                          "central differences (Richardson extrapolation, with an "
                                                          "error estimate)"))
        screen.print(Text.assemble(("check", "bold"), f": {what}"))
        _table(screen, report.entries, report)
    _rules(screen, report.rules)
    rows = report.rows + ([report.projection] if report.full is not None else [])
    notes = [r for r in rows if r.verdict != "pass" and r.reason]
    for r in notes[:20]:
        screen.print(Text.assemble((r.verdict, _STYLE[r.verdict]), f": {r.label}: {r.reason}"))
    if len(notes) > 20:
        screen.print(f"… and {len(notes) - 20} more")
    failures = report.failures
    n = len(report.rows)
    summary = f"{report.evaluations} evaluations, {report.dtype}: rtol {report.tolerance.rtol:g}, " \
              f"atol {report.tolerance.atol:g}"
    if failures:
        screen.print(Text.assemble(("check failed", "bold red"),
                              f": {len(failures)} of {n} {'entries' if n != 1 else 'entry'} ({summary})"))
    else:
        warned = sum(1 for r in rows if r.verdict in WARNING)
        screen.print(Text.assemble(("check passed", "bold green"),
                              f" ({summary}" + (f"; {warned} with warnings" if warned else "") + ")"))


def _rules(screen, rows) -> None:
    """The user rules the run passed through, each checked where it was used: a passing one in a
    line; a failing or trusted one is told with its reason among the notes below."""
    from rich.text import Text
    if not rows:
        return
    screen.print(Text.assemble(("rules", "bold"), ": each custom rule the run used, against AD of its own "
                               "function and central differences, at the points it was used at"))
    passed: dict = {}
    for r in rows:
        if r.verdict == "pass":
            passed[r.label] = passed.get(r.label, 0) + 1
    for label, n in passed.items():
        screen.print(Text.assemble("  ", _verdict("pass"), f": {label}" + (f" ({n} uses)" if n > 1 else "")))


def _table(screen, rows, report, limit=200):
    from rich.table import Table
    hand = report.claimed == "hand"
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("entry")
    table.add_column("hand" if hand else "AD", justify="right")
    table.add_column(report.reference, justify="right")
    table.add_column("abs err", justify="right")
    table.add_column("rel err", justify="right")
    if report.reference == "FD":
        table.add_column("FD err est", justify="right")
        table.add_column("step", justify="right")
    table.add_column("tolerance", justify="right")
    table.add_column("verdict")
    shown = rows if len(rows) <= limit else [r for r in rows if r.verdict != "pass"][:limit] or rows[:limit]
    for r in shown:
        cells = [r.label, num_full(r.claimed), num_full(r.reference), num(r.abs_err), num(r.rel_err)]
        if report.reference == "FD":
            cells += [num(r.error_estimate), num(r.step)]
        cells += [num(r.tolerance), _verdict(r.verdict)]
        table.add_row(*cells)
    screen.print(table)
    if len(shown) < len(rows):
        screen.print(f"({len(rows) - len(shown)} more rows not shown: "
                f"{sum(1 for r in rows if r.verdict == 'pass')} of {len(rows)} pass)")


# ---- batch checks ------------------------------------------------------------------------------

def summary_line(results) -> str:
    """Exactly `N passed, N failed`, then `, N skipped` and `, N warnings` when there are any."""
    passed = sum(1 for r in results if r.status == "passed")
    failed = sum(1 for r in results if r.failed)
    skipped = sum(1 for r in results if r.status == "skipped")
    warned = sum(1 for r in results if r.warnings and not r.failed)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    if warned:
        line += f", {warned} with warnings"
    return line


def _table_width(screen) -> int | None:
    """The width the case table must fit: the terminal's (None: rich fits it), or COLUMNS when
    piped (unset: one line per case, however long, so a pipe can grep it)."""
    if screen.is_terminal:
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def _exact_pass(r) -> bool:
    """A pass with no error at all: there is no worst entry to point at."""
    return r.status == "passed" and r.verdict == "pass" and not r.worst_abs and not r.worst_rel


def brief(x) -> str:
    """A table cell's number: 3 significant digits (the full ones are in --json)."""
    if x is None or nonfinite_word(x) or x == 0:
        return num(x)
    return f"{x:.3g}"


def _where_cell(r) -> str:
    """Where the worst entry is, short enough for its cell: the entry (`x[40]`), led by the point's
    number when the case has several (`point 7: x`); the inputs' values are in the warnings and
    in --json. Empty for an exact pass: there is no worst entry to point at."""
    if r.status == "error":
        return with_flags(r.message).splitlines()[0] if r.message else ""
    if _exact_pass(r) or not r.where:
        return ""
    suffix = f", {r.entry}"               # the entry whole: `W1[0, 2]` holds a comma of its own
    if not r.entry or not r.where.endswith(suffix):
        return r.where                   # not the runner's "point K (...), entry": shown whole
    point = r.where[:-len(suffix)]
    number = re.match(r"point (\d+) \(", point)
    if point != "the point" and number is None:
        return r.where
    return f"point {number.group(1)}: {r.entry}" if number and r.points > 1 else r.entry


def _cases_table(results):
    from rich.table import Table
    from rich.text import Text
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("case", overflow="fold")
    table.add_column("pts", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("abs err", justify="right", no_wrap=True)
    table.add_column("rel err", justify="right", no_wrap=True)
    table.add_column("where", overflow="fold")
    for r in results:
        shown = r.verdict if r.status not in ("error", "skipped") else r.status
        # Text, not markup: a name may hold "[" or control characters (escaped before it is measured)
        table.add_row(Text(printable(r.name)), str(r.points), _verdict(shown), brief(r.worst_abs),
                      brief(r.worst_rel), Text(printable(_where_cell(r))))
    return table


def case_table(results, files) -> None:
    """One row per case, fitting the terminal (80 columns: long names and places wrap in their
    cells); on a multi-file run the cases come under a heading per file."""
    from rich.text import Text
    screen = console()
    width = _table_width(screen)
    by_file = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    several = len(by_file) > 1
    for k, (file, cases) in enumerate(by_file.items()):
        if several:
            if k:
                screen.print()
            screen.print(Text(printable(file), style="bold underline"))
        screen.print(_cases_table(cases), width=width)
    problems = [r for r in results if r.failed or r.status == "skipped" or r.warnings]
    if problems:
        screen.print()
    for r in problems:
        head = f"{r.file}:{r.line} {r.name}"
        if r.failed:
            screen.print(Text.assemble((r.status.upper() if r.status == "error" else "FAILED", "bold red"), f" {head}"))
            if r.status == "error":
                for line in with_flags(r.message).splitlines():
                    screen.print(Text("  " + line))
            else:
                for row in r.rows[:10]:
                    screen.print(Text(f"  {row['where']}, {row['entry']}: {row['verdict']}: {row['reason']}"))
                if len(r.rows) > 10:
                    screen.print(Text(f"  … and {len(r.rows) - 10} more failing entries"))
            if r.seed is not None:
                screen.print(Text(f"  fast mode, seed {r.seed}", style="dim"))
        elif r.status == "skipped":
            screen.print(Text.assemble(("skipped", "dim"), f" {head}: {with_flags(r.message)}"))
        for w in (r.warnings[:5] if not r.failed else []):
            screen.print(Text.assemble(("warning", "yellow"), f" {head}: {w}"))
        if len(r.warnings) > 5 and not r.failed:
            screen.print(Text(f"  … and {len(r.warnings) - 5} more warnings", style="yellow"))
    screen.print()
    line = summary_line(results)
    failed = any(r.failed for r in results)
    screen.print(Text(line, style="bold red" if failed else "bold green"))
