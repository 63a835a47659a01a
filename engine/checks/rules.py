"""Every user rule checked where it was used (issue 30 item 3): each custom_vjp or custom_jvp rule
a run passed through (the run's RuleUse notes, lang/custom_rules.py) is verified at the points it
was evaluated at, against the derivative of its own primal function by AD (the function run on
boxes, its rule not involved) and against central differences of that function.

- a custom_vjp rule: its cotangents for the cotangent g the run gave it, against AD's vᵀJ with
  v = g, argument by argument; finite differences check each argument's along a seeded direction;
- a custom_jvp rule: its tangent output for the tangent the run gave it (a reverse run, which
  transposes the rule: the tangent of ones), against AD's J·t and the central difference along t.

A rule that disagrees is a failing row naming the rule, its file and line, the point and the
numbers; a trusted rule (`rules = "trusted"`, `--trust-rules`: a clipped or straight-through
gradient, deliberately not the derivative) is a `trusted` row instead, listed, never passed
silently. One row per rule and point (the first USES_PER_RULE uses of each rule)."""
from __future__ import annotations

import os

from ...parser.errors import SourceError
from ..core import ops
from ..core.backend import np
from ..core.tape import Dual, Tape, Var, backward, new_level, strip
from ..lang.custom_rules import RuleUse
from .differences import power_of_two_step
from .report import FAIL, PASS, TRUSTED, EntryCheck, fmt

USES_PER_RULE = 3
# central differences at a power-of-two step near 2^-17 |x|: good to about 1e-9 relative in
# float64 where f is smooth; this much leaves room for f's rounding where f is large
FD_RTOL = 1e-5
SHOWN_ELEMENTS = 8          # an array in a message: its elements up to this many


def _array(v):
    return np().asarray(strip(v), dtype=np().float64)


def shown(v) -> str:
    a = _array(v)
    if a.ndim == 0:
        return fmt(float(a))
    flat = a.reshape(-1)
    if flat.size <= SHOWN_ELEMENTS:
        text = ", ".join(fmt(float(x)) for x in flat)
        return f"[{text}]" if a.ndim == 1 else f"array of shape {a.shape} [{text}]"
    return f"array of shape {a.shape}"


def _bytes(v):
    a = _array(v)
    return a.shape, a.tobytes()


def _rule_place(function, filename) -> str:
    rule = function.rule
    span = getattr(rule.node, "span", None)
    where = f"{os.path.basename(filename)}:{span.line}" if filename and span else (
        f"line {span.line}" if span else "")
    return f"{function.kind} rule `{rule.name}`" + (f" at {where}" if where else "")


def _point(function, args) -> str:
    return ", ".join(f"{p} = {shown(a)}" for p, a in zip(function.params, args))


def _agree(a, b, rtol, atol) -> bool:
    a, b = _array(a), _array(b)
    if a.shape != b.shape:
        a, b = np().broadcast_arrays(a, b)
    return bool(np().all(np().abs(a - b) <= atol + rtol * np().abs(b)))


def _primal(function, args):
    return function.interp.call(function.fn, list(args), function.fn.node.span)


def _ad_vjp(function, args, g) -> list:
    """vᵀJ of the primal function at args, v = g, by a reverse sweep of its own run."""
    tape = Tape(persistent=False)
    watched = [tape.watch(a) for a in args]
    y = _primal(function, watched)
    adj = backward(tape, y, g) if y.__class__ is Var and y.tape is tape else [None] * len(tape)
    return [ops.zeros_like(a) * 1.0 if adj[w.index] is None else adj[w.index] for a, w in zip(args, watched)]


def _ad_jvp(function, args, i, t):
    """J·t of the primal function at args along argument i, by one forward pass."""
    level = new_level()
    y = _primal(function, [Dual(a, t, level) if k == i else a for k, a in enumerate(args)])
    if y.__class__ is Dual and y.level == level:
        return y.tangent
    return ops.zeros_like(strip(y)) * 1.0


