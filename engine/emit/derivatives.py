"""The in-program derivatives in `autodiff emit` (issue 31 item 2): `grad(h)(x)`, `grad(h, k)(x)`,
`value_and_grad(h)(x)` (engine/lang/transforms.py runs them in the interpreter) are calls of an
emitted helper, `h_grad(x)`, that runs h's own emitted sweeps (`h_fwd`, then `h_rev` seeded with
1.0) on a stack of its own and returns the adjoint of h's parameter k. The helper is plain code,
so the primal, the adjoint and the tangent of the caller call it as they call any function.
A derivative of its value (a second order, where the output's derivative goes through it) is
forward over reverse: h's gradient in each parameter written as a program of the language (its
forward sweep, then its reverse seeded with 1.0: `h_grad_w`), whose tangent emit's own tangent
transformation writes (`h_grad_w_jvp`, the Hessian-vector product); the caller's adjoint and
tangent call it (emit/adjoint.py, emit/tangent.py). Where h's sweeps push (control flow, saved
values) or call helpers, or h has a custom rule, it is refused with its line (emit/activity.py)."""
from __future__ import annotations

import re

from ...parser.errors import SourceError
from ...parser.nodes import Span
from ..lang.target import load
from .activity import walk_ir
from .custom import no_forward_mode
from .lower import Call, Derivative, derivative_name
from .sweeps import INDENT, zeros_of


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
    todo = [h for h, _, _ in derivatives]
    seen: set = set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo += [s.function for s in walk_ir(functions[n].body) if isinstance(s, (Call, Derivative))]
        rule = rules.get(n)
        todo += [rule.tangent] if rule is not None and rule.tangent else []
    return [n for n in functions if n in seen and n in facts]


def derivative_helpers(functions: dict, derivatives: list, grads: dict, sweep, facts: dict) -> list:
    """`h_grad(params)`: h's sweeps on a stack of their own, seeded with 1.0: the adjoint of
    parameter k (zeros where h's value does not depend on it); value_and_grad's gives the pair.
    `h_vjp_along(params, v)`: the same seeded with v, and h's value; `h_jvp_along(params, v)`:
    h's tangent along v in its first parameter (the others' tangents 0)."""
    lines = []
    for h, kind, argnum in derivatives:
        params = functions[h].params
        p = params[argnum]
        signature = [*params, "_v"] if kind in ("jvp", "vjp") else params
        lines.append(f"def {derivative_name(h, kind, argnum)}({', '.join(signature)}):")
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


def gradient_program(name: str, params: list, sweeps: list, index: int) -> str | None:
    """h's gradient in its parameter number `index` of those h's reverse sweep returns, as a
    program of the language: h's emitted forward sweep, then its reverse sweep seeded with 1.0,
    stackless (None where h's sweeps push or call: control flow, helpers, saved values)."""
    start = next(k for k, line in enumerate(sweeps) if line.startswith("def ") and "_fwd(_stack" in line)
    forward_end = next(k for k in range(start, len(sweeps)) if sweeps[k].startswith(f"{INDENT}_stack.append("))
    rev = next(k for k in range(forward_end, len(sweeps)) if sweeps[k].startswith("def ") and "_rev(" in sweeps[k])
    rev_end = next(k for k in range(rev, len(sweeps)) if sweeps[k].startswith(f"{INDENT}return ("))
    body = [*sweeps[start + 1:forward_end], f"{INDENT}_out_b = 1.0", *sweeps[rev + 2:rev_end]]
    results = [r.strip() for r in sweeps[rev_end].strip()[len("return ("):-1].split(",") if r.strip()]
    text = "\n".join(body)
    if any(w in text for w in ("_stack", "_fwd(", "_rev(", "_jvp(", " = None", "operator.")):
        return None
    lines = ["import numpy as np", "", "", f"def {name}({', '.join(params)}):", *body,
             f"{INDENT}return {results[index]}", ""]
    return re.sub(r"(?<![\w.])_(?=[A-Za-z])", "u_", "\n".join(lines))


def second_order_function(text: str, name: str, wrt: list, emit) -> list | None:
    """The tangent of a gradient program (gradient_program) by emit's own tangent transformation:
    `name` (the gradient) and `name_jvp(params, *, d_q...)` (its value and the Hessian-vector
    product along d); None where the program is not one emit writes."""
    try:
        module = emit(load(text, fn=name, filename=f"<the gradient of {name}>"), wrt, "tangent")
    except SourceError:
        return None
    lines = module.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(f"def {name}("))
    # each statement's tag the source line of h it comes from, not the gradient program's line
    source_lines = {k + 1: m.group(1) for k, line in enumerate(text.splitlines()) if (m := TAG.search(line))}
    return [TAG.sub(lambda m: f"# line {source_lines[int(m.group(1))]}" if int(m.group(1)) in source_lines else "",
                    line).rstrip() for line in lines[start:]] + ["", ""]


TAG = re.compile(r"# line ([0-9]+)$")
