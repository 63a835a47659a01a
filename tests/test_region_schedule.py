"""Issue 11, the region scheduler (core/region_program.py's schedule): numexpr evaluates each
distinct subexpression of one kernel once, so a step several kernels would compute becomes an
array of its own, while one read twice by a single kernel stays inlined. Which steps become
arrays changes no bit of any result: identical step text computes identical bits, so every
partition of a program into kernels, down to one kernel per step, gives the same numbers."""
import random
import re

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import fused, region_program, regions
from autodiff.engine.core.fusion import traced
from autodiff.engine.core.region_program import RegionBuilder, schedule
from autodiff.engine.diff import reverse
from test_fused_regions import CHAIN       # benchmarks/_reference_arrays.CHAIN

N = fused.FUSE_MIN_ELEMENTS
UNARY = ("sin", "cos", "exp", "tanh", "sigmoid", "sqrt", "log", "abs")


@pytest.fixture
def fresh_kernels(monkeypatch):
    """Every region traced and scheduled anew (the kernels are cached per process)."""
    monkeypatch.setattr(regions, "KERNELS", {})


def chain_kernels(x):
    target = api.load(CHAIN)
    reverse.grad(None, {"x": x}, target=target)
    # one region (core/lazy.py): the chain but sigmoid (its kernel is not numpy's bits)
    compiled = [k for k in regions.KERNELS.values() if isinstance(k, regions.GradKernels)]
    assert len(compiled) == 1
    return compiled[0]


def subexpressions(expr) -> set:
    """Every parenthesized subexpression of a kernel's text that is more than a name or a number."""
    found, opened = set(), []
    for i, char in enumerate(expr):
        if char == "(":
            opened.append(i)
        elif char == ")":
            start = opened.pop()
            if start == 0 or not expr[start - 1].isalnum():         # not a call's argument list
                text = expr[start:i + 1]
                if re.search(r"[-+*/<>=]", text[1:-1]):
                    found.add(text)
    return found


def test_the_chains_reverse_is_one_kernel_where_nothing_reads_x_between(fresh_kernels):
    # the region can hand the sweep the adjoint of each read of a leaf apart (core/lazy.py: the
    # op-by-op sweep's sums where another reader of x comes between): x's nine reads, the two
    # reads of each x * x one step; and the sum of them in the sweep's order, ((a1 + a2) + ...),
    # in ONE kernel (GradKernels.summed), handed over at its root where nothing reads x between
    # its reads (core/lazy.py's settle: the chain, sigmoid inside since its `fused_bits`)
    kernels = chain_kernels(np.linspace(-2, 2, 2 * N))
    assert len(kernels.adjoints) == 9 and len(kernels.reverse) == 8
    assert kernels.read_groups == ((0, (8, 7, 5, 6, 3, 4, 2, 1, 0)),)
    reverse, adjoints, unit_reverse, unit_adjoints = kernels.summed
    assert list(adjoints) == list(unit_adjoints) == [0] and len(reverse) == len(unit_reverse) == 1
    # the forward: numpy's loops for tanh, exp, sqrt (its argument checked for a zero, the
    # kink) and sigmoid's exp, and for sin and cos where this process's probe finds numexpr's apart from numpy's;
    # numexpr's kernels between them
    looped = [name for name in ("sin", "cos") if name in region_program.NUMPY_LOOPS]
    assert [k.function for k in kernels.forward if k.function] == looped + ["tanh", "exp", "sqrt", "exp"]
    # (sin and cos in numexpr's kernels: a kernel each, their values read by the reverse)
    assert sum(k.expr is not None for k in kernels.forward) == 4 - len(looped) and [k.name for k in kernels.forward if k.check]


def test_no_subexpression_is_computed_by_two_kernels_of_the_forward(fresh_kernels):
    # (the reverse's kernels, one per read, share what costs less than REPEAT_OPS to recompute)
    kernels = chain_kernels(np.linspace(-2, 2, 2 * N))
    for sweep in (kernels.forward,):
        seen: dict = {}
        for kernel in sweep:
            for text in subexpressions(kernel.expr.text if kernel.expr else ""):
                assert seen.setdefault(text, kernel.name) == kernel.name, f"{text} in {seen[text]} and {kernel.name}"


def test_the_reverse_reads_what_the_forward_made(fresh_kernels):
    kernels = chain_kernels(np.linspace(-2, 2, 2 * N))
    made = {k.name: k.expr.text for k in kernels.forward if k.expr and not k.boolean and k.name != kernels.out}
    assert made
    for kernel in kernels.reverse:
        assert not any(expr in kernel.expr.text for expr in made.values()), kernel.expr
    made_by_reverse = {k.name for k in kernels.reverse}
    assert set(kernels.saved) >= {name for k in kernels.reverse for name in k.reads} - {"g"} - made_by_reverse


