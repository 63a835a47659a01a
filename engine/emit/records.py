"""A dict whose keys are string literals (`params = {"W1": W1, "b1": b1}`), read by its constant
keys (`params["W1"]`) and passed to the program's helpers (`forward(params, X)`): a fixed record,
lowered by scalar replacement before anything else sees it. Each key is its own name
(`params_W1`, bound to the key's value where the dict is made), a read of a key that name, and a
helper's dict parameter one parameter per key in the keys' written order (`forward(params_W1,
params_b1, X)`), so its adjoint has one adjoint per key. What a record cannot be is refused
(exit 2, at its line): keys that are not string literals, a key the dict does not have, an item
assigned (the keys or values change), and any other use of the dict (iteration, len, methods,
returning it), whose order and contents only a run knows."""
from __future__ import annotations

from dataclasses import replace

from ...parser import nodes
from ...parser.errors import SourceError
from .ir import refuse
from .tuple_helpers import fresh, is_plain_call, names_in


def flattened_records(defs: dict) -> dict:
    """`defs` (name -> FunctionDef) with each record replaced by one name per key."""
    made = {n: records_made(d) for n, d in defs.items()}
    if not any(made.values()):
        return defs
    keys = {n: dict(m) for n, m in made.items()}        # function -> record name -> its keys
    params = helper_record_params(defs, keys)
    out = {}
    for name, d in defs.items():
        taken = set(defs) | names_in(d)
        renames = {r: {k: fresh(f"{r}_{identifier(k)}", taken) for k in ks} for r, ks in keys[name].items()}
        for r in keys[name]:
            check_uses(d.body, r, keys[name][r], defs)
        new_params = []
        for p in d.params:
            new_params += list(renames[p].values()) if p in params.get(name, {}) else [p]
        if params.get(name) and d.defaults:
            refuse("a helper with a dict parameter and defaults", d.span, "give every argument at the call")
        body = rewrite(d.body, renames, params)
        out[name] = replace(d, params=tuple(new_params), body=body)
    return out


def identifier(key: str) -> str:
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
    return text if text and not text[0].isdigit() else "_" + text


def records_made(d) -> list:
    """(name, keys) of each `name = {"k": v, ...}` in d, every key a string literal, bound once."""
    found = []
    bound = {}
    for s in walk_all(d.body):
        if isinstance(s, (nodes.Assign, nodes.For)):
            targets = s.targets if isinstance(s, nodes.Assign) else names_of(s.target)
            for t in targets:
                bound[t.id] = bound.get(t.id, 0) + 1
        if isinstance(s, nodes.Assign) and isinstance(s.value, nodes.DictExpr) and not s.unpack:
            for k in s.value.keys:
                if not isinstance(k, nodes.Str):
                    refuse("a dict whose keys are not string literals", getattr(k, "span", s.span),
                           'write each key as a string literal: {"W1": W1, ...}')
            words = [k.value for k in s.value.keys]
            if len(set(words)) != len(words):
                refuse("a dict with a key written twice", s.value.span)
            found.append((s.targets[0].id, words))
    for name, _ in found:
        if bound[name] != 1:
            refuse(f"a dict `{name}` bound more than once (its keys may change)", d.span,
                   "bind each dict of parameters once, with all its keys")
    return found


def names_of(target) -> list:
    return [target] if isinstance(target, nodes.Name) else [t for t in target.elts if isinstance(t, nodes.Name)]


def helper_record_params(defs: dict, keys: dict) -> dict:
    """function -> {parameter: keys} for each helper parameter given a record at every call of it;
    `keys` gains them (a helper may pass its dict on: repeated until nothing changes)."""
    params = {}
    changed = True
    while changed:
        changed = False
        for caller, d in defs.items():
            for call in walk_calls(d.body):
                name = call.func.id
                if name not in defs:
                    continue
                for k, a in enumerate(call.args):
                    if not (isinstance(a, nodes.Name) and a.id in keys[caller]):
                        continue
                    if k >= len(defs[name].params):
                        refuse("a dict passed where its helper has no parameter", a.span)
                    p, given = defs[name].params[k], keys[caller][a.id]
                    if keys[name].get(p, given) != given:
                        refuse(f"a dict of other keys than `{p}` has at another call of `{name}`", a.span,
                               "pass dicts of the same keys to a helper")
                    if p not in keys[name]:
                        keys[name][p] = given
                        params.setdefault(name, {})[p] = given
                        changed = True
    for name, d in defs.items():
        for call in walk_calls(d.body):
            for k, a in enumerate(call.args):
                p = defs[call.func.id].params[k] if call.func.id in defs and k < len(defs[call.func.id].params) \
                    else None
                if call.func.id in params and p in params[call.func.id] and not (
                        isinstance(a, nodes.Name) and a.id in keys[name]):
                    refuse(f"a value other than a dict given for `{p}`, a dict parameter of `{call.func.id}`",
                           a.span, "pass a dict of constant string keys at every call")
    return params


