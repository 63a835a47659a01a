"""The adjoint of one function as lines: its forward sweep (the primal with pushes on `_stack`)
and its reverse sweep (pops, and each statement's adjoint from its primitive's VJP rules,
`h_b` the adjoint of `h`). Loops stay loops: a while loop pushes its trip count, a for loop its
range, an if its decision; a value the loop or a later statement overwrites is pushed before
and popped back after its adjoint."""
from __future__ import annotations

from .activity import refuse_live
from .liveness import Note, Store
from .lower import OUT, Call, Copy, Derivative, For, If, Jump, Plain, Prim, While, jumps
from .sweeps import INDENT, Writer, assigned, differentiable, ends_in_jump, number, read_by_rules, zeros_of


def adj(name: str) -> str:
    return f"{name}_b"


class Adjoint(Writer):
    """`grads[h]`: the active params of each helper whose adjoint its reverse returns, in order."""

    def __init__(self, fn, active, useful, grads: dict, explain=False, inline=frozenset(), shaped=False):
        super().__init__(explain, inline)
        self.fn, self.active, self.useful, self.grads = fn, active, useful, grads
        self.shaped = shaped        # written at shapes: the rules' text names their operands' shapes
        counts = assigned(fn.body)
        self.reassigned = {n for n, c in counts.items() if c > 1 or n in fn.params}
        self.pushed = self.reassigned & read_by_rules(fn.body, active, useful, shaped)
        self.fresh_defs = first_definitions(fn)
        self.loops = 0
        # adjoints first written by an assignment at the sweep's top level (no `= 0.0` first),
        # and those some accumulation reads before (they start at 0)
        self.started: set = {OUT}
        self.zeroed: set = set()

    def saves(self, s) -> bool:
        """Whether the statement pushes the value it overwrites (a value the reverse sweep reads
        again, unless no path has bound it yet)."""
        return isinstance(s, (Prim, Copy, Plain, Call)) and s.target in self.pushed and id(s) not in self.fresh_defs

    def live(self, name) -> bool:
        return name.__class__ is str and name in self.useful

    # ---- forward sweep ----
    def forward(self, body, pad, pending=()) -> list:
        """`pending`: the decisions of the ifs around this block inside its loop, innermost last:
        a break or continue pushes them (innermost first) before it leaves."""
        out: list = []
        for s in body:
            if self.saves(s):
                out.append(pad + self.tagged(f"_stack.append({s.target})", s.line))
            if isinstance(s, Call):
                out += self.forward_call(s, pad)
            elif isinstance(s, (Prim, Copy, Plain)):
                out += self.primal([s], pad)
            elif isinstance(s, Jump):
                out += [pad + self.tagged(f"_stack.append({d})", s.line) for d in reversed(pending)]
                out.append(pad + self.tagged(s.kind, s.line))
            elif isinstance(s, If):
                out += self.forward_if(s, pad, pending)
            else:
                out += self.forward_loop(s, pad)
        return out

    def taped(self, s) -> bool:
        """A call whose reverse sweep runs: its value is live and some parameter gets an adjoint
        (otherwise the plain function is called, and pushes nothing)."""
        return self.live(s.target) and bool(self.grads[s.function])

    def forward_call(self, s, pad) -> list:
        args = self.refs(s.args)
        if self.taped(s):
            return [pad + self.tagged(f"{s.target} = {self.sweep(s.function)}_fwd(_stack, {args})", s.line)]
        return [pad + self.tagged(f"{s.target} = {s.function}({args})", s.line)]

    def forward_if(self, s, pad, pending) -> list:
        """The decision is pushed last in its branch (the reverse sweep pops it first)."""
        inner = pad + INDENT
        out = [pad + self.tagged(f"if {self.test(s.test)}:", s.line)]
        for k, (branch, decision) in enumerate(((s.body, "True"), (s.orelse, "False"))):
            if k:
                out.append(pad + "else:")
            out += self.forward(branch, inner, (*pending, decision))
            if not ends_in_jump(branch):
                out.append(inner + self.tagged(f"_stack.append({decision})", s.line))
        return out

    def forward_loop(self, s, pad) -> list:
        inner = pad + INDENT
        self.loops += 1
        n = f"_n{self.loops}"
        if isinstance(s, While) and jumps(s.body):     # counted as it starts: a break ends it early
            return [pad + self.tagged(f"{n} = 0", s.line), pad + self.tagged("while True:", s.line),
                    *self.forward(s.head, inner), inner + self.tagged(f"if not {self.ref(s.test)}:", s.line),
                    inner + INDENT + "break", inner + f"{n} += 1", *self.forward(s.body, inner),
                    pad + self.tagged(f"_stack.append({n})", s.line)]
        if isinstance(s, While):
            return [pad + self.tagged(f"{n} = 0", s.line), *self.forward(s.head, pad),
                    pad + self.tagged(f"while {self.test(s.test)}:", s.line), *self.forward(s.body, inner),
                    inner + f"{n} += 1", *self.forward(s.head, inner), pad + self.tagged(f"_stack.append({n})", s.line)]
        bounds = f"range({self.refs(s.bounds)})"
        r = f"_r{self.loops}"
        if jumps(s.body):                               # the items it ran: a break ends it early
            return [pad + self.tagged(f"{r} = {bounds}", s.line), pad + self.tagged(f"{n} = 0", s.line),
                    pad + self.tagged(f"for {s.target} in {r}:", s.line), inner + f"{n} += 1",
                    *self.forward(s.body, inner), pad + self.tagged(f"_stack.append({r}[:{n}])", s.line)]
        return [pad + self.tagged(f"{r} = {bounds}", s.line), pad + self.tagged(f"for {s.target} in {r}:", s.line),
                *(self.forward(s.body, inner) or [inner + "pass"]), pad + self.tagged(f"_stack.append({r})", s.line)]

    # ---- reverse sweep ----
    def reverse(self, body, pad) -> list:
        out: list = []
        for s in reversed(body):
            if isinstance(s, Prim):
                out += self.reverse_prim(s, pad)
            elif isinstance(s, Copy):
                out += self.reverse_copy(s, pad)
            elif isinstance(s, Call):
                out += self.reverse_call(s, pad)
            elif isinstance(s, Derivative) and self.live(s.target):
                out += self.reverse_derivative(s, pad)
            elif isinstance(s, (Plain, Jump)):
                refuse_live(s, self.live)
            else:
                out += self.reverse_control(s, pad)
            if self.saves(s):
                out.append(pad + self.tagged(f"{s.target} = _stack.pop()", s.line))
        return out

    def accumulate(self, name, expr, line, pad, step) -> list:
        lines = [Note(pad + f"# {step}")] if self.explain else []
        if name not in self.started and name not in self.zeroed and pad == INDENT:
            self.started.add(name)          # its first contribution, outside any loop or branch
            return lines + [Store(pad, adj(name), expr, line)]
        if name not in self.started:
            self.zeroed.add(name)
        return lines + [Store(pad, adj(name), expr, line, accumulates=True)]

    def reset(self, s, pad) -> list:
        """The adjoint of a value the statement overwrote: the value before it has none yet."""
        if s.target not in self.reassigned:
            return []
        if pad == INDENT or s.target in self.started:
            self.started.add(s.target)
        else:
            self.zeroed.add(s.target)          # reset in a loop that may not run: it starts at 0
        return [Store(pad, adj(s.target), None, s.line)]

    def reverse_prim(self, s, pad) -> list:
        if not self.live(s.target) or s.prim.nondiff:
            return []
        out: list = []
        ans = s.target if s.prim.needs_ans else None
        known: dict = {}                # the temporaries this statement's adjoints share (CSE)
        for i, o in enumerate(s.operands):
            if not self.live(o) or not differentiable(s.prim, i):
                continue
            statements, expr = self.rule(s, ("vjp", i), [adj(s.target), ans, *s.operands], known)
            out += [pad + self.tagged(t, s.line) for t in statements]
            step = f"{s.target} = {s.prim.name}({', '.join(map(number, s.operands))}): " \
                   f"{adj(o)} += {adj(s.target)} * d{s.target}/d{o} (the {s.prim.name} rule's VJP)"
            out += self.accumulate(o, expr, s.line, pad, step)
        return out + self.reset(s, pad)

    def reverse_copy(self, s, pad) -> list:
        if not self.live(s.target):
            return []
        out = []
        if not s.cut and self.live(s.source):
            out = self.accumulate(s.source, adj(s.target), s.line, pad,
                                  f"{s.target} = {s.source}: {adj(s.source)} += {adj(s.target)}")
        return out + self.reset(s, pad)

    def reverse_call(self, s, pad) -> list:
        if not self.taped(s):
            return self.reset(s, pad) if self.live(s.target) else []
        grads = self.grads[s.function]
        names = [self.fresh() for _ in grads]
        callee_params = self.fn_params[s.function]
        out = [pad + self.tagged(f"{''.join(n + ', ' for n in names)}= {self.sweep(s.function)}_rev(_stack, {adj(s.target)})",
                                 s.line)] if names else []
        for name, param in zip(names, grads):
            arg = s.args[callee_params.index(param)]
            if self.live(arg):
                out += self.accumulate(arg, name, s.line, pad, f"{adj(arg)} += the adjoint {s.function} gives its {param}")
        return out + self.reset(s, pad)

    def reverse_derivative(self, s, pad) -> list:
        """g = grad(h, k)(args) with its adjoint g_b: each argument's adjoint gains the Hessian of h
        (its row for that argument, column k) times g_b: the gradient of h's tangent along g_b in
        parameter k (reverse over forward: `h_tan_vjp`, emit/derivatives.py)."""
        name, given = self.second_order(s, lambda: refuse_live(s, self.live))
        params = self.fn_params[s.function]
        k = params[s.argnum]
        args = dict(zip(params, s.call_args))
        live = [i for i, q in enumerate(params) if self.live(args[q])]
        if not live:
            return self.reset(s, pad)
        directions = [adj(s.target) if q == k else zeros_of(self.ref(args[q])) for q in given]
        product = self.fresh()
        out = [pad + self.tagged(f"{product} = {name}_vjp({self.refs(s.call_args)}, {', '.join(directions)})[1]",
                                 s.line)]
        for i in live:
            arg = args[params[i]]
            out += self.accumulate(arg, f"{product}[{i}]", s.line, pad, f"{adj(arg)} += d{s.target}/d{arg} * "
                                   f"{adj(s.target)} (the Hessian of {s.function}: the gradient of its tangent along "
                                   f"{adj(s.target)} in {params[i]})")
        return out + self.reset(s, pad)

    def reverse_control(self, s, pad) -> list:
        inner = pad + INDENT
        if isinstance(s, If):
            return [pad + self.tagged("if _stack.pop():", s.line), *(self.reverse(s.body, inner) or [inner + "pass"]),
                    pad + "else:", *(self.reverse(s.orelse, inner) or [inner + "pass"])]
        if isinstance(s, While):
            return [pad + self.tagged("for _ in range(_stack.pop()):", s.line),
                    *(self.reverse(s.body, inner) or [inner + "pass"])]
        return [pad + self.tagged(f"for {s.target} in reversed(_stack.pop()):", s.line),
                *(self.reverse(s.body, inner) or [inner + "pass"])]

    def initial(self, pad) -> list:
        """The adjoints an accumulation in a loop or branch reads first start at 0 (after the sweep is written)."""
        return [Store(pad, adj(n), None) for n in sorted(self.zeroed - {OUT}, key=self.order)]

    def result(self, name) -> str:
        """The adjoint of a parameter, or 0.0 where nothing reached it."""
        return adj(name) if name in self.started or name in self.zeroed else "0.0"

    def order(self, name):
        return (name not in self.fn.params, self.fn.params.index(name) if name in self.fn.params else 0, name)

    def undefined(self, pad) -> list:
        """Names a loop saves that may not be bound when it starts: bound to None first."""
        return [pad + f"{n} = None" for n in sorted(unbound_saves(self.fn, self.saves))]


