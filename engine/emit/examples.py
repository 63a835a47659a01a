"""The values each statement of the emitted functions meets at a point: the IR (emit/lower.py) run
on numpy, each primitive by its table entry's forward. They give the shapes each rule is traced
at (emit/rule_text.py) where the target is emitted for arrays; a statement that meets operands of
other shapes on another run (a loop's next step, another call of its helper) is refused with its
line, since its text holds at one shape."""
from __future__ import annotations

import ast

from ..core.backend import np
from ...parser.errors import SourceError
from ...parser.nodes import Span
from .ir import Measured
from .lower import OUT, Call, Copy, Derivative, For, If, Jump, Plain, Prim


class _Jump(Exception):
    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


def layout(value) -> tuple:
    """What of a value the traced text depends on: its shape, and whether it is a whole number."""
    numpy = np()
    whole = value.__class__ in (int, bool) or isinstance(value, (numpy.integer, numpy.bool_))
    return (numpy.shape(value), whole or getattr(getattr(value, "dtype", None), "kind", "f") in "biu")


class Examples:
    """`of[id(statement)]`: the values (its target, then its operands) a Prim statement met."""

    def __init__(self, functions: dict, rules: dict | None = None):
        self.functions = functions
        self.rules = rules or {}          # the custom rules (emit/custom.py): run where their function is
        self.of: dict = {}
        self.calls: dict = {}             # id(an in-program derivative) -> its arguments' values, first met
        self.globals: dict = {}

    def run_globals(self, statements) -> None:
        self.block(statements, self.globals)

    def call(self, name, args) -> object:
        fn = self.functions[name]
        env = dict(zip(fn.params, args))
        self.block(fn.body, env)
        rule = self.rules.get(name)
        if rule is not None:
            self.rule_examples(rule, args, env.get(OUT))
        return env.get(OUT)

    def rule_examples(self, rule, args, out) -> None:
        """A custom function's rule run where the function is, for the shapes of its values: fwd
        then bwd (seeded with ones), or the tangent function (at zero tangents)."""
        numpy = np()
        if rule.kind == "custom_vjp":
            _, residuals = self.call(rule.fwd, args)
            self.call(rule.bwd, [residuals, numpy.ones_like(out) * 1.0 if numpy.ndim(out) else 1.0])
        else:
            self.call(rule.tangent, [*args, *(numpy.zeros(numpy.shape(a)) if numpy.ndim(a) else 0.0 for a in args)])

    def derivative(self, s, env):
        """An in-program derivative's value, for the decisions that read it and the shapes: h run
        at the point (its statements' values), its derivative by central differences of it (near
        enough for a decision; the emitted code computes it exactly): grad's, value_and_grad's
        pair, jvp's and vjp's (h(x), the derivative along v)."""
        numpy = np()
        args = [self.value(env, a) for a in _call_args(s.text, env, self)]
        self.calls.setdefault(id(s), args)
        if s.kind in ("jvp", "vjp"):
            args, v = args[:-1], args[-1]
        value = self.call(s.function, args)

        def at(k, x):
            return self.call(s.function, [*args[:k], x, *args[k + 1:]])
        x = numpy.asarray(args[s.argnum], dtype=float)
        if s.kind == "hessian":
            return _second_differences(lambda v: float(numpy.sum(at(s.argnum, v if x.ndim else float(v)))), x)
        if s.kind == "jvp":
            step = 1e-6 * max(1.0, float(numpy.max(numpy.abs(x), initial=0.0)))
            return value, (numpy.asarray(at(0, x + step * v)) - numpy.asarray(at(0, x - step * v))) / (2 * step)
        weight = 1.0 if s.kind != "vjp" else v
        gradient = numpy.zeros(x.shape)
        for k in numpy.ndindex(x.shape):
            step = 1e-6 * max(1.0, abs(float(x[k])))
            moved = []
            for sign in (1.0, -1.0):
                there = x.copy()
                there[k] += sign * step
                moved.append(float(numpy.sum(numpy.asarray(at(s.argnum, there if x.ndim else float(there))) * weight)))
            gradient[k] = (moved[0] - moved[1]) / (2 * step)
        gradient = gradient if x.ndim else float(gradient)
        return (value, gradient) if s.kind in ("value_and_grad", "vjp") else gradient

    def value(self, env, v):
        if v.__class__ is slice:        # a slice whose bounds are names: their values
            return slice(*[None if b is None else self.value(env, b) for b in (v.start, v.stop, v.step)])
        if v.__class__ is tuple:        # several indices (x[a, b]), names among them: their values
            return tuple(self.value(env, b) for b in v)
        if v.__class__ is complex:      # a complex constant, a numpy complex number as the run's are
            return np().complex128(v)
        if v.__class__ is not str:
            return v
        if v in env:
            return env[v]
        if v in self.globals:
            return self.globals[v]
        if v.startswith("np."):
            return getattr(np(), v[3:])
        raise SourceError("not emitted", f"emit: `{v}` is read before it is bound", None)

    def block(self, body, env) -> None:
        for s in body:
            self.statement(s, env)

    def statement(self, s, env) -> None:
        try:
            self.run(s, env)
        except (IndexError, ValueError, TypeError, ArithmeticError) as exc:    # numpy's word on the values
            raise SourceError("not emitted", f"emit: this line fails at the point given ({exc}), so the shapes "
                              "of its values are unknown", Span(s.line, 1, s.line, 1),
                              "give --at a point at which the program runs") from None

    def run(self, s, env) -> None:
        if isinstance(s, Prim):
            operands = [self.value(env, o) for o in s.operands]
            with np().errstate(all="ignore"):
                env[s.target] = s.prim.impl(*operands)
            self.met(s, [env[s.target], *operands])
        elif isinstance(s, Copy):        # a whole number is written as one (sweeps.number): an index
            v = self.value(env, s.source)
            env[s.target] = int(v) if v.__class__ is float and v.is_integer() and abs(v) < 2 ** 53 else v
        elif isinstance(s, Derivative):
            env[s.target] = self.derivative(s, env)
        elif isinstance(s, Measured):
            values = [self.value(env, n) for n in s.sources]
            env[s.target] = s.number(values)
            self.met(s, [env[s.target], *values])
        elif isinstance(s, Plain):
            value = Text(self, env).run(s.text)
            env[s.target] = np().complex128(value) if value.__class__ is complex else value
        elif isinstance(s, Call):
            env[s.target] = self.call(s.function, [self.value(env, a) for a in s.args])
        elif isinstance(s, Jump):
            raise _Jump(s.kind)
        elif isinstance(s, If):
            self.block(s.body if self.value(env, s.test) else s.orelse, env)
        else:
            self.loop(s, env)

    def loop(self, s, env) -> None:
        if isinstance(s, For):
            steps = range(*[int(self.value(env, b)) for b in s.bounds])
        while True:
            if isinstance(s, For):
                step = next(iter(steps), None)
                if step is None:
                    return
                steps = steps[1:]
                env[s.target] = step
            else:
                self.block(s.head, env)
                if not self.value(env, s.test):
                    return
            try:
                self.block(s.body, env)
            except _Jump as jump:
                if jump.kind == "break":
                    return

    def met(self, s, values) -> None:
        before = self.of.setdefault(id(s), values)
        if before is not values and [layout(v)[0] for v in before] != [layout(v)[0] for v in values]:
            shapes = " and ".join(str(layout(v)[0]) for v in (before[0], values[0]))
            raise SourceError("not emitted", f"emit: the value made here has the shapes {shapes} on two runs of "
                              "it: a statement whose shapes change is not emitted yet", Span(s.line, 1, s.line, 1),
                              "keep each value one shape (emit writes each statement for one shape)")


