"""Compiling the statement and expression forms numpy code is written in: imports (declarations
that name builtins), item assignment as a value, lambda, list comprehensions, None and `...`."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError
from ...parser.modules import MODULE_ALIASES, SUBMODULE_PARENTS, SUBMODULES, is_submodule
from ..core import ops
from ..core.backend import is_array, xp
from ..core.notes import NOTES
from ..core.sequences import as_array, numpy_reading
from ..core.tape import Dual, Var
from .callables import RETURN, Builtin, Frame, UserFunction
from .errors import runtime_error, unknown_name
from .spellings import refuse_math_namesake
from . import dicts
from .expressions import dict_key
from .loop_forms import unpacking
from .names import Scope, loop_target_names
from .operator_closures import BINARY_OPS
from .values import as_int, describe, dtype, iterate, shape_of, truth

IMPORT_HINT = ("the modules are numpy (as np), math, scipy.special, scipy.linalg and jax (jax.numpy as jnp): "
               "nothing is imported, their names are builtins")


def _update_operator(op):
    return ops.pow if op == "**" else BINARY_OPS[op]


class StatementFormsCompiler:
    """The Interpreter's imports, item assignments, lambdas and comprehensions (a mixin)."""

    # ---- imports ----
    def s_Import(self, s, scope):
        if s.module not in MODULE_ALIASES:
            raise SourceError("unsupported construct", f"module `{s.module}` is not available", s.module_span,
                              IMPORT_HINT)
        allowed = MODULE_ALIASES[s.module]
        parent, _, submodule = s.module.rpartition(".")
        if s.alias is not None and s.alias not in allowed and not is_submodule(submodule, parent):
            spelled = " or ".join(f"`import {s.module} as {a}`" for a in allowed)
            raise SourceError("unsupported construct", f"`{s.module}` may only be bound as "
                              f"{', '.join(allowed)}", s.span, f"write {spelled}")
        bindings = []
        for name, bound, span in s.names:
            if is_submodule(name, s.module):
                continue                    # `from numpy import linalg`: the parser reads linalg.NAME
            roots = MODULE_ALIASES.get(f"{s.module}.{name}")
            if roots:                       # `from jax import numpy as jnp`: the parser reads jnp.NAME
                if bound not in roots:
                    raise SourceError("unsupported construct", f"`{s.module}.{name}` may only be bound as "
                                      f"{', '.join(roots)}", span, f"write `from {s.module} import {name} as "
                                      f"{roots[0]}`")
                continue
            refuse_math_namesake(s.module, name, span)
            builtin = self.builtins.get(name)
            if builtin is None:
                if name in SUBMODULES:
                    parent = SUBMODULE_PARENTS[name][0]
                    raise SourceError("unsupported construct", f"`{name}` is a module of {parent}, not of "
                                      f"{s.module}", span, f"write `from {parent} import {name}`")
                error = unknown_name(name, span, list(self.builtins))
                error.message = f"`{name}` is not among the language's builtins (from {s.module})"
                raise error
            if bound != name:
                bindings.append((bound, builtin))

        def run(frame):
            for bound_name, builtin_value in bindings:
                frame.vars[bound_name] = builtin_value
        return run

    # ---- x[i] = v, x[i] += v ----
    def s_SubscriptAssign(self, s, scope):
        target = s.target
        name = target.value.id
        load = self.expr(target.value, scope)
        index = self.index_closure(target.index, scope)
        value = self.expr(s.value, scope)
        combine = _update_operator(s.op) if s.op is not None else None
        span = s.span
        label = f"`{s.op}=`" if s.op else "item assignment"

        parts = self.index_parts(target.index, scope)

        how = f"`{name}[...] {s.op or ''}= ...`"
        writes, globals_frame, line = self.writes, self.globals, span.line


        def run(frame):
            x = load(frame)
            if x.__class__ is dict:                 # d[k] = v: d becomes an updated copy
                k = dict_key(parts, frame, span)
                v = value(frame)
                writes.written(frame, name, x, None, line, how, globals_frame)
                frame.vars[name] = dicts.updated(x, k, v if combine is None else combine(dicts.item(x, k, span), v),
                                                 span)
                return
            where = None
            if x.__class__ is list:                 # lst[i] = v: lst becomes an updated copy
                where = index(frame)
                if where.__class__ is int and -len(x) <= where < len(x):
                    v = value(frame)
                    writes.written(frame, name, x, None, line, how, globals_frame)
                    copy = list(x)
                    copy[where] = v if combine is None else combine(x[where], v)
                    frame.vars[name] = copy
                    return
                x = numpy_reading(x)                # lst[i, j] = v: numpy's reading of the list
            if not shape_of(x) or isinstance(x, (tuple, UserFunction, Builtin)):
                raise SourceError("type error", f"cannot assign to an item of {describe(x)}", span)
            where = index(frame) if where is None else where
            v = value(frame)
            # numpy writes x in place: whoever else holds what the write reaches is made Stale
            # (lang/aliases.py), before the update's step holds x on the tape
            shadows = writes.written(frame, name, x, where, line, how, globals_frame)
            NOTES.span = span
            try:
                v = as_array(v)                    # a tuple is the array numpy reads it as
                if combine is not None:
                    v = combine(ops.getitem(x, where), v)
                updated = ops.index_update(x, v, where)
            except SourceError:
                raise
            except Exception as exc:
                raise runtime_error(exc, span, label) from None
            frame.vars[name] = updated
            writes.rebound(updated, shadows)
        return run

    def index_closure(self, items, scope):
        """A closure computing a subscript's index (as e_Subscript does, for assignments)."""
        parts = self.index_parts(items, scope)

        def index(frame):
            out = []
            for kind, ev, sp in parts:
                if kind == "slice":
                    out.append(slice(*[as_int(p(frame), sp, "a slice bound") if p is not None else None for p in ev]))
                elif kind == "const":
                    out.append(ev)
                else:
                    out.append(_index_value(ev(frame), sp))
            return out[0] if len(out) == 1 else tuple(out)
        return index

    # ---- lambda ----
    def e_Lambda(self, e, scope):
        inner_scope = Scope(list(e.params), scope, scope.globals)
        value = self.expr(e.body, inner_scope)
        defaults = [self.expr(d, scope) for d in e.defaults]
        if scope.parent is not None:
            self.pause_gc = False       # the closure refers to its frame: a cycle per call
        me = self

        def body(frame):
            frame.ret = value(frame)
            return RETURN

        def make(frame):
            closure = frame if scope.parent is not None else me.globals
            return UserFunction("<lambda>", e.params, body, closure, e, me, tuple(d(frame) for d in defaults))
        return make

    # ---- [elt for name in items if cond] ----
    def e_ListComp(self, e, scope):
        inner_scope = Scope([n for target, _, _ in e.clauses for n in loop_target_names(target)], scope,
                            scope.globals)
        clauses = []
        for target, items, conds in e.clauses:
            # every part runs in the comprehension's frame; names of the enclosing one are free
            unpacked = loop_target_names(target) if isinstance(target, nodes.TupleExpr) else None
            clauses.append((None if unpacked else target.id, unpacked, self.expr(items, inner_scope), items.span,
                            [(self.expr(c, inner_scope), c.span) for c in conds]))
        element = self.expr(e.elt, inner_scope)
        span, key, sig, me = e.span, (e.span.line, e.span.column), self.signature, self

        def generate(frame, depth):
            name, unpacked, items, items_span, conds = clauses[depth]
            source = iterate(items(frame), items_span)
            if unpacked:
                source = unpacking(source, unpacked, frame.vars, items_span)
            for item in source:
                me.steps += 1
                if me.steps > me.limits.steps:
                    raise me.tick_error(span)
                if name is not None:
                    frame.vars[name] = item
                kept = True
                for cond, cond_span in conds:
                    kept = truth(cond(frame), cond_span)
                    sig.append((key, kept))
                    if not kept:
                        break
                if kept:
                    if depth + 1 == len(clauses):
                        yield element(frame)
                    else:
                        yield from generate(frame, depth + 1)

        def comprehension(frame):
            inner = Frame({}, frame)
            values = list(generate(inner, 0))
            sig.append((key, len(values)))
            if e.as_dict:                       # {k: v for ...}
                return dicts.from_pairs(values, e.elt.elts[0].span)
            if not values:
                return xp().zeros(0, dtype=dtype())
            NOTES.span = span
            return me.make_array(values, [e.elt.span] * len(values), span)
        return comprehension

    # ---- None (a new axis in a subscript; else a value, as a default) ----
    def e_NoneLit(self, e, scope):
        return lambda frame: None

    # ---- a string: the parser lets one through only as einsum's, norm's or pad's argument ----
    def e_Str(self, e, scope):
        text = e.value
        return lambda frame: text


def _index_value(i, span):
    """An index: a whole number, or an array of whole numbers or booleans (no gradient flows)."""
    if (i.__class__ is Var or i.__class__ is Dual) and not shape_of(i):
        return as_int(i, span)          # a traced number: read as a whole number
    iv = ops.read(numpy_reading(i))     # an index array read from a traced value (or a list)
    if is_array(iv) and iv.ndim > 0:
        if iv.dtype == bool:
            return iv
        if bool((iv == iv.astype(int)).all()):
            return iv.astype(int)
        raise SourceError("type error", "an index array must hold whole numbers", span)
    return as_int(i, span)
