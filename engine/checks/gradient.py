"""Numerical checks of gradients: finite differences with an error estimate, verdicts with reasons.

Returns reports; never prints. The method, per entry of the gradient:

* central differences at steps h and 2h, where h is a power of two near `step * max(|x|, 1)`
  (so x ± h and x ± 2h are exact in the working dtype), combined by Richardson extrapolation:
  FD = (4 D(h) - D(2h)) / 3;
* an error estimate for FD: |D(h) - D(2h)| / 3 (the truncation error of D(h), a conservative
  bound for the extrapolated value) plus the rounding error 3 eps max|f| / h;
* a verdict: `non-finite` (a value is nan or inf), `branch` (a perturbed run took another path
  through the program than the recorded run, so FD is no evidence either way), `kink` (the
  one-sided slopes differ at steps h and 2h alike: not differentiable here), `fail`
  (|AD - FD| > tolerance + error estimate), `inconclusive` (they agree, but the error estimate is
  over INCONCLUSIVE_RATIO times the tolerance, so the agreement proves little) or `pass`.
  Only `fail` and `non-finite` fail a check.

`fast` mode compares one random projection (the gradient dotted with a seeded random direction of
±h steps) with a directional central difference: five evaluations whatever the number of inputs.
On a failure it recomputes in full, so the report names the wrong entries.
"""
from __future__ import annotations

from ..core.backend import np, to_host_value
from ..diff import reverse
from ..diff.function import ReplayRunner
from ..lang.target import bind, load
from ..lang.values import set_dtype
from .complex_step import NAME, complex_step_rows
from .differences import Objective, fast_check, full_check, power_of_two_step
from .hand import HandGradient, expression_target
from .report import (BRANCH, entry_labels, FAIL, FAILING, INCONCLUSIVE, KINK, NONFINITE, PASS, TOLERANCES, WARNING, CheckReport,
                     EntryCheck, Tolerance, fmt, tolerance_for)
from .rules import check_rules, mark_trusted
from .verdicts import compare, conventions_of, detached_text, judge, mark_detached


def random_seed() -> int:
    import secrets                 # only fast checks without a seed need it
    return secrets.randbelow(2 ** 31)


def check_gradient(source=None, at=None, grad=None, *, fn=None, of=None, mode="full", seed=None,
                   dtype="float64", rtol=None, atol=None, step=None, wrt=None, output_seed=None,
                   limits=None, target=None, profile=None, ad_result=None, runner=None,
                   trust_rules=False) -> CheckReport:
    """Check a gradient at one point and return the report (never prints).

    Without `grad`, AD is checked against finite differences. With `grad` (a hand-derived gradient:
    a dict from input names to formulas in the language, numbers or arrays; the name of a function
    of the program; or a Python callable taking the inputs in order), the hand-derived
    gradient is checked against AD entry by entry in every mode (fast mode adds one directional
    finite difference). A run through stop_gradient/detach makes FD disagreements `detached`.
    `mode="fast"` checks one seeded random projection; `seed` makes it reproducible (the report
    carries the seed used). `profile` picks another dtype's tolerances (to show what they would say).
    `source` may be a Python function f: then `grad` (a callable or values) is checked against
    central differences of f (checks/python_functions.py).
    Each user rule (custom_vjp, custom_jvp) the AD run passed through is checked where it was used
    (checks/rules.py); `trust_rules` lists a disagreeing one as trusted instead of failing.
    """
    if mode not in ("full", "fast", "complex-step"):
        raise ValueError(f"mode must be 'full', 'fast' or 'complex-step', not {mode!r}")
    if callable(source):                    # plain Python: its hand gradient against differences of it
        from .python_functions import check_python_gradient
        return check_python_gradient(source, at, grad, mode, random_seed() if seed is None else seed, dtype, rtol,
                                     atol, step, wrt)
    set_dtype(dtype)
    target, inputs = bind(target or load(source, fn, of), dict(at or {}))
    # finite differences perturb host copies; each perturbed run moves its point to the device
    inputs = {k: to_host_value(v) for k, v in inputs.items()}
    result = ad_result or reverse.grad(None, inputs, wrt, output_seed, dtype_name=dtype, limits=limits, target=target)
    names = list(result.gradient)
    conventions = conventions_of(result.kinks)
    tol = tolerance_for(dtype, rtol, atol, step, profile)
    if grad is not None and not isinstance(grad, HandGradient):
        grad = HandGradient(grad, names, limits, variables=list(target.inputs), program=target)
    hand = grad.at(inputs) if grad is not None else None
    reference = {"full": "AD" if hand is not None else "FD", "complex-step": NAME}.get(mode, "FD")
    if mode == "fast" and not any(np().size(inputs[n]) for n in names):
        mode = "full"                  # no input entries: nothing to project, the full check is empty
    report = CheckReport(mode=mode, claimed="hand" if hand is not None else "AD", reference=reference,
                         dtype=dtype, tolerance=tol, value=result.value, conventions=conventions,
                         detached=detached_text(getattr(result, "detached", ())))
    objective = Objective(runner or ReplayRunner(target, limits), output_seed)
    if mode == "complex-step":
        report.entries, objective.count = complex_step_rows(target, inputs, hand or result.gradient, names, tol,
                                                            limits, output_seed)
    elif hand is not None and mode == "full":
        report.entries = compare(hand, result.gradient, inputs, tol, list(hand), conventions)
        if any(row.verdict == KINK for row in report.entries):
            _claims_between_slopes(report.entries, objective, inputs, hand, tol, conventions)
        name_the_slips(report.entries, target, inputs, hand, result.gradient, output_seed, dtype, limits, tol)
    elif mode == "full":
        report.entries, _ = full_check(objective, inputs, result.gradient, tol, names, conventions)
        mark_detached(report.entries, report.detached)
    elif hand is not None:
        _fast_hand(report, objective, inputs, hand, result.gradient, seed, conventions)
    else:
        _fast_with_fallback(report, objective, inputs, result.gradient, seed, conventions)
    report.evaluations = objective.count
    report.batched = objective.batched
    report.rules = check_rules(getattr(result, "rules", ()), tol, trust_rules, target.filename)
    mark_trusted(report)
    return report


