"""The emitted functions' lines, written from the IR (emit/lower.py) and the rules (through
emit/rule_text.py only): the primal, the adjoint (a forward sweep that pushes what the reverse
sweep pops: overwritten values, branch decisions, trip counts, ranges; then the reverse sweep,
loops kept as loops) and the tangent. Every statement carries its source line as a comment."""
from __future__ import annotations

import re

from .activity import walk_ir
from .lower import Call, Copy, Derivative, For, If, Jump, Plain, Prim, While, jumps
from .ir import AtPoint, Measured, names_in
from ...parser.errors import SourceError
from ...parser.nodes import Span
from .rule_text import NotEmitted, complex_text, rule_text
from ..core.backend import np

INDENT = "    "


def number(v) -> str:
    if v.__class__ is str:
        return v
    if v.__class__ in (bool, int):
        return repr(v) if v >= 0 else f"({v!r})"
    if v.__class__ is slice:                # an index: Python's text of it, its names as names
        return f"slice({', '.join('None' if b is None else number(b) for b in (v.start, v.stop, v.step))})"
    if v.__class__ is tuple and any(b.__class__ is str for b in v):     # several indices, names among them
        return "(" + "".join(f"{number(b)}, " for b in v) + ")"
    if v.__class__ is tuple or v is None:      # an index: numpy's newaxis among them
        return repr(v)
    if isinstance(v, (complex, np().complexfloating)):     # a complex constant (1+2j)
        return complex_text(v)
    v = float(v)
    text = repr(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)
    return text if v >= 0 else f"({text})"


TEMP = re.compile(r"\b_v[0-9]+\b")


def zeros_of(name: str) -> str:
    """The text of a zero of the shape of the value named `name` (an input no adjoint or tangent reached)."""
    return f"np.zeros(np.shape({name}))"


def wrapped(text: str) -> str:
    """`text` as an operand: in parentheses unless it is one name, number or call."""
    if re.fullmatch(r"[\w.]+", text) or enclosed(text):
        return text
    if re.fullmatch(r"[\w.]+\(.*\)", text):
        depth = 0
        for k, c in enumerate(text):
            depth += (c == "(") - (c == ")")
            if depth == 0 and c == ")":
                if k == len(text) - 1:
                    return text
                break
    return f"({text})"


def enclosed(text: str) -> bool:
    """`(a, b)`: the text is one parenthesized whole (a tuple's)."""
    if not text.startswith("("):
        return False
    depth = 0
    for k, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0:
            return k == len(text) - 1
    return False


def inlinable(fn, keep: set) -> set:
    """The temporaries written once and read once, right where they are made (not through a
    copy, which may come after other writes), that no sweep reads again: written into their one
    use, so the primal reads as the source does."""
    defs: dict = {}
    uses: dict = {}
    copied = set()

    def use(names):
        for n in names:
            uses[n] = uses.get(n, 0) + 1
    adjacent = set()            # `t = ...` and right after it `x = t`: written `x = ...`
    for s in walk_ir(fn.body):
        for body in blocks_of(s):
            for a, b in zip(body, body[1:]):
                if isinstance(a, (Prim, Plain)) and isinstance(b, Copy) and b.source == a.target:
                    adjacent.add(a.target)
    for body in [fn.body]:
        for a, b in zip(body, body[1:]):
            if isinstance(a, (Prim, Plain)) and isinstance(b, Copy) and b.source == a.target:
                adjacent.add(a.target)
    for s in walk_ir(fn.body):
        if isinstance(s, (Prim, Plain, Call, Copy)):
            defs[s.target] = defs.get(s.target, 0) + 1
        if isinstance(s, Prim):
            use(o for o in s.operands if o.__class__ is str)
        elif isinstance(s, Plain):
            use(TEMP.findall(s.text))
        elif isinstance(s, Call):
            use(a for a in s.args if a.__class__ is str)
        elif isinstance(s, Copy) and s.source.__class__ is str:
            use([s.source])
            copied.add(s.source)
        elif isinstance(s, (If, While)):
            use([s.test])
        elif isinstance(s, For):
            use(b for b in s.bounds if b.__class__ is str)
    return {t for t in fn.temps if defs.get(t) == 1 and uses.get(t) == 1 and (t not in copied or t in adjacent)
            and t not in keep}


def blocks_of(s) -> list:
    if isinstance(s, If):
        return [s.body, s.orelse]
    if isinstance(s, While):
        return [s.head, s.body]
    if isinstance(s, For):
        return [s.body]
    return []


class NeedsShapes(SourceError):
    """A line whose text is written at the shapes of its values, where no point gave them: emit
    writes the target again at the point's shapes where one was given (emit/module.py)."""


