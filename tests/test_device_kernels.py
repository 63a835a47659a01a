"""Issue 12 item 4, fused kernels on the GPU (engine/core/device_kernels.py): CUDA C for
cupy.ElementwiseKernel printed from the same fused IR numexpr's text is printed from (issue 28
item 4: no text is read back). On the strict stand-in (whose ElementwiseKernel interprets the C
it is given, tests/strict_cuda_c.py) every elementwise entry of the rules table, fused, equals its
op-by-op VJP; the C printed for a few traced functions is checked as text and against numexpr's
values of their text; what cannot be translated keeps the op-by-op path."""
import shutil
import subprocess

import numexpr
import numpy as np
import pytest

import strict_cuda_c
from autodiff.engine import api
from autodiff.engine.core import backend, device_kernels, fused
from autodiff.engine.core.fusion import Fused, FusionRecorder, Tree, traced
from autodiff.engine.core.rules import TABLE
from autodiff.engine.core.tape import FUSED_RULES

import test_fused

N = 300                       # above the lowered threshold: the table walk stays fast on the stand-in
FLOATS = {"g": "float64", "ans": "float64", "a0": "float64", "a1": "float64"}


@pytest.fixture
def device(standin_gpu, monkeypatch):
    backend.select_device("gpu")               # standin_gpu brings the device before it back
    monkeypatch.setattr(fused, "FUSE_MIN_ELEMENTS", 64)
    for entry in FUSED_RULES.values():         # kernels traced for other shapes stay, these are new
        for rule in entry.vjps:
            if rule is not None:
                rule.kernels.clear()
    device_kernels.KERNELS.clear()
    return standin_gpu


def lowered(fn):
    """fn (of arrays named as its parameters) recorded by the one tracer and lowered into one
    kernel's Expression (core/fusion.py): the tree both printers print."""
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    return fused.Expression(traced(Tree, fn, [Fused(name, (N,)) for name in names]).expr)


def c_of(fn, dtypes=FLOATS):
    return device_kernels.translate(lowered(fn).tree, dtypes)[2]


