"""The `plot` command: a target and its first derivatives over an interval of one input, drawn in
the terminal or written as an image (loaded lazily by main.LAZY).

Engine, rich and renderer imports sit inside the functions: `autodiff --help` loads every command
module, and start-up must stay cheap.
"""
from __future__ import annotations

import math
import os

import click

from ...parser.errors import SourceError
from ..exitcodes import Exit
from ..options import complete_files, flag_spelling, target_options
from ..parsing import TargetCommand
from .common import load_point


def parse_range(text: str, lim):
    """`A:B` or `NAME=A:B` -> (name or None, a, b); A and B are constant expressions (-pi:pi)."""
    from ...engine import api
    name = None
    head, eq, rest = text.partition("=")
    if eq and head.strip().isidentifier():
        name, text = head.strip(), rest
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise SourceError("bad input", f"--range expects A:B (or NAME=A:B), got {text!r}", None,
                          "e.g. --range -7:7 or --range x=0:2*pi")
    a, b = (api.constant(p.strip(), f"--range {'start' if k == 0 else 'end'}", lim) for k, p in enumerate(parts))
    for v, what in ((a, "start"), (b, "end")):
        if getattr(v, "shape", ()) != () or not math.isfinite(float(v)):
            raise SourceError("bad input", f"--range {what} must be a finite number, got {v!r}")
    a, b = float(a), float(b)
    if not a < b:
        raise SourceError("bad input", f"--range {text}: the start must be below the end")
    return name, a, b


def _varied_input(target, name, values):
    if name is not None:
        if name not in target.inputs:
            raise SourceError("unknown input", f"--range {name}=…: {target.describe()} has no input {name!r} "
                              f"(its inputs: {', '.join(target.inputs) or 'none'})")
        if name in values:
            raise SourceError("bad input", f"{name} is given both by --range and by --at")
        return name
    free = [v for v in target.inputs if v not in values]
    if len(free) == 1:
        return free[0]
    if not target.inputs:
        raise SourceError("usage", f"{target.describe()} has no input to vary along --range")
    if not free:
        raise SourceError("bad input", "every input has a value from --at: name the one to vary with "
                          "--range NAME=A:B")
    raise SourceError("missing input", f"several inputs have no value ({', '.join(free)}): name the one to "
                      f"vary with --range NAME=A:B and give the others with --at")


def _labels(name, order):
    """f, f′ = df/dx, f″ = d²f/dx², ..."""
    sup = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
    primes = {1: "′", 2: "″", 3: "‴"}
    out = ["f"]
    for k in range(1, order + 1):
        power = "" if k == 1 else str(k).translate(sup)
        out.append(f"f{primes.get(k, f'^({k})')} = d{power}f/d{name}{power}")
    return out


@click.command(cls=TargetCommand, short_help="Plot a target and its derivatives over an interval.")
@target_options
@click.option("--range", "range_", required=True, metavar="[NAME=]A:B",
              help="The interval of the varied input, e.g. -7:7 or x=0:2*pi.")
@click.option("--order", type=click.IntRange(0, 6), default=1, show_default=True,
              help="Plot f and its first N derivatives (by AD).")
@click.option("--points", type=click.IntRange(2, 100_000), default=201, show_default=True,
              help="Grid points (evaluated one by one, so control flow follows each point).")
@click.option("-o", "--output", "output", default=None, metavar="FILE", shell_complete=complete_files,
              help="Write an image (.png, .svg or .pdf; needs matplotlib: pip install 'autodiff[plot]') "
                   "instead of drawing in the terminal.")
def plot(target, at, fn, of, dtype, as_json, range_, order, points, output, debug, **limits):
    """Plot TARGET and its first N derivatives over an interval of one scalar input.

    \b
      autodiff plot "sin(x)" --range -7:7                  # d2l: f and f'
      autodiff plot "abs(x) + relu(x - 1)" --range -2:2 --order 2 -o kinks.png
      autodiff plot "x**2*y" --range x=0:1 --at y=3 --points 11 --json
    """
    from ...engine import api
    from ...engine.views.plotdata import sample
    from ...engine.lang.values import set_dtype
    set_dtype(dtype)
    lim, tgt, values = load_point(target, fn, of, at, limits)
    name, lo, hi = parse_range(range_, lim)
    tgt = tgt.given([name]) if name is not None else tgt      # --range k=...: a defaulted parameter varied
    name = _varied_input(tgt, name, values)
    others = api.bind_inputs(tgt, {**values, name: 0.0})
    others.pop(name)
    image = _image_file(output) if output is not None else None
    data = _sample_with_progress(sample, tgt, name, lo, hi, points, order, others, lim)
    labels = _labels(name, order)
    if as_json:
        from ..output import emit_json, jsonable
        emit_json({"wrt": [name], "inputs": {k: jsonable(v) for k, v in others.items()},
                   "range": [lo, hi], "order": order, "x": data.xs,
                   "series": {"f" + "'" * k: ys for k, ys in enumerate(data.series)},
                   "marks": [_mark_json(m) for m in data.marks], "image": output,
                   "errors": [{"x": x, "kind": e.kind, "message": e.spelled(flag_spelling)[0]}
                              for x, e in data.errors]})
    if output is not None:
        from ..render.plot_image import write_image
        write_image(image, data, labels, title_of(tgt))
        if not as_json:
            from ..render.common import console
            console().print(f"wrote {output}: {labels[0]} and {order} derivative{'s' * (order != 1)} "
                            f"over {name} in [{lo:g}, {hi:g}], {points} points, {len(data.marks)} marks")
    elif not as_json:
        _draw_terminal(tgt, data, labels, lo, hi)
    return Exit.OK