def adjoint_example(value):
    """The adjoint's example of a real float value where the point holds complex values: complex,
    as the sweep's adjoint of a real value that met complex ones is (x * 1j), so that a rule that
    reads its real part (imag's -1j real(g), abs's) writes that real part."""
    numpy = np()
    if value.__class__ is float or (isinstance(value, (numpy.ndarray, numpy.floating)) and value.dtype.kind == "f"):
        return numpy.asarray(value, dtype=complex) if numpy.ndim(value) else numpy.complex128(value)
    return value


def no_shapes(line, what) -> None:
    raise NeedsShapes("not emitted", f"emit: {what}, and no point was given", Span(line, 1, line, 1),
                      "give the point to emit at with --at NAME=VALUE,... (arrays of the shapes to emit for)")


class Writer:
    """The lines of one emitted function; `explain` adds the chain-rule step of each adjoint."""

    def __init__(self, explain: bool = False, inline: set = frozenset()):
        self.explain = explain
        self.count = 0
        self.inlinable = inline
        self.inline: dict = {}          # an inlined temporary -> its expression, once written
        self.raw: dict = {}             # the same, without parentheses

    def ref(self, v) -> str:
        """An operand's text: a name, a number, or an inlined temporary's expression."""
        return self.inline.get(v, v) if v.__class__ is str else number(v)

    def test(self, v) -> str:
        """A test's text: an inlined expression without the parentheses an operand needs."""
        return self.raw.get(v) or self.ref(v)

    def refs(self, values) -> str:
        """Arguments' texts: an inlined expression needs no parentheses between commas."""
        return ", ".join(self.test(v) for v in values)

    def fresh(self) -> str:
        self.count += 1
        return f"_t{self.count}"

    @staticmethod
    def tagged(text: str, line: int) -> str:
        return f"{text}  # line {line}"

    def operands(self, values) -> list:
        return [self.inline.get(v, v) if v.__class__ is str else v for v in values]

    def examples_of(self, s, which):
        """The values the rule's operands take at the point (emit/examples.py), or None where the
        target is emitted elementwise."""
        if self.examples is None:
            if not (s.prim.elementwise or s.prim.nondiff):
                no_shapes(s.line, f"the rules of {s.prim.name} are written at the shapes of their operands")
            return None
        met = self.examples.get(id(s))
        if met is None:
            raise SourceError("not emitted", "emit: this statement does not run at the point given with --at, so "
                              "the shapes of its values are unknown", Span(s.line, 1, s.line, 1),
                              "give --at a point at which every statement runs")
        target, *operands = met
        if which == "impl":
            return operands
        kind, i = which
        if kind == "vjp" and getattr(self.examples, "complex", False):
            return [adjoint_example(target), target if s.prim.needs_ans else None, *operands]
        return [target if kind == "vjp" else operands[i], target if s.prim.needs_ans or kind == "jvp" else None,
                *operands]

    examples = None         # id(statement) -> the values it met (emit/examples.py), where emitted at shapes
    sweeps: dict = {}       # a function -> the base name of its emitted sweeps where `<f>_fwd` is taken

    def sweep(self, function: str) -> str:
        """The base of a function's emitted sweeps' names (`<base>_fwd`, `_rev`, `_jvp`)."""
        return self.sweeps.get(function, function)

    def rule(self, s, which, operands, known=None) -> tuple:
        """rule_text for the statement `s`: what cannot be written names the source line."""
        examples = self.examples_of(s, which)
        try:
            return rule_text(s.prim, which, operands, self.fresh, known, examples)
        except NotEmitted as exc:
            raise SourceError("not emitted", f"emit: {exc}; it is not emitted yet", Span(s.line, 1, s.line, 1),
                              "differentiate it with `autodiff grad` instead") from None

    def primal_expr(self, s, out: list) -> str:
        if s.spelling:          # numpy's own function of that name (a reduction)
            return f"{s.spelling}({self.refs(s.operands)})"
        statements, expr = self.rule(s, "impl", self.operands(s.operands))
        out += [self.tagged(t, s.line) for t in statements]
        return expr

    def inlined(self, target, text, statements) -> bool:
        if target in self.inlinable and not statements:
            self.inline[target] = wrapped(text)
            self.raw[target] = text
            return True
        return False

    def primal(self, body: list, pad: str, helpers=None) -> list:
        """The primal statements; `helpers(s, pad)` writes a call's lines (the plain call by default)."""
        out: list = []
        for s in body:
            if isinstance(s, Prim):
                inner: list = []
                expr = self.primal_expr(s, inner)
                if not self.inlined(s.target, expr, inner):
                    out += [pad + t for t in inner] + [pad + self.tagged(f"{s.target} = {expr}", s.line)]
            elif isinstance(s, Copy):
                out.append(pad + self.tagged(f"{s.target} = {self.test(s.source)}", s.line))
            elif isinstance(s, AtPoint):        # a constant of the rules' text: no line
                continue
            elif isinstance(s, Measured):       # the library's number at the point's shapes
                if self.examples is None:
                    no_shapes(s.line, "a number the library derives from its operands' lengths is written at them")
                value, *values = self.examples[id(s)]
                text = s.number.text(s.sources, values) or number(value)
                if not self.inlined(s.target, text, []):
                    out.append(pad + self.tagged(f"{s.target} = {text}", s.line))
            elif isinstance(s, Plain):
                text = TEMP.sub(lambda m: self.inline.get(m[0], m[0]), s.text)
                if not self.inlined(s.target, text, []):
                    out.append(pad + self.tagged(f"{s.target} = {text}", s.line))
            elif isinstance(s, Jump):
                out.append(pad + self.tagged(s.kind, s.line))
            elif isinstance(s, Call):
                out += helpers(s, pad) if helpers else \
                    [pad + self.tagged(f"{s.target} = {s.function}({self.refs(s.args)})", s.line)]
            else:
                out += self.primal_control(s, pad, helpers)
        return out

    def primal_control(self, s, pad, helpers) -> list:
        inner = pad + INDENT
        if isinstance(s, If):
            return [pad + self.tagged(f"if {self.test(s.test)}:", s.line), *(self.primal(s.body, inner, helpers) or [inner + "pass"]),
                    pad + "else:", *(self.primal(s.orelse, inner, helpers) or [inner + "pass"])]
        if isinstance(s, While) and jumps(s.body):     # a continue must reach the test again
            return [pad + self.tagged("while True:", s.line), *self.primal(s.head, inner, helpers),
                    inner + self.tagged(f"if not {self.ref(s.test)}:", s.line), inner + INDENT + "break",
                    *self.primal(s.body, inner, helpers)]
        if isinstance(s, While):
            head = self.primal(s.head, pad, helpers)
            return [*head, pad + self.tagged(f"while {self.test(s.test)}:", s.line),
                    *self.primal(s.body, inner, helpers), *self.primal(s.head, inner, helpers)]
        return [pad + self.tagged(f"for {s.target} in range({self.refs(s.bounds)}):", s.line),
                *(self.primal(s.body, inner, helpers) or [inner + "pass"])]


