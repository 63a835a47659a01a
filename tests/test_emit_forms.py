"""`autodiff emit` (issue 31) of det, prod and norm (each ord/axis form), the methods and
attributes, comprehensions with `if`, enumerate/zip loops and loops that unpack their items: the
emitted adjoint and tangent match autodiff.grad at five random points, and at the values where a
rule takes its other side (a zero, a singular matrix, the zero vector)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.parser.errors import SourceError
from test_emit import emitted

ROOT = Path(__file__).resolve().parent.parent

PROGRAMS = {
    "det, prod, norm": ("def f(A, x):\n    return det(A) * prod(x) + norm(x) + prod(A, 1)[0] + prod(A, axis=0)[1]\n",
                        {"A": (3, 3), "x": (3,)}),
    "norm's vector forms": ("def f(A, x):\n    return norm(x, 1) + norm(x, inf) + norm(x, -inf) + norm(x, 3) + norm(x, 2)"
                            " + norm(x, 0) + sum(norm(A, axis=1)) + sum(norm(A, 1, axis=0)) + sum(norm(A, 2.5, 1))\n",
                            {"A": (3, 2), "x": (3,)}),
    "norm's matrix forms": ("def f(A, x):\n    return norm(A) + norm(A, 'fro') + norm(A, 1) + norm(A, -1) + norm(A, inf)"
                            " + norm(A, -inf) + norm(A, ord=1, axis=(0, 1)) + norm(x)\n", {"A": (3, 2), "x": (2,)}),
    "norm of the singular values": ("def f(A, B):\n    return norm(A, 'nuc') + norm(A, 2) + norm(A, -2) + norm(B, 'nuc')"
                                    " + norm(B, ord=2, axis=(0, 1))\n", {"A": (3, 2), "B": (2, 4)}),
    "methods and attributes": ("def f(A, x):\n    B = A.T @ x.reshape(3, 1)\n    return A.sum() + x.prod() + A.mean(axis=0)[1]"
                               " + A.max() + B.sum() * A.shape[0] + A.transpose(1, 0)[1, 2] + x.T[0] + (A * x[0]).min(1)[1]\n",
                               {"A": (3, 2), "x": (3,)}),
    "the methods with no builtin of their name, var, std, clip": (
        "def f(A, x):\n    return sum(x.flatten()) * A.ravel()[4] + x[1:2].item() + sum(x.copy() * x.astype(float))"
        " + sum(x.astype(np.float64) * x)"
        " + x.var() + A.std(axis=0, ddof=1)[2] + var(A, 1)[0] + std(x) + sum(x.clip(-0.5, 0.5)) + sum(clip(A, 0.2, None))\n",
        {"A": (3, 3), "x": (4,)}),
    "einsum, tensordot, kron, pinv": (
        "def f(A, B, v, W):\n    C = einsum('ij,jk->ik', A, B) + np.einsum('ij,kj', A, B)\n"
        "    t = tensordot(A, B, 1) + tensordot(A, B, axes=([1], [0])) + tensordot(A, A)\n"
        "    K = kron(A, B) + 0.0\n    P = pinv(A) + pinv(W).T @ pinv(W)\n    w = einsum('ij,j', A, v)\n"
        "    return sum(C * C) + sum(t * A) + sum(K * K) * 0.1 + sum(P * P) + sum(w * w) + einsum('i,i->', v, v)"
        " + sum(kron(v, W) * kron(W, v))\n", {"A": (2, 2), "B": (2, 2), "v": (2,), "W": (2, 3)}),
    "norm with keepdims": ("def f(A, T):\n    return sum(norm(A, keepdims=True) * A) + sum(norm(A, axis=1, keepdims=True) * A)"
                           " + sum(norm(A, 1, axis=1, keepdims=True) * A) + sum(norm(A, 'fro', keepdims=True) * A)"
                           " + sum(norm(T, axis=(1, 2), keepdims=True) * T) + sum(norm(T, axis=-1, keepdims=True) * T)"
                           " + sum(norm(A, inf, axis=(1, 0), keepdims=True) * A)\n", {"A": (3, 2), "T": (2, 3, 2)}),
    "where": ("def f(A, x):\n    return sum(where(x > 0.1, x * x, sin(A[0]))) + sum(np.where(A > 0, A, 0.5 * A) * A)\n",
              {"A": (3, 3), "x": (3,)}),
    "keepdims": ("def f(A):\n    z = A - max(A, 1, keepdims=True)\n    return sum(exp(z) / sum(exp(z), axis=1, keepdims=True)"
                 " * A) + sum(A.mean(axis=0, keepdims=True) * A)\n", {"A": (3, 4)}),
    "reductions over several axes": (
        "def f(A, x):\n    return sum(A, axis=(0, 1)) @ x + sum(max(A, axis=(0, 2))) + mean(A, (1, 2))[0]"
        " + sum(min(A, axis=(2, 0))) + sum(prod(A, axis=(0, 2))) + sum(A.sum(axis=(-1, 0)) * x[:2])\n",
        {"A": (2, 2, 3), "x": (3,)}),
    "var and std over several axes": (
        "def f(A, x):\n    B = A * x[0]\n    return sum(var(A, axis=(0, 2)) * x) + sum(std(B, (2, 0), ddof=1))"
        " + sum(A.var(axis=(1,))) + var(A, (0, 1, 2)) + sum(std(A, axis=(-1, 0)))\n", {"A": (2, 2, 3), "x": (2,)}),
    "prod with keepdims": ("def f(A):\n    return sum(prod(A, 1, keepdims=True) * A) + sum(A.prod(axis=(0, 1), keepdims=True) * A)"
                           " + sum(prod(A, keepdims=True) * A) + sum(prod(A, 0, True))\n", {"A": (3, 2)}),
    "var and std with keepdims": (
        "def f(A):\n    return sum(var(A, 1, keepdims=True) * A) + sum(std(A, axis=(0, 1), keepdims=True) * A)"
        " + sum(A.var(keepdims=True) * A) + sum(std(A, -1, 1, True) * A) + sum(A.std(axis=(0,), keepdims=True))\n",
        {"A": (3, 2)}),
    "keepdims with no axis, or over several": (
        "def f(A):\n    B = A - max(A, keepdims=True)\n    return sum(A / sum(A, keepdims=True)) + sum(mean(A, keepdims=True) * B)"
        " + sum(sum(A * A, axis=(0, 1), keepdims=True) * A) + min(A, (1, 0), keepdims=True)[0, 0]\n", {"A": (3, 2)}),
    "trace, diagonal, eigvalsh": (
        "def f(A, x):\n    B = A @ A.T\n    return trace(A) * x[0] + sum(diagonal(A) * x) + A.trace(1) + sum(A.diagonal(-1))"
        " + trace(B) + sum(eigvalsh(A) * x) + eigvalsh(B + A)[1]\n", {"A": (2, 2), "x": (2,)}),
    "trace and diagonal of other ranks and axes": (
        "def f(T, A):\n    return sum(trace(T)) * sum(trace(T, 1, 0, 2)) + sum(diagonal(T, 0, 1, 2) * diagonal(A, 1))\n",
        {"T": (3, 2, 4), "A": (4, 2)}),
    "squeeze": ("def f(x, A):\n    y = x * 2.0\n    return sum(y.squeeze() * squeeze(A, 0)) + sum(squeeze(A, axis=(0, 2)))"
                " + sum(A.squeeze(-1) * x) + squeeze(A[0, 1])\n", {"x": (1, 3), "A": (1, 3, 1)}),
    "slogdet": ("def f(A, x):\n    s, l = slogdet(A * x[0])\n    return slogdet(A)[1] * x[1] + s * l + slogdet(A @ A.T)[-1]"
                " + slogdet(A)[0]\n", {"A": (3, 3), "x": (2,)}),
    "outer, triu, tril, diag": (
        "def f(A, x):\n    return sum(outer(x, A[0]) * A) + sum(triu(A) * tril(A, -1)) + sum(triu(A, 1) * A)"
        " + sum(diag(x) * A) + sum(diag(A, 1)) + sum(diag(x, -1) * diag(x, -1)) + sum(tril(A, k=1))\n",
        {"A": (3, 3), "x": (3,)}),
    "cumsum, cumprod": ("def f(A, x):\n    return x.cumsum()[1] * sum(cumsum(A, 1) * cumprod(A, axis=0)) + sum(x.cumprod())\n",
                        {"A": (3, 2), "x": (4,)}),
    "an index from argmax": ("def f(A, x):\n    return x[x.argmax()] * A[0, 0] + x[argmin(x)] * A[argmax(x)][1]\n",
                             {"A": (4, 2), "x": (4,)}),
    "dot of parameters": ("def f(A, x, c):\n    return sum(A.dot(x)) + x.dot(x) + dot(A, c)[0, 1] + dot(x, A)[1]\n",
                          {"A": (3, 3), "x": (3,), "c": ()}),
    "logsumexp": ("def f(A, x):\n    return logsumexp(x) + sum(logsumexp(A, 1)) + sum(logsumexp(A, axis=0, keepdims=True) * A)"
                  " + logsumexp(A) * x[0] + sum(logsumexp(A, -1, keepdims=True) * A) + sum(np.logsumexp(A * 1e3, axis=(0,)))\n",
                  {"A": (3, 2), "x": (3,)}),
    # hardening task D: scipy.special's entries are written as scipy.special's ufuncs (np.erf was exit 70)
    "scipy.special's functions": (
        "import scipy.special as sp\n\n\ndef f(x, a):\n    return sum(sp.erf(x) + sp.gammaln(x * x + 1.0) + sp.xlogy(x * x, x * x + 1.0)"
        " + sp.log_expit(x) + sp.ndtr(x) + sp.log_ndtr(x) + sp.erfinv(x * 0.5) + sp.erfcx(x) + logaddexp2(x, a)"
        " + copysign(x, a) + fmax(x, a) * fmin(x, a) + sp.xlog1py(x, x * x) + sp.kl_div(x * x + 0.5, 2.0)"
        " + sp.rel_entr(x * x + 0.5, 1.5) + sp.entr(x * x + 0.1) + sp.loggamma(x * x + 1.0) + sp.erfcinv(x * 0.5 + 1.0)"
        " + sp.ndtri(x * 0.3 + 0.5))\n", {"x": (3,), "a": ()}),
    "square, reciprocal, negative, power": (
        "def f(x, a):\n    return sum(square(x) * reciprocal(x + 3.0)) + sum(negative(x) * power(x * x + 1.0, a))"
        " + np.square(a)\n", {"x": (3,), "a": ()}),
    "whole numbers of shapes, counts and axes": (
        "T = [1.0, 2.0, 3.0]\nZ = zeros(4)\n\n\ndef f(c):\n"
        "    copies = broadcast_to(expand_dims(T, 1), (len(T), len(c) - 1))\n"
        "    return sum((copies @ c[1:]) * T) + sum(Z[:len(c) - 1] * c[:3]) + sum(eye(4) @ c)"
        " + sum(full((len(c),), 2) * c) + sum(tile(T, 2)[:4] * c * repeat(T, 2)[2:6])\n", {"c": (4,)}),
    "dot of a constant": ("X = [[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]]\n\n\ndef f(w):\n"
                          "    return sum(np.dot(X, w) ** 2) + dot(X, w)[1] + dot(w, w) + sum(X @ w)\n", {"w": (2,)}),
    "a helper that returns a tuple": (
        "W = [[0.5, -0.2], [0.1, 0.3]]\nH0 = [0.2, -0.1]\n\n\ndef step(x, h):\n    a = W @ x + h\n"
        "    if sum(a) > 10.0:\n        return a, h\n    return tanh(a), a * h\n\n\ndef f(x):\n"
        "    h, c = step(x, H0)\n    h, c = step(h, c)\n    return sum(h * c)\n", {"x": (2,)}),
    "det of a local, prod of a product": ("def f(A, x):\n    M = A @ A.T + 0.1\n    return det(M) * sum(x) + prod(x * x)\n",
                                          {"A": (2, 2), "x": (4,)}),
    "concatenate and split": (
        "def f(A, x):\n    z = concatenate((x, A[0], x * 2.0))\n    a, b, c = split(z, 3)\n"
        "    p, q = split(A, [1], axis=1)\n    B = np.concatenate([A, A * x[0]], axis=-1)\n"
        "    return sum(a * sin(b) * c) + sum(p * q) + sum(split(B, 2, 1)[1] * A) + sum(concatenate((A, B), None))\n",
        {"A": (3, 3), "x": (3,)}),
    "stack and lists of values": (
        "def f(A, x):\n    v = [x[0] * x[1], sin(x[2]), 2.0]\n    M = [[x[0], x[1]], [x[2] * x[0], 1.5]]\n"
        "    S = stack((A, A * x[0]), axis=-1) + np.stack([A, A.T], 2)\n"
        "    return sum(v * x) + sum(M @ x[:2]) + sum(S * S) + sum(stack([x, x * x]) @ x)\n",
        {"A": (3, 3), "x": (3,)}),
    "ranks of the values a function makes, solve_triangular": (
        "def f(A, x):\n    A = tril(A) + 3.0\n    s = sum(log(abs(diag(A))))\n    for i in range(len(x) - 1):\n"
        "        d = A[i] - A[i + 1]\n        s = s + dot(d, d) * x[i] + norm(d, 1)\n"
        "    B = A.T + 0.5\n    return s + solve_triangular(A, x, lower=True)[0] + sum(solve_triangular(B, x, trans='T',"
        " unit_diagonal=True)) + sum(scipy.linalg.solve_triangular(B, A, False, False))\n",
        {"A": (3, 3), "x": (3,)}),
    "a shape taken apart, a helper's defaults": (
        "SCALE = 0.5\n\n\ndef g(u, a=2.0, b=SCALE):\n    return u * a + b * u * u\n\n\n"
        "def f(A, x):\n    n, d = A.shape\n    rows, = x.shape\n    return sum(g(A[1])) * n + sum(g(x, 3.0)) * d * rows + sum(g(x, 1.0, -1.0))\n",
        {"A": (2, 3), "x": (3,)}),
}

LOOPS = {
    "summed comprehensions with several for and if": (
        "def f(x, a):\n    y = x * 2.0\n    s = sum([p * q for p in y for q in x if q > p * a])\n"
        "    t = sum([x[i] * x[j] for i in range(len(x)) if i > 0 for j in range(i) if x[j] < a])\n"
        "    return s + t + mean([p * q * a for p in x if abs(p) > 0.0 for q in y if q != p])\n", {"x": (4,), "a": ()}),
    "enumerate, zip, unpacking rows": (
        "def f(x, a):\n    s = 0.0\n    for i, v in enumerate(x):\n        s = s + v * i * a\n"
        "    for u, w in zip(x, x[1:]):\n        s = s + u * w\n    P = [[1.0, 2.0], [3.0, 0.5]]\n"
        "    for p, q in P:\n        s = s + p * a * q\n    return s\n", {"x": (4,), "a": ()}),
    "comprehensions: enumerate, zip, if": (
        "def f(x, a):\n    ys = [v * a + k for k, v in enumerate(x, 1)]\n    zs = [u * w for u, w in zip(ys, x)]\n"
        "    return sum(zs) + sum([v * v for v in x if v > 0.2]) + mean([sin(v) * a for v in x if v < 1.0 and v > -1.0])\n",
        {"x": (5,), "a": ()}),
    "a helper's sum over an axis, in a loop": (
        "def term(X, m):\n    d = (X - m) * 2.0\n    return sum(d * d, 1)\n\n\ndef f(X, M):\n    s = 0.0\n"
        "    for k in range(len(M)):\n        s = s + sum(exp(-term(X, M[k])))\n    return s\n", {"X": (5, 2), "M": (3, 2)}),
    "comprehensions with several `for` clauses": (
        "def f(x, A):\n    P = [a * b for a in x for b in x]\n    Q = [[a * r for r in A] for a in x]\n"
        "    return sum(P * P) + sum(Q[1] * A) + mean([u * v * w for u in x for v in A for w in v])"
        " + sum([r * k for k in range(2) for r in A][2])\n", {"x": (3,), "A": (2, 2)}),
    "x[i, j] of names": ("def f(A, x):\n    s = 0.0\n    for i in range(len(x)):\n        for j in range(i + 1):\n"
                         "            s = s + A[i, j] * x[j] * x[i]\n    return s\n", {"A": (3, 3), "x": (3,)}),
    "x[i, j] = v of names": ("def f(A, x):\n    B = A * 1.0\n    for i in range(len(x)):\n        for j in range(len(x)):\n"
                             "            B[i, j] += x[i] * x[j]\n        B[i, i] = B[i, i] * x[i]\n    return sum(B * A)\n",
                             {"A": (3, 3), "x": (3,)}),
    "a name among several indices with a slice": (
        "def f(A, x):\n    B = A * 1.0\n    s = 0.0\n    for i in range(len(x) - 1):\n        B[i, 1:] = x[1:] * B[i, :2]\n"
        "        B[:, i] += x\n        s = s + sum(A[i, :] * A[:, i]) + sum(A[i, 1:] * x[:2]) + sum(B[::2, i])\n"
        "    return s + sum(B * A[:, :])\n", {"A": (3, 3), "x": (3,)}),
    "None (numpy's newaxis) in an index": (
        "def f(A, x):\n    s = 0.0\n    for i in range(2):\n        s = s + sum(A[:, None, i] * x[None])\n"
        "    return s + sum(x[:, None] * x[None, :] * A) + sum(A[None, 1])\n", {"A": (2, 2), "x": (2,)}),
    "slices whose bounds are names": (
        "def f(x, a):\n    s = 0.0\n    for i in range(len(x) - 1):\n        w = x[i:i + 2]\n        s = s + sum(w * w) * a\n"
        "    k = 1\n    y = x * a\n    y[k:] = 0.5 * y[:len(x) - k]\n    return s + sum(x[k:] * a) + sum(y * x)\n",
        {"x": (5,), "a": ()}),
    "pairs of rows": ("def f(X, y):\n    s = 0.0\n    i = 0\n    for r, t in zip(X, y):\n        a, b = r\n"
                      "        s = s + (a * t - b) ** 2 * (i + 1)\n        i = i + 1\n    return s\n", {"X": (4, 2), "y": (4,)}),
}


def point(rng, shapes):
    return {p: rng.uniform(-1.5, 1.5, s) if s else float(rng.uniform(-1.5, 1.5)) for p, s in shapes.items()}


def matches(module, source, at):
    expected = autodiff.grad(str(source), at=at)
    value, grads = module.f_vjp(*at.values())
    assert value == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
    for p, g in zip(at, grads):
        assert np.shape(g) == np.shape(at[p])
        np.testing.assert_allclose(g, expected.gradient[p], rtol=1e-12, atol=1e-12)
    u = {p: np.ones(np.shape(v)) if np.ndim(v) else 1.0 for p, v in at.items()}
    _, d = module.f_jvp(*at.values(), **{f"d_{p}": u[p] for p in at})
    along = sum(float(np.sum(np.asarray(expected.gradient[p]) * u[p])) for p in at)
    assert d == pytest.approx(along, rel=1e-11, abs=1e-11)


@pytest.mark.parametrize("name", sorted(PROGRAMS) + sorted(LOOPS))
def test_forms_emit_and_match_grad_at_five_points(tmp_path, name):
    text, shapes = {**PROGRAMS, **LOOPS}[name]
    source = tmp_path / "program.py"
    source.write_text(text)
    rng = np.random.default_rng(31)
    _, module = emitted(tmp_path, source, at=point(rng, shapes))
    for _ in range(5):
        matches(module, source, point(rng, shapes))
    if "_lengths = " in (tmp_path / "emitted.py").read_text():     # written for other lengths too
        matches(module, source, point(rng, {p: tuple(n + 3 if n > 1 else n for n in s) for p, s in shapes.items()}))


def test_a_zero_a_singular_matrix_and_the_zero_vector_take_the_rules_other_side(tmp_path):
    """prod's, det's and norm's rules decide on a zero element, a singular matrix, the zero vector:
    both sides are emitted (the table's other_side), so the emitted adjoint holds there too."""
    source = tmp_path / "program.py"
    source.write_text(PROGRAMS["det, prod, norm"][0])
    rng = np.random.default_rng(3)
    _, module = emitted(tmp_path, source, at=point(rng, PROGRAMS["det, prod, norm"][1]))
    text = (tmp_path / "emitted.py").read_text()
    assert "np.linalg.inv(A)" in text and "np.linalg.det(" in text and "np.cumprod(" in text
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    for A, x in ((singular, np.array([0.0, 2.0, -1.0])), (singular * 0.0, np.array([0.0, 0.0, 0.0])),
                 (np.eye(3), np.array([1.5, 0.0, 0.0]))):
        matches(module, source, {"A": A, "x": x})


def test_max_and_min_over_several_axes_share_ties_as_autodiff_grad_does(tmp_path):
    """max over axes (0, 1) with two ties in one row and one in the other: the table's reduction
    shares the adjoint among the three alike, as the emitted one does (a max of maxes would give
    the lone tie half of it)."""
    source = tmp_path / "program.py"
    source.write_text("def f(A):\n    return sum(max(A, axis=(0, 1)) * min(A, (0, 2))[0]) + sum(max(A, axis=(2, 0), keepdims=True) * A)\n")
    _, module = emitted(tmp_path, source, at={"A": np.arange(8.0).reshape(2, 2, 2)})
    for A in (np.array([[[2.0, 2.0], [2.0, 2.0]], [[2.0, 0.5], [0.0, 0.0]]]), np.zeros((2, 2, 2)),
              np.array([[[1.0, 3.0], [1.0, 3.0]], [[3.0, 1.0], [-1.0, 3.0]]])):
        matches(module, source, {"A": A})


def test_cli_emit_validate_of_det_and_norm_passes(tmp_path):
    source = tmp_path / "det.py"
    source.write_text("def f(A):\n    return det(A) + norm(A, 1) + A.sum()\n")
    done = subprocess.run([sys.executable, "-m", "autodiff", "emit", str(source), "--validate", "--at",
                           "A=[[2,1],[0.5,3]]"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" pass") == 3


def test_methods_map_to_the_languages_builtins_and_an_unknown_one_is_refused(tmp_path):
    """A method is the builtin of its name (lang/call_forms.py's METHODS); one the IR cannot
    write names itself and its line."""
    source = tmp_path / "program.py"
    source.write_text("def f(x):\n    y = x * 2.0\n    return sum(y.keys())\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": np.array([0.5, 1.5, 2.5])})
    assert err.value.kind == "not emitted" and ".keys()" in err.value.message and err.value.span.line == 3


@pytest.mark.parametrize("kind", ["bool", "np.float32", "complex"])
def test_astype_to_a_type_emit_does_not_write_is_refused_naming_its_line(tmp_path, kind):
    # task D item 1: astype(np.float32) or astype(bool) read `float32`/`bool` as an unbound name, unlocated
    source = tmp_path / "program.py"
    source.write_text(f"import numpy as np\ndef f(x):\n    return sum(x.astype({kind}) * x)\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": np.array([0.5, 1.5, 2.5])})
    assert err.value.kind == "not emitted" and "`.astype()` to anything but float or int" in err.value.message
    assert (err.value.span.line, err.value.span.column) == (3, 16)


