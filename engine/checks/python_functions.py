"""A hand-derived gradient of a plain Python function (issue 29 item 4): `check_gradient(f,
grad=g, at={...})` with f and g numpy code the language never sees. g is checked against central
differences of f with the tool's own machinery (differences.full_check / fast_check: the same
power-of-two steps, Richardson extrapolation, error estimates, kink and jump verdicts). f runs as
Python, so no path through it is recorded: a perturbed run that takes another branch cannot be
told apart (the `branch` verdict needs the language's recorded decisions)."""
from __future__ import annotations

import inspect
import math

from ...parser.errors import SourceError
from ..core.backend import np
from ..diff.common import integer_wrt
from ..lang.values import is_integer_input
from .differences import Objective, fast_check, full_check
from .hand import HandGradient
from .report import CheckReport, tolerance_for


class PythonRunner:
    """A Python function as the checks' runner: the inputs by position, in `order`; a float or a
    float64 array back. No recorded path: `signature` stays empty."""

    def __init__(self, fn, order):
        self.fn, self.order, self.signature = fn, list(order), ()
        self.target = None

    def __call__(self, values):
        out = self.fn(*[np().array(values[n]) if hasattr(values[n], "shape") else values[n]   # f's own copies
                        for n in self.order])
        a = np().asarray(out, dtype=np().float64)
        return float(a) if a.shape == () else a


def input_order(fn, at: dict) -> list:
    """f's parameters that `at` gives, in f's order (the others after, as given)."""
    try:
        params = [p for p in inspect.signature(fn).parameters if p in at]
    except (TypeError, ValueError):          # a builtin or a C function: no signature
        params = []
    return params + [n for n in at if n not in params]


def check_python_gradient(fn, at, grad, mode="full", seed=None, dtype="float64", rtol=None, atol=None, step=None,
                          wrt=None) -> CheckReport:
    """grad (a callable, or a dict of numbers and arrays by name) against central differences of fn."""
    if grad is None:
        raise SourceError("usage", "a Python function has no AD in autodiff: give its hand-derived gradient, "
                          "grad=g (g takes f's arguments and returns the gradient)", None,
                          "or write f in the language (an expression or a .py program) to check AD")
    if not at:
        raise SourceError("missing input", "give the point with at={...}: the values of f's arguments")
    float_type = np().float32 if dtype == "float32" else np().float64
    # integer data (class labels, indices) stays integers: a constant, never moved
    inputs = {k: (np().array(v) if is_integer_input(v) else float(float_type(v)) if np().ndim(v) == 0
                  else np().array(v, dtype=float_type)) for k, v in at.items()}
    order = input_order(fn, inputs)
    names = list(wrt or [n for n in order if not is_integer_input(inputs[n])])
    unknown = [n for n in names if n not in inputs]
    if unknown:
        raise SourceError("unknown input", f"wrt names {unknown[0]!r}, which at does not give")
    integer = [n for n in names if is_integer_input(inputs[n])]
    if integer:
        raise integer_wrt(integer[0])
    hand = HandGradient(grad, names, variables=order).at(inputs)
    tol = tolerance_for(dtype, rtol, atol, step)
    objective = Objective(PythonRunner(fn, order))
    report = CheckReport(mode=mode, claimed="hand", reference="FD", dtype=dtype, tolerance=tol)
    if mode == "full" or not any(np().size(inputs[n]) for n in names):
        report.mode = "full"
        report.entries, report.value = full_check(objective, inputs, hand, tol, names, batch=False)
    else:
        report.seed = int(seed)           # the caller's, or one it drew
        report.projection, report.value = fast_check(objective, inputs, hand, tol, report.seed, names)
        if report.projection.failed:
            rows, _ = full_check(objective, inputs, hand, tol, names, batch=False)
            report.full = CheckReport(mode="full", claimed="hand", reference="FD", dtype=dtype, tolerance=tol,
                                      value=report.value, entries=rows)
    if isinstance(report.value, float) and not math.isfinite(report.value) and hasattr(objective, "error"):
        raise SourceError("bad output", f"f failed at the point: {type(objective.error).__name__}: {objective.error}")
    report.evaluations = objective.count
    return report
