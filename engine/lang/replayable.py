"""Whether a target's recorded primitives can be replayed on new inputs of the same shapes.

A replay recomputes only what the tape recorded; anything else the run did is taken as fixed.
That holds when nothing that depends on an input leaves the tape: no comparison, branch,
index, loop bound or shape argument computed from an input, no builtin that reads a traced
value as a plain number (stop_gradient, where, any, grad...). This module decides it from the
AST, conservatively: a name is *static* (independent of the inputs) only if every assignment to
it anywhere in the program is static; inputs and function parameters never are. A name is a
builtin only where nothing in the program binds it (a def, an assignment, a parameter, a loop or
comprehension target, an import alias, an input); a function of the program only where defs
alone bind it. What the analysis cannot see, a composite's read of a traced value as a plain
number (norm's count of ord 0), the recording run logs (lang/recorded_decisions.py).

The exceptions are the decisions a replay can check again: the condition of an `if`, `elif`,
`while` or conditional expression `a if c else b`, and the arguments of `range(...)` in a `for`
loop (its trip count and items). A program compiled for a run that records a trace logs each
decision they take on a traced value (DECISIONS, filled by `recorded_test` and `loop_items`
(lang/recorded_decisions.py), and the replay checks it again on the new values
(diff/replay_guards.py), falling back to the interpreter where it differs. Such a condition may
compare traced values (comparisons, chained or not, joined by and/or/not) or test one for
truth; a guarded loop's variable is fixed on the path by its range's guard. The batched replay
checks no decision (`guarded=False`): none of these replay there."""
from __future__ import annotations

from ...parser import nodes
from ...parser.decorators import RULE_DECORATORS
from ..core.rules import builtin_primitives
from .names import loop_target_names, walk

# Builtins whose result is fixed by their arguments' shapes, or that make constants.
_SHAPE_BUILTINS = frozenset({"len", "zeros", "ones", "arange", "range"})
# Builtins that only apply differentiable ops, each with its static arguments after the first
# (an axis, a shape): index -> must be static.
# (core/library's norm and transpose are composites: a read of a traced value they make is
# logged by the recording run, which then keeps no trace)
_OP_BUILTINS = {"dot": 2, "sum": 1, "mean": 1, "max": 1, "min": 1, "reshape": 1, "norm": 1, "transpose": 1}
_ARITHMETIC = frozenset({"+", "-", "*", "/", "@"})
_CONSTANT_NODES = tuple(getattr(nodes, n) for n in ("Num", "Bool", "NoneLit", "EllipsisLit") if hasattr(nodes, n))
# Constructs whose values this analysis does not follow (yet): such programs are interpreted.
_UNREPLAYED = {"ListComp": "a list comprehension", "Lambda": "a lambda"}
# Why a program with its own derivative rules (custom_vjp, custom_jvp: entries of its own rules
# table, lang/custom_rules.py) is interpreted: the replays, compiled or batched, follow the table's
# primitives, whose rules are engine code; a user rule is the program's code
USER_RULE = "a custom derivative rule (custom_vjp, custom_jvp): the interpreter runs the program's own rules"
# Derivatives taken inside the program that a replay follows: run under a recording outer
# level, their inner sweeps are taped there in outer primitives (lang/transforms.py declines
# a run whose inner rules read a traced value as a plain number)
NESTED_TRANSFORMS = frozenset({"grad", "value_and_grad"})


def _traced_builtins() -> frozenset:
    """The table's builtins a replay can recompute: differentiable at every argument."""
    names = set()
    for prim in builtin_primitives():
        if prim.nondiff or any(rule is None for rule in prim.vjps[:prim.arity or 0]):
            continue
        names.update(filter(None, (prim.builtin, prim.alias)))
    return frozenset(names)


def replayed_builtins() -> frozenset:
    """Every builtin name the analysis lets a replay recompute (their other arguments static where
    it asks for that): the names a test of replays walks."""
    return _traced_builtins() | _SHAPE_BUILTINS | frozenset(_OP_BUILTINS) | NESTED_TRANSFORMS


