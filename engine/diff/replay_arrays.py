"""Compiled replay of array traces: a sweep plan's reverse sweep (diff/replay_sweep.py) made into
one generated Python function (the plan's annotation of each equation of the Program, down the
equations, a few lines each), so that the sweep of small and mid-sized arrays makes no per-equation
unpacking and no rule-dispatch call per step: only numpy's own calls remain (GradBench's ode,
lstm, gmm and nested evals sweep hundreds of such steps; their sweeps take 40-70% less time).
The forward pass keeps its closures: generated, it was no quicker (the closures call the
table's forward directly, and most forwards are one numpy call).

The code is built from the rules table only, never from the user's text: each rule is run once on
probes (the one rule tracer, diff/rule_tracer.py), and every operation it applies becomes a
line. Where a rule branches on a value (a finiteness test, a float's `g != 0.0`) the line is an
`if` whose other side calls the rule as it is on the same arguments: the rules are pure functions
of their arguments, so that call gives what the rule itself would. The same callables in the same
order on the same objects: the numbers of the planned sweep to the bit, which the caller checks
once before it keeps the function (diff/replay.py). One test is left out: the strong zero's
finiteness test of each product (a reduction per product, a quarter of ode's sweep); the caller
tests the result's finiteness instead, and where it is not finite runs the checked sweep
(core/rules/comparisons.py's ASSUMED_FINITE says why a finite result is the checked one).

`compile()` is applied to this generated text only (diff/generated.py); constants are bound
names in the function's namespace, never text; nothing is passed to eval or exec."""
from __future__ import annotations

import operator
import weakref

from ..core.accumulate import accumulate
from ..core.backend import np, xp
from ..core.complexes import is_complex_scalar
from ..core.notes import NOTES
from ..core.program import FUSED_REGIONS
from ..core.tape import lean_args
from . import replay_release
from .generated import functions_of
from .replay_sweep import reads_output, rows as plan_rows, sweep_arguments
from .rule_tracer import PROBES, Tracer, Untraceable, probe_of

MAX_ROWS = 4000             # longer sweeps keep the planned one (compile time, code size)
# A sweep is made once the planned sweeps it replaces have taken as long as making it would
# (ski rental: never more than twice the time of the better choice made in hindsight). Making
# costs about this much per row here (each rule traced on probes once per kind of arguments,
# then compile(), about half of it: lstm's 840 rows took 58 ms, nested's 1344 rows 112 ms): a
# function called a few times never pays for it, a checked, plotted or optimized one sweeps
# hundreds of times.
SWEEP_SECONDS_PER_ROW = 80e-6


def worth_making(spent: float, rows: int) -> bool:
    """Whether planned sweeps that took `spent` seconds in all have paid for making one of `rows`."""
    return spent >= SWEEP_SECONDS_PER_ROW * rows


def host_arrays(values) -> bool:
    """Every value a Python float, a numpy array or a complex number (Python's or a numpy complex
    scalar, as a run's complex numbers are): the values the probes stand for."""
    ndarray = np().ndarray
    return xp() is np() and all(v.__class__ is float or v.__class__ is ndarray or is_complex_scalar(v) for v in values)


class Leaves:
    """What a generated sweep was made for: each input's class, and an array's shape, dtype and
    strides (a sum's order follows the layout)."""
    __slots__ = ("kinds",)

    def __init__(self, values):
        self.kinds = [(v.__class__, getattr(v, "shape", None), getattr(v, "dtype", None), getattr(v, "strides", None))
                      for v in values]

    def take(self, values) -> bool:
        if len(values) != len(self.kinds):
            return False
        for v, (c, s, d, st) in zip(values, self.kinds):
            if v.__class__ is not c or (s is not None and (v.shape != s or v.dtype != d or v.strides != st)):
                return False
        return True


class ArraySweep:
    """A sweep plan's generated sweep: `run(values, seed)` -> the adjoint of each watched input.
    `leaves`: the seed and the inputs it was made for. While it lives, its rows count against
    LIVE_ROWS_MAX."""
    __slots__ = ("run", "leaves", "text", "__weakref__")

    def __init__(self, run, leaves, text, rows):
        self.run, self.leaves, self.text = run, leaves, text
        _live_rows[0] += rows
        weakref.finalize(self, _release, rows)


# A made sweep holds about 0.8 KB of code and names a row (lstm's 840 rows: 0.6 MB): the rows of
# all the sweeps alive in the process stay under this (about 40 MB), so a program replayed at
# many input signatures, each on many paths (32 x 8 traces), cannot fill memory with them; past
# it a plan keeps its planned sweep.
LIVE_ROWS_MAX = 50_000
_live_rows = [0]


def _release(rows) -> None:
    _live_rows[0] -= rows


