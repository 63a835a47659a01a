"""The fused IR's few shared names: the kernels' expressions (core/fusion.py lowers rule bodies into
them; core/fused.py and core/regions.py run them; numexpr's text is printed here, CUDA's in
core/device_kernels.py), the refusal of a rule no kernel can express, and numexpr's spelling of
each ufunc (the table's `numexpr` facts)."""
from __future__ import annotations

from .rules import TABLE

# numpy ufunc's __name__ -> numexpr's spelling of it: each table entry's `numexpr` fact under the
# `ufuncs` its forward applies, read off the table once, here
UFUNCS = {ufunc: prim.numexpr for prim in TABLE.values() if prim.numexpr is not None for ufunc in prim.ufuncs}


class Unfusable(Exception):
    """A rule that a numexpr kernel cannot express: it keeps its ordinary path."""


def is_number(expr) -> bool:
    """Whether a tree of the fused IR (core/fusion.py) is a number's text."""
    if expr.__class__ is not str:
        return False
    try:
        float(expr)
    except ValueError:
        return False
    return True


def numexpr_text(tree) -> str:
    """numexpr's text of a tree of the fused IR (core/fusion.py): each node's template is
    numexpr's spelling."""
    if tree.__class__ is str:
        return tree
    return tree[0].format(*(numexpr_text(operand) for operand in tree[1:]))


class Expression:
    """One kernel's expression: its tree of the fused IR and numexpr's text printed from it (the
    device's CUDA source is printed from the same tree: core/device_kernels.py)."""
    __slots__ = ("tree", "text")

    def __init__(self, tree):
        self.tree, self.text = tree, numexpr_text(tree)

    def __repr__(self):
        return f"Expression({self.text})"
