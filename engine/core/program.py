"""The Program: a recorded run as one list of equations, the one IR that the tape, the replay,
its reverse sweep's plan and its Hessian plan all read; a fused region's plan is a Program
fragment of the same equations (core/region_plan.py).

An equation is a tape entry (core/tape.py `Entry`, made by `record`): its primitive (`prim`;
None for an input), its inputs (`parents`: (argument position, equation position) of each
traced argument), its static arguments (`args`: the constants as they are, a stand-in where a
traced argument's value is not needed), its static parameters (`params`) and its source span.
Its output is the value at its position: equation i defines value i. The first `leaves`
equations are the program's inputs, in order. A guard equation is what the run read of traced
values as a plain number (a branch, a loop count, an index...: diff/replay_guards.py's `Guard`);
it sits in the same order, at its `position`: the number of equations before it, so a replay
checks it once the values it reads exist.

A Program holds the recording tape's own list of entries, not a copy: `seal` drops what the
recording tape kept for its own sweep and views (each entry's value and `ans`), once nothing
reads them, so that a kept Program holds its constants, not the run's values.

Whatever a replay works out from the equations once (the forward closures, the plan of a
reverse sweep over some watched inputs, which arguments have their output's shape, the binds
of a planned Hessian sweep) is an annotation of the Program: a per-equation array indexed by
equation position (or a structure keyed by positions), computed once and kept in `annotations`
under its key, never a second list of steps."""
from __future__ import annotations

from dataclasses import dataclass, field

from .tape import recorded_constants


# the annotation of a trace whose regions the fusion pass lowered: root position -> its region
# (diff/program_fusion.py writes it; a replay reads it)
FUSED_REGIONS = "fused regions"


@dataclass(kw_only=True)
class Program:
    """The equations of a recorded run (see the module's docstring)."""
    equations: list             # the tape's entries: leaves (prim None) first, then one per step
    leaves: int                 # the inputs: equation positions 0 .. leaves-1, in input order
    output: int | None          # the output's position; None when it does not depend on the inputs
    constant: object            # the output itself when it does not depend on the inputs
    # the guard equations (replay_guards.Guard), in order, each at its equation position: empty
    # where the control flow cannot depend on the inputs
    guards: list = field(default_factory=list)
    # per-equation annotations worked out once, by key (replay_sweep, replay_tangents, hessian_plan)
    annotations: dict = field(default_factory=dict)

    def operations(self) -> int:
        """How many equations apply a primitive (those after the inputs)."""
        return len(self.equations) - self.leaves

    def body(self) -> list:
        """The equations after the inputs, in order (equation position leaves + k is item k)."""
        return self.equations[self.leaves:]

    def seal(self) -> None:
        """Drop the values the recording tape kept in its entries (its sweep and views are done):
        each one's value and `ans`, and the recorded values of its traced arguments (a tape that
        keeps values keeps them there too: core/tape.py's `recorded_constants`)."""
        for equation in self.equations:
            equation.value = equation.ans = None
            equation.args = recorded_constants(equation)
