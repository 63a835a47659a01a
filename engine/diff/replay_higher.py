"""Hessians and forward-mode Jacobians from a recorded trace: the trace's steps replayed through
the engine's `bind` on boxed inputs, so tangents and tapes flow through a replay as they flow
through an interpreted run (views/plot_points.py does the same with nested Duals).

- Hessian, forward-over-reverse (diff/higher.py's method): the inputs of `wrt` move along a
  stack of basis tangents (level-k Duals, core/batch.py), the recorded steps' JVP rules push
  them (diff/replay_tangents.py), the planned reverse sweep of diff/replay_sweep.py over those
  values gives the gradient (no tape is recorded: the plan knows its structure; where it can be,
  the same sweep over diff/hessian_plan.py's plan, whose VJPs replay the binds the rules made),
  and the gradient's stacked tangents are the Hessian's rows.
- Jacobian, forward mode (diff/forward.py's `_jacobian_forward`): the inputs carry stacked
  basis tangents, and the output's tangent stack holds the Jacobian's columns.
- Gradient, forward mode (diff/forward.py's `gradient`): those columns, each summed (or
  contracted with the seed): stacked passes where the interpreter makes one per element.

Where the elements of all the inputs asked for fit one stacked pass, one pass moves them all
(each input along its own rows of one basis), where the interpreter makes one pass per input:
the other inputs' tangents in a row are exact zeros, and the same rules run on the same values
in the same order, so the numbers are the interpreter's to rounding (to the bit on the rules
table, tests/test_replay_higher.py). The path is the one the plain replay picked (its
guards checked on the raw values: the boxed primals are the same numbers). Anything unusual —
a kink note, a stop_gradient on a traced value, a non-finite number, a non-scalar output for a
Hessian, an error — gives None: the caller then runs the interpreted driver, which reports it
with its span; a replayed Hessian, Jacobian or forward-mode gradient whose value or numbers are
not finite raises NonFinite
(diff/fallbacks.py: counted as a non-finite result, and under AUTODIFF_STRICT=1 the
interpreter's result must not be finite either)."""
from __future__ import annotations

from contextlib import contextmanager

from ..core.backend import np, to_host, xp
from ..core.batch import batched
from ..core.notes import NOTES
from ..core.notes import reset as reset_notes
from ..core.numbers import all_finite
from ..core.tangent_stack import TangentStack
from ..core.tape import BOXES, Dual, bind, new_level, strip
from ..lang.values import as_input, dtype, shape_of, size_of
from .common import check_result_elements, finish, on_host, real_values, seed_for
from .hessian_plan import plannable, planned_sweep, recorded_sweep
from .replay import replay_output
from .replay_jacobian import replay_jacobian
from .fallbacks import NonFinite
from .replay_sweep import planned_adjoints, sweep_plan
from .replay_tangents import pushed_values
from .reverse import GradResult
from .tangents import TANGENT_BUDGET_ELEMENTS, basis_chunks, basis_stack, is_structured, stacked_tangent_of


def boxed_values(trace, leaves: list) -> list:
    """Every value of the trace recomputed from `leaves` (tape indices 0 .. leaves-1), which may
    be boxes: a step with a boxed argument runs through `bind` (recording on tapes, pushing
    tangents), one on raw values only runs its recorded forward, as the plain replay does."""
    values = list(leaves)
    append = values.append
    forwards = trace.forwards
    for i, e in enumerate(trace.body()):
        parents = e.parents
        for _, j in parents:
            if values[j].__class__ in BOXES:
                break
        else:
            append(forwards[i](values))
            continue
        full = list(e.args)
        for pos, j in parents:
            full[pos] = values[j]
        NOTES.span = e.span
        append(bind(e.prim, tuple(full), e.params))
    return values


def quiet(notes) -> bool:
    """Whether a replayed pass made nothing the interpreted driver would report."""
    return not notes.kinks and not notes.detached


