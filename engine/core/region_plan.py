"""What a fused region is, for the fusion pass over a recorded Program: its plan, and which table
entries it may hold. Apart from core/regions.py (which traces and runs regions) so that a run
over scalars does not import the kernel machinery: that loads on the first region over arrays.

A region's plan is a Program fragment (core/program.py): its equations are the tape's own
equation type (core/tape.py's `Entry`: primitive, inputs by (argument position, equation
position), the constants as they are in `args` (None where an input goes), span). Its first
`leaves` equations are the region's leaves (prim None), in order; then one equation per
operation in evaluation order, the last the region's output. The pass over a Program
(core/program_regions.py) builds it with `PlanBuilder`, for an interpreted run's pending values
(core/lazy.py) and a large trace's replay (diff/program_fusion.py); core/regions.py runs its
forward through the table's impls and its op-by-op VJP through the one reverse sweep (core/tape.py's `sweep_equations`)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .notes import NOTES
from .program import Program
from .rules import TABLE
from .tape import Entry

# the most operations a region holds (core/program_regions.py, core/lazy.py: older equations are
# regions of their own): a kernel's work is bounded
MAX_NODES = 64


@dataclass
class RegionPlan:
    """A region: its `program` (see the module's docstring); `key`, the program's equations as a
    hashable value (the primitives' names, constants and inputs: what its kernels depend on), by
    which every compile of the same region shares its kernels; `span`, the region's place."""
    program: Program
    key: tuple
    span: object
    compiled: dict


class PlanBuilder:
    """Builds a region's Program as the finder meets its leaves and operations (`steps`: what
    `add` was told, until `plan` makes the equations). A reference to a value is an int: ~i for
    leaf i (negative), j for the j-th operation, until `plan` places the leaves first."""

    def __init__(self):
        self.leaves = 0
        self.steps: list = []

    def leaf(self) -> int:
        self.leaves += 1
        return ~(self.leaves - 1)

    def add(self, name, args, refs, span) -> int:
        """An equation of the table entry `name`: `args` the constants in place (None where an
        input goes), `refs` ((argument position, reference), ...) its inputs."""
        self.steps.append((name, args, refs, span))
        return len(self.steps) - 1

    def operations(self) -> int:
        return len(self.steps)

    def plan(self, span) -> RegionPlan:
        leaves = self.leaves
        equations = [Entry(None, (), (), None, None, None, None) for _ in range(leaves)]
        for name, args, refs, span in self.steps:
            parents = tuple((pos, ~ref if ref < 0 else leaves + ref) for pos, ref in refs)
            equations.append(Entry(TABLE[name], parents, tuple(args), None, None, span, None))
        program = Program(equations=equations, leaves=leaves, output=len(equations) - 1, constant=None)
        key = tuple((e.prim.name, tuple(map(constant_key, e.args)), e.parents) for e in program.body())
        return RegionPlan(program=program, key=key, span=span, compiled={})


def constant_key(v):
    """A constant of a region's equation as its kernels' key holds it: a number with its sign
    (-0.0 == 0.0 in Python, but x * -0.0 is not x * 0.0: the kernels bake the constant in)."""
    c = v.__class__
    if c is float:
        return (float, v, math.copysign(1.0, v))
    if c is complex:
        return (complex, v, math.copysign(1.0, v.real), math.copysign(1.0, v.imag))
    return v


def arguments(equation, values) -> list:
    """An equation's arguments: its constants, and its inputs' values (`values` by position)."""
    full = list(equation.args)
    for pos, j in equation.parents:
        full[pos] = values[j]
    return full


def forward(program, leaves, spans=False) -> list:
    """The region's values by equation position: the leaves, then each equation's table impl
    (`spans`: each at its own span, as an op-by-op run notes a kink it meets)."""
    values = list(leaves)
    span = NOTES.span
    try:
        for e in program.body():
            if spans:
                NOTES.span = e.span
            values.append(e.prim.impl(*arguments(e, values)))
    finally:
        NOTES.span = span
    return values


def eligible(prim) -> bool:
    """Whether a table entry may be a region's node. A kink primitive only where its kink is
    `guarded_kink` (a fact of its entry): its impl asks `(x == 0).any()` before its note, which a
    traced region turns into a guard (core/fusion.py's Guard). Every VJP of such an entry is
    present (vjps by position, none None): each input of a region's equation is a parent."""
    return (prim.elementwise and not prim.nondiff and isinstance(prim.vjps, tuple)
            and (prim.kink is None or prim.guarded_kink))
