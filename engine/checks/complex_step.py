"""The complex-step reference (issue 32 item 3): for a real-analytic real f of real inputs,
f'(x) ≈ Im f(x + ih) / h at h = 1e-20. Nothing is subtracted, so there is no cancellation: the
reference is good to the rounding of f' itself (its truncation error, h² f'''/6, is below any
float at this h), where central differences lose half the digits.

It holds only where every step of f extends to complex numbers analytically: an entry that does
not take complex values (comparisons, max, min, where's condition, ...: the table's
`complex_values`) or is not holomorphic (abs, real, imag, conj, angle: its `holomorphic`) on the
path from the inputs is refused, named with its place; so are complex inputs and outputs.
"""
from __future__ import annotations

import math

from ...parser.errors import SourceError
from ..core.backend import np, to_host
from ..core.complexes import complex_dtype, is_complex
from ..diff.common import run
from ..diff.complex_derivatives import not_holomorphic_steps
from ..lang.values import dtype
from .report import FAIL, NONFINITE, PASS, EntryCheck, entry_labels, fmt

STEP = 1e-20
NAME = "complex step"
# the reference's own error: the rounding of f' (a few eps, relative)
ROUNDING = 4


def refusal(what: str) -> SourceError:
    return SourceError("not real-analytic", f"--check complex-step needs a real-analytic real f of real inputs: "
                       f"{what}", None, "use --check (central differences) instead")


def check_real_analytic(target, inputs: dict, names: list, limits) -> None:
    """Raise where the complex step is no reference here (the module's docstring says when)."""
    complex_inputs = [n for n in names if is_complex(inputs[n])]
    if complex_inputs:
        raise refusal(f"{', '.join(complex_inputs)} {'is' if len(complex_inputs) == 1 else 'are'} complex (the "
                      "complex step perturbs a real input along i)")
    probe = {**inputs, **{n: np().asarray(inputs[n], dtype=complex_dtype(dtype()))[()] for n in names}}
    try:
        steps = not_holomorphic_steps(target, probe, names, limits)
    except SourceError as e:
        if e.kind not in ("complex values", "complex ordering"):
            raise
        where = f" ({e.span.line}:{e.span.column})" if e.span is not None else ""
        raise refusal(f"a step on its path{where} does not extend to complex numbers analytically: "
                      f"{e.message.split(';')[0]}") from None
    if steps:
        raise refusal("on its path: " + ", ".join(steps) + " (not holomorphic: f(x + ih) is not analytic there)")


def complex_step_rows(target, inputs: dict, claimed: dict, names: list, tol, limits, output_seed=None) -> tuple:
    """Every entry of `claimed` against Im f(x + ih)/h: (rows, evaluations)."""
    check_real_analytic(target, inputs, names, limits)
    rows, count = [], 0
    for name in names:
        x = np().asarray(inputs[name], dtype=np().float64)
        g = np().asarray(claimed[name], dtype=np().float64).reshape(-1)
        for k, label in enumerate(entry_labels(name, x.shape)):
            moved = x.astype(complex_dtype(dtype())).reshape(-1)
            moved[k] += 1j * STEP
            point = {**inputs, name: moved.reshape(x.shape)[()]}
            out, _ = run(target, point, limits)
            count += 1
            reference = _objective(out, output_seed).imag / STEP
            rows.append(_row(label, float(g[k]), float(reference), tol))
    return rows, count


def _objective(out, output_seed):
    a = np().asarray(to_host(out))
    if output_seed is not None:
        a = a * np().asarray(to_host(output_seed), dtype=np().float64)
    return complex(a.sum())


def _row(label, claimed: float, reference: float, tol) -> EntryCheck:
    scale = max(abs(claimed), abs(reference))
    abs_err = abs(claimed - reference)
    tolerance = tol.atol + tol.rtol * scale
    row = EntryCheck(label=label, claimed=claimed, reference=reference, abs_err=abs_err,
                     rel_err=abs_err / scale if scale else 0.0, error_estimate=ROUNDING * tol.eps * abs(reference),
                     tolerance=tolerance, verdict=PASS, step=STEP)
    if not (math.isfinite(claimed) and math.isfinite(reference)):
        row.verdict, row.reason = NONFINITE, f"claimed {fmt(claimed)}, complex step {fmt(reference)}: not finite"
    elif abs_err > tolerance + row.error_estimate:
        row.verdict = FAIL
        row.reason = (f"claimed {fmt(claimed)} vs the complex step {fmt(reference)}: |error| {fmt(abs_err)} exceeds "
                      f"the tolerance {fmt(tolerance)}")
    return row
