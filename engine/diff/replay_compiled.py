"""Compiled replay of scalar traces: a trace whose every value is a Python float (or, issue 32,
a float or a complex number, some complex) becomes one generated Python function for its
forward pass (with its guards) and one for forward and reverse sweep, so a replay makes no
closure call, list append or tape entry per step (made once the trace has been replayed often
enough to pay for it: COMPILE_AFTER).

The code is built from the rules table only, never from the user's text: each step's forward
(the float forward where its arguments were floats, else `impl`: the step replay's own
callable) and each VJP rule's form for its adjoint (the table's `float_vjps` for a float
adjoint, its `vjps` for a complex one, as the planned sweep takes them) is traced by the one
rule tracer (diff/rule_tracer.py, as the compiled replay of arrays is) on probes of the values
at the leaves the function is made at: every operation it applies becomes one line, and a
branch on a value an `if` whose other side calls the rule as it is. Constants, the rules' own
and the program's, are bound names in the function's namespace, never text. A rule that does
anything else (calls math, reads a shape, notes a kink) is called as it is, bound by name. So
the numbers go through the same operations in the same order as the step-by-step replay: the
same numbers to the last bit (tests/test_replay_compiled.py walks the table,
tests/test_replay_complex.py its complex rules), checked once where the functions are made.

`compile()` is applied to this generated text only (diff/generated.py): nothing is passed to
eval or exec. A compiled run that raises (Python's `/` by zero where the rule falls back to IEEE) or notes a
kink (whose span only the step replay sets) is re-run by the step replay."""
from __future__ import annotations

import operator

from ..core.backend import np
from ..core.complexes import is_complex_scalar
from ..core.notes import NOTES
from ..lang.values import range_key
from .bits import same_bits
from .fallbacks import STEP_ERRORS, Fallback, LoweringRefused
from .generated import functions_of
from .replay import replay_adjoints, replay_values, step_callable, takes_floats
from .replay_arrays import adjoint_lines
from .replay_sweep import sweep_plan
from .rule_tracer import Tracer, Untraceable, probe_of
from .replay_guards import TIE_COMPARISONS, PathChanged

COMPILE_MAX_STEPS = 4000            # longer traces keep the step replay (compile time, code size)
# A trace is compiled after trace.operations() // COMPILE_AFTER step replays: making the functions costs
# about 100 µs a step, a compiled run saves about 1.5 µs a step, so a trace used a few times only
# never pays for it (x*x is compiled at its first replay).
COMPILE_AFTER = 64
INLINE = {operator.add: "+", operator.sub: "-", operator.mul: "*"}     # Python's own float operators


# ---- a whole trace ----------------------------------------------------------------------------

class Compiled:
    """A trace's generated functions: `forward(*leaves)` -> the output, and
    `gradient(*leaves, seed)` -> (output, the adjoint of each leaf or None); both raise
    PathChanged at a guard whose decision differs (or at a tie)."""
    __slots__ = ("forward", "gradient", "tape_length", "text")

    def __init__(self, forward, gradient, tape_length, text):
        self.forward, self.gradient, self.tape_length, self.text = forward, gradient, tape_length, text


def compilable(trace) -> bool:
    return (trace.floats or trace.complex_scalars) and trace.output is not None and trace.operations() <= COMPILE_MAX_STEPS and \
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


class Lines:
    """The generated function's values as probes of the one rule tracer (diff/rule_tracer.py):
    `v{j}` the tape's values, whose examples are the values at the leaves it is made at."""

    def __init__(self, values, namespace):
        self.values, self.tracer, self.probes = values, Tracer(namespace, set()), {}

    def value(self, j):
        probe = self.probes.get(j)
        if probe is None:
            probe = self.probes[j] = probe_of(f"v{j}", self.values[j], self.tracer)
        return probe

    def arguments(self, parents, args) -> list:
        """A step's arguments: probes of the traced values, the recorded constants as they are."""
        full = list(args)
        for pos, j in parents:
            full[pos] = self.value(j)
        return full


def forward_lines(trace, made) -> list:
    lines, guards, index = [], list(trace.guards), trace.leaves
    number = 0
    for e in trace.body():
        prim, parents, args = e.prim, e.parents, e.args
        while number < len(guards) and guards[number].position <= index:
            lines += guard_lines(number, guards[number], made.tracer.namespace)
            number += 1
        floats = trace.floats or takes_floats(trace.equations, e)
        call = step_callable(prim, e.params, floats)        # the step replay's own callable
        full = step_arguments(parents, args)
        symbol = INLINE.get(call) if floats else None
        if symbol is not None and all(a.__class__ is str for a in full):
            lines.append(f"    v{index} = {full[0]} {symbol} {full[1]}")
        else:
            made.tracer.apply(call, made.arguments(parents, args), e.params or {}, f"v{index}", lines)
        index += 1
    for k in range(number, len(guards)):
        lines += guard_lines(k, guards[k], made.tracer.namespace)
    return lines


