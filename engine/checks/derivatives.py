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
from ..diff.function import Function
from ..diff.higher import derivatives
from ..lang.values import set_dtype
from .higher import vector_full_check
from .rules import check_rules, mark_trusted
from .report import CheckReport, tolerance_for
from .verdicts import conventions_of, detached_text, mark_detached


class LowerOrders:
    """f, f', ..., f^(order) in one input as a function of the inputs (the other inputs held at
    the values they are given); `signature` is the last run's control-flow signature."""

    def __init__(self, target, name, order, method, dtype_name, limits):
        self.target, self.name, self.order, self.method = target, name, order, method
        self.dtype_name, self.limits = dtype_name, limits
        self.signature = ()
        self.function = Function(target=target) if order == 0 else None

    def __call__(self, values):
        if self.order == 0:                       # f alone: a plain run
            r = self.function.evaluate_result(values, self.dtype_name, self.limits)
            self.signature = tuple(r.signature)
            return np().asarray([float(to_host_value(r.value))])
        r = derivatives(None, values, self.order, self.method, dtype_name=self.dtype_name, limits=self.limits,
                        target=self.target, wrt=self.name)
        self.signature = tuple(r.signature)
        return np().asarray([float(r.value), *(float(d) for d in r.derivatives)])


def order_label(k: int) -> str:
    """f, f′, f″, f‴, f^(4), ..."""
    return {0: "f", 1: "f′", 2: "f″", 3: "f‴"}.get(k, f"f^({k})")


def check_derivatives(result, target, dtype="float64", limits=None, rtol=None, atol=None,
                      step=None, trust_rules=False) -> CheckReport:
    """Check a DerivativeResult (engine/diff/higher.py): row k compares f^(k) with the central
    difference of f^(k-1) along the input `result.name`."""
    set_dtype(dtype)
    tol = tolerance_for(dtype, rtol, atol, step)
    conventions = conventions_of(result.kinks)
    report = CheckReport(mode="full", claimed="AD", reference="FD", dtype=dtype, tolerance=tol, value=result.value,
                         conventions=conventions, kind="derivative", detached=detached_text(result.detached),
                         rules=check_rules(result.rules, tol, trust_rules, getattr(target, "filename", None)))
    runner = LowerOrders(target, result.name, result.order - 1, result.method, dtype, limits)
    inputs = {k: to_host_value(v) for k, v in result.inputs.items()}
    claimed = [[float(d)] for d in result.derivatives]
    labels = [order_label(k) for k in range(result.order)]

    d = "∂" if len(inputs) > 1 else "d"         # a partial derivative: the other inputs are held

    def label(lower, name):
        k = labels.index(lower) + 1
        return f"{order_label(k)} = {d}{order_label(k - 1)}/{d}{name}"

    rows, report.evaluations = vector_full_check(runner, inputs, [result.name], claimed, labels, tol, conventions,
                                                 label)
    report.entries = [row[0] for row in rows]
    mark_detached(report.entries, report.detached)
    mark_trusted(report)
    return report


__all__ = ["check_derivatives", "LowerOrders", "order_label"]
