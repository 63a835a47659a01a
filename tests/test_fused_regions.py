"""Issue 11, fused regions (core/regions.py), made of an interpreted run's pending values by the
Program pass's rules (core/lazy.py, issue 28 item 4): elementwise table primitives over large
float64 arrays run as a few numexpr kernels, and the run's values and gradients are, to the bit,
those of the same run with no region (lazy.ENABLED off); anything else (small arrays, boxes of
other levels, a nan) runs op by op, with the same notes and provenance."""
import re
import subprocess
import sys

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.diff import reverse
from autodiff.engine.core import backend, fused, lazy, region_plan, regions
from autodiff.engine.core import tape as tape_module
from autodiff.engine.core.program import Program
from autodiff.engine.core.tape import Entry
from autodiff.engine.core.rule_tracer import PROBES
from autodiff.engine.core.rules import TABLE
from devices import host

N = fused.FUSE_MIN_ELEMENTS
CHAIN = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
         " + sigmoid(x) * x)")                      # benchmarks/_reference_arrays.CHAIN
X = np.linspace(0.2, 0.9, N)
Y = np.linspace(1.3, 0.4, N)


@pytest.fixture
def fused_runs(monkeypatch):
    """The regions' runs: (plan, fused or not) per evaluation."""
    runs = []
    run = regions.run

    def spy(plan, values):
        out = run(plan, values)
        runs.append((plan, out is not None))
        return out
    monkeypatch.setattr(regions, "run", spy)
    return runs


def unfused(fn, *args, **kwargs):
    """fn's answer with no region fused (core/lazy.py off: every equation recorded at once), the
    process's Functions (api.compiled) set aside meanwhile."""
    functions = dict(api._COMPILED)
    api._COMPILED.clear()
    lazy.ENABLED[0] = False
    try:
        return fn(*args, **kwargs)
    finally:
        lazy.ENABLED[0] = True
        api._COMPILED.clear()
        api._COMPILED.update(functions)


