"""The `emit` command: the derivative as source code (engine/emit), written to -o PATH (atomically,
never over the program it reads) or printed; `--validate --at` runs the written module's checks."""
from __future__ import annotations

import os
import sys
import tempfile

import click

from ..exitcodes import Exit


@click.command(short_help="Write the derivative as Python source code (numpy only).")
@click.argument("target")
@click.option("--fn", default=None, metavar="NAME", help="The function of a program (default: f, else the only one).")
@click.option("--of", default=None, metavar="NAME", help="For a script: the variable that is the output.")
@click.option("--wrt", default=None, metavar="A,B", help="The inputs to differentiate with respect to (default: all).")
@click.option("--mode", type=click.Choice(["adjoint", "tangent", "both"]), default="adjoint", show_default=True,
              help="adjoint: f_vjp (reverse mode); tangent: f_jvp (forward mode); both.")
@click.option("-o", "--output", "output", default=None, metavar="PATH", help="Write the module to PATH "
              "(default: print it).")
@click.option("--explain", is_flag=True, help="A comment per adjoint statement stating its chain-rule step.")
@click.option("--validate", is_flag=True, help="Run the written module at --at: tangent against central "
              "differences, adjoint against AD, the dot-product test. A failed check exits 1.")
@click.option("--at", "at", multiple=True, metavar="NAME=VALUE[,...]", help="The point --validate runs at.")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
def emit(target, fn, of, wrt, mode, output, explain, validate, at, debug):
    """Write TARGET's derivative as a Python module that needs only numpy.

    \b
      autodiff emit samples/programs/euler_decay.py -o euler_adjoint.py
      autodiff emit "x*y + sin(x)" --mode both --validate --at x=0.5,y=2
    """
    from ...engine import api
    from ..outfile import OutputFile
    from .common import wrt_names
    loaded = api.load(target, fn, of)
    names = wrt_names(wrt)
    out = OutputFile(output, "-o", {loaded.filename: loaded.filename} if loaded.filename else {}) \
        if output else None
    if validate and not at:
        raise click.UsageError("--validate needs the point: --at NAME=VALUE,...")
    text = api.emit(None, wrt=names, mode="both" if validate else mode, explain=explain, target=loaded) \
        if validate else api.emit(None, wrt=names, mode=mode, explain=explain, target=loaded)
    if out is not None:
        out.write_text(text)
    elif not validate:
        sys.stdout.write(text)
    if validate:
        _validate(api, loaded, text, output, at, names)


def _validate(api, loaded, text, output, at, names):
    from ..options import parse_at
    values = parse_at(at)
    if output is None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "emitted.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            rows = api.validate_emitted(path, loaded, values, names)
    else:
        rows = api.validate_emitted(output, loaded, values, names)
    for r in rows:
        click.echo(f"{r['check']:<36} {r['of']:<10} emitted {r['emitted']!r:<24} reference {r['reference']!r:<24} "
                   f"error {r['error']:.2e}  {r['verdict']}")
    if any(r["verdict"] == "FAIL" for r in rows):
        raise SystemExit(Exit.CHECK_FAILED)
