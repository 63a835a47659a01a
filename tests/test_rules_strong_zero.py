"""Issue 27 item 8: the one convention of the elementwise rules, walked over the whole table.

A zero adjoint (reverse mode) or a zero tangent (forward mode) times any local derivative,
infinite or nan included, is 0 (the strong zero of rules/comparisons.tangent_times): an
untaken where() branch, or another entry's nan, never leaks into an entry. Every elementwise
entry of the table is fed special points (0, -0, ±1, ±inf, nan, the largest and the smallest
numbers...) with a zero adjoint and a zero tangent, as arrays and as the scalar sweep's floats;
and every elementwise builtin, end to end, in both modes and in the Hessian's two methods."""
import math

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import rules
from autodiff.engine.core.notes import reset
from autodiff.engine.core.tape import Dual, Tape, backward, bind, new_level, strip

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, 0.9999]

# Elementwise entries with an integer order as a parameter (polygamma's n, J_n's, I_n's): their
# rules are per element as the flagged ones', but the fused kernels take no parameters, so the
# table does not flag them `elementwise`; they are walked here with an order each.
WITH_ORDER = {"polygamma": {"n": 1}, "bessel_j": {"n": 1}, "bessel_i": {"n": 0}, "spherical_j": {"n": 1},
              "bessel_ie": {"n": 0}}
# (entry, argument) whose local derivative is a constant (finite everywhere): the walk checks that,
# and meets an infinite or nan local derivative at every other.
CONSTANT_SLOPES = {("add", 0), ("add", 1), ("sub", 0), ("sub", 1), ("neg", 0), ("where", 1), ("where", 2),
                   ("fmod", 0), ("mod", 0),
                   # fmax and fmin: a share, 0 or 1 beside a nan (which they ignore); heaviside a step
                   # in x1 and 0 or 1 in x2; copysign nothing in x2
                   ("fmax", 0), ("fmax", 1), ("fmin", 0), ("fmin", 1), ("heaviside", 0), ("copysign", 1),
                   # on real points: real and conj are x, imag and angle constants (tests/test_complex.py)
                   ("real", 0), ("conj", 0), ("imag", 0), ("angle", 0)}


def walked():
    names = [name for name, prim in rules.TABLE.items() if prim.elementwise and not prim.nondiff]
    return sorted(names + list(WITH_ORDER))


def arguments(prim):
    """Arrays of the special points: every pair of them for a binary entry."""
    points = np.array(SPECIAL)
    if prim.arity == 1:
        return (points,)
    x, y = np.meshgrid(points, points)
    if prim.arity == 2:
        return (x.ravel(), y.ravel())
    condition = np.arange(x.size) % 2 == 0                 # where(c, x, y)
    return (condition, x.ravel(), y.ravel())


def positions(prim):
    return [p for p in range(prim.arity) if prim.vjps[p] is not None]


def reverse(prim, args, p, seed, params):
    tape = Tape()
    boxed = list(args)
    boxed[p] = tape.watch(args[p])
    out = bind(prim, tuple(boxed), params or None)
    adjoint = backward(tape, out, seed(strip(out)))[boxed[p].index]
    return strip(adjoint)


def forward(prim, args, p, tangent, params):
    level = new_level()
    boxed = list(args)
    boxed[p] = Dual(args[p], tangent, level)
    out = bind(prim, tuple(boxed), params or None)
    return out.tangent if out.__class__ is Dual else 0.0


def zeros(v):
    return 0.0 if isinstance(v, float) else np.zeros(np.shape(v))


@pytest.mark.parametrize("name", walked())
def test_a_zero_adjoint_or_tangent_against_any_local_derivative_is_zero(name):
    prim, params = rules.TABLE[name], WITH_ORDER.get(name, {})
    reset()
    args = arguments(prim)
    with np.errstate(all="ignore"):
        for p in positions(prim):
            slopes = reverse(prim, args, p, np.ones_like, params)
            finite = bool(np.isfinite(slopes).all())
            assert finite == ((name, p) in CONSTANT_SLOPES), (name, p, "a constant slope?", slopes)
            got = reverse(prim, args, p, np.zeros_like, params)
            assert np.array_equal(got, np.zeros(np.shape(args[p]))), (name, p, "reverse", got)
            got = forward(prim, args, p, np.zeros(np.shape(args[p])), params)
            assert np.array_equal(got, zeros(got)), (name, p, "forward", got)
            for k in range(np.size(args[p])):          # the scalar sweep: Python floats, their fast paths
                point = [a if np.ndim(a) == 0 else (bool(a[k]) if a.dtype == bool else float(a[k])) for a in args]
                got = reverse(prim, point, p, lambda v: 0.0, params)
                assert got == 0.0 or np.array_equal(got, zeros(got)), (name, p, "scalar reverse", point, got)
                got = forward(prim, point, p, 0.0, params)
                assert np.array_equal(got, zeros(got)), (name, p, "scalar forward", point, got)


def builtins_walked():
    """(builtin, arity) of every elementwise entry the language calls by its name."""
    return sorted((prim.builtin, prim.arity) for prim in rules.TABLE.values()
                  if prim.elementwise and not prim.nondiff and prim.builtin and prim.arity in (1, 2))


@pytest.mark.parametrize("builtin, arity", builtins_walked())
def test_an_untaken_branch_gives_zero_in_every_mode_and_in_the_hessian(builtin, arity):
    points = np.array(SPECIAL)
    if arity == 1:
        source, at = f"sum(where(k > 0, {builtin}(x), 0) + x)", {"x": points}
    else:
        x, y = np.meshgrid(points[::2], points[1::2])
        source, at = f"sum(where(k > 0, {builtin}(x, y), 0) + x + y)", {"x": x.ravel(), "y": y.ravel()}
    at["k"] = np.zeros(np.size(at["x"]))
    wrt = [n for n in at if n != "k"]
    with np.errstate(all="ignore"):
        for mode in ("reverse", "forward"):
            gradient = api.grad(source, at=at, wrt=wrt, mode=mode).gradient
            for n in wrt:
                assert np.array_equal(gradient[n], np.ones(np.size(at[n]))), (mode, n, gradient[n])
        for method in ("forward-over-reverse", "reverse-over-reverse"):
            r = api.hessian(source, at=at, wrt=wrt, method=method)
            for a in wrt:
                assert np.array_equal(r.gradient[a], np.ones(np.size(at[a]))), (method, a, r.gradient[a])
                for b in wrt:
                    assert not np.asarray(r.hessian[a][b]).any(), (method, a, b, r.hessian[a][b])


def test_log1p_guarded_by_where_is_zero_where_not_taken_as_log_of_one_plus_x():
    for source in ("sum(where(x > 0, log1p(x), 0))", "sum(where(x > 0, log(1 + x), 0))"):
        for mode in ("reverse", "forward"):
            g = api.grad(source, at={"x": [-1.0, 1.0]}, mode=mode).gradient["x"]
            assert g.tolist() == [0.0, 0.5], (source, mode)


def test_the_walk_covers_every_unary_and_binary_function_of_the_rules_cases():
    from test_rules import BINARY_NAMES, UNARY_POINTS
    missing = (set(UNARY_POINTS) | set(BINARY_NAMES)) - set(walked())
    assert not missing, f"elementwise entries not flagged `elementwise`: {sorted(missing)}"