def test_keepdims_over_all_axes_of_a_value_whose_rank_is_unknown_is_refused_naming_it(tmp_path):
    """keepdims with no axis needs the value's rank (a parameter's is the point's): where emit does
    not know it, the call is refused with its line and what to write instead."""
    source = tmp_path / "program.py"
    source.write_text("def f(x):\n    y = x * 2.0\n    if x[0] > 0.0:\n        y = sum(y)\n"
                      "    return sum(y * sum(y, keepdims=True))\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": np.array([0.5, 1.5, 2.5])})
    assert err.value.kind == "not emitted" and (err.value.span.line, err.value.span.column) == (5, 20)
    assert "keepdims" in err.value.message and "axis=(0, 1)" in err.value.hint


def test_unpacking_a_row_of_another_length_raises_rather_than_returning_a_number(tmp_path):
    """`for a, b in X` takes each row's two items, as Python's unpacking does: at rows of another
    length the emitted functions raise (numpy's reshape error, or the shape check), never a value."""
    source = tmp_path / "program.py"
    source.write_text("def f(X, c):\n    s = 0.0\n    for a, b in X:\n        s = s + a * b * c\n    return s\n")
    _, module = emitted(tmp_path, source, at={"X": np.array([[1.0, 2.0], [0.5, 1.5], [2.0, -1.0]]), "c": 0.5})
    assert module.f_vjp(np.array([[1.0, 2.0]] * 3), 2.0)[0] == pytest.approx(12.0, rel=1e-15)
    for rows in (np.ones((3, 3)), np.ones((5, 3))):
        with pytest.raises(ValueError):
            module.f_vjp(rows, 0.5)
        with pytest.raises(ValueError):
            module.f(rows, 0.5)


