"""Closures for emit: a lambda bound to a name (`g = lambda t: t * a`) or a function defined in a
function is lifted to a helper of the module (`f_g(t, a)`), the names it reads from around it
made parameters and passed at each call (their values at the call, as a closure reads them), so
it gets its own adjoint and tangent like any helper. A closure used other than by a call (passed
on, returned) is refused by the lowering, which knows no such value."""
from __future__ import annotations

from ...parser import nodes
from ..lang.builtins import builtin_names
from ..lang.names import loaded_names


def lifted(defs: dict, global_names: set) -> tuple:
    """(the functions with their closures lifted out, {function: {closure: (helper, captured names)}})."""
    out, closures = dict(defs), {}
    builtins = builtin_names()
    for d in defs.values():
        found = {}
        body = []
        for s in d.body:
            closure = _closure(s)
            if closure is None:
                body.append(s)
                continue
            name, params, inner = closure
            known = set(params) | builtins | global_names | set(defs) | set(found) | {name}
            read = loaded_names(nodes.Module(tuple(inner), s.span))
            captured = [n for n in read if n not in known]
            for other in (n for n in read if n in found):       # a closure it calls: what that one reads too
                captured += [n for n in found[other][1] if n not in captured and n not in params]
            helper = f"{d.name}_{name}"
            found[name] = (helper, captured)
            out[helper] = nodes.FunctionDef(helper, tuple(params) + tuple(captured), tuple(inner), s.span)
        if found:
            out[d.name] = nodes.FunctionDef(d.name, d.params, tuple(body), d.span, d.defaults)
            closures[d.name] = found
            for helper, _ in found.values():
                closures[helper] = found          # a closure may call itself or its siblings
    return out, closures


def _closure(s):
    """(name, parameters, body) of a statement that defines a closure, or None."""
    if isinstance(s, nodes.FunctionDef) and not s.defaults:
        return s.name, s.params, list(s.body)
    if isinstance(s, nodes.Assign) and not s.unpack and isinstance(s.value, nodes.Lambda) and not s.value.defaults:
        return s.targets[0].id, s.value.params, [nodes.Return(s.value.body, s.value.span)]
    return None