def tangent_passes(inputs: dict, wrt: list, out_size: int = 0):
    """(k, {input: its k stacked tangents}, [(input, start, stop, first row)]) per forward pass:
    one pass for all of `wrt`'s elements where their stacked tangents fit the budget (each input
    moves along its own rows of one basis, so the other inputs' tangents there are exact zeros),
    else diff/tangents.py's chunks, one input at a time, as the interpreted drivers go."""
    sizes = [size_of(inputs[w]) for w in wrt]
    total = sum(sizes)
    if 1 < len(wrt) == len(set(wrt)) and total and \
            total * max(max(sizes), out_size) <= TANGENT_BUDGET_ELEMENTS:
        tangents, rows, first = {}, [], 0
        for w, n in zip(wrt, sizes):
            tangents[w] = basis_stack(inputs[w], total, first)
            rows.append((w, 0, n, first))
            first += n
        yield total, tangents, rows
        return
    for w in wrt:
        for start, stop, stack in basis_chunks(inputs[w], out_size):
            yield stop - start, {w: stack}, [(w, start, stop, 0)]


def boxed_leaves(raw: list, inputs: dict, tangents: dict, wrt: list, watched: list, level: int) -> list:
    """The trace's leaves with the inputs that move in this pass as Duals of `level`."""
    leaves = list(raw)
    for w, index in zip(wrt, watched):
        if w in tangents:
            leaves[index] = Dual(inputs[w], tangents[w], level)
    return leaves


def moving_leaves(tangents: dict, wrt: list, watched: list) -> dict:
    """{tape index: stacked tangents} of the inputs that move in a pass."""
    return {index: tangents[w] for w, index in zip(wrt, watched) if w in tangents}


@contextmanager
def stacked_pass(trace, values: list, inputs: dict, moving: tuple, tangents: dict, k: int):
    """One stacked forward pass through the replayed steps, the inputs of `moving` (wrt, their
    tape indices) moving along `tangents` (k each): (its level, whether its stacks are structured,
    every value boxed), inside the batch of that level."""
    wrt, watched = moving
    level = new_level()
    structured = any(is_structured(t) for t in tangents.values())
    with batched(level, k, structured=structured):
        boxed = pushed_values(trace, values, moving_leaves(tangents, wrt, watched), level, k, structured)
        if boxed is None:
            boxed = boxed_values(trace, boxed_leaves(values[:trace.leaves], inputs, tangents, wrt, watched, level))
        yield level, structured, boxed


def replayed_value(trace, values: list, scalar=False):
    """The replayed output's value; None where the interpreter is to answer (the output is no
    step's, or, `scalar`, not a number); NonFinite where it is not finite."""
    value = strip(replay_output(trace, values))
    if trace.output is None or (scalar and shape_of(value)):
        return None
    if not all_finite([value]):
        raise NonFinite()
    return value


def replay_hessian(trace, values: list, inputs: dict, wrt: list, watched: list):
    """{a: {b: array of shape a.shape + b.shape}} by forward-over-reverse over the replayed
    steps, or None where the interpreted Hessian is to answer (a note, a non-scalar output);
    NonFinite where its value or a block is not finite. `values`: the plain replay's;
    `watched`: each input of `wrt`'s tape index."""
    value = replayed_value(trace, values, scalar=True)
    if value is None:
        return None
    check_result_elements("Hessian", sum(size_of(inputs[w]) for w in wrt) ** 2, None)
    blocks = {a: {} for a in wrt}          # filled by the passes (zeros where none reaches)
    unbounded = set()                      # the blocks whose rows may hold an inf or nan
    notes = reset_notes()
    for k, tangents, rows in tangent_passes(inputs, wrt):
        with stacked_pass(trace, values, inputs, (wrt, watched), tangents, k) as (level, structured, boxed):
            single = k == sum(size_of(inputs[w]) for w in wrt)
            grads = dict(zip(wrt, _gradient_pass(trace, boxed, list(watched), (level, k, structured, single))))
        if not quiet(notes):
            return None
        for b in wrt:
            fresh = grads[b].__class__ is Dual and grads[b].tangent.__class__ is TangentStack
            t = stacked_tangent_of(grads[b], level, shape_of(inputs[b]), k)
            if t is None:
                continue
            # + 0.0 (a -0.0 made 0.0, as the interpreter's rows): in place on a structured stack's
            # assembly, which is ours alone; a second matrix of k x n is a page-faulted temporary
            owned = fresh and t.__class__ is np().ndarray and t.flags.writeable
            if t.dtype.kind == "c":     # a real input's rows through complex values: their real part, as
                stacked_rows = real_values(to_host(t)) + 0.0        # the interpreter's (higher.py)
            else:
                stacked_rows = xp().add(t, 0.0, out=t) if owned else to_host(t) + 0.0
            bounded = fresh and grads[b].tangent.magnitude_bound() < FINITE_BOUND
            for a, start, stop, first in rows:
                place_rows(blocks[a], b, stacked_rows, (start, stop, first), (size_of(inputs[a]), size_of(inputs[b])))
                if not bounded:
                    unbounded.add((a, b))
    for a in wrt:
        for b in wrt:
            if b not in blocks[a]:
                blocks[a][b] = np().zeros((size_of(inputs[a]), size_of(inputs[b])), dtype=dtype())
    if not all_finite([blocks[a][b] for a, b in unbounded]):
        raise NonFinite()
    return {a: {b: finish(blocks[a][b].reshape(shape_of(inputs[a]) + shape_of(inputs[b]))) for b in wrt}
            for a in wrt}