class _Analysis:
    def __init__(self, defs: set, others: set, dynamic: set):
        self.bound = defs | others      # every name the program binds: none of them is a builtin
        self.functions = defs - others  # the names only defs bind: the program's functions
        self.dynamic = dynamic          # names that may hold a value computed from an input
        self.traced = _traced_builtins()
        self.guarded: set = set()       # ids of the conditions (and their logic) a replay checks
        self.nested = False             # whether grad(f)(x) replays (guarded replays only)

    def builtin(self, call) -> str | None:
        """The name of the builtin `call` calls, or None (a computed callee, or a name the
        program binds: its own function, a parameter, an alias...)."""
        func = call.func
        return func.id if isinstance(func, nodes.Name) and func.id not in self.bound else None

    def guard_parts(self, test) -> list | None:
        """The logic nodes of an if/while condition that a recorded run logs as decisions, or
        None when some part cannot be logged (a chained comparison of computed values)."""
        if isinstance(test, nodes.BoolOp):
            parts = [test]
            for value in test.values:
                more = self.guard_parts(value)
                if more is None:
                    return None
                parts += more
            return parts
        if isinstance(test, nodes.Not):
            more = self.guard_parts(test.operand)
            return None if more is None else [test, *more]
        if isinstance(test, nodes.Compare):
            return [test]               # each comparison of a chain is a decision of its own
        return []                       # any other value: its truth is the decision

    def guard(self, x) -> None:
        if isinstance(x, (nodes.If, nodes.While, nodes.IfExp)) and not self.static(x.test):
            parts = self.guard_parts(x.test)
            if parts is not None:
                self.guarded.update(id(part) for part in (x, *parts))
        elif isinstance(x, nodes.For) and guarded_range(x, self.bound) and not self.static(x.iter):
            self.guarded.add(id(x.iter))    # its trip count and items: checked by the range's guard

    def static(self, e) -> bool:
        """Whether an expression's value is independent of the inputs."""
        if isinstance(e, _CONSTANT_NODES):
            return True
        if isinstance(e, nodes.Name):
            return e.id not in self.dynamic
        if isinstance(e, nodes.Call):
            name = self.builtin(e)
            keywords = [k.value for k in getattr(e, "keywords", ())]
            return name == "len" or (name in _SHAPE_BUILTINS and all(self.static(a) for a in (*e.args, *keywords)))
        return all(self.static(x) for x in _children(e))

    def blocker(self, x) -> str | None:
        """Why this node keeps the program from replaying, or None."""
        unknown = _UNREPLAYED.get(type(x).__name__)
        if unknown is not None:
            return unknown
        if id(x) in self.guarded:
            return None                 # a decision the replay checks (its operands still are walked)
        if isinstance(x, (nodes.Compare, nodes.BoolOp, nodes.Not)) and not self.static(x):
            return "a comparison or logic on a computed value"
        if isinstance(x, (nodes.If, nodes.While, nodes.IfExp)) and not self.static(x.test):
            return "a branch or loop condition on a computed value"
        if isinstance(x, nodes.BinChain) and not set(x.ops) <= _ARITHMETIC and not self.static(x):
            return f"the operator {next(o for o in x.ops if o not in _ARITHMETIC)}"
        if isinstance(x, nodes.Subscript):
            bounds = [b for i in x.index for b in ((i.lower, i.upper, i.step) if isinstance(i, nodes.Slice)
                                                    else (i,)) if b is not None]
            if not all(self.static(b) for b in bounds):
                return "an index computed from an input"
        if isinstance(x, nodes.Call):
            return self.call_blocker(x)
        return None

    def call_blocker(self, call) -> str | None:
        if not isinstance(call.func, nodes.Name):
            return None if self.transform(call.func) else "a call of a computed function"
        name = call.func.id
        if not all(self.static(k.value) for k in getattr(call, "keywords", ())):
            return f"{name}() with a keyword argument computed from an input"
        if name in self.functions:
            return None
        if name in self.bound:
            return f"{name}(), a name the program binds (not the builtin)"
        if name in RULE_DECORATORS:
            return USER_RULE
        if name in self.traced or self.transform(call):
            return None
        if name in _SHAPE_BUILTINS:
            return None if name == "len" or all(self.static(a) for a in call.args) else \
                f"{name}() of a computed value"
        if name in _OP_BUILTINS:
            fixed = call.args[_OP_BUILTINS[name]:] if name != "dot" else ()
            return None if all(self.static(a) for a in fixed) else f"{name}() with a computed axis or shape"
        return f"the builtin {name}()"

    def transform(self, call) -> bool:
        """Whether `call` is `grad(f)` or `value_and_grad(f, argnum)` of a function of the
        program (or of such a call: grad(grad(f))), the argnum static, the builtin not rebound."""
        if not (self.nested and isinstance(call, nodes.Call) and isinstance(call.func, nodes.Name)
                and call.func.id in NESTED_TRANSFORMS and call.func.id not in self.bound):
            return False
        if getattr(call, "keywords", ()) or not 1 <= len(call.args) <= 2:
            return False
        fn = call.args[0]
        if not (isinstance(fn, nodes.Name) and fn.id in self.functions or self.transform(fn)):
            return False
        return all(self.static(a) for a in call.args[1:])


def nested_derivatives(tree) -> bool:
    """Whether the program calls a derivative builtin that a replay follows (grad, value_and_grad)."""
    return any(isinstance(x, nodes.Call) and isinstance(x.func, nodes.Name) and x.func.id in NESTED_TRANSFORMS
               for x in walk(tree))


