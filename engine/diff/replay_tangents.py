"""The forward half of a replayed stacked pass (diff/replay_higher.py): the tangents of the
moving inputs pushed through the recorded steps' JVP rules, on the primal values the plain
replay already computed.

replay_higher.boxed_values runs each step through `bind`, which recomputes the step's primal
(the plain replay's number again) and reaches the JVP rules through core/batch.py's batched
bind: about half of a small Hessian's forward time is that dispatch. Here each step with a
moving parent calls core/batch.py's `lifted_jvp` directly, with the same tangent, the same
`ans` (the plain replay's value: the same impl on the same numbers) and the same primals, in
the order push_tangents sums them, so the tangents are the bound pass's to the bit. A step
whose forward can note a kink (`Primitive.kink`) reruns its recorded forward, so its notes are
made as the bound pass makes them.

Which steps are elementwise with an argument of the output's shape (where core/batch.py's
`same_shape_jvp` calls the rule without asking the shapes again) is decided once per trace, from
the plain replay's values: a trace's shapes are the same at every point of its signature."""
from __future__ import annotations

from ..core.batch import NO_PARAMS, lifted_jvp, same_shape_jvp, takes_same_shape
from ..core.notes import NOTES
from ..core.tape import BOXES, Dual


def pushed_values(trace, values: list, moving: dict, level: int, k: int, structured: bool):
    """Every value of the trace as boxed_values gives it, for `values` the plain replay's raw
    values and `moving` {leaf index: its stacked tangents}: a Dual of `level` where a tangent
    reached the step, the raw value elsewhere; or None where a leaf is itself boxed (a nested
    derivative: boxed_values is the one to answer)."""
    leaves = trace.leaves
    for value in values[:leaves]:
        if value.__class__ in BOXES:
            return None
    same_shapes = trace.annotations.get(SAME_SHAPES)
    if same_shapes is None:
        same_shapes = trace.annotations[SAME_SHAPES] = same_shape_steps(trace, values)
    tangents = [None] * len(values)
    out = list(values[:leaves])
    for index, t in moving.items():
        tangents[index] = t
        out[index] = Dual(values[index], t, level)
    append = out.append
    forwards = trace.forwards
    index = leaves
    notes = NOTES
    for i, e in enumerate(trace.body()):
        prim, parents, args, params = e.prim, e.parents, e.args, e.params
        same = same_shapes[i]
        if prim.kink is not None:
            forwards[i](values)                    # its kink notes, as boxed_values makes them
        tangent = None
        if not prim.nondiff:
            jvps = prim.jvps
            primals = None
            for pos, j in parents:
                t = tangents[j]
                if t is None or jvps[pos] is None:
                    continue
                if primals is None:
                    full = list(args)
                    for p, jp in parents:
                        full[p] = values[jp]
                    primals = tuple(full)
                    notes.span = e.span
                if same[pos]:
                    t = same_shape_jvp(jvps[pos], t, values[index], primals, params or NO_PARAMS, k, structured)
                else:
                    t = lifted_jvp(prim, pos, t, values[index], primals, params or NO_PARAMS, k, structured)
                tangent = t if tangent is None else tangent + t
        if tangent is None:
            append(values[index])
        else:
            tangents[index] = tangent
            append(Dual(values[index], tangent, level))
        index += 1
    return out


SAME_SHAPES = ("same shapes",)     # the key of same_shape_steps' answer among a Program's annotations


def same_shape_steps(trace, values: list) -> tuple:
    """Per step of the trace, per argument position: whether the step is elementwise and that
    argument (a parent) has the output's shape (`values`: the trace's, at any point)."""
    steps = []
    index = trace.leaves
    for e in trace.body():
        prim, parents, args = e.prim, e.parents, e.args
        flags = [False] * len(args)
        for pos, j in parents:
            flags[pos] = takes_same_shape(prim, values[j], values[index])
        steps.append(tuple(flags))
        index += 1
    return tuple(steps)