def same(a, b) -> bool:
    a, b = np.asarray(host(a)), np.asarray(host(b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def agree(source, at, fused_runs, wrt=None, must_fuse=True):
    """Values and gradients with regions are those without, to the bit."""
    on = api.grad(source, at=at, wrt=wrt)
    assert not must_fuse or any(ok for _, ok in fused_runs), f"{source}: no region was fused"
    off = unfused(api.grad, source, at=at, wrt=wrt)
    assert same(on.value, off.value), source
    for name in off.gradient:
        assert same(on.gradient[name], off.gradient[name]), (source, name)
    return on, off


def builtin_cases():
    """Every table entry a region may hold that the language calls by name, in a region."""
    for name, prim in sorted(TABLE.items()):
        if not region_plan.eligible(prim) or not prim.builtin:
            continue
        inner = "x + 1.5" if name in ("arccosh",) else "x * 0.5 + 0.3"
        call = f"{prim.builtin}({inner})" if prim.arity == 1 else f"{prim.builtin}({inner}, y)"
        yield pytest.param(f"sum({call} * x + y * {call})", id=name)


@pytest.mark.parametrize("source", list(builtin_cases()))
def test_every_elementwise_builtin_agrees_in_a_region(source, fused_runs):
    agree(source, {"x": X, "y": Y}, fused_runs, must_fuse=False)
    assert fused_runs


@pytest.mark.parametrize("source", ["sum(x * y - x / y + (-x) * 2.0)", "sum((x * y + 1.0) ** 2.0 + x ** y * y)",
                                    "sum(exp(x) * sin(y) / (x + y) - tanh(x * y))"])
def test_the_operators_fuse_and_agree(source, fused_runs):
    agree(source, {"x": X, "y": Y}, fused_runs)


def test_the_chain_fuses_to_the_bit(fused_runs):
    # the 20 operations, one region (tanh, exp, sigmoid's exp and sqrt numpy's loops, sin and cos
    # where the probe says so; sqrt's kink guarded). Before sigmoid's `fused_bits` were stated
    # (numpy's loop for its exp, IEEE arithmetic around it), it was no region's: 19 operations
    x = np.linspace(-2, 2, 2 * N)
    agree(CHAIN, {"x": x}, fused_runs)
    assert [(plan.program.operations(), ok) for plan, ok in fused_runs] == [(20, True)]
    value = api.evaluate(CHAIN, at={"x": x}).value
    assert same(value, unfused(api.evaluate, CHAIN, at={"x": x}).value)


def test_broadcast_leaves(fused_runs):
    a, b = X[:512].reshape(-1, 1), Y[:256].reshape(1, -1)
    agree("sum(sin(a) * b + a * b * 2.0 - exp(b) / a)", {"a": a, "b": b}, fused_runs)
    agree("sum(sin(x) * s + x * s * s - s)", {"x": X, "s": 0.7}, fused_runs)


def test_a_float_variable_is_baked_and_a_traced_float_differentiated(tmp_path, fused_runs):
    prog = tmp_path / "p.py"
    prog.write_text("def f(x, s):\n    t = 0.0\n    k = 1.0\n    while k < 4.0:\n"
                    "        t = t + sum(sin(x * k) * s + x * k * s)\n        k = k + 1.0\n    return t\n")
    on = api.grad(None, at={"x": X, "s": 0.3}, target=api.load(str(prog)))
    off = unfused(api.grad, None, at={"x": X, "s": 0.3}, target=api.load(str(prog)))
    assert sum(ok for _, ok in fused_runs) == 3
    for name in ("x", "s"):
        assert same(on.gradient[name], off.gradient[name])


def test_mixed_code_under_while_and_if(tmp_path, fused_runs):
    prog = tmp_path / "p.py"
    prog.write_text(
        "def f(x):\n"
        "    y = sin(x) * cos(x) + x * 0.5\n"
        "    i = 0\n"
        "    while i < 3:\n"
        "        if i == 1:\n"
        "            y = tanh(y) * x + exp(-x * x)\n"
        "        else:\n"
        "            y = y * 0.9 + sqrt(x * x + 1.0) - y * y\n"
        "        i = i + 1\n"
        "    return sum(y * y) + sum(x[1:] * x[:-1]) + max(y)\n")
    target = api.load(str(prog))
    on = api.grad(None, at={"x": X}, target=target)
    off = unfused(api.grad, None, at={"x": X}, target=api.load(str(prog)))
    assert sum(ok for _, ok in fused_runs) >= 2          # regions across the statements
    assert same(on.value, off.value) and same(on.gradient["x"], off.gradient["x"])


def test_small_arrays_and_scalars_run_op_by_op(fused_runs):
    api.grad("sum(sin(x) * cos(x) + x)", at={"x": np.linspace(0, 1, 100)})
    api.grad("sin(x) * cos(x) + x", at={"x": 0.5})
    assert not any(ok for _, ok in fused_runs)


def test_a_large_nan_gives_the_unfused_notes_and_provenance(fused_runs):
    x = np.linspace(-1.0, 1.0, N)
    on = api.grad("sum(log(x + 0.5) * x + x * x)", at={"x": x})
    off = unfused(api.grad, "sum(log(x + 0.5) * x + x * x)", at={"x": x})
    assert not any(ok for _, ok in fused_runs)               # the region ran op by op
    assert on.nonfinite == off.nonfinite and on.nonfinite
    assert on.kinks == off.kinks
    np.testing.assert_array_equal(on.gradient["x"], off.gradient["x"])


def test_sqrt_at_zero_keeps_its_kink_note(fused_runs):
    x = np.linspace(-1.0, 1.0, N + 1)                        # holds 0.0
    on = api.grad("sum(sqrt(x * x) * 2.0 + x * x)", at={"x": x})
    off = unfused(api.grad, "sum(sqrt(x * x) * 2.0 + x * x)", at={"x": x})
    assert on.kinks == off.kinks and on.kinks
    assert on.nonfinite == off.nonfinite
    value = api.evaluate("sum(sqrt(x * x) * 2.0 + x * x)", at={"x": x})
    assert value.kinks == off.kinks


def test_a_non_finite_gradient_is_taken_op_by_op(fused_runs):
    x = np.linspace(0.0, 1.0, N)                             # x ** 0.5 at 0: the gradient is inf
    on, off = agree("sum(x * x * 3.0 + x ** 0.5 * 2.0)", {"x": x}, fused_runs)
    assert np.isinf(on.gradient["x"][0]) and on.nonfinite == off.nonfinite


def test_boxes_of_other_levels_take_the_unfused_path(tmp_path, fused_runs):
    prog = tmp_path / "p.py"
    prog.write_text("def f(x):\n    return sum(sin(x) * cos(x) * x + exp(-x * x))\n" \
             "def g(x):\n    v, t = jvp(f, x, ones_like(x))\n    w, h = jvp(grad(f), x, ones_like(x))\n" \
             "    return t + sum(h)\n")
    # a value alone watches x on a values-only tape (diff/reverse.py's evaluate): the jvps' primals
    # and tangents are values of its level (their Duals' parts), which fuse; the Duals themselves,
    # boxes of another level, are never pending (core/lazy.py's defer): the op-by-op run's bits
    on = api.evaluate(None, at={"x": X}, target=api.load(str(prog), fn="g")).value
    assert fused_runs and all(ok for _, ok in fused_runs)
    assert same(on, unfused(api.evaluate, None, at={"x": X}, target=api.load(str(prog), fn="g")).value)
    h = api.hessian("sum(sin(x) * cos(x) * x + exp(-x * x))", at={"x": X[:8]})
    assert h.hessian["x"]["x"].shape == (8, 8)


def test_graph_tapes_see_every_op():
    r = api.grad("sum(sin(x) * cos(x) + x * x)", at={"x": X}, keep_tape=True)
    assert r.tape_length >= 6


def test_errors_are_located_as_unfused():
    from autodiff.parser.errors import SourceError
    x, y = np.linspace(0, 1, N), np.linspace(0, 1, N + 1)
    messages = []
    for run in (api.grad, lambda *a, **k: unfused(api.grad, *a, **k)):
        with pytest.raises(SourceError) as e:
            run("sum(sin(x) * cos(x) + x * y)", at={"x": x, "y": y})
        messages.append((e.value.message, e.value.span))
    assert messages[0] == messages[1]
    a, b = np.ones((400, 1)), np.ones((1, 400))                 # 160,000 elements over a limit of 100,000
    for run in (api.evaluate, lambda *a, **k: unfused(api.evaluate, *a, **k)):
        with pytest.raises(SourceError) as e:
            run("sum(sin(a) * b + a * b)", at={"a": a, "b": b}, limits=api.Limits(elements=100_000))
        messages.append((e.value.message, e.value.span))
    assert messages[2] == messages[3]


def test_a_traced_number_at_a_kink_is_noted_every_run(fused_runs):
    source = "sum(sqrt(c) * x + x * x + sin(x))"
    for _ in range(2):
        on = api.grad(source, at={"x": X, "c": 0.0})
        off = unfused(api.grad, source, at={"x": X, "c": 0.0})
        assert on.kinks == off.kinks and on.kinks
        assert same(on.gradient["x"], off.gradient["x"])
        assert on.gradient["c"] == off.gradient["c"]
    on = api.grad(source, at={"x": X, "c": 2.0})
    assert fused_runs[-1][1] and not on.kinks                # away from the kink: fused


def test_loops_over_small_arrays_stay_op_by_op(fused_runs):
    prog = "sum(sin(v) * cos(v) + v * v)"
    for _ in range(3):
        api.grad(prog, at={"v": np.linspace(0, 1, 8)})
    assert not any(ok for _, ok in fused_runs)


@pytest.mark.parametrize("method", ["reverse", "forward"])
def test_higher_derivatives_through_a_large_region(method, fused_runs):
    source = "sum(sin(x * A) * A + exp(-x * A) * A * x)"
    on = api.derivatives(source, at={"x": 0.3, "A": X}, order=3, method=method, wrt="x")
    off = unfused(api.derivatives, source, at={"x": 0.3, "A": X}, order=3, method=method, wrt="x")
    # the outermost tape's values are arrays: it fuses (reverse); a Dual is no region's leaf
    assert same(on.derivatives, off.derivatives)
    assert any(ok for _, ok in fused_runs) == (method == "reverse")
    before = len(fused_runs)
    first = api.grad(source, at={"x": 0.3, "A": X}, wrt=["x"]).gradient["x"]
    assert fused_runs[before][1]                              # one level, a traced number: fused
    np.testing.assert_allclose(first, off.derivatives[0], rtol=1e-12)


def test_kernels_stay_bounded_on_a_long_region(fused_runs):
    horner = "x"
    for k in range(30):                                        # 60 operations in one region
        horner = f"({horner} * x + 0.{k + 1})"
    agree(f"sum({horner})", {"x": X}, fused_runs)
    plan = next(plan for plan, ok in fused_runs if ok)
    kernels = next(k for k in plan.compiled.values() if k is not None)
    assert all(len(kernel.expr.text) < 2000 for kernel in kernels.forward + kernels.reverse if kernel.expr)


def test_pooled_buffers_never_hold_a_result_or_an_input(fused_runs):
    from autodiff.engine.core import buffer_pool
    x = np.linspace(-2, 2, 2 * N)
    copy = x.copy()
    grad = lambda: reverse.grad(CHAIN, {"x": x}).gradient["x"]     # noqa: E731 (interpreted: its regions)
    gradient = grad()
    value = api.evaluate("exp(-x * x) * sin(x) + x * cos(x)", at={"x": x}).value
    kept = gradient.copy(), value.copy()
    for _ in range(3):
        grad()
        api.evaluate("exp(-x * x) * sin(x) + x * cos(x)", at={"x": x})
    assert all(ok for _, ok in fused_runs) and len(fused_runs) >= 4      # the four gradients' at least
    np.testing.assert_array_equal(gradient, kept[0])
    np.testing.assert_array_equal(value, kept[1])
    np.testing.assert_array_equal(x, copy)
    pooled = [b for buffers in buffer_pool.POOL.values() for b in buffers]
    count, total = buffer_pool.retained()
    assert count <= buffer_pool.MAX_POOLED and total <= buffer_pool.MAX_POOLED_BYTES
    assert not any(np.shares_memory(b, a) for b in pooled for a in (x, gradient, value))


def test_exact_identities_make_no_steps():
    from autodiff.engine.core.fusion import traced
    from autodiff.engine.core.region_program import RegionBuilder
    program = RegionBuilder()
    leaves = [program.symbol("a0", (4,)), program.symbol("a1", (4,))]

    def step(fn):                                           # fn's step, base = a0 * 0.5 + 1.0, other = a1
        return traced(program, lambda x, other: fn(x * 0.5 + 1.0, other), leaves).expr
    base = step(lambda base, other: base)
    assert step(lambda base, other: base ** 1.0) == base      # pow's VJP at 2.0: exact, no pow step
    assert step(lambda base, other: base ** 2.0) != base
    assert step(lambda base, other: (-base) * (-other)) == step(lambda base, other: base * other)
    assert step(lambda base, other: (-base) / (-other)) == step(lambda base, other: base / other)
    assert step(lambda base, other: (-base) * other) != step(lambda base, other: base * other)
    # a strong zero's mask on -x still sees x as the product's factor once (-x) * (-y) is x * y
    masked = step(lambda base, other: np.where((-base) == 0.0, 0.0, ((-base) * (-other))))
    assert masked == step(lambda base, other: base * other)



def test_scalar_code_does_not_load_the_kernel_machinery():
    # regions are found when an expression compiles; their kernels load only for arrays
    code = ("import sys, numpy as np; from autodiff.engine import api; api.grad('x*x*x + 2*x + 1', at={'x': 2.0}); "
            "print('autodiff.engine.core.regions' in sys.modules); api.grad('sum(x*x*x + 2*x + 1)', "
            "at={'x': np.ones(1 << 17)}); print('autodiff.engine.core.regions' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_a_regions_plan_is_a_program_and_its_vjp_runs_the_one_reverse_sweep(fused_runs, monkeypatch):
    """issue 28 items 1-2: a region's plan is a Program fragment of the tape's own equations (no
    second list of steps), and its op-by-op VJP, traced over probes for its kernels and run on the
    real values where an adjoint is not finite, is core/tape.py's one reverse sweep over them."""
    swept = []
    loop = tape_module._sweep

    def counted(steps, adj, dropped, top, bottom, free, values, *rest):
        swept.append(([steps[i] for i in range(top, bottom - 1, -1)], values))
        return loop(steps, adj, dropped, top, bottom, free, values, *rest)
    monkeypatch.setattr(tape_module, "_sweep", counted)
    monkeypatch.setattr(regions, "KERNELS", {})              # traced anew, here
    x = np.linspace(0.0, 1.0, N)                             # arcsin' is inf at 1: op by op
    on = api.grad("sum(arcsin(x) * x + x * x)", at={"x": x})
    plan = fused_runs[0][0]
    program = plan.program
    # a leaf per read of x (core/lazy.py hands each read's adjoint over where the sweep adds it)
    assert program.__class__ is Program and (program.leaves, program.output) == (4, 7)
    assert all(e.__class__ is Entry for e in program.equations)
    assert [(e.prim, e.args, e.parents) for e in program.body()] == [
        (TABLE["arcsin"], (None,), ((0, 0),)), (TABLE["mul"], (None, None), ((0, 4), (1, 1))),
        (TABLE["mul"], (None, None), ((0, 2), (1, 3))), (TABLE["add"], (None, None), ((0, 5), (1, 6)))]
    regional = [(values, [s.run[::7] for s in steps if s.__class__ is tape_module.PlannedStep])
                for steps, values in swept if values is not None and len(values) == len(program.equations)]
    # once over the probes (the kernels' trace), once over the real values (op by op): a plan
    # of each equation (its traced arguments and span)
    assert [plans for _, plans in regional] == [[(e.parents, e.span) for e in program.body()[::-1]]] * 2
    assert [type(values[0]) in PROBES for values, _ in regional] == [True, False]
    off = unfused(api.grad, "sum(arcsin(x) * x + x * x)", at={"x": x})
    assert on.gradient["x"].tobytes() == off.gradient["x"].tobytes()


def test_a_region_swept_op_by_op_adds_its_adjoints_as_the_tape_does(fused_runs, monkeypatch):
    """issue 28 item 2: an adjoint that is not finite sends the region's VJP op by op
    (regions.replay_reverse); its adjoints add through core/accumulate, as core/tape.sweep's do."""
    added = []
    accumulate = tape_module.accumulate

    def counting(prev, contrib):
        if type(prev) not in PROBES:                         # not the probes of the region's trace
            added.append(prev.shape)
        return accumulate(prev, contrib)
    monkeypatch.setattr(tape_module, "accumulate", counting)
    x = np.linspace(0.0, 1.0, N)                             # arcsin' is inf at 1
    on = api.grad("sum(arcsin(x) * x + x * x)", at={"x": x})
    assert any(ok for _, ok in fused_runs) and added and all(shape == (N,) for shape in added)
    off = unfused(api.grad, "sum(arcsin(x) * x + x * x)", at={"x": x})
    assert on.gradient["x"].tobytes() == off.gradient["x"].tobytes()
    assert on.kinks == off.kinks and on.nonfinite == off.nonfinite


# ---- issue 32 item 2: complex128 regions, to the interpreter's bits ----------------------------

def complex_point(n=100_000, seed=32):
    rng = np.random.default_rng(seed)
    return {"z": rng.normal(size=n) + 1j * rng.normal(size=n), "w": rng.normal(size=n) + 1j * rng.normal(size=n),
            "x": rng.normal(size=n)}


ON_DEVICE = backend.xp() is not backend.np()      # the strict stand-in (AUTODIFF_TEST_DEVICE=standin)


def declined_on_device(fused_runs):
    """On the device no complex region fuses (its kernels are CUDA C over doubles), with that reason."""
    if ON_DEVICE:
        assert fused_runs and not any(ok for _, ok in fused_runs)
        assert fused.DECLINED[regions.region_name(fused_runs[0][0])] == f"Unfusable: {fused.DEVICE_COMPLEX}"


@pytest.mark.parametrize("source", ["sum(abs(exp(1j * x) * z + z * z) ** 2)", "sum(abs(exp(w * x) * z + z * z) ** 2)",
                                    "sum(real(exp(z * w) + z * conj(z) - sin(w) / z) * x)",
                                    "sum(real(z * w + conj(z) - z) * x)",
                                    "sum(imag(tanh(z) * w) + real(cos(z) - sqrt(w)))"])
def test_a_complex_region_fuses_and_gives_the_interpreters_bits(source, fused_runs):
    """A region over complex128 arrays runs fused (numexpr where its complex kernel is numpy's
    bits: + - conj real imag ==, numpy's own loop for a product, quotient or function), and its
    value and gradient are the op-by-op run's to the bit."""
    at = {name: v for name, v in complex_point().items() if re.search(rf"\b{name}\b", source)}
    fused.DECLINED.clear()
    on = api.grad(source, at=at)
    declined_on_device(fused_runs)
    if not ON_DEVICE:
        assert fused_runs and all(ok for _, ok in fused_runs), fused.DECLINED
        assert not any(what.startswith("the region") for what in fused.DECLINED)
    off = unfused(api.grad, source, at=at)
    assert same(on.value, off.value)
    for name in at:
        assert same(on.gradient[name], off.gradient[name]), name


def test_a_value_alone_fuses_to_numpys_op_by_op_bits(fused_runs):
    """A value asked for alone (api.evaluate) watches its large inputs on a values-only tape
    (diff/reverse.py): its equations are pending and fuse (forward kernels alone), the bits of
    the op-by-op run (before: no tape, nothing pending, every op one by one)."""
    from autodiff.engine.core.backend import np as host_module, xp
    at = {name: v for name, v in complex_point().items() if name in "zw"}
    source = "exp(z) * w + conj(z) - z * z / w"
    on = api.evaluate(source, at=at).value
    assert fused_runs and host(on).dtype == np.complex128
    assert all(ok for _, ok in fused_runs) == (xp() is host_module())      # (complex on the device: op by op)
    assert same(on, unfused(api.evaluate, source, at=at).value)


def test_complex64_values_are_never_pending(fused_runs):
    """numexpr has no complex64 kernels (and complex128's round apart from numpy's complex64
    loops): no complex64 equation is pending, so none is in a region; the bits are the op-by-op run's."""
    at = {name: v.astype(np.complex64) for name, v in complex_point().items() if name in "zw"}
    on = api.grad("sum(real(z * w + conj(z) - z))", at=at, dtype_name="float32")
    assert host(on.gradient["z"]).dtype == np.complex64
    assert not fused_runs
    off = unfused(api.grad, "sum(real(z * w + conj(z) - z))", at=at, dtype_name="float32")
    assert all(same(on.gradient[name], off.gradient[name]) for name in at)


def test_scalar_code_builds_no_region_plan(monkeypatch):
    """A region found when an expression compiles makes its plan (a Program of tape Entries) only
    when arrays first reach it: scalar code (n-th derivatives compile at every call) builds none.
    Building them at compile time cost `derivative` 1.3% more executed lines (measured)."""
    made = []
    plan = region_plan.PlanBuilder.plan
    monkeypatch.setattr(region_plan.PlanBuilder, "plan", lambda self, span: made.append(span) or plan(self, span))
    assert api.derivatives("x**7 - 2*x**3 + x", at={"x": 0.7}, order=3).derivatives[0] == pytest.approx(
        7 * 0.7 ** 6 - 6 * 0.7 ** 2 + 1)
    assert made == []
    api.grad("sum(sin(x) * x * x + x)", at={"x": np.linspace(0, 1, 1 << 17)})
    assert len(made) == 1
