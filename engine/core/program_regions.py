"""Fused regions found in a recorded Program (core/program.py), not in one expression's AST: a
pass over the equations, so a region may span statements and calls.

A region here is a set of equations, each an elementwise table primitive (`region_plan.eligible`:
elementwise, differentiable, VJPs by position, no unguarded kink) with no static parameters,
whose value is a float64 (or complex128: issue 32) array of one shape (the region's) with at least core/fused.py's
FUSE_MIN_ELEMENTS elements, and such that every equation of it except its root is read only by
equations of the region (not by the output, not by a guard equation): its value is needed
nowhere else, so the region computes it inside its kernels and never makes it an array. It is
grown from a root back through its arguments as far as those conditions hold, so it is maximal
for that root; the roots are taken from the last equation back.

A region becomes the `RegionPlan` the language builds from an expression (core/region_plan.py's
PlanBuilder): a Program fragment whose leaves are the equations outside the region it reads and
its constant arrays, whose constants (numbers) stay in its equations' `args`, and whose
equations are the region's, in equation order (table entries: a recorded step's fused entry is
its table entry here); the root is the last. core/regions.py then traces and runs it as it runs a plan
from the AST: the same kernels (`lowered_forward`, `lowered_gradient`). A region of one
equation is the fused entry the tape records for it (core/tape.py's FUSED_RULES): a plan is made
for two or more."""
from __future__ import annotations

from dataclasses import dataclass

from . import fused
from .backend import np
from .complexes import is_complex
from .region_plan import MAX_NODES, PlanBuilder, RegionPlan, eligible
from .region_program import complex_numpy_bits
from .rules import TABLE

MIN_EQUATIONS = 2           # one equation is the fused entry the tape records already


@dataclass
class ProgramRegion:
    """A region of a Program: `positions` (equation positions, ascending; the root last),
    `leaves` (per leaf of the plan: ("equation", position) or ("constant", value)), the plan."""
    positions: tuple
    leaves: tuple
    plan: RegionPlan
    reads: tuple = ()           # per_read: per leaf, the (position, argument position) reading it, or None


    def leaf_values(self, values) -> list:
        """The plan's leaves from the values by equation position (a replay's, a tape's)."""
        return [values[ref] if kind == "equation" else ref for kind, ref in self.leaves]


def same_bits_fused(prim, equation, value=None, real=False) -> bool:
    """Whether a region's kernels compute this equation's value with numpy's own bits: the entry's
    `fused_bits` (numexpr's arithmetic `+ - * /` and negation; a function the kernels leave to
    numpy's loop, its `numpy_loop`: exp, log, tanh...), a square (core/fused.py writes x ** 2.0 as x * x,
    as numpy's power does). Not numexpr's own transcendentals, not a kink. Over complex
    values (issue 32), or a real part of them: region_program.complex_numpy_bits (numexpr's exact
    kernels, numpy's own loops for the rest). A kink the kernels guard (sqrt's, a fact of its
    entry: where it is met the region runs op by op, each note at its own span) is no refusal,
    in an interpreted run's regions (core/lazy.py) and a replay's alike."""
    if prim.kink is not None and not prim.guarded_kink:
        return False
    if not real and any(is_complex(v) for v in (value, *equation.args)):     # (`real`: the caller knows none is)
        return complex_numpy_bits(prim)
    if prim.name == "pow":
        return len(equation.parents) == 1 and equation.parents[0][0] == 0 and equation.args[1] == 2.0
    return prim.fused_bits


def member_shape(equation, value):
    """The shape of an equation that may be a region's node, else None."""
    prim = TABLE.get(equation.prim.name) if equation.prim is not None else None
    if prim is None or not eligible(prim) or equation.params or not same_bits_fused(prim, equation, value):
        return None
    if value.__class__ is not np().ndarray or value.dtype not in (np().float64, np().complex128) \
            or value.size < fused.FUSE_MIN_ELEMENTS:
        return None
    return value.shape


def find_regions(program, values, guarded=frozenset(), sums=True) -> list:
    """The regions of `program` (core/program.py), given each equation's value (`values`, by
    position: a recording tape's) and the positions some guard equation reads (`guarded`).
    `sums`: only regions whose adjoints' sums are the sweep's (`adds_as_the_sweep`); False for a
    Program whose values alone are replayed (diff/large_trace.py). A kink a region guards (sqrt's)
    is taken either way: where it is met the region runs op by op, with its note, as an
    interpreted run's does."""
    equations = program.equations
    readers = [[] for _ in equations]
    for i in range(program.leaves, len(equations)):
        for _, j in equations[i].parents:
            readers[j].append(i)
    shapes = [None] * len(equations)
    for i in range(program.leaves, len(equations)):
        shapes[i] = member_shape(equations[i], values[i])
    taken: set = set()
    regions = []
    for root in range(len(equations) - 1, program.leaves - 1, -1):
        if shapes[root] is None or root in taken:
            continue
        members = grow(equations, readers, shapes, root, taken | {program.output} | set(guarded))
        if len(members) >= MIN_EQUATIONS and (not sums or adds_as_the_sweep(equations, readers, members, values,
                                                                          shapes[root])) \
                and broadcasts_one_way(equations, members, values, shapes[root]):
            taken.update(members)
            regions.append(region_of(equations, sorted(members)))
    regions.reverse()
    return regions