def walk_all(body):
    for s in body:
        yield s
        for inner in ("body", "orelse"):
            if isinstance(getattr(s, inner, None), tuple):
                yield from walk_all(getattr(s, inner))


def walk_calls(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__"):
            if is_plain_call(n):
                yield n
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "span")


def check_uses(body, record, keys, defs) -> None:
    """Refuse each use of `record` other than `record["key"]` of its keys, its binding, and a
    positional argument of a call of the program's helpers."""
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(n)
            continue
        if not hasattr(n, "__dataclass_fields__"):
            continue
        if isinstance(n, nodes.Subscript) and isinstance(n.value, nodes.Name) and n.value.id == record:
            key = n.index[0] if len(n.index) == 1 else None
            if not isinstance(key, nodes.Str):
                refuse(f"a key of the dict `{record}` that is not a string literal", n.span,
                       f'read it by a constant key: {record}["{keys[0]}"]')
            if key.value not in keys:       # the user's mistake, in the language's words (lang/dicts.py)
                raise SourceError("key error", f"the dict has no key {key.value!r} (its keys: "
                                  f"{', '.join(map(repr, keys))})", n.span)
            continue
        if isinstance(n, nodes.SubscriptAssign) and isinstance(n.target.value, nodes.Name) \
                and n.target.value.id == record:
            refuse(f"an item of the dict `{record}` assigned (its keys or values change)", n.span,
                   "make a new dict with all its keys instead")
        if isinstance(n, nodes.Assign) and len(n.targets) == 1 and n.targets[0].id == record:
            if not isinstance(n.value, nodes.DictExpr):
                refuse(f"the dict `{record}` bound again (its keys may change)", n.span,
                       "bind each dict of parameters once, with all its keys")
            stack.append(n.value)
            continue
        if is_plain_call(n) and n.func.id in defs:
            stack.extend(a for a in n.args if not (isinstance(a, nodes.Name) and a.id == record))
            continue
        if isinstance(n, nodes.Name) and n.id == record:
            refuse(f"the dict `{record}` used other than by a constant key or as a helper's argument", n.span,
                   f'read its items by constant keys ({record}["{keys[0]}"]) or pass it to a helper')
        stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "span")


def rewrite(n, renames: dict, params: dict):
    """`n` with each record's binding, reads and helper arguments made its per-key names."""
    if isinstance(n, tuple):
        out = []
        for s in n:
            r = rewrite(s, renames, params)
            out += r if isinstance(r, list) else [r]
        return tuple(out)
    if not hasattr(n, "__dataclass_fields__") or isinstance(n, nodes.Span):
        return n
    if isinstance(n, nodes.Assign) and len(n.targets) == 1 and n.targets[0].id in renames \
            and isinstance(n.value, nodes.DictExpr):
        names = renames[n.targets[0].id]
        return [nodes.Assign((nodes.Name(names[k.value], k.span),), rewrite(v, renames, params), False, n.span)
                for k, v in zip(n.value.keys, n.value.values)]
    if isinstance(n, nodes.Subscript) and isinstance(n.value, nodes.Name) and n.value.id in renames:
        return nodes.Name(renames[n.value.id][n.index[0].value], n.span)
    if is_plain_call(n) and n.func.id in params:
        args = []
        for a in n.args:
            if isinstance(a, nodes.Name) and a.id in renames:
                args += [nodes.Name(x, a.span) for x in renames[a.id].values()]
            else:
                args.append(rewrite(a, renames, params))
        return replace(n, args=tuple(args))
    fields = {f: rewrite(getattr(n, f), renames, params) for f in n.__dataclass_fields__ if f != "span"}
    return replace(n, **fields)
