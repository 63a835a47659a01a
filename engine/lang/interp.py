"""The interpreter: compiles the AST once into closures, then runs them define-by-run.

Every arithmetic step goes through the engine ops, so whatever boxes the inputs carry (a tape,
a dual number, several levels of them) the run is recorded. Conditions are evaluated on concrete
values; each decision and loop trip count is appended to the run's control-flow signature.

The compiler is in three parts, one per kind of node: statements.py, expressions.py and
calls.py (which also runs the calls). Each node compiles once, by its `s_`/`e_` method, into a
closure; running a program calls only closures, never these methods.
"""
from __future__ import annotations

from ...parser import nodes
from .aliases import Writes, writes_in_place
from .builtins import make_builtins
from .callables import Frame
from .call_forms import CallFormsCompiler
from .calls import CallCompiler
from .expressions import ExpressionCompiler
from ..core.errors import TapeTooLong
from ..core.memory import resident_mb
from ..core.tape import check_entries
from .errors import runtime_error
from .limits import Limits, step_limit_error, tape_limit_error

CHECK_EVERY = 4096          # steps between two checks of the tape bounds (at loop trips)
from .names import Scope, assigned_names
from .dicts import DictCompiler
from .statement_forms import StatementFormsCompiler
from .statements import StatementCompiler


class Interpreter(StatementCompiler, ExpressionCompiler, CallCompiler, CallFormsCompiler, StatementFormsCompiler,
                  DictCompiler):
    def __init__(self, limits: Limits | None = None, builtins: dict | None = None):
        self.limits = limits or Limits()
        self.rules: dict = {}         # the program's own rules table: its custom_vjp/custom_jvp functions
        self.builtins = builtins if builtins is not None else make_builtins(self)
        self.steps = 0
        self.depth = 0
        self.writes = Writes()          # numpy's in-place writes: the call stack and the written values' shadows
        self.may_write = False          # whether a module compiled writes in place (else no view is noted)
        self.signature: list = []
        self.globals = Frame({}, None)
        self.last_value = None
        self.loop_depth = 0           # while compiling: how many loops enclose the statement
        self.pause_gc = True          # cleared when the program defines nested functions (cycles)
        self.check_at = min(self.limits.steps, CHECK_EVERY)   # the step count of the next checkpoint
        self.baseline_mb = None       # the memory at the first checkpoint: growth past it is the tape's

    def restart_count(self):
        """A fresh step count (and checkpoint) for another run of the same compiled program."""
        self.steps = self.depth = 0
        self.check_at = min(self.limits.steps, CHECK_EVERY)

    def tick_error(self, span):
        return step_limit_error(self.limits.steps, span)

    def checkpoint(self, span):
        """At a loop trip past check_at: the step limit, the tapes' entries, then the memory the
        run has added."""
        if self.steps > self.limits.steps:
            raise self.tick_error(span)
        self.check_growth(span)
        self.check_at = min(self.limits.steps, self.steps + CHECK_EVERY)

    def check_growth(self, span, where="the loop"):
        """The tapes' entries, then the memory the run has added (since its first check): at
        loop trips, and during the sweeps of nested derivatives (`where` is what `span` is)."""
        self.check_tapes(span)
        now = resident_mb()
        if self.baseline_mb is None:
            self.baseline_mb = now
        elif now - self.baseline_mb > self.limits.tape_mb:
            raise tape_limit_error(self.limits.tape_mb, span, where)

    def check_tapes(self, span):
        """The tape-entry limit, checked by loops and nested derivatives (never per op)."""
        try:
            check_entries(self.limits.tape_entries)
        except TapeTooLong as exc:
            raise runtime_error(exc, span, "loop") from None

    def compile_module(self, module: nodes.Module, globals_names=()):
        """Returns a closure that runs the module's statements in the global frame."""
        self.may_write = self.may_write or writes_in_place(module)
        names = set(assigned_names(module.body)) | set(globals_names)
        scope = Scope((), None, names)
        body = self.block(module.body, scope, top=True)
        return lambda frame: self.guarded(body, frame)

    def compile_expression(self, node, globals_names):
        scope = Scope((), None, set(globals_names))
        ev = self.expr(node, scope)
        return lambda frame: self.guarded(ev, frame)
