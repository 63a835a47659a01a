"""numpy as real files use it (issue 29 item 2): np.diff, np.linalg.qr/lstsq/matrix_power/eig,
scipy.linalg.solve_triangular/cho_factor/cho_solve, median/percentile/quantile, the nan
reductions, searchsorted/interp, convolve, einsum with '...', pad's copying modes, any/all
over an axis, tensordot's list axes and eigh's UPLO. Each value against numpy's (or scipy's),
each gradient (reverse mode, of the summed output) against central differences and forward
mode; the table entries (qr_q, qr_r, eig_values, eig_vectors) are walked rule by rule in
test_rules.py."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special as ss

import autodiff
from autodiff.engine import api
from test_numpy_builtins import numeric_gradient
from test_numpy_builtins import assert_hessian_matches_differences_of_the_gradient

rng = np.random.default_rng(29)
V = np.array([0.3, -1.2, 2.1, 0.7, 1.5])
K = np.array([1.0, -2.0, 0.5, 3.0])                          # an even-length kernel
M = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])
TALL = np.array([[2.0, 0.3, -0.5], [0.1, 1.2, 0.4], [-0.6, 0.2, 0.7], [0.3, -0.4, 0.2]])
L = np.array([[2.0, 0.0, 0.0], [0.3, 1.5, 0.0], [0.2, -0.1, 1.2]])
U = np.array([[1.5, 0.4, -0.2], [0.7, 2.0, 0.3], [-0.5, 0.9, 1.1]])   # both triangles differ
S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
G = np.array([[2.0, 0.5, -0.3], [0.1, -1.0, 0.4], [-0.2, 0.3, 0.8]])  # real, distinct eigenvalues
B = np.array([1.0, -0.5, 2.0])
NAN = np.array([[0.5, np.nan, 2.0], [np.nan, 0.3, -0.7], [1.1, 0.2, np.nan]])
NANS3 = rng.uniform(-1, 1, (3, 4, 5))
NANS3[rng.random(NANS3.shape) < 0.3] = np.nan
NANS3[1, 2, :] = np.nan                                          # a slice of nans only: numpy's nan
XP, FP = np.array([0.0, 1.0, 2.5, 4.0]), np.array([1.0, -1.0, 2.0, 0.5])
POINTS = np.array([-1.0, 0.5, 1.7, 3.9, 5.0])
T3, T4 = rng.uniform(-1, 1, (2, 3, 4)), rng.uniform(-1, 1, (2, 4, 5))

CASES = [
    ("np.diff(v) + np.diff(v, 2)[0]", {"v": V}, lambda v: np.diff(v) + np.diff(v, 2)[0]),
    ("np.diff(m, axis=0) * np.diff(m, n=2, axis=1, prepend=0.5, append=m[:, :1])", {"m": M},
     lambda m: np.diff(m, axis=0) * np.diff(m, n=2, axis=1, prepend=0.5, append=m[:, :1])),
    ("np.linalg.qr(a)[0] @ np.diag(np.linalg.qr(a)[1])", {"a": TALL},
     lambda a: np.linalg.qr(a)[0] @ np.diag(np.linalg.qr(a)[1])),
    ("np.linalg.qr(u, mode='r') + np.linalg.qr(u, 'complete')[0]", {"u": U},
     lambda u: np.linalg.qr(u, mode="r") + np.linalg.qr(u, "complete")[0]),
    ("np.linalg.lstsq(a, b, rcond=None)[0] * np.sum(np.linalg.lstsq(a, c)[1])", {"a": TALL, "b": V[:4], "c": V[1:]},
     lambda a, b, c: np.linalg.lstsq(a, b, rcond=None)[0] * np.sum(np.linalg.lstsq(a, c)[1])),
    ("np.linalg.lstsq(m, b[:2])[0] + np.linalg.lstsq(m, b[:2])[3][0] * np.linalg.lstsq(m, b[:2])[2]",
     {"m": M, "b": B}, lambda m, b: np.linalg.lstsq(m, b[:2])[0] + np.linalg.lstsq(m, b[:2])[3][0] * 2),
    ("np.linalg.matrix_power(u, 5) + np.linalg.matrix_power(u, 3) + np.linalg.matrix_power(u, -2)"
     " + np.linalg.matrix_power(u, 0)", {"u": U},
     lambda u: (np.linalg.matrix_power(u, 5) + np.linalg.matrix_power(u, 3) + np.linalg.matrix_power(u, -2)
                + np.linalg.matrix_power(u, 0))),
    ("np.linalg.eig(g)[0] + np.linalg.eig(g)[1][1]", {"g": G},
     lambda g: np.linalg.eig(g)[0] + np.linalg.eig(g)[1][1]),
    ("scipy.linalg.solve_triangular(l, b, lower=True) + solve_triangular(u, b)"
     " + solve_triangular(u, b, trans='T', unit_diagonal=True) + solve_triangular(l, b, 1, True)",
     {"l": L, "u": U, "b": B},
     lambda l, u, b: (sl.solve_triangular(l, b, lower=True) + sl.solve_triangular(u, b)
                      + sl.solve_triangular(u, b, trans="T", unit_diagonal=True) + sl.solve_triangular(l, b, 1, True))),
    ("cho_solve(cho_factor(s), b) + cho_solve(cho_factor(s, lower=True), b) + np.triu(cho_factor(s)[0])[0]",
     {"s": S, "b": B},
     lambda s, b: (sl.cho_solve(sl.cho_factor(s), b) + sl.cho_solve(sl.cho_factor(s, lower=True), b)
                   + np.triu(sl.cho_factor(s)[0])[0])),
    ("np.median(v) + np.median(v[:4]) + np.median(m, axis=0)[1] + np.median(m, 1, keepdims=True)[0]",
     {"v": V, "m": M},
     lambda v, m: np.median(v) + np.median(v[:4]) + np.median(m, axis=0)[1] + np.median(m, 1, keepdims=True)[0]),
    ("np.percentile(v, 30) + np.percentile(m, [10, 50, 90], axis=1) + np.quantile(m, 0.25, axis=0)[1]",
     {"v": V, "m": M},
     lambda v, m: np.percentile(v, 30) + np.percentile(m, [10, 50, 90], axis=1) + np.quantile(m, 0.25, axis=0)[1]),
    ("np.quantile(m, [0.1, 0.7], keepdims=True)", {"m": M}, lambda m: np.quantile(m, [0.1, 0.7], keepdims=True)),
    ("np.nansum(n, 0) + np.nanmean(n, axis=1) + np.nanmax(n, 0) + np.nanmin(n, 1) + np.nanprod(n, 0)"
     " + np.nanstd(n, 0) + np.nanvar(n, axis=1, ddof=1) + np.nanmean(n)", {"n": NAN},
     lambda n: (np.nansum(n, 0) + np.nanmean(n, axis=1) + np.nanmax(n, 0) + np.nanmin(n, 1) + np.nanprod(n, 0)
                + np.nanstd(n, 0) + np.nanvar(n, axis=1, ddof=1) + np.nanmean(n))),
    ("np.nanmedian(n) + np.nanmedian(n, axis=0) + np.nanmedian(n, 1, keepdims=True)[0]"
     " + np.nanmedian(w, axis=(0, 2))[:3]", {"n": NAN, "w": NANS3},
     lambda n, w: (np.nanmedian(n) + np.nanmedian(n, axis=0) + np.nanmedian(n, 1, keepdims=True)[0]
                   + np.nanmedian(w, axis=(0, 2))[:3])),
    ("np.nanquantile(w, [0.1, 0.55, 0.93], axis=2)[:, 0, :3] + np.nanpercentile(n, 37, axis=1)"
     " + np.nanpercentile(n, [0, 64, 100]) + np.nanquantile(w, 0.3, keepdims=True)[0, 0]", {"n": NAN, "w": NANS3},
     lambda n, w: (np.nanquantile(w, [0.1, 0.55, 0.93], axis=2)[:, 0, :3] + np.nanpercentile(n, 37, axis=1)
                   + np.nanpercentile(n, [0, 64, 100]) + np.nanquantile(w, 0.3, keepdims=True)[0, 0])),
    ("np.nansum(n, keepdims=True) + np.nanmax(n, 1, keepdims=True)", {"n": NAN},
     lambda n: np.nansum(n, keepdims=True) + np.nanmax(n, 1, keepdims=True)),
    ("np.interp(x, xp, fp) + np.interp(x, xp, fp, left=-7.0, right=9.0) + np.interp(1.7, xp, fp)",
     {"x": POINTS, "xp": XP, "fp": FP},
     lambda x, xp, fp: np.interp(x, xp, fp) + np.interp(x, xp, fp, -7.0, 9.0) + np.interp(1.7, xp, fp)),
    ("np.convolve(v, k) + np.convolve(k, v)", {"v": V, "k": K}, lambda v, k: np.convolve(v, k) + np.convolve(k, v)),
    ("np.convolve(v, k, 'same') + np.convolve(v, k[:3], mode='same')[:5] + np.convolve(v, k, 'valid')[0]",
     {"v": V, "k": K},
     lambda v, k: np.convolve(v, k, "same") + np.convolve(v, k[:3], "same") + np.convolve(v, k, "valid")[0]),
    ("np.einsum('...ij,...jk->...ik', t, w) + np.einsum('...ij,j', t, w[0, :, 0])[..., None]", {"t": T3, "w": T4},
     lambda t, w: np.einsum("...ij,...jk->...ik", t, w) + np.einsum("...ij,j", t, w[0, :, 0])[..., None]),
    ("np.einsum('i...->...', t) + np.einsum('...i,...i->...', t, t)[0, 0]", {"t": T3},
     lambda t: np.einsum("i...->...", t) + np.einsum("...i,...i->...", t, t)[0, 0]),
    ("np.pad(m, 2, 'edge') + np.pad(m, 2, mode='reflect') + np.pad(m, 2, 'wrap') + np.pad(m, 2, 'symmetric')"
     " + np.pad(m, ((1, 3), (2, 2)), 'reflect')", {"m": M},
     lambda m: (np.pad(m, 2, "edge") + np.pad(m, 2, mode="reflect") + np.pad(m, 2, "wrap")
                + np.pad(m, 2, "symmetric") + np.pad(m, ((1, 3), (2, 2)), "reflect"))),
    ("np.tensordot(m, t[0], axes=[[1], [0]]) + np.tensordot(m, t[0], [1, 0])", {"m": M, "t": T3},
     lambda m, t: 2 * np.tensordot(m, t[0], axes=[[1], [0]])),
    ("np.linalg.eigh(u, UPLO='U')[0] + np.linalg.eigh(u, 'L')[1][0] ** 2", {"u": U},
     lambda u: np.linalg.eigh(u, UPLO="U")[0] + np.linalg.eigh(u, "L")[1][0] ** 2),
    ("np.linalg.eigvalsh(u, UPLO='U') + np.linalg.eigvalsh(u, 'L') ** 2", {"u": U},
     lambda u: np.linalg.eigvalsh(u, UPLO="U") + np.linalg.eigvalsh(u, "L") ** 2),
    # hardening task D: numpy's float_power, polyval, trapezoid (trapz), cov, corrcoef, size
    ("np.float_power(v + 2.0, 2.5) + np.float_power(2.0, v)", {"v": V},
     lambda v: np.float_power(v + 2.0, 2.5) + np.float_power(2.0, v)),
    ("np.polyval(k, v) + np.polyval([1.0, -2.0, 0.5], v[0])", {"k": K, "v": V},
     lambda k, v: np.polyval(k, v) + np.polyval([1.0, -2.0, 0.5], v[0])),
    ("np.trapezoid(m) + np.trapezoid(m, v[:3]) + np.trapz(m, dx=0.5, axis=0)[1] + np.trapezoid(m, m * m, axis=0)[:2]",
     {"m": M, "v": V},
     lambda m, v: (np.trapezoid(m) + np.trapezoid(m, v[:3]) + np.trapezoid(m, dx=0.5, axis=0)[1]
                   + np.trapezoid(m, m * m, axis=0)[:2])),
    ("np.cov(t) + np.cov(t, bias=True) + np.cov(t, ddof=3) + np.cov(t.T, rowvar=False) + np.cov(v[:4])"
     " + np.cov(t[:2], v[:4])[0, :3]", {"t": TALL.T, "v": V},
     lambda t, v: (np.cov(t) + np.cov(t, bias=True) + np.cov(t, ddof=3) + np.cov(t.T, rowvar=False) + np.cov(v[:4])
                   + np.cov(t[:2], v[:4])[0, :3])),
    ("np.cov(t, fweights=[1.0, 2.0, 1.0, 3.0]) + np.cov(t, aweights=w) + np.cov(t, ddof=0, fweights=[1, 2, 1, 3], aweights=w)"
     " + np.cov(t, fweights=[1.0, 2.0, 1.0, 3.0], aweights=w)", {"t": TALL.T, "w": np.array([0.5, 1.0, 2.0, 0.25])},
     lambda t, w: (np.cov(t, fweights=[1, 2, 1, 3]) + np.cov(t, aweights=w) + np.cov(t, ddof=0, fweights=[1, 2, 1, 3], aweights=w)
                   + np.cov(t, fweights=[1, 2, 1, 3], aweights=w))),
    ("np.corrcoef(t) + np.corrcoef(t.T, rowvar=False) + np.corrcoef(t[:2], v[:4])[0, :3] + np.corrcoef(v)", {"t": TALL.T, "v": V},
     lambda t, v: (np.corrcoef(t) + np.corrcoef(t.T, rowvar=False) + np.corrcoef(t[:2], v[:4])[0, :3] + np.corrcoef(v))),
    ("v * np.size(m) + np.size(m, 1) * v - np.size(v, axis=-1)", {"m": M, "v": V},
     lambda m, v: v * np.size(m) + np.size(m, 1) * v - np.size(v, axis=-1)),
    # hardening task D: np.linalg.cond, every matrix norm numpy's cond takes
    ("np.linalg.cond(u) + np.linalg.cond(u, 2) + np.linalg.cond(u, -2) + np.linalg.cond(a) + np.linalg.cond(a, p=-2)",
     {"u": U, "a": TALL},
     lambda u, a: (np.linalg.cond(u) + np.linalg.cond(u, 2) + np.linalg.cond(u, -2) + np.linalg.cond(a)
                   + np.linalg.cond(a, p=-2))),
    ("np.linalg.cond(u, 'fro') + np.linalg.cond(u, p='nuc') + np.linalg.cond(u, 1) + np.linalg.cond(u, -1)"
     " + np.linalg.cond(u, np.inf) + np.linalg.cond(u, -np.inf)", {"u": U},
     lambda u: (np.linalg.cond(u, "fro") + np.linalg.cond(u, "nuc") + np.linalg.cond(u, 1) + np.linalg.cond(u, -1)
                + np.linalg.cond(u, np.inf) + np.linalg.cond(u, -np.inf))),
    ("np.linalg.cond(w) + np.linalg.cond(w, 'fro')", {"w": np.stack([U, 2 * G])},
     lambda w: np.linalg.cond(w) + np.linalg.cond(w, "fro")),
    # hardening task D: scipy.special's softmax, log_softmax and logsumexp's b= and return_sign=
    ("scipy.special.softmax(m) + softmax(m, axis=1) + softmax(m, 0) * softmax(2.0)", {"m": M},
     lambda m: ss.softmax(m) + ss.softmax(m, axis=1) + ss.softmax(m, 0) * ss.softmax(2.0)),
    ("scipy.special.log_softmax(m) + log_softmax(m, axis=1) + log_softmax(m, (0, 1)) + log_softmax(v[0])", {"m": M, "v": V},
     lambda m, v: ss.log_softmax(m) + ss.log_softmax(m, axis=1) + ss.log_softmax(m, (0, 1)) + ss.log_softmax(v[0])),
    ("logsumexp(m, 1, b=w) + logsumexp(m, 0, w[0], True)[0, :2] + logsumexp(v[0], b=3.0)", {"m": M, "w": U[:2] + 1, "v": V},
     lambda m, w, v: ss.logsumexp(m, 1, b=w) + ss.logsumexp(m, 0, w[0], True)[0, :2] + ss.logsumexp(v[0], b=3.0)),
    ("logsumexp(m, b=w - 1.0, return_sign=True)[0] * logsumexp(m, b=w - 1.0, return_sign=True)[1]"
     " + logsumexp(m, 1, w - 1.2, return_sign=True)[0] * logsumexp(m, 1, w - 1.2, True, True)[1][:, 0]",
     {"m": M, "w": U[:2]},
     lambda m, w: (ss.logsumexp(m, b=w - 1.0, return_sign=True)[0] * ss.logsumexp(m, b=w - 1.0, return_sign=True)[1]
                   + ss.logsumexp(m, 1, w - 1.2, return_sign=True)[0]
                   * ss.logsumexp(m, 1, w - 1.2, True, True)[1][:, 0])),
]


@pytest.mark.parametrize("expr, at, reference", CASES, ids=[c[0][:60] for c in CASES])
def test_value_is_numpys_and_gradient_matches_differences_and_forward_mode(expr, at, reference):
    target = api.load(expr)
    got = autodiff.evaluate(None, at=at, target=target).value
    want = reference(**{n: at[n] for n in target.inputs})
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(np.asarray(got, dtype=float), want, rtol=1e-12, atol=1e-13)
    reverse = autodiff.grad(None, at=at, target=target)
    forward = autodiff.grad(None, at=at, target=target, mode="forward")
    for name in target.inputs:
        fd = np.nan_to_num(numeric_gradient(target, at, name))     # a nan entry of n: no gradient
        np.testing.assert_allclose(reverse.gradient[name], fd, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(forward.gradient[name], reverse.gradient[name], rtol=1e-9, atol=1e-11)


def run(source, at, fn=None):
    target = api.load(source, fn) if fn else api.load(source)
    return autodiff.evaluate(None, at={k: v for k, v in at.items() if k in target.inputs}, target=target).value


def test_searchsorted_gives_numpys_positions_and_no_gradient():
    for side in ("left", "right"):
        got = run(f"np.searchsorted(xp, x, side='{side}')", {"xp": XP, "x": np.append(POINTS, XP)})
        assert got.tolist() == np.searchsorted(XP, np.append(POINTS, XP), side=side).tolist()
    assert run("np.searchsorted(xp, 2.0)", {"xp": XP}) == 2
    r = autodiff.grad("sum(x * np.searchsorted(xp, x))", at={"x": POINTS, "xp": XP})
    assert r.gradient["x"].tolist() == np.searchsorted(XP, POINTS).tolist()      # the positions are constants
    assert not r.gradient["xp"].any()


def test_interp_is_piecewise_linear_in_x_and_in_the_values():
    r = autodiff.grad("sum(np.interp(x, xp, fp))", at={"x": POINTS, "xp": XP, "fp": FP})
    slopes = np.diff(FP) / np.diff(XP)
    assert r.gradient["x"].tolist() == pytest.approx([0.0, slopes[0], slopes[1], slopes[2], 0.0], abs=1e-15)
    # each x takes (1 - t) of its left value and t of its right one; outside, the end values
    weights = np.array([1.0 + 0.5, 0.5 + 0.8 / 1.5, 0.7 / 1.5 + 0.1 / 1.5, 1.4 / 1.5 + 1.0])
    np.testing.assert_allclose(r.gradient["fp"], weights, rtol=1e-14)


def test_any_and_all_over_an_axis_are_numpys():
    for expr, want in [("any(m > 1, axis=0)", np.any(M > 1, axis=0)), ("all(m > -2, 1)", np.all(M > -2, 1)),
                       ("np.any(m > 1, axis=(0, 1))", np.any(M > 1)), ("all(m > 0)", np.all(M > 0)),
                       ("any(m > 1, axis=1, keepdims=True)", np.any(M > 1, axis=1, keepdims=True))]:
        got = run(expr, {"m": M})
        assert np.shape(got) == np.shape(want) and np.array_equal(got, want), expr


def test_eigh_reads_the_triangle_uplo_names_as_numpy():
    # U's triangles differ: numpy reads the lower one by default and the upper for UPLO='U'
    for uplo in ("L", "U"):
        got = run(f"np.linalg.eigh(u, UPLO='{uplo}')[0]", {"u": U})
        np.testing.assert_allclose(got, np.linalg.eigh(U, UPLO=uplo)[0], rtol=1e-13)
    g = autodiff.grad("sum(np.linalg.eigh(u, 'U')[0])", at={"u": U}).gradient["u"]
    np.testing.assert_allclose(g, np.eye(3), atol=1e-14)     # the trace; the lower triangle is not read


def test_eigvalsh_reads_the_triangle_uplo_names_as_numpy():
    # issue hardening task D item 2: numpy's keyword of eigvalsh, as eigh's
    for uplo in ("L", "U"):
        got = run(f"np.linalg.eigvalsh(u, UPLO='{uplo}')", {"u": U})
        np.testing.assert_allclose(got, np.linalg.eigvalsh(U, UPLO=uplo), rtol=1e-13)
    g = autodiff.grad("np.linalg.eigvalsh(u, UPLO='U')[0]", at={"u": U}).gradient["u"]
    w, v = np.linalg.eigh(U, UPLO="U")
    want = np.triu(2 * np.outer(v[:, 0], v[:, 0]), 1) + np.diag(v[:, 0] ** 2)   # the lower triangle is not read
    np.testing.assert_allclose(g, want, atol=1e-13)


def test_cho_factor_solves_like_scipys_and_its_factor_is_scipys_triangle():
    np.testing.assert_allclose(run("cho_factor(s)[0]", {"s": S}), np.triu(sl.cho_factor(S)[0]), rtol=1e-14)
    np.testing.assert_allclose(run("cho_factor(s, lower=True)[0]", {"s": S}),
                               np.tril(sl.cho_factor(S, lower=True)[0]), rtol=1e-14)
    assert run("1.0 * cho_factor(s)[1] + 2.0 * cho_factor(s, True)[1]", {"s": S}) == 2.0


PROGRAM = """
import numpy as np
import scipy.linalg
import scipy.linalg as sla
from scipy.linalg import solve_triangular as st, cho_factor, cho_solve
from scipy import linalg