def test_cumprod_at_zeros_takes_its_rules_other_side(tmp_path):
    source = tmp_path / "program.py"
    source.write_text(PROGRAMS["cumsum, cumprod"][0])
    rng = np.random.default_rng(8)
    _, module = emitted(tmp_path, source, at=point(rng, PROGRAMS["cumsum, cumprod"][1]))
    for A, x in ((np.array([[0.0, 1.0], [2.0, 0.0], [0.5, 3.0]]), np.array([1.0, 0.0, 2.0, 0.0])),
                 (np.zeros((3, 2)), np.zeros(4))):
        matches(module, source, {"A": A, "x": x})


def test_the_primal_checks_the_shapes_it_was_written_for(tmp_path):
    """The primal `f` is written at the point's shapes too (indexing, reductions): it checks them
    at entry as f_vjp and f_jvp do, rather than return a number for other ones."""
    source = tmp_path / "program.py"
    source.write_text("D = [[1.0, 2.0], [3.0, 4.0]]\n\n\ndef f(x):\n    return sum((D @ x) * x)\n")
    _, module = emitted(tmp_path, source, at={"x": np.array([0.5, 1.5])})
    assert module.f(np.array([1.0, 2.0])) == pytest.approx(27.0, rel=1e-15)
    for x in (np.ones(3), np.ones((2, 2)), 2.0):
        with pytest.raises(ValueError, match="emitted for the shapes"):
            module.f(x)


