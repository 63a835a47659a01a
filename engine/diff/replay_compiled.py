"""Compiled replay of scalar traces: a trace whose every value is a Python float becomes one
generated Python function for its forward pass (with its guards) and one for forward and
reverse sweep, so a replay makes no closure call, list append or tape entry per step (made
once the trace has been replayed often enough to pay for it: COMPILE_AFTER).

The code is built from the rules table only, never from the user's text: each step's float
forward and each VJP rule's float form (the table's `float_vjps`: the form a sweep takes for a
float adjoint) is traced once with `Stand` stand-ins, every operation it applies becomes one line, and
every branch it takes on a value is explored both ways and becomes an `if`. Constants, the
rules' own and the program's, are bound names in the function's namespace, never text. A rule
that does anything else (calls math, reads a shape, notes a kink) is called as it is, bound by
name. So the floats go through the same operations in the same order as the step-by-step
replay: the same numbers to the last bit (tests/test_replay_compiled.py walks the table).

`compile()` is applied to this generated text only (diff/generated.py): nothing is passed to
eval or exec. A compiled run that raises (Python's `/` by zero where the rule falls back to IEEE) or notes a
kink (whose span only the step replay sets) is re-run by the step replay."""
from __future__ import annotations

import operator

from ..core.notes import NOTES
from ..lang.recorded_decisions import range_key
from .bits import same_bits
from .fallbacks import STEP_ERRORS, Fallback
from .generated import functions_of
from .replay import replay_adjoints, replay_values
from .probes import REFUSALS, Untraceable
from .replay_guards import TIE_COMPARISONS, PathChanged

COMPILE_MAX_STEPS = 4000            # longer traces keep the step replay (compile time, code size)
# A trace is compiled after len(steps) // COMPILE_AFTER step replays: making the functions costs
# about 100 µs a step, a compiled run saves about 1.5 µs a step, so a trace used a few times only
# never pays for it (x*x is compiled at its first replay).
COMPILE_AFTER = 64
RULE_MAX_PATHS = 16                 # branch combinations one rule may take
INLINE = {operator.add: "+", operator.sub: "-", operator.mul: "*"}     # Python's own float operators


class Stand:
    """A float while a rule is traced: each operation on it becomes a line of the tracer's."""
    __slots__ = ("name", "tracer")

    def __init__(self, name, tracer):
        self.name, self.tracer = name, tracer

    def __array_ufunc__(self, *args, **kwargs):
        raise Untraceable("numpy on a float")

    def __getattr__(self, name):
        if hasattr(float, name):        # a float's attribute or method: not followed
            raise Untraceable(f"float.{name}")
        raise AttributeError(name)      # what a float says

    def __bool__(self):
        return self.tracer.decide(self.name)

    def __float__(self):
        raise Untraceable("a function of a float")

    __index__ = __int__ = __float__

    def __pow__(self, o):           # float ** float may be complex: the rule's check must run
        raise Untraceable("a power")

    __rpow__ = __pow__

    # + - * / of two floats is a float; a comparison is a bool (a Truth)
    def __neg__(self): return self.tracer.let(f"-{self.name}")
    def __pos__(self): return self
    def __add__(self, o): return self.tracer.binary("+", self, o)
    def __radd__(self, o): return self.tracer.binary("+", o, self)
    def __sub__(self, o): return self.tracer.binary("-", self, o)
    def __rsub__(self, o): return self.tracer.binary("-", o, self)
    def __mul__(self, o): return self.tracer.binary("*", self, o)
    def __rmul__(self, o): return self.tracer.binary("*", o, self)
    def __truediv__(self, o): return self.tracer.binary("/", self, o)
    def __rtruediv__(self, o): return self.tracer.binary("/", o, self)
    def __eq__(self, o): return self.tracer.compare("==", self, o)
    def __ne__(self, o): return self.tracer.compare("!=", self, o)
    def __lt__(self, o): return self.tracer.compare("<", self, o)
    def __le__(self, o): return self.tracer.compare("<=", self, o)
    def __gt__(self, o): return self.tracer.compare(">", self, o)
    def __ge__(self, o): return self.tracer.compare(">=", self, o)
    __hash__ = object.__hash__


