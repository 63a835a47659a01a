"""np.fft's calls as the IR's applications of their table entries (core/rules/fft.py), with the
parameters core/library/fft.py resolves from numpy's arguments: `lengths` (numpy's n or s, one per
axis; by default the input's own lengths, irfft's 2(m-1)), `axes` (non-negative) and `norm`
("backward" where None). A parameter that depends on the input's shape is the text of numpy's
shape of it (a Plain statement, its value where the line runs); the rules are traced at the
point's values (emit/rule_text.py), where it is a constant, so the emitted text holds at the
point's shapes, which the emitted function checks at entry. fftfreq and rfftfreq are the
library's composite k * (1 / (n d)), k numpy's whole frequencies; rfft2 rfftn irfft2 irfftn hfft
ihfft the library's composites of the entries (numpy's own steps)."""
from __future__ import annotations

from ...parser import nodes
from ..core.library.fft import NORMS, SWAPPED
from .builtin_forms import literal_value
from .ir import AtPoint

ONE_AXIS = ("fft", "ifft", "rfft", "irfft")         # n, axis, norm
HERMITIAN = ("hfft", "ihfft")                       # n, axis, norm: composites of irfft, rfft and conj
MANY_AXES = {"fft2": 2, "ifft2": 2, "fftn": None, "ifftn": None}      # s, axes, norm; how many axes by default
REAL_AXES = {"rfft2": 2, "irfft2": 2, "rfftn": None, "irfftn": None}  # s, axes, norm: composites of the entries
SHIFTS = ("fftshift", "ifftshift")                  # axes
FREQUENCIES = ("fftfreq", "rfftfreq")               # n, d
FFT_FORMS = ONE_AXIS + HERMITIAN + tuple(MANY_AXES) + tuple(REAL_AXES) + SHIFTS + FREQUENCIES


def of_shape(node) -> bool:
    """`len(x)` or `x.shape[k]`: a length of a value's shape."""
    if isinstance(node, nodes.Call):
        return isinstance(node.func, nodes.Name) and node.func.id == "len" and len(node.args) == 1
    return isinstance(node, nodes.Subscript) and isinstance(node.value, nodes.Attribute) and node.value.attr == "shape"


