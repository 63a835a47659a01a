"""Fused elementwise regions: several table primitives over large float64 (or complex128) arrays, evaluated as a
few kernels (numexpr's, and numpy's vectorized functions) and recorded on the tape as ONE entry.

A region (`RegionPlan`) is a small Program of elementwise table primitives over leaves, found by
the fusion pass over a recorded Program (core/program_regions.py), in an interpreted run's
pending values (core/lazy.py) or a large trace's replay (diff/program_fusion.py). The one rule tracer records the table's forward impls over
probes of the leaves and the table's own VJP rules run through the region by the one reverse
sweep (core/tape.py's `sweep_equations`), and the fusion lowering (core/fusion.py) makes those equations
the steps of a core/region_program.py `RegionBuilder`: its forward and VJP kernels, so the rules
table stays the one source of derivatives. The schedule keeps a few
intermediates as arrays (those dear to recompute) and inlines the rest, so the tape holds the
region's leaves and those few arrays, nothing of n per op.

Honesty: kink primitives stay outside regions, except sqrt, whose kink (an argument of exactly
0) is guarded: the output is made nan there, and a region whose output or gradient is not finite
runs op by op (the caller's unfused path), so notes, NaN provenance and errors are those of an
unfused run. Anything a kernel cannot express is `Unfusable` when it is lowered; that layout then
always runs op by op. numexpr missing (fused.evaluate gives None) means op by op too.

Complex128 leaves (issue 32) fuse to the interpreter's bits: each step over complex values is
numexpr's where the entry's `complex_bits` says numexpr computes numpy's bits (+ - conj real imag
==), else numpy's own ufunc as a step of its own (region_program.NUMPY_UFUNCS: a complex product,
where numpy's loop fuses multiply-adds on FMA CPUs, a quotient, exp, sin...); a complex power or a
complex constant in numexpr's text is Unfusable. complex64 (numexpr has no such kernels) and complex
values on the device (fused.DEVICE_COMPLEX) run op by op, said in fused.DECLINED.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import finite_known, fused, fusion
from .backend import np, on_device, xp
from .buffer_pool import lend
from .complexes import is_complex
from .fused import Unfusable
from .fusion import Fused
from .notes import NOTES
from .numbers import finite
from .primitives import Primitive, broadcast_shape, element_limit
from .region_kernels import KERNEL_ERRORS, run_checked, run_kernels
from .region_pipeline import pipelined
from .region_plan import RegionPlan, arguments, constant_key, forward
from .region_program import Kernel, RegionBuilder, depends_on, is_dear, schedule, use_counts, with_frees
from .region_seed import is_unit_seed, unit_seed_adjoints
from .rules.shapes import unbroadcast
from .tape import Var, planned_step, record, sweep_equations

MAX_LAYOUTS = 16            # kernels kept per region (a float leaf that changes makes new ones)
MAX_KERNELS = 1024          # regions' kernels kept in all
KERNELS: dict = {}          # (plan key, layouts, ndim) -> ForwardKernels, GradKernels or None (op by op)


def layouts(values, plan=None):
    """(key, tape, shape) of the leaves, or None if the region must run op by op. Leaves are
    numbers and float64 or complex128 arrays whose broadcast has at least the fusion threshold of elements,
    and every traced leaf is a Var of one plain (not persistent, not graph) tape over a raw
    value: no Dual, no box of another level. Leaves that are one traced value (a leaf per read of
    it: core/lazy.py) are ("same", True, the first's position): its symbol, their own adjoints;
    leaves that are one untraced array (a values-only run's reads of it) ("same", False, the
    first's position): one operand of the kernels, not one per read."""
    tape, shapes, key, first, untraced = None, [], [], {}, {}
    for i, v in enumerate(values):
        c = v.__class__
        if c is float:
            key.append(("const",) + constant_key(v)[1:])       # -0.0 is not 0.0's kernels
            continue
        traced = c is Var
        if traced:
            if tape is None:
                tape = v.tape
            elif v.tape is not tape or v.level != tape.level:
                return None
            if first.setdefault(v.index, i) != i:
                key.append(("same", True, first[v.index]))
                continue
            v = v.value
            c = v.__class__
        elif c is not float and untraced.setdefault(id(v), i) != i:
            key.append(("same", False, untraced[id(v)]))
            continue
        if c is float:
            key.append(("float", True))
            continue
        try:
            kind = fused.layout(v)                   # a float64 array (of the backend fused knows)
        except Unfusable as e:
            if plan is not None and getattr(getattr(v, "dtype", None), "kind", None) == "c":
                fused.decline(region_name(plan), e)    # complex64, or on the device: said as such
            return None
        if kind is None or kind[0] not in "fc":
            return None
        # one element: numpy's strides 0; a complex128 array's layout says so (its 4th part)
        key.append(("array", traced, math.prod(kind[1]) == 1) + (("complex",) if kind[0] == "c" else ()))
        shapes.append(kind[1])
    if not shapes:
        return None
    try:
        shape = broadcast_shape(*shapes)
    except ValueError:
        return None                                  # the op-by-op run reports the mismatch
    size = math.prod(shape)
    if size < fused.FUSE_MIN_ELEMENTS or (element_limit[0] is not None and size > element_limit[0]):
        return None                                  # small: numpy's ops; too large: its error
    if tape is not None and (tape.persistent or tape.keep_values):
        return None                                  # (no value is pending on such a tape: core/lazy.py)
    return tuple(key), tape, shape


def run(plan: RegionPlan, values):
    """The region's output (an array, or a Var of one entry on the leaves' tape), or None where
    it must run op by op."""
    found = layouts(values, plan)
    if found is None:
        return None
    key, tape, shape = found
    compiled = plan.compiled.get(key, False)
    if compiled is False:
        if len(plan.compiled) >= MAX_LAYOUTS:
            return None
        compiled = plan.compiled[key] = kernels_of(plan, key, shape, tape is not None)
    if compiled is None:
        return None
    try:
        return compiled.run(values, tape, plan)
    except Unfusable as e:           # a kernel refused, a non-finite output: op by op
        fused.decline(region_name(plan), e)
        return None


def region_name(plan) -> str:
    return "the region of " + ", ".join(e.prim.name for e in plan.program.body())


def kernels_of(plan, key, shape, traced):
    """The region's kernels for these layouts, shared by every compile of the same region (an API
    call compiles its target anew): traced once per process."""
    cache_key = (plan.key, key, len(shape))
    if cache_key not in KERNELS:
        if len(KERNELS) >= MAX_KERNELS:
            KERNELS.clear()
        KERNELS[cache_key] = compile_region(plan, key, shape, traced)
    return KERNELS[cache_key]


def compile_region(plan, key, shape, traced):
    """Trace the region; None where it cannot be kernels. A rule that notes something while it
    is traced (a kink at a constant) keeps the region op by op, where the note is made each run."""
    kinks, detached = len(NOTES.kinks), len(NOTES.detached)
    try:
        with on_device("cpu"):      # the probes' examples are numpy's (cupy's ufuncs refuse a probe)
            compiled = (GradKernels if traced else ForwardKernels).trace(plan, key, shape)
    except fused.TRACE_ERRORS as e:  # Unfusable, or what else the lowering refuses
        fused.decline(region_name(plan), e)
        compiled = None
    if len(NOTES.kinks) != kinks or len(NOTES.detached) != detached:
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
        fused.decline(region_name(plan), "a rule noted a kink while it was traced: op by op, for its note")
        return None
    return compiled


def input_names(key) -> set:
    return {f"a{i}" for i, layout in enumerate(key) if layout[0] not in ("const", "same")} | {"nan_marker"}


def leaf_values(program, key, shape) -> list:
    """The leaves: numbers baked in, values of the region's shape that know what they hold (a
    leaf that is another's value, "same", is that leaf's symbol)."""
    def holds(layout):
        return "number" if layout[0] == "float" else "one" if layout[2] else "array"
    leaves = []
    for i, layout in enumerate(key):
        if layout[0] == "same":
            leaves.append(leaves[layout[2]])
        else:
            leaves.append(layout[1] if layout[0] == "const" else
                          program.symbol(f"a{i}", shape, holds(layout), layout[3:] == ("complex",)))
    return leaves


def lower_region(plan, program, key, shape, wanted=None) -> tuple:
    """The region recorded by the one rule tracer (its forward impls over probes of the leaves,
    and where `wanted` names traced leaf positions, the VJP rules run through it in reverse from a
    seed g) and lowered into `program` (core/fusion.py): (the output, the forward's guards: the
    conditions of the impls' kinks, which `forward_kernels` makes the op-by-op run take over
    where one holds, the wanted leaf position -> adjoint). The reverse's guards stay in
    program.guards."""
    leaves = leaf_values(program, key, shape)
    recorder = fusion.FusionRecorder()
    probes = [recorder.leaf(v.expr, v.shape, complex=v.complex) if v.__class__ is Fused else v for v in leaves]
    split = []

    def body():
        values = forward(plan.program, probes)
        split.append(len(recorder.items))
        # the seed: complex where the output is (its adjoint then comes complex, as abs's VJP gives)
        seed = None if wanted is None else recorder.leaf("g", shape, complex=is_complex(values[-1]))
        split.append(seed is not None and is_complex(seed))
        if wanted is None:
            return values[-1], {}
        span = NOTES.span
        try:
            return values[-1], region_vjp(plan.program, values, seed, wanted)
        finally:
            NOTES.span = span              # (the sweep sets each equation's span: no traced rule notes)
    out, found = fusion.record(recorder, body, ())
    lowered = {v.expr: v for v in leaves if v.__class__ is Fused}
    lowered["g"] = program.symbol("g", shape, complex=split[1])
    try:
        fusion.lower(recorder.items[:split[0]], lowered, program)
        guards, program.guards = program.guards, []
        fusion.lower(recorder.items[split[0]:], lowered, program)
    finally:
        recorder.forget()
    out, found = fusion.lowered(out, lowered), fusion.lowered(found, lowered)
    if not is_array(out):
        raise Unfusable("the region's output is no array step")
    return out, guards, found


def is_array(value) -> bool:
    """Whether a lowered value is an array of numbers (a leaf or a step)."""
    return value.__class__ is Fused and not value.boolean and not fused.is_number(value.expr)


def forward_kernels(program, out, guards, inputs, shape, shared=frozenset()) -> tuple:
    """The forward's kernels and its output step. A guard `t == 0.0` over an array the kernels
    make anyway, or a leaf (sqrt's argument), is a check of that array once it is made, which
    raises Unfusable where the guard holds (core/region_kernels.py): the same op-by-op run as the
    nan a where(guard, nan, out) put in the output, whose finiteness check then failed, without
    two more operations per element. Any other guard wraps the output in that where."""
    kernels = schedule(program, [out.expr], inputs, shared)
    arrays = {kernel.name for kernel in kernels if not kernel.boolean} | set(inputs)
    tested = [zero_tested(program, condition) for condition in guards]
    checked = [name for name in tested if name in arrays]
    if len(checked) < len(guards):
        program.guards = [condition for condition, name in zip(guards, tested) if name not in arrays]
        out = guarded(program, out, shape)
        kernels = schedule(program, [out.expr], inputs, set(shared) | set(checked))
    return with_checks(kernels, checked), out


def zero_tested(program, condition) -> str | None:
    """t of a guard `(t == 0.0)`, else None."""
    step = program.steps.get(condition.expr)
    return step[1][0] if step is not None and step[0] == "({} == {})" and step[1][1] == "0.0" else None


def with_checks(kernels, names) -> list:
    """The kernels with a zero check of each of `names` right after the kernel that makes it (a
    leaf's first)."""
    checks = {name: Kernel(name=name, expr=None, function=None, reads=(name,), frees=(), check=True)
              for name in names}
    made = {kernel.name for kernel in kernels}
    out = [check for name, check in checks.items() if name not in made]
    for kernel in kernels:
        out.append(kernel)
        if kernel.name in checks:
            out.append(checks[kernel.name])
    return out


def guarded(program, out, shape):
    """`out`, nan wherever a guard the tracing met so far holds (then forgets them)."""
    for condition in program.guards:
        out = program.add("where({}, {}, {})", (condition, program.symbol("nan_marker", ()), out), shape, False)
    program.guards = []
    return out


def region_vjp(program, values, seed, wanted) -> dict:
    """The table's VJP rules run through the region's Program from its output back by the one
    reverse sweep (core/tape.py's `sweep_equations`), over probes (recorded) or real values
    (`replay_reverse`): wanted leaf position -> adjoint, in the order the sweep first reaches the
    leaves (the kernels' steps are made in that order). Adjoints add as the sweep adds them."""
    steps, order = region_sweep(program, wanted)
    adjoints = sweep_equations(steps, program.output, seed, values=values, mark=False)
    return {pos: adjoints[pos] for pos in order if adjoints[pos] is not None}


def region_sweep(program, wanted) -> tuple:
    """The sweep's steps over a region's Program for the `wanted` leaves: the leaves' own
    equations (their adjoints stay), then each equation's plan (core/tape.py's PlannedStep: its
    VJPs' arguments gathered from the region's values, an unwanted leaf no parent); and the
    wanted leaves in the order the sweep first passes them an adjoint. Made for each sweep, not
    kept: a region is swept once when its kernels are traced, and again only where its kernels
    decline (the steps would outlive that sweep in every compiled region)."""
    leaves, equations = program.leaves, program.equations
    steps, reached, order, lives = list(equations[:leaves]), {program.output}, [], []
    for e in program.body():
        vjps = e.prim.vjps
        live = tuple((pos, j) for pos, j in e.parents if vjps[pos] is not None and (j >= leaves or j in wanted))
        lives.append(e.parents if live == e.parents else live)
        steps.append(planned_step(e.prim, lives[-1], None, gatherer(e), None, e.span, e))
    for i in range(len(equations) - 1, leaves - 1, -1):
        if i in reached:
            for _, j in lives[i - leaves]:
                if j < leaves and j not in order:
                    order.append(j)
                reached.add(j)
    return steps, order


def gatherer(equation):
    """The VJPs' arguments of a region's equation from the region's values: all of them, as its
    impl took them."""
    return lambda values: arguments(equation, values)


def inputs_of(values) -> dict:
    """The kernels' inputs: the leaves' raw arrays (traced numbers as 0-d arrays; untraced ones
    are baked into the kernels) and the nan marker."""
    names = {"nan_marker": xp().asarray(math.nan)}
    for i, v in enumerate(values):
        if v.__class__ is not float:
            v = v.value if v.__class__ is Var else v
            names[f"a{i}"] = xp().asarray(v) if v.__class__ is float else v
    return names


@dataclass
class ForwardKernels:
    """A region over untraced leaves: its output from a few kernels."""
    kernels: list
    out: str

    @classmethod
    def trace(cls, plan, key, shape):
        program = RegionBuilder()
        out, guards, _ = lower_region(plan, program, key, shape)
        kernels, out = forward_kernels(program, out, guards, input_names(key), shape)
        kernels = pipelined(program, kernels, {out.expr})
        return cls(kernels=with_frees(kernels, {out.expr}), out=out.expr)

    def run(self, values, tape, plan):
        return lend(run_checked(self.kernels, inputs_of(values), self.out), np())


@dataclass
class GradKernels:
    """A region with traced leaves: the forward kernels (which leave the arrays the reverse needs),
    the reverse kernels, and the entry that stands for the region on the tape."""
    forward: list
    reverse: list
    out: str
    adjoints: dict                      # traced leaf position -> its adjoint's step name
    saved: tuple                        # what the reverse kernels read of the forward's arrays
    prim: Primitive
    key: tuple
    unit_reverse: list | None = None    # the reverse kernels for a seed of ones (region_seed)
    seed_dtype: str = "float64"         # the seed's the reverse kernels take: complex128 for a complex output
    unit_adjoints: dict | None = None
    # a traced value read by several leaves (a leaf per read: core/lazy.py): per value, its first
    # leaf and its leaves in the order the op-by-op sweep adds their adjoints (`read_groups`), and
    # the kernels whose adjoint of it is that sum, in that order, at the first leaf (`summed`:
    # (reverse, adjoints, unit reverse, unit adjoints); None where no value is read twice)
    read_groups: tuple = ()
    summed: tuple | None = None

    @classmethod
    def trace(cls, plan, key, shape):
        program = RegionBuilder()
        traced = {i for i, layout in enumerate(key) if layout[0] != "const" and layout[1]}
        out, forward_guards, found = lower_region(plan, program, key, shape, traced)
        if not found or not all(map(is_array, found.values())):
            raise Unfusable("an adjoint that is no array step")
        guards = list(program.guards)
        adjoints = {}
        for pos, adjoint in found.items():
            program.guards = list(guards)
            adjoints[pos] = guarded(program, adjoint, shape).expr
        inputs = input_names(key)
        # the forward makes arrays of the transcendental values that both sweeps use (dear to
        # recompute); the reverse kernels read those, the leaves, and any other array the
        # forward made that they need (the same step text: the same bits, no recomputing);
        # the arithmetic between them they recompute, so the tape keeps few arrays
        after_seed = depends_on(program, "g")
        uses = use_counts(program.steps, [out.expr, *adjoints.values()], inputs)
        shared = {name for name, count in uses.items() if count > 1 and name in program.steps
                  and name not in after_seed and (is_dear(program.steps[name][0]) or name in program.numpy_steps)}
        forward, out = forward_kernels(program, out, forward_guards, inputs, shape, shared)
        made = {k.name for k in forward if not k.boolean and not k.check} - {out.expr}    # the output is handed out
        reverse = schedule(program, list(adjoints.values()), inputs | made | {"g"})
        seed_complex = "g" in program.complex
        unit_adjoints, unit_reverse = ({}, []) if seed_complex else unit_seed_kernels(program, adjoints, inputs | made)
        saved = tuple(dict.fromkeys(name for k in reverse + unit_reverse for name in k.reads
                                    if name in made or name in inputs))
        reverse = pipelined(program, reverse, set(adjoints.values()))
        unit_reverse = pipelined(program, unit_reverse, set(unit_adjoints.values()))
        groups = read_groups(plan, key, adjoints)
        summed = summed_kernels(program, groups, adjoints, unit_adjoints, inputs | made, shape) if groups else None
        if summed is not None:
            saved = tuple(dict.fromkeys(saved + tuple(name for kernels in summed[::2] if kernels for k in kernels
                                                      for name in k.reads if name in made or name in inputs)))
        forward = pipelined(program, forward, {out.expr, *saved})
        self = cls(forward=with_frees(forward, {out.expr, *saved}), reverse=with_frees(reverse, set(adjoints.values())),
                   out=out.expr, adjoints=adjoints, saved=saved, prim=None, key=key,
                   unit_reverse=with_frees(unit_reverse, set(unit_adjoints.values())) if unit_adjoints else None,
                   unit_adjoints=unit_adjoints, seed_dtype="complex128" if seed_complex else "float64",
                   read_groups=groups if summed is not None else (), summed=summed)
        self.prim = region_primitive(self, len(key))
        return self

    def run(self, values, tape, plan):
        names = inputs_of(values)
        out = lend(run_checked(self.forward, names, self.out), np())
        state = RegionState(kernels=self, saved={name: names[name] for name in self.saved if name in names},
                            values=[v.value if v.__class__ is Var else v for v in values], pending={}, plan=plan)
        parents = tuple((pos, values[pos].index) for pos in self.adjoints)
        NOTES.span = plan.span
        return record(self.prim, tape, tape.level, parents, (state,), out, None)


def read_groups(plan, key, adjoints) -> tuple:
    """Per traced value read by two leaves or more ("same" layouts): (its first leaf, its leaves
    in the order the op-by-op sweep adds their adjoints: the latest reader first, a reader's
    arguments in order)."""
    program = plan.program
    first = {pos: layout[2] if layout[0] == "same" else pos for pos, layout in enumerate(key)}
    reads: dict = {}
    for e in reversed(program.body()):
        for _, j in e.parents:
            if j < program.leaves and j in adjoints:
                reads.setdefault(first[j], []).append(j)
    # (a leaf read twice, in a plan without a leaf per read, has its reads summed by the kernels already)
    return tuple((symbol, tuple(leaves)) for symbol, leaves in reads.items() if len(set(leaves)) == len(leaves) > 1)


def summed_kernels(program, groups, adjoints, unit_adjoints, available, shape):
    """(reverse, adjoints, unit reverse, unit adjoints) whose adjoint of each value of `groups`
    is the sum of its reads' adjoints in the sweep's order, ((a1 + a2) + a3)..., at its first
    leaf (its other leaves have none); None over complex values (real adjoints only)."""
    made = []
    for found in (adjoints, unit_adjoints):
        if not found:
            made.extend((None, None))
            continue
        if any(program.is_complex(name) for name in found.values()):
            return None
        summed = dict(found)
        for symbol, leaves in groups:
            total = program.value(summed.pop(leaves[0]), shape)
            for leaf in leaves[1:]:
                total = program.add("({} + {})", (total, program.value(summed.pop(leaf), shape)), shape, False)
            summed[symbol] = total.expr
        kernels = schedule(program, list(summed.values()), available | ({"g"} if found is adjoints else set()))
        kernels = pipelined(program, kernels, set(summed.values()))
        made.extend((with_frees(kernels, set(summed.values())), summed))
    return tuple(made)


@dataclass
class RegionState:
    """What one recorded region keeps for its VJP: the saved arrays, the leaves, and the adjoints
    computed at the first VJP call of the sweep and handed out to the following ones."""
    kernels: GradKernels
    saved: dict
    values: list                        # the leaves' raw values (no Var: no cycle through the tape)
    pending: dict
    plan: RegionPlan
    summed: bool = False                # each value read twice or more: its reads' sum (core/lazy.py's settle)

    def adjoint(self, pos, g):
        if pos not in self.pending:
            self.pending = self.compute(g)
        return self.pending.pop(pos)

    def compute(self, g) -> dict:
        kernels = self.kernels
        raw = self.values
        if g.__class__ is xp().ndarray and g.dtype == kernels.seed_dtype:
            names, self.saved = self.saved, None       # freed as the reverse kernels pass them
            summed = kernels.summed if self.summed else None
            unit = (kernels.unit_reverse is not None and g.__class__ is np().ndarray
                    and (summed is None or summed[2] is not None) and is_unit_seed(g, kernels.key, raw))
            if summed is not None:
                reverse, adjoints = summed[2:] if unit else summed[:2]
            else:
                reverse, adjoints = (kernels.unit_reverse, kernels.unit_adjoints) if unit else (kernels.reverse, kernels.adjoints)
            names["g"] = g
            try:
                run_kernels(reverse, names)
            except KERNEL_ERRORS as e:  # numexpr refused a kernel: the rules' own path
                fused.decline(region_name(self.plan), e)
            else:
                out = {pos: names[name] for pos, name in adjoints.items()}
                if all(finite(a) and (not unit or a.shape == g.shape) for a in out.values()):
                    self.saved = None
                    return {pos: lend(tested(unbroadcast(a, raw[pos]), a), np()) for pos, a in out.items()}
                fused.decline(region_name(self.plan), "an adjoint that is not finite: op by op, for its notes")
        elif g.__class__ is xp().ndarray and "c" in (g.dtype.kind, kernels.seed_dtype[0]):
            fused.decline(region_name(self.plan), f"a {g.dtype} adjoint of its output (its reverse kernels take "
                          f"{kernels.seed_dtype}: traced for a {'complex' if kernels.seed_dtype[0] == 'c' else 'real'} "
                          "output): op by op")
        self.saved = None
        out = replay_reverse(self.plan, raw, g, kernels.adjoints)
        if self.summed:                                 # the sweep's sums, in its order
            for symbol, leaves in kernels.read_groups:
                total = None
                for leaf in leaves:
                    adjoint = out.pop(leaf)
                    total = adjoint if total is None else total if adjoint is None else total + adjoint
                out[symbol] = total
        return out


def tested(adjoint, kernel_out):
    """The adjoint, noted as tested finite where it is the kernel's array itself."""
    if adjoint is kernel_out:
        finite_known.note(adjoint)
    return adjoint


def unit_seed_kernels(program, adjoints, available) -> tuple:
    """The adjoints' steps and reverse kernels for a seed of ones; ({}, []) where there are none."""
    try:
        unit_adjoints = unit_seed_adjoints(program, adjoints, available)
    except Unfusable:
        return {}, []
    return unit_adjoints, schedule(program, list(unit_adjoints.values()), available)


def region_primitive(kernels, arity) -> Primitive:
    def vjp_of(pos):
        return lambda g, ans, state: state.adjoint(pos, g)
    vjps = tuple(vjp_of(pos) if pos in kernels.adjoints else None for pos in range(arity))
    return Primitive("fused region", None, vjps=vjps, arity=arity, needs_args=True)


def replay_reverse(plan, raw, g, adjoints) -> dict:
    """The region's VJP op by op on the real values, as an unfused sweep runs the table's rules
    (non-finite gradients, a boxed seed): leaf position -> adjoint."""
    return region_vjp(plan.program, forward(plan.program, raw), g, adjoints)