class Truth:
    """A comparison's result while a rule is traced: a bool, which the rule may only branch on."""
    __slots__ = ("name", "tracer")

    def __init__(self, name, tracer):
        self.name, self.tracer = name, tracer

    def __bool__(self):
        return self.tracer.decide(self.name)

    def __getattr__(self, name):
        raise Untraceable(f"bool.{name}")

    def __array_ufunc__(self, *args, **kwargs):
        raise Untraceable("numpy on a bool")

    def __float__(self):
        raise Untraceable("arithmetic on a bool")

    __index__ = __int__ = __neg__ = __pos__ = __invert__ = __float__

    def __add__(self, o):
        raise Untraceable("arithmetic on a bool")

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __add__
    __pow__ = __rpow__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __and__ = __or__ = __add__
    __rand__ = __ror__ = __xor__ = __rxor__ = __add__
    __hash__ = object.__hash__


class Tracer:
    """One run of a rule on stand-ins, following `decisions` at its first branches (True after).
    Values are named in order (the same names on every path up to where they part); constants
    get names of their own, unique over all paths (they may differ after a branch)."""

    def __init__(self, prefix, namespace, decisions, constants):
        self.prefix, self.namespace, self.decisions, self.constants = prefix, namespace, decisions, constants
        self.items, self.taken, self.count = [], [], 0

    def name(self) -> str:
        self.count += 1
        return f"{self.prefix}_{self.count}"

    def ref(self, v) -> str:
        if type(v) is Stand:
            return v.name
        if type(v) is Truth:
            raise Untraceable("a bool as a number")
        if v.__class__ not in (float, int, bool):
            raise Untraceable(f"a {v.__class__.__name__} in a rule")
        self.constants.append(v)
        name = f"{self.prefix}_k{len(self.constants)}"
        self.namespace[name] = v        # a bound constant, never formatted into the text
        return name

    def let(self, expr) -> Stand:
        name = self.name()
        self.items.append(("let", name, expr))
        return Stand(name, self)

    def binary(self, op, a, b) -> Stand:
        return self.let(f"{self.ref(a)} {op} {self.ref(b)}")

    def compare(self, op, a, b) -> Truth:
        line = f"{self.ref(a)} {op} {self.ref(b)}"
        name = self.name()
        self.items.append(("let", name, line))
        return Truth(name, self)

    def decide(self, name) -> bool:
        k = len(self.taken)
        outcome = self.decisions[k] if k < len(self.decisions) else True
        self.taken.append(outcome)
        self.items.append(("if", name, outcome))
        if len(self.taken) > 8:
            raise Untraceable("too many branches")
        return outcome


def trace_paths(rule, args, prefix, namespace) -> list:
    """Every path of `rule(*args)` (args: names of values, or constants) as items: ("let", name,
    expression), ("if", name, outcome) and last ("result", name). Untraceable if some path does
    what a line cannot (or notes anything: the step replay reports notes with their spans)."""
    paths, decisions, constants = [], [], []
    kinks, detached = len(NOTES.kinks), len(NOTES.detached)
    while True:
        tracer = Tracer(prefix, namespace, decisions, constants)
        stands = [Stand(a, tracer) if a.__class__ is str else a for a in args]
        try:
            out = rule(*stands)
            result = tracer.ref(out)
        except Untraceable:
            raise
        except REFUSALS as exc:          # what a rule does to something it takes for a float
            raise Untraceable(str(exc)) from None
        finally:
            noted = len(NOTES.kinks) > kinks or len(NOTES.detached) > detached
            del NOTES.kinks[kinks:], NOTES.detached[detached:]
        if noted:
            raise Untraceable("the rule notes a kink")
        paths.append(tracer.items + [("result", result)])
        taken = tracer.taken
        while taken and not taken[-1]:
            taken.pop()
        if not taken:
            return paths
        decisions = taken[:-1] + [False]
        if len(paths) >= RULE_MAX_PATHS:
            raise Untraceable("too many paths")