def test_a_step_two_kernels_need_is_computed_once():
    program = RegionBuilder()
    def sweep(x):
        shared = ((x * 1.5 + 2.0) / (x * x + 3.0)) / (x * 0.25 + 1.0) + x / (x + 7.0)
        return shared, shared * shared + x, shared - x * shared
    shared, first, second = traced(program, sweep, [program.symbol("a0", (8,))])
    kernels = schedule(program, [first.expr, second.expr], {"a0"})
    names = [k.name for k in kernels]
    assert shared.expr in names                              # its own kernel, read by name
    assert sum(shared.expr in (k.reads or ()) for k in kernels) == 2
    assert all("/" not in k.expr.text for k in kernels if k.name != shared.expr)


def test_a_step_read_twice_by_one_kernel_stays_inlined():
    program = RegionBuilder()
    def sweep(x):
        shared = ((x * 1.5 + 2.0) / (x * x + 3.0)) / (x * 0.25 + 1.0)
        return shared * shared + x * shared
    out = traced(program, sweep, [program.symbol("a0", (8,))])
    kernels = schedule(program, [out.expr], {"a0"})
    assert [k.name for k in kernels] == [out.expr]


def random_expression(rng, depth, negations=False) -> str:
    """An elementwise expression of x and y (numbers only beside them: a subtree of numbers
    alone is folded, no region); with `negations`, signs beside the operands too (the cases of
    RegionBuilder.add's rewrites, test_region_speedups.py)."""
    if depth == 0:
        return rng.choice(("x", "y"))
    choice = rng.random()
    inner = random_expression(rng, depth - 1, negations)
    if choice < 0.3:
        name = rng.choice(UNARY)
        if name in ("sqrt", "log"):
            inner = f"({inner}) * ({inner}) + 1.0"
        elif name == "exp":
            inner = f"tanh({inner})"
        return f"{name}({inner})"
    if choice < 0.45:
        sign = rng.choice(("-", "")) if negations else ""
        constants = ("0.5", "-1.5") if negations else ("0.5", "1.5", "3.0")
        return f"({sign}{inner} {rng.choice(('+', '*', '-'))} {rng.choice(constants)})"
    op = rng.choice(("+", "-", "*", "*", "/"))
    right = random_expression(rng, depth - 1, negations)
    if op == "/":
        right = f"(({right}) * ({right}) + 1.0)"
    if negations and rng.random() < 0.3:
        return f"({inner} {op} -{right})"
    return f"({inner} {op} {right})"


def results(sources, at):
    """Each source's value and gradient interpreted (a Function's second call would record a
    trace, on which nothing is pending), and its value alone."""
    out = []
    for source in sources:
        found = reverse.grad(source, at)
        out.append((np.asarray(found.value), *(found.gradient[name] for name in sorted(found.gradient))))
        out.append((np.asarray(api.evaluate(source, at=at).value),))
    return out


def one_kernel_per_step(monkeypatch):
    """Every step an array of its own: nothing inlined, nothing shared."""
    monkeypatch.setattr(regions, "KERNELS", {})
    monkeypatch.setattr(region_program, "MAX_KERNEL_OPS", 0)


def assert_bit_identical(left, right):
    for mine, theirs in zip(left, right, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def fused_count(monkeypatch) -> list:
    """Whether each region run from now on fused (regions.run spied on)."""
    counted = []
    run = regions.run

    def spy(plan, values):
        out = run(plan, values)
        counted.append(out is not None)
        return out
    monkeypatch.setattr(regions, "run", spy)
    return counted


def test_the_chain_is_bit_identical_in_any_partition(fresh_kernels, monkeypatch):
    at = {"x": np.concatenate([np.linspace(-30, 30, N), np.linspace(-2, 2, N)])}
    scheduled = results([CHAIN], at)
    one_kernel_per_step(monkeypatch)
    assert_bit_identical(scheduled, results([CHAIN], at))


@pytest.mark.parametrize("seed", range(4))
def test_random_elementwise_programs_are_bit_identical_in_any_partition(seed, fresh_kernels, monkeypatch):
    rng = random.Random(seed)
    sources = [f"sum({random_expression(rng, 4)} * x + y)" for _ in range(12)]
    at = {"x": np.linspace(-1.5, 2.5, N + 17), "y": np.linspace(2.0, -1.0, N + 17)}
    fused_regions = fused_count(monkeypatch)
    scheduled = results(sources, at)
    assert sum(fused_regions) >= len(sources)                # most grads and values fused
    one_kernel_per_step(monkeypatch)
    assert_bit_identical(scheduled, results(sources, at))