@pytest.mark.parametrize("text, words, column", [
    ("def f(A):\n    return sum(einsum('...i,i', A, A[0]))\n", "einsum with '...'", 16),
    ("def f(A):\n    return sum(tensordot(A if A[0, 0] > 0 else A[0], A))\n",
     "tensordot of a value whose rank is unknown here", 16),
    ("def f(A):\n    return sum(einsum('ii->i', A))\n", "einsum with a letter repeated in one operand's", 16)])
def test_what_einsum_tensordot_and_kron_do_not_emit_is_named_with_its_line(tmp_path, text, words, column):
    source = tmp_path / "program.py"
    source.write_text(text)
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"A": np.array([[1.0, 2.0], [3.0, 5.0]])})
    assert err.value.kind == "not emitted" and words in err.value.message
    assert (err.value.span.line, err.value.span.column) == (2, column)


@pytest.mark.parametrize("call", ["pinv(A @ A)", "pinv(A @ A, rtol=None)", "pinv(A @ A, 1e-3)"])
def test_pinv_of_a_value_whose_shape_is_unknown_emits_numpys_pinv(tmp_path, call):
    """pinv is a table entry (numpy's SVD pseudo-inverse; it was (AᵀA)⁻¹Aᵀ, refused at an unknown
    shape with a hint to write that): the emitted module calls np.linalg.pinv with its rcond and
    gives the interpreter's value and gradient."""
    source = tmp_path / "program.py"
    source.write_text(f"def f(A):\n    return sum({call} * A)\n")
    A = np.array([[1.0, 2.0], [3.0, 5.0]])
    _, module = emitted(tmp_path, source, at={"A": A})
    assert "np.linalg.pinv(" in (tmp_path / "emitted.py").read_text()
    value, grads = module.f_vjp(A)
    expected = autodiff.grad(str(source), at={"A": A})
    assert value == expected.value
    np.testing.assert_allclose(grads[0] if isinstance(grads, tuple) else grads, expected.gradient["A"],
                               rtol=1e-12, atol=1e-12)


