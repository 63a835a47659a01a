"""Verdicts: one entry's claimed derivative against a finite difference (`judge`, with kinks,
jumps and branches told apart) or against AD (`compare`, for hand-derived gradients), and the
words for branches and the engine's conventions at kinks."""
from __future__ import annotations

import math

from ...parser.errors import SourceError
from ..core.backend import np
from .report import (BRANCH, DETACHED, FAIL, INCONCLUSIVE, INCONCLUSIVE_RATIO, KINK, NONFINITE, PASS, EntryCheck,
                     Tolerance, as_float_array, complex_labels, entry_labels, fmt, real_entries)


def judge(label, claimed, f0, fp1, fm1, fp2, fm2, h, tol: Tolerance, branch_reason="",
          convention="", noise_floor=0.0, of_scale=0.0, relative_atol=False) -> EntryCheck:
    """Verdict for one entry from the five function values f(x), f(x±h), f(x±2h).
    `noise_floor` is a lower bound for the rounding noise of f (verdict_arrays.noise_floor_of).
    `of_scale` is the largest derivative of the same f checked alongside (an exact 0 next to entries of 1000 is
    resolved when FD is good to rtol * 1000, not to atol). `relative_atol` (entry-by-entry checks)
    caps atol at rtol times the size of f's derivatives, FD's among them."""
    d1 = (fp1 - fm1) / (2 * h)
    d2 = (fp2 - fm2) / (4 * h)
    fd = (4 * d1 - d2) / 3
    fmax = max(abs(f0), abs(fp1), abs(fm1), abs(fp2), abs(fm2))
    noise = max(tol.eps * fmax, noise_floor) / h if math.isfinite(fmax) else math.inf
    estimate = abs(d1 - d2) / 3 + 3 * noise
    scale = max(abs(claimed), abs(fd)) if math.isfinite(claimed) and math.isfinite(fd) else math.inf
    # atol relative to the size of f's derivatives (FD's and the others'): for a function of
    # magnitude 1e-10, atol = 1e-9 would pass a claim of 0
    size = max(of_scale, scale) if relative_atol and math.isfinite(scale) else 0.0
    tolerance = (min(tol.atol, tol.rtol * size) if size > 0 else tol.atol) + tol.rtol * scale
    abs_err = abs(claimed - fd)
    rel_err = abs_err / scale if scale else 0.0
    if abs_err != abs_err:
        rel_err = math.nan
    row = EntryCheck(label=label, claimed=claimed, reference=fd, abs_err=abs_err, rel_err=rel_err,
                     error_estimate=estimate, tolerance=tolerance, verdict=PASS, step=h)
    values = (f0, fp1, fm1, fp2, fm2)
    if not math.isfinite(claimed):
        row.verdict, row.reason = NONFINITE, f"the gradient entry is {fmt(claimed)}"
        return row
    if not all(math.isfinite(v) for v in values):
        where = [w for w, v in zip(("x", "x+h", "x-h", "x+2h", "x-2h"), values) if not math.isfinite(v)]
        row.verdict = NONFINITE
        row.reason = f"f is not finite at {', '.join(where)} (h = {fmt(h)}): near the edge of its domain?"
        return row
    if branch_reason:
        row.verdict, row.reason = BRANCH, branch_reason
        return row
    kink = _kink(f0, fp1, fm1, fp2, fm2, h, tol, tolerance, noise)
    if kink is not None:
        row.verdict, row.reason, row.left, row.right = KINK, kink[0], kink[1], kink[2]
        if convention:
            row.reason += f"; the engine applied: {convention}"
        return row
    if abs_err > tolerance + estimate:
        row.verdict = FAIL
        row.reason = (f"{fmt(claimed)} vs {fmt(fd)}: |error| {fmt(abs_err)} exceeds the tolerance "
                      f"{fmt(tolerance)} plus the FD error estimate {fmt(estimate)}")
    elif estimate > INCONCLUSIVE_RATIO * max(tolerance, tol.atol + tol.rtol * of_scale):
        resolution = max(tolerance, tol.atol + tol.rtol * of_scale)
        row.verdict = INCONCLUSIVE
        row.reason = (f"FD agrees, but its error estimate {fmt(estimate)} is {estimate / resolution:.3g} times "
                      f"the tolerance {fmt(resolution)}: an error up to the estimate would pass unseen"
                      + ("; f's rounding dominates (f is large next to its change over the step): "
                         "subtract its constant part" + (" or use float64" if tol.eps > 2.0 ** -52 else "") if 3 * noise > estimate / 2 else
                         "; the truncation error dominates: try a smaller step"))
    return row


