"""Plot images with matplotlib (the optional `plot` extra), drawn off-screen (Agg).

matplotlib is imported inside the functions: it is an optional extra, and slow to load.
"""
from __future__ import annotations

import math
import os


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_image(out, data, labels, title: str) -> None:
    """Draw the plot and write it to `out` (an outfile.OutputFile: .png, .svg or .pdf)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    ax = fig.add_subplot()
    from ...engine.views.plotdata import breaks
    cuts = sorted(breaks(data))
    for k, (label, ys) in enumerate(zip(labels, data.series)):
        ys = [y if math.isfinite(y) else math.nan for y in ys]
        if k == 0 or not cuts:
            ax.plot(data.xs, ys, label=label, linewidth=1.6)
            continue
        # a derivative jumps at kinks: draw the pieces apart, in one colour, with one legend entry
        bounds = [0] + cuts + [len(ys)]
        colour = None
        for a, b in zip(bounds, bounds[1:]):
            if b <= a:
                continue
            style = "o" if b - a == 1 else "-"
            (line,) = ax.plot(data.xs[a:b], ys[a:b], style, color=colour, linewidth=1.6, markersize=2.5,
                              label=label if colour is None else None)
            colour = line.get_color()
    seen = set()
    for m in data.marks:
        kind = m.kind
        ax.axvline(m.x, color="#b58900", linestyle=":", linewidth=1,
                   label=None if kind in seen else kind)
        seen.add(kind)
    ax.axhline(0.0, color="#999999", linewidth=0.6)
    ax.set_xlabel(data.name)
    ax.set_title(f"{title} and its derivatives (by AD)" if data.order else title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    out.write(lambda fh: fig.savefig(fh, format=os.path.splitext(out.path)[1].lower().lstrip(".")))
