"""Verdicts for many entries at once: verdicts.judge's arithmetic on arrays, in the same order of
operations (IEEE +, -, *, / and abs round alike in numpy and in Python, so every number is the
same to the last bit). An entry that passes gets its row from the arrays; any other entry (a
kink, a fail, an inconclusive one, a branch, a value that is not finite) goes through `judge`
itself, which writes its reason, so statuses and messages are judge's by construction."""
from __future__ import annotations

from ..core.backend import np
from .report import INCONCLUSIVE_RATIO, PASS, EntryCheck, Tolerance
from .verdicts import judge


def judge_all(labels, claimed, f0, fp1, fm1, fp2, fm2, steps, tol: Tolerance, reasons=None, convention="",
              noise_floor=0.0, of_scale=0.0, relative_atol=False) -> list:
    """judge(labels[e], claimed[e], f0[e], fp1[e], ..., steps[e], tol, reasons[e], ...) for every
    entry e (f0, noise_floor and of_scale a number or one per entry; `reasons` the branch reasons,
    None: none)."""
    xp = np()
    claimed, fp1, fm1, fp2, fm2, h = (xp.asarray(a, dtype=xp.float64) for a in (claimed, fp1, fm1, fp2, fm2, steps))
    f0, noise_floor, of_scale = (xp.broadcast_to(xp.asarray(a, dtype=xp.float64), claimed.shape)
                                 for a in (f0, noise_floor, of_scale))
    with xp.errstate(all="ignore"):          # rows where anything overflows are judge's below
        numbers = _arithmetic(claimed, f0, fp1, fm1, fp2, fm2, h, tol, noise_floor, of_scale, relative_atol)
        passed = _passes(numbers, claimed, f0, fp1, fm1, fp2, fm2, h, tol, of_scale)
    if reasons is not None:
        passed &= xp.asarray([not r for r in reasons], dtype=bool).reshape(passed.shape)
    fd, abs_err, rel_err, estimate, tolerance = (a.tolist() for a in numbers[:5])
    args = [a.tolist() for a in (claimed, f0, fp1, fm1, fp2, fm2, h)]
    floors, scales = noise_floor.tolist(), of_scale.tolist()
    rows = []
    for e, ok in enumerate(passed.tolist()):
        if ok:
            rows.append(EntryCheck(label=labels[e], claimed=args[0][e], reference=fd[e], abs_err=abs_err[e],
                                   rel_err=rel_err[e], error_estimate=estimate[e], tolerance=tolerance[e],
                                   verdict=PASS, step=args[6][e]))
        else:
            rows.append(judge(labels[e], *(a[e] for a in args), tol, reasons[e] if reasons is not None else "",
                              convention, noise_floor=floors[e], of_scale=scales[e], relative_atol=relative_atol))
    return rows


def _arithmetic(claimed, f0, fp1, fm1, fp2, fm2, h, tol, noise_floor, of_scale, relative_atol) -> tuple:
    """(fd, abs_err, rel_err, estimate, tolerance, noise, fmax): judge's numbers, where finite."""
    xp = np()
    d1 = (fp1 - fm1) / (2 * h)
    d2 = (fp2 - fm2) / (4 * h)
    fd = (4 * d1 - d2) / 3
    fmax = xp.maximum.reduce([xp.abs(f0), xp.abs(fp1), xp.abs(fm1), xp.abs(fp2), xp.abs(fm2)])
    noise = xp.maximum(tol.eps * fmax, noise_floor) / h
    estimate = xp.abs(d1 - d2) / 3 + 3 * noise
    scale = xp.maximum(xp.abs(claimed), xp.abs(fd))
    size = xp.maximum(of_scale, scale) if relative_atol else xp.zeros_like(scale)
    tolerance = xp.where(size > 0, xp.minimum(tol.atol, tol.rtol * size), tol.atol) + tol.rtol * scale
    abs_err = xp.abs(claimed - fd)
    rel_err = xp.where(scale != 0, abs_err / xp.where(scale != 0, scale, 1.0), 0.0)
    return fd, abs_err, rel_err, estimate, tolerance, noise, fmax


def _passes(numbers, claimed, f0, fp1, fm1, fp2, fm2, h, tol, of_scale):
    """Where judge would say `pass`: everything finite, no kink, no fail, not inconclusive."""
    xp = np()
    fd, abs_err, rel_err, estimate, tolerance, noise, fmax = numbers
    finite = xp.ones(claimed.shape, dtype=bool)
    for a in (claimed, f0, fp1, fm1, fp2, fm2, h, fd, abs_err, rel_err, estimate, tolerance, noise, fmax):
        finite &= xp.isfinite(a)
    # verdicts._kink: a jump of f across x, or one-sided slopes that differ alike at h and 2h
    right1, left1 = (fp1 - f0) / h, (f0 - fm1) / h
    jump1, jump2 = fp1 - fm1, fp2 - fm2
    near = xp.maximum.reduce([xp.abs(f0), xp.abs(fp1), xp.abs(fm1)])
    jumps = (xp.abs(jump1) > 32 * tol.eps * near) & (xp.abs(jump2 - jump1) < 0.25 * xp.abs(jump1))
    right2, left2 = (fp2 - f0) / (2 * h), (f0 - fm2) / (2 * h)
    j1, j2 = right1 - left1, right2 - left2
    slopes = (xp.abs(j1) > tolerance + 8 * noise) & (xp.abs(j2 - j1) < 0.5 * xp.abs(j1))
    fails = abs_err > tolerance + estimate
    resolution = xp.maximum(tolerance, tol.atol + tol.rtol * of_scale)
    inconclusive = estimate > INCONCLUSIVE_RATIO * resolution
    return finite & ~jumps & ~slopes & ~fails & ~inconclusive


def noise_floor_of(f0, fp1, fm1, fp2, fm2, reasons=None) -> float:
    """The rounding noise of f, measured across entries: eps max|f| underestimates it when f sums
    terms that cancel (sum(tanh(x) * x**2) on a symmetric grid is 0; its terms are not). For smooth
    f, (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h)) / 2 is of order h^3 f''' (tiny) plus noise, so its 0.9
    quantile (by position in the sorted list) over the finite entries without a branch reason
    measures the noise, which all entries of one function share."""
    xp = np()
    fp1, fm1, fp2, fm2 = (xp.asarray(a, dtype=xp.float64) for a in (fp1, fm1, fp2, fm2))
    if fp1.size < 4:
        return 0.0
    f0 = xp.broadcast_to(xp.asarray(f0, dtype=xp.float64), fp1.shape)
    keep = xp.isfinite(f0) & xp.isfinite(fp1) & xp.isfinite(fm1) & xp.isfinite(fp2) & xp.isfinite(fm2)
    if reasons is not None:
        keep &= xp.asarray([not r for r in reasons], dtype=bool).reshape(keep.shape)
    with xp.errstate(all="ignore"):
        diffs = xp.sort(xp.abs((fp1[keep] - fm1[keep]) - (fp2[keep] - fm2[keep]) / 2))
    if diffs.size == 0:
        return 0.0
    return float(diffs[min(diffs.size - 1, int(0.9 * diffs.size))])


def largest_finite_of(values) -> float:
    """The largest finite magnitude among `values` (0 where none is finite)."""
    a = np().abs(np().asarray(values, dtype=np().float64))
    a = a[np().isfinite(a)]
    return float(a.max()) if a.size else 0.0
