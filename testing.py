"""Gradient checks as pytest assertions: `assert_gradient` fails with a readable message (the wrong
entries, claimed vs reference, the verdict and why), not a dataclass dump.

    from autodiff.testing import assert_gradient

    def test_loss_grad():
        assert_gradient(loss, grad=loss_grad, at={"W": W, "b": b})          # Python functions
        assert_gradient("model.py", fn="loss", grad="loss_grad", at={...})  # a program and its hand function
"""
from __future__ import annotations

MAX_SHOWN = 20      # failing entries listed in one message


def assert_gradient(f, grad=None, at=None, **options):
    """Check a gradient as autodiff.check_gradient does (same arguments); raise AssertionError with
    a readable message when the check fails; return the report otherwise."""
    from .engine import api
    report = api.check_gradient(f, at=at, grad=grad, **options)
    if not report.passed:
        raise AssertionError(failure_message(report))
    return report


def failure_message(report) -> str:
    """The failing entries of a check report, one line each with its reason under it."""
    from .engine.checks.report import fmt
    what = {"jacobian": "Jacobian", "hessian": "Hessian"}.get(report.kind, "gradient")
    claimed = f"the hand-derived {what}" if report.claimed == "hand" else f"AD's {what}"
    failures = report.failures
    lines = [f"{claimed} is wrong at {len(failures)} of {len(report.rows)} entries (verdict: {report.verdict})"]
    if report.projection is not None and report.projection.failed and report.full is None:
        failures = [report.projection]
    for row in failures[:MAX_SHOWN]:
        lines.append(f"  {row.label}: claimed {fmt(row.claimed)}, reference {fmt(row.reference)} "
                     f"({_reference(report)}): {row.verdict}")
        if row.reason:
            lines.append(f"    {row.reason}")
    if len(failures) > MAX_SHOWN:
        lines.append(f"  … and {len(failures) - MAX_SHOWN} more")
    lines.append(f"  ({report.dtype}: rtol {report.tolerance.rtol:g}, atol {report.tolerance.atol:g}"
                 + (f"; seed {report.seed}" if report.seed is not None else "") + ")")
    return "\n".join(lines)


def _reference(report) -> str:
    reference = report.full.reference if report.full is not None else report.reference
    return "AD" if reference == "AD" else "central differences"
