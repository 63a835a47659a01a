"""The interpreter: compiles the AST once into closures, then runs them define-by-run.

Every arithmetic step goes through the engine ops, so whatever boxes the inputs carry (a tape,
a dual number, several levels of them) the run is recorded. Conditions are evaluated on concrete
values; each decision and loop trip count is appended to the run's control-flow signature.
"""
from __future__ import annotations

import gc

from ...parser import nodes as n
from ...parser.errors import SourceError
from ..core import ops as O
from ..core.backend import is_array, xp
from ..core.notes import NOTES
from ..core.tape import Dual, Var, strip
from .values import describe, dtype, shape_of
from .names import Scope, assigned_names
from .operator_closures import BINARY_OPS, COMPARISONS, FLOAT_OPS, binary_closure, comparison_closure, compare_values
from .runtime import (BREAK, CONTINUE, RETURN, Builtin, Frame, GradFunction, LimitError, Limits, RangeValue,
                      UserFunction, _FRAMES_PER_CALL, _NESTED_CHAIN, _arity, _bad_index, _drop_tapes, _iterate,
                      _raw_getitem, _scope_names, as_int, runtime_error, truth, unknown_name)


class Interpreter:
    def __init__(self, limits: Limits | None = None, builtins: dict | None = None):
        from .builtins import make_builtins
        self.limits = limits or Limits()
        self.builtins = builtins if builtins is not None else make_builtins(self)
        self.steps = 0
        self.depth = 0
        self.signature: list = []
        self.globals = Frame({}, None)
        self.last_value = None
        self.loop_depth = 0           # while compiling: how many loops enclose the statement
        self.pause_gc = True          # cleared when the program defines nested functions (cycles)

    # ---- running ----
    def tick_error(self, span):
        return LimitError("step limit", f"the program ran more than {self.limits.steps:,} steps "
                          "(an endless loop?)", span, "raise the limit with --max-steps")

    def call(self, fn, args, span):
        if isinstance(fn, UserFunction):
            return self.call_user(fn, args, span)
        if isinstance(fn, Builtin):
            return self.call_builtin(fn, args, span)
        if isinstance(fn, GradFunction):
            return fn(*args, span=span)
        raise SourceError("type error", f"{describe(fn)} is not a function", span)

    def call_builtin(self, b, args, span):
        if not b.min_args <= len(args) <= b.max_args:
            raise SourceError("wrong arguments", _arity(b.name, b.min_args, b.max_args, len(args)), span)
        NOTES.span = span
        try:
            return b.fn(*args)
        except SourceError as e:
            raise runtime_error(e, span, f"{b.name}()")
        except Exception as e:   # numpy and engine errors become located messages
            raise runtime_error(e, span, f"{b.name}()") from None

    def call_user(self, fn, args, span):
        if len(args) != len(fn.params):
            raise SourceError("wrong arguments", _arity(fn.name, len(fn.params), len(fn.params), len(args)), span)
        if self.depth == 0:
            return self._outermost(fn, args, span)
        self.depth += 1
        if self.depth > self.limits.depth:
            self.depth -= 1
            raise LimitError("recursion limit", f"recursion deeper than {self.limits.depth} calls "
                             f"(in {fn.name})", span, "raise the limit with --max-depth")
        if self.steps > self.limits.steps:
            self.depth -= 1
            raise self.tick_error(span)
        frame = Frame(dict(zip(fn.params, args)), fn.closure)
        try:
            if fn.body(frame) == RETURN:
                return frame.ret
            return None
        finally:
            self.depth -= 1

    def _outermost(self, fn, args, span):
        """The first call of a run: make room on Python's stack for --max-depth nested calls
        (each costs a few Python frames)."""
        import sys
        old_limit = sys.getrecursionlimit()
        needed = min(_FRAMES_PER_CALL * self.limits.depth + 1000, 1_000_000)
        if old_limit < needed:
            sys.setrecursionlimit(needed)
        self.depth = 1
        try:
            frame = Frame(dict(zip(fn.params, args)), fn.closure)
            signal = self.guarded(fn.body, frame)
        finally:
            self.depth = 0
            if old_limit < needed:
                sys.setrecursionlimit(old_limit)
        return frame.ret if signal == RETURN else None

    def guarded(self, run, frame):
        """Run a compiled closure with this interpreter's element limit in force in the engine
        ops, and the cyclic GC paused: it would otherwise rescan the growing tape again and
        again (the tape holds no cycles; reference counting frees it). A program with nested
        defs makes a cycle per call (closure <-> frame) and keeps the GC running."""
        pause = self.pause_gc and gc.isenabled()
        if pause:
            gc.disable()
        old = O.element_limit[0]
        O.element_limit[0] = self.limits.elements
        try:
            return run(frame)
        except BaseException:
            _drop_tapes(frame)
            raise
        finally:
            O.element_limit[0] = old
            if pause:
                # Everything the run made (mostly the tape, about to be swept and freed) would
                # otherwise sit in the youngest generation, which the next allocation scans in
                # full. freeze + unfreeze moves it to the oldest generation as is, at O(1)
                # (not when someone else froze objects: unfreeze would undo their freeze).
                if gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()

    # ---- compiling ----
    def compile_module(self, module: n.Module, globals_names=()):
        """Returns a closure that runs the module's statements in the global frame."""
        names = set(assigned_names(module.body)) | set(globals_names)
        scope = Scope((), None, names)
        body = self.block(module.body, scope, top=True)
        return lambda frame: self.guarded(body, frame)

    def compile_expression(self, node, globals_names):
        scope = Scope((), None, set(globals_names))
        ev = self.expr(node, scope)
        return lambda frame: self.guarded(ev, frame)

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

    def loop_body(self, stmts, scope):
        self.loop_depth += 1
        try:
            return self.block(stmts, scope)
        finally:
            self.loop_depth -= 1

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
            if isinstance(v, tuple):
                items = v
            else:
                shp = shape_of(v)
                if not shp:
                    raise SourceError("type error", f"cannot unpack {describe(v)} into {count} names", span)
                items = [O.getitem(v, i) for i in range(shp[0])]
            if len(items) != count:
                raise SourceError("type error", f"cannot unpack {len(items)} values into {count} names", span)
            d = frame.vars
            for name_, item in zip(names, items):
                d[name_] = item
        return run_unpack

    def s_AugAssign(self, s, scope):
        # `z += y` is `z = z + y`: a rebinding (value semantics), never an in-place update
        target = n.Name(s.target.id, s.target.span)
        ev = self.binary(s.op, target, s.value, s.op_span, scope, f"`{s.op}=`")
        name = s.target.id

        def run(frame):
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

    def s_While(self, s, scope):
        test = self.expr(s.test, scope)
        body = self.loop_body(s.body, scope)
        sig = self.signature
        span = s.test.span
        key = (span.line, span.column)
        me = self
        limit = self.limits.steps

        def run(frame):
            trips = 0
            try:
                while True:
                    c = test(frame)
                    if c.__class__ is not bool:
                        c = truth(c, span)
                    if not c:
                        break
                    trips += 1
                    me.steps += 1
                    if me.steps > limit:
                        raise me.tick_error(span)
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

    def s_For(self, s, scope):
        it = self.expr(s.iter, scope)
        body = self.loop_body(s.body, scope)
        name = s.target.id
        sig = self.signature
        span = s.iter.span
        key = (span.line, span.column)
        me = self
        limit = self.limits.steps

        def run(frame):
            seq = it(frame)
            trips = 0
            d = frame.vars
            try:
                for item in _iterate(seq, span):
                    trips += 1
                    me.steps += 1
                    if me.steps > limit:
                        raise me.tick_error(span)
                    d[name] = item
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
        holder = {}
        me = self
        name = s.name

        def compile_body():
            body = holder.get("body")
            if body is None:
                outer_loops, me.loop_depth = me.loop_depth, 0      # a def inside a loop starts afresh
                try:
                    body = holder["body"] = me.block(s.body, inner_scope) if s.body else (lambda f: None)
                finally:
                    me.loop_depth = outer_loops
            return body

        compile_body()       # compile now: unknown names are reported before anything runs
        if scope.parent is not None:
            self.pause_gc = False    # a nested def's closure refers to its frame: a cycle per call

        def run(frame):
            closure = frame if scope.parent is not None else me.globals
            frame.vars[name] = UserFunction(name, s.params, holder["body"], closure, s, me)
        return run

    # ---- expressions ----
    def expr(self, e, scope):
        return getattr(self, "e_" + type(e).__name__)(e, scope)

    def e_Num(self, e, scope):
        v = e.value
        return lambda frame: v

    def e_Bool(self, e, scope):
        v = e.value
        return lambda frame: v

    def e_Name(self, e, scope):
        name = e.id
        where = scope.find(name)
        span = e.span
        if where == "local":
            def load_local(frame):
                try:
                    return frame.vars[name]
                except KeyError:
                    raise SourceError("unknown name", f"`{name}` is used before it is assigned", span) from None
            return load_local
        if where == "free":
            def load_free(frame):
                f = frame.parent
                while f is not None:
                    d = f.vars
                    if name in d:
                        return d[name]
                    f = f.parent
                raise SourceError("unknown name", f"`{name}` is used before it is assigned", span)
            return load_free
        if where == "global":
            globals_ = self.globals
            builtin = self.builtins.get(name)

            def load_global(frame):
                try:
                    return globals_.vars[name]
                except KeyError:
                    if builtin is not None:
                        return builtin
                    raise SourceError("unknown name", f"`{name}` is used before it is assigned", span) from None
            return load_global
        if name in self.builtins:
            b = self.builtins[name]
            return lambda frame: b
        raise unknown_name(name, span, list(scope.globals) + list(self.builtins) + _scope_names(scope))

    def e_UnaryOp(self, e, scope):
        ev = self.expr(e.operand, scope)
        span = e.span
        if e.op == "+":
            return ev

        def neg(frame):
            v = ev(frame)
            if v.__class__ is float:
                return -v
            NOTES.span = span
            try:
                return O.neg(v)
            except Exception as exc:
                raise runtime_error(exc, span, "unary `-`") from None
        return neg

    def e_BinChain(self, e, scope):
        # a - b + c is ((a - b) + c): a short chain nests one binary closure per operator; a long
        # one (a sum of 30,000 terms) is a loop, so running it needs no deep Python stack
        if len(e.ops) <= _NESTED_CHAIN:
            left = self.operand(e.operands[0], scope)
            for op, x, sp in zip(e.ops, e.operands[1:], e.op_spans):
                left = ("expr", binary_closure(op, left, self.operand(x, scope), sp, f"`{op}`"), None)
            return left[1]
        first = self.expr(e.operands[0], scope)
        rest = [(BINARY_OPS[op], FLOAT_OPS.get(op), self.expr(x, scope), sp, f"`{op}`")
                for op, x, sp in zip(e.ops, e.operands[1:], e.op_spans)]

        def chain(frame):
            a = first(frame)
            for fn, pyop, rhs, span, label in rest:
                b = rhs(frame)
                if pyop is not None and a.__class__ is float and b.__class__ is float:
                    a = pyop(a, b)
                    continue
                NOTES.span = span
                try:
                    a = fn(a, b)
                except Exception as exc:
                    raise runtime_error(exc, span, label) from None
            return a
        return chain

    def binary(self, op, lhs, rhs, op_span, scope, label):
        """The closure for `lhs op rhs` (AST nodes)."""
        return binary_closure(op, self.operand(lhs, scope), self.operand(rhs, scope), op_span, label)

    def operand(self, e, scope):
        """How a binary operator fetches an operand: a constant and a local variable are read
        inline by the operator's closure (no call of their own); anything else is a closure."""
        if isinstance(e, n.Num):
            return ("const", e.value, e.span)
        if isinstance(e, n.Name) and scope.find(e.id) == "local":
            return ("local", e.id, e.span)
        return ("expr", self.expr(e, scope), e.span)

    def e_Power(self, e, scope):
        base = self.expr(e.base, scope)
        exp = self.expr(e.exponent, scope)
        span = e.op_span

        def power(frame):
            a = base(frame)
            b = exp(frame)
            NOTES.span = span
            try:
                return O.pow(a, b)
            except Exception as exc:
                raise runtime_error(exc, span, "`**`") from None
        return power

    def e_Compare(self, e, scope):
        if len(e.ops) == 1:
            return comparison_closure(self.operand(e.left, scope), COMPARISONS[e.ops[0]],
                             self.operand(e.comparators[0], scope), e.op_spans[0], e.ops[0])
        left = self.expr(e.left, scope)
        rest = [(COMPARISONS[op], self.expr(x, scope), sp, op) for op, x, sp in zip(e.ops, e.comparators, e.op_spans)]

        def compare(frame):
            a = left(frame)
            result = True
            for fn, rhs, span, opname in rest:
                b = rhs(frame)
                r = compare_values(fn, a, b, span, opname)
                if r.__class__ is not bool and not (is_array(r) and r.ndim == 0):
                    result = r if result is True else xp().logical_and(result, r)
                elif not r:
                    return False
                a = b
            return result
        return compare

    def e_BoolOp(self, e, scope):
        values = [(self.expr(v, scope), v.span) for v in e.values]
        is_and = e.op == "and"

        def boolop(frame):
            v = None
            for ev, span in values:
                v = ev(frame)
                t = truth(v, span, f"operand of `{e.op}`")
                if t != is_and:
                    return v
            return v
        return boolop

    def e_Not(self, e, scope):
        ev = self.expr(e.operand, scope)
        span = e.operand.span
        return lambda frame: not truth(ev(frame), span, "operand of `not`")

    def e_IfExp(self, e, scope):
        test = self.expr(e.test, scope)
        body = self.expr(e.body, scope)
        orelse = self.expr(e.orelse, scope)
        span = e.test.span
        key = (span.line, span.column)
        sig = self.signature

        def ifexp(frame):
            c = truth(test(frame), span)
            sig.append((key, c))
            return body(frame) if c else orelse(frame)
        return ifexp

    def e_Call(self, e, scope):
        args = [self.expr(a, scope) for a in e.args]
        span = e.span
        me = self
        if isinstance(e.func, n.Name) and scope.find(e.func.id) is None and e.func.id in self.builtins:
            b = self.builtins[e.func.id]
            if not isinstance(b, Builtin):
                raise SourceError("type error", f"`{e.func.id}` is a constant, not a function", span)
            if not b.min_args <= len(args) <= b.max_args:
                raise SourceError("wrong arguments", _arity(b.name, b.min_args, b.max_args, len(args)), span)
            fn = b.fn
            if len(args) == 1:
                a0 = args[0]

                def call1(frame):
                    x = a0(frame)
                    NOTES.span = span
                    try:
                        return fn(x)
                    except Exception as exc:
                        raise runtime_error(exc, span, f"{b.name}()") from None
                return call1

            def call_builtin(frame):
                vals = [a(frame) for a in args]
                NOTES.span = span
                try:
                    return fn(*vals)
                except Exception as exc:
                    raise runtime_error(exc, span, f"{b.name}()") from None
            return call_builtin
        func = self.expr(e.func, scope)
        if len(args) == 1:                     # the common arities without a comprehension
            a0 = args[0]

            def call1(frame):
                f = func(frame)
                vals = [a0(frame)]
                if f.__class__ is UserFunction:
                    return me.call_user(f, vals, span)
                return me.call(f, vals, span)
            return call1
        if len(args) == 2:
            a0, a1 = args

            def call2(frame):
                f = func(frame)
                vals = [a0(frame), a1(frame)]
                if f.__class__ is UserFunction:
                    return me.call_user(f, vals, span)
                return me.call(f, vals, span)
            return call2

        def call(frame):
            f = func(frame)
            vals = [a(frame) for a in args]
            if f.__class__ is UserFunction:
                return me.call_user(f, vals, span)
            return me.call(f, vals, span)
        return call

    def e_Subscript(self, e, scope):
        value = self.expr(e.value, scope)
        parts = []
        for item in e.index:
            if isinstance(item, n.Slice):
                parts.append(("slice", [self.expr(p, scope) if p is not None else None
                                        for p in (item.lower, item.upper, item.step)], item.span))
            else:
                parts.append(("index", self.expr(item, scope), item.span))
        span = e.span

        def subscript(frame):
            v = value(frame)
            idx = []
            for kind, ev, sp in parts:
                if kind == "slice":
                    bounds = [as_int(p(frame), sp, "a slice bound") if p is not None else None for p in ev]
                    idx.append(slice(*bounds))
                else:
                    i = ev(frame)
                    iv = strip(i)
                    if is_array(iv) and iv.ndim > 0:
                        if iv.dtype == bool:
                            idx.append(iv)
                        else:
                            idx.append(iv.astype(int) if bool((iv == iv.astype(int)).all()) else
                                       _bad_index(iv, sp))
                    else:
                        idx.append(as_int(i, sp))
            index = idx[0] if len(idx) == 1 else tuple(idx)
            shp = shape_of(v)
            if isinstance(v, tuple):
                try:
                    return v[index]
                except Exception as exc:
                    raise runtime_error(exc, span, "indexing") from None
            if not shp:
                raise SourceError("index error", f"cannot index {describe(v)}", span)
            NOTES.span = span
            try:
                return O.getitem(v, index) if v.__class__ in (Var, Dual) else _raw_getitem(v, index)
            except Exception as exc:
                raise runtime_error(exc, span, "indexing") from None
        return subscript

    def e_Slice(self, e, scope):
        raise SourceError("syntax error", "a slice is only allowed inside [ ]", e.span)

    def e_ListExpr(self, e, scope):
        items = [(self.expr(x, scope), x.span) for x in e.elts]
        span = e.span
        me = self

        def listexpr(frame):
            vals = [ev(frame) for ev, _ in items]
            NOTES.span = span
            try:
                return me.make_array(vals, [sp for _, sp in items], span)
            except SourceError:
                raise
            except Exception as exc:     # e.g. numpy's limit of 64 dimensions for deep nesting
                raise runtime_error(exc, span, "list") from None
        return listexpr

    def make_array(self, vals, spans, span):
        if all(v.__class__ is float or v.__class__ is bool for v in vals):
            return xp().asarray(vals, dtype=dtype())
        shapes = [shape_of(v) for v in vals]
        for v, sp, shp in zip(vals, spans, shapes):
            if isinstance(v, (tuple, UserFunction, Builtin, RangeValue)) or v is None:
                raise SourceError("type error", f"a list element is {describe(v)}, not a number or array", sp)
            if shp != shapes[0]:
                raise SourceError("shape mismatch", f"list elements have different shapes: {shapes[0]} and {shp}", sp)
        if any(v.__class__ in (Var, Dual) for v in vals):
            return O.stack(vals)
        return xp().stack([xp().asarray(v, dtype=dtype()) for v in vals])

    def e_TupleExpr(self, e, scope):
        items = [self.expr(x, scope) for x in e.elts]
        return lambda frame: tuple(ev(frame) for ev in items)
