"""A small plotter for the terminal: curves drawn with braille dots (2 × 4 per character cell),
one colour per curve, dotted vertical lines where kinks and branch switches are marked.

Without colour (piped, NO_COLOR) braille dots of different curves would look alike, so each curve
is drawn with its own character instead (f with •, f′ with +, f″ with x, ...), one per cell, and
the legend names each curve by its character."""
from __future__ import annotations

import math

from rich.text import Text

# bit of each dot in a braille cell, by (column, row) inside the cell
_BITS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08,
         (1, 1): 0x10, (1, 2): 0x20, (0, 3): 0x40, (1, 3): 0x80}
COLOURS = ["cyan", "magenta", "green", "yellow", "blue", "red", "white"]
GLYPHS = ["•", "+", "x", "o", "*", "#", "%"]      # one per curve when there is no colour
AXIS_GLYPH, MARK_GLYPH = "┈", "┆"


class Canvas:
    def __init__(self, cols: int, rows: int):
        self.cols, self.rows = cols, rows
        self.width, self.height = cols * 2, rows * 4
        self.bits = [[0] * cols for _ in range(rows)]
        self.style = [[None] * cols for _ in range(rows)]
        self.glyph = [[None] * cols for _ in range(rows)]   # a character that replaces the cell's dots

    def dot(self, px: int, py: int, style: str | None, glyph: str | None = None) -> None:
        """Set the dot at pixel (px, py), py counted from the top; with `glyph`, the whole cell
        shows that character instead of braille dots."""
        if 0 <= px < self.width and 0 <= py < self.height:
            r, c = py // 4, px // 2
            self.bits[r][c] |= _BITS[(px % 2, py % 4)]
            if style is not None:
                self.style[r][c] = style
            if glyph is not None:
                self.glyph[r][c] = glyph

    def line(self, x0, y0, x1, y1, style, glyph=None) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for s in range(steps + 1):
            self.dot(round(x0 + (x1 - x0) * s / steps), round(y0 + (y1 - y0) * s / steps), style, glyph)

    def rows_text(self) -> list:
        out = []
        for r in range(self.rows):
            t = Text()
            for c in range(self.cols):
                b = self.bits[r][c]
                shown = self.glyph[r][c] or (chr(0x2800 + b) if b else " ")
                t.append(shown, style=self.style[r][c] or "")
            out.append(t)
        return out


def _fmt(y: float) -> str:
    if y == 0:
        return "0"
    if abs(y) >= 1e5 or abs(y) < 1e-3:
        return f"{y:.3g}"
    return f"{y:.4g}"


def y_range(series):
    """The y range to draw: all finite values, unless a few huge ones (a pole) would flatten the
    rest (the full range is over 10 times the spread of the middle 80%); then that middle band
    widened by its own spread, and the caller says it clipped."""
    finite = sorted(y for s in series for y in s if math.isfinite(y))
    if not finite:
        return -1.0, 1.0, False
    lo, hi = finite[0], finite[-1]
    clipped = False
    if len(finite) >= 10:
        q10, q90 = finite[len(finite) // 10], finite[-1 - len(finite) // 10]
        spread = q90 - q10
        if spread > 0 and hi - lo > 10 * spread:
            lo, hi, clipped = max(lo, q10 - spread), min(hi, q90 + spread), True
    if hi == lo:
        lo, hi = lo - 1.0, hi + 1.0
    return lo, hi, clipped


def draw(xs, series, labels, marks, width=80, height=16, breaks=(), colour=True) -> tuple[list, bool]:
    """Text lines of the plot (y labels, canvas, x axis, legend) and whether y was clipped;
    `colour=False` draws each curve with its own character (GLYPHS) instead of its own colour."""
    label_w = 10
    cols = max(20, width - label_w - 2)
    canvas = Canvas(cols, height)
    lo, hi, clipped = y_range(series)
    x0, x1 = xs[0], xs[-1]
    span_x = (x1 - x0) or 1.0

    def px(x):
        return round((x - x0) / span_x * (canvas.width - 1))

    def py(y):
        return round((hi - y) / (hi - lo) * (canvas.height - 1))

    if lo < 0 < hi:                                           # the x axis, dotted
        for p in range(0, canvas.width, 4):
            canvas.dot(p, py(0.0), "dim", None if colour else AXIS_GLYPH)
    for m in marks:                                           # kinks and branch switches
        for p in range(0, canvas.height, 2):
            canvas.dot(px(m.x), p, "yellow", None if colour else MARK_GLYPH)
    # without colour, one character per cell: f is drawn last, so it stays on top where curves meet
    order = range(len(series)) if colour else reversed(range(len(series)))
    for k in order:
        ys = series[k]
        style = COLOURS[k % len(COLOURS)]
        glyph = None if colour else GLYPHS[k % len(GLYPHS)]
        prev = None
        for i, (x, y) in enumerate(zip(xs, ys)):
            if k and i in breaks:                             # derivatives jump at kinks
                prev = None
            if not math.isfinite(y) or (clipped and not lo <= y <= hi):
                prev = None
                continue
            cur = (px(x), py(y))
            if prev is None:
                canvas.dot(*cur, style, glyph)
            else:
                canvas.line(*prev, *cur, style, glyph)
            prev = cur
    lines = _framed(canvas, lo, hi, label_w)
    lines.extend(_x_axis_and_legend(x0, x1, cols, labels, marks, label_w, colour))
    return lines, clipped


def _framed(canvas, lo, hi, label_w) -> list:
    """The canvas rows with y labels at the top, middle and bottom."""
    lines = []
    rows = canvas.rows_text()
    for r, row in enumerate(rows):
        if r == 0:
            tag = _fmt(hi)
        elif r == len(rows) - 1:
            tag = _fmt(lo)
        elif r == len(rows) // 2:
            mid = (hi + lo) / 2
            tag = _fmt(0.0 if abs(mid) < 1e-3 * (hi - lo) else mid)   # a row is ~1/16 of the range
        else:
            tag = ""
        lines.append(Text(f"{tag:>{label_w}} ┤", style="dim") + row)
    return lines


def _x_axis_and_legend(x0, x1, cols, labels, marks, label_w, colour=True) -> list:
    axis = " " * label_w + " └" + "─" * cols
    lines = [Text(axis, style="dim")]
    left, right = _fmt(x0), _fmt(x1)
    lines.append(Text(" " * (label_w + 2) + left + " " * max(1, cols - len(left) - len(right)) + right,
                      style="dim"))
    legend = Text(" " * (label_w + 2))
    for k, label in enumerate(labels):
        key = "━━" if colour else GLYPHS[k % len(GLYPHS)] * 2
        legend.append(key + " ", style=COLOURS[k % len(COLOURS)])
        legend.append(label + "   ")
    if marks:
        legend.append("┆ ", style="yellow")
        legend.append("kink / branch switch")
    lines.append(legend)
    return lines
