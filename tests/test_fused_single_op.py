"""A fused VJP whose rule is one arithmetic operation inside strong-zero masks (exp's
`where(ans == 0, 0, where(g == 0, 0, g * ans))`, div's `where(g == 0, 0, g / y)`) makes no numexpr
kernel: the rule's numpy path (the product, then one reduction that finds no non-finite entry)
is quicker, and gives the same bits, non-finite entries included."""
import numpy as np

from autodiff.engine.core import fused, ops  # noqa: F401  (ops installs the fused entries)
from autodiff.engine.core.fusion import Fused, Tree, traced
from autodiff.engine.core.rules import TABLE
from autodiff.engine.core.rules.comparisons import zero_where_zero
from autodiff.engine.core.tape import FUSED_RULES, Shape

N = fused.FUSE_MIN_ELEMENTS


def test_the_masks_are_seen_through():
    g, ans, a0 = (Fused(name, (N,)) for name in ("g", "ans", "a0"))
    product = traced(Tree, lambda g, ans: zero_where_zero(g, g * ans, ans), [g, ans])
    assert fused.numexpr_text(fused.unmasked(product.expr)) == "(g * ans)"
    cosine = traced(Tree, lambda g, a0: zero_where_zero(g, g * np.cos(a0)), [g, a0])
    assert fused.numexpr_text(fused.unmasked(cosine.expr)) == "(g * cos(a0))"
    chosen = ("where({}, {}, {})", ("({} > {})", "a0", "0.0"), "g", "0.0")
    assert fused.unmasked(chosen) == chosen


def test_exp_and_div_keep_the_numpy_path_with_the_same_bits():
    rng = np.random.default_rng(14)
    x = rng.uniform(-2.0, 2.0, N)
    x[:3] = (-np.inf, np.inf, 800.0)                 # exp: 0, inf, inf
    g = rng.uniform(-1.0, 1.0, N)
    g[3:6] = 0.0
    g[1] = 0.0                                       # a zero adjoint times an inf stays 0
    with np.errstate(over="ignore"):
        ans = np.exp(x)
    exp_vjp = FUSED_RULES["exp"].vjps[0]
    exp_vjp.kernels.clear()
    got = exp_vjp(g, ans, Shape(x.shape, x.dtype))
    assert list(exp_vjp.kernels.values()) == [None]      # traced once, no kernel
    plain = TABLE["exp"].vjps[0](g, ans, Shape(x.shape, x.dtype))
    assert got.tobytes() == plain.tobytes() and got[1] == 0.0 and got[2] == np.inf
    y = rng.uniform(0.5, 2.0, N)
    y[7] = 0.0
    div_vjp = FUSED_RULES["div"].vjps[0]
    div_vjp.kernels.clear()
    got = div_vjp(g, None, x, y)
    assert list(div_vjp.kernels.values()) == [None]
    assert got.tobytes() == TABLE["div"].vjps[0](g, None, x, y).tobytes()


def test_two_operations_in_masks_still_fuse():
    entry = FUSED_RULES["tan"].vjps[0]
    entry.kernels.clear()
    x = np.linspace(0.1, 1.0, N)
    entry(np.ones(N), np.tan(x), x)
    assert any(entry.kernels.values())
