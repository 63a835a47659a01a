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


def named_derivatives(defs: dict, makers) -> dict:
    """A derivative of a derivative (`grad(grad(h))(x)`, `grad(grad(h, 1), 1)`, `jvp(grad(h), x, v)`)
    as a derivative of a function of the program that returns the inner one's value: `def
    grad_h(x): return grad(h)(x)`, defined beside h (a closure where h is one, so it reads what h
    reads), and the outer taken of it, `grad(grad_h)`; emit writes that as any derivative through
    grad(h) (the adjoint of h's tangent program); a derivative of a lambda as one of a closure
    named for it. `makers`: the names of the derivative builtins that take a function (grad,
    value_and_grad, hessian, jvp, vjp)."""
    out = dict(defs)
    taken = {n.id for d in defs.values() for n in _walk(d) if isinstance(n, nodes.Name)} | set(defs)
    for name, d in defs.items():
        made: list = []
        body = []
        for s in d.body:
            count = len(made)
            here = not isinstance(s, nodes.FunctionDef)        # a lambda of a closure reads the closure's names
            mapped = _mapped(s, lambda x: _named(x, d.body, out, made, taken, makers, here))
            body += [fn for base, fn in made[count:] if base is None] + [mapped]   # a lambda named just before
        if not made:
            continue
        for base, fn in made:           # each beside its h: a closure of this function, or one of the program's
            if base is None:
                continue
            at = next((k for k, s in enumerate(body) if (_closure(s) or ("",))[0] == base), None)
            if at is None:
                out[fn.name] = fn
            else:
                body.insert(at + 1, fn)
        out[name] = nodes.FunctionDef(d.name, d.params, tuple(body), d.span, d.defaults)
    return out


def _named(x, body, top, made, taken, makers, lambdas=True):
    """`x` with a derivative builtin applied to grad(h, k) taken as applied to a function returning
    grad(h, k)'s value (made and listed in `made`), where h's parameters are known; applied to a
    lambda (`grad(lambda t: t * a)`, where `lambdas`), to a closure of the lambda's parameters and
    body, defined just before the statement (listed with the base None)."""
    if not (isinstance(x, nodes.Call) and isinstance(x.func, nodes.Name) and x.func.id in makers and x.args):
        return x
    inner = x.args[0]
    if isinstance(inner, nodes.Lambda) and lambdas and not inner.defaults:
        helper = _fresh("lambda", taken)
        made.append((None, nodes.FunctionDef(helper, tuple(inner.params), (nodes.Return(inner.body, inner.span),),
                                             inner.span)))
        return nodes.Call(x.func, (nodes.Name(helper, inner.span),) + tuple(x.args[1:]), x.span, x.keywords)
    if not (isinstance(inner, nodes.Call) and isinstance(inner.func, nodes.Name) and inner.func.id == "grad"
            and inner.args and isinstance(inner.args[0], nodes.Name) and not inner.keywords):
        return x
    h = inner.args[0].id
    local = [c for c in map(_closure, body) if c is not None and c[0] == h] + \
            [(fn.name, fn.params, None) for _, fn in made if fn.name == h]
    params = local[-1][1] if local else (top[h].params if h in top and not top[h].defaults else None)
    if params is None:
        return x
    helper = _fresh(f"grad_{h}", taken)
    call = nodes.Call(inner, tuple(nodes.Name(p, inner.span) for p in params), inner.span)
    made.append((h, nodes.FunctionDef(helper, tuple(params), (nodes.Return(call, inner.span),), inner.span)))
    return nodes.Call(x.func, (nodes.Name(helper, inner.span),) + tuple(x.args[1:]), x.span, x.keywords)


def _fresh(helper, taken) -> str:
    while helper in taken:
        helper += "_"
    taken.add(helper)
    return helper


def _mapped(x, f):
    """`x` rebuilt bottom-up with each node passed through f (a tuple: each item)."""
    if isinstance(x, tuple):
        return tuple(_mapped(v, f) for v in x)
    if isinstance(x, nodes.Node) and not isinstance(x, nodes.Span):
        return f(type(x)(*[_mapped(getattr(x, k), f) for k in x._fields]))
    return x


def _walk(x):
    if isinstance(x, tuple):
        for v in x:
            yield from _walk(v)
    elif isinstance(x, nodes.Node) and not isinstance(x, nodes.Span):
        yield x
        for k in x._fields:
            yield from _walk(getattr(x, k))
