"""Reverse-mode Jacobians from a recorded trace: the replayed values, and one reverse sweep per
output element with a unit seed through the trace's sweep plan (diff/replay_sweep.py, an
annotation of its Program), as forward.jacobian sweeps its own tape: the same rules on the same
arguments in the same order, so the same numbers to the last bit. Where the Jacobian is to be
made in forward mode (asked for, or fewer input elements than output elements) there is no
replay: None, and the caller runs forward.jacobian."""
from __future__ import annotations

from ..core.backend import np
from ..core.tape import strip
from ..lang.values import dtype, shape_of, size_of
from .common import check_result_elements, finish, host, located, unit
from .forward import choose_mode
from .replay import replay_output
from .replay_sweep import sweep_plan, taped_adjoints


def replay_jacobian(trace, values: list, inputs: dict, wrt: list, watched: list, mode: str, target):
    """{name: array of shape output.shape + input.shape} from the replayed `values`, or None
    where forward mode is the one to use. `watched`: the tape index of each input in `wrt`."""
    value = strip(replay_output(trace, values))
    in_elements = sum(size_of(inputs[w]) for w in wrt)
    chosen, _ = choose_mode(mode, in_elements, size_of(value))
    if chosen != "reverse":
        return None
    check_result_elements("Jacobian", size_of(value) * in_elements, None)
    plan = sweep_plan(trace, watched)
    out = trace.output
    flat = {w: np().zeros((size_of(value), size_of(inputs[w])), dtype=dtype()) for w in wrt}
    if out is not None and plan.live[out]:
        for k in range(size_of(value)):
            adjoints = located(taped_adjoints, (trace, plan, values, out, unit(value, k)), target)
            for w, i in zip(wrt, watched):
                g = adjoints[i]
                if g is not None:
                    flat[w][k, :] = host(g, shape_of(inputs[w])).reshape(-1)
    out_shape = shape_of(value)
    return {w: finish(flat[w].reshape(out_shape + shape_of(inputs[w]))) for w in wrt}
