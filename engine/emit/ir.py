"""The IR `autodiff emit` writes its sweeps from (emit/lower.py makes it): three-address
statements, each primitive applied once to names or numbers, control flow as written."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...parser.errors import SourceError


@dataclass
class Prim:
    target: str
    prim: object
    operands: list          # names, or numbers (an index: a whole number or a slice of them)
    line: int
    spelling: str | None = None     # numpy's function the primal is written as (a reduction), else the rule's text


@dataclass
class Copy:
    target: str
    source: object          # a name or a number
    line: int
    cut: bool = False       # stop_gradient: the value passes, the derivative not


@dataclass
class Plain:
    target: str
    text: str               # Python text over names (a truth: and/or/not, len)
    line: int


@dataclass
class AtPoint(Plain):
    """A parameter of a table entry that numpy's arguments give from its operand's shape (np.fft's
    lengths and axes, its norm: emit/library_calls.py): its value where the line runs at the point,
    which the entry's rules are traced at, is a constant of their text (emit/rule_text.py), so no
    line is written for it and no sweep reads it."""


@dataclass
class Measured(Plain):
    """A number a library composite derives from its operands' lengths (var's count: emit/
    library_calls.py): `number(values)` is the library's number at the values of `sources` where
    the line runs (emit/examples.py), written as numpy's text of their lengths where
    `number.text` finds one the library agrees with at other lengths, else as that number."""
    sources: list
    number: object


@dataclass
class MeasuredParameter(Measured, AtPoint):
    """A parameter of a table entry a library composite derives from its operands' lengths or a
    length given (np.fft's lengths): an AtPoint (its value a constant of the rules' text, no line)
    whose value where the line runs is the library's (Measured's `number`)."""


@dataclass
class Opaque(Plain):
    """A builtin call with no elementwise entry (sum, norm, max, len...): numpy's function of that
    name (its primal only); emit refuses it where its value needs a derivative."""
    args: list              # the names it reads
    name: str
    span: object


@dataclass
class Packed(Opaque):
    """A tuple built (`return y, (a, b)`, a rule's `None` cotangent) or taken apart (`a, b = r`):
    Python's own text; no derivative goes through it (emit refuses it where one must)."""
    of: str = ""                # the in-program derivative whose pair it takes apart (value_and_grad(h))


@dataclass
class Derivative(Opaque):
    """`grad(h)(x)`, `value_and_grad(h, k)(x)`: a call of h's emitted gradient helper
    (emit/derivatives.py), its text `h_grad(x)`; its own derivative (a second order) is the adjoint
    of h's tangent program (emit/derivatives.py), or refused where that is not written."""
    function: str = ""          # h (a closure's lifted helper)
    kind: str = "grad"          # or "value_and_grad", "hessian", "jvp", "vjp" (its last argument the direction)
    argnum: int = 0
    call_args: list = field(default_factory=list)     # h's arguments as called (names or numbers), in order


@dataclass
class If:
    test: str
    body: list
    orelse: list
    line: int


@dataclass
class While:
    head: list              # the statements that compute `test`, run before each test
    test: str
    body: list
    line: int


@dataclass
class For:
    target: str
    bounds: list            # range's arguments (names or numbers)
    body: list
    line: int


@dataclass
class Jump:
    kind: str               # "break" or "continue"
    line: int


def jumps(body) -> bool:
    """Whether a break or continue of this loop's is in `body` (not in a loop nested in it)."""
    for s in body:
        if isinstance(s, Jump) or (isinstance(s, If) and (jumps(s.body) or jumps(s.orelse))):
            return True
    return False


@dataclass
class Call:
    target: str
    function: str
    args: list
    line: int


@dataclass
class Function:
    name: str
    params: list
    body: list
    temps: set = field(default_factory=set)
    defaults: dict = field(default_factory=dict)     # a defaulted parameter -> its default (a number)
    point_shapes: bool = False      # a library composite's entries hold at the point's shapes only

    def signature(self) -> str:
        """Its parameters as Python's def writes them, the defaulted ones with their defaults."""
        return ", ".join(p + (f"={self.defaults[p]!r}" if p in self.defaults else "") for p in self.params)


def refuse(what: str, span, hint: str | None = None):
    raise SourceError("not emitted", f"emit: {what} is not emitted yet", span,
                      hint or "differentiate it with `autodiff grad` instead")


def literal(v) -> str:
    if v.__class__ is str:
        return v
    return repr(v)


def names_in(v) -> list:
    """The names an operand reads: itself, or the bounds of a slice (x[i:i + 2]) that are names."""
    if v.__class__ is str:
        return [v]
    if v.__class__ is slice:
        return [b for b in (v.start, v.stop, v.step) if b.__class__ is str]
    if v.__class__ is tuple:        # several indices (x[a, b])
        return [b for b in v if b.__class__ is str]
    return []
