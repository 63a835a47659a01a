"""Issue 11, fused kernels: every elementwise entry of the rules table, with its VJPs traced into
numexpr kernels (core/fused.py), agrees with the unfused rule on large arrays; small arrays,
scalars and recorded sweeps keep the ordinary path."""
import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import fused, region_program
from autodiff.engine.core.fused_ir import complex_refusal
from autodiff.engine.core.rules.complexes import conj, real
from autodiff.engine.core.rules import TABLE
from autodiff.engine.core.tape import FUSED_RULES, Shape

N = fused.FUSE_MIN_ELEMENTS
RNG = np.random.default_rng(11)
ELEMENTWISE = sorted(name for name, prim in TABLE.items() if prim.elementwise and isinstance(prim.vjps, tuple))
# these must fuse (their rules are plain arithmetic and numexpr functions, two ops or more)
MUST_FUSE = {"tan", "tanh", "log", "sqrt", "div", "pow", "arctan"}
# their rules hold a function a region leaves to numpy's loop (exp, sinh, cosh; sin and cos where
# this process's probe finds numexpr's apart from numpy's: region_program.NUMPY_LOOPS): on the host
# numpy's ops run them, so a VJP gives the bits of a region's (core/fused.py's numpy_looped); on
# the device its kernels are CUDA C, the device's own functions
NUMPY_LOOPED = {"sinh", "cosh", "sigmoid", "softplus"} | {
    name for name, slope in (("sin", "cos"), ("cos", "sin")) if slope in region_program.NUMPY_LOOPS}
# g * y, g, -g: one op, numpy is as quick (exp's g * ans keeps a zero adjoint zero where ans is
# inf, issue 16: where(g == 0, 0, g * ans) is worth a kernel)
NOT_WORTH_IT = {"mul", "add", "neg"}


def arguments(prim):
    """Arguments in each function's domain: positive, inside (-1, 1) for arcsin/arccos."""
    lo, hi = (-0.9, 0.9) if prim.name in ("arcsin", "arccos") else (0.2, 2.0)
    if prim.name == "where":
        return (RNG.random(N) > 0.5, RNG.uniform(lo, hi, N), RNG.uniform(lo, hi, N))
    return tuple(RNG.uniform(lo, hi, N) for _ in range(prim.arity))


def saved(prim, args):
    return args if prim.needs_args else tuple(Shape(a.shape, a.dtype) for a in args)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_fused_vjps_agree_with_the_table(name):
    prim, entry = TABLE[name], FUSED_RULES[name]
    args = arguments(prim)
    ans = prim.impl(*args)
    g = RNG.uniform(-1.0, 1.0, N)
    fused_any = False
    for pos, rule in enumerate(prim.vjps):
        if rule is None:
            continue
        plain = rule(g, ans if prim.needs_ans else None, *saved(prim, args))
        got = entry.vjps[pos](g, ans if prim.needs_ans else None, *saved(prim, args))
        np.testing.assert_allclose(got, plain, rtol=1e-14, atol=1e-300)
        # the host's kernels (the key's first part: the device's are cached apart)
        fused_any = fused_any or any(v for k, v in entry.vjps[pos].kernels.items() if k[0])
    if name in MUST_FUSE:
        assert fused_any, f"{name}'s VJP did not become a kernel"
    if name in NOT_WORTH_IT or name in NUMPY_LOOPED:
        assert not fused_any


def test_a_constant_is_baked_into_the_kernel():
    entry = FUSED_RULES["pow"]
    x = np.linspace(0.5, 2.0, N)
    out = entry.vjps[0](np.ones(N), None, x, 3.0)
    np.testing.assert_allclose(out, 3.0 * x ** 2, rtol=1e-14)
    assert any("3.0" in expr.text for expr in entry.vjps[0].kernels.values() if expr)


def test_small_arrays_and_recorded_sweeps_keep_the_ordinary_path():
    entry = FUSED_RULES["sin"]
    entry.vjps[0].kernels.clear()
    entry.vjps[0](np.ones(8), None, np.ones(8))
    assert not entry.vjps[0].kernels                       # below the threshold: no kernel made
    h = api.hessian("sum(sin(x) * x)", at={"x": np.linspace(0, 1, 5)})
    assert h.hessian["x"]["x"].shape == (5, 5)


def test_gradients_agree_with_fusion_off(monkeypatch):
    source = "sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0))"
    x = np.linspace(-2, 2, 2 * N)
    on = api.grad(source, at={"x": x}).gradient["x"]
    monkeypatch.setattr(fused, "FUSE_MIN_ELEMENTS", 10 ** 12)
    off = api.grad(source, at={"x": x}).gradient["x"]
    np.testing.assert_allclose(on, off, rtol=1e-13, atol=0)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def complex_arrays(k):
    rng = np.random.default_rng(32)
    return [rng.normal(size=N) + 1j * rng.normal(size=N) for _ in range(k)]


def test_a_complex_vjp_kernel_is_numexprs_where_its_bits_are_numpys():
    """Issue 32 item 2: a VJP over complex128 arrays is one numexpr kernel where each equation's
    complex kernel is numpy's bits (the entries' `complex_bits`: + - conj real imag), to the bit
    of the rule run op by op."""
    g, z, w = complex_arrays(3)
    rule = lambda g, ans, a0, a1: conj(g) - a0 + real(a1) * 2.0      # noqa: E731
    expr = fused.trace(rule, g, None, (z, w), "complex rule")
    assert expr is not None, fused.DECLINED.get("complex rule")
    assert "conj(g)" in expr.text and "real(a1)" in expr.text
    assert same_bits(fused.evaluate(expr, {"g": g, "a0": z, "a1": w}), rule(g, None, z, w))


def test_a_complex_vjp_kernel_with_a_product_fuses_only_where_numexpr_rounds_as_numpy():
    """numpy's loop for a complex product fuses multiply-adds (FMA) where the CPU has them, and
    numexpr rounds each product: the probe (`complex_bits="probe"`) decides; where they differ
    the VJP keeps the rule's own path, with that reason."""
    g, z, w = complex_arrays(3)
    mul_vjp = TABLE["mul"].vjps[0]
    expr = fused.trace(mul_vjp, g, None, (z, w), "complex product")
    why = complex_refusal("*")
    import numexpr
    assert (why is None) == same_bits(numexpr.evaluate("z * w", optimization="none"), z * w)
    if why is None:
        assert same_bits(fused.evaluate(expr, {"g": g, "a0": z, "a1": w}), mul_vjp(g, None, z, w))
    else:
        assert expr is None and fused.DECLINED["complex product"] == f"Unfusable: {why}"
    # a function numexpr computes its own way (its complex cos): never a kernel
    assert fused.trace(TABLE["sin"].vjps[0], g, None, (z,), "complex sin") is None
    assert fused.DECLINED["complex sin"] == "Unfusable: numexpr's complex cos is its own kernel, not numpy's loop: not numpy's bits"


def test_complex64_arrays_are_declined_with_their_reason():
    z = complex_arrays(1)[0].astype(np.complex64)
    with pytest.raises(fused.Unfusable, match="a complex64 array: numexpr has no complex64 kernels"):
        fused.layout(z)
    assert fused.layout(z.astype(np.complex128)) == ("c", z.shape)
