"""Reverse-mode Jacobians from a recorded trace: the replayed values, the tape the interpreter
would have recorded (diff/replay.py's `replay_tape`), kept for one reverse sweep per output
element with a unit seed, as forward.jacobian sweeps its own tape: the same rules on the same
entries in the same order, so the same numbers to the last bit. Where the Jacobian is to be made
in forward mode (asked for, or fewer input elements than output elements) there is no replay:
None, and the caller runs forward.jacobian."""
from __future__ import annotations

from ..core.backend import np
from ..core.tape import Var, strip
from ..lang.values import dtype, shape_of, size_of
from .common import check_result_elements, finish, host, sweep, unit
from .forward import choose_mode
from .replay import replay_output, replay_tape


def replay_jacobian(trace, values: list, inputs: dict, wrt: list, watched: list, mode: str, target):
    """{name: array of shape output.shape + input.shape} from the replayed `values`, or None
    where forward mode is the one to use. `watched`: the tape index of each input in `wrt`."""
    value = strip(replay_output(trace, values))
    in_elements = sum(size_of(inputs[w]) for w in wrt)
    chosen, _ = choose_mode(mode, in_elements, size_of(value))
    if chosen != "reverse":
        return None
    check_result_elements("Jacobian", size_of(value) * in_elements, None)
    tape, where = replay_tape(trace, values, watched)
    tape.persistent = True                      # swept once per output element
    out = where[trace.output] if trace.output is not None else -1
    flat = {w: np().zeros((size_of(value), size_of(inputs[w])), dtype=dtype()) for w in wrt}
    if out >= 0:
        output = Var(values[trace.output], tape, out, tape.level)
        for k in range(size_of(value)):
            adjoints = sweep(tape, output, unit(value, k), target)
            for n, w in enumerate(wrt):
                g = adjoints[n]
                if g is not None:
                    flat[w][k, :] = host(g, shape_of(inputs[w])).reshape(-1)
    out_shape = shape_of(value)
    return {w: finish(flat[w].reshape(out_shape + shape_of(inputs[w]))) for w in wrt}
