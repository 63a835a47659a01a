"""Calls: compiling call expressions, and running calls of user functions (the call depth,
the first call's room on Python's stack, the GC pause of a run), builtins and grad(f)."""
from __future__ import annotations

import gc
import sys

from ...parser import nodes
from ...parser.errors import SourceError
from ..core import ops
from ..core.notes import NOTES
from ..core.sequences import numpy_reading, read_lists
from ..core.tape import Dual, Var
from .callables import RETURN, Builtin, Frame, UserFunction
from .custom_rules import CustomFunction
from .spellings import refuse_math_namesake
from .aliases import noting
from .errors import arity_message, runtime_error
from .keywords import complete_arguments
from .limits import FRAMES_PER_CALL, depth_limit_error
from .transforms import DerivedFunction
from .values import DType, describe


class CallCompiler:
    """The Interpreter's calls (a mixin: `self` is the Interpreter)."""

    # ---- running ----
    def call(self, fn, args, span):
        if isinstance(fn, UserFunction):
            return self.call_user(fn, args, span)
        if isinstance(fn, Builtin):
            return self.call_builtin(fn, args, span)
        if isinstance(fn, (DerivedFunction, CustomFunction)):
            return fn(*read_lists(args), span=span)
        raise SourceError("type error", f"{describe(fn)} is not a function", span)

    def call_builtin(self, b, args, span):
        if not b.min_args <= len(args) <= b.max_args:
            raise SourceError("wrong arguments", arity_message(b.name, b.min_args, b.max_args, len(args)), span)
        NOTES.span = span
        try:
            args = read_lists(args)
            return noting(self.may_write)(b.fn(*args))
        except SourceError as e:
            raise runtime_error(e, span, f"{b.name}()", args)
        except Exception as e:   # numpy and engine errors become located messages
            raise runtime_error(e, span, f"{b.name}()", args) from None

    def call_user(self, fn, args, span):
        if len(args) != len(fn.params):
            args = complete_arguments(fn, args, None, span)
        if self.depth == 0:
            return self.call_outermost(fn, args)
        self.depth += 1
        if self.depth > self.limits.depth:
            self.depth -= 1
            raise depth_limit_error(self.limits.depth, fn.name, span)
        if self.steps > self.limits.steps:
            self.depth -= 1
            raise self.tick_error(span)
        frame = Frame(dict(zip(fn.params, args)), fn.closure)
        frames = self.writes.frames if self.may_write else None
        if frames is not None:
            frames.append(frame)        # a write in place reaches the callers' names too (lang/aliases.py)
        try:
            if fn.body(frame) == RETURN:
                return frame.ret
            return None
        finally:
            if frames is not None:
                frames.pop()
            self.depth -= 1

    def call_outermost(self, fn, args):
        """The first call of a run: make room on Python's stack for the depth limit's nested
        calls (each costs a few Python frames)."""
        old_limit = sys.getrecursionlimit()
        needed = min(FRAMES_PER_CALL * self.limits.depth + 1000, 1_000_000)
        if old_limit < needed:
            sys.setrecursionlimit(needed)
        self.depth = 1
        self.writes.start()
        try:
            frame = Frame(dict(zip(fn.params, args)), fn.closure)
            self.writes.frames.append(frame)
            signal = self.guarded(fn.body, frame)
        finally:
            self.writes.frames.clear()
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
            if moved_to_oldest[0] > COLLECT_AFTER_MOVED:
                # what earlier runs moved to the oldest generation includes their cycles (a
                # program's functions and frames), which no automatic collection would reach:
                # collect them now, before this run's tape exists, so repeated calls stay flat
                moved_to_oldest[0] = 0
                gc.collect()
            gc.disable()
        old = ops.element_limit[0]
        ops.element_limit[0] = self.limits.elements
        try:
            return run(frame)
        except BaseException:
            _drop_tapes(frame)
            raise
        finally:
            ops.element_limit[0] = old
            if pause:
                # Everything the run made (mostly the tape, about to be swept and freed) would
                # otherwise sit in the youngest generation, which the next allocation scans in
                # full. freeze + unfreeze moves it to the oldest generation as is, at O(1)
                # (not when someone else froze objects: unfreeze would undo their freeze).
                if gc.get_freeze_count() == 0:
                    young, middle, _ = gc.get_count()    # O(1), where get_freeze_count() walks them all
                    moved_to_oldest[0] += young + middle
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()

    # ---- compiling ----
    def e_Call(self, e, scope):
        if isinstance(e.func, nodes.Attribute):
            return self.method_call(e, scope)
        args = [self.expr(a, scope) for a in e.args]
        if isinstance(e.func, nodes.Name):
            refuse_math_namesake(e.func.module, e.func.id, e.func.span)
        if isinstance(e.func, nodes.Name) and e.func.id in self.builtins and (
                e.func.module or scope.find(e.func.id) is None):     # np.diff is numpy's, whatever `diff` is
            b = self.builtins[e.func.id]
            if not isinstance(b, Builtin):
                spelled = f"{e.func.module}.{e.func.id}" if e.func.module else e.func.id
                cast = f"x.astype({spelled})" if isinstance(b, DType) else None     # np.float64(x): numpy's cast
                raise SourceError("type error", f"`{e.func.id}` is a {'dtype' if cast else 'constant'}, not a "
                                  "function", e.span, cast and f"write {cast} to cast x")
            if e.keywords:
                return self.builtin_keyword_call(b, args, e.keywords, scope, e.span)
            return self.builtin_call(b, args, e.span)
        if e.keywords:
            return self.keyword_call(self.expr(e.func, scope), args, e.keywords, scope, e.span)
        return self.value_call(self.expr(e.func, scope), args, e.span)

    def builtin_call(self, b, args, span):
        """A call of a builtin known at compile time: arity checked now, the function called
        directly."""
        if not b.min_args <= len(args) <= b.max_args:
            raise SourceError("wrong arguments", arity_message(b.name, b.min_args, b.max_args, len(args)), span)
        fn = b.fn
        label = f"{b.name}()"
        noted = noting(self.may_write)
        if len(args) == 1:
            a0 = args[0]

            def call1(frame):
                x = a0(frame)
                NOTES.span = span
                try:
                    if x.__class__ is list:
                        x = numpy_reading(x)
                    return noted(fn(x))
                except Exception as exc:
                    raise runtime_error(exc, span, label, (x,)) from None
            return call1

        def call_builtin(frame):
            vals = [a(frame) for a in args]
            NOTES.span = span
            try:
                vals = read_lists(vals)             # (its errors, a stale item's too, located here)
                return noted(fn(*vals))
            except Exception as exc:
                raise runtime_error(exc, span, label, vals) from None
        return call_builtin

    def value_call(self, func, args, span):
        """A call of whatever value `func` computes (a user function, mostly)."""
        me = self
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


# Objects the paused runs moved to the oldest generation since the last full collection (which
# they do not count towards); past this many, the next run collects first.
moved_to_oldest = [0]
COLLECT_AFTER_MOVED = 200_000


def _drop_tapes(frame):
    """A failed run is never swept: free its partial tapes now, while the GC is still paused,
    rather than let the error carry millions of entries (an endless loop at the step limit)
    to the code that reports it."""
    for v in frame.vars.values():
        while v.__class__ is Dual:
            v = v.primal
        if v.__class__ is Var and not v.tape.persistent:
            del v.tape.entries[:]
