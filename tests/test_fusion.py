"""Issue 28 item 4, one tracer of the rules, lowerings apart (engine/core/fusion.py): the fused VJP
kernels and the fused regions take each rule body from the one rule tracer (core/rule_tracer.py),
recorded as equations and lowered into the fused IR; numexpr's text and the CUDA source are both
printed from that IR's trees (no stand-in class steers the rules, no text is read back)."""
import numexpr
import numpy as np
import pytest

from autodiff.engine.core import device_kernels, fused, fusion, region_plan, region_program, regions, rule_tracer
from autodiff.engine.core.backend import on_device
from autodiff.engine.core.fusion import Fused, Tree, traced
from autodiff.engine.core.region_program import RegionBuilder
from autodiff.engine.core.rules import TABLE

N = fused.FUSE_MIN_ELEMENTS


@pytest.fixture
def recorded(monkeypatch):
    """The rules each run of the one tracer's recorder records."""
    calls = []
    record = rule_tracer.Recorder.record

    def counting(self, fn, args, kwargs):
        calls.append(fn)
        return record(self, fn, args, kwargs)
    monkeypatch.setattr(rule_tracer.Recorder, "record", counting)
    return calls


def test_a_fused_vjp_is_recorded_by_the_one_tracer(recorded):
    rule = TABLE["tan"].vjps[0]
    x = np.linspace(0.0, 1.0, N)
    expr = fused.trace(rule, np.ones(N), np.tan(x), (x,))
    assert recorded == [rule]
    assert fused.numexpr_text(fused.unmasked(expr.tree)) == "(g * (1.0 + (ans * ans)))"
    # sin's, g * cos(x): where cos is a function regions leave to numpy's loop (this process's
    # probe: region_program.NUMPY_LOOPS), numpy's ops run it; else a kernel
    sin_kernel = fused.trace(TABLE["sin"].vjps[0], np.ones(N), None, (x,))
    assert (sin_kernel is None) == ("cos" in region_program.NUMPY_LOOPS)
    assert not hasattr(fused, "Symbol") and not hasattr(region_program, "Step")


def test_a_region_is_recorded_by_the_one_tracer(recorded, monkeypatch):
    monkeypatch.setattr(regions, "KERNELS", {})
    builder = region_plan.PlanBuilder()
    x, y = builder.leaf(), builder.leaf()
    t = builder.add("tanh", (None,), ((0, x),), None)
    builder.add("mul", (None, None), ((0, t), (1, y)), None)
    plan = builder.plan(None)
    compiled = regions.compile_region(plan, (("array", True, False), ("array", True, False)), (N,), True)
    assert compiled is not None and len(recorded) == 1      # forward and reverse: one recording
    assert set(compiled.adjoints) == {0, 1}


def test_numexpr_and_cuda_are_printed_from_one_tree():
    """Every fused VJP of the table: its numexpr text is its tree printed, and the CUDA source is
    the same tree printed as C (the device kernels have no reader of text)."""
    assert not any(hasattr(device_kernels, name) for name in ("Reader", "tokenize", "TOKEN"))
    printed = 0
    with on_device("cpu"):                       # (the device's own kernels: tests/test_device_kernels.py)
        for prim in TABLE.values():
            printed += printed_kernels(prim)
    assert printed >= 10


def printed_kernels(prim) -> int:
    """How many of the entry's VJP kernels (one-argument entries) print as numexpr and as C."""
    if not (prim.elementwise and isinstance(prim.vjps, tuple)) or prim.arity != 1:
        return 0
    x = np.linspace(0.25, 0.75, N)
    ans = prim.impl(x) if prim.needs_ans else None
    printed = 0
    for rule in prim.vjps:
        expr = None if rule is None else fused.trace(rule, np.ones(N), ans, (x,))
        if expr is None:
            continue
        assert expr.text == fused.numexpr_text(expr.tree)
        params, _, operation = device_kernels.translate(expr.tree, {n: "float64" for n in ("g", "ans", "a0")})
        assert set(params) <= {"g", "ans", "a0"} and operation.startswith("out = ")
        printed += 1
    return printed


def test_a_lowered_kernel_gives_numpys_bits():
    rng = np.random.default_rng(28)
    g, a0 = rng.uniform(-1, 1, N), rng.uniform(-3, 3, N)
    a0[:4] = (0.0, -0.0, np.inf, np.nan)

    def fn(g, a0):
        return np.where(a0 > 0.5, g * (1.0 - a0 * a0), -g / (a0 * a0 + 2.0)) ** 2.0
    expr = fused.Expression(traced(Tree, fn, [Fused("g", (N,)), Fused("a0", (N,))]).expr)
    chosen = "where((a0 > 0.5), (g * (1.0 - (a0 * a0))), ((-g) / ((a0 * a0) + 2.0)))"
    assert expr.text == f"({chosen} * {chosen})"             # ** 2.0 is numpy's x * x
    got = numexpr.evaluate(expr.text, local_dict={"g": g, "a0": a0}, optimization="none")
    with np.errstate(all="ignore"):
        assert got.tobytes() == fn(g, a0).tobytes()


def test_the_examples_are_miniatures_and_only_shapes_are_facts():
    recorder = fusion.FusionRecorder()
    probe = recorder.leaf("a0", (10 ** 7, 1))
    assert probe.shape == (2, 1) and probe.ndim == 2 and probe.example.nbytes == 16
    for fact in ("size", "dtype", "strides"):
        with pytest.raises(AttributeError):
            getattr(probe, fact)


def test_a_branch_on_values_is_refused_and_an_any_is_a_guard():
    with pytest.raises(fused.Unfusable, match="branches on values"):
        traced(Tree, lambda x: x if (x > 0.0).all() else -x, [Fused("a0", (N,))])
    with pytest.raises(fused.Unfusable, match="branches on values"):
        traced(Tree, TABLE["sqrt"].impl, [Fused("a0", (N,))])         # a single kernel has no guards
    program = RegionBuilder()
    out = traced(program, TABLE["sqrt"].impl, [program.symbol("a0", (N,))])
    assert program.steps[out.expr][0] == "sqrt({})"
    assert [program.steps[g.expr][:2] for g in program.guards] == [("({} == {})", ("a0", "0.0"))]