def _children(e) -> list:
    """The sub-expressions of an expression node (not its spans or operator spellings)."""
    out = []
    for name in e.__dataclass_fields__:
        if name in ("span", "op_span", "op_spans", "op", "ops"):
            continue
        v = getattr(e, name)
        for item in (v if isinstance(v, (tuple, list)) else (v,)):
            if hasattr(item, "__dataclass_fields__"):
                out.append(item)
    return out


def guarded_range(loop, bound) -> bool:
    """Whether a `for` loop iterates over a call of the builtin range() (no name `range` bound
    in the program, 1 to 3 arguments, no keyword), whose arguments a guard can check."""
    it = loop.iter
    return isinstance(it, nodes.Call) and isinstance(it.func, nodes.Name) and it.func.id == "range" and \
        "range" not in bound and 1 <= len(it.args) <= 3 and not getattr(it, "keywords", ()) and \
        isinstance(loop.target, nodes.Name)


def _assignments(tree, bound):
    """(name, value expression, or None for 'never static') for every binding in the program.
    A function's parameter is bound by each call's argument; a function used other than by a
    direct call (passed as a value) may get anything. With `bound` (every name the program
    binds; None: no guards), a loop over range() binds its variable to values its range's guard
    fixes: static on the path."""
    defs = {x.name: x for x in walk(tree) if isinstance(x, nodes.FunctionDef)}
    called = set()
    for x in walk(tree):
        if isinstance(x, nodes.Assign):
            for t in x.targets:
                yield t.id, (x.value if not x.unpack else None)
        elif isinstance(x, nodes.AugAssign):
            yield x.target.id, nodes.BinChain((x.target, x.value), (x.op,), (x.op_span,), x.span)
        elif isinstance(x, nodes.SubscriptAssign):       # x[i] = v: x becomes an updated copy
            yield x.target.value.id, x.value
            yield x.target.value.id, x.target
        elif isinstance(x, nodes.For):
            if bound is not None and guarded_range(x, bound):
                continue                        # fixed by the trip-count guard
            it = x.iter
            ranged = isinstance(it, nodes.Call) and isinstance(it.func, nodes.Name) and it.func.id == "range"
            names = loop_target_names(x.target)
            for name in names:                  # a tuple target unpacks: never a static range
                yield name, (it if ranged and len(names) == 1 else None)
        elif isinstance(x, nodes.Call) and isinstance(x.func, nodes.Name) and x.func.id in defs:
            called.add(id(x.func))
            params = defs[x.func.id].params
            for i, p in enumerate(params):
                yield p, (x.args[i] if len(x.args) == len(params) else None)
    for x in walk(tree, bindings=False):
        if isinstance(x, nodes.Name) and x.id in defs and id(x) not in called:
            for p in defs[x.id].params:
                yield p, None


def bound_names(tree, inputs) -> tuple:
    """(the names defs bind, every other name the program binds: an input, assigned, a loop's
    or a comprehension's target, a parameter of a def or a lambda, an import's alias)."""
    defs, others = set(), set(inputs)
    for x in walk(tree):
        if isinstance(x, nodes.FunctionDef):
            defs.add(x.name)
            others.update(x.params)
        elif isinstance(x, nodes.Lambda):
            others.update(x.params)
        elif isinstance(x, nodes.Assign):
            others.update(t.id for t in x.targets)
        elif isinstance(x, (nodes.AugAssign, nodes.SubscriptAssign)):
            others.add(x.target.id if isinstance(x, nodes.AugAssign) else x.target.value.id)
        elif isinstance(x, nodes.For):
            others.update(loop_target_names(x.target))
        elif isinstance(x, nodes.ListComp):
            others.update(name for target, _, _ in x.clauses for name in loop_target_names(target))
        elif isinstance(x, nodes.Import):
            others.update(bound for name, bound, _ in x.names if bound != name)     # `as` another name
    return defs, others


def replay_blocker(tree, inputs, guarded: bool = True) -> str | None:
    """Why the program (an AST) cannot be replayed from its tape, or None when it can.
    `guarded=False`: without guards either (a replay that checks no decision, as the batched
    replay of a stack of points, whose points could each decide otherwise)."""
    analysis = _Analysis(*bound_names(tree, inputs), set(inputs))
    analysis.nested = guarded
    bindings = list(_assignments(tree, analysis.bound if guarded else None))
    changed = True
    while changed:                      # grow the dynamic names to a fixed point
        changed = False
        for name, value in bindings:
            if name not in analysis.dynamic and (value is None or not analysis.static(value)):
                analysis.dynamic.add(name)
                changed = True
    if guarded:
        for x in walk(tree):
            analysis.guard(x)
    for x in walk(tree):
        reason = analysis.blocker(x)
        if reason is not None:
            return reason
    return None