# a structured stack whose terms bound its numbers below this assembles finite numbers only
# (a few terms' products added: far from the largest float, 1.8e308), so no pass checks them
FINITE_BOUND = 1e300


def place_rows(row_blocks: dict, b, stacked_rows, span: tuple, block_shape: tuple) -> None:
    """Rows first.. of a pass's (fresh) stacked rows as rows start..stop of block b: the array
    itself where it is the whole block (one pass for one input), else copied into zeros."""
    start, stop, first = span
    if start == 0 and first == 0 and stacked_rows.shape == block_shape and b not in row_blocks:
        row_blocks[b] = stacked_rows
        return
    if b not in row_blocks:
        row_blocks[b] = np().zeros(block_shape, dtype=dtype())
    row_blocks[b][start:stop, :] = stacked_rows[first:first + stop - start]


def _gradient_pass(trace, values: list, watched: list, stacked: tuple) -> list:
    """The planned sweep over the boxed values of the replayed steps (Duals: no tape records
    them; diff/replay_sweep.py: the VJPs, arguments and order of a tape's sweep, so the adjoints
    are the same to the bit, Duals included): the adjoint of each watched input, or None. Where
    this one stacked pass (`stacked`: level, k, structured, whether it is the only pass) moves
    every input, the same sweep over diff/hessian_plan.py's plan, whose VJPs replay the binds
    that the first pass's VJPs made."""
    plan = sweep_plan(trace, watched)
    if trace.output is None or not plan.live[trace.output]:
        return [None] * len(watched)           # the output does not depend on those inputs
    level, k, structured, single = stacked
    key = ("hessian", tuple(watched))
    planned = trace.annotations.get(key) if single else False
    if planned:
        adjoints = planned_sweep(trace, planned, values, level, k, structured)
    elif planned is None and plannable(trace, watched, values, level):
        adjoints, trace.annotations[key] = recorded_sweep(trace, plan, values, level)
    else:
        if planned is None:
            trace.annotations[key] = False
        adjoints = planned_adjoints(trace, plan, values, trace.output, as_input(1.0))
    return [adjoints[i] for i in watched]


def replayed_derivative(what: str, trace, values: list, inputs: dict, wrt: list, watched: list, target,
                        seed=None):
    """Function's replayed derivatives: `what` is "hessian", "gradient" (forward mode, with
    `seed`) or a Jacobian's mode (auto: reverse or forward, as the interpreter chooses)."""
    if what == "hessian":
        return replay_hessian(trace, values, inputs, wrt, watched)
    if what == "gradient":
        return replay_forward_gradient(trace, values, inputs, wrt, watched, seed)
    if what != "forward":
        reverse_mode = replay_jacobian(trace, values, inputs, wrt, watched, what, target)
        if reverse_mode is not None:
            return reverse_mode                    # (None: the mode chosen is forward)
    return replay_forward_jacobian(trace, values, inputs, wrt, watched)


class Unusual(Exception):
    """A replayed pass made a note or a non-finite number: the interpreter is to answer."""