@pytest.mark.parametrize("fn, c", [
    (lambda g, a0: g * np.cos(a0), "out = (g * cos(a0));"),
    (lambda g, a0: g / np.sqrt(1.0 - a0 * a0), "out = (g / sqrt((1.0 - (a0 * a0))));"),
    (lambda g, a0: g * np.where(a0 >= 0.0, np.abs(a0), np.arcsin(a0)), "out = (g * ((a0 >= 0.0) ? fabs(a0) : asin(a0)));"),
    (lambda g, a0: (-g) * np.arccos(a0) * np.arctan(a0), "out = (((-g) * acos(a0)) * atan(a0));"),
    (lambda a0, a1: a0 ** a1, "out = pow(a0, a1);"),
    (lambda a0: a0 ** 0.3, "out = pow(a0, 0.3);"),
    (lambda a0: a0 ** 3.0, "out = pow(a0, 3.0);"),                           # pow, as numpy's and numexpr's
    (lambda a0: a0 ** 2.5, "out = pow(a0, 2.5);"),                           # loops (no products, no sqrt)
    (lambda a0: a0 ** -2.0, "out = pow(a0, (-2.0));"),
    (lambda g, a1: g * a1 ** 2.0, "out = (g * (a1 * a1));"),                 # numpy's fast power, as the lowering writes it
    (lambda a0: a0 / 4.0, "out = (a0 / 4.0);"),                              # a division, as numpy's
    (lambda g: g * -0.5, "out = (g * (-0.5));"),
    (lambda a0, g: np.where(3.0 == 0.0, a0, g), "out = g;"),                # a constant condition: its branch
    (lambda a0, ans, g: (np.log1p(a0) + np.expm1(ans)) - np.log10(g), "out = ((log1p(a0) + expm1(ans)) - log10(g));"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_the_c_written_for_an_expression(fn, c):
    assert c_of(fn) == c


def test_a_boolean_array_is_a_bool_parameter():
    tree = ("where({}, {}, {})", "a0", "g", ("(-{})", "g"))
    params, in_params, operation = device_kernels.translate(tree, {"a0": "bool", "g": "float64"})
    assert params == ("a0", "g") and in_params == "bool a0, float64 g"
    assert operation == "out = (a0 ? g : (-g));"


@pytest.mark.parametrize("tree, dtypes", [
    (("arctan2({}, {})", "a0", "g"), FLOATS), (("gamma({})", "a0"), FLOATS), (("({} * {})", "g", "x9"), FLOATS),
    (("({} @ {})", "g", "a0"), FLOATS), (("where({}, {}, {})", "a0", "g", "ans"), FLOATS),
    (("({} + {})", "a0", "1.0"), {"a0": "bool"}), (("({} * {})", "g", "2.0"), {"g": "float32"}),
    (("({} / {})", "1.0", "0.0"), FLOATS), (("({} > {})", "a0", "0.0"), FLOATS), (("({} * {})", "2.0", "3.0"), FLOATS),
    (("({} * {})", "out", "g"), {**FLOATS, "out": "float64"}), (("__import__({})", "g"), FLOATS),
    (("({} * {})", "g", "_ind"), {**FLOATS, "_ind": "float64"}), (("({} * {}) + 1", "g", "a0"), FLOATS),
    ("2.0", FLOATS),
])
def test_what_cannot_be_translated_is_refused(tree, dtypes):
    with pytest.raises(device_kernels.NotTranslatable):
        device_kernels.translate(tree, dtypes)


ARITHMETIC = [lambda g, a0, a1: g * a0 + a1 / 3.0, lambda a0: 1.0 / (a0 * a0),
              lambda a0, a1, g: np.where(a0 > a1, g - a0, a1 * a1), lambda a0: (-a0) * (-a0),
              lambda a0: a0 * np.sqrt(a0)]
FUNCTIONS = [lambda g, a0: g * np.cos(a0), lambda a0: np.exp(-np.abs(a0)) / (1.0 + np.exp(-np.abs(a0))),
             lambda a0, a1: a0 ** a1, lambda a0: a0 ** 1.3,
             lambda a0, a1: np.log(a1) * np.sqrt(a0) + np.tanh(a0) - np.arctan(a1),
             lambda a0, a1: np.arcsin(a0 * 0.3) + np.log1p(a1) * np.expm1(a0),
             lambda a0: a0 ** 3.0, lambda a0: a0 ** -3.0, lambda a0: a0 ** 2.5, lambda a0: a0 ** 7.0,
             lambda a0: a0 ** 0.0, lambda a0: a0 ** 2.0]


@pytest.mark.parametrize("fn", ARITHMETIC + FUNCTIONS)
def test_a_kernel_gives_what_numexpr_gives(device, fn):
    """numexpr's text and the CUDA source, printed from the same tree, compute the same numbers."""
    rng = np.random.default_rng(3)
    host = {"g": rng.uniform(-1, 1, N), "a0": rng.uniform(-2, 2, N), "a1": rng.uniform(0.1, 2, N)}
    host["a0"][:4] = (0.0, -0.0, np.nan, -1.0)
    with backend.on_device("cpu"):
        expr = lowered(fn)
    used = {name: host[name] for name in fn.__code__.co_varnames[:fn.__code__.co_argcount]}
    expected = numexpr.evaluate(expr.text, local_dict=used, optimization="none")      # as fused.evaluate runs it
    got = fused.evaluate(expr, {k: device.asarray(v) for k, v in used.items()})
    if fn in ARITHMETIC:                          # the same products in the same order: the same bits
        np.testing.assert_array_equal(device.asnumpy(got), expected)
    else:                                           # a library's pow and functions round their own way
        np.testing.assert_allclose(device.asnumpy(got), expected, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("name", test_fused.ELEMENTWISE)
def test_every_fused_vjp_of_the_table_equals_the_op_by_op_one(device, monkeypatch, name):
    prim, entry = TABLE[name], FUSED_RULES[name]
    monkeypatch.setattr(test_fused, "N", N)
    args = tuple(device.asarray(a) for a in test_fused.arguments(prim))
    ans = prim.impl(*args) if prim.needs_ans else None
    g = device.asarray(np.random.default_rng(5).uniform(-1.0, 1.0, N))
    calls, fused_any = device.KERNEL_CALLS[0], False
    for pos, rule in enumerate(prim.vjps):
        if rule is None:
            continue
        plain = rule(g, ans, *test_fused.saved(prim, args))
        got = entry.vjps[pos](g, ans, *test_fused.saved(prim, args))
        assert got.__class__ is device.ndarray
        np.testing.assert_allclose(device.asnumpy(got), device.asnumpy(plain), rtol=1e-14, atol=1e-300)
        fused_any = fused_any or any(entry.vjps[pos].kernels.values())
    if name in test_fused.MUST_FUSE | test_fused.NUMPY_LOOPED:
        assert fused_any and device.KERNEL_CALLS[0] > calls, f"{name}'s VJP did not run as a device kernel"
    if name in test_fused.NOT_WORTH_IT:
        assert device.KERNEL_CALLS[0] == calls


def test_an_untranslatable_expression_falls_back_to_the_rule(device, monkeypatch):
    monkeypatch.delitem(device_kernels.C_FUNCTIONS, "cos")          # sin's VJP, g * cos(x), has no kernel now
    x = device.asarray(np.linspace(0.1, 1.0, N))
    g = device.asarray(np.ones(N))
    calls = device.KERNEL_CALLS[0]
    got = FUSED_RULES["sin"].vjps[0](g, None, x)
    np.testing.assert_allclose(device.asnumpy(got), np.cos(np.linspace(0.1, 1.0, N)), rtol=1e-15)
    assert device.KERNEL_CALLS[0] == calls
    assert list(device_kernels.KERNELS.values()) == [None]            # refused once, remembered
    assert fused.evaluate(fused.Expression(("arctan2({}, {})", "a0", "g")), {"a0": x, "g": g}) is None


def test_float32_keeps_the_op_by_op_path(device):
    x = device.asarray(np.linspace(0.1, 1.0, N, dtype=np.float32))
    got = FUSED_RULES["sin"].vjps[0](device.asarray(np.ones(N, dtype=np.float32)), None, x)
    assert got.dtype == np.float32 and not device_kernels.KERNELS


def test_a_gradient_is_the_same_fused_and_op_by_op(device, monkeypatch):
    source = "sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0))"
    x = np.linspace(-2, 2, 2 * N)
    calls = device.KERNEL_CALLS[0]
    on = api.grad(source, at={"x": x}, device="gpu").gradient["x"]
    assert device.KERNEL_CALLS[0] > calls + 5
    monkeypatch.setattr(fused, "FUSE_MIN_ELEMENTS", 10 ** 12)
    off = api.grad(source, at={"x": x}, device="gpu").gradient["x"]
    np.testing.assert_allclose(on, off, rtol=1e-13, atol=0)


def table_expressions():
    """Every elementwise rule's traced expression (traced on numpy, as fused.py traces)."""
    out = []
    with backend.on_device("cpu"):
        for name in test_fused.ELEMENTWISE:
            out.extend(rule_expressions(TABLE[name]))
    return out


def rule_expressions(prim):
    out = []
    args = test_fused.arguments(prim)
    ans = prim.impl(*args) if prim.needs_ans else None
    for rule in prim.vjps:
        expr = None if rule is None else fused.trace(rule, np.ones(args[0].shape), ans, test_fused.saved(prim, args))
        if expr is not None:
            out.append(expr)
    return out


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler to check the kernels' syntax")
def test_the_c_of_every_table_kernel_compiles(tmp_path):
    """A C++ compiler (CUDA C is C++) takes every kernel body the table gives, as a function of
    double parameters: the real GPU is not the first to read them."""
    source = ["#include <cmath>", "using namespace std;"]
    for i, expr in enumerate(table_expressions()):
        params, _, operation = device_kernels.translate(expr.tree, {n: "float64" for n in ("g", "ans", "a0", "a1")})
        args = ", ".join(f"double {n}" for n in params)
        source.append(f"double kernel{i}({args}) {{ double out; {operation} return out; }}")
    assert len(source) > 2 + len(test_fused.MUST_FUSE)
    (tmp_path / "kernels.cpp").write_text("\n".join(source) + "\n")
    p = subprocess.run(["g++", "-std=c++11", "-Wall", "-Werror", "-fsyntax-only", str(tmp_path / "kernels.cpp")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def test_the_stand_in_runs_c_as_c():
    env = {"x": np.array([7.0, -7.0]), "c": np.array([True, False])}
    run = strict_cuda_c.run_assignment
    np.testing.assert_array_equal(run("out = c ? 7 / 2 : -7 / 2;", env), [3, -3])    # int / int truncates
    np.testing.assert_array_equal(run("out = pow(x, 2.0) - fabs(x) * 1;", env), [42.0, 42.0])
    assert run("out = x == x < x;", env).dtype.kind == "b"      # == binds looser than <
    for bad in ("out = gamma(x);", "out = y;", "out = x && c;", "out = (double) x;", "out = 1.0f * x;",
                "x = 1.0;", "out = x; out = x;"):
        with pytest.raises((SyntaxError, NameError, TypeError)):
            run(bad, env)


def test_the_stand_in_refuses_what_cupy_refuses(standin_gpu):
    with pytest.raises(TypeError):
        standin_gpu.sin(FusionRecorder().leaf("a0", (3,)))    # cupy's ufuncs take no foreign objects (a probe)
    with pytest.raises(ValueError, match="--fmad=false"):          # a*b + c would be one FMA on the device
        standin_gpu.ElementwiseKernel("float64 x", "float64 out", "out = x * 2.0;", "twice")
    kernel = standin_gpu.ElementwiseKernel("float64 x", "float64 out", "out = x * 2.0;", "twice",
                                           options=("--fmad=false",))
    with pytest.raises(TypeError):
        kernel(np.ones(3))                                         # a host array
    with pytest.raises(TypeError):
        kernel(standin_gpu.asarray(np.ones(3, dtype=np.float32)))  # not the declared dtype
    assert kernel(2.0).get() == 4.0


def test_kernels_are_compiled_without_contracting_products_into_fmas(device):
    """NVRTC contracts a*b + c into one fused multiply-add (rounded once) unless told
    --fmad=false: numpy, the interpreter's reference, rounds the product and the sum apart. The
    options reach the compile (cupy.ElementwiseKernel's `options`, passed to NVRTC; the stand-in
    refuses a kernel without it), and the kernel gives numpy's bits (0.1 * 10.0 - 1.0 is
    5.55e-17 rounded once as an FMA, 0.0 rounded twice as numpy does)."""
    a, b, c = np.array([0.1]), np.array([10.0]), np.array([-1.0])
    with backend.on_device("cpu"):
        expr = lowered(lambda a0, a1, g: a0 * a1 + g)
    got = fused.evaluate(expr, {"a0": device.asarray(a), "a1": device.asarray(b), "g": device.asarray(c)})
    np.testing.assert_array_equal(device.asnumpy(got), a * b + c)
    [kernel] = [k for k in device_kernels.KERNELS.values() if k is not None]
    assert kernel.function.options == ("--fmad=false",)
