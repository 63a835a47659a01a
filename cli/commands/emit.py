"""The `emit` command: the derivative as source code (engine/emit), written to -o PATH (atomically,
never over a file the command reads) or printed; `--validate --at` runs the written module's checks.

Engine imports sit inside the function: `autodiff --help` loads every command module."""
from __future__ import annotations

import os
import sys
import tempfile

import click

from ..exitcodes import Exit
from ..options import target_options
from ..parsing import TargetCommand
from .common import WRT, load_point, wrt_names


@click.command(cls=TargetCommand, short_help="Write the derivative as Python source code (numpy only).")
@target_options
@WRT
@click.option("--mode", type=click.Choice(["adjoint", "tangent", "both"]), default=None,
              help="adjoint: f_vjp (reverse mode, the default); tangent: f_jvp (forward mode); both "
              "(the default with --validate).")
@click.option("-o", "--output", "output", default=None, metavar="PATH",
              help="Write the module to PATH (default: print it).")
@click.option("--explain", is_flag=True, help="A comment per adjoint statement stating its chain-rule step.")
@click.option("--validate", is_flag=True, help="Run the written module at --at: tangent against central "
              "differences, adjoint against AD, the dot-product test. A failed check exits 1.")
def emit(target, at, fn, of, dtype, as_json, debug, wrt, mode, output, explain, validate, **limits):
    """Write TARGET's derivative as a Python module that needs only numpy.

    \b
      autodiff emit samples/programs/euler_decay.py -o euler_adjoint.py
      autodiff emit "x*y + sin(x)" --mode both --validate --at x=0.5,y=2
      autodiff emit samples/programs/recursive_power.py --explain
    """
    from ...engine import api
    from ..outfile import OutputFile
    if dtype != "float64":
        raise api.SourceError("usage", "emit writes float64 numpy code; --dtype float32 is not emitted yet")
    if validate and not at:
        raise api.SourceError("usage", "--validate runs the module at a point: give it with --at NAME=VALUE,...")
    _, loaded, values = load_point(target, fn, of, at, limits)
    names = wrt_names(wrt)
    out = OutputFile(output, "-o", {loaded.filename: "TARGET"} if loaded.filename else {}) if output else None
    from ..output import emit_json, version
    text = api.emit(None, wrt=names, mode=mode or ("both" if validate else "adjoint"), explain=explain, target=loaded,
                    tool_version=version(), at=values or None)
    if out is not None:
        out.write_text(text)
    rows = _validate(api, loaded, text, output, values, names) if validate else []
    if as_json:
        emit_json({"module": text if out is None else None, "path": output, "checks": rows})
    else:
        if out is None and not validate:
            sys.stdout.write(text)
        for r in rows:
            click.echo(f"{r['check']:<36} {r['of']:<10} emitted {_short(r['emitted']):<24} reference "
                       f"{_short(r['reference']):<24} error {r['error']:.2e}  {r['verdict']}")
    return Exit.CHECK_FAILED if any(r["verdict"] == "FAIL" for r in rows) else Exit.OK


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _validate(api, loaded, text, output, values, names) -> list:
    if output is not None:
        return api.validate_emitted(output, loaded, values, names)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "emitted.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return api.validate_emitted(path, loaded, values, names)