def tangent_columns(trace, values: list, inputs: dict, wrt: list, watched: list, out_shape: tuple):
    """Per stacked forward pass through the replayed steps (`tangent_passes`): its rows, as
    [(input, start, stop, first row)], and the output's tangents as (k, output size), or None
    where the output does not depend on the inputs moving in it."""
    notes = reset_notes()
    out_size = size_of(strip(values[trace.output]))
    for k, tangents, rows in tangent_passes(inputs, wrt, out_size):
        with stacked_pass(trace, values, inputs, (wrt, watched), tangents, k) as (level, _, boxed):
            out = boxed[trace.output]
        if not quiet(notes):
            raise Unusual(notes.kinks)
        yield rows, stacked_tangent_of(out, level, out_shape, k, by_columns=True)


def reaching_leaves(trace) -> set:
    """The leaves (tape indices) the output depends on through the recorded steps: the inputs
    whose Duals reach it (a pass moving several inputs at once cannot tell them apart)."""
    equations = trace.equations
    needed = [False] * len(equations)
    needed[trace.output] = True
    for i in range(len(equations) - 1, trace.leaves - 1, -1):
        if needed[i]:
            for _, j in equations[i].parents:
                needed[j] = True
    return {i for i in range(trace.leaves) if needed[i]}


def replay_forward_jacobian(trace, values: list, inputs: dict, wrt: list, watched: list):
    """{name: array of shape output.shape + input.shape} by stacked forward passes over the
    replayed steps, or None where the interpreted Jacobian is to answer."""
    value = replayed_value(trace, values)
    if value is None:
        return None
    out_size, out_shape = size_of(value), shape_of(value)
    check_result_elements("Jacobian", out_size * sum(size_of(inputs[w]) for w in wrt), None)
    flat = {}                             # filled by the passes (zeros where none reaches)
    try:
        for rows, t in tangent_columns(trace, values, inputs, wrt, watched, out_shape):
            if t is not None:
                columns = to_host(t).T
                for w, start, stop, first in rows:
                    if start == 0 and first == 0 and columns.shape == (out_size, size_of(inputs[w])):
                        flat[w] = columns           # the whole Jacobian of w: copied once, below
                        continue
                    if w not in flat:
                        flat[w] = np().zeros((out_size, size_of(inputs[w])), dtype=dtype())
                    flat[w][:, start:stop] = columns[:, first:first + stop - start]
    except Unusual:
        return None
    for w in wrt:
        if w not in flat:
            flat[w] = np().zeros((out_size, size_of(inputs[w])), dtype=dtype())
    if not all_finite(list(flat.values())):
        raise NonFinite()
    return {w: finish(flat[w].reshape(out_shape + shape_of(inputs[w])) + 0.0) for w in wrt}


def replay_forward_gradient(trace, values: list, inputs: dict, wrt: list, watched: list, seed):
    """forward.gradient's result from stacked passes over the replayed steps (each tangent summed,
    or contracted with `seed`), or None where the interpreted one is to answer."""
    value = replayed_value(trace, values)
    if value is None:
        return None
    contract = None if seed is None else xp().reshape(xp().asarray(seed_for(seed, value)), (1, -1))
    flat = {w: np().zeros(size_of(inputs[w]), dtype=dtype()) for w in wrt}
    reaching, touched = reaching_leaves(trace), set()
    try:
        for rows, t in tangent_columns(trace, values, inputs, wrt, watched, shape_of(value)):
            if t is None:
                continue
            sums = to_host(xp().sum(t if contract is None else t * contract, axis=1))
            for w, start, stop, first in rows:
                flat[w][start:stop] = sums[first:first + stop - start]
                if watched[wrt.index(w)] in reaching:
                    touched.add(w)
    except Unusual:
        return None
    gradient = {w: finish(flat[w].reshape(shape_of(inputs[w]))) for w in wrt}
    return forward_result(trace, value, gradient, inputs, wrt, touched, seed)


def forward_result(trace, value, gradient, inputs, wrt, touched, seed):
    """A replayed forward-mode gradient's result (touched: the inputs the value depends on);
    NonFinite where a number is not finite (the interpreter's to report)."""
    if not all_finite([value, *gradient.values()]):
        raise NonFinite()
    return GradResult(value=on_host(value), gradient=gradient, inputs=on_host(inputs),
                      unconnected=[w for w in wrt if w not in touched],
                      reduced="seed" if seed is not None else ("sum" if shape_of(value) else None),
                      signature=list(trace.signature), kinks=[], tape_length=0, steps=trace.run_steps,
                      tape=None, mode="forward", detached=[])
