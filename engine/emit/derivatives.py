"""The in-program derivatives in `autodiff emit` (issue 31 item 2): `grad(h)(x)`, `grad(h, k)(x)`,
`value_and_grad(h)(x)` (engine/lang/transforms.py runs them in the interpreter) are calls of an
emitted helper, `h_grad(x)`, that runs h's own emitted sweeps (`h_fwd`, then `h_rev` seeded with
1.0) on a stack of its own and returns the adjoint of h's parameter k; `hessian(h)(x)` is
`h_hessian(x)`, a Hessian-vector product per element of x. The helpers are plain code, so the
primal, the adjoint and the tangent of the caller call them as they call any function.
A derivative of such a value (a second order, where the output's derivative goes through it) is
reverse over forward: h's tangent written as a program of the language from the IR
(tangent_program: `h_tan(params, d_params)`, h's loops, branches, helper calls and recursion as
written), whose adjoint emit's own adjoint transformation writes (`h_tan_vjp`: its gradient in
h's parameters is the Hessian of h times d; the loops keep theirs, the stacks holding the
tangents as values, the decisions none); the caller's adjoint and tangent call it (emit/adjoint.py,
emit/tangent.py). A grad(g) inside h (a third order) is the same one level down. Refused with
its line: a custom rule's h, another derivative (hessian, jvp, vjp) inside h, a Hessian's
derivative."""
from __future__ import annotations

import re

from ...parser.errors import SourceError
from ...parser.nodes import Span
from ..lang.target import load
from .activity import walk_ir
from .custom import no_forward_mode, reached
from .rule_text import with_scipy_import
from .lower import OUT, Call, Derivative, derivative_name
from .sweeps import INDENT, Writer, zeros_of
from .tangent import Tangent


def derivatives_in(functions: dict, names) -> list:
    """The in-program derivatives the functions `names` take, each (function, kind, argnum) once."""
    found = []
    for n in names:
        for s in walk_ir(functions[n].body):
            if isinstance(s, Derivative) and (s.function, s.kind, s.argnum) not in found:
                found.append((s.function, s.kind, s.argnum))
    return found


def check_derivatives(functions: dict, target: str, rules: dict) -> None:
    """Each grad(h, k): k a parameter of h, h not the function being emitted (whose sweeps are
    its _vjp), its helper's name not one of the program's; jvp(h, ...) not of a custom_vjp h."""
    for fn in functions.values():
        for s in walk_ir(fn.body):
            if not isinstance(s, Derivative):
                continue
            params = functions[s.function].params
            span = s.span or Span(s.line, 1, s.line, 1)
            rule = rules.get(s.function)
            if s.kind == "jvp" and rule is not None and rule.kind == "custom_vjp":
                no_forward_mode(rule, s.line)
            if s.argnum >= len(params):
                raise SourceError("wrong arguments", f"{s.name}: argnum {s.argnum} is not the position of one of the "
                                  f"{len(params)} arguments of `{s.function}`", span)
            if s.function == target:
                raise SourceError("not emitted", f"emit: {s.name}, a derivative of the function being emitted inside "
                                  "itself, is not emitted yet", span, "differentiate it with `autodiff grad` instead")
            if derivative_name(s.function, s.kind, s.argnum) in functions:
                raise SourceError("not emitted", f"emit: {s.name} would be written as "
                                  f"`{derivative_name(s.function, s.kind, s.argnum)}`, a function of the program",
                                  span, "rename that function")


def inner_functions(functions: dict, facts: dict, derivatives: list, rules: dict) -> list:
    """The functions whose sweeps the derivative helpers run: each h and what it calls (its
    custom rules' tangent functions too), in the program's order."""
    return [n for n in reached(functions, [h for h, _, _ in derivatives], rules, parts=("tangent",)) if n in facts]


def derivative_helpers(functions: dict, derivatives: list, grads: dict, sweep, facts: dict, hessian) -> list:
    """`h_grad(params)`: h's sweeps on a stack of their own, seeded with 1.0: the adjoint of
    parameter k (zeros where h's value does not depend on it); value_and_grad's gives the pair.
    `h_vjp_along(params, v)`: the same seeded with v, and h's value; `h_jvp_along(params, v)`:
    h's tangent along v in its first parameter (the others' tangents 0). `h_hessian(params)`:
    the Hessian in parameter k, a row (Hessian-vector product) per element of it: `hessian(key)`
    gives (h's tangent program's name, the parameters it takes tangents of, emit/module.py)."""
    lines = []
    for h, kind, argnum in derivatives:
        params = functions[h].params
        p = params[argnum]
        signature = [*params, "_v"] if kind in ("jvp", "vjp") else params
        lines.append(f"def {derivative_name(h, kind, argnum)}({', '.join(signature)}):")
        if kind == "hessian":
            name, given = hessian((h, kind, argnum))
            directions = ", ".join(f"np.reshape(_e, np.shape({p}))" if q == p else zeros_of(q) for q in given)
            lines += [f"{INDENT}_rows = [{name}_vjp({', '.join(params)}, {directions})[1][{argnum}] "
                      f"for _e in np.eye(np.size({p}))]",
                      f"{INDENT}return np.reshape(_rows, np.shape({p}) + np.shape({p}))", "", ""]
            continue
        if kind == "jvp":
            given = [q for q in params if q in facts[h][0]]
            tangents = ", ".join("_v" if q == p else "0.0" for q in given)
            lines += [f"{INDENT}return {sweep(h)}_jvp({', '.join(params)}, {tangents})", "", ""]
            continue
        lines += _adjoint_of(h, params, p, grads, sweep, "_v" if kind == "vjp" else "1.0")
        value = lines.pop()
        lines += [f"{INDENT}return {'_out, ' if kind in ('value_and_grad', 'vjp') else ''}{value}", "", ""]
    return lines


