"""Plumbing every command that takes a TARGET and a point shares: loading the target, the --wrt
list, the JSON fields of any result, and reporting a --check (in the JSON document or as a table).

Engine and renderer imports sit inside the functions: the command modules import this one when
`autodiff --help` lists them, and start-up must stay cheap.
"""
from __future__ import annotations

import click

from ..exitcodes import Exit
from ..data_options import at_file_reader, forget_file_inputs, inputs_from_file, merged_inputs, note_program
from ..options import limits_from, parse_at

WRT = click.option("--wrt", default=None, metavar="NAMES",
                   help="Differentiate with respect to these inputs only (comma-separated).")
CHECK = click.option("--check", "check_mode", type=click.Choice(["full", "fast"]), is_flag=False,
                     flag_value="full", default=None,
                     help="Check against finite differences: full (every entry, with an error "
                     "estimate) or fast (one random projection). A failed check exits 1.")

HAND = click.option("--hand", default=None, metavar="NAME",
                    help="Check a hand-derived derivative against AD: NAME is a function of the program taking "
                    "the target's parameters and returning it (a tuple in the order of the inputs, or one array "
                    "for one); for grad also formulas by input, \"x=cos(x)*y,y=sin(x)\". A failed check exits 1.")


TRUST_RULES = click.option("--trust-rules", "trust_rules", is_flag=True, default=None,
                           help="With --check: the program's custom_vjp/custom_jvp rules that disagree with "
                                "the derivative are intended (a clipped or straight-through gradient): listed "
                                "as trusted, not failed.")


def require_check_for(check_mode, **given) -> None:
    """--rtol/--atol/--step tune a check: without --check they would do nothing, so say so."""
    named = [f"--{name}" for name, value in given.items() if value is not None]
    if named and check_mode is None:
        from ...parser.errors import SourceError
        raise SourceError("usage", f"{', '.join(named)} set{'s' * (len(named) == 1)} the tolerances of --check, "
                          "and this run checks nothing", None, "add --check (or --check fast)")


def load_point(target, fn, of, at, limit_options: dict):
    """(limits, target, input values) from a command's TARGET, --fn, --of, --at, --inputs, --out
    (checked before any work) and --max-* options."""
    from ...engine import api
    from ..outputs import out_file
    forget_file_inputs()
    out_file(limit_options.get("out"))
    limits = limits_from(limit_options)
    if fn is not None or of is not None:
        refuse_file_read_as_expression(target)
    loaded = api.load(target, fn, of)
    note_program(loaded)
    from_file = inputs_from_file(limit_options, limits)
    from_at = parse_at(at, limits, at_file_reader(limit_options, limits))
    out_file(limit_options.get("out"))             # again: it must be none of the files just read
    values, warnings = merged_inputs(from_file, from_at, limit_options)
    if loaded.kind == "expression" and any(n not in values for n in loaded.inputs):
        refuse_file_read_as_expression(target)
    if warnings:
        from ..render.page import Page
        page = Page()
        for message in warnings:
            page.line(("warning", "bold yellow"), ": " + message)
        page.show(stderr=True)
    return limits, loaded.given(values), values      # defaulted parameters given: inputs


def refuse_file_read_as_expression(target) -> None:
    """TARGET `model` is read as an expression; called where that expression cannot be what was
    meant (--fn/--of given, or inputs left without values): where a file `model` or `model.py`
    exists, say so and how to give it as a program."""
    import os
    from ...engine import api
    from ...parser.errors import SourceError
    if "\n" in target or api.looks_like_file(target):
        return
    if os.path.isfile(target + ".py"):
        raise SourceError("usage", f"TARGET {target!r} is read as an expression; the program is {target}.py",
                          None, f"write {target}.py")
    if os.path.isfile(target):
        raise SourceError("usage", f"TARGET {target!r} names an existing file, but without .py it is read as an "
                          "expression", None, f"give the file as a program: ./{target} (or rename it {target}.py)")


def seed_constant(seed, limits):
    """The value of --cotangent (a constant expression), or None without one."""
    if seed is None:
        return None
    from ...engine import api
    return api.constant(seed, "--cotangent", limits)


def wrt_names(wrt):
    """`--wrt x, y` -> ["x", "y"]; None when the option is absent."""
    return [w.strip() for w in wrt.split(",") if w.strip()] if wrt else None


def kink_json(kink) -> dict:
    op, span, detail = kink
    return {"op": op, "line": span.line if span else None, "column": span.column if span else None,
            "detail": detail}


def point_json(result) -> dict:
    """The fields every derivative's JSON ends with: the inputs, notes and kinks."""
    from ..output import jsonable
    from ..render.common import notes_for
    return {"inputs": {k: jsonable(v) for k, v in result.inputs.items()}, "notes": notes_for(result),
            "kinks": [kink_json(k) for k in result.kinks]}


def emit_checked(doc: dict, report) -> int:
    """Emit the JSON document, with the check's report when there is one; the exit code follows it."""
    from ..output import emit_json
    if report is not None:
        from .checks import report_json
        doc["check"] = report_json(report)
    emit_json(doc)
    return check_exit(report)


def show_check(report) -> int:
    """Print the check's table when there is one; the exit code follows it."""
    if report is not None:
        from ..render.checks import gradient_check
        gradient_check(report)
    return check_exit(report)


def check_exit(report) -> int:
    return Exit.CHECK_FAILED if report is not None and not report.passed else Exit.OK


def deliver(limit_options: dict, as_json: bool, result, document, show) -> int:
    """The end of a command without a check: --out if asked, then the JSON `document()` or the
    people's view `show()`."""
    from ..outputs import save_out
    save_out(limit_options, document, result)
    if as_json:
        from ..output import emit_json
        emit_json(document())
    else:
        show()
    return Exit.OK
