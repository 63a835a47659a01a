"""The closed set of engine ops, as every layer calls them (`ops.sin`, `ops.add`, `ops.sum_to`):
one op per primitive of the rules table, under the primitive's name, plus the few that are not
primitives. Each op is defined with its rules in core/rules/ (defprim returns it); this module
only gathers them, so a new table entry is an engine op with no second list to update. Raw
values go straight to the forward rule; boxed values are recorded. Importing the table also
installs Python's operators on the boxes.
"""
from __future__ import annotations

from . import fused, lazy  # noqa: F401  (lazy registers itself with the tape: pending values)
from .primitives import element_limit, zeros_like
from .rules import TABLE
from .tape import Dual, Var, read, strip

globals().update((name, prim.op) for name, prim in TABLE.items())
fused.install()                        # numexpr kernels for the reverse sweep over large arrays

__all__ = ["Var", "Dual", "strip", "read", "element_limit", "zeros_like", "stop_gradient", *TABLE]


def stop_gradient(x):
    """Cut the tape: the value, with no history at any level (the seeds' detach())."""
    return strip(x)