def emit(paths, depth, indent, target, lines) -> None:
    """The lines of a rule's paths (which share their items up to each branch), the result in `target`."""
    while True:
        kind, name, what = (paths[0][depth] + (None,))[:3]
        if kind == "let":
            lines.append(f"{indent}{name} = {what}")
            depth += 1
        elif kind == "result":
            lines.append(f"{indent}{target} = {name}")
            return
        else:
            yes = [p for p in paths if p[depth][2]]
            no = [p for p in paths if not p[depth][2]]
            lines.append(f"{indent}if {name}:")
            emit(yes, depth + 1, indent + "    ", target, lines)
            lines.append(f"{indent}else:")
            emit(no, depth + 1, indent + "    ", target, lines)
            return


def apply_rule(rule, args, target, prefix, namespace, lines, indent="    ") -> None:
    """`target = rule(*args)` as lines: traced, or the rule called by a bound name."""
    try:
        emit(trace_paths(rule, args, prefix, namespace), 0, indent, target, lines)
        return
    except Untraceable:
        pass
    names = []
    for i, a in enumerate(args):
        if a.__class__ is str:
            names.append(a)
        else:
            namespace[f"{prefix}_a{i}"] = a
            names.append(f"{prefix}_a{i}")
    namespace[f"{prefix}_rule"] = rule
    lines.append(f"{indent}{target} = {prefix}_rule({', '.join(names)})")


def rule_source(rule, args, target="r", prefix="t") -> tuple:
    """A rule (a VJP or JVP form of the table, or a float forward) as Python source: the lines
    of `target = rule(*args)` for floats, traced with stand-ins (args: operand names, or
    constants), every branch it takes on a value an `if`, and the namespace of the constants
    the lines name (never formatted into the text). Untraceable where a line cannot show what
    the rule does. E.g. rule_source(TABLE["mul"].float_vjps[0], ["g", None, "x", "y"]) gives
    mul's adjoint of x: `t_1 = g == t_k1` ... `r = t_2`."""
    namespace, lines = {}, []
    emit(trace_paths(rule, args, prefix, namespace), 0, "", target, lines)
    return "\n".join(lines) + "\n", namespace


# ---- a whole trace ----------------------------------------------------------------------------

class Compiled:
    """A trace's generated functions: `forward(*leaves)` -> the output, and
    `gradient(*leaves, seed)` -> (output, the adjoint of each leaf or None); both raise
    PathChanged at a guard whose decision differs (or at a tie)."""
    __slots__ = ("forward", "gradient", "tape_length", "text")

    def __init__(self, forward, gradient, tape_length, text):
        self.forward, self.gradient, self.tape_length, self.text = forward, gradient, tape_length, text


def compilable(trace) -> bool:
    return trace.floats and trace.output is not None and len(trace.steps) <= COMPILE_MAX_STEPS and \
        all(guard.opname for guard in trace.guards)


def step_arguments(parents, args) -> list:
    """A step's arguments: the names of the traced values, the recorded constants as they are."""
    full = list(args)
    for pos, j in parents:
        full[pos] = f"v{j}"
    return full


def guard_lines(number, guard, namespace) -> list:
    refs = []
    for k, (index, constant) in enumerate(guard.sources):
        if index is not None:
            refs.append(f"v{index}")
        elif constant.__class__ in (float, int, bool):
            namespace[f"guard{number}_{k}"] = constant
            refs.append(f"guard{number}_{k}")
        else:
            raise Untraceable("a guard on a constant that is no number")
    outcome = guard.outcome
    if guard.opname == "range":             # the loop's items, as range() makes them
        namespace["range_key"] = range_key
        namespace[f"guard{number}_items"] = outcome
        return [f"    items = range_key({', '.join(refs)})",
                f"    if items != guard{number}_items:",
                f"        raise PathChanged({number}, items)"]
    if guard.opname == "truth":
        return [f"    if {refs[0]} {'==' if outcome else '!='} 0.0:",
                f"        raise PathChanged({number}, {not outcome})"]
    x, y = refs
    lines = [f"    if {x} == {y}:", f"        raise PathChanged({number}, None)"] \
        if guard.opname in TIE_COMPARISONS else []
    test = f"not ({x} {guard.opname} {y})" if outcome else f"{x} {guard.opname} {y}"
    return lines + [f"    if {test}:", f"        raise PathChanged({number}, {not outcome})"]


