"""`autodiff check FILE.toml ...` (batch checks) and the `--check` option of `grad`.

Engine, rich and renderer imports sit inside the functions: `autodiff --help` loads every command
module, and start-up must stay cheap.
"""
from __future__ import annotations

import re
import sys

import click

from ..exitcodes import Exit
from ..options import DEVICE_CHOICE, complete_files, deprecated, select_device, tolerance_options, with_flags


def tolerance_settings(f):
    """check's --rtol/--atol/--step: they replace the files' own."""
    for option in reversed(tolerance_options("for every case, whatever the files say")):
        f = option(f)
    return f


def _shard(value):
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise click.BadParameter(f"{value!r}: expected K/N with 1 <= K <= N, e.g. 2/4", param_hint="--shard")
    return int(m.group(1)), int(m.group(2))


@click.command(short_help="Run the gradient checks of TOML check files.")
@click.argument("files", nargs=-1, required=True, metavar="FILE.toml|DIR...", shell_complete=complete_files)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of tables.")
@click.option("--junit", "junit_path", default=None, metavar="PATH", shell_complete=complete_files, help="Also write JUnit XML (for CI) to PATH.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=1, show_default=True,
              help="Run cases in this many processes.")
@click.option("--shard", default=None, metavar="K/N", help="Run only the K-th of N parts of the cases "
              "(deterministic: split a suite across CI machines).")
@click.option("-k", "select", default=None, metavar="TEXT",
              help="Run only the cases whose name contains TEXT (case-insensitive), as pytest's -k.")
@click.option("--check", "check_mode", type=click.Choice(["full", "fast"]), default=None,
              help="Check every case in this mode, whatever the files say: full (every entry, with an error "
                   "estimate) or fast (one random projection per point).")
@click.option("--fast", "old_fast", is_flag=True, default=None, hidden=True,
              callback=deprecated("--fast", "--check fast"))
@click.option("--seed", type=click.IntRange(0), default=None, metavar="N",
              help="The random seed of fast mode and of random points, for every case.")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default=None,
              help="Run every case in this floating-point type, whatever the files say (dtype = ... in a "
                   "file's [defaults] or a case).")
@tolerance_settings
@click.option("--device", type=DEVICE_CHOICE, default=None, envvar="AUTODIFF_DEVICE", callback=select_device,
              help="Run every case on the CPU or the GPU, whatever the files say (device = \"gpu\" in a "
                   "file's [defaults] or a case). Also AUTODIFF_DEVICE.")
@click.option("--trust-rules", "trust_rules", is_flag=True, default=None,
              help="Every case's custom_vjp/custom_jvp rules that disagree with the derivative are intended "
                   "(rules = \"trusted\" in a case): listed as trusted, not failed.")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
