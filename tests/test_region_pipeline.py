"""Issue 11, the chain's pipelines and guard checks, which must change no bit: an array function
and the exact arithmetic that makes its argument in one pass (core/region_pipeline.py), and
sqrt's guard as a zero check of its argument instead of where(t == 0, nan, out) in the output's
kernel. The fused results are compared bit for bit with the schedule without them, around the
threads' chunk boundaries, on odd sizes, strided, broadcast, 0-d and float32 inputs."""
import random

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import region_kernels, region_pipeline, regions
from autodiff.engine.core.fused import Expression
from autodiff.engine.diff import reverse
from autodiff.engine.core.fusion import traced
from autodiff.engine.core.region_program import Kernel, RegionBuilder, render
from autodiff.engine.core.region_threads import CHUNK_ALIGN, MIN_SPLIT_ELEMENTS
from test_region_schedule import assert_bit_identical, fused_count, random_expression
from test_region_speedups import four_threads      # noqa: F401 (a fixture)
from test_fused_regions import CHAIN       # benchmarks/_reference_arrays.CHAIN

SIZES = [MIN_SPLIT_ELEMENTS - 1, MIN_SPLIT_ELEMENTS, MIN_SPLIT_ELEMENTS + 1, 4 * CHUNK_ALIGN * 9 + 1,
         MIN_SPLIT_ELEMENTS + 4 * CHUNK_ALIGN + 7]


def without_pipelines_and_checks(monkeypatch):
    """The schedule as it was: every function's argument a numexpr kernel, guards as where()."""
    monkeypatch.setattr(regions, "KERNELS", {})
    monkeypatch.setattr(regions, "pipelined", lambda program, kernels, kept: kernels)
    monkeypatch.setattr(regions, "zero_tested", lambda program, condition: None)


def compared(sources, at, monkeypatch):
    """Each source's value and gradient, and its value alone, with and without the changes:
    bit-identical; returns how many region runs fused (with them, without them; the second
    set of calls on a source replays its recorded trace, so the counts differ)."""
    monkeypatch.setattr(regions, "KERNELS", {})
    counted = fused_count(monkeypatch)
    new = results(sources, at)
    fused_new = sum(counted)
    without_pipelines_and_checks(monkeypatch)
    counted.clear()
    assert_bit_identical(new, results(sources, at))
    return fused_new, sum(counted)


def results(sources, at):
    """Each source's value and gradient interpreted (a Function's second call would record a
    trace, on which nothing is pending), and its value alone."""
    out = []
    for source in sources:
        found = reverse.grad(source, at)
        out.append((np.asarray(found.value), *(np.asarray(found.gradient[name]) for name in sorted(found.gradient))))
        out.append((np.asarray(api.evaluate(source, at=at).value),))
    return out