def forward_lines(trace, namespace) -> list:
    lines, guards, index = [], list(trace.guards), trace.leaves
    number = 0
    for prim, parents, args, params, span in trace.steps:
        while number < len(guards) and guards[number].position <= index:
            lines += guard_lines(number, guards[number], namespace)
            number += 1
        call = prim.op.float_impl
        full = step_arguments(parents, args)
        symbol = INLINE.get(call)
        if symbol is not None and all(a.__class__ is str for a in full):
            lines.append(f"    v{index} = {full[0]} {symbol} {full[1]}")
        else:
            apply_rule(call, full, f"v{index}", f"f{index}", namespace, lines)
        index += 1
    for k in range(number, len(guards)):
        lines += guard_lines(k, guards[k], namespace)
    return lines


def sweep_lines(trace, namespace) -> list:
    """The reverse sweep over every step (all the inputs watched), adjoints accumulated in the
    order tape.sweep accumulates them."""
    lines = [f"    g{trace.output} = seed"]
    reached = {trace.output}
    for index in range(trace.output, trace.leaves - 1, -1):
        if index not in reached:
            continue
        prim, parents, args, params, span = trace.steps[index - trace.leaves]
        full = step_arguments(parents, args)
        ans = f"v{index}" if prim.needs_ans else None
        for pos, j in parents:
            apply_rule(prim.float_vjps[pos], [f"g{index}", ans, *full], "c", f"b{index}_{pos}", namespace, lines)
            lines.append(f"    g{j} = g{j} + c" if j in reached else f"    g{j} = c")
            reached.add(j)
    leaves = ", ".join(f"g{i}" if i in reached else "None" for i in range(trace.leaves))
    return lines + [f"    return v{trace.output}, ({leaves},)"]


def compile_trace(trace) -> Compiled | None:
    """The generated functions of a float trace, or None where it has none (arrays, a long trace)."""
    if not compilable(trace):
        return None
    namespace = {"PathChanged": PathChanged}
    try:
        forward = forward_lines(trace, namespace)
        sweep = sweep_lines(trace, namespace)
    except Untraceable:
        return None
    leaves = ", ".join(f"v{i}" for i in range(trace.leaves))
    text = "\n".join([f"def forward({leaves}):", *forward, f"    return v{trace.output}",
                      f"def gradient({leaves}{', ' if leaves else ''}seed):", *forward, *sweep]) + "\n"
    made = functions_of(text, namespace, "<replayed trace>")      # our own generated text (see above)
    return Compiled(made["forward"], made["gradient"], trace.leaves + len(trace.steps), text)


# ---- made once per trace, checked against the step replay -----------------------------------

def same_float(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.__class__ is float and same_bits(a, b)


def compiled_for(trace, leaves: list):
    """The trace's compiled functions (False where it has none, or not yet), made once it has
    been replayed often enough, and kept only if they give the step replay's numbers at `leaves`
    to the bit."""
    if trace.compiled is None:
        trace.uses += 1
        if trace.uses <= len(trace.steps) // COMPILE_AFTER:
            return False                # not yet: the step replay runs
        made = checked(trace, leaves)
        if made is RETRY:
            return False
        trace.compiled = made or False
    return trace.compiled


RETRY = "retry"         # the check could not run at these values (another path, a division by zero)


def checked(trace, leaves):
    made = compile_trace(trace)
    if made is None:
        return None
    kinks = len(NOTES.kinks)
    try:
        values = replay_values(trace, list(leaves))
        _, adjoints = replay_adjoints(trace, values, 1.0, list(range(trace.leaves)))
        value, fast = made.gradient(*leaves, 1.0)
        forward = made.forward(*leaves)
    except (Fallback, *STEP_ERRORS):    # another path, a division by zero: checked at other values
        return RETRY
    finally:
        del NOTES.kinks[kinks:]
    expected = values[trace.output]
    if same_float(value, expected) and same_float(forward, expected) and \
            all(same_float(a, b) for a, b in zip(fast, adjoints)):
        return made
    return None