def assigned(body) -> dict:
    """name -> how many times the IR assigns it (a loop's body counts twice: it runs again)."""
    counts: dict = {}

    def visit(stmts, weight):
        for s in stmts:
            if isinstance(s, (Prim, Copy, Plain, Call)):
                counts[s.target] = counts.get(s.target, 0) + weight
            elif isinstance(s, If):
                visit(s.body, weight)
                visit(s.orelse, weight)
            elif isinstance(s, While):
                visit(s.head, 2)
                visit(s.body, 2)
            elif isinstance(s, For):
                counts[s.target] = counts.get(s.target, 0) + 2
                visit(s.body, 2)
    visit(body, 1)
    return counts


def read_by_rules(body, active, useful, shaped=False) -> set:
    """The names the reverse sweep reads: the operands and results of the primitives it
    differentiates (a helper's reverse restores its own values); `shaped` (the rules written at
    the operands' shapes, which their text names: np.shape(x)): every operand of those too."""
    names = set()
    constants = {s.target for s in walk_ir(body) if isinstance(s, AtPoint)}     # no line reads them
    for s in walk_ir(body):
        if isinstance(s, Prim) and s.target in useful:
            names.update(rule_reads(s, useful))
            if shaped:
                names.update(n for o in s.operands for n in names_in(o))
        if isinstance(s, Derivative) and s.target in useful:       # its Hessian-vector product reads them
            names.update(a for a in s.call_args if a.__class__ is str)
    return names - constants


def rule_reads(s, useful) -> set:
    """What the VJP rules of the statement's live operands read, by the primitive's own facts
    (`reads`, `needs_args`, `needs_ans`): a value no rule reads is not saved for the sweep."""
    names = set()
    prim = s.prim
    for i, o in enumerate(s.operands):
        if o.__class__ is not str or o not in useful or prim.nondiff:
            continue
        if prim.reads is not None:
            positions, ans = prim.reads[i]
        else:
            positions, ans = (range(len(s.operands)) if prim.needs_args else ()), prim.needs_ans
        names.update(s.operands[j] for j in positions if s.operands[j].__class__ is str)
        if ans or prim.needs_ans:
            names.add(s.target)
        # the arguments after the differentiable ones are parameters every rule reads (an index)
        names.update(n for o in s.operands[len(prim.generic_vjps):] for n in names_in(o))
    return names


def differentiable(prim, position) -> bool:
    """Whether the entry's argument at `position` has a derivative: not a parameter after its
    arity (an index, an axis), whose value may come from an array (x[argmax(x)]) but carries none."""
    return prim.arity is None or position < prim.arity


def ends_in_jump(body) -> bool:
    """Every path through `body` ends in a break or continue."""
    if not body:
        return False
    last = body[-1]
    return isinstance(last, Jump) or (isinstance(last, If) and ends_in_jump(last.body) and ends_in_jump(last.orelse))