def first_definitions(fn) -> set:
    """The ids of the statements that bind a name no path has bound before (outside loops):
    nothing to save there."""
    first: set = set()

    def visit(body, bound: set, in_loop: bool) -> set:
        for s in body:
            if isinstance(s, (Prim, Copy, Plain, Call)):
                if s.target not in bound and not in_loop:
                    first.add(id(s))
                bound = bound | {s.target}
            elif isinstance(s, If):
                bound = visit(s.body, bound, in_loop) | visit(s.orelse, bound, in_loop)
            elif isinstance(s, (While, For)):
                inner = list(s.head) + list(s.body) if isinstance(s, While) else list(s.body)
                bound = visit(inner, bound | ({s.target} if isinstance(s, For) else set()), True)
        return bound
    visit(fn.body, set(fn.params), False)
    return first


def binding(fn, on_statement=None) -> set:
    """The names every path through the function binds (its parameters first); `on_statement(s,
    bound, in_loop)` sees each statement with the names bound for sure before it (at a loop's
    start for a statement in the loop)."""
    def visit(body, bound: set, loop_bound) -> set:
        for s in body:
            if isinstance(s, (Prim, Copy, Plain, Call)):
                if on_statement:
                    on_statement(s, bound if loop_bound is None else loop_bound)
                bound = bound | {s.target}
            elif isinstance(s, If):
                bound = visit(s.body, bound, loop_bound) & visit(s.orelse, bound, loop_bound)
            elif isinstance(s, (While, For)):
                inner = list(s.head) + list(s.body) if isinstance(s, While) else list(s.body)
                start = bound | ({s.target} if isinstance(s, For) else set())
                visit(inner, start, start if loop_bound is None else loop_bound)
                if isinstance(s, While):
                    bound = visit(s.head, bound, loop_bound)
        return bound
    return visit(fn.body, set(fn.params), None)


def unbound_saves(fn, saves) -> set:
    names: set = set()

    def check(s, bound):
        if saves(s) and s.target not in bound:
            names.add(s.target)
    binding(fn, check)
    return names
