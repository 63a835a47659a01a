"""Plot images with matplotlib (the optional `plot` extra), drawn off-screen (Agg)."""
from __future__ import annotations

import math


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_image(path: str, data, labels, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    ax = fig.add_subplot()
    for label, ys in zip(labels, data.series):
        ax.plot(data.xs, [y if math.isfinite(y) else math.nan for y in ys], label=label, linewidth=1.6)
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
    fig.savefig(path)