def make_sweep(trace, plan, values: list, out: int, seed, watched: list) -> ArraySweep | None:
    """The generated reverse sweep of `plan` from the output `out` (replay_sweep.planned_adjoints
    row for row) at `values` and `seed` (its examples), or None."""
    try:
        return _sweep_function(trace, plan, values, out, seed, watched)
    except Untraceable:
        return None


def _sweep_function(trace, plan, values, out, seed, watched):
    inputs = trace.leaves
    # a trace with regions fused across its statements makes none (their steps leave no value:
    # diff/program_fusion.py); the values a replay released (diff/replay_release.py) no sweep reads
    released = {j for drops in replay_release.released(trace, watched) for j in drops}
    if plan.count > MAX_ROWS or _live_rows[0] + plan.count > LIVE_ROWS_MAX or FUSED_REGIONS in trace.annotations \
            or not host_arrays([v for j, v in enumerate(values) if j not in released]) \
            or not host_arrays([seed]):
        return None
    namespace = {"notes": NOTES}
    allowed = set()
    for _, _, args, _, e in plan_rows(trace, plan, out):
        allowed.update(id(a) for a in (*(args or ()), *e.args, *(e.params or {}).values()))
    tracer = Tracer(namespace, allowed, assume_finite=True)     # the caller tests the result (diff/replay.py)
    probes: dict = {}

    def value(j):
        probe = probes.get(j)
        if probe is None:
            probe = probes[j] = probe_of(f"v{j}", values[j], tracer)
        return probe

    body = [f"    g{out} = seed"]
    adjoints = adjoint_lines(trace, plan, value, tracer, out, probe_of(f"g{out}", seed, tracer), body)
    if adjoints is None:
        return None
    lines = ["def sweep(values, seed):"] + [f"    v{j} = values[{j}]" for j in sorted(probes)] + body
    lines.append("    return [" + ", ".join(f"g{w}" if w in adjoints else "None" for w in watched) + "]")
    text = "\n".join(lines) + "\n"
    made = functions_of(text, namespace, "<replayed array trace>")["sweep"]     # our own text (see above)
    return ArraySweep(made, Leaves([seed, *values[:inputs]]), text, plan.count)


def adjoint_lines(trace, plan, value, tracer, out, seed, body, arrays=True) -> dict | None:
    """THE sweep generator: the lines of the planned sweep (replay_sweep.planned_adjoints, row for
    row) from the output `out` seeded with the probe `seed`, appended to `body`, over `value(j)`,
    the probes of the tape's values; each VJP the form the planned sweep takes for its adjoint's
    example (the table's float form for a float). Returns the adjoints left by tape index (the
    inputs'), or None where a rule gives none. The compiled replay of floats uses it too
    (diff/replay_compiled.py), `arrays` False: no span set per row, no adjoint let go."""
    namespace = tracer.namespace
    adjoints = {out: seed}
    for i, pairs, args, gather, e in plan_rows(trace, plan, out):
        g = adjoints.get(i)
        if g is None:
            continue
        if arrays:
            namespace[f"s{i}"] = e.span
            body.append(f"    notes.span = s{i}")
        prim, params = e.prim, e.params
        if gather is not None or args is None:
            refs = _row_arguments(e, plan.at[i].run[0], value)
        else:
            refs = list(args)
        ans = value(i) if reads_output(e, plan.at[i].run[0]) else None     # a replay may release one not read
        for vjp, float_vjp, j in pairs:
            if g.example.__class__ is float:        # the table's form planned_adjoints takes
                vjp = float_vjp
            prev = adjoints.get(j)        # the first contribution is the adjoint itself
            contrib = tracer.apply(vjp, [g, ans, *refs], params or {}, "c" if prev is not None else f"g{j}", body,
                                   release=arrays)
            if contrib.example is None:
                return None
            if prev is None:
                adjoints[j] = contrib
            elif prev.example.__class__ is float:
                adjoints[j] = tracer.apply(operator.add, [prev, contrib], {}, f"g{j}", body)
            else:
                adjoints[j] = tracer.apply(accumulate, [prev, contrib], {}, f"g{j}", body)
        del adjoints[i]
        if arrays:
            body.append(f"    g{i} = None")
    return adjoints


def _row_arguments(e, live, value) -> list:
    """What the plan's row passes its VJPs (replay_sweep's `sweep_arguments`: the lean tape's
    arguments, the replayed values it reads filled in), as probes of the values it keeps as they
    are and constants of the rest (shape stand-ins: fixed at a trace's shapes)."""
    prim, full = e.prim, sweep_arguments(e, live, value)
    real = tuple(Tracer.real(v) for v in full)
    saved = lean_args(prim, live, real)
    return [full[pos] if type(full[pos]) in PROBES and saved[pos] is real[pos] else saved[pos]
            for pos in range(len(full))]