def title_of(tgt) -> str:
    if tgt.kind == "expression":
        text = " ".join(tgt.source.split())
        return text if len(text) <= 60 else text[:59] + "…"
    return f"{tgt.describe()} in {tgt.filename}" if tgt.filename else tgt.describe()


def _image_file(path):
    """The OutputFile of -o PATH, checked before any point is sampled."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise SourceError("usage", f"-o {path}: the image must end in .png, .svg or .pdf")
    from ..render.plot_image import have_matplotlib
    if not have_matplotlib():
        raise SourceError("missing extra", "writing an image needs matplotlib, which is not installed",
                          None, "pip install 'autodiff[plot]' (or draw in the terminal: leave out -o)")
    from ..data_options import read_files
    from ..outfile import OutputFile
    return OutputFile(path, "-o", read_files)


def _sample_with_progress(sample, tgt, name, lo, hi, points, order, others, lim):
    from ..render.common import console
    screen = console(stderr=True)
    if not screen.is_terminal or points < 100:
        return sample(tgt, name, lo, hi, points, order, others, lim)
    from rich.progress import Progress
    with Progress(console=screen, transient=True) as progress:
        task = progress.add_task("evaluating", total=points)
        return sample(tgt, name, lo, hi, points, order, others, lim,
                      on_point=lambda i: progress.update(task, completed=i + 1))


def _mark_json(m):
    return {"kind": m.kind, "x": m.x, "between": list(m.between) if m.between else None, "op": m.op,
            "line": m.line, "column": m.column, "detail": m.detail}


def mark_text(m) -> str:
    where = f"line {m.line}, column {m.column}: " if m.line is not None else ""
    at = f"between {m.between[0]:.6g} and {m.between[1]:.6g}" if m.between else f"at {m.x:.6g}"
    return f"{m.kind} {at} ({where}{m.detail})"


def _draw_terminal(tgt, data, labels, lo, hi):
    from rich.text import Text
    from ..render.plot_term import draw
    from ..render.common import console
    screen = console()
    width = screen.width if screen.is_terminal else 80
    screen.print(Text.assemble(("plot", "bold"), f" of {title_of(tgt)} over {data.name} in [{lo:g}, {hi:g}] "
                          f"({len(data.xs)} points; derivatives by AD)"))
    from ...engine.views.plotdata import breaks
    colour = screen.color_system is not None and not screen.no_color      # else one glyph per curve
    lines, clipped = draw(data.xs, data.series, labels, data.marks, width=min(width, 160), breaks=breaks(data),
                          colour=colour)
    for line in lines:
        screen.print(line, no_wrap=True, overflow="ignore", crop=False)
    notes = []
    if clipped:
        notes.append("a few values lie far outside the rest (a pole?): the y axis is clipped to show the rest")
    for k, ys in enumerate(data.series):
        bad = sum(1 for y in ys if y != y or y in (float("inf"), float("-inf")))
        if bad:
            notes.append(f"{labels[k].split(' = ')[0]} is not finite at {bad} of {len(ys)} points (gaps in the curve)")
    if data.errors:
        x, err = data.errors[0]
        notes.append(f"the target could not be evaluated at {len(data.errors)} of {len(data.xs)} points "
                     f"(gaps); first at {data.name} = {x:.6g}: {err.kind}: {err.spelled(flag_spelling)[0]}")
    shown = data.marks[:20]
    for m in shown:
        notes.append(mark_text(m))
    if len(data.marks) > len(shown):
        notes.append(f"… {len(data.marks) - len(shown)} more marks (see --json)")
    from ..render.common import print_notes
    print_notes(notes)
