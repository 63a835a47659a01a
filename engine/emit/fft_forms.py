"""np.fft's fftfreq and rfftfreq as the IR's: the library's composite k * (1 / (n d)), k numpy's
whole frequencies (core/library/fft.py makes k an array of n's, which no table entry records: its
text is numpy's fftfreq made whole again). The transforms (fft ... irfftn, hfft, ihfft, fftshift,
ifftshift) are the library's own, recorded with numpy's arguments resolved as the library resolves
them (emit/library_calls.py)."""
from __future__ import annotations

from ...parser import nodes


def of_shape(node) -> bool:
    """`len(x)` or `x.shape[k]`: a length of a value's shape."""
    if isinstance(node, nodes.Call):
        return isinstance(node.func, nodes.Name) and node.func.id == "len" and len(node.args) == 1
    return isinstance(node, nodes.Subscript) and isinstance(node.value, nodes.Attribute) and node.value.attr == "shape"


class FftForms:
    """fftfreq and rfftfreq lowered for one Lowering `low`; `refuse` as the Lowering's."""

    def __init__(self, low, refuse):
        self.low, self.refuse = low, refuse

    def whole(self, n, name, e):
        if n.__class__ is not int or n < 1:
            self.refuse(f"the length {n!r} of {name}", e.span, "write n (or each of s) as a whole number of at least 1")
        return n

    def frequencies(self, name, args, e, target):
        """core/library/fft.py's fftfreq and rfftfreq: k * (1 / (n d)), k the whole frequencies
        (numpy's for n, made whole again: numpy's are k / n)."""
        line = e.span.line
        if not args or len(args) > 2:
            self.refuse(f"`{name}` with other than n and d", e.span, f"write {name}(n, d)")
        n = self.low.value(args[0], None)
        if n.__class__ is not str:
            n = self.whole(int(n) if float(n).is_integer() else n, name, e)
        d = self.low.value(args[1], None) if len(args) > 1 and args[1] is not None else 1.0
        k = self.low.plain(f"np.round(np.fft.{name}({n}) * {n})", None, line)
        count = float(n) if n.__class__ is not str else n
        step = self.low.apply("div", [1.0, self.low.apply("mul", [count, d], line, None)], line, None)
        return self.low.apply("mul", [k, step], line, target)
