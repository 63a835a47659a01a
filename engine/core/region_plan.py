"""What a fused region is, for the language to build when an expression compiles: its plan, and
which table entries it may hold. Apart from core/regions.py (which traces and runs regions) so
that compiling a program does not import the kernel machinery: that loads on the first region
over arrays."""
from __future__ import annotations

from dataclasses import dataclass

# the most nodes a region holds, found in an expression (lang/fused_regions.py: larger subtrees
# are split, their parts regions of their own) or in a Program (core/program_regions.py): a
# kernel's work is bounded
MAX_NODES = 64


@dataclass
class RegionPlan:
    """A region: `nodes` in evaluation order, each (primitive name, operands) with operands
    ("leaf", i), ("const", number) or ("node", j); the last node is the output. `spans`: each
    node's place (for notes of the op-by-op VJP)."""
    nodes: tuple
    leaf_count: int
    spans: tuple
    span: object
    compiled: dict


def eligible(prim) -> bool:
    """Whether a table entry may be a region's node. A kink primitive only where its kink is
    `guarded_kink` (a fact of its entry): its impl asks `(x == 0).any()` before its note, which a
    traced region turns into a guard (core/fusion.py's Guard)."""
    return (prim.elementwise and not prim.nondiff and isinstance(prim.vjps, tuple)
            and (prim.kink is None or prim.guarded_kink))
