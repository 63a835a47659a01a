"""NaN provenance for n-th derivatives, as `grad` has it (provenance.py): when the value or one of
f', ..., f^(N) holds nan or inf, the first such order k is traced again and the first non-finite
number named with its place.

Reverse mode (nested tapes): below the last order asked for, the sweep that gave f^(k) ran while
an outer tape was active (its rules saw boxed adjoints, which keep 0 * inf = nan where plain floats
give 0), so k+1 nested tapes are recorded again, kept whole (nested_tapes.py), and the outermost,
which recorded that sweep, is scanned for its first non-finite value, naming the computation that
recorded it. The last order's sweep ran on no outer tape: its tape is swept again, as grad's is,
for the first non-finite adjoint. The value itself (k=0) is traced on f's own tape, as grad's.
Forward mode (nested duals): the dual pass, with all the computation's levels, is run again under
a tape that keeps every node's nested dual number, and the first node whose coefficient of
ε1···εk (its k-th derivative) is not finite is named. Runs that stay finite pay one finiteness
check per order and nothing else.
"""
from __future__ import annotations

from ..core.tape import Tape, Var, strip
from ..diff.common import prepare, run
from ..diff.higher import dual_coefficient, nested_duals
from ..lang.values import as_input
from .nested_tapes import CopiedTape, derivative_name, record_nested
from .provenance import not_finite, scan
from .provenance_matrices import keeping_notes

FORWARD_PHRASE = "first appeared in the forward sweep at"


def first_nonfinite_order(result) -> int | None:
    """0 when the value is not finite, else the first k whose f^(k) is not finite; None when all
    are finite (one check per order, stopping at the first that fails)."""
    for k, number in enumerate([result.value, *result.derivatives]):
        if not_finite(number):
            return k
    return None


def diagnose_derivatives(result, target, dtype_name, limits) -> None:
    """Fill `result.nonfinite` when the value or a derivative is not finite."""
    order = first_nonfinite_order(result)
    if order is None:
        return
    trace = dual_pass_findings if result.method == "forward" else nested_tape_findings
    result.nonfinite = keeping_notes(
        lambda: trace(target, result.inputs, result.name, order, result.order, dtype_name, limits))


def nested_tape_findings(target, inputs, name, order, computed, dtype_name, limits) -> list:
    """Where f^(order) (0: the value) first went non-finite, of the `computed` orders. Below the
    last order, its sweep ran while an outer tape was active, as in the computation (its rules see
    boxed adjoints, which keep 0 * inf = nan): that outer tape's values show where. The last order's
    sweep ran on no outer tape: it is swept again, as grad's tape is."""
    _, values = prepare(None, inputs, None, None, dtype_name, target)
    traced = min(order + 1, computed)
    nested = record_nested(target, values, name, traced, limits)
    tape, output = nested.tapes[0], nested.outputs[traced - 1]
    index = output.index if output.__class__ is Var and output.tape is tape else None
    findings = scan(tape, [name], index, as_input(1.0), target.source, derivative_name(traced - 1))
    if 0 < order < computed:            # the reverse sweep of this tape gives the next order: not asked
        findings = [f for f in findings if f["sweep"] == "forward"]
        if not findings:                # f^(order) recorded nothing on the outer tape (a constant)
            return nested_tape_findings(target, inputs, name, order, order, dtype_name, limits)
    recorder = _recorded_by(tape, nested.marks[0])
    for finding in findings:
        if finding["sweep"] == "forward" and recorder:
            finding["message"] = finding["message"].replace(
                FORWARD_PHRASE, f"first appeared in the sweep that gave {derivative_name(recorder)} (recorded "
                                f"on the tape swept for {derivative_name(traced)}) at", 1)
    return findings


def _recorded_by(tape, marks) -> int:
    """Which computation recorded the tape's first non-finite value: 0 for f's run, j for the
    sweep that gave f^(j) (marks: the tape's length after f, then after each sweep)."""
    for i, entry in enumerate(tape.entries):
        if entry is not None and not_finite(entry.value):
            return next((j for j, bound in enumerate(marks) if i < bound), 0)
    return 0


def dual_pass_findings(target, inputs, name, order, computed, dtype_name, limits) -> list:
    """The dual pass of x + ε1 + ... + ε_computed (all the levels the computation nested: a rule
    sees boxed tangents, as there) run again under a tape that keeps every node's nested dual
    number: the first node whose f^(order) coefficient is not finite."""
    _, values = prepare(None, inputs, None, None, dtype_name, target)
    levels, v = nested_duals(values[name], computed)
    tape = Tape(persistent=True, keep_values=True)    # made after the levels: it is above them, so it
    box = tape.watch(v)                                # records every op with its nested dual value
    held = {k: x for k, x in values.items() if k != name}
    run(target, {**held, name: box}, limits)

    def coefficient(z):
        c = dual_coefficient(z, levels, order)
        return 0.0 if c is None else strip(c)
    findings = scan(CopiedTape(tape, coefficient), [name], None, None, target.source)
    if order:
        for finding in findings:
            finding["message"] = finding["message"].replace(
                FORWARD_PHRASE, f"first appeared in the dual pass (nested dual numbers), in the "
                                f"{derivative_name(order)} coefficient, at", 1)
    return findings


__all__ = ["diagnose_derivatives", "first_nonfinite_order"]