def check(files, as_json, junit_path, jobs, shard, select, check_mode, old_fast, seed, dtype, rtol, atol, step,
          device, trust_rules, debug):
    """Run the gradient checks in TOML check files (a folder: every *.grad.toml below it).

    \b
      autodiff check samples/checks/*.toml
      autodiff check samples/checks/seeds.toml -k detach --check fast --seed 7
      autodiff check samples/checks/*.toml --dtype float32 --rtol 1e-3 --json

    \b
    A file holds [[case]] tables:
      [[case]]
      name = "Hands-on ML D-1"
      f = "x**2*y + y + 2"                     # or program = "loop.py" (and fn = "f")
      at = { x = 3, y = 4 }                    # or points = [...] or random = { count = 20, x = [-2, 2] }
      grad = { x = "2*x*y", y = "x**2 + 1" }   # hand-derived; without it AD is checked against FD
      # or, for a program: hand = "loss_grad" (its function returning the gradient); jacobian = "jac_fn";
      # hessian = "hess_fn"; jvp = "f_jvp" and vjp = "f_vjp" (with both: the dot-product test)
    --dtype, --rtol, --atol, --step and --device override every case's own.
    Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or invalid (the other
    files still run; the report shows it as an errored case).
    """
    from ...parser.errors import SourceError
    from ...engine.checks.collect import check_files
    files = check_files(files)
    loaded = _selected_cases(files, select, _shard(shard), as_json)
    if loaded is None:
        return Exit.USAGE
    cases, every_case, invalid = loaded
    _settle_devices(cases, device)
    from ...engine.checks.runner import override
    override(cases, dtype=dtype, rtol=rtol, atol=atol, step=step,      # the command line over the files
             rules="trusted" if trust_rules else None)
    mode = check_mode or ("fast" if old_fast else None)
    junit = None
    if junit_path:                        # checked before any case runs; written only at the end
        from ..outfile import OutputFile
        junit = OutputFile(junit_path, "--junit", _read_files(files, every_case))
    from ...engine.checks.workers import Interrupted
    try:
        results = _in_file_order(_run_with_progress(cases, jobs, mode, seed, show=not as_json) + invalid, files)
    except Interrupted as exc:
        _print_results(_in_file_order(exc.results + invalid, files), as_json, shard, files, dtype)   # before Ctrl-C
        sys.stderr.write(f"interrupted: {len(exc.results)} of {len(cases)} cases finished\n")
        return Exit.INTERRUPTED
    _print_results(results, as_json, shard, files, dtype)
    if junit is not None:                 # after the results: a full disk still shows them
        from ..render.junit import junit_xml
        try:
            junit.write_text(junit_xml(results))
        except SourceError as e:
            from ..render.common import error
            error(e)
            return Exit.USAGE
    if invalid:
        return Exit.USAGE                 # a user's mistake, after the valid files ran and were reported
    return Exit.CHECK_FAILED if any(r.failed for r in results) else Exit.OK


def _in_file_order(results, files) -> list:
    """The results grouped by check file in the order the files were named (stable within a file)."""
    order = {path: k for k, path in enumerate(files)}
    return sorted(results, key=lambda r: order.get(r.file, len(order)))


def _read_files(files, cases) -> dict:
    """Every file the run reads, and how it is named: the check files, their cases' programs
    and data files (of every case, selected or not: none may be overwritten)."""
    out = {path: "one of the check files being run" for path in files}
    for case in cases:
        if case.program is not None:
            out.setdefault(case.program, f"the program of a case in {case.file}")
        for path in case.data_files:
            out.setdefault(path, f"a data file of a case in {case.file}")
    return out


def _selected_cases(files, select, part, as_json):
    """(the cases of the files that -k and --shard select, every case of the files, an errored
    result per unreadable or invalid file), after reporting those on stderr; None when no file is valid."""
    from ...engine.checks.files import load_file
    from ...engine.checks.runner import invalid_file_result, shard as take_shard
    from ...parser.errors import SourceError
    cases, errors = [], []
    for path in files:
        try:
            cases.extend(load_file(path))
        except SourceError as e:
            errors.append((path, e))
    if errors:
        from ..render.common import error
        if as_json and len(errors) == len(files):   # one document: the first mistake (the others on stderr)
            from ..output import error_json
            error_json(errors[0][1])
        if as_json or len(errors) == len(files):    # else the table shows each as an errored case
            for _, e in errors:
                error(e)
        if len(errors) == len(files):
            return None
    every_case, invalid = cases, [invalid_file_result(path, e) for path, e in errors]
    if select is not None:
        cases = [c for c in cases if select.lower() in c.name.lower()]
        if not cases and not invalid:
            raise SourceError("usage", f"-k {select!r} selects none of the cases in {', '.join(files)}")
    return (take_shard(cases, *part) if part is not None else cases), every_case, invalid


def _print_results(results, as_json, shard, files, dtype=None) -> None:
    if as_json:
        from ..output import emit_json
        from ..render.checks import summary_line
        emit_json({"summary": _counts(results), "closing_line": summary_line(results),
                   "shard": shard, "files": list(files), "cases": [_case_json(r) for r in results]},
                  dtype=dtype or "float64")    # --dtype, else the files' default; a case's own is in its case
    else:
        from ..render.checks import case_table
        case_table(results, files)


def _settle_devices(cases, device):
    """--device overrides the files; a GPU a case asks for must be there (else exit 2, as --device gpu)."""
    from ...engine import api
    for c in cases:
        if device is not None:
            c.options["device"] = device
    if any(c.options.get("device") == "gpu" for c in cases):
        with api.device_scope("gpu"):      # only to ask: a missing GPU raises here, before any case runs
            pass