def _adjoint_of(h, params, p, grads, sweep, seed) -> list:
    """The lines that run h's sweeps seeded with `seed`, then the expression of p's adjoint."""
    args = ", ".join(params)
    if p not in grads[h]:
        return [f"{INDENT}_out = {h}({args})", zeros_of(p)]
    names = [f"_g{k}" for k in range(len(grads[h]))]
    return [f"{INDENT}_stack = []", f"{INDENT}_out = {sweep(h)}_fwd(_stack, {args})",
            f"{INDENT}{''.join(n + ', ' for n in names)}= {sweep(h)}_rev(_stack, {seed})", names[grads[h].index(p)]]


def value_name(h: str, f: str) -> str:
    """The primal of `f` in h's tangent program (emit/derivatives.py's second order)."""
    return f"{h}_tan_{f}_value"


def tangent_name(h: str, f: str, entry=True) -> str:
    """The tangent of `f` in h's tangent program: h's own `h_tan` (the entry; where h calls itself,
    `h_tan_h`, which the entry calls: emit writes the sweeps of the functions the target calls), a
    helper's `h_tan_g`."""
    return f"{h}_tan" if f == h and entry else f"{h}_tan_{f}"


class LanguagePrimal(Writer):
    """The primal of a function of h's tangent program: as emit writes it, an in-program
    derivative grad(g, k)(args) written as the language's `grad(h_tan_g_value, k)(args)`."""
    h = ""
    recursive = False

    def primal(self, body, pad, helpers=None) -> list:
        out: list = []
        for s in body:
            if isinstance(s, Derivative):
                out.append(pad + self.tagged(f"{s.target} = grad({value_name(self.h, s.function)}, {s.argnum})"
                                             f"({self.refs(s.call_args)})", s.line))
            else:
                out += super().primal([s], pad, helpers)
        return out


class TangentProgram(LanguagePrimal, Tangent):
    """One function's tangent as a function of the language (h's tangent program): its primal,
    then each value's tangent from its primitive's JVP rules, control flow as written; a helper
    g called as `h_tan_g_value(args)` for its value and `h_tan_g(args, tangents)` for its tangent;
    v = grad(g, k)(args)'s tangent the gradient of g's tangent in k, `grad(h_tan_g, k)(args, d)`
    (a third order: its own derivative emit writes as it writes any in-program gradient's)."""

    def __init__(self, h, fn, fact, active_params, functions, recursive, refusal):
        Tangent.__init__(self, fn, fact[1], fact[2], active_params, functions)
        self.h, self.recursive, self.refusal = h, recursive, refusal

    def derivative(self, s, pad) -> list:
        params = self.functions[s.function].params
        given = self.active_params.get(s.function, set())
        args = dict(zip(params, s.call_args))
        if s.kind != "grad" or any(self.live(a) and q not in given for q, a in args.items()):
            self.refusal(f"the derivative of `{s.name}` inside `{self.h}` (a third order) where it is other than "
                         f"grad(g)(x) of arguments g's gradient is taken in")
        tangents = [self.tan(args[q]) if self.live(args[q]) else "0.0" for q in params if q in given]
        call = f"grad({tangent_name(self.h, s.function)}, {s.argnum})({', '.join([self.refs(s.call_args), *tangents])})"
        return [pad + self.tagged(f"{self.tan(s.target)} = {call}", s.line)]

    def call(self, s, pad) -> list:
        params = self.functions[s.function].params
        given = self.active_params.get(s.function, set())
        args = self.refs(s.args)
        out = [pad + self.tagged(f"{s.target} = {value_name(self.h, s.function)}({args})", s.line)]
        if not self.live(s.target):
            return out
        tangents = [self.tan(a) if self.live(a) else "0.0" for p, a in zip(params, s.args) if p in given]
        if all(t == "0.0" for t in tangents):
            return out + [pad + self.tagged(f"{self.tan(s.target)} = 0.0", s.line)]
        call = f"{tangent_name(self.h, s.function, not self.recursive)}({', '.join([args, *tangents])})"
        return out + [pad + self.tagged(f"{self.tan(s.target)} = {call}", s.line)]


