"""Which values get a derivative in the emitted code: a value is active where it depends on a
differentiated input (forward, over the whole program: a helper's parameter is active where
some call passes it an active value) and useful where the output depends on it (backward). Both
are flow-insensitive, so a loop or a branch needs no fixpoint of its own: only active and useful
values get an adjoint (no dead adjoints), only active ones a tangent."""
from __future__ import annotations

from .lower import refuse, OUT, Call, Copy, Derivative, For, If, Jump, Opaque, Packed, Plain, Prim, While


def walk_ir(body):
    for s in body:
        yield s
        if isinstance(s, If):
            yield from walk_ir(s.body)
            yield from walk_ir(s.orelse)
        elif isinstance(s, While):
            yield from walk_ir(s.head)
            yield from walk_ir(s.body)
        elif isinstance(s, For):
            yield from walk_ir(s.body)


def carries(s) -> bool:
    """Whether the statement's target can carry a derivative from its operands."""
    if isinstance(s, Opaque):
        return True
    if isinstance(s, Prim):
        return not s.prim.nondiff
    if isinstance(s, Copy):
        return not s.cut
    return isinstance(s, (Call, Opaque))


def operands(s) -> list:
    if isinstance(s, Prim):     # an index or an axis carries no derivative (sweeps.differentiable)
        return [o for i, o in enumerate(s.operands) if o.__class__ is str and (s.prim.arity is None or i < s.prim.arity)]
    if isinstance(s, Copy):
        return [s.source] if s.source.__class__ is str else []
    if isinstance(s, (Call, Opaque)):
        return [a for a in s.args if a.__class__ is str]
    return []


def refuse_live(s, live) -> None:
    """A builtin emit has no derivative text for, where the output's derivative needs it."""
    made = s.name if isinstance(s, Derivative) else getattr(s, "of", "")
    if made and live(s.target):
        refuse(f"the derivative of `{made}`'s value (a second-order derivative: the output's derivative goes "
               "through this in-program derivative)", s.span, "differentiate it with `autodiff grad`, or cut it "
               "with stop_gradient(...) where its own derivative is not wanted")
    if isinstance(s, Packed) and live(s.target):
        refuse("a derivative through a tuple (built or taken apart)", s.span,
               "return one value, or unpack the tuple where it is written: a, b = x, y")
    if isinstance(s, Opaque) and live(s.target):
        refuse(f"the derivative of the builtin `{s.name}`", s.span, "the elementwise builtins (sin, exp, log, "
               "tanh, ...), sum, mean, max, min, prod, norm, the methods, indexing, transpose, reshape, @, det, inv, "
               "solve, cholesky, trace, diagonal, diag, triu, tril, outer, eigvalsh, slogdet, einsum, tensordot, kron, pinv "
               "and where are emitted; the other linear algebra is not yet")


def analyse(functions: dict, target: str, wrt: list, rules: dict | None = None, through=False) -> dict:
    """name -> (active params, active names, useful names) for the target and each helper it
    reaches. `rules`: the program's custom rules by function (emit/custom.py): such a function's
    body is not differentiated (its rule is), a custom_jvp's tangent function is, in the tangents
    of its active arguments. An in-program derivative grad(h, k) makes h's parameter k active
    (`through`: and those its active arguments are passed to, as a call's: a tangent program's
    tangent of it reads h's tangent in each, emit/derivatives.py)."""
    rules = rules or {}
    params = {target: set(wrt)}

    def give(function, given) -> bool:
        old = params.get(function, set())
        if function in params and given <= old:
            return False
        params[function] = old | given
        return True
    changed = True
    while changed:
        changed = False
        active = {name: _active(functions[name], params[name], params, functions) for name in params}
        for name in [n for n in params if n not in rules]:
            for s in walk_ir(functions[name].body):
                if isinstance(s, Call):
                    callee = functions[s.function]
                    given = {p for p, a in zip(callee.params, s.args) if a.__class__ is str and a in active[name]}
                    changed |= give(s.function, given)
                    rule = rules.get(s.function)
                    if rule is not None and rule.tangent is not None:
                        changed |= give(rule.tangent, {rule.tangents[callee.params.index(p)] for p in given})
                elif isinstance(s, Derivative):
                    params_of = functions[s.function].params
                    given = {p for p, a in zip(params_of, s.call_args) if a.__class__ is str and a in active[name]}
                    changed |= give(s.function, {params_of[s.argnum]} | (given if through else set()))
    active = {name: _active(functions[name], params[name], params, functions) for name in params}
    return {name: (params[name], active[name], _useful(functions[name], active[name])) for name in params}


def _active(fn, active_params, params, functions) -> set:
    active = set(active_params)
    changed = True
    while changed:
        changed = False
        for s in walk_ir(fn.body):
            if (isinstance(s, (Plain, If, While, For, Jump)) and not isinstance(s, Opaque)) or \
                    s.target in active or not carries(s):
                continue
            if any(o in active for o in operands(s)):
                active.add(s.target)
                changed = True
    return active


def _useful(fn, active) -> set:
    useful = {OUT}
    changed = True
    while changed:
        changed = False
        for s in walk_ir(fn.body):
            if isinstance(s, (Prim, Copy, Call, Opaque)) and carries(s) and s.target in useful:
                for o in operands(s):
                    if o in active and o not in useful:
                        useful.add(o)
                        changed = True
    return useful & active
