"""The program's own derivative rules in `autodiff emit` (issue 30 item 2): a `custom_vjp` or
`custom_jvp` function (engine/lang/custom_rules.py) is written as one more primitive of the
emitted module, its rule the user's functions:
- custom_vjp f with fwd, bwd: the adjoint of `y = f(a, b)` runs fwd on the forward sweep (its
  residuals pushed with the arguments) and bwd(res, y_b) on the reverse sweep, one cotangent per
  argument (None: zero); its tangent is refused, as JAX refuses forward mode through it;
- custom_jvp f with its rule jvp(primals, tangents): the rule's tangent output is written as a
  function of the primals and tangents (`<rule>_tangent(x, t)`, the rule's unpackings gone and
  its `return out, tangent` returning the tangent). The tangent of a call is that function; the
  adjoint transposes its linear map as the interpreter does: the adjoint of the tangent function
  in its tangents (its own emitted reverse sweep, linear in t), seeded with y_b."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...parser import nodes
from ...parser.decorators import RULE_DECORATORS
from ...parser.errors import SourceError
from ...parser.nodes import Span
from ..lang.custom_rules import RULE_METHODS
from ..lang.names import loaded_names
from .activity import walk_ir
from .lower import Call, Derivative, refuse
from .sweeps import INDENT, zeros_of

HINT = "state the rule as JAX spells it: @jax.custom_vjp and f.defvjp(fwd, bwd), or @jax.custom_jvp and @f.defjvp"


@dataclass
class Rule:
    name: str                   # the function with the rule
    kind: str                   # custom_vjp or custom_jvp
    line: int
    fwd: str | None = None
    bwd: str | None = None
    jvp: str | None = None      # the user's rule of a custom_jvp
    tangent: str | None = None  # its tangent output as a function of (primals..., tangents...)
    tangents: list = field(default_factory=list)   # that function's tangent parameters, by argument


def rule_statement(stmt):
    """(function, what, the rule's names) of `f = custom_jvp(f)`, `f.defvjp(fwd, bwd)`, `g =
    f.defjvp(g)`, or None for a statement of another kind."""
    value = stmt.value if isinstance(stmt, (nodes.Assign, nodes.ExprStmt)) else None
    if not isinstance(value, nodes.Call):
        return None
    f = value.func
    names = [a.id if isinstance(a, nodes.Name) else None for a in value.args]
    if isinstance(f, nodes.Name) and f.id in RULE_DECORATORS and f.module in ("", "jax"):
        if len(names) != 1 or names[0] is None or not isinstance(stmt, nodes.Assign) \
                or stmt.targets[0].id != names[0]:
            refuse(f"{f.id}(...) other than as a decorator of a def", stmt.span, HINT)
        return names[0], f.id, []
    if isinstance(f, nodes.Attribute) and f.attr in RULE_METHODS:
        if not isinstance(f.value, nodes.Name) or None in names:
            refuse(f"{f.attr}(...) on anything but a function's name, with functions' names", stmt.span, HINT)
        return f.value.id, f.attr, names
    return None


def program_rules(body, defs: dict) -> tuple:
    """({function: Rule}, the statements that are not rules, the tangent functions derived from
    the custom_jvp rules, as FunctionDefs by name)."""
    rules: dict = {}
    rest = []
    for s in body:
        found = rule_statement(s)
        if found is None:
            rest.append(s)
            continue
        name, what, names = found
        if what in RULE_DECORATORS:
            rules[name] = Rule(name, what, s.span.line)
            continue
        rule = rules.get(name)
        kind = "custom_vjp" if what == "defvjp" else "custom_jvp"
        if rule is None or rule.kind != kind or len(names) != (2 if what == "defvjp" else 1) \
                or any(n not in defs for n in names):
            refuse(f"`{name}.{what}(...)` on what is not a {kind} function of the program, or with other than "
                   "its functions", s.span, HINT)
        if what == "defvjp":
            rule.fwd, rule.bwd = names
        else:
            rule.jvp = names[0]
    derived = {}
    for rule in rules.values():
        if rule.fwd is None and rule.jvp is None:
            refuse(f"`{rule.name}`, a {rule.kind} function with no rule", defs[rule.name].span, HINT)
        if rule.jvp is not None:
            fn = tangent_function(defs[rule.jvp], defs[rule.name], taken=set(defs) | set(derived))
            rule.tangent, rule.tangents = fn.name, list(fn.params[len(defs[rule.name].params):])
            derived[fn.name] = fn
    return rules, rest, derived


def tangent_function(rule, primal, taken: set):
    """The rule `jvp(primals, tangents)` as `<jvp>_tangent(x..., t...)`: its statements `x, =
    primals` and `t, = tangents` give the parameters, each `return out, tangent` returns the tangent."""
    how = f"begin the rule with `{', '.join(primal.params)}, = primals` and the same of tangents; " \
          "return (output, tangent output)"
    if len(rule.params) != 2:
        refuse(f"the custom_jvp rule `{rule.name}` with other than (primals, tangents) as its parameters",
               rule.span, how)
    unpacked = {}
    body = []
    for s in rule.body:
        if isinstance(s, nodes.Assign) and s.unpack and isinstance(s.value, nodes.Name) \
                and s.value.id in rule.params and len(s.targets) == len(primal.params):
            unpacked[s.value.id] = [t.id for t in s.targets]
        else:
            body.append(s)
    if len(unpacked) != 2 or rule.params[0] in loaded_names(nodes.Module(tuple(body), rule.span)) \
            or rule.params[1] in loaded_names(nodes.Module(tuple(body), rule.span)):
        refuse(f"the custom_jvp rule `{rule.name}` reading its primals or tangents other than by unpacking them",
               rule.span, how)
    name = f"{rule.name}_tangent"
    while name in taken:
        name += "_"
    params = tuple(unpacked[rule.params[0]]) + tuple(unpacked[rule.params[1]])
    return nodes.FunctionDef(name, params, tuple(_tangent_returns(body, rule, how)), rule.span)


def _tangent_returns(body, rule, how) -> list:
    out = []
    for s in body:
        if isinstance(s, nodes.Return):
            if not isinstance(s.value, nodes.TupleExpr) or len(s.value.elts) != 2:
                refuse(f"a return of the custom_jvp rule `{rule.name}` that is not a pair", s.span, how)
            s = nodes.Return(s.value.elts[1], s.span)
        elif isinstance(s, nodes.If):
            s = nodes.If(s.test, tuple(_tangent_returns(s.body, rule, how)),
                         tuple(_tangent_returns(s.orelse, rule, how)), s.span)
        out.append(s)
    return out


RULE_PARTS = ("fwd", "bwd", "tangent")


def rule_functions(rules: dict, names, parts=RULE_PARTS) -> set:
    """The functions the rules of `names` (the custom functions among them) call: fwd, bwd, the
    tangent function (those of `parts`)."""
    out = set()
    for n in names:
        rule = rules.get(n)
        if rule is not None:
            out |= {x for x in (getattr(rule, p) for p in parts) if x}
    return out


def reached(functions, names, rules, through_derivatives=True, parts=RULE_PARTS) -> list:
    """`names` and the functions they (and their rules' `parts`) call (and take in-program
    derivatives of), in the program's order."""
    todo, seen = list(names) + list(rule_functions(rules, names, parts)), set()
    kinds = (Call, Derivative) if through_derivatives else Call
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        called = [s.function for s in walk_ir(functions[n].body) if isinstance(s, kinds)]
        todo += called + list(rule_functions(rules, called, parts))
    return [n for n in functions if n in seen]


def _zero_or(value, param) -> str:
    return f"{zeros_of(param)} if {value} is None else {value}"


def adjoint_sweeps(rule, params, grads: dict, sweep) -> list:
    """`<f>_fwd(_stack, args)` and `<f>_rev(_stack, _out_b)` of a custom function, by its rule;
    `grads[f]`: the parameters whose cotangents the reverse returns."""
    b, args, line = sweep(rule.name), ", ".join(params), f"  # line {rule.line}"
    saved = f"({args},)"
    if rule.kind == "custom_vjp":
        forward = [f"{INDENT}_out, _res = {rule.fwd}({args}){line}", f"{INDENT}_stack.append((_res, {args})){line}"]
        reverse = [f"{INDENT}_res, {args} = _stack.pop(){line}", f"{INDENT}_ct = {rule.bwd}(_res, _out_b){line}"]
        results = [_zero_or(f"_ct[{params.index(p)}]", p) for p in grads[rule.name]]
    else:
        t = rule.tangent
        taped = grads.get(t)
        zeros = ", ".join(zeros_of(p) for p in params)
        forward = [f"{INDENT}_out = {rule.name}({args}){line}"]
        forward += [f"{INDENT}{sweep(t)}_fwd(_stack, {args}, {zeros}){line}"] if taped else []
        forward += [f"{INDENT}_stack.append({saved}){line}"]
        reverse = [f"{INDENT}{saved} = _stack.pop(){line}"]
        cts = [f"_ct_{k}" for k in range(len(taped or ()))]
        reverse += [f"{INDENT}{''.join(c + ', ' for c in cts)}= {sweep(t)}_rev(_stack, _out_b){line}"] if taped else []
        by_tangent = dict(zip(taped or (), cts))
        results = [by_tangent.get(rule.tangents[params.index(p)], zeros_of(p))
                   for p in grads[rule.name]]
    return [f"def {b}_fwd(_stack, {args}):", *forward, f"{INDENT}return _out", "", "",
            f"def {b}_rev(_stack, _out_b):", *reverse, f"{INDENT}return ({''.join(r + ', ' for r in results)})", "", ""]


def tangent_sweep(rule, params, given, sweep) -> list:
    """`<f>_jvp(args, tangents of the given)` of a custom_jvp function: its rule's tangent output."""
    tangents = [f"d_{p}" if p in given else zeros_of(p) for p in params]
    signature = ", ".join([*params, *(f"d_{p}" for p in params if p in given)])
    return [f"def {sweep(rule.name)}_jvp({signature}):",
            f"{INDENT}return {rule.name}({', '.join(params)}), {rule.tangent}({', '.join([*params, *tangents])})"
            f"  # line {rule.line}", "", ""]


def no_forward_mode(rule, line):
    """A custom_vjp function's tangent: an error, as JAX's forward mode through it is."""
    raise SourceError("not differentiable", f"emit: `{rule.name}` is a custom_vjp function: it has a reverse-mode "
                      "rule only, so its tangent (forward mode) cannot be emitted (as in JAX)", Span(line, 1, line, 1),
                      "emit the adjoint only: --mode adjoint (with --validate too), or define it with custom_jvp")
