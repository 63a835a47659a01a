"""A helper of the program that returns a tuple (`return h, c`), called where its items are
unpacked (`h, c = step(x, h, c)`): one helper per item (`step_0` returns h, `step_1` c), each a
function of one output with its own adjoint and tangent, called in turn on the arguments read
once, before any item is bound. A tuple carries no derivative in the IR (emit/lower.py's Packed);
this way each item does, as its helper's result. The helper's work is done once per item (a
recomputation, as a checkpointed sweep's): the price of each helper having one output."""
from __future__ import annotations

from dataclasses import replace

from ...parser import nodes


def split_tuple_helpers(defs: dict) -> dict:
    """`defs` (name -> FunctionDef) with each helper that returns a tuple and is unpacked where it
    is called given one helper per item, and those calls made calls of the item helpers."""
    widths = {n: tuple_width(d) for n, d in defs.items()}
    called = {n for d in defs.values() for n in unpacked_calls(d.body) if widths.get(n)}
    if not called:
        return defs
    taken = set(defs) | {n for d in defs.values() for n in names_in(d)}
    items = {}
    for name in called:
        items[name] = [fresh(f"{name}_{k}", taken) for k in range(widths[name])]
    out = dict(defs)
    for name, item_names in items.items():
        for k, item in enumerate(item_names):
            out[item] = replace(defs[name], name=item, body=returning(defs[name].body, k))
    return {n: replace(d, body=rewritten(d.body, items, taken)) for n, d in out.items()}


def fresh(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def returns(body):
    for s in body:
        if isinstance(s, nodes.Return):
            yield s
        for inner in ("body", "orelse"):
            if not isinstance(s, nodes.FunctionDef) and isinstance(getattr(s, inner, None), tuple):
                yield from returns(getattr(s, inner))


def tuple_width(d) -> int:
    """How many items every `return` of `d` gives as a tuple written out (0: not so)."""
    widths = {len(r.value.elts) if isinstance(r.value, nodes.TupleExpr) else 0 for r in returns(d.body)}
    return widths.pop() if len(widths) == 1 and 0 not in widths else 0


def unpacked_calls(body):
    """The names of the functions called where the call's items are unpacked: `a, b = h(x)`."""
    for s in walk(body):
        if isinstance(s, nodes.Assign) and s.unpack and is_plain_call(s.value):
            yield s.value.func.id


def is_plain_call(e) -> bool:
    return isinstance(e, nodes.Call) and isinstance(e.func, nodes.Name) and not e.func.module and not e.keywords


def walk(body):
    for s in body:
        yield s
        for inner in ("body", "orelse"):
            if not isinstance(s, nodes.FunctionDef) and isinstance(getattr(s, inner, None), tuple):
                yield from walk(getattr(s, inner))


def names_in(node) -> set:
    """Every name a node writes or reads (the item helpers and temporaries are named apart from them)."""
    found = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, nodes.Name):
            found.add(n.id)
        if isinstance(n, nodes.FunctionDef):
            found.update(n.params)
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__"):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "span")
    return found


def returning(body, k) -> tuple:
    """`body` with each `return a, b` made `return` of its k-th item."""
    out = []
    for s in body:
        if isinstance(s, nodes.Return) and isinstance(s.value, nodes.TupleExpr):
            s = replace(s, value=s.value.elts[k])
        elif isinstance(s, (nodes.If, nodes.While, nodes.For)):
            s = replace(s, body=returning(s.body, k), **({"orelse": returning(s.orelse, k)}
                                                           if isinstance(s, nodes.If) else {}))
        out.append(s)
    return tuple(out)


def rewritten(body, items, taken) -> tuple:
    """`a, b = h(x)` of a split h: `a = h_0(x)`, `b = h_1(x)`; where a target is read by the
    arguments (`h, c = step(x, h, c)`), the items are named apart first and bound after."""
    out = []
    for s in body:
        if isinstance(s, nodes.Assign) and s.unpack and is_plain_call(s.value) and s.value.func.id in items \
                and len(s.targets) == len(items[s.value.func.id]):
            out += split_call(s, items[s.value.func.id], taken)
            continue
        if isinstance(s, (nodes.If, nodes.While, nodes.For)):
            s = replace(s, body=rewritten(s.body, items, taken), **({"orelse": rewritten(s.orelse, items, taken)}
                                                                    if isinstance(s, nodes.If) else {}))
        out.append(s)
    return tuple(out)


def split_call(s, item_names, taken) -> list:
    call, span = s.value, s.span
    read = names_in(call.args)
    named_apart = any(t.id in read for t in s.targets)
    temps = [nodes.Name(fresh(f"_{t.id}_item", taken), t.span) if named_apart else t for t in s.targets]
    out = [nodes.Assign((temp,), replace(call, func=replace(call.func, id=item)), False, span)
           for temp, item in zip(temps, item_names)]
    if named_apart:
        out += [nodes.Assign((t,), temp, False, span) for t, temp in zip(s.targets, temps)]
    return out
