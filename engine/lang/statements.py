"""Compiling statements: blocks (with the step count), assignments, if, the loops, def."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError
from ..core import ops
from .callables import BREAK, CONTINUE, RETURN, UserFunction
from .loop_forms import unpacking
from .names import Scope, assigned_names, loop_target_names
from sys import getrefcount

from .aliases import in_place
from .values import describe, iterate, shape_of, truth


class StatementCompiler:
    """The Interpreter's statements (a mixin: `self` is the Interpreter)."""

    def block(self, stmts, scope, top=False):
        """Statements in sequence. Steps are counted per block (one per statement run), not per
        statement: loops and calls check the count, so no statement needs a wrapper of its own."""
        compiled = [self.stmt(s, scope, top) for s in stmts]
        count = len(compiled)
        me = self
        if count == 1:
            only = compiled[0]

            def run1(frame):
                me.steps += 1
                return only(frame)
            return run1

        def run(frame):
            me.steps += count
            for s in compiled:
                r = s(frame)
                if r is not None:
                    me.steps -= count - 1 - compiled.index(s)     # the statements not run
                    return r
            return None
        return run

    def stmt(self, s, scope, top=False):
        return getattr(self, "s_" + type(s).__name__)(s, scope)

    def s_ExprStmt(self, s, scope):
        appended = appended_list(s.value)
        if appended is not None:            # `lst.append(v)` is `lst = lst + [v]`: a rebinding
            name, value = appended
            ev = self.binary("+", name, nodes.ListExpr((value,), value.span), s.value.span, scope, "`.append`")

            writes, globals_frame, line = self.writes, self.globals, s.value.span.line

            def rebind(frame):
                old = frame.vars.get(name.id)
                if old.__class__ is not list:
                    raise SourceError("type error", f"`{name.id}.append(...)`: {name.id} is "
                                      f"{describe(frame.vars.get(name.id))}, not a list", s.value.span,
                                      "append to a list (`lst = []`); for arrays write np.append(a, v)")
                writes.written(frame, name.id, old, None, line, f"`{name.id}.append(...)`", globals_frame)
                frame.vars[name.id] = ev(frame)
            return rebind
        ev = self.expr(s.value, scope)
        me = self

        def run(frame):
            me.last_value = ev(frame)
        return run

    def s_Pass(self, s, scope):
        return lambda frame: None

    def s_Break(self, s, scope):
        if not self.loop_depth:
            raise SourceError("syntax error", "`break` outside a loop", s.span)
        return lambda frame: BREAK

    def s_Continue(self, s, scope):
        if not self.loop_depth:
            raise SourceError("syntax error", "`continue` outside a loop", s.span)
        return lambda frame: CONTINUE

    def s_Return(self, s, scope):
        if scope.parent is None:
            raise SourceError("syntax error", "return outside a function", s.span)
        ev = self.expr(s.value, scope) if s.value is not None else (lambda frame: None)

        def run(frame):
            frame.ret = ev(frame)
            return RETURN
        return run

    def s_Assign(self, s, scope):
        ev = self.expr(s.value, scope)
        names = [t.id for t in s.targets]
        if not s.unpack:
            name = names[0]

            def run(frame):
                frame.vars[name] = ev(frame)
            return run
        count = len(names)
        span = s.value.span

        def run_unpack(frame):
            v = ev(frame)
            if isinstance(v, (tuple, list)):
                items = v
            else:
                shp = shape_of(v)
                if not shp:
                    raise SourceError("type error", f"cannot unpack {describe(v)} into {count} names", span)
                items = [ops.getitem(v, i) for i in range(shp[0])]
            if len(items) != count:
                raise SourceError("type error", f"cannot unpack {len(items)} values into {count} names", span)
            variables = frame.vars
            for name_, item in zip(names, items):
                variables[name_] = item
        return run_unpack

    def s_AugAssign(self, s, scope):
        # `z += y` is `z = z + y`: a rebinding (value semantics); where numpy adds in place (an array,
        # a list), whoever else holds z's value is made Stale (lang/aliases.py)
        target = nodes.Name(s.target.id, s.target.span)
        if s.op == "**":
            ev = self.expr(nodes.Power(target, s.value, s.op_span, s.span), scope)
        else:
            ev = self.binary(s.op, target, s.value, s.op_span, scope, f"`{s.op}=`")
        name = s.target.id
        how, writes, globals_frame, line = f"`{name} {s.op}= ...`", self.writes, self.globals, s.span.line

        def run(frame):
            old = frame.vars.get(name)
            if old.__class__ is not float and (old.__class__ is list or in_place(old)):    # numpy's += writes old
                held = getrefcount(old) - 1             # its holders, before the update's step holds it too
                new = ev(frame)                         # the right side reads the values before the write
                shadows = writes.written(frame, name, old, None, line, how, globals_frame, held=held)
                frame.vars[name] = new
                writes.rebound(new, shadows)
                return
            frame.vars[name] = ev(frame)
        return run

    def s_If(self, s, scope):
        test = self.expr(s.test, scope)
        body = self.block(s.body, scope)
        orelse = self.block(s.orelse, scope) if s.orelse else None
        sig = self.signature
        span = s.test.span
        key = (span.line, span.column)
        yes, no = (key, True), (key, False)          # shared: a decision costs one list slot

        def run(frame):
            c = test(frame)
            if c.__class__ is not bool:
                c = truth(c, span)
            if c:
                sig.append(yes)
                return body(frame)
            sig.append(no)
            if orelse is not None:
                return orelse(frame)
            return None
        return run

    # ---- loops ----
    def s_While(self, s, scope):
        test = self.expr(s.test, scope)
        span = s.test.span
        trips = self.loop_trips(s.body, scope, span, None)
        return lambda frame: trips(frame, _while_true(test, frame, span))

    def s_For(self, s, scope):
        items = self.expr(s.iter, scope)
        span = s.iter.span
        if isinstance(s.target, nodes.TupleExpr):          # for a, b in pairs: unpacked before each trip
            names = loop_target_names(s.target)
            trips = self.loop_trips(s.body, scope, span, None)
            return lambda frame: trips(frame, unpacking(iterate(items(frame), span), names, frame.vars, span))
        trips = self.loop_trips(s.body, scope, span, s.target.id)
        return lambda frame: trips(frame, iterate(items(frame), span))

    def loop_trips(self, stmts, scope, span, name):
        """The body of a loop, run once per item of an iterator (binding each to `name`, unless
        None): counts the trips into the signature and the steps against the limit, and stops at
        break or return."""
        self.loop_depth += 1
        try:
            body = self.block(stmts, scope)
        finally:
            self.loop_depth -= 1
        sig = self.signature
        key = (span.line, span.column)
        me = self

        def run(frame, items):
            trips = 0
            variables = frame.vars
            try:
                for item in items:
                    trips += 1
                    me.steps += 1
                    if me.steps > me.check_at:         # the step limit and the tape's memory
                        me.checkpoint(span)
                    if name is not None:
                        variables[name] = item
                    r = body(frame)
                    if r is not None:
                        if r == BREAK:
                            break
                        if r == RETURN:
                            return r
            finally:
                sig.append((key, trips))
            return None
        return run

    def s_FunctionDef(self, s, scope):
        local_names = list(s.params) + assigned_names(s.body)
        inner_scope = Scope(local_names, scope, scope.globals)
        me = self
        name = s.name
        outer_loops, self.loop_depth = self.loop_depth, 0      # a def inside a loop starts afresh
        try:
            # compiled now: unknown names are reported before anything runs
            body = self.block(s.body, inner_scope) if s.body else (lambda f: None)
        finally:
            self.loop_depth = outer_loops
        if scope.parent is not None:
            self.pause_gc = False    # a nested def's closure refers to its frame: a cycle per call
        defaults = [self.expr(d, scope) for d in s.defaults]        # evaluated once, by the def

        def run(frame):
            closure = frame if scope.parent is not None else me.globals
            frame.vars[name] = UserFunction(name, s.params, body, closure, s, me,
                                            tuple(d(frame) for d in defaults))
        return run


def _while_true(test, frame, span):
    """A while loop's trips: one (empty) item for as long as its condition holds."""
    while True:
        c = test(frame)
        if c.__class__ is not bool:
            c = truth(c, span)
        if not c:
            return
        yield None


def appended_list(e):
    """(the list's Name, the value) of a statement `lst.append(v)`; else None."""
    if (isinstance(e, nodes.Call) and isinstance(e.func, nodes.Attribute) and e.func.attr == "append"
            and isinstance(e.func.value, nodes.Name) and not e.func.value.module and len(e.args) == 1
            and not e.keywords):
        return e.func.value, e.args[0]
    return None