class FftForms:
    """The np.fft calls lowered for one Lowering `low`; `refuse` as the Lowering's."""

    def __init__(self, low, refuse):
        self.low, self.refuse = low, refuse

    def call(self, name, args, e, target, rank):
        """`rank(x)`: the rank of x where the point gives it (a parameter's), else None."""
        line = e.span.line
        if name in FREQUENCIES:
            return self.frequencies(name, args, e, target)
        x = self.low.value(args[0], None)
        if x.__class__ is not str:
            self.refuse(f"`{name}` of a number", e.span, f"{name} takes an array of at least one dimension")
        given = [a if k == "n" and of_shape(a) else literal_value(a, self.refuse, f"the {k} of {name}")
                 for a, k in zip(args[1:], self.parameter_names(name))]
        given += [None] * (3 - len(given))
        if name in SHIFTS:
            axes = self.axes_text(x, given[0], None, e)
            return self.low.apply(name, [x, self.at_point(axes, line)], line, target)
        norm = self.norm(name, given[2], e)
        if name in ONE_AXIS or name in HERMITIAN:
            return self.one_axis(name, x, given, norm, e, target)
        if name in REAL_AXES:
            return self.real_axes(name, x, given, norm, e, target, rank)
        s = given[0] if given[0] is None or given[0].__class__ is tuple else (given[0],)
        count = MANY_AXES[name] if s is None else len(s)
        axes = self.axes_text(x, given[1], count, e)
        if s is None:
            lengths = self.at_point(f"tuple(np.take(np.shape({x}), {axes}))", line)
        else:
            lengths = tuple(self.whole(n, name, e) for n in s)
        return self.transform(name, x, lengths, axes, norm, line, target)

    def transform(self, name, x, lengths, axes, norm, line, target):
        """The entry `name` of x along `axes` (the text of a tuple) at `lengths` (a tuple, or the
        name of an AtPoint) and `norm`."""
        return self.low.apply(name, [x, lengths, self.at_point(axes, line), self.at_point(repr(norm), line)],
                              line, target)

    def one_axis(self, name, x, given, norm, e, target):
        """fft ifft rfft irfft along one axis; hfft (irfft of the conjugate) and ihfft (the
        conjugate of rfft) at the other direction's norm, as core/library/fft.py writes them."""
        line = e.span.line
        axis = -1 if given[1] is None else given[1]
        if axis.__class__ is not int:
            self.refuse(f"the axis {axis!r} of {name}", e.span, "write one axis as a whole number")
        length = f"np.shape({x})[{self.axis_text(x, axis)}]"
        half = name in ("irfft", "hfft")
        lengths = self.lengths(given[0], e, f"(2 * ({length} - 1),)" if half else f"({length},)")
        axes = f"({self.axis_text(x, axis)},)"
        if name == "hfft":
            return self.transform("irfft", self.low.apply("conj", [x], line, None), lengths, axes, SWAPPED[norm], line,
                                  target)
        if name == "ihfft":
            return self.low.apply("conj", [self.transform("rfft", x, lengths, axes, SWAPPED[norm], line, None)], line,
                                  target)
        return self.transform(name, x, lengths, axes, norm, line, target)

    def real_axes(self, name, x, given, norm, e, target, rank):
        """rfft2 rfftn (rfft along the last axis, then fft along the others, the last first) and
        irfft2 irfftn (ifft along all but the last, the first first, then irfft: its length by
        default 2(m-1)), as core/library/fft.py composes them."""
        line = e.span.line
        s = given[0] if given[0] is None or given[0].__class__ is tuple else (given[0],)
        axes = given[1] if given[1] is None or given[1].__class__ is tuple else (given[1],)
        count = len(axes) if axes is not None else len(s) if s is not None else REAL_AXES[name] or rank(x)
        if count is None:
            self.refuse(f"`{name}` over all the axes of a value whose rank is unknown here", e.span,
                        "give its axes: axes=(0, 1)")
        if not count or axes is not None and any(a.__class__ is not int for a in axes):
            self.refuse(f"the axes {axes!r} of {name}", e.span, "write the axes as whole numbers")
        texts = [self.axis_text(x, a) for a in axes] if axes is not None else \
            [f"np.ndim({x}) - {count - k}" for k in range(count)]
        inverse = name.startswith("i")
        if s is not None:
            lengths = [(self.whole(n, name, e),) for n in s]
        else:
            lengths = [self.at_point(f"(np.shape({x})[{t}],)", line) for t in texts[:-1]]
            last = f"np.shape({x})[{texts[-1]}]"
            lengths.append(self.at_point(f"(2 * ({last} - 1),)" if inverse else f"({last},)", line))
        steps = [(f"({t},)", n) for t, n in zip(texts, lengths)]
        if inverse:
            for axes_k, n in steps[:-1]:
                x = self.transform("ifft", x, n, axes_k, norm, line, None)
            return self.transform("irfft", x, steps[-1][1], steps[-1][0], norm, line, target)
        y = self.transform("rfft", x, steps[-1][1], steps[-1][0], norm, line, None if len(steps) > 1 else target)
        for k in range(len(steps) - 2, -1, -1):
            y = self.transform("fft", y, steps[k][1], steps[k][0], norm, line, target if k == 0 else None)
        return y

    def at_point(self, text, line):
        """A parameter of the entry as the text of its value where the line runs (an AtPoint)."""
        name = self.low.fresh()
        self.low.out.append(AtPoint(name, text, line))
        return name

    @staticmethod
    def parameter_names(name):
        if name in SHIFTS:
            return ("axes",)
        return ("n", "axis", "norm") if name in ONE_AXIS or name in HERMITIAN else ("s", "axes", "norm")

    def norm(self, name, norm, e):
        if norm is None:
            return "backward"
        if norm not in NORMS:
            self.refuse(f"the norm {norm!r} of {name}", e.span, "write norm='backward', 'ortho' or 'forward'")
        return norm

    def whole(self, n, name, e):
        if n.__class__ is not int or n < 1:
            self.refuse(f"the length {n!r} of {name}", e.span, "write n (or each of s) as a whole number of at least 1")
        return n

    def lengths(self, n, e, default):
        """numpy's n: a whole number written in the call, or a length of a value's shape (len(x),
        x.shape[k]), constants of the emitted text at the point's shapes (an input's value would
        not be one: refused), or the default, the input's own length there."""
        if n is None:
            return self.at_point(default, e.span.line)
        if of_shape(n):         # len(x), x.shape[k]: a length of the point's shapes, which the module checks
            return self.at_point(f"(int({self.low.value(n, None)}),)", e.span.line)
        return (self.whole(n, e.func.id, e),)

    @staticmethod
    def axis_text(x, axis) -> str:
        """One axis of x, not negative: numpy's rank of x less its count from the end."""
        return repr(axis) if axis >= 0 else f"np.ndim({x}) - {-axis}"

    def axes_text(self, x, axes, count, e) -> str:
        """The text of the axes (a tuple, each not negative): those given, else the last `count`
        of x (all of them where None)."""
        if axes is None:
            if count is None:
                return f"tuple(range(np.ndim({x})))"
            return "(" + "".join(f"np.ndim({x}) - {count - k}, " for k in range(count)) + ")"
        axes = axes if axes.__class__ is tuple else (axes,)
        if not axes or any(a.__class__ is not int for a in axes):
            self.refuse(f"the axes {axes!r}", e.span, "write the axes as whole numbers")
        return "(" + "".join(f"{self.axis_text(x, a)}, " for a in axes) + ")"

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
