"""Numerical checks of n-th derivatives (`derivative --check`): each order f^(k) against central
differences of the order below, f^(k-1), along the varied input, on higher.py's machinery
(power-of-two steps, Richardson extrapolation, an error estimate, the same verdicts).

The lower orders at the perturbed points come from AD too (one run of order N-1 at each of
x ± h, x ± 2h gives f, f', ..., f^(N-1) there), so every order is checked against a first-order
difference of exact-to-rounding values, not against an N-th order difference of f, which
rounding would swamp past order 3 or so. Returns reports; never prints.
"""
from __future__ import annotations

from ..core.backend import np, to_host_value
from ..core.complexes import is_complex
from ..diff.function import Function
from ..diff.higher import derivatives
from ..lang.values import set_dtype
from .higher import vector_full_check
from .rules import check_rules, mark_trusted
from .report import CheckReport, real_entries, tolerance_for
from .verdicts import conventions_of, detached_text, mark_detached


class LowerOrders:
    """f, f', ..., f^(order) in one input as a function of the inputs (the other inputs held at
    the values they are given); `signature` is the last run's control-flow signature."""

    def __init__(self, target, name, order, method, dtype_name, limits, parts=False):
        self.target, self.name, self.order, self.method = target, name, order, method
        self.dtype_name, self.limits = dtype_name, limits
        self.parts = parts          # complex values: each as its (re, im) pair
        self.signature = ()
        self.function = Function(target=target) if order == 0 else None

    def __call__(self, values):
        if self.order == 0:                       # f alone: a plain run
            r = self.function.evaluate_result(values, self.dtype_name, self.limits)
            self.signature = tuple(r.signature)
            return self._numbers([to_host_value(r.value)])
        r = derivatives(None, values, self.order, self.method, dtype_name=self.dtype_name, limits=self.limits,
                        target=self.target, wrt=self.name)
        self.signature = tuple(r.signature)
        return self._numbers([r.value, *r.derivatives])

    def _numbers(self, values):
        if self.parts:
            return real_entries(np().asarray([complex(v) for v in values]))
        return np().asarray([float(v) for v in values])


def order_label(k: int) -> str:
    """f, f′, f″, f‴, f^(4), ..."""
    return {0: "f", 1: "f′", 2: "f″", 3: "f‴"}.get(k, f"f^({k})")


def check_derivatives(result, target, dtype="float64", limits=None, rtol=None, atol=None,
                      step=None, trust_rules=False) -> CheckReport:
    """Check a DerivativeResult (engine/diff/higher.py): row k compares f^(k) with the central
    difference of f^(k-1) along the input `result.name`. Complex values are checked part by part
    (re, im), the difference taken along the real axis: f^(k) = d f^(k-1) / dx for a holomorphic f
    (or a real input), the Cauchy-Riemann equations being the derivative's own check."""
    set_dtype(dtype)
    tol = tolerance_for(dtype, rtol, atol, step)
    conventions = conventions_of(result.kinks)
    report = CheckReport(mode="full", claimed="AD", reference="FD", dtype=dtype, tolerance=tol, value=result.value,
                         conventions=conventions, kind="derivative", detached=detached_text(result.detached),
                         rules=check_rules(result.rules, tol, trust_rules, getattr(target, "filename", None)))
    parts = any(is_complex(v) for v in [result.value, result.inputs[result.name], *result.derivatives])
    runner = LowerOrders(target, result.name, result.order - 1, result.method, dtype, limits, parts)
    inputs = {k: to_host_value(v) for k, v in result.inputs.items()}
    suffixes = (" (re)", " (im)") if parts else ("",)
    claimed = ([[part] for dk in result.derivatives for part in (complex(dk).real, complex(dk).imag)] if parts
               else [[float(dk)] for dk in result.derivatives])
    labels = [order_label(k) + suffix for k in range(result.order) for suffix in suffixes]

    d = "∂" if len(inputs) > 1 else "d"         # a partial derivative: the other inputs are held

    def label(lower, name):
        k, part = divmod(labels.index(lower), len(suffixes))
        return f"{order_label(k + 1)} = {d}{order_label(k)}/{d}{name}{suffixes[part]}"

    rows, report.evaluations = vector_full_check(runner, inputs, [result.name], claimed, labels, tol, conventions,
                                                 label, real_axis=True)
    report.entries = [row[0] for row in rows]
    mark_detached(report.entries, report.detached)
    mark_trusted(report)
    return report


__all__ = ["check_derivatives", "LowerOrders", "order_label"]
