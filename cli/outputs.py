"""`--out PATH`: a result written in full precision, as an .npz archive (one array per entry:
`value`, `grad.x`, `jacobian.x`, `hessian.x.y`, `derivatives`) or as .json (the document --json
prints). The path is checked before any work, so a typo costs nothing, and again once the inputs
are read: it is never one of them. The file is written atomically by cli/outfile.py.

Engine and numpy imports sit inside the functions: start-up stays cheap.
"""
from __future__ import annotations

import os

import click

OUT_FORMATS = (".npz", ".json")

OUT = click.option("--out", "out", default=None, metavar="PATH",
                   help="Also write the result in full precision: .npz (arrays value, grad.x, jacobian.x, "
                        "hessian.x.y, derivatives) or .json (the --json document).")


def out_file(path):
    """The OutputFile of --out PATH (None without it), refused unless it can be written and is
    none of the files the command has read so far; nothing is computed before this."""
    if path is None:
        return None
    from ..parser.errors import SourceError
    ext = os.path.splitext(path)[1].lower()
    if ext not in OUT_FORMATS and not os.path.isdir(path):
        raise SourceError("bad file", f"--out {path}: unknown extension {ext or '(none)'}", None,
                          "results are written as .npz (numpy arrays) or .json")
    from .data_options import read_files
    from .outfile import OutputFile
    return OutputFile(path, "--out", read_files)


def result_arrays(result) -> dict:
    """The result's numbers by entry name, at the precision they were computed in."""
    from ..engine.core.backend import np, to_host
    from ..engine.core.tape import strip

    def array(v):
        return np().asarray(to_host(strip(v)))
    arrays = {"value": array(result.value)}
    for name, g in (getattr(result, "gradient", None) or {}).items():
        arrays[f"grad.{name}"] = array(g)
    for name, j in (getattr(result, "jacobian", None) or {}).items():
        arrays[f"jacobian.{name}"] = array(j)
    for a, row in (getattr(result, "hessian", None) or {}).items():
        for b, h in row.items():
            arrays[f"hessian.{a}.{b}"] = array(h)
    if getattr(result, "derivatives", None) is not None:
        arrays["derivatives"] = np().asarray([to_host(strip(d)) for d in result.derivatives])
    return arrays


def save_out(options: dict, build_doc, result, report=None, quiet=False) -> None:
    """Write --out PATH when given: `build_doc()` makes the --json document (with the check's
    report when there is one) for .json; the result's arrays go to .npz."""
    path = options.get("out")
    if path is None:
        return
    out = out_file(path)
    if path.lower().endswith(".json"):
        doc = build_doc()
        if report is not None:
            from .commands.checks import report_json
            doc["check"] = report_json(report)
        from .output import json_text
        out.write_text(json_text(doc) + "\n")
        written = "the JSON document"
    else:
        from ..engine.core.backend import np
        arrays = result_arrays(result)
        out.write(lambda fh: np().savez(fh, **arrays))
        written = ", ".join(arrays)
    if not quiet:
        from .render.page import Page
        Page().line(f"wrote {path}: {written}").show(stderr=True)