def _along(f, args, i, u):
    """The derivative of f(args) along u in argument i, by one forward pass at a fresh level (the
    rule run on boxes: a Hessian or higher derivative differentiates it so)."""
    level = new_level()
    y = f([Dual(a, u, level) if k == i else a for k, a in enumerate(args)])
    if y.__class__ is Dual and y.level == level:
        return strip(y.tangent)
    return ops.zeros_like(strip(y)) * 1.0


def _second_order(use, tol):
    """(rule's second order, AD's, the central difference of AD's first order) along the use's
    direction: how the rule's output moves with the point, as a Hessian through it sees it."""
    function, args = use.function, use.args
    if function.kind == "custom_vjp":
        i, u = 0, _direction(np().shape(args[0]), 7)
        k = 0

        def rule(a):
            return function.cotangents(a, use.seed, noted=False)[k]

        def ad(a):
            return _ad_vjp(function, a, use.seed)[k]
    else:
        i = use.position
        t = use.seed if use.mode == "jvp" else np().ones(np().shape(args[i]))
        u = t

        def rule(a):
            return function.tangent_out(a, [t if j == i else ops.zeros_like(x) * 1.0 for j, x in enumerate(a)])

        def ad(a):
            return _ad_jvp(function, a, i, t)
    xi = _array(args[i])
    h = power_of_two_step(float(np().max(np().abs(xi))) if xi.size else 1.0, tol.step)
    plus = [xi + h * u if j == i else a for j, a in enumerate(args)]
    minus = [xi - h * u if j == i else a for j, a in enumerate(args)]
    fd = (_array(ad(plus)) - _array(ad(minus))) / (2 * h)
    return i, _along(rule, args, i, u), _along(ad, args, i, u), fd


def _fd_jvp(function, args, i, t, rel):
    """The central difference of the primal function along t in argument i, and the step."""
    xi, ti = _array(args[i]), _array(t)
    h = power_of_two_step(float(np().max(np().abs(xi))) if xi.size else 1.0, rel)
    plus = [xi + h * ti if k == i else a for k, a in enumerate(args)]
    minus = [xi - h * ti if k == i else a for k, a in enumerate(args)]
    return (_array(_primal(function, plus)) - _array(_primal(function, minus))) / (2 * h)


def _direction(shape, seed):
    return np().random.default_rng(seed).standard_normal(shape)


def _row(label, rule, reference, verdict, reason, tol) -> EntryCheck:
    r, d = _array(rule).reshape(-1), _array(reference).reshape(-1)
    diff = np().abs(r - d) if r.shape == d.shape else np().array([np().inf])
    k = int(np().argmax(diff)) if diff.size else 0
    abs_err = float(diff[k]) if diff.size else 0.0
    rel_err = abs_err / abs(float(d[k])) if diff.size and r.shape == d.shape and d[k] != 0 else abs_err
    claimed = float(r[k]) if r.size else 0.0
    ref = float(d[k]) if d.size and r.shape == d.shape else 0.0
    return EntryCheck(label, claimed, ref, abs_err, rel_err, 0.0, tol.atol + tol.rtol * abs(ref), verdict, reason)


def _vjp_checks(use, tol):
    """(argument, rule, AD, FD of ⟨g, J·v⟩, ⟨rule, v⟩) per argument of a custom_vjp use."""
    function, args, g = use.function, use.args, use.seed
    rule = function.cotangents(args, g, noted=False)
    ad = _ad_vjp(function, args, g)
    out = []
    for k, a in enumerate(args):
        v = _direction(np().shape(a), k)
        fd = float(np().sum(_array(g) * _fd_jvp(function, args, k, v, tol.step)))
        out.append((k, rule[k], ad[k], fd, float(np().sum(_array(rule[k]) * v))))
    return out


def _jvp_checks(use, tol):
    function, args, i = use.function, use.args, use.position
    t = use.seed if use.mode == "jvp" else np().ones(np().shape(args[i]))
    tangents = [t if k == i else ops.zeros_like(a) * 1.0 for k, a in enumerate(args)]
    rule = strip(function.tangent_out(args, tangents))
    ad = _ad_jvp(function, args, i, t)
    fd = _fd_jvp(function, args, i, t, tol.step)
    return [(i, rule, ad, fd, rule)], t


