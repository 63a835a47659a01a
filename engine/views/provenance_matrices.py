"""NaN provenance for Jacobians and Hessians, as `grad` has it (provenance.py): when the value or
a derivative holds nan or inf, the target is run again on a tape that keeps every value, and the
first non-finite forward value and the first non-finite adjoint are named with their places.

A Jacobian is explained by the reverse sweep of its first output element whose row is not finite
(whatever mode computed it: both modes apply the same derivative rules). A Hessian is explained by
the gradient's run when the value or the gradient is not finite, else by the sweep of the first
gradient element whose Hessian row is not finite, recorded on an outer tape as reverse-over-reverse
records it. Runs that stay finite pay one `isfinite` per result array and nothing else.
"""
from __future__ import annotations

from ..core.backend import np, to_host
from ..core.sequences import as_rows
from ..core.notes import NOTES
from ..core.tape import Tape, Var
from ..lang.values import as_input, shape_of
from .provenance import not_finite, scan


def first_bad_row(blocks, rows: int):
    """The first row (of `rows`) in which any block, reshaped to (rows, -1), is not finite; None
    when every block is finite."""
    bad = None
    for block in blocks:
        a = np().asarray(to_host(block))
        a = as_rows(a if a.dtype.kind == "c" else a.astype(float), rows)     # complex: isfinite of both parts
        found = np().flatnonzero(~np().isfinite(a).all(axis=1))
        if found.size and (bad is None or found[0] < bad):
            bad = int(found[0])
    return bad


def _element_label(name, shape, k) -> str:
    if not shape:
        return name
    return f"{name}[{','.join(str(i) for i in np().unravel_index(k, shape))}]"


def keeping_notes(diagnose):
    """Run a diagnosis without disturbing the kinks and detached places already noted, and never
    fail: a diagnosis must not turn a result into an error."""
    saved = (list(NOTES.kinks), list(NOTES.detached))
    try:
        return diagnose()
    except Exception:
        return []
    finally:
        NOTES.kinks[:], NOTES.detached[:] = saved


def _reverse_findings(target, inputs, wrt, seed, dtype_name, limits, output) -> list:
    from ..diff.reverse import grad
    again = grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits, target=target, keep_tape=True)
    return scan(again.tape, list(wrt), again.output_index, again.seed, target.source, output)


def diagnose_jacobian(result, target, dtype_name, limits) -> None:
    """Fill `result.nonfinite` when the value or the Jacobian is not finite."""
    wrt = list(result.jacobian)
    out_shape = shape_of(result.value)
    rows = int(np().prod(out_shape)) if out_shape else 1
    bad_row = first_bad_row(result.jacobian.values(), rows) if wrt else None
    if bad_row is None and not not_finite(result.value):
        return
    if bad_row is None:               # only the value: the first output element that is not finite
        bad_row = first_bad_row([result.value], rows)
    seed = None
    if out_shape:
        seed = np().zeros(out_shape)
        seed.reshape(-1)[bad_row] = 1.0
    label = _element_label("f", out_shape, bad_row)
    result.nonfinite = keeping_notes(
        lambda: _reverse_findings(target, result.inputs, wrt, seed, dtype_name, limits, label))


def diagnose_hessian(result, target, dtype_name, limits) -> None:
    """Fill `result.nonfinite` when the value, the gradient or the Hessian is not finite."""
    wrt = list(result.hessian)
    if not_finite(result.value) or any(not_finite(g) for g in result.gradient.values()):
        result.nonfinite = keeping_notes(
            lambda: _reverse_findings(target, result.inputs, wrt, None, dtype_name, limits, "f"))
        return
    for a in wrt:
        rows = max(1, int(np().prod(shape_of(result.inputs[a]))))
        bad_row = first_bad_row([result.hessian[a][b] for b in wrt], rows)
        if bad_row is not None:
            result.nonfinite = keeping_notes(
                lambda: _gradient_row_findings(target, result.inputs, wrt, a, bad_row, dtype_name, limits))
            return


def _gradient_row_findings(target, inputs, wrt, name, k, dtype_name, limits) -> list:
    """The gradient's sweep recorded on an outer tape that keeps every value, then that tape swept
    from element k of ∂f/∂name: the first non-finite value or adjoint of the Hessian's row."""
    from ..diff.common import prepare, sweep, unit, watched_run
    target, inputs = prepare(None, inputs, None, None, dtype_name, target)
    outer = Tape(persistent=True, keep_values=True)
    watched = {w: outer.watch(inputs[w]) for w in wrt}
    inner = Tape()
    out, boxed, _ = watched_run(target, {**inputs, **watched}, wrt, limits, inner)
    g = sweep(inner, out, as_input(1.0), target)[boxed[name].index]
    if g.__class__ is not Var or g.tape is not outer:
        return []
    label = f"(∂f/∂{_element_label(name, shape_of(inputs[name]), k)})"
    return scan(outer, list(wrt), g.index, unit(inputs[name], k), target.source, label)
