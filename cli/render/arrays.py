"""Big arrays in the terminal: summarized as numpy summarizes them (the first and last entries),
with the shape, min, max and norm, so a million-element gradient prints in a few lines. The
full numbers go to a file with --out."""
from __future__ import annotations

SUMMARY_OVER = 1000        # elements: numpy's own print threshold


def is_big(value) -> bool:
    return getattr(value, "size", 0) > SUMMARY_OVER


def summary(a, entry, width: int = 60) -> str:
    """`[0, 1, 2, ..., 97, 98, 99]` then `shape (100,), min 0, max 99, norm 574.5` on its own line;
    `entry` formats one number."""
    from ...engine.core.backend import np
    numpy = np()
    a = numpy.asarray(a, dtype=float)
    preview = numpy.array2string(a, separator=", ", threshold=20, edgeitems=3,
                                 formatter={"float_kind": entry}, max_line_width=width)
    low, high = a.min(), a.max()              # nan or inf among them: then over the finite entries only
    finite = a if numpy.isfinite(low) and numpy.isfinite(high) else a[numpy.isfinite(a)]
    stats = [f"shape {tuple(a.shape)}"]
    if finite is not a and finite.size:
        low, high = finite.min(), finite.max()
    if finite.size:
        flat = finite.ravel()
        stats += [f"min {entry(low)}", f"max {entry(high)}", f"norm {entry(numpy.sqrt(numpy.dot(flat, flat)))}"]
    bad = a.size - finite.size
    if bad:
        stats.append(f"{bad:,} not finite")
    return preview + " \n" + ", ".join(stats)      # the space: one-line views drop the newline