def _run_with_progress(cases, jobs, mode, seed, show):
    from ...engine.checks.runner import run_cases
    if not (show and sys.stderr.isatty()) or len(cases) < 2:
        return run_cases(cases, jobs, mode, seed, isolate=True)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from ..render.common import console
    with Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console(stderr=True), transient=True) as bar:
        task = bar.add_task("cases", total=len(cases))
        return run_cases(cases, jobs, mode, seed, progress=lambda r: bar.advance(task), isolate=True)


def _counts(results) -> dict:
    return {"passed": sum(r.status == "passed" for r in results), "failed": sum(r.failed for r in results),
            "errors": sum(r.status == "error" for r in results),
            "skipped": sum(r.status == "skipped" for r in results),
            "warnings": sum(1 for r in results if r.warnings and not r.failed), "total": len(results)}


def _case_json(r) -> dict:
    from ..output import jsonable
    return {"file": r.file, "name": r.name, "line": r.line, "status": r.status, "verdict": r.verdict,
            "points": r.points, "worst_abs_err": r.worst_abs, "worst_rel_err": r.worst_rel, "where": r.where,
            "inputs": {k: jsonable(v) for k, v in r.inputs.items()}, "entry": r.entry,
            "message": with_flags(r.message), "warnings": r.warnings, "failures": r.rows, "mode": r.mode,
            "seed": r.seed, "seconds": r.seconds}


# ---- grad --check ------------------------------------------------------------------------------

def grad_check(target, result, mode, seed, dtype, limits, output_seed=None, wrt=None, tolerance=None, hand=None,
               trust_rules=False):
    """Run the check of a computed gradient; returns the report. `tolerance`: --rtol/--atol/--step
    (None: the dtype's); `hand`: --hand NAME, the program's function of the hand-derived gradient;
    `trust_rules`: --trust-rules."""
    from ...engine.checks.gradient import check_gradient
    return check_gradient(target=target, at=result.inputs, grad=hand_claim(hand), mode=mode, seed=seed, dtype=dtype,
                          limits=limits, ad_result=result, output_seed=output_seed, wrt=wrt, trust_rules=trust_rules,
                          **(tolerance or {}))


def hand_claim(text):
    """--hand's text: NAME (a function of the program), or formulas "x=cos(x)*y,y=sin(x)" by input."""
    if text is None or text.strip().isidentifier():
        return None if text is None else text.strip()
    from ...engine.api import SourceError, split_top_level
    claim = {}
    for part in split_top_level(text):
        name, sep, formula = part.partition("=")
        if not sep or not name.strip().isidentifier() or not formula.strip():
            raise SourceError("usage", f"--hand {text!r}: {part!r} is neither a function name nor NAME=FORMULA", None,
                              "write --hand NAME (a function of the program returning the gradient) or "
                              "--hand \"x=FORMULA,y=FORMULA\" (one formula per input)")
        claim[name.strip()] = formula.strip()
    return claim


def report_json(report) -> dict:
    def row(r):
        return {"entry": r.label, "claimed": r.claimed, "reference": r.reference, "abs_err": r.abs_err,
                "rel_err": r.rel_err, "error_estimate": r.error_estimate, "tolerance": r.tolerance,
                "step": r.step, "verdict": r.verdict, "reason": r.reason, "left_slope": r.left,
                "right_slope": r.right, **({"index": list(r.index)} if r.index is not None else {})}
    doc = {"kind": report.kind, "mode": report.mode, "claimed": report.claimed, "reference": report.reference,
           "verdict": report.verdict, "passed": report.passed, "dtype": report.dtype,
           "rtol": report.tolerance.rtol, "atol": report.tolerance.atol, "evaluations": report.evaluations,
           "seed": report.seed, "conventions": report.conventions, "detached": report.detached,
           "entries": [row(r) for r in report.entries]}
    if report.projection is not None:
        doc["projection"] = row(report.projection)
    if report.full is not None:
        doc["entries"] = [row(r) for r in report.full.entries]
    if report.rules:
        doc["rules"] = [row(r) for r in report.rules]
    return doc