def _kink(f0, fp1, fm1, fp2, fm2, h, tol, tolerance, noise):
    """(reason, left slope, right slope) when f is not differentiable at x, else None.

    Smooth f: f(x+h) - f(x-h) doubles from step h to 2h, and the one-sided slopes differ by h f''
    at step h and by 2h f'' at step 2h. At a jump of f the difference across x stays the same at
    both steps; at a kink the slopes differ by the same amount at both steps."""
    right1, left1 = (fp1 - f0) / h, (f0 - fm1) / h
    jump1, jump2 = fp1 - fm1, fp2 - fm2
    if abs(jump1) > 32 * tol.eps * max(abs(f0), abs(fp1), abs(fm1)) and abs(jump2 - jump1) < 0.25 * abs(jump1):
        return (f"f jumps by {fmt(jump1)} across x (f(x-h) = {fmt(fm1)}, f(x+h) = {fmt(fp1)}): "
                "not continuous here", left1, right1)
    right2, left2 = (fp2 - f0) / (2 * h), (f0 - fm2) / (2 * h)
    j1, j2 = right1 - left1, right2 - left2
    if abs(j1) > tolerance + 8 * noise and abs(j2 - j1) < 0.5 * abs(j1):
        return (f"one-sided slopes differ: {fmt(left1)} (left) vs {fmt(right1)} (right): "
                "not differentiable here", left1, right1)
    return None

def branch_reason(sig0, sig, label, direction) -> str:
    """Which decision a perturbed run changed, in words."""
    for i, (a, b) in enumerate(zip(sig0, sig)):
        if a != b:
            (line, col), before = a
            after = b[1]
            if isinstance(before, bool):
                return (f"{label}{direction} flips the decision at line {line}, column {col} "
                        f"({before} -> {after}): FD crossed a branch")
            return (f"{label}{direction} changes the loop count at line {line}, column {col} "
                    f"({before} -> {after}): FD crossed a branch")
    return f"{label}{direction} takes another path through the program: FD crossed a branch"


def detached_text(spans) -> list:
    """The places where the run cut a traced value with stop_gradient: 'line 1, column 5'."""
    return [f"line {s.line}, column {s.column}" if s else "a stop_gradient" for s in spans or ()]


def mark_detached(rows, places) -> None:
    """FD sees through stop_gradient/detach, AD does not: where the run cut its tape, a
    disagreement with FD is no evidence against AD, so it is a `detached` warning, not a fail."""
    if not places:
        return
    where = places[0] + (f" (and {len(places) - 1} more)" if len(places) > 1 else "")
    for row in rows:
        if row is not None and row.verdict == FAIL:
            row.verdict = DETACHED
            row.reason = (f"{fmt(row.claimed)} vs {fmt(row.reference)}: the run passed through stop_gradient "
                          f"at {where}; FD sees through it, AD does not, so FD is no evidence here")


def convention_text(conventions) -> str:
    if len(conventions) <= 1:
        return "".join(conventions)
    return f"its conventions at {len(conventions)} places ({'; '.join(conventions[:3])}" + \
        ("; …)" if len(conventions) > 3 else ")")


def conventions_of(kinks) -> list:
    """The kink notes of the AD run, once per place: 'line 2, column 5: abs at 0: ...'."""
    seen, out = set(), []
    for op, span, detail in kinks or ():
        key = (op, span.line if span else None, span.column if span else None)
        if key in seen:
            continue
        seen.add(key)
        out.append((f"line {span.line}, column {span.column}: " if span else "") + detail)
    return out