def name_the_slips(rows, target, inputs, hand, ad_gradient, output_seed, dtype, limits, tol) -> None:
    """Each failing row of a hand-derived claim gets what explains its input's claim exactly, if
    anything does: the terms of AD's adjoint it equals and those it misses or adds, or a factor of
    2, a sign, a transpose (views/adjoint_terms.py); one recorded run and sweep, on failure only."""
    failing = [row for row in rows if row.verdict == FAIL]
    if not failing:
        return
    from ..views.adjoint_terms import explain, terms_of
    index = {}
    for name in hand:
        shape = np().shape(ad_gradient[name]) if name in ad_gradient else None
        if shape is not None:
            index.update({label: (name, k) for k, label in enumerate(entry_labels(name, shape))})
    names = list(dict.fromkeys(index[row.label][0] for row in failing if row.label in index))
    if not names:
        return
    terms = terms_of(target, inputs, names, output_seed, dtype, limits)
    found = {name: explain(hand[name], terms[name], ad_gradient[name], tol.rtol, tol.atol) for name in names}
    for row in failing:
        name, k = index.get(row.label, (None, 0))
        if found.get(name) is not None:
            row.reason += "; " + found[name].sentence(name, k)


def _claims_between_slopes(rows, objective, inputs, hand, tol, conventions) -> None:
    """A hand-derived claim that differs from AD at a kink or tie is excused (a warning) only if
    it lies between the one-sided slopes that finite differences measure there; outside them, or
    where f is smooth after all and FD disagrees with it, it fails (`maximum(x, x)*3` claimed as
    100 is wrong, whatever the tie)."""
    names = sorted({row.label.split("[")[0] for row in rows if row.verdict == KINK})
    fd_rows, _ = full_check(objective, inputs, {n: hand[n] for n in names}, tol, names, conventions)
    by_label = {row.label: row for row in fd_rows}
    for row in rows:
        fd = by_label.get(row.label)
        if row.verdict != KINK or fd is None:
            continue
        if fd.verdict == KINK and fd.left is not None and fd.right is not None:
            low, high = sorted((fd.left, fd.right))
            slack = row.tolerance + fd.error_estimate
            if low - slack <= row.claimed <= high + slack:
                continue
            row.verdict = FAIL
            row.reason = (f"hand-derived {fmt(row.claimed)} lies outside the one-sided slopes "
                          f"{fmt(fd.left)} (left) and {fmt(fd.right)} (right) at this non-differentiable point")
        elif fd.verdict == FAIL:
            row.verdict = FAIL
            row.reason = f"hand-derived {fmt(row.claimed)} vs AD {fmt(row.reference)}; finite differences give " \
                         f"{fmt(fd.reference)} (f is differentiable here: a tie or kink excuses no other value)"


def _fast_with_fallback(report, objective, inputs, claimed, seed, conventions):
    """One random projection; on a failure, every entry (so the report names the wrong ones)."""
    tol = report.tolerance
    report.seed = random_seed() if seed is None else int(seed)
    report.projection, _ = fast_check(objective, inputs, claimed, tol, report.seed, list(claimed))
    mark_detached([report.projection], report.detached)
    if report.projection.failed:
        rows, _ = full_check(objective, inputs, claimed, tol, list(claimed), conventions)
        mark_detached(rows, report.detached)
        report.full = CheckReport(mode="full", claimed=report.claimed, reference="FD", dtype=report.dtype,
                                  tolerance=tol, value=report.value, entries=rows, conventions=conventions)


def _fast_hand(report, objective, inputs, hand, ad_gradient, seed, conventions):
    """A hand-derived gradient in fast mode: every entry against AD (it costs no evaluations, so
    always), beside the one projection of it against FD; both count, so a hand formula that FD
    alone would fault (through stop_gradient, say) is still judged against AD, as in full mode."""
    tol = report.tolerance
    report.seed = random_seed() if seed is None else int(seed)
    report.projection, _ = fast_check(objective, inputs, hand, tol, report.seed, list(hand))
    mark_detached([report.projection], report.detached)
    rows = compare(hand, ad_gradient, inputs, tol, list(hand), conventions)
    name_the_slips(rows, objective.runner.target, inputs, hand, ad_gradient, objective.output_seed, report.dtype,
                   objective.runner.interp.limits, tol)
    report.full = CheckReport(mode="full", claimed="hand", reference="AD", dtype=report.dtype, tolerance=tol,
                              value=report.value, entries=rows, conventions=conventions)


# Re-exported: the names callers of the gradient check have imported from here.
__all__ = ["check_gradient", "random_seed", "HandGradient", "expression_target", "CheckReport", "EntryCheck",
           "Tolerance", "TOLERANCES", "tolerance_for", "judge", "compare", "power_of_two_step", "full_check",
           "fast_check", "Objective", "PASS", "FAIL", "BRANCH", "KINK", "NONFINITE", "INCONCLUSIVE",
           "FAILING", "WARNING"]
