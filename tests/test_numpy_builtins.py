"""The numpy-named builtins of issue 15 from the language: each value against numpy or scipy,
each gradient (reverse mode, of the summed output) against central differences and against
forward mode. The table's own entries are tested again, rule by rule, in test_rules.py."""

import math
import warnings

import numpy as np
import pytest
import scipy.special as sp

import autodiff
from autodiff.engine import api
from autodiff.engine.core import ops
from autodiff.engine.core.library import linalg, reductions, shapes
from autodiff.engine.core.tape import Tape, backward, strip

rng = np.random.default_rng(15)
V = np.array([0.3, -1.2, 2.1, 0.7])
P = np.array([0.4, 1.3, 2.2])                       # positive
M = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])
Z = np.array([0.0, 2.0, -1.5, 0.0])
S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])     # symmetric positive definite
A = np.array([[2.0, 0.5, -0.3], [0.1, 1.5, 0.4], [-0.2, 0.3, 1.8]])
T3 = rng.uniform(-1, 1, (2, 3, 4))

# (expression, inputs, numpy's value of it)
CASES = [
    ("einsum('ij,jk->ik', a, m.T) + einsum(\"ii\", a) + norm(a, 'fro') + np.linalg.norm(m, ord='nuc')",
     {"a": A, "m": M}, lambda a, m: np.einsum("ij,jk->ik", a, m.T) + np.trace(a) + np.linalg.norm(a, "fro")
     + np.linalg.norm(m, "nuc")),
    ("sum(log1p(p) + expm1(v[:3]) + exp2(v[:3]) + cbrt(p) + square(v[:3]) + reciprocal(p))", {"p": P, "v": V},
     lambda p, v: np.sum(np.log1p(p) + np.expm1(v[:3]) + np.exp2(v[:3]) + np.cbrt(p) + v[:3] ** 2 + 1 / p)),
    ("sum(arctan2(v, 0.5 + v * v) + hypot(v, 2) + logaddexp(v, -v))", {"v": V},
     lambda v: np.sum(np.arctan2(v, 0.5 + v * v) + np.hypot(v, 2) + np.logaddexp(v, -v))),
    ("sum(power(p, 1.5)) + sum(absolute(v) + negative(v) + deg2rad(v) + rad2deg(v))", {"p": P, "v": V},
     lambda p, v: np.sum(p ** 1.5) + np.sum(np.abs(v) - v + np.deg2rad(v) + np.rad2deg(v))),
    ("sum(arcsinh(v) + arctanh(v / 3)) + sum(arccosh(1 + p))", {"v": V, "p": P},
     lambda v, p: np.sum(np.arcsinh(v) + np.arctanh(v / 3)) + np.sum(np.arccosh(1 + p))),
    ("sum(clip(v, -1, 1) * v) + sum(fmod(v, 0.9)) + sum(mod(v, 0.9)) + sum(floor_divide(v, 0.5))", {"v": V},
     lambda v: np.sum(np.clip(v, -1, 1) * v) + np.sum(np.fmod(v, 0.9) + np.mod(v, 0.9) + np.floor_divide(v, 0.5))),
    ("sum(ceil(v) + round(v) + trunc(v) + rint(v)) + sum(round(v, 1))", {"v": V},
     lambda v: np.sum(np.ceil(v) + np.round(v) + np.trunc(v) + np.rint(v)) + np.sum(np.round(v, 1))),
    ("sum(erf(v) + erfc(v)) + sum(gammaln(p) + digamma(p) + gamma(p) + polygamma(2, p))", {"v": V, "p": P},
     lambda v, p: np.sum(sp.erf(v) + sp.erfc(v)) + np.sum(sp.gammaln(p) + sp.digamma(p) + sp.gamma(p)
                                                          + sp.polygamma(2, p))),
    ("sum(beta(p, 2) + betaln(p, p) + expit(v[:3]) + logit(p / 3) + xlogy(p, p + 1))", {"p": P, "v": V},
     lambda p, v: np.sum(sp.beta(p, 2) + sp.betaln(p, p) + sp.expit(v[:3]) + sp.logit(p / 3) + sp.xlogy(p, p + 1))),
    ("sum(i0(v) + i1(v) + j0(v) + j1(v))", {"v": V}, lambda v: np.sum(sp.i0(v) + sp.i1(v) + sp.j0(v) + sp.j1(v))),
    ("prod(m, 1)", {"m": M}, lambda m: np.prod(m, 1)),
    ("prod(m, (0, 1))", {"m": M}, lambda m: np.prod(m, (0, 1))),
    ("prod(z)", {"z": Z}, lambda z: np.prod(z)),
    ("var(m) + var(m, 0) + sum(std(m, 1, 1))", {"m": M},
     lambda m: np.var(m) + np.var(m, 0) + np.sum(np.std(m, 1, ddof=1))),
    ("logsumexp(m) + logsumexp(m, 1) + logsumexp(1000 * v)", {"m": M, "v": V},
     lambda m, v: sp.logsumexp(m) + sp.logsumexp(m, 1) + sp.logsumexp(1000 * v)),
    ("average(m, 1, p[:3]) + average(m)", {"m": M, "p": P},
     lambda m, p: np.average(m, 1, p) + np.average(m)),
    ("cumsum(m, 1) + cumprod(m, 0)[1] + cummax(v)[:3] + cummin(m, 1)", {"m": M, "v": V},
     lambda m, v: np.cumsum(m, 1) + np.cumprod(m, 0)[1] + np.maximum.accumulate(v)[:3] + np.minimum.accumulate(m, 1)),
    ("cumprod(z) + cumsum(z)", {"z": Z}, lambda z: np.cumprod(z) + np.cumsum(z)),
    ("logcumsumexp(v) + sort(v) + topk(v, 4)", {"v": V},
     lambda v: np.logaddexp.accumulate(v) + np.sort(v) + np.sort(v)[::-1]),
    ("sort(m, 0) * argmax(v) + argmin(m, 1)[0] + sum(argsort(v))", {"m": M, "v": V},
     lambda m, v: np.sort(m, 0) * np.argmax(v) + np.argmin(m, 1)[0] + np.sum(np.argsort(v))),
    ("concatenate((v, p)) * 2 + hstack((p, v))", {"v": V, "p": P},
     lambda v, p: np.concatenate((v, p)) * 2 + np.hstack((p, v))),
    ("stack((m, m * 2), 1) + expand_dims(vstack((m[0], m[1])), 1)", {"m": M},
     lambda m: np.stack((m, 2 * m), 1) + np.expand_dims(np.vstack((m[0], m[1])), 1)),
    ("pad(m, 1) + pad(m, ((0, 0), (2, 0)), 'constant', 3)[0][0]", {"m": M},
     lambda m: np.pad(m, 1) + 3.0),
    ("flip(m) + flip(m, 1) + roll(m, 1) + roll(m, -1, 1)", {"m": M},
     lambda m: np.flip(m) + np.flip(m, 1) + np.roll(m, 1) + np.roll(m, -1, 1)),
    ("squeeze(broadcast_to(v, (1, 4))) + tile(v, 2)[3:7] + repeat(v, 2)[:4]", {"v": V},
     lambda v: np.broadcast_to(v, (1, 4))[0] + np.tile(v, 2)[3:7] + np.repeat(v, 2)[:4]),
    ("transpose(t, (1, 0, 2)) + moveaxis(t, 0, 1) + swapaxes(t, 0, 1)", {"t": T3},
     lambda t: 3 * np.transpose(t, (1, 0, 2))),
    ("diag(v) + diag(diag(s)) + trace(s) + triu(s) + tril(s, -1)", {"v": V[:3], "s": S},
     lambda v, s: np.diag(v) + np.diag(np.diag(s)) + np.trace(s) + np.triu(s) + np.tril(s, -1)),
    ("diagonal(t, 0, 1, 2) + eye(2, 4)[:, :3] + identity(2)[0][0] + full((2, 3), 2)[0]", {"t": T3},
     lambda t: np.diagonal(t, 0, 1, 2) + np.eye(2, 4)[:, :3] + 1.0 + 2.0),
    ("m * zeros_like(m) + ones_like(m) + full_like(m, 3) + array(m) + asarray(m)", {"m": M},
     lambda m: 4.0 + 2 * m),
    ("outer(v, p) @ p + kron(v[:2], p)[:4] + inner(v[:3], p) + cross(v[:3], p)[0]", {"v": V, "p": P},
     lambda v, p: np.outer(v, p) @ p + np.kron(v[:2], p)[:4] + np.inner(v[:3], p) + np.cross(v[:3], p)[0]),
    ("tensordot(t, t, ((1, 2), (1, 2))) + sum(tensordot(m, t, 1)[0])", {"t": T3, "m": M[:, :2]},
     lambda t, m: np.tensordot(t, t, ((1, 2), (1, 2))) + np.sum(np.tensordot(m, t, 1)[0])),
    ("matmul(t, transpose(t, (0, 2, 1))) + (t @ v)[0]", {"t": T3, "v": V},
     lambda t, v: t @ np.transpose(t, (0, 2, 1)) + (t @ v)[0]),
    ("det(a) + inv(a) + solve(a, p) + slogdet(a)[1] * slogdet(a)[0]", {"a": A, "p": P},
     lambda a, p: np.linalg.det(a) + np.linalg.inv(a) + np.linalg.solve(a, p) + np.prod(np.linalg.slogdet(a))),
    ("cholesky(s) + eigh(s)[0] + sum(pinv(m) @ m) + norm(m) + norm(v, 1) + norm(m, inf) + sum(norm(m, 1, 1))",
     {"s": S, "m": M.T, "v": V},
     lambda s, m, v: np.linalg.cholesky(s) + np.linalg.eigh(s)[0] + np.sum(np.linalg.pinv(m) @ m)
     + np.linalg.norm(m) + np.linalg.norm(v, 1) + np.linalg.norm(m, np.inf) + np.sum(np.linalg.norm(m, 1, 1))),
    ("svd(a, False, False) + sum(svd(m, False)[1]) + norm(a, 2) + sum(svd(a, False)[0] @ svd(a, False)[2])",
     {"a": A, "m": M},
     lambda a, m: np.linalg.svd(a, compute_uv=False) + np.sum(np.linalg.svd(m, compute_uv=False))
     + np.linalg.norm(a, 2) + np.sum(np.linalg.svd(a)[0] @ np.linalg.svd(a)[2])),
    ("max(x, y, 2 * x) + min(x, y, -1) + abs(x) + int(y) + float(x)", {"x": 1.5, "y": -2.5},
     lambda x, y: max(x, y, 2 * x) + min(x, y, -1) + abs(x) + int(y) + x),
    # two arguments: Python's larger/smaller of two, unless the first is an array and the second an axis
    ("max(x, y) * min(x, y) + max(2, 3) * x + min(y, 2 * y)", {"x": 1.5, "y": -2.5},
     lambda x, y: max(x, y) * min(x, y) + 3 * x + min(y, 2 * y)),
    ("sum(max(v, 0.25)) + sum(min(0.5, v)) + sum(max(m, 1)) + sum(m.min(0))", {"v": V, "m": M},
     lambda v, m: np.sum(np.maximum(v, 0.25)) + np.sum(np.minimum(0.5, v)) + np.sum(np.max(m, 1)) + np.sum(m.min(0))),
    ("sum(m, (0, 1)) + max(m, (0, 1)) + amax(m, 0)[1] + amin(m, 1)[0]", {"m": M},
     lambda m: np.sum(m) + np.max(m) + np.max(m, 0)[1] + np.min(m, 1)[0]),
]
# every case, the string arguments (einsum's subscripts, norm's ord, pad's mode) included
LANGUAGE_CASES = CASES