def check_use(use: RuleUse, tol, trusted: bool, filename=None) -> list:
    """The rows of one use of a rule: PASS, FAIL or TRUSTED, the failing ones naming the rule."""
    function = use.function
    place = _rule_place(function, filename)
    label = f"rule `{function.rule.name}`"
    fd_tol = max(tol.rtol, FD_RTOL)
    if function.kind == "custom_vjp":
        checks, what = _vjp_checks(use, tol), f" (cotangent {shown(use.seed)})"
    else:
        checks, t = _jvp_checks(use, tol)
        what = f" (tangent {shown(t)})" if np().size(t) > 1 or float(np().sum(t)) != 1.0 else ""
    if use.nested:                      # a Hessian or higher derivative went through the rule
        i, rule2, ad2, fd2 = _second_order(use, tol)
        checks.append((i, rule2, ad2, fd2, rule2, True))
    rows = []
    for k, rule, ad, fd, projected, *order in checks:
        second = bool(order)
        param = function.params[k]
        name = f"{label}, {param}" + (" (second order)" if second else "")
        by_ad = _agree(rule, ad, tol.rtol, tol.atol)
        p, f = _array(projected), _array(fd)
        by_fd = bool(np().all(np().abs(p - f) <= fd_tol * (1.0 + np().abs(f) + np().abs(p))))
        if by_ad and by_fd:
            rows.append(_row(name, rule, ad, PASS, "", tol))
            continue
        for_arg = f", for {param}" if len(function.params) > 1 else ""
        once_more = ", differentiated once more (a higher derivative went through it)," if second else ""
        reason = (f"{place}{once_more} disagrees with the {'second ' if second else ''}derivative of "
                  f"`{function.name}` at {_point(function, use.args)}{for_arg}{what}: rule {shown(rule)}, "
                  f"derivative {shown(ad)}")
        if not by_fd:
            along = "along a seeded random direction " if function.kind == "custom_vjp" else ""
            reason += f" (central differences {along}give {shown(fd)}, the rule {shown(projected)})"
        verdict = TRUSTED if trusted else FAIL
        if trusted:
            reason += "; trusted: a rule deliberately not the derivative"
        rows.append(_row(name, rule, ad, verdict, reason, tol))
    return rows


def check_rules(uses, tol, trusted: bool = False, filename=None) -> list:
    """The rows of every rule the run passed through, at its first USES_PER_RULE uses."""
    seen: dict = {}
    done = set()
    rows = []
    for use in uses:
        key = (use.function.name, use.function.kind)
        same = (key, use.mode, use.position, use.nested, _bytes(use.seed), *(_bytes(a) for a in use.args))
        if seen.get(key, 0) >= USES_PER_RULE or same in done:
            continue
        done.add(same)
        seen[key] = seen.get(key, 0) + 1
        try:
            rows += check_use(use, tol, trusted, filename)
        except SourceError as e:
            place = _rule_place(use.function, filename)
            rows.append(EntryCheck(f"rule `{use.function.rule.name}`", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, FAIL,
                                   f"{place}: its check at {_point(use.function, use.args)} raised: {e.message}"))
    return rows


def mark_trusted(report) -> None:
    """A run through a trusted rule that is not the derivative: its AD and the finite differences
    of the function disagree by design, so a failing entry against FD is listed as trusted (the
    rule named), not failed. Hand-derived claims against AD stay judged."""
    trusted = [r for r in report.rules if r.verdict == TRUSTED]
    if not trusted or report.reference != "FD":
        return
    names = sorted({r.label.split(",")[0] for r in trusted})
    rows = report.full.entries if report.full is not None else report.entries
    for row in [*rows, report.projection]:
        if row is not None and row.verdict == FAIL:
            row.verdict = TRUSTED
            row.reason = (f"{fmt(row.claimed)} vs {fmt(row.reference)}: the run passed through the trusted "
                          f"{' and '.join(names)}, which is not the derivative; FD sees the function")
