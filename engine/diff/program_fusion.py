"""The fusion pass's lowering for the replay of a large trace: each region that
core/program_regions.py finds in the trace's Program (a run of elementwise equations over arrays
of one shape, across statements and calls) runs as the kernels core/regions.py makes of its
plan, forward and reverse, instead of one equation at a time.

The Program keeps its equations and positions (its guards, its sweep plans and every other
annotation read them by position): the region's root equation becomes one equation of the
region's primitive over the region's leaves (`RegionEquation`), and each other equation of the
region one of FUSED_AWAY, which computes nothing (no equation outside the region reads it: the
pass's condition) and to which the sweep passes no adjoint (the root's arguments are the leaves).
Each keeps its traced arguments, so the plan of a sweep counts the steps the interpreter's tape
holds.

The region's forward is its kernels' (the same bits as numpy's ops: the pass admits only the
equations whose kernels round as numpy does), its reverse its kernels' run on what that forward
left (core/regions.py's RegionState), handed to the sweep leaf by leaf. Where the kernels decline
(a value not finite, numexpr missing) or the reverse meets no forward of its own (a second sweep
over the same values: a Jacobian's), the region runs op by op through the table's impls and
rules (regions.replay_reverse), as an unfused replay would."""
from __future__ import annotations

from contextlib import contextmanager

from ..core.primitives import Primitive
from ..core.program import FUSED_REGIONS
from ..core.program_regions import ProgramRegion, find_regions
from ..core.rule_tracer import Probe, Untraceable
from ..core.region_plan import forward
from ..core.notes import NOTES
from ..core.tape import Entry, Tape, Var
from .fallbacks import LoweringRefused
from .replay_release import forget_released


def _nothing(*args):
    return None


def _no_adjoint(g, ans, *args):
    raise LoweringRefused("an adjoint asked of an equation a fused region computes")


def _refused_jvp(*args):
    raise LoweringRefused("a tangent through a fused region of the Program", documented=True)


# an equation of a region other than its root (elementwise entries take at most 3 arguments)
FUSED_AWAY = Primitive("fused away", _nothing, vjps=(_no_adjoint,) * 3, jvps=(_refused_jvp,) * 3, needs_args=False)


class RegionEquation:
    """One region of a trace's Program as one equation: `impl` over the leaves' values, and a
    VJP per leaf position, which hands out the adjoints the region's reverse kernels computed
    from what the last forward left (`made`: (its output, its reverse: the kernels' entry's VJPs,
    or the rules' over the values a forward run op by op made)), or op by op."""

    def __init__(self, region: ProgramRegion):
        self.region = region
        self.made = None
        # whether its leaves are watched (its forward leaves what its reverse kernels read); not
        # in a trace whose gradients are interpreted (diff/large_trace.py): its values' kernels
        # alone, and a sweep through it (a Jacobian's) runs op by op
        self.watched = True
        self.pending: dict = {}
        traced = [pos for pos, (kind, _) in enumerate(region.leaves) if kind == "equation"]
        self.traced = frozenset(traced)
        vjps = [self.vjp_of(pos) if pos in self.traced else None for pos in range(len(region.leaves))]
        self.prim = Primitive("fused program region", self.impl, vjps=vjps, jvps=[_refused_jvp] * len(vjps),
                              arity=len(vjps), needs_args=True, needs_ans=True)

    def impl(self, *leaves):
        from ..core import regions    # lazy: the kernel machinery loads with the first region over arrays
        plan = self.region.plan
        self.pending = {}
        self.made = None
        if not self.watched:            # (a guarded kink met: op by op, each note at its own span)
            out = regions.run(plan, list(leaves))
            return out if out is not None else forward(plan.program, leaves, spans=True)[-1]
        tape = Tape()
        boxed = [tape.watch(v) if pos in self.traced else v for pos, v in enumerate(leaves)]
        out = regions.run(plan, boxed)
        if out.__class__ is Var:
            entry = tape.entries[-1]
            self.made = (out.value, lambda g: {p: entry.prim.vjps[p](g, None, *entry.args) for p in self.traced})
            return out.value
        values = forward(plan.program, leaves, spans=True)     # op by op, each note at its own span
        self.made = (values[-1], lambda g: regions.region_vjp(plan.program, values, g, self.traced))
        return values[-1]

    def vjp_of(self, pos):
        def vjp(g, ans, *leaves):
            return self.adjoint(pos, g, ans, leaves)
        return vjp

    def adjoint(self, pos, g, ans, leaves):
        from ..core import regions
        if pos not in self.pending:
            made, self.made = self.made, None
            if made is not None and made[0] is ans:     # the reverse of the forward that made ans
                self.pending = made[1](g)
            elif g.__class__ is Probe or ans.__class__ is Probe:
                raise Untraceable("a fused region of the Program is no rule to trace")
            else:
                self.pending = regions.replay_reverse(self.region.plan, list(leaves), g, self.traced)
        return self.pending.pop(pos)


@contextmanager
def values_alone(trace):
    """While a replay of `trace` no sweep follows runs (a value's): its regions run their forward
    kernels alone, as a trace's whose gradients are interpreted do."""
    lowered = [r for r in trace.annotations[FUSED_REGIONS].values() if r.watched]
    for region in lowered:
        region.watched = False
    try:
        yield
    finally:
        for region in lowered:
            region.watched = True


def trace_regions(trace, sums=True) -> list:
    """The regions the pass finds in `trace` (a recorded Program whose equations still hold their
    values: not sealed); `sums`: as core/program_regions.py's find_regions."""
    values = [e.value for e in trace.equations]
    guarded = {j for guard in trace.guards for j, _ in guard.sources if j is not None}
    return find_regions(trace, values, guarded, sums)


def fuse_trace(trace, found, watched=True) -> list:
    """Rewrite the regions `found` of `trace` (`trace_regions`) in place, as the module says
    (`watched`: RegionEquation's). Returns the regions."""
    values = [e.value for e in trace.equations]
    equations = trace.equations
    forget_released(trace)
    for region in found:
        lowered = RegionEquation(region)
        lowered.watched = watched
        trace.annotations.setdefault(FUSED_REGIONS, {})[region.positions[-1]] = lowered
        root = region.positions[-1]
        parents = tuple((pos, ref) for pos, (kind, ref) in enumerate(region.leaves) if kind == "equation")
        args = tuple(values[ref] if kind == "equation" else ref for kind, ref in region.leaves)
        old = equations[root]
        equations[root] = Entry(lowered.prim, parents, args, None, None, old.span, old.value)
        trace.forwards[root - trace.leaves] = _forward(lowered.impl, parents, args, old.span)
        for p in region.positions[:-1]:
            old = equations[p]
            equations[p] = Entry(FUSED_AWAY, old.parents, old.args, None, None, old.span, old.value)
            trace.forwards[p - trace.leaves] = _nothing
    return found


def _forward(impl, parents, args, span):
    """The root's forward: the region over the leaves' replayed values (constants as recorded)."""
    def forward(values):
        full = list(args)
        for pos, j in parents:
            full[pos] = values[j]
        NOTES.span = span
        return impl(*full)
    return forward