@pytest.mark.parametrize("expr, at, reference", LANGUAGE_CASES, ids=[c[0][:50] for c in LANGUAGE_CASES])
def test_float32_stays_float32(expr, at, reference):
    r = autodiff.grad(expr, at=at, dtype_name="float32")
    dtypes = {np.asarray(r.value).dtype} | {np.asarray(g).dtype for g in r.gradient.values()}
    assert dtypes == {np.dtype("float32")}
    np.testing.assert_allclose(np.asarray(r.value, dtype=float), reference(*[at[n] for n in api.load(expr).inputs]),
                               rtol=2e-4, atol=2e-4)


def numeric_gradient(target, at, name, h=1e-6):
    x = np.asarray(at[name], dtype=float)
    grad = np.zeros(x.shape)
    for k in range(x.size):
        for sign in (1, -1):
            moved = x.copy()
            moved.flat[k] += sign * h
            value = api.evaluate(None, at={**at, name: moved if x.ndim else float(moved)}, target=target).value
            grad.flat[k] += sign * np.sum(value) / (2 * h)
    return grad


@pytest.mark.parametrize("expr, at, reference", LANGUAGE_CASES, ids=[c[0][:50] for c in LANGUAGE_CASES])
def test_value_matches_numpy_and_gradient_matches_differences_and_forward_mode(expr, at, reference):
    target = api.load(expr)
    got = autodiff.evaluate(None, at=at, target=target).value
    np.testing.assert_allclose(np.asarray(got, dtype=float), reference(*[at[n] for n in target.inputs]),
                               rtol=1e-10, atol=1e-12)
    reverse = autodiff.grad(None, at=at, target=target)
    forward = autodiff.grad(None, at=at, target=target, mode="forward")
    for name in target.inputs:
        fd = numeric_gradient(target, at, name)
        np.testing.assert_allclose(reverse.gradient[name], fd, rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(forward.gradient[name], reverse.gradient[name], rtol=1e-10, atol=1e-12)


def test_the_static_signatures_are_the_functions_own():
    import inspect

    from autodiff.engine.core import library
    for name, (_, _, params) in library.SIGNATURES.items():
        real = []
        for p in inspect.signature(library.function(name)).parameters.values():
            real.append(f"*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name + ("" if p.default is p.empty else "="))
        assert params.replace("[]", "").split() == real, name


def test_the_library_reads_a_traced_value_only_through_read():
    # issue 27 item 3: a composite that takes a number out of a box (norm's count of ord 0, a sort
    # order, clip's mask) must say so: ops.read tells a run that records a trace for replay,
    # which then keeps none. ops.strip, stop_gradient and a box's own fields would not.
    import ast
    import pathlib

    from autodiff.engine.core import library
    for path in sorted(pathlib.Path(library.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and (node.attr in ("stop_gradient", "value", "primal") or
                                                    node.attr == "strip" and getattr(node.value, "id", "") == "ops"):
                raise AssertionError(f"{path.name}:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.ImportFrom):
                assert not {"strip", "stop_gradient"} & {a.name for a in node.names}, f"{path.name}:{node.lineno}"


def test_a_table_entry_named_as_a_builtin_is_that_builtin():
    # a builtin named as a table entry is that entry's primitive: norm and transpose, which the
    # language gives numpy's arguments as composites, are not such entries
    from autodiff.engine.core.rules import builtin_primitives
    from autodiff.engine.lang.builtins import make_builtins
    table = make_builtins(None)
    for prim in builtin_primitives():
        for name in filter(None, (prim.builtin, prim.alias)):
            wrapped = [c.cell_contents for c in table[name].fn.__closure__ or () if callable(c.cell_contents)]
            assert prim.op in wrapped, name


def test_a_program_without_library_builtins_does_not_load_the_library():
    import subprocess
    import sys
    code = ("import sys, autodiff; autodiff.grad('sum(x * x)', at={'x': [1.0, 2.0]}); "
            "print(any(m.startswith('autodiff.engine.core.library.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def grad_of(fn, x):
    tape = Tape()
    box = tape.watch(x)
    out = fn(box)
    return strip(out), strip(backward(tape, out, np.ones_like(strip(out)))[box.index])


def test_string_arguments_work_from_python():
    # einsum subscripts, norm's 'fro'/'nuc' and pad's mode are strings: ops-level until the
    # parser accepts a string literal as an argument
    value, g = grad_of(lambda a: linalg.einsum("ij,jk->ik", a, a), A)
    np.testing.assert_allclose(value, A @ A)
    np.testing.assert_allclose(g, np.ones((3, 3)) @ A.T + A.T @ np.ones((3, 3)))
    value, g = grad_of(lambda a: linalg.einsum("ij->", a), A)
    assert value == pytest.approx(A.sum()) and g.tolist() == np.ones((3, 3)).tolist()
    assert linalg.norm(M, "fro") == pytest.approx(np.linalg.norm(M, "fro"))
    assert float(strip(linalg.norm(A, "nuc"))) == pytest.approx(np.linalg.norm(A, "nuc"))
    np.testing.assert_allclose(strip(shapes.pad(M, ((0, 0), (2, 0)), "constant", 3.0)),
                               np.pad(M, ((0, 0), (2, 0)), constant_values=3.0))


def test_keyword_arguments_by_numpys_names_from_python():
    np.testing.assert_allclose(strip(reductions.var(M, axis=1, ddof=1, keepdims=True)), np.var(M, 1, ddof=1, keepdims=True))
    np.testing.assert_allclose(strip(reductions.prod(M, axis=(0, 1), keepdims=True)), np.prod(M, keepdims=True))
    np.testing.assert_allclose(strip(reductions.logsumexp(M, axis=0, keepdims=True)), sp.logsumexp(M, 0, keepdims=True))
    np.testing.assert_allclose(strip(linalg.norm(M, ord=2, axis=1, keepdims=True)), np.linalg.norm(M, 2, 1, True))
    np.testing.assert_allclose(strip(shapes.transpose(T3, axes=(2, 0, 1))), np.transpose(T3, (2, 0, 1)))
    np.testing.assert_allclose(strip(reductions.average(M, axis=1, weights=P)), np.average(M, 1, P))
    from autodiff.engine.lang.builtins import Builtins
    language = Builtins(None)                   # the language's own sum/mean/max/min
    for name in ("sum", "mean", "max", "min"):
        for axis in (0, -1, (0, 1), None):
            got = strip(getattr(language, name)(M, axis=axis, keepdims=True))
            np.testing.assert_allclose(got, getattr(np, name)(M, axis=axis, keepdims=True), err_msg=f"{name} {axis}")


def test_the_builtin_table_passes_numpys_keywords_through():
    from autodiff.engine.core import library
    from autodiff.engine.lang.builtins import make_builtins
    table = make_builtins(None)
    np.testing.assert_allclose(strip(table["var"].fn(M, axis=0, ddof=1, keepdims=True)), np.var(M, 0, ddof=1, keepdims=True))
    np.testing.assert_allclose(strip(table["sum"].fn(M, axis=(0, 1), keepdims=True)), np.sum(M, keepdims=True))
    np.testing.assert_allclose(strip(table["eye"].fn(3, k=1)), np.eye(3, k=1))
    assert library.parameters("var") == ["a", "axis", "ddof", "keepdims"]
    assert library.parameters("einsum") == ["subscripts", "operands"]


def test_empty_arrays_where_numpy_allows_them():
    empty = np.zeros((0,))
    assert strip(reductions.prod(empty)) == 1.0
    assert strip(shapes.concatenate((empty, V))).tolist() == V.tolist()
    assert strip(reductions.cumsum(empty)).shape == (0,)
    assert strip(shapes.tile(empty, 3)).shape == (0,)
    assert strip(reductions.sort(empty)).shape == (0,)
    _, g = grad_of(lambda v: ops.sum(shapes.concatenate((v, empty))), V)
    assert g.tolist() == [1.0] * 4


def test_eigh_vectors_and_svd_reconstruct_and_differentiate():
    w, vectors = linalg.eigh(S)
    np.testing.assert_allclose(strip(vectors) * strip(w) @ strip(vectors).T, S, atol=1e-12)
    u, s, vh = linalg.svd(M, full_matrices=False)
    np.testing.assert_allclose(strip(u) * strip(s) @ strip(vh), M, atol=1e-12)
    for got, want in zip(linalg.svd(M.T, full_matrices=False), np.linalg.svd(M.T, full_matrices=False)):
        np.testing.assert_allclose(strip(got), want, atol=1e-12)         # a tall matrix: LAPACK's own
    # the largest singular value's gradient is u1 v1ᵀ
    _, g = grad_of(lambda m: ops.getitem(linalg.svd(m, compute_uv=False), 0), M)
    uu, _, vv = np.linalg.svd(M, full_matrices=False)
    np.testing.assert_allclose(g, np.outer(uu[:, 0], vv[0]), atol=1e-10)


@pytest.mark.parametrize("expr, x", [
    ("logsumexp(x)", [1.0, 2.0, 3.0]), ("var(x, 0, 1)", [1.0, 2.0, 4.0]), ("sum(cumprod(x))", [1.0, 0.0, 3.0]),
    ("det(reshape(x, (2, 2)))", [1.0, 2.0, 3.0, 4.0]), ("sum(inv(reshape(x, (2, 2))))", [2.0, 1.0, 0.5, 3.0]),
    ("sum(erf(x) * gammaln(x + 1))", [0.5, 1.0, 2.0]), ("logcumsumexp(x)[2]", [0.1, 0.5, -1.0]),
    ("sum(cholesky(reshape(x, (2, 2))))", [4.0, 1.0, 1.0, 3.0]),
    ("sum(eigh(reshape(x, (2, 2)))[1][0])", [2.0, 0.5, 0.5, 1.0]),
])
def test_hessians_of_builtins_match_differences_of_the_gradient(expr, x):
    assert_hessian_matches_differences_of_the_gradient(expr, x)


def assert_hessian_matches_differences_of_the_gradient(expr, x):
    """Both Hessian methods against central differences of the AD gradient of `expr` in x."""
    from autodiff.engine.diff.higher import hessian
    h = 1e-5
    fd = np.zeros((len(x), len(x)))
    for i in range(len(x)):
        up, down = np.array(x), np.array(x)
        up[i] += h
        down[i] -= h
        fd[i] = (autodiff.grad(expr, at={"x": up}).gradient["x"] - autodiff.grad(expr, at={"x": down}).gradient["x"]) / (2 * h)
    for method in ("forward-over-reverse", "reverse-over-reverse"):
        got = hessian(expr, at={"x": x}, method=method).hessian["x"]["x"]
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7, err_msg=method)


def test_polygamma_and_bessel_derivatives_at_every_order():
    from autodiff.engine.diff.higher import derivatives
    got = derivatives("polygamma(1, x)", at={"x": 1.5}, order=4).derivatives
    np.testing.assert_allclose(got, [sp.polygamma(k, 1.5) for k in range(2, 6)], rtol=1e-12)
    got = derivatives("j0(x) + i0(x)", at={"x": 0.7}, order=2, method="forward").derivatives
    np.testing.assert_allclose(got, [-sp.j1(0.7) + sp.i1(0.7), -0.5 * (sp.j0(0.7) - sp.jv(2, 0.7))
                                     + 0.5 * (sp.i0(0.7) + sp.iv(2, 0.7))], rtol=1e-12)


@pytest.mark.parametrize("expr, message", [
    ("topk(v, 7)", "k = 7"),
    ("split(v, 3)", "equal sections"),
    ("concatenate((v, m))", "dimension"),
    ("transpose(m, (0, 0))", "permutation"),
    ("cumsum(v, 2)", "out of bounds"),
])
def test_misuse_is_a_located_error(expr, message):
    with pytest.raises(autodiff.SourceError) as info:
        inputs = api.load(expr).inputs
        autodiff.evaluate(expr, at={k: v for k, v in (("v", V), ("m", M)) if k in inputs})
    assert message in info.value.message and info.value.span is not None


@pytest.mark.parametrize("source", ["sum(tile(x, 10**9))", "sum(repeat(x, 10**9))", "sum(eye(10**6)) * x[0]",
                                    "sum(full((10**5, 10**5), x[0]))", "sum(pad(x, 10**9))",
                                    "sum(broadcast_to(x[0], (10**5, 10**5)))"])
def test_builtins_that_make_arrays_from_counts_are_refused_past_the_element_limit(source):
    # found in review: tile(x, 10**9) was killed by the kernel (out of memory) instead of refused
    import autodiff
    with pytest.raises(autodiff.SourceError) as err:
        autodiff.grad(source, at={"x": [1.0, 2.0]})
    assert err.value.kind == "too large" and "more than the limit" in err.value.message
    assert err.value.span is not None


# ---- issue 27 (hardening III) ------------------------------------------------------------------

RUNNING = {"cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


@pytest.mark.parametrize("name", sorted(RUNNING))
@pytest.mark.parametrize("u, axis", [
    ([2.0, np.nan, -1.0], None), ([2.0, np.nan, -1.0, np.nan, 5.0], None), ([np.nan, 1.0, 2.0], None),
    ([1.0, -np.inf, np.inf, 0.0], None),
    ([[2.0, np.nan, -1.0], [0.0, 3.0, np.nan], [4.0, 1.0, 1.0]], 1),
    ([[2.0, np.nan, -1.0], [0.0, 3.0, np.nan], [4.0, 1.0, 1.0]], 0),
])
def test_cummax_and_cummin_keep_nan_as_numpy(name, u, axis):
    """Item 5: a nan stays in the running extreme from where it appears, as numpy's accumulate
    (before: [2, nan, -1] gave cummin [2, 2, 2])."""
    u = np.array(u)
    call = f"{name}(u)" if axis is None else f"{name}(u, {axis})"
    with np.errstate(invalid="ignore"):
        got = api.evaluate(call, at={"u": u}).value
        want = RUNNING[name](u if axis is not None else u.ravel(), axis=axis or 0)
    np.testing.assert_array_equal(got, want)


def test_cummax_and_cummin_gradients_follow_the_value_into_the_first_nan():
    """The adjoint goes to the element each output came from; from the first nan on, to it."""
    cases = [("sum(cummin(u))", [2.0, np.nan, -1.0], [1.0, 2.0, 0.0]),
             ("sum(cummax(u))", [2.0, np.nan, 5.0, np.nan], [1.0, 3.0, 0.0, 0.0]),
             ("sum(cummin(u))", [2.0, 3.0, 1.0, 1.0], [2.0, 0.0, 1.0, 1.0]),          # a tie: the later one
             ("sum(cummax(u, 1) * arange(3.0))", [[1.0, np.nan, 2.0], [1.0, 0.0, 2.0]],
              [[0.0, 3.0, 0.0], [1.0, 0.0, 2.0]])]
    for source, u, want in cases:
        for mode in ("reverse", "forward"):
            with np.errstate(invalid="ignore"):
                g = api.grad(source, at={"u": np.array(u)}, mode=mode).gradient["u"]
            assert g.tolist() == want, (source, mode, g)


def test_check_of_cummin_through_a_nan_does_not_pass(capsys):
    from autodiff.cli import main as climain
    from autodiff.cli.render import common as render
    render._consoles.clear()            # the consoles bind to the stream they first saw
    code = climain.invoke(["grad", "sum(cummin(u))", "--at", "u=[2,nan,-1]", "--check"])
    out, err = capsys.readouterr()
    assert int(code) == 1, out + err
    assert "check passed" not in out + err


DOT_SHAPES = [((), ()), ((), (3,)), ((2, 3), ()), ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
              ((4, 2, 3), (3,)), ((3,), (2, 3, 4)), ((2, 3), (5, 3, 4)), ((4, 2, 3), (5, 3, 2)),
              ((2, 2, 3), (3, 4)), ((1, 2), (2, 2, 2)), ((2, 1, 2, 3), (2, 3, 2)), ((3,), (2, 1, 3, 2)),
              ((2, 0), (3, 0, 4)), ((0, 3), (2, 3, 4))]


@pytest.mark.parametrize("sa, sb", DOT_SHAPES, ids=[f"{a}.{b}" for a, b in DOT_SHAPES])
def test_dot_is_numpys_for_every_number_of_dimensions(sa, sb):
    """Item 11: dot of N-d arrays sums over a's last axis and b's second-to-last (numpy's dot),
    not matmul's stacks; its gradient (both modes) against central differences."""
    a, b = rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)
    want = np.dot(a, b)
    w = rng.uniform(-1, 1, np.shape(want))
    at = {"A": a if sa else float(a), "B": b if sb else float(b), "W": w if np.shape(want) else float(w)}
    target = api.load("sum(dot(A, B) * W)")
    pair = {"A": at["A"], "B": at["B"]}
    got = api.evaluate("dot(A, B)", at=pair).value
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    reverse = autodiff.grad(None, at=at, target=target, wrt=["A", "B"])
    forward = autodiff.grad(None, at=at, target=target, wrt=["A", "B"], mode="forward")
    for name in ("A", "B"):
        fd = numeric_gradient(target, at, name)
        np.testing.assert_allclose(reverse.gradient[name], fd, rtol=1e-6, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(forward.gradient[name], reverse.gradient[name], rtol=1e-12, atol=1e-14)
    method = api.evaluate("A.dot(B)", at=pair).value                # the method form is the same builtin
    np.testing.assert_allclose(method, want, rtol=1e-12, atol=1e-14)


def test_dot_of_the_issue_has_numpys_shape_and_misaligned_shapes_are_located():
    a, b = np.array([[1.0, 2.0]]), np.array([[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]])
    got = api.evaluate("dot(A, B)", at={"A": a, "B": b}).value
    assert got.shape == (1, 2, 2) and got.tolist() == np.dot(a, b).tolist()
    from autodiff.parser.errors import SourceError
    for sa, sb in (((1, 3), (1, 3)), ((2, 3), (2, 2, 3)), ((3,), (2,))):
        with pytest.raises(SourceError, match=r"dot\(\): shapes .* not aligned") as e:
            api.evaluate("dot(A, B)", at={"A": np.ones(sa), "B": np.ones(sb)})
        assert e.value.kind == "shape mismatch" and e.value.span is not None


VAR_DDOF = [("var", [1.0, 2.0, 3.0], None, 5), ("var", [1.0, 2.0, 3.0], None, 3), ("std", [1.0, 2.0, 3.0], None, 4),
            ("var", [2.0, 2.0, 2.0], None, 3), ("var", np.zeros(0), None, 0), ("std", np.zeros(0), None, 1),
            ("var", np.zeros((0, 3)), 0, 0), ("std", np.zeros((2, 0)), 1, 2),
            ("var", [[1.0, 2.0, 4.0], [0.0, 0.0, 0.0]], 1, 3), ("var", 5.0, None, 1), ("var", [1.0, 2.0, 4.0], None, -1)]


@pytest.mark.parametrize("name, x, axis, ddof", VAR_DDOF)
def test_var_and_std_divide_by_numpys_count_where_ddof_reaches_it(name, x, axis, ddof):
    """Item 12: numpy divides by max(n - ddof, 0): inf (nan where every element is the mean, or
    there is none), never a negative count (before: var([1, 2, 3], ddof=5) was -1, of nothing -0)."""
    x = np.array(x) if np.ndim(x) else x
    source = f"{name}(x, {axis}, {ddof})"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # numpy's "Degrees of freedom <= 0"
        want = getattr(np, name)(x, axis=axis, ddof=ddof)
        got = api.evaluate(source, at={"x": x}).value
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("source, x, want", [
    ("var(x, ddof=5)", [1.0, 2.0, 3.0], [-math.inf, 0.0, math.inf]),
    ("var(x, ddof=3)", [1.0, 4.0, 1.0], [-math.inf, math.inf, -math.inf]),
    ("std(x, ddof=5)", [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]),
    ("var(x, ddof=3)", [2.0, 2.0, 2.0], [0.0, 0.0, 0.0]),
    ("sum(var(x, 1, 2))", [[1.0, 3.0], [5.0, 5.0]], [[-math.inf, math.inf], [0.0, 0.0]]),
])
def test_var_with_no_degrees_of_freedom_has_the_formulas_gradient_in_both_modes(source, x, want):
    """Where max(n - ddof, 0) is 0 the gradient is the formula's, 2 (x - mean) / 0 element by
    element: ±inf, 0 where an element is the mean (the strong zero); the mean's own term, a sum
    of x - mean (0), is left out, as inf - inf it made reverse mode nan where forward mode was not."""
    for mode in ("reverse", "forward"):
        with np.errstate(all="ignore"):
            g = api.grad(source, at={"x": np.array(x)}, mode=mode).gradient["x"]
        assert g.tolist() == want, (mode, g)


def test_a_traced_fill_value_of_full_carries_its_derivative():
    # np.full(shape, v) is v broadcast: d sum(full((2, 3), v)) / dv = 6 (was 0, a constant)
    assert api.grad("sum(full((2, 3), v))", at={"v": 1.5}).gradient == {"v": 6.0}
    r = api.grad("sum(full_like(x, v) * x)", at={"v": 1.5, "x": [1.0, 2.0]})
    assert r.gradient["v"] == 3.0 and r.gradient["x"].tolist() == [1.5, 1.5]
    assert [api.evaluate("full((2,), v)", at={"v": v}).value.tolist() for v in (1.5, 2.5, 3.5)] == \
        [[1.5, 1.5], [2.5, 2.5], [3.5, 3.5]]