def scaled_atol(tol: Tolerance, derivatives) -> float:
    """atol, but never more than rtol times the largest derivative of f: for a function of
    magnitude 1e-10 a claim of 0 must not pass on atol alone (1e-9 would swallow it)."""
    largest = 0.0
    for d in derivatives:
        values = real_entries(d) if hasattr(d, "shape") or d.__class__ is complex else [float(d)]
        for v in values:
            if math.isfinite(v) and abs(v) > largest:
                largest = abs(v)
    return min(tol.atol, tol.rtol * largest) if largest > 0 else tol.atol


def compare(claimed: dict, reference: dict, inputs: dict, tol: Tolerance, names=None,
            conventions=()) -> list:
    """A hand-derived gradient against AD, entry by entry (AD is exact: no error estimate). A
    complex entry is compared part by part; a claim that is the conjugate of the reported gradient
    fails naming the convention it matches (JAX's)."""
    rows = []
    convention = convention_text(conventions)
    atol = scaled_atol(tol, reference.values())
    for name in names or list(reference):
        labels, wf, rf, conjugate = _claimed_entries(name, claimed[name], reference[name], atol, tol.rtol)
        for label, c, r in zip(labels, wf, rf):
            scale = max(abs(c), abs(r))
            abs_err = abs(c - r)
            tolerance = atol + tol.rtol * scale if math.isfinite(scale) else math.inf
            row = EntryCheck(label=label, claimed=c, reference=r, abs_err=abs_err,
                             rel_err=abs_err / scale if scale else 0.0, error_estimate=0.0, tolerance=tolerance,
                             verdict=PASS)
            if not (math.isfinite(c) and math.isfinite(r)):     # fails even where both agree (inf, inf):
                row.verdict = NONFINITE                          # the finite differences' rule, too
                row.reason = f"hand-derived {fmt(c)}, AD {fmt(r)}: not finite"
                row.rel_err = math.nan if abs_err != abs_err else row.rel_err
            elif abs_err > tolerance:
                if convention:
                    row.verdict = KINK
                    row.reason = (f"hand-derived {fmt(c)} vs AD {fmt(r)} at a non-differentiable point; "
                                  f"the engine applied: {convention}")
                else:
                    row.verdict = FAIL
                    row.reason = (f"hand-derived {fmt(c)} vs AD {fmt(r)}: |error| {fmt(abs_err)} exceeds "
                                  f"the tolerance {fmt(tolerance)}" + (f"; {JAX_CONVENTION}" if conjugate else ""))
            rows.append(row)
    return rows


JAX_CONVENTION = ("this is JAX's convention: the conjugate of the reported gradient (which is PyTorch's, "
                  "∂f/∂x + i ∂f/∂y at z = x + iy)")


def _claimed_entries(name, want, ref, atol: float, rtol: float) -> tuple:
    """(labels, claimed entries, AD's entries, whether the claim is the conjugate of AD's and not
    AD's itself): a complex gradient's entries are its real and imaginary parts."""
    shape = np().shape(ref) if hasattr(ref, "shape") else ()
    wshape = np().shape(want)
    if wshape != shape:
        if wshape != ():
            raise SourceError("shape mismatch", f"{name}: the expected value has shape {wshape}, "
                              f"but the computed one has shape {shape}")
        if np().iscomplexobj(want) and not np().iscomplexobj(ref):
            raise SourceError("shape mismatch", f"{name}: the expected value is one complex number, but the "
                              f"computed one is a real array of shape {shape}", None,
                              f"return a real array of shape {shape}: a complex input's Jacobian and Hessian are "
                              "the real blocks d(re, im) f / d(re, im) z; for f'(z) itself, pass --holomorphic")
        want = np().full(shape, want)
    if not (np().iscomplexobj(ref) or np().iscomplexobj(want)):
        wf = [float(want)] if not shape else as_float_array(want).tolist()
        rf = [float(ref)] if not shape else as_float_array(ref).tolist()
        return entry_labels(name, shape), wf, rf, False
    w, r = np().asarray(want, dtype=np().complex128), np().asarray(ref, dtype=np().complex128)
    conjugate = (not np().allclose(w, r, rtol=rtol, atol=atol)) and np().allclose(w, np().conj(r), rtol=rtol, atol=atol)
    return complex_labels(name, shape), real_entries(w).tolist(), real_entries(r).tolist(), bool(conjugate)
