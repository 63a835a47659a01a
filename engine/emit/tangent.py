"""The tangent of one function as lines: each statement's primal, then its tangent `d_h` from
its primitive's JVP rules (the rules' own text through emit/rule_text.py); control flow as
written, a helper called through its own `h_jvp`."""
from __future__ import annotations

from .activity import refuse_live
from .lower import Call, Copy, Derivative, If, Jump, Plain, Prim, While, jumps
from .custom import no_forward_mode
from .sweeps import INDENT, Writer, differentiable, zeros_of


def tan(name: str) -> str:
    return f"d_{name}"


class Tangent(Writer):
    prefix = "d_"           # a tangent's name: d_h for h (a tangent program's own, emit/derivatives.py)

    def tan(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def __init__(self, fn, active, useful, active_params: dict, functions: dict, explain=False, inline=frozenset()):
        super().__init__(explain, inline)
        self.fn, self.active, self.active_params, self.functions = fn, active, active_params, functions
        self.useful = useful

    def live(self, name) -> bool:
        """Active and reaching the output: only such values get a tangent."""
        return name.__class__ is str and name in self.active and name in self.useful

    def lines(self, body, pad) -> list:
        out: list = []
        for s in body:
            if isinstance(s, Prim):
                out += self.primal([s], pad) + self.prim(s, pad)
            elif isinstance(s, Copy):
                out += self.primal([s], pad)
                if self.live(s.target):
                    source = self.tan(s.source) if self.live(s.source) and not s.cut else "0.0"
                    out.append(pad + self.tagged(f"{self.tan(s.target)} = {source}", s.line))
            elif isinstance(s, Derivative) and self.live(s.target):
                out += self.primal([s], pad) + self.derivative(s, pad)
            elif isinstance(s, Plain):
                refuse_live(s, self.live)
                out += self.primal([s], pad)
            elif isinstance(s, Call):
                out += self.call(s, pad)
            elif isinstance(s, Jump):
                out.append(pad + self.tagged(s.kind, s.line))
            else:
                out += self.control(s, pad)
        return out

    def prim(self, s, pad) -> list:
        if not self.live(s.target):
            return []
        out, terms = [], []
        ans = s.target             # the JVP rules broadcast to the output's shape (bcast): ans is given
        known: dict = {}
        for i, o in enumerate(s.operands):
            if self.live(o) and not s.prim.nondiff and differentiable(s.prim, i):
                statements, expr = self.rule(s, ("jvp", i), [self.tan(o), ans, *self.operands(s.operands)], known)
                out += [pad + self.tagged(t, s.line) for t in statements]
                terms.append(expr)
        if self.explain:
            out.append(pad + f"# {s.target} = {s.prim.name}(...): {self.tan(s.target)} = the sum over its "
                             f"inputs of d{s.target}/d(input) * d_(input) (the {s.prim.name} rule's JVP)")
        return out + [pad + self.tagged(f"{self.tan(s.target)} = {' + '.join(terms) or '0.0'}", s.line)]

    rules: dict = {}        # the program's custom rules by function (emit/custom.py)

    def call(self, s, pad) -> list:
        params = self.functions[s.function].params
        given = self.active_params.get(s.function, set())
        live = [p for p, a in zip(params, s.args) if p in given and self.live(a)]
        args = self.refs(s.args)
        rule = self.rules.get(s.function)
        if live and self.live(s.target) and rule is not None and rule.kind == "custom_vjp":
            no_forward_mode(rule, s.line)
        if not live or not self.live(s.target):
            out = [pad + self.tagged(f"{s.target} = {s.function}({args})", s.line)]
            return out + ([pad + self.tagged(f"{self.tan(s.target)} = 0.0", s.line)] if self.live(s.target) else [])
        tangents = ", ".join(f"{self.tan(a)}" if p in live else self.zero_tangent(a) for p, a in zip(params, s.args)
                             if p in given)
        return [pad + self.tagged(f"{s.target}, {self.tan(s.target)} = {self.sweep(s.function)}_jvp({args}, {tangents})",
                                  s.line)]

    def zero_tangent(self, a) -> str:
        """The tangent of an argument no tangent reaches: 0.0, or zeros of its shape where the
        rules were written at shapes (a matmul's text takes no number)."""
        return zeros_of(self.ref(a)) if self.examples is not None and a.__class__ is str else "0.0"

    def derivative(self, s, pad) -> list:
        """g = grad(h, k)(args): its tangent the Hessian of h (its row k) times the arguments'
        tangents: the gradient in parameter k of h's tangent along them (`h_tan_vjp`,
        emit/derivatives.py)."""
        name, given = self.second_order(s, lambda: refuse_live(s, self.live))
        params = self.functions[s.function].params
        args = dict(zip(params, s.call_args))
        directions = ", ".join(self.tan(args[q]) if self.live(args[q]) else zeros_of(self.ref(args[q])) for q in given)
        return [pad + self.tagged(f"{self.tan(s.target)} = {name}_vjp({self.refs(s.call_args)}, {directions})[1]"
                                  f"[{s.argnum}]", s.line)]

    def control(self, s, pad) -> list:
        inner = pad + INDENT
        if isinstance(s, If):
            return [pad + self.tagged(f"if {self.test(s.test)}:", s.line), *(self.lines(s.body, inner) or [inner + "pass"]),
                    pad + "else:", *(self.lines(s.orelse, inner) or [inner + "pass"])]
        if isinstance(s, While) and jumps(s.body):
            return [pad + self.tagged("while True:", s.line), *self.lines(s.head, inner),
                    inner + self.tagged(f"if not {self.ref(s.test)}:", s.line), inner + INDENT + "break",
                    *self.lines(s.body, inner)]
        if isinstance(s, While):
            return [*self.lines(s.head, pad), pad + self.tagged(f"while {self.test(s.test)}:", s.line),
                    *self.lines(s.body, inner), *self.lines(s.head, inner)]
        return [pad + self.tagged(f"for {s.target} in range({self.refs(s.bounds)}):", s.line),
                *(self.lines(s.body, inner) or [inner + "pass"])]