def nll(mu, l, x):
    r = scipy.linalg.solve_triangular(l, x - mu, lower=True)
    z = cho_solve(cho_factor(l @ l.T), x - mu)
    w = sla.solve_triangular(l, x, lower=True) + st(l, x, trans=1, lower=True) + linalg.solve_triangular(l, x, lower=True)
    return 0.5 * np.sum(r ** 2) + np.sum(np.log(np.abs(np.diag(l)))) + np.sum(z * w)
"""


def test_scipy_linalg_is_declared_as_numpy_is_and_its_functions_differentiate():
    at = {"mu": np.array([0.1, 0.2, 0.3]), "l": L, "x": np.array([1.0, 2.0, 3.0])}
    target = api.load(PROGRAM, "nll", filename="nll.py")

    def reference(mu, l, x):
        r = sl.solve_triangular(l, x - mu, lower=True)
        z = sl.cho_solve(sl.cho_factor(l @ l.T), x - mu)
        w = 2 * sl.solve_triangular(l, x, lower=True) + sl.solve_triangular(l, x, trans=1, lower=True) \
            + 0 * x
        return 0.5 * np.sum(r ** 2) + np.sum(np.log(np.abs(np.diag(l)))) + np.sum(z * w)
    assert autodiff.evaluate(None, at=at, target=target).value == pytest.approx(reference(**at), rel=1e-13)
    grad = autodiff.grad(None, at=at, target=target)
    for name in at:
        np.testing.assert_allclose(grad.gradient[name], numeric_gradient(target, at, name), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("expr, at, message", [
    ("np.linalg.qr(m)", {"m": M}, "at least as many rows as columns"),
    ("np.linalg.qr(t, 'complete')", {"t": TALL}, "'complete'"),
    ("np.linalg.lstsq(a, b)", {"a": np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), "b": B}, "rank 1"),
    ("np.quantile(v, 0.5, method='nearest')", {"v": V}, "only method 'linear'"),
    ("np.quantile(v, 1.5)", {"v": V}, "range [0, 1]"),
    ("np.percentile(v, -3)", {"v": V}, "range [0, 100]"),
    ("np.pad(v, 2, 'maximum')", {"v": V}, "'edge'"),
    ("np.convolve(v, v, 'middle')", {"v": V}, "'full', 'same' or 'valid'"),
    ("np.diff(v, -1)", {"v": V}, "non-negative"),
    ("np.linalg.eigh(s, UPLO='X')", {"s": S}, "'L' or 'U'"),
    ("np.linalg.eigvalsh(s, UPLO='X')", {"s": S}, "eigvalsh(): UPLO must be 'L' or 'U'"),
    ("solve_triangular(l, b, trans='X')", {"l": L, "b": B}, "trans must be"),
    ("np.einsum('...i,.i', v, v)", {"v": V}, "three dots"),
])
def test_what_is_not_supported_is_a_located_error_that_says_so(expr, at, message):
    with pytest.raises(autodiff.SourceError) as info:
        run(expr, at)
    assert message in info.value.message and info.value.span is not None, info.value.message


@pytest.mark.parametrize("expr, numpys, message", [
    ("np.concatenate([])", lambda: np.concatenate([]), "concatenate(): needs at least one array"),
    ("np.stack([])", lambda: np.stack([]), "stack(): needs at least one array"),
    ("np.pad(v[:0] * 1.0, 1, 'edge')", lambda: np.pad(V[:0] * 1.0, 1, 'edge'),
     "pad(): can't extend an empty axis 0 in mode 'edge'"),
    ("np.pad(v, -1)", lambda: np.pad(V, -1), "pad(): widths must not be negative"),
    ("np.squeeze(m, 0)", lambda: np.squeeze(M, 0),
     "squeeze(): cannot select an axis to squeeze out which has size not equal to one"),
    ("np.moveaxis(m, (0, 1), 0)", lambda: np.moveaxis(M, (0, 1), 0),
     "moveaxis(): source and destination need the same number of axes"),
    ("np.diag(np.zeros((2, 2, 2)) + 1.0)", lambda: np.diag(np.zeros((2, 2, 2)) + 1.0),
     "diag(): the input must be 1-d or 2-d"),
    ("np.einsum('ij,jk', m)", lambda: np.einsum('ij,jk', M), "einsum(): 'ij,jk->ik' names 2 operands, 1 given"),
    ("np.linalg.norm(m, 3)", lambda: np.linalg.norm(M, 3), "norm(): ord 3.0 is not a matrix norm"),
    ("np.linalg.matrix_power(m, 2)", lambda: np.linalg.matrix_power(M, 2), "matrix_power(): a must be a square matrix"),
    ("np.linalg.lstsq(v, v)", lambda: np.linalg.lstsq(V, V), "lstsq(): a must be a matrix, not of shape (5,)"),
    ("np.diff(np.sum(v))", lambda: np.diff(np.sum(V)), "diff requires input that is at least one dimensional"),
    ("np.convolve(v[:0], v)", lambda: np.convolve(V[:0], V), "convolve(): a cannot be empty"),
    ("np.interp(v, v[:0], v[:0])", lambda: np.interp(V, V[:0], V[:0]),
     "interp(): the sample points must be a non-empty vector"),
    ("np.interp(v, np.sort(v), v[:2])", lambda: np.interp(V, np.sort(V), V[:2]),
     "interp(): fp and xp are not of the same length"),
    ("np.searchsorted(np.sort(v), 2.0, side='middle')", lambda: np.searchsorted(np.sort(V), 2.0, side='middle'),
     "searchsorted(): side must be 'left' or 'right', not 'middle'"),
    ("np.quantile(v[:0], 0.5)", lambda: np.quantile(V[:0], 0.5), "quantile(): the array is empty along the axis"),
    ("np.sum(m, axis=(0, 0))", lambda: np.sum(M, axis=(0, 0)), "sum(): an axis is repeated in (0, 0)"),
    ("int(v)", lambda: int(V), "int() takes one number, not an array of several"),
    ("float(v)", lambda: float(V), "float() takes one number, not an array of several"),
    ("np.arange(1.0, 2.0, 3.0, 4.0)", lambda: np.arange(1.0, 2.0, 3.0, 4.0),
     "arange() takes 1 to 3 arguments but 4 were given"),
    ("np.transpose(m, (0, 0))", lambda: np.transpose(M, (0, 0)),
     "transpose(): axes (0, 0) are not a permutation of the array's"),
    ("np.repeat(v, -1)", lambda: np.repeat(V, -1), "repeat(): negative dimensions are not allowed"),
])
def test_what_numpy_refuses_is_a_located_error(expr, numpys, message):
    """numpy raises for each (`numpys`, the same call); the language says so at the call."""
    with pytest.raises((ValueError, TypeError, IndexError, np.linalg.LinAlgError)):
        numpys()
    with pytest.raises(autodiff.SourceError) as info:
        run(expr, {"v": V, "m": M})
    assert message in info.value.message and info.value.span is not None, info.value.message


def test_a_traced_quantile_level_is_refused_not_silently_constant():
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.grad("np.quantile(v, q)", at={"v": V, "q": 0.3})
    assert "stop_gradient" in info.value.message


@pytest.mark.parametrize("expr, hint", [
    ("np.linalg.qrr(x)", "did you mean `np.linalg.qr`?"),
    ("scipy.linalg.solve_triangle(x, x)", "did you mean `scipy.linalg.solve_triangular`?"),
    ("np.lingalg.qr(x)", "did you mean `linalg` (np.linalg.NAME)?"),
    ("scipy.specal.erf(x)", "did you mean `special` (scipy.special.NAME)?"),
])
def test_a_missing_module_name_suggests_only_names_of_that_module(expr, hint):
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.grad(f"sum({expr})", at={"x": S})
    assert info.value.hint == hint


def test_the_names_of_a_module_listed_are_the_languages_names_of_that_module():
    with pytest.raises(autodiff.SourceError) as info:
        autodiff.grad("sum(np.linalg.foo(x))", at={"x": S})
    listed = info.value.hint.split(": ")[1].split(", ")
    assert {"qr", "eig", "lstsq", "matrix_power"} <= set(listed) and "sqrt" not in listed


@pytest.mark.parametrize("expr, x", [
    ("sum(solve_triangular(reshape(x, (2, 2)), x[:2], lower=True))", [2.0, 0.3, -0.4, 1.5]),
    ("sum(cho_solve(cho_factor(reshape(x, (2, 2))), x[1:3]))", [4.0, 1.0, 1.0, 3.0]),
    ("sum(np.linalg.matrix_power(reshape(x, (2, 2)), 4))", [0.9, 0.3, -0.4, 1.1]),
    ("sum(np.linalg.lstsq(reshape(x, (3, 2)), x[:3])[0])", [2.0, 0.3, -0.4, 1.5, 0.7, 0.2]),
    ("sum(np.linalg.qr(reshape(x, (3, 2)))[0] ** 3)", [2.0, 0.3, -0.4, 1.5, 0.7, 0.2]),
    ("sum(np.linalg.eig(reshape(x, (2, 2)))[1] ** 3)", [2.0, 0.3, 0.4, 1.5]),
    ("np.percentile(x * x, 40) + np.median(x ** 3)", [2.0, 0.3, -0.4, 1.5]),
    ("sum(np.interp(x, [0.0, 1.0, 2.0], x[:3] ** 2))", [0.2, 0.7, 1.5]),
    ("sum(np.convolve(x, x * x, 'same') ** 2)", [0.2, 0.7, 1.5]),
])
def test_hessians_match_differences_of_the_gradient(expr, x):
    assert_hessian_matches_differences_of_the_gradient(expr, x)


@pytest.mark.parametrize("expr, reference", [
    ("np.nanmedian(w, axis=2)", lambda w: np.nanmedian(w, axis=2)),
    ("np.nanmedian(w, axis=(0, 2), keepdims=True)", lambda w: np.nanmedian(w, axis=(0, 2), keepdims=True)),
    ("np.nanquantile(w, [[0.1, 0.5], [0.25, 1.0]], axis=1, keepdims=True)",
     lambda w: np.nanquantile(w, [[0.1, 0.5], [0.25, 1.0]], axis=1, keepdims=True)),
    ("np.nanpercentile(w, [0, 37, 100])", lambda w: np.nanpercentile(w, [0, 37, 100])),
    ("np.nanpercentile(w, 37, axis=0)", lambda w: np.nanpercentile(w, 37, axis=0)),
])
def test_nan_order_statistics_are_numpys_to_the_bit(expr, reference):
    with warnings.catch_warnings():                                    # numpy warns of the slice of nans
        warnings.simplefilter("ignore", RuntimeWarning)
        want = reference(NANS3)
    got = np.asarray(run(expr, {"w": NANS3}))
    assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)


def test_nanmedian_gradient_goes_to_the_middle_entries_that_are_not_nan():
    r = autodiff.grad("np.nanmedian(v)", at={"v": [3.0, np.nan, 1.0, 7.0, np.nan, 5.0]})
    assert r.gradient["v"].tolist() == [0.5, 0.0, 0.0, 0.0, 0.0, 0.5]     # (3 + 5) / 2 of 1, 3, 5, 7


@pytest.mark.parametrize("name, q", [("nanquantile", 0.3), ("nanpercentile", 30.0), ("quantile", 0.3),
                                     ("percentile", 30.0)])
def test_the_nan_quantiles_take_numpys_method_keyword_as_the_quantiles_do(name, q):
    """method='linear' (numpy's default, written out) was refused as a misplaced string for
    nanquantile and nanpercentile; another method is refused as for quantile."""
    w = np.array([0.3, np.nan, 2.1, -0.7, 1.5]) if name.startswith("nan") else V
    assert run(f"np.{name}(w, {q}, method='linear')", {"w": w}) == getattr(np, name)(w, q, method="linear")
    with pytest.raises(autodiff.SourceError) as info:
        run(f"np.{name}(w, {q}, method='nearest')", {"w": w})
    assert f"{name.replace('percentile', 'quantile')}(): only method 'linear'" in info.value.message


ILL = np.array([[1.0, 1.0], [1.0, 1.0000001]])                  # full rank, condition number 4e7
ILL_TALL = np.array([[1.0, 1.0], [1.0, 1.0000001], [1.0, 0.9999999]])
CA = np.array([[1 + 1j, 2.0], [0.5j, 1.0], [1.0, -1j]])


@pytest.mark.parametrize("a, kw", [(ILL, ""), (ILL_TALL, ""), (ILL_TALL.T, ""), (CA, ""), (CA.T, ""),
                                   (np.outer(V[:3], V[:3]), ""), (rng.standard_normal((3, 2, 4)), ""),
                                   (TALL, ", rcond=0.2"), (TALL, ", rtol=None"), (TALL, ", rtol=0.2"),
                                   (S, ", hermitian=True"), (U, ", hermitian=True")],
                         ids=["ill", "ill tall", "ill wide", "complex", "complex wide", "rank 1", "stack",
                              "rcond", "rtol None", "rtol", "hermitian", "hermitian reads L"])
def test_pinv_is_numpys_to_the_bit(a, kw):
    """np.linalg.pinv is numpy's SVD pseudo-inverse. It was (AᵀA)⁻¹Aᵀ: 0.9428 for sum(pinv(ILL) *
    W) where numpy gives 1.0000000075 (the normal equations square the condition number), a
    different matrix for a complex A (a plain transpose where pinv conjugates), and an error for
    a rank-deficient one, whose pseudo-inverse numpy computes."""
    got = autodiff.evaluate(f"np.linalg.pinv(a{kw})", at={"a": a}).value
    kwargs = {"rcond": 0.2} if "rcond" in kw else {"rtol": None} if "None" in kw else \
        {"rtol": 0.2} if "rtol" in kw else {"hermitian": True} if "hermitian" in kw else {}
    expected = np.linalg.pinv(a, **kwargs)
    if "hermitian" in kw:       # numpy inverts by eigh there, this by the SVD of the matrix L spells
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)
    else:
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("a", [TALL, TALL.T, G, rng.standard_normal((2, 3, 2)), np.outer(V[:3], V[:3] + 1.0)],
                         ids=["tall", "wide", "square", "stack", "rank 1 along rank 1"])
def test_pinv_gradient_matches_differences(a):
    """The Golub-Pereyra derivative (a table entry's VJP and JVP): against central differences of
    numpy's pinv; a rank-deficient matrix's is the derivative along matrices of its rank (here the
    outer product's factors are what moves), noted as a kink."""
    if a.shape == (3, 3) and np.linalg.matrix_rank(a) == 1:
        u, w = V[:3], V[:3] + 1.0
        source = "np.sum(np.sin(np.linalg.pinv(np.outer(u, w))))"
        result = autodiff.grad(source, at={"u": u, "w": w})
        for name in ("u", "w"):
            moved = lambda x, n=name: np.sum(np.sin(np.linalg.pinv(np.outer(*(x if n == k else v for k, v in
                                                                             (("u", u), ("w", w)))))))
            base = u if name == "u" else w
            numeric = [(moved(base + h) - moved(base - h)) / 2e-6 for h in np.eye(3) * 1e-6]
            np.testing.assert_allclose(result.gradient[name], numeric, rtol=1e-6, atol=1e-8)
        assert [k[2] for k in result.kinks] == ["pinv of a rank-deficient matrix: derivative taken along "
                                                "matrices of its rank"]
        return
    source = "np.sum(np.sin(np.linalg.pinv(a)))"
    result = autodiff.grad(source, at={"a": a})
    numeric = np.zeros(a.shape)
    for k in range(a.size):
        step = np.zeros(a.size)
        step[k] = 1e-6
        step = step.reshape(a.shape)
        numeric.flat[k] = (np.sum(np.sin(np.linalg.pinv(a + step))) - np.sum(np.sin(np.linalg.pinv(a - step)))) / 2e-6
    np.testing.assert_allclose(result.gradient["a"], numeric, rtol=1e-6, atol=1e-8)
    assert result.kinks == []


@pytest.mark.parametrize("call, words", [("np.linalg.pinv(a, rcond=0.1, rtol=0.1)", "rtol and rcond can't be both set"),
                                         ("np.linalg.pinv(a[0])", "a must be a matrix"),
                                         ("np.linalg.pinv(a, rcond=a)", "rcond must be a number")])
def test_pinv_mistakes_are_numpys_errors_at_the_call(call, words):
    run = subprocess.run([sys.executable, "-m", "autodiff", "grad", f"np.sum({call})", "--at",
                          "a=[[1.0, 2.0], [3.0, 4.0]]"], capture_output=True, text=True)
    assert run.returncode == 2 and words in run.stderr and "1:8" in run.stderr


@pytest.mark.parametrize("a, b", [(ILL_TALL.T, np.array([1.0, 2.0])), (CA.T, np.array([1.0 - 1j, 0.5j])),
                                  (M, B[:2])], ids=["ill wide", "complex wide", "wide"])
def test_lstsq_of_a_wide_matrix_is_the_least_norm_solution_without_squaring_its_condition(a, b):
    """The least-norm x of a wide a was aᴴ solve(aaᴴ, b): 4.7e-2 normwise relative error for
    ILL_TALL.T (condition 2e7, squared by aaᴴ) against numpy's SVD; now Q R⁻ᴴ b from aᴴ's QR, 1e-9."""
    got = autodiff.evaluate("np.linalg.lstsq(a, b, rcond=None)[0]", at={"a": a, "b": b}).value
    expected = np.linalg.lstsq(a, b, rcond=None)[0]
    # normwise, as backward-stable solvers agree: condition times eps (2e-9 for ILL_TALL.T)
    assert np.max(np.abs(got - expected)) <= 1e-8 * np.max(np.abs(expected))
    if not np.iscomplexobj(a) and np.linalg.cond(a) < 1e3:      # differences of the ill-conditioned one are noise
        result = autodiff.grad("np.sum(np.sin(np.linalg.lstsq(a, b, rcond=None)[0]))", at={"a": a, "b": b})
        numeric = np.zeros(a.shape)
        for k in range(a.size):
            step = np.zeros(a.size)
            step[k] = 1e-7
            step = step.reshape(a.shape)
            numeric.flat[k] = (np.sum(np.sin(np.linalg.lstsq(a + step, b, rcond=None)[0]))
                               - np.sum(np.sin(np.linalg.lstsq(a - step, b, rcond=None)[0]))) / 2e-7
        np.testing.assert_allclose(result.gradient["a"], numeric, rtol=1e-5, atol=1e-6 * np.max(np.abs(numeric)))


NAN_ROWS = np.array([[3.0, np.nan, 1.0], [1.0, 2.0, 3.0]])


@pytest.mark.parametrize("expr, reference", [
    ("np.median(m)", lambda m: np.median(m)),
    ("np.median(m, axis=1)", lambda m: np.median(m, axis=1)),
    ("np.median(m, axis=0, keepdims=True)", lambda m: np.median(m, axis=0, keepdims=True)),
    ("np.percentile(m, [10, 90], axis=1)", lambda m: np.percentile(m, [10, 90], axis=1)),
    ("np.quantile(m, 0.3, axis=1, keepdims=True)", lambda m: np.quantile(m, 0.3, axis=1, keepdims=True))])
def test_an_order_statistic_of_a_slice_holding_a_nan_is_nan_as_numpys(expr, reference):
    """median/quantile/percentile sorted the nan last and picked numbers: median([3, nan, 1, 2]) was
    2.5 where numpy gives nan (silently: no non-finite value to flag). Now nan for each slice that
    holds one; the others keep their numbers, and a Function's replay checks the nan mask at its
    own point (a guard), so a later point with nans elsewhere gives numpy's answer too."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = reference(NAN_ROWS)
    got = autodiff.evaluate(expr, at={"m": NAN_ROWS}).value
    assert np.shape(got) == np.shape(expected) and np.array_equal(got, expected, equal_nan=True)
    f = autodiff.function(expr)
    clean, moved = NAN_ROWS.copy(), NAN_ROWS[::-1].copy()
    clean[0, 1] = 2.5
    for point in (clean, NAN_ROWS, moved, clean, moved, clean):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert np.array_equal(f.evaluate_result({"m": point}).value, reference(point), equal_nan=True)
    assert f.replays >= 1


def test_logsumexp_b_drops_an_infinite_element_it_weighs_by_0_and_keeps_the_gradient_in_b_there():
    # hardening task D: scipy's b= (an element weighed by 0 adds nothing, even inf), its gradient
    # in b at b = 0 is exp(a - logsumexp), as anywhere else
    a, w = M.copy(), np.array([[1.0, 2.0, 0.0], [0.5, 0.0, 1.5]])
    a[0, 2] = np.inf
    got = run("logsumexp(a, 1, b=w)", {"a": a, "w": w})
    np.testing.assert_allclose(got, ss.logsumexp(a, 1, b=w), rtol=1e-15)
    r = autodiff.grad("logsumexp(m, b=w)", at={"m": M, "w": w})
    np.testing.assert_allclose(r.gradient["w"], np.exp(M - ss.logsumexp(M, b=w)), rtol=1e-14)
    value = run("logsumexp(m, b=w - 1.0, return_sign=True)[0]", {"m": M, "w": w})
    sign = run("logsumexp(m, b=w - 1.0, return_sign=True)[1]", {"m": M, "w": w})
    want = ss.logsumexp(M, b=w - 1.0, return_sign=True)
    assert sign == want[1] == -1.0 and value == pytest.approx(want[0], rel=1e-15)


def test_cond_of_a_singular_matrix_is_numpys_inf_and_a_stack_holding_one_is_refused():
    # hardening task D: numpy's cond is inf where the matrix is singular, for every p
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    for p in ("1", "'fro'", "np.inf"):
        assert run(f"np.linalg.cond(s, {p})", {"s": sing}) == np.linalg.cond(sing, eval(p)) == np.inf
    r = subprocess.run([sys.executable, "-m", "autodiff", "grad", "np.sum(np.linalg.cond(s, 1))",
                        "--at", "s=[[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]]]"], capture_output=True, text=True)
    assert r.returncode == 2 and "a matrix of the stack is singular" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "autodiff", "grad", "np.linalg.cond(s, 3)",
                        "--at", "s=[[1.0, 2.0], [2.0, 5.0]]"], capture_output=True, text=True)
    assert r.returncode == 2 and "is not a matrix norm" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("call, words", [
    ("np.polyval(2.0, x)", "1:8: polyval(): p must be a sequence of coefficients, not one number"),
    ("np.cov(x, fweights=x*0.5)", "1:8: cov(): fweights must be integer"),
    ("np.linalg.cond(np.outer(x, x) + np.eye(3), p=x)", "1:8: cond(): p array([1., 2., 3.]) is not a matrix norm"),
    ("np.corrcoef(x, x * 2, rowvar=x)", "1:8: cov(): rowvar must be True or False"),
    ("np.cov(x, bias=x)", "1:8: cov(): bias must be True or False"),
    ("np.linalg.pinv(np.outer(x, x), hermitian=x)", "1:8: pinv(): hermitian must be True or False")])
def test_a_new_builtins_mistake_names_it_once_at_its_column(call, words):
    """Review: polyval's and cov's TypeErrors came out as 'polyval(): polyval(): ...', an array
    given as cond's p or cov's rowvar as numpy's 'truth value of an array ... is ambiguous'."""
    run = subprocess.run([sys.executable, "-m", "autodiff", "grad", f"np.sum({call})", "--at", "x=[1.0,2.0,3.0]"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr, run.stderr
    name = words.split(": ")[1]
    assert f"{name}: {name}" not in run.stderr and "ambiguous" not in run.stderr