def _second_differences(f, x):
    """The Hessian of f at x by central second differences (near enough for a decision and the
    shapes: the emitted code computes it exactly), of shape x.shape + x.shape."""
    numpy = np()
    n = x.size
    hessian = numpy.zeros((n, n))
    steps = [1e-4 * max(1.0, abs(float(v))) for v in x.reshape(-1)]
    for j in range(n):
        for k in range(n):
            total = 0.0
            for sj, sk, sign in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
                there = x.reshape(-1).copy()
                there[j] += sj * steps[j]
                there[k] += sk * steps[k]
                total += sign * f(there.reshape(x.shape))
            hessian[j, k] = total / (4 * steps[j] * steps[k])
    return hessian.reshape(x.shape + x.shape) if x.ndim else float(hessian[0, 0])


def _call_args(text, env, examples) -> list:
    """The arguments of a call's text (the IR's own: names and numbers)."""
    call = ast.parse(text, mode="eval").body
    return [a.id if isinstance(a, ast.Name) else Text(examples, env).node(a) for a in call.args]


# the Python builtins the IR's texts call
BUILTINS = {"len": len, "range": range, "int": int, "min": min, "max": max, "tuple": tuple}


class Text:
    """A Plain statement's text (a truth, len, numpy's function of a builtin, an array constant)
    evaluated on the values: the IR's own text, never the user's."""

    def __init__(self, examples, env):
        self.examples, self.env = examples, env

    def run(self, text):
        return self.node(ast.parse(text, mode="eval").body)

    def node(self, n):
        numpy = np()
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return BUILTINS[n.id] if n.id in BUILTINS else self.examples.value(self.env, n.id)
        if isinstance(n, ast.Attribute):
            return getattr(numpy if isinstance(n.value, ast.Name) and n.value.id == "np" else self.node(n.value), n.attr)
        if isinstance(n, ast.BoolOp):
            values = [self.node(v) for v in n.values]
            out = values[0]
            for v in values[1:]:
                out = (out and v) if isinstance(n.op, ast.And) else (out or v)
            return out
        if isinstance(n, ast.UnaryOp):
            operand = self.node(n.operand)
            return (not operand) if isinstance(n.op, ast.Not) else -operand
        if isinstance(n, (ast.List, ast.Tuple)):
            items = [self.node(e) for e in n.elts]
            return items if isinstance(n, ast.List) else tuple(items)
        if isinstance(n, ast.Call):
            return self.node(n.func)(*[self.node(a) for a in n.args], **{k.arg: self.node(k.value) for k in n.keywords})
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
            left, right = self.node(n.left), self.node(n.right)
            if isinstance(n.op, ast.Mult):          # np.fft's irfft: 2 * (m - 1)
                return left * right
            return left + right if isinstance(n.op, ast.Add) else left - right
        if isinstance(n, ast.Slice):
            return slice(*[None if b is None else self.node(b) for b in (n.lower, n.upper, n.step)])
        if isinstance(n, ast.Subscript):
            return self.node(n.value)[self.node(n.slice)]
        raise SourceError("not emitted", f"emit: the text {ast.unparse(n)!r} has no value here", None)