@pytest.mark.parametrize("size", SIZES)
def test_the_chain_is_bit_identical_without_pipelines(size, four_threads, monkeypatch):
    at = {"x": np.concatenate([np.linspace(-30, 30, size // 2), np.linspace(-2, 2, size - size // 2)])}
    sources = [CHAIN, CHAIN.replace("sum(", "3.0 * sum(", 1)]              # a seed of ones, and not
    fused_new, fused_old = compared(sources, at, monkeypatch)
    assert fused_new >= 2 and fused_old >= 2             # the gradients' (a value alone: op by op)


def test_the_chains_pipelines_and_check(monkeypatch):
    monkeypatch.setattr(regions, "KERNELS", {})
    reverse.grad(CHAIN, {"x": np.linspace(-2, 2, MIN_SPLIT_ELEMENTS)})
    kernels = [k for k in regions.KERNELS.values() if isinstance(k, regions.GradKernels)][0]
    pipelines = {k.function: k.argument for k in kernels.forward if k.steps}
    assert set(pipelines) == {"tanh", "exp"}             # (sigmoid, exp(-abs(x)) inside, is no region's now)
    assert pipelines["tanh"].text == "(a0 + (t0 * t1))"
    checks = [k.name for k in kernels.forward if k.check]
    assert checks == ["t10"] and kernels.forward[1 + [k.name for k in kernels.forward].index("t10")].check
    assert not any("where((t10 == 0.0)" in k.expr.text for k in kernels.forward if k.expr)


@pytest.mark.parametrize("seed", range(3))
def test_random_programs_are_bit_identical_without_pipelines(seed, four_threads, monkeypatch):
    rng = random.Random(seed)
    sources = [f"sum({random_expression(rng, 4, negations=True)} * x + y)" for _ in range(10)]
    sources += ["sum(exp(-abs(x * y)) + tanh(x * x - y) * sqrt(y * y + x * 0.5 * x))",
                "sum(sqrt(-(x * y) * (y * x) + 9.0) / exp(x - y * y) + log(abs(x) + 1.0))"]
    n = MIN_SPLIT_ELEMENTS + 2 * CHUNK_ALIGN + 3
    at = {"x": np.linspace(-1.5, 2.5, n), "y": np.linspace(2.0, -1.0, n)}
    fused_new, fused_old = compared(sources, at, monkeypatch)
    assert fused_new >= len(sources) and fused_old >= len(sources)


@pytest.mark.parametrize("case", ["strided", "broadcast", "number", "float32"])
def test_other_layouts_are_bit_identical_without_pipelines(case, four_threads, monkeypatch):
    n = 2 * MIN_SPLIT_ELEMENTS + 5
    x = np.linspace(-2.0, 2.0, 2 * n)
    at = {"strided": {"x": x[::2], "y": x[1::2]},
          # one way (a region declines leaves broadcast two ways, as the pass over a Program does)
          "broadcast": {"x": x[:420_000].reshape(600, 700), "y": x[-700:].reshape(1, 700)},
          "number": {"x": x[:n], "y": 0.75},                       # a traced number: a 0-d array
          "float32": {"x": x[:n].astype(np.float32), "y": x[n:].astype(np.float32)}}[case]
    sources = [CHAIN[:-1] + " * y)", "sum(exp(-abs(x * y)) * y + tanh(x + y * x) + sqrt(x * x + 1.0) * y)"]
    fused_new, fused_old = compared(sources, at, monkeypatch)
    assert fused_new > 0 and fused_old > 0               # (float32 inputs are taken as float64)


@pytest.mark.parametrize("where", [0, MIN_SPLIT_ELEMENTS - 1, 2 * MIN_SPLIT_ELEMENTS, 4 * MIN_SPLIT_ELEMENTS - 1])
def test_a_zero_of_sqrts_argument_anywhere_runs_op_by_op_with_its_note(where, four_threads, monkeypatch):
    monkeypatch.setattr(regions, "KERNELS", {})
    x = np.linspace(1.0, 2.0, 4 * MIN_SPLIT_ELEMENTS)
    x[where] = 0.0
    counted = fused_count(monkeypatch)
    source = "sum(sqrt(x * x) * 2.0 + x * x)"     # interpreted (a Function's replays: no kink in a region)
    found = reverse.grad(source, {"x": x})
    assert counted == [False] and found.kinks
    value = reverse.evaluate(source, {"x": x})     # a value alone: its region declines too, for its note
    assert value.kinks and counted == [False, False]
    x[where] = -0.0
    assert reverse.grad(source, {"x": x}).kinks
    x[where] = 1e-150                              # x * x is 1e-300: no zero, no note
    assert not reverse.grad(source, {"x": x}).kinks and counted[-1]


@pytest.mark.parametrize("size", [MIN_SPLIT_ELEMENTS - 1, MIN_SPLIT_ELEMENTS + 1, 4 * CHUNK_ALIGN * 9 - 1])
def test_has_zero_at_every_part_edge(size, four_threads):
    a = np.linspace(1.0, 2.0, size)
    assert not region_kernels.has_zero(a)
    for where in {0, CHUNK_ALIGN - 1, CHUNK_ALIGN, size // 4, size // 2, size - 1}:
        b = a.copy()
        b[where] = -0.0
        assert region_kernels.has_zero(b), where
    assert region_kernels.has_zero(np.zeros(())) and not region_kernels.has_zero(np.ones(()))
    assert region_kernels.has_zero(np.zeros(2 * size)[::2])
    assert not region_kernels.has_zero(np.full(size, np.nan))


def tree_of(text):
    """The tree of the fused IR whose numexpr text is `text` (the test's own reading of it)."""
    import ast
    def tree(node):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Constant):
            return repr(float(node.value))
        if isinstance(node, ast.UnaryOp):
            return ("(-{})", tree(node.operand))
        if isinstance(node, ast.Call):
            return (node.func.id + "({})", tree(node.args[0]))
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}[type(node.op)]
        return ("({} " + op + " {})", tree(node.left), tree(node.right))
    return tree(ast.parse(text, mode="eval").body)


@pytest.mark.parametrize("size", SIZES + [7])
def test_a_pipeline_kernel_has_the_bits_of_its_two_kernels(size, four_threads):
    rng = np.random.default_rng(size)
    a0, a1 = rng.standard_normal(size) * 3.0, rng.standard_normal(size)
    program = RegionBuilder()
    leaves = [program.symbol("a0", (size,)), program.symbol("a1", (size,))]
    argument = traced(program, lambda x, y: -(((x * 0.5 + 1.0) ** 2.0) / y) - np.abs(x) * y, leaves)
    calls = region_pipeline.chain_of(program.steps, argument.expr, {"a0", "a1"})
    assert calls is None                             # two operands that are steps: no chain
    argument = traced(program, lambda x, y: -np.abs(((x * 0.5 + 1.0) ** 2.0) / y - x), leaves)
    calls = region_pipeline.chain_of(program.steps, argument.expr, {"a0", "a1"})
    assert [ufunc for ufunc, _ in calls] == ["multiply", "add", "multiply", "divide", "subtract", "absolute",
                                             "negative"]
    text = "(-abs(((((a0 * 0.5) + 1.0) * ((a0 * 0.5) + 1.0)) / a1) - a0))"      # x ** 2.0 is x * x (fused.py)
    kernel = Kernel(name="t", expr=None, function="exp", reads=("a0", "a1"), frees=(), steps=calls,
                    argument=Expression(tree_of(text)))
    import numexpr
    expected = np.exp(numexpr.evaluate(text, local_dict={"a0": a0, "a1": a1}, optimization="none"))
    assert region_kernels.run_pipeline(kernel, {"a0": a0, "a1": a1}).tobytes() == expected.tobytes()
    strided = np.repeat(a0, 2)[::2]                  # not contiguous: numexpr's kernel, then exp
    assert region_kernels.run_pipeline(kernel, {"a0": strided, "a1": a1}).tobytes() == expected.tobytes()


def test_a_division_by_a_number_and_other_powers_stay_numexprs():
    program = RegionBuilder()
    leaves = [program.symbol("a0", (8,))]
    arguments = traced(program, lambda x: (x / 3.0 + 1.0, (x + 1.0) ** 3.0, (x + 1.0) ** 0.5, np.abs(x) >= 1.0), leaves)
    for argument in arguments:
        assert region_pipeline.chain_of(program.steps, argument.expr, {"a0"}) is None
    argument = traced(program, lambda x: 3.0 / (x + 1.0), leaves)
    assert region_pipeline.chain_of(program.steps, argument.expr, {"a0"}) is not None