def tangent_program(functions: dict, h: str, facts: dict, shapes, refusal) -> tuple:
    """h's tangent as a program of the language (its text, the parameters whose tangents `h_tan`
    takes after h's, in order, and the prefix of the tangents' names, unused_prefix): for h and each function it calls, its primal and its tangent
    (TangentProgram). The caller's second order is this program's adjoint (reverse over forward:
    the gradient of <grad h, d> is H d), written by emit's own adjoint transformation, which
    keeps h's loops as loops (its stacks hold the tangents as values). `refusal(what, hint)`
    raises where h's tangent is not a program of the language: a custom rule's, an in-program
    derivative inside h (a third order)."""
    names = [n for n in functions if n in facts]
    active_params = {n: facts[n][0] for n in names}
    prefix = unused_prefix([functions[n] for n in names], "d")
    recursive = any(isinstance(s, Call) and s.function == h for n in names for s in walk_ir(functions[n].body))
    lines = ["import numpy as np", "", ""]
    for f in names:
        fn = functions[f]
        inner = next((s for s in walk_ir(fn.body) if isinstance(s, Derivative) and s.kind != "grad"), None)
        if inner is not None:
            refusal(f"a derivative through `{inner.name}` inside `{h}` (a third order)")
        plain = LanguagePrimal()
        plain.examples, plain.h = shapes, h
        call = (lambda s, pad: [pad + plain.tagged(f"{s.target} = {value_name(h, s.function)}("
                                                   f"{plain.refs(s.args)})", s.line)])
        lines += [f"def {value_name(h, f)}({', '.join(fn.params)}):", *plain.primal(fn.body, INDENT, call),
                  f"{INDENT}return {OUT}", "", ""]
        t = TangentProgram(h, fn, facts[f], active_params, functions, recursive, refusal)
        t.prefix = prefix
        t.examples = shapes
        body = t.lines(fn.body, INDENT)
        signature = ", ".join([*fn.params, *(t.tan(q) for q in fn.params if q in active_params[f])])
        lines += [f"def {tangent_name(h, f, not recursive)}({signature}):", *body,
                  f"{INDENT}return {t.tan(OUT) if t.live(OUT) else '0.0'}", "", ""]
        if f == h and recursive:
            lines += [f"def {tangent_name(h, h)}({signature}):", f"{INDENT}return {tangent_name(h, h, False)}({signature})",
                      "", ""]
    given = [q for q in functions[h].params if q in active_params[h]]
    temporary = unused_prefix([functions[n] for n in names], "u")      # `_v1` is no name of the language
    lines = with_scipy_import(lines)
    text = re.sub(r"(?<![\w.])_(?=[A-Za-z])", temporary, "\n".join(spelled_as_functions(line) for line in lines))
    return text, given, prefix


def unused_prefix(functions, letter) -> str:
    """A prefix of names no name of the functions has: `d_` for the tangents of a tangent program
    (h's tangent d_h), `u_` for its temporaries (`_v1` as u_v1), or where one has it (the tangent
    program of a tangent program: a third order), the first d2_, d3_, ... (u2_, ...) none has."""
    names = {n for fn in functions for n in fn.params} | \
        {s.target for fn in functions for s in walk_ir(fn.body) if hasattr(s, "target") and s.target.__class__ is str}
    prefix, n = f"{letter}_", 1
    while any(name.startswith(prefix) for name in names):
        n += 1
        prefix = f"{letter}{n}_"
    return prefix


REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}


def spelled_as_functions(line: str) -> str:
    """A rule's `np.add.reduce(x, axis=...)` as the language writes it, numpy's own function of
    the reduction (np.sum(x, axis=...)), the same where the axis is given (the ufunc's default
    axis is 0, the function's all: a line without `axis=` is left for the language to refuse)."""
    if "axis=" not in line:
        return line
    return re.sub(r"\bnp\.(add|multiply|maximum|minimum)\.reduce\(", lambda m: f"np.{REDUCTIONS[m[1]]}(", line)


def second_order_lines(text: str, h: str, wrt: list, emit, at) -> list:
    """The adjoint of h's tangent program (tangent_program) by emit's own adjoint transformation:
    `h_tan(params, d_params)` and `h_tan_vjp(params, d_params, cotangent=1.0)`, whose gradient
    in h's parameters is the Hessian of h times d; each statement tagged with the source line of
    h it comes from, not the tangent program's line. SourceError where emit does not write it."""
    module = emit(load(text, fn=tangent_name(h, h), filename=f"<the tangent of {h}>"), wrt, "adjoint", at=at)
    lines = module.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("def "))
    source_lines = {k + 1: m.group(1) for k, line in enumerate(text.splitlines()) if (m := TAG.search(line))}
    return [TAG.sub(lambda m: f"# line {source_lines[int(m.group(1))]}" if int(m.group(1)) in source_lines else "",
                    line).rstrip() for line in lines[start:]] + ["", ""]


TAG = re.compile(r"# line ([0-9]+)$")