def grow(equations, readers, shapes, root, refused) -> set:
    """The equations from `root` back through its arguments that may join its region."""
    members = {root}
    candidates = {j for _, j in equations[root].parents}
    while candidates and len(members) < MAX_NODES:
        j = max(candidates)
        candidates.discard(j)
        if j in refused or shapes[j] != shapes[root] or not all(r in members for r in readers[j]):
            continue
        members.add(j)
        candidates.update(k for _, k in equations[j].parents)
    return members


def adds_as_the_sweep(equations, readers, members, values, shape) -> bool:
    """Whether the region's adjoints of its leaves are, to the bit, what the one reverse sweep
    over its equations adds up. The region sums a leaf's contributions in its kernels (in the
    sweep's order), reduces a broadcast leaf's once at the end, and hands the sum to the sweep
    at its root; the sweep reduces each contribution and adds them in equation order. So a leaf
    read once in the region is read outside it nowhere between that reader and the root; a leaf
    read twice or more in it has the region's shape and is read outside it only before its first
    reader in it (the sweep reaches those after the region's whole sum)."""
    root = max(members)
    for j in {j for p in members for _, j in equations[p].parents} - members:
        inside = [r for r in readers[j] if r in members]
        outside = [r for r in readers[j] if r not in members]
        first = min(inside)
        reads = sum(1 for p in inside for _, k in equations[p].parents if k == j)
        if reads == 1 and any(first < r < root for r in outside):
            return False
        if reads > 1 and (getattr(values[j], "shape", None) != shape or any(r > first for r in outside)):
            return False
    return True


def broadcasts_one_way(equations, members, values, shape) -> bool:
    """Whether the region's array leaves broadcast to its shape in at most one way (all of one
    shape). numexpr iterates operands broadcast along different axes element by element:
    GradBench's held-out kmeans, `points[:, None, :] - centroids[None, :, :]` over (1000, 10, 8),
    replayed 2.3 times slower as a region (1085 against 477 us a gradient) than as numpy's ops;
    leaves broadcast one way, as `(P - C[k]) ** 2` or gmm's `(X - mean) * exp(-logsig)`, are its
    fast case (3.9 against 7.0 ms at P of (20000, 4))."""
    leaves = {j for p in members for _, j in equations[p].parents} - members
    return one_way([getattr(values[j], "shape", ()) for j in leaves], shape)


def one_way(shapes, shape) -> bool:
    """Whether arrays of `shapes` broadcast to `shape` in at most one way (numbers and arrays of
    `shape` itself aside): broadcasts_one_way's rule, which core/lazy.py's regions follow too."""
    ways = {(1,) * (len(shape) - len(s)) + tuple(s) for s in shapes if len(s) and tuple(s) != shape}
    return len(ways) <= 1


def region_of(equations, positions, per_read=False) -> ProgramRegion:
    """The plan of the equations at `positions` (ascending). `per_read`: a leaf per read of an
    equation outside the region (the same value), so its reverse gives each read's adjoint
    apart, as the sweep passes them (core/lazy.py hands them over at the readers' places)."""
    builder = PlanBuilder()
    node_of: dict = {}          # equation position -> the builder's reference of its equation
    index: dict = {}            # leaf key -> the builder's reference of the leaf
    refs: list = []             # the leaves, in plan order
    reads: list = []            # per leaf, the read it stands for (per_read)

    def leaf(key, ref, read=None):
        if per_read and read is not None:
            key = key + read
        if key not in index:
            index[key] = builder.leaf()
            refs.append(ref)
            reads.append(read)
        return index[key]
    for p in positions:
        e = equations[p]
        traced = dict(e.parents)
        args, inputs = [], []
        for pos, arg in enumerate(e.args):
            j = traced.get(pos)
            if j in node_of:
                inputs.append((pos, node_of[j]))
            elif j is not None:
                inputs.append((pos, leaf(("equation", j), ("equation", j), (p, pos))))
            elif arg.__class__ is float or arg.__class__ is int:
                args.append(arg)
                continue
            elif isinstance(arg, complex):            # 2j (a numpy complex128 scalar): a complex constant
                args.append(complex(arg))
                continue
            else:
                inputs.append((pos, leaf(("constant", id(arg)), ("constant", arg))))
            args.append(None)
        node_of[p] = builder.add(e.prim.name, args, inputs, e.span)
    plan = builder.plan(equations[positions[-1]].span)
    return ProgramRegion(positions=tuple(positions), leaves=tuple(refs), plan=plan,
                         reads=tuple(reads) if per_read else ())
