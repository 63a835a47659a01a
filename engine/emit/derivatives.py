"""The in-program derivatives in `autodiff emit` (issue 31 item 2): `grad(h)(x)`, `grad(h, k)(x)`,
`value_and_grad(h)(x)` (engine/lang/transforms.py runs them in the interpreter) are calls of an
emitted helper, `h_grad(x)`, that runs h's own emitted sweeps (`h_fwd`, then `h_rev` seeded with
1.0) on a stack of its own and returns the adjoint of h's parameter k. The helper is plain code,
so the primal, the adjoint and the tangent of the caller call it as they call any function; a
derivative of its value (a second order, where the output's derivative goes through it) is
refused with its line (emit/activity.py)."""
from __future__ import annotations

from ...parser.errors import SourceError
from ...parser.nodes import Span
from .activity import walk_ir
from .lower import Call, Derivative, derivative_name
from .sweeps import INDENT


def derivatives_in(functions: dict, names) -> list:
    """The in-program derivatives the functions `names` take, each (function, kind, argnum) once."""
    found = []
    for n in names:
        for s in walk_ir(functions[n].body):
            if isinstance(s, Derivative) and (s.function, s.kind, s.argnum) not in found:
                found.append((s.function, s.kind, s.argnum))
    return found


def check_derivatives(functions: dict, target: str) -> None:
    """Each grad(h, k): k a parameter of h, h not the function being emitted (whose sweeps are
    its _vjp), its helper's name not one of the program's."""
    for fn in functions.values():
        for s in walk_ir(fn.body):
            if not isinstance(s, Derivative):
                continue
            params = functions[s.function].params
            span = s.span or Span(s.line, 1, s.line, 1)
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


def derivative_helpers(functions: dict, derivatives: list, grads: dict, sweep) -> list:
    """`h_grad(params)`: h's sweeps on a stack of their own, seeded with 1.0: the adjoint of
    parameter k (zeros where h's value does not depend on it); value_and_grad's gives the pair."""
    lines = []
    for h, kind, argnum in derivatives:
        params = functions[h].params
        args, p = ", ".join(params), params[argnum]
        lines.append(f"def {derivative_name(h, kind, argnum)}({args}):")
        if p in grads[h]:
            names = [f"_g{k}" for k in range(len(grads[h]))]
            lines += [f"{INDENT}_stack = []", f"{INDENT}_out = {sweep(h)}_fwd(_stack, {args})",
                      f"{INDENT}{''.join(n + ', ' for n in names)}= {sweep(h)}_rev(_stack, 1.0)"]
            value = names[grads[h].index(p)]
        else:
            lines.append(f"{INDENT}_out = {h}({args})")
            value = f"np.zeros(np.shape({p}))"
        lines += [f"{INDENT}return {'_out, ' if kind == 'value_and_grad' else ''}{value}", "", ""]
    return lines
