"""What a target reaches in its file: the functions it calls and the top-level names it reads,
transitively. Only those statements are compiled (in file order); the rest of the file is read
and never compiled, so a main block, a plotting helper or an import of another library is no
error unless the target reaches it (issue 29 item 1)."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError
from ...parser.modules import MODULE_ALIASES
from .custom_rules import RULE_METHODS
from .names import NOT_CHILDREN, assigned_names, loop_target_names
from .statement_forms import IMPORT_HINT


def reads(stmt) -> list:
    """(name, span) of each name a top-level statement reads from the top level, first use first.
    Python's scopes: a function's parameters and the names it assigns are its own, as are a
    lambda's parameters and a comprehension's loop names (its first iterable is read outside);
    module paths (`np.sum`) name builtins, not top-level names. Iterative: deep ASTs need no
    deep Python stack."""
    out, seen = [], set()
    stack = [(stmt, frozenset())]
    while stack:
        x, own = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend((item, own) for item in reversed(x))
            continue
        if isinstance(x, nodes.Name):
            if not x.module and x.id not in own and x.id not in seen:
                seen.add(x.id)
                out.append((x.id, x.span))
            continue
        stack.extend(reversed(_scoped_children(x, own)))
    return out


def _scoped_children(x, own) -> list:
    """(child, the names bound around it) for one node: new scopes for functions, lambdas and
    comprehensions; a statement's binding targets are not reads."""
    if isinstance(x, nodes.FunctionDef):
        inner = own | set(x.params) | set(assigned_names(x.body))
        return [(x.defaults, own), (x.body, inner)]
    if isinstance(x, nodes.Lambda):
        return [(x.defaults, own), (x.body, own | set(x.params))]
    if isinstance(x, nodes.ListComp):
        inner = own | {n for target, _, _ in x.clauses for n in loop_target_names(target)}
        first = x.clauses[0][1]
        rest = [part for i, (_, iterable, conds) in enumerate(x.clauses)
                for part in ((() if i == 0 else iterable), conds)]
        return [(first, own), (rest, inner), (x.elt, inner)]
    fields = getattr(x, "__dataclass_fields__", None) or ()
    skip = _BINDING_FIELDS.get(type(x), ())
    return [(getattr(x, f), own) for f in fields if f not in NOT_CHILDREN and f not in skip]


_BINDING_FIELDS = {nodes.Assign: ("targets",), nodes.For: ("target",)}


def reached_module(module: nodes.Module, unread, roots) -> nodes.Module:
    """The module of the statements that define `roots` and what they read, transitively, in
    file order. A reached name that a statement the language cannot read binds (`unread`, see
    parser/lenient.py) is an error naming where it is used and where it is defined."""
    body = module.body
    binds = [_binds(s) for s in body]
    needed = {name: None for name in roots}        # name -> where it is first read (None: a root)
    kept: set = set()
    grown = True
    while grown:
        grown = False
        for i, stmt in enumerate(body):
            if i in kept or not binds[i] & needed.keys():
                continue
            kept.add(i)
            grown = True
            if isinstance(stmt, nodes.Import) and stmt.module not in MODULE_ALIASES:
                name = next(n for n in needed if n in binds[i])
                raise unavailable_module(name, needed[name], stmt)
            for name, span in reads(stmt):
                needed.setdefault(name, span)
    for record in unread:
        hit = next((n for n in record.names if n in needed), None) if record.runs else None
        if hit is not None:
            raise unread_error(hit, needed[hit], record)
    return nodes.Module(tuple(s for i, s in enumerate(body) if i in kept), module.span)


def _binds(stmt) -> set:
    """The top-level names a statement binds; an import binds every name it is written with
    (`import numpy as onp` binds onp, `from numpy import sine` binds sine): reaching one compiles
    the import, whose errors then say what is wrong with it."""
    if isinstance(stmt, nodes.Import):
        return {bound for _, bound, _ in stmt.names} | ({stmt.alias or stmt.module.split(".")[0]})
    return set(assigned_names([stmt])) | _rule_of(stmt)


def _rule_of(stmt) -> set:
    """`f.defvjp(fwd, bwd)`, `g = f.defjvp(g)` (the decorator @f.defjvp): the statement completes
    f's definition with its rule (lang/custom_rules.py), so reaching f reaches it."""
    value = stmt.value if isinstance(stmt, (nodes.ExprStmt, nodes.Assign)) else None
    if isinstance(value, nodes.Call) and isinstance(value.func, nodes.Attribute) \
            and value.func.attr in RULE_METHODS and isinstance(value.func.value, nodes.Name):
        return {value.func.value.id}
    return set()


def unavailable_module(name: str, used, stmt) -> SourceError:
    """The target reaches a name an import of a module the language lacks binds."""
    where = f" (used at {used.line}:{used.column})" if used is not None else ""
    return SourceError("unsupported construct", f"`{name}`{where} is bound by the import at {stmt.span.line}:"
                       f"{stmt.span.column}: module `{stmt.module}` is not available",
                       used or stmt.module_span, IMPORT_HINT)


def unread_error(name: str, used, record) -> SourceError:
    """The target reaches `name`, which a statement the language cannot read binds."""
    err = record.error
    where = f" at {err.span.line}:{err.span.column}" if err.span is not None else ""
    defined = f"{record.what} at {record.span.line}:{record.span.column}"
    if used is None:
        message = f"`{name}` is {defined}, which is not in the language: {err.message}{where}"
        span = err.span
    else:
        message = (f"`{name}` (used at {used.line}:{used.column}) is {defined}, which is not in the "
                   f"language: {err.message}{where}")
        span = used
    hint = err.hint or ("only what the target reaches must be in the language: rewrite that statement "
                        "in the language, or stop using it from the target")
    return SourceError(err.kind, message, span, hint, source=err.source, filename=err.filename)
