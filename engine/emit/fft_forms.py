"""np.fft's calls as the IR's applications of their table entries (core/rules/fft.py), with the
parameters core/library/fft.py resolves from numpy's arguments: `lengths` (numpy's n or s, one per
axis; by default the input's own lengths, irfft's 2(m-1)), `axes` (non-negative) and `norm`
("backward" where None). A parameter that depends on the input's shape is the text of numpy's
shape of it (a Plain statement, its value where the line runs); the rules are traced at the
point's values (emit/rule_text.py), where it is a constant, so the emitted text holds at the
point's shapes, which the emitted function checks at entry. fftfreq and rfftfreq are the
library's composite k * (1 / (n d)), k numpy's whole frequencies."""
from __future__ import annotations

from ...parser import nodes
from ..core.library.fft import NORMS
from .builtin_forms import literal_value
from .ir import AtPoint

ONE_AXIS = ("fft", "ifft", "rfft", "irfft")         # n, axis, norm
MANY_AXES = {"fft2": 2, "ifft2": 2, "fftn": None, "ifftn": None}      # s, axes, norm; how many axes by default
SHIFTS = ("fftshift", "ifftshift")                  # axes
FREQUENCIES = ("fftfreq", "rfftfreq")               # n, d
FFT_FORMS = ONE_AXIS + tuple(MANY_AXES) + SHIFTS + FREQUENCIES


def of_shape(node) -> bool:
    """`len(x)` or `x.shape[k]`: a length of a value's shape."""
    if isinstance(node, nodes.Call):
        return isinstance(node.func, nodes.Name) and node.func.id == "len" and len(node.args) == 1
    return isinstance(node, nodes.Subscript) and isinstance(node.value, nodes.Attribute) and node.value.attr == "shape"


class FftForms:
    """The np.fft calls lowered for one Lowering `low`; `refuse` as the Lowering's."""

    def __init__(self, low, refuse):
        self.low, self.refuse = low, refuse

    def call(self, name, args, e, target):
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
        if name in ONE_AXIS:
            axis = -1 if given[1] is None else given[1]
            if axis.__class__ is not int:
                self.refuse(f"the axis {axis!r} of {name}", e.span, "write one axis as a whole number")
            axes = f"({self.axis_text(x, axis)},)"
            length = f"np.shape({x})[{self.axis_text(x, axis)}]"
            lengths = self.lengths(given[0], e, f"({length},)" if name != "irfft" else f"(2 * ({length} - 1),)")
        else:
            s = given[0] if given[0] is None or given[0].__class__ is tuple else (given[0],)
            count = MANY_AXES[name] if s is None else len(s)
            axes = self.axes_text(x, given[1], count, e)
            if s is None:
                lengths = self.at_point(f"tuple(np.take(np.shape({x}), {axes}))", line)
            else:
                lengths = tuple(self.whole(n, name, e) for n in s)
        return self.low.apply(name, [x, lengths, self.at_point(axes, line), self.at_point(repr(norm), line)],
                              line, target)

    def at_point(self, text, line):
        """A parameter of the entry as the text of its value where the line runs (an AtPoint)."""
        name = self.low.fresh()
        self.low.out.append(AtPoint(name, text, line))
        return name

    @staticmethod
    def parameter_names(name):
        return ("axes",) if name in SHIFTS else ("n", "axis", "norm") if name in ONE_AXIS else ("s", "axes", "norm")

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