def test_the_texts_emit_runs_at_the_point_take_their_keywords():
    """An IR text with a keyword (numpy's axis=) is run with it, as the emitted module runs it: the
    shapes the rules are traced at are numpy's (the keyword was dropped before: axis 0's split)."""
    from autodiff.engine.emit.examples import Examples, Text
    z = np.arange(6.0).reshape(2, 3)
    parts = Text(Examples({}), {"z": z}).run("np.split(z, 3, axis=1)")
    assert [p.tolist() for p in parts] == [p.tolist() for p in np.split(z, 3, axis=1)]


def test_the_lstm_sample_emits_validates_and_matches_grad(tmp_path):
    """samples/numpy/lstm.py (concatenate of the input and the state, split of the gates four
    ways) emits, its checks pass, and its adjoint is autodiff.grad's at five points (before: an
    internal error, exit 70, IndexError in the unpacking of split's tuple)."""
    source = ROOT / "samples" / "numpy" / "lstm.py"
    at = {"x": np.array([0.5, -1.0]), "b": np.array([0.1, 0, -0.1, 0.2, 0, 0.1, -0.2, 0.3])}
    _, module = emitted(tmp_path, source, at=at)
    value, (gx, gb) = module.f_vjp(*at.values())
    assert value == pytest.approx(-0.013544952644028233, abs=1e-15)
    np.testing.assert_allclose(gx, [-0.06415665658828525, 0.07377442719373631], rtol=1e-12)
    rng = np.random.default_rng(7)
    for _ in range(5):
        matches(module, source, {p: v + rng.uniform(-0.3, 0.3, v.shape) for p, v in at.items()})
    run = subprocess.run([sys.executable, "-m", "autodiff", "emit", str(source), "--validate", "--at",
                          "x=[0.5,-1],b=[0.1,0,-0.1,0.2,0,0.1,-0.2,0.3]"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("pass") == 5 and "FAIL" not in run.stdout


def test_a_default_the_caller_would_read_otherwise_is_refused_naming_the_call(tmp_path):
    """A helper's default is taken at its calls where it is a number or a constant of the module;
    a default that a name of the caller shadows (Python reads the module's at the def) is refused
    with the call's line and what to write instead."""
    source = tmp_path / "program.py"
    source.write_text("K = 2.0\n\n\ndef g(u, a=K):\n    return u * a\n\n\ndef f(x):\n    K = x * 3.0\n    return sum(g(x)) + K\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": np.array([0.5, 1.5])})
    assert err.value.kind == "not emitted" and "leaves out `a`" in err.value.message
    assert (err.value.span.line, err.value.span.column) == (10, 16) and "pass a at the call" in err.value.hint


DICT_PROGRAM = ("def forward(params, x):\n    h = tanh(params[\"W\"] @ x + params[\"b\"])\n"
                "    return h, sum(h * params[\"v\"])\n\n\n"
                "def f(W, b, v, x):\n    params = {\"W\": W, \"b\": b, \"v\": v}\n    _, s = forward(params, x)\n"
                "    return s + params[\"b\"][0] * 2.0\n")


def test_a_dict_of_parameters_is_one_name_per_key_and_a_helpers_dict_parameter_one_per_key(tmp_path):
    """`params = {"W": W, ...}` passed to a helper that reads params["W"] and returns a tuple: each
    key its own name, the helper's dict parameter one parameter per key in written order (its
    adjoint one adjoint per key); the adjoint and tangent are autodiff.grad's at five points
    (before: "emit: a string is not emitted yet")."""
    source = tmp_path / "program.py"
    source.write_text(DICT_PROGRAM)
    rng = np.random.default_rng(5)
    shapes = {"W": (3, 2), "b": (3,), "v": (3,), "x": (2,)}
    _, module = emitted(tmp_path, source, at=point(rng, shapes))
    text = (tmp_path / "emitted.py").read_text()
    assert "params_W = W" in text and "(params_W, params_b, params_v, x)" in text and "params[" not in text
    for _ in range(5):
        matches(module, source, point(rng, shapes))


GATHER_PROGRAM = ("def f(P, y):\n    n = P.shape[0]\n    D = P * 1.0\n    D[np.arange(n), y] -= 1.0\n"
                  "    return -np.mean(np.log(P[np.arange(n), y])) + sum(P[y, y] ** 2) + sum(D * D)\n")


def test_integer_index_data_stays_integer_and_a_gather_of_two_index_arrays_is_numpys(tmp_path):
    """y an integer array (class labels, a constant of the run, not differentiated): the emitted
    function takes it as given, and P[np.arange(n), y], P[y, y] (pairs repeated: the adjoint adds
    up) and D[np.arange(n), y] -= 1 are numpy's fancy indexing, never P[a][b]; value and gradient
    are numpy's exact ones (before: "arrays used as indices must be of integer type")."""
    source = tmp_path / "program.py"
    source.write_text(GATHER_PROGRAM)
    y = np.array([0, 2, 2, 1])
    rng = np.random.default_rng(3)
    target = api.load(str(source))
    (tmp_path / "emitted.py").write_text(api.emit(None, wrt=["P"], mode="both", target=target,
                                                  at={"P": rng.uniform(0.5, 1.5, (4, 3)), "y": y}))
    rows = api.validate_emitted(str(tmp_path / "emitted.py"), target, {"P": rng.uniform(0.5, 1.5, (4, 3)), "y": y},
                                ["P"])
    assert [r["verdict"] for r in rows] == ["pass"] * len(rows)
    text = (tmp_path / "emitted.py").read_text()
    assert "P[(y, y, )]" in text and "np.add.at(" in text and "][y]" not in text     # numpy's pairs, its scatter-add
    spec = importlib.util.spec_from_file_location("emitted_gather", tmp_path / "emitted.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows_ = np.arange(4)
    for _ in range(5):
        P = rng.uniform(0.5, 1.5, (4, 3))
        D = P.copy()
        D[rows_, y] -= 1.0
        value, (g,) = module.f_vjp(P, y)
        assert value == pytest.approx(-np.mean(np.log(P[rows_, y])) + np.sum(P[y, y] ** 2) + np.sum(D * D), rel=1e-14)
        expected = 2.0 * D
        np.add.at(expected, (rows_, y), -1.0 / (4 * P[rows_, y]))
        np.add.at(expected, (y, y), 2.0 * P[y, y])
        np.testing.assert_allclose(g, expected, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g, autodiff.grad(str(source), at={"P": P, "y": y}, wrt=["P"]).gradient["P"],
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("body, words, column", [
    ("    d = {x: x}\n    return 1.0", "a dict whose keys are not string literals", 10),
    ("    d = {\"a\": x}\n    for k in d:\n        x = x + 1.0\n    return x", "the dict `d` used other than", 14),
    ("    d = {\"a\": x}\n    d[\"b\"] = x\n    return d[\"a\"]", "an item of the dict `d` assigned", 5),
    ("    d = {\"a\": x}\n    return d[0] * x", "a key of the dict `d` that is not a string literal", 12),
    ("    d = {\"a\": x}\n    return len(d) * x", "the dict `d` used other than", 16)])
def test_what_a_dict_of_parameters_cannot_be_is_refused_naming_its_line(tmp_path, body, words, column):
    source = tmp_path / "program.py"
    source.write_text("def f(x):\n" + body + "\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": 0.5})
    assert err.value.kind == "not emitted" and words in err.value.message
    assert err.value.span.column == column
    run = subprocess.run([sys.executable, "-m", "autodiff", "emit", str(source), "--at", "x=0.5"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and f":{err.value.span.line}:{column}" in run.stdout + run.stderr


def test_a_key_the_dict_does_not_have_is_the_languages_key_error_not_a_limit_of_emit(tmp_path):
    """A missing key is the user's mistake: emit says what `autodiff grad` says (it said "is not
    emitted yet", as if emit lacked something)."""
    source = tmp_path / "program.py"
    source.write_text("def f(x):\n    d = {\"a\": x}\n    return d[\"b\"]\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": 0.5})
    assert err.value.kind == "key error" and "the dict has no key 'b' (its keys: 'a')" in err.value.message
    assert (err.value.span.line, err.value.span.column) == (3, 12)
    with pytest.raises(SourceError) as grad_err:
        api.grad(str(source), at={"x": 0.5})
    assert grad_err.value.message == err.value.message


def test_a_dict_at_the_top_level_is_named_as_a_dict_not_by_its_syntax_node(tmp_path):
    source = tmp_path / "program.py"
    source.write_text("D = {\"a\": 1.0}\n\n\ndef f(x):\n    return x * D[\"a\"]\n")
    with pytest.raises(SourceError) as err:
        api.emit(str(source), at={"x": 0.5})
    assert "DictExpr" not in err.value.message and "a dict other than one of parameters" in err.value.message


MLP_AT = ("W1=[[0.1,-0.2],[0.3,0.05],[-0.4,0.2]],b1=[0.0,0.1],W2=[[0.5,-0.3,0.2],[0.1,0.4,-0.6]],b2=[0.0,0.0,0.1],"
          "X=[[1.0,0.5,-1.0],[0.2,-0.3,0.8],[-1.5,1.0,0.3]],y=[0,2,1].astype(int)")


def test_cli_emit_of_the_mlp_leaves_its_integer_labels_out_of_the_default_wrt_and_refuses_wrt_y(tmp_path):
    """samples/project/src/mlp.py's loss with integer labels y: `emit --validate` differentiates
    every input but y (as `autodiff grad` does) and passes; `--wrt W1,y` is exit 2, naming y."""
    mlp = str(ROOT / "samples" / "project" / "src" / "mlp.py")
    run = subprocess.run([sys.executable, "-m", "autodiff", "emit", mlp, "--fn", "loss", "--validate", "--at", MLP_AT],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("pass") == 11 and "FAIL" not in run.stdout
    assert "W1, b1, W2, b2, X emitted" in run.stdout      # the dot-product row: y is not differentiated
    run = subprocess.run([sys.executable, "-m", "autodiff", "emit", mlp, "--fn", "loss", "--wrt", "W1,y", "--at", MLP_AT],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "y is an integer input" in run.stdout + run.stderr


def test_emit_writes_var_and_pinv_from_the_library_functions_themselves(tmp_path, monkeypatch):
    """Issue 28 item 4, one source of each composite: emit records core/library's function at the
    call, so a change of it (here var's count less ddof + 1, doubled; pinv a product with its
    transpose) is what the emitted module computes, with the gradient of the changed function (that
    of the same program written with the change); a copy of var or pinv kept in emit would miss it.
    The change holds while emit writes only (the interpreter keeps the library function it meets)."""
    from autodiff.engine.core import ops
    from autodiff.engine.core.library import linalg, reductions
    var, pinv = reductions.var, linalg.pinv
    source = tmp_path / "program.py"
    source.write_text("def f(A, x):\n    return sum(var(A, 1) * x) + std(A, ddof=1) + sum(pinv(A) * 0.5) + var(x)\n")
    A, x = np.array([[0.5, 1.5, -1.0], [2.0, 0.25, 1.0], [1.0, -0.5, 3.0]]), np.array([0.3, -1.2, 2.0])
    with monkeypatch.context() as patched:
        patched.setattr(reductions, "var", lambda a, axis=None, ddof=0, keepdims=False:
                        var(a, axis, ddof + 1, keepdims) * 2.0)
        patched.setattr(linalg, "pinv", lambda a: ops.matmul(pinv(a), linalg.matrix_transpose(a)))
        _, module = emitted(tmp_path, source, at={"A": A, "x": x})
    changed = tmp_path / "changed.py"
    changed.write_text("def f(A, x):\n    return sum(var(A, 1, ddof=1) * 2.0 * x) + sqrt(var(A, ddof=2) * 2.0)"
                       " + sum((pinv(A) @ A.T) * 0.5) + var(x, ddof=1) * 2.0\n")
    value, grads = module.f_vjp(A, x)
    assert value == pytest.approx(float(np.sum(np.var(A, 1, ddof=1) * 2.0 * x) + np.sqrt(np.var(A, ddof=2) * 2.0)
                                        + np.sum(np.linalg.pinv(A) @ A.T * 0.5) + np.var(x, ddof=1) * 2.0), rel=1e-12)
    expected = autodiff.grad(str(changed), at={"A": A, "x": x})
    assert value == pytest.approx(expected.value, rel=1e-12)
    for g, p in zip(grads, ("A", "x")):
        np.testing.assert_allclose(g, expected.gradient[p], rtol=1e-12, atol=1e-12)
    assert autodiff.grad(str(source), at={"A": A, "x": x}).value == pytest.approx(   # the library as it is
        float(np.sum(np.var(A, 1) * x) + np.std(A, ddof=1) + np.sum(np.linalg.pinv(A) * 0.5) + np.var(x)), rel=1e-12)


def test_a_number_var_derives_from_the_lengths_is_the_librarys_at_other_lengths_too(tmp_path):
    """var of a local (its shape unknown where emit lowers it): its count is the library's at the
    values the line meets (a Measured statement), written as numpy's text of the lengths the
    library agrees with at other lengths (np.shape(B)[0] - 1), so the module holds there too."""
    source = tmp_path / "program.py"
    source.write_text("def f(A, x):\n    B = A * x[0]\n    return sum(var(B, 0, ddof=1) * x) + std(B[1:], keepdims=True)[0, 0]\n")
    rng = np.random.default_rng(5)
    A, x = rng.uniform(-1.0, 1.0, (4, 3)), rng.uniform(-1.0, 1.0, 3)
    _, module = emitted(tmp_path, source, at={"A": A, "x": x})
    text = (tmp_path / "emitted.py").read_text()
    assert "np.shape(B)[0] - 1" in text and "_lengths = " in text
    for A, x in ((A, x), (rng.uniform(-1.0, 1.0, (7, 5)), rng.uniform(-1.0, 1.0, 5))):
        value, _ = module.f_vjp(A, x)
        B = A * x[0]
        assert value == pytest.approx(float(np.sum(np.var(B, 0, ddof=1) * x) + np.std(B[1:])), rel=1e-12)
        matches(module, source, {"A": A, "x": x})


def test_kron_of_a_local_is_written_at_the_shapes_its_line_meets(tmp_path):
    """kron of a value made in the function (its shape unknown where emit lowers it): the library's
    reshapes to the shapes its operands have where the line runs (np.shape of a local, then the
    product of the lengths), once refused."""
    source = tmp_path / "program.py"
    source.write_text("def f(A, v):\n    return sum(kron(A * 2.0, A) * 0.5) + sum(kron(v * v, A[0]) * kron(A[1], v))\n")
    rng = np.random.default_rng(9)
    A, v = rng.uniform(-1.0, 1.0, (2, 3)), rng.uniform(-1.0, 1.0, 4)
    _, module = emitted(tmp_path, source, at={"A": A, "v": v})
    value, _ = module.f_vjp(A, v)
    assert value == pytest.approx(float(np.sum(np.kron(A * 2.0, A) * 0.5) + np.sum(np.kron(v * v, A[0]) * np.kron(A[1], v))),
                                  rel=1e-12)
    for _ in range(3):
        matches(module, source, {"A": rng.uniform(-1.0, 1.0, (2, 3)), "v": rng.uniform(-1.0, 1.0, 4)})


def test_logsumexp_with_return_sign_false_or_b_none_emits(tmp_path):
    """Review: logsumexp(x, return_sign=False) and logsumexp(x, b=None), scipy's defaults written
    out, were refused ('logsumexp with b= or return_sign='); only b given or return_sign=True are."""
    source = tmp_path / "program.py"
    source.write_text("from scipy.special import logsumexp\ndef f(x):\n"
                      "    return logsumexp(x, return_sign=False) + logsumexp(x, b=None)\n")
    x = np.array([1.0, 2.0, 3.0])
    _, module = emitted(tmp_path, source, at={"x": x})
    value, grads = module.f_vjp(x)
    expected = autodiff.grad(str(source), at={"x": x})
    assert value == pytest.approx(expected.value, rel=1e-15)
    np.testing.assert_allclose(grads[0] if isinstance(grads, tuple) else grads, expected.gradient["x"], rtol=1e-14)