def sweep_lines(trace, made) -> list:
    """The reverse sweep over every step (all the inputs watched): the sweep generator of the
    compiled replays (diff/replay_arrays.py's adjoint_lines) over the planned sweep's annotations
    of the equations, each VJP the table's float form (the adjoint is a float), seeded with 1.0 at the making."""
    lines = [f"    g{trace.output} = seed"]
    seed = probe_of(f"g{trace.output}", 1.0, made.tracer)
    adjoints = adjoint_lines(trace, sweep_plan(trace, list(range(trace.leaves))), made.value, made.tracer, trace.output,
                             seed, lines, arrays=False)
    if adjoints is None:
        raise Untraceable("a rule gave no adjoint")
    leaves = ", ".join(f"g{i}" if i in adjoints else "None" for i in range(trace.leaves))
    return lines + [f"    return v{trace.output}, ({leaves},)"]


def compile_trace(trace, values) -> Compiled | None:
    """The generated functions of a float trace, made at `values` (every tape value at some
    leaves: the tracer's examples), or None where it has none (arrays, a long trace)."""
    if not compilable(trace):
        return None
    namespace = {"PathChanged": PathChanged}
    made = Lines(values, namespace)
    try:
        forward = forward_lines(trace, made)
        sweep = sweep_lines(trace, made)
    except (Untraceable, *STEP_ERRORS):
        return None
    leaves = ", ".join(f"v{i}" for i in range(trace.leaves))
    text = "\n".join([f"def forward({leaves}):", *forward, f"    return v{trace.output}",
                      f"def gradient({leaves}{', ' if leaves else ''}seed):", *forward, *sweep]) + "\n"
    functions = functions_of(text, namespace, "<replayed trace>")      # our own generated text (see above)
    return Compiled(functions["forward"], functions["gradient"], len(trace.equations), text)


# ---- made once per trace, checked against the step replay -----------------------------------

def same_scalar(a, b) -> bool:
    """The same Python float to the bit (None: a symbolic zero); in a trace holding complex
    numbers, the same complex number (Python's, or numpy's of the same dtype) or 0-d array (a
    rule's `where`)."""
    if a is None or b is None:
        return a is b
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is float or a.__class__ is complex:
        return same_bits(a, b)
    return (is_complex_scalar(a) or a.__class__ is np().ndarray and a.ndim == 0) and a.dtype == b.dtype and \
        same_bits(a, b)


def compiled_for(trace, leaves: list):
    """The trace's compiled functions (False where it has none, or not yet), made once it has
    been replayed often enough, and kept only if they give the step replay's numbers at `leaves`
    to the bit: where they do not, LoweringRefused (undocumented: a lowering's bug), once."""
    if trace.compiled is None:
        trace.uses += 1
        if trace.uses <= trace.operations() // COMPILE_AFTER:
            return False                # not yet: the step replay runs
        made = checked(trace, leaves)
        if made is RETRY:
            return False
        trace.compiled = made if made.__class__ is Compiled else False
        if made is DIFFERS:             # a lowering's bug: counted (diff/function.py), not a silent slowdown
            raise LoweringRefused("the compiled float code differs from the step replay")
    return trace.compiled


RETRY = "retry"         # the check could not run at these values (another path, a division by zero)
DIFFERS = "differs"     # the compiled functions' numbers are not the step replay's to the bit


def checked(trace, leaves):
    kinks = len(NOTES.kinks)
    try:
        values = replay_values(trace, list(leaves))
        _, adjoints = replay_adjoints(trace, values, 1.0, list(range(trace.leaves)))
    except (Fallback, *STEP_ERRORS):    # another path, a division by zero: checked at other values
        return RETRY
    finally:
        del NOTES.kinks[kinks:]
    made = compile_trace(trace, values)
    if made is None:
        return None
    try:
        value, fast = made.gradient(*leaves, 1.0)
        forward = made.forward(*leaves)
    except (Fallback, *STEP_ERRORS):
        return RETRY
    finally:
        del NOTES.kinks[kinks:]
    expected = values[trace.output]
    if same_scalar(value, expected) and same_scalar(forward, expected) and \
            all(same_scalar(a, b) for a, b in zip(fast, adjoints)):
        return made
    return DIFFERS
