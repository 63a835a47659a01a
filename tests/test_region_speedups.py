"""Issue 11, the 20-op chain's speed-ups that must change no bit: numpy's array functions split
over threads (core/region_threads.py), sigmoid's one-division traced form, and the RegionBuilder's
exact rewrites ((-x) >= c as x <= -c, x + (-y) as x - y). The fused results are compared bit for
bit with the schedule as it was before them (one thread, the two-division sigmoid, no rewrites)."""
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import fused, region_kernels, region_program, region_threads, regions
from autodiff.engine.core.fusion import Fused, Tree, traced
from autodiff.engine.core.rule_tracer import PROBES
from autodiff.engine.core.region_program import Kernel, RegionBuilder
from autodiff.engine.core.region_threads import CHUNK_ALIGN, MIN_SPLIT_ELEMENTS, apply_split
from autodiff.engine.core.rules import TABLE, elementwise
from test_region_schedule import assert_bit_identical, fused_count, random_expression, results
from test_fused_regions import CHAIN       # benchmarks/_reference_arrays.CHAIN

FUNCTIONS = ("tanh", "exp", "sqrt", "log", "log1p", "expm1", "arctan", "sinh", "cosh", "sin")


@pytest.fixture
def four_threads(monkeypatch):
    """A pool of four threads whatever the machine (one core would never split)."""
    pool = ThreadPoolExecutor(max_workers=3)
    monkeypatch.setattr(region_threads, "WORKERS", [pool, 4])
    yield
    pool.shutdown()


def argument_of(name, size):
    x = np.random.default_rng(size).standard_normal(size) * 3.0
    return np.abs(x) if name in ("sqrt", "log", "log1p") else x


@pytest.mark.parametrize("size", [MIN_SPLIT_ELEMENTS - 1, MIN_SPLIT_ELEMENTS, MIN_SPLIT_ELEMENTS + 1,
                                  4 * CHUNK_ALIGN * 9, 4 * CHUNK_ALIGN * 9 + 1, 4 * CHUNK_ALIGN * 9 - 1,
                                  1_000_003])
def test_a_split_function_has_the_bits_of_one_call(size, four_threads):
    for name in FUNCTIONS:
        function = getattr(np, name)
        argument = argument_of(name, size)
        out = np.empty(size)
        assert apply_split(function, argument, out) is out
        assert out.tobytes() == function(argument).tobytes(), name
        in_place = argument.copy()
        apply_split(function, in_place, in_place)
        assert in_place.tobytes() == function(argument).tobytes(), name


def test_non_contiguous_2d_and_0d_arguments(four_threads):
    base = argument_of("exp", 6 * MIN_SPLIT_ELEMENTS + 5)
    strided = base[::2]
    out = np.empty(strided.shape)
    assert apply_split(np.exp, strided, out).tobytes() == np.exp(strided).tobytes()
    square = base[: 600 * 600].reshape(600, 600)
    out = np.empty((600, 600))
    assert apply_split(np.tanh, square, out).tobytes() == np.tanh(square).tobytes()
    transposed = square.T
    assert apply_split(np.tanh, transposed, np.empty((600, 600))).tobytes() == np.tanh(transposed).tobytes()
    zero_d = np.asarray(0.25)
    assert apply_split(np.exp, zero_d, np.empty(())) == np.exp(0.25)


def test_a_regions_function_kernel_on_a_strided_leaf(four_threads):
    leaf = np.linspace(-3.0, 3.0, 2 * MIN_SPLIT_ELEMENTS + 3)[::2]
    kernels = [Kernel(name="t0", expr=None, function="tanh", reads=("a0",), frees=())]
    names = {"a0": leaf}
    region_kernels.run_kernels(kernels, names)
    assert names["t0"].tobytes() == np.tanh(leaf).tobytes()
    assert names["a0"] is leaf and leaf.base is not None          # the user's array untouched


def test_a_workers_error_is_raised():
    class Boom(Exception):
        pass

    def function(argument, out):
        if argument[0] != 0.0:                         # the worker's chunk
            raise Boom
        return np.exp(argument, out=out)
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        region_threads.WORKERS[:], saved = [pool, 2], list(region_threads.WORKERS)
        with pytest.raises(Boom):
            apply_split(function, np.arange(2.0 * MIN_SPLIT_ELEMENTS), np.empty(2 * MIN_SPLIT_ELEMENTS))
    finally:
        region_threads.WORKERS[:] = saved
        pool.shutdown()


def test_no_thread_and_no_pool_at_import():
    code = ("import threading, sys; import autodiff; from autodiff.engine.core import regions, region_threads;"
            "print(threading.active_count(), region_threads.WORKERS)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "[]"]


def test_sigmoids_traced_form_divides_once():
    lowered = traced(Tree, TABLE["sigmoid"].impl, [Fused("a0", (8,))])
    assert fused.numexpr_text(lowered.expr).count("/") == 1, lowered.expr


def test_sigmoids_traced_form_has_the_bits_of_its_array_branch():
    x = np.concatenate([np.linspace(-800, 800, 100_001), [0.0, -0.0, 1e-300, -1e-300, 36.7, -36.7, 710.0]])
    e = np.exp(-np.abs(x))
    assert (np.where(x >= 0, 1.0, e) / (1.0 + e)).tobytes() == elementwise._sigmoid(x).tobytes()
    assert (np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))).tobytes() == elementwise._sigmoid(x).tobytes()


def test_a_negated_comparison_flips():
    program = RegionBuilder()
    leaves = [program.symbol("a0", (8,))]
    step = program.steps[traced(program, lambda x: (-x) >= 0.0, leaves).expr]
    assert step[0] == "({} <= {})" and step[1] == ("a0", "0.0")
    step = program.steps[traced(program, lambda x: (-x) < 2.5, leaves).expr]
    assert step[0] == "({} > {})" and step[1] == ("a0", "-2.5")


def test_a_sum_with_a_negation_is_a_difference():
    program = RegionBuilder()
    leaves = [program.symbol(name, (8,)) for name in ("a0", "a1", "a2")]
    step = program.steps[traced(program, lambda x, y, z: x + (-y), leaves).expr]
    assert step[0] == "({} - {})" and step[1] == ("a0", "a1")
    step = program.steps[traced(program, lambda x, y, z: x + y * (-z), leaves).expr]
    assert step[0] == "({} - {})" and program.steps[step[1][1]][0] == "({} * {})"
    assert not any(program.negated(text) for text in program.steps[step[1][1]][1])


def test_a_negation_moves_out_of_a_product_into_a_sum():
    program = RegionBuilder()
    leaves = [program.symbol(name, (8,)) for name in ("a0", "a1", "a2")]

    def step(fn):
        return program.steps[traced(program, fn, leaves).expr]
    product = step(lambda x, y, z: (-x) * y)
    assert product[0] == "(-{})" and program.steps[product[1][0]] == ("({} * {})", ("a0", "a1"), 1, False)
    quotient = step(lambda x, y, z: y / (-x))
    assert quotient[0] == "(-{})" and program.steps[quotient[1][0]][:2] == ("({} / {})", ("a1", "a0"))
    assert step(lambda x, y, z: z - (-x) * y)[:2] == ("({} + {})", ("a2", product[1][0]))
    assert step(lambda x, y, z: z + (-x) * y)[:2] == ("({} - {})", ("a2", product[1][0]))


def old_schedule(monkeypatch):
    """The schedule before these changes: one thread, the two-division sigmoid, no rewrites."""
    monkeypatch.setattr(regions, "KERNELS", {})
    monkeypatch.setattr(region_kernels, "MIN_SPLIT_ELEMENTS", 1 << 62)
    monkeypatch.setattr(regions, "is_unit_seed", lambda g, key, raw: False)
    monkeypatch.setattr(region_program, "FLIPPED", {})
    monkeypatch.setattr(RegionBuilder, "as_difference", lambda self, texts: ("({} + {})", texts))
    monkeypatch.setattr(RegionBuilder, "negation_outside", lambda self, template, texts, shape, boolean: None)
    impl, op = TABLE["sigmoid"].impl, elementwise.sigmoid

    def two_divisions(x):
        if not type(x) in PROBES:
            return impl(x)
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    monkeypatch.setattr(TABLE["sigmoid"], "impl", two_divisions)
    monkeypatch.setattr(elementwise, "sigmoid", lambda x: two_divisions(x) if type(x) in PROBES else op(x))


def test_the_chain_is_bit_identical_to_the_old_schedule(four_threads, monkeypatch):
    n = MIN_SPLIT_ELEMENTS + 4 * CHUNK_ALIGN + 7
    at = {"x": np.concatenate([np.linspace(-30, 30, n), np.linspace(-2, 2, n)])}
    monkeypatch.setattr(regions, "KERNELS", {})
    counted = fused_count(monkeypatch)
    new = results([CHAIN], at)
    assert all(counted)
    old_schedule(monkeypatch)
    counted.clear()
    assert_bit_identical(new, results([CHAIN], at))
    assert all(counted)


@pytest.mark.parametrize("seed", range(3))
def test_random_programs_are_bit_identical_to_the_old_schedule(seed, four_threads, monkeypatch):
    rng = random.Random(seed)
    sources = [f"sum({random_expression(rng, 4, negations=True)} * x + y)" for _ in range(10)]
    n = MIN_SPLIT_ELEMENTS + 2 * CHUNK_ALIGN + 3
    at = {"x": np.linspace(-1.5, 2.5, n), "y": np.linspace(2.0, -1.0, n)}
    monkeypatch.setattr(regions, "KERNELS", {})
    counted = fused_count(monkeypatch)
    new = results(sources, at)
    assert sum(counted) >= len(sources)
    old_schedule(monkeypatch)
    counted.clear()
    assert_bit_identical(new, results(sources, at))
    assert sum(counted) >= len(sources)


def test_a_deep_nest_is_evaluated_without_walking_it_again_and_again():
    # sin(sin(...)) 150 deep over a number: nothing is pending (numbers), the scalar path
    depth, x = 150, 0.5
    found = api.evaluate("sin(" * depth + "x" + ")" * depth, at={"x": x}).value
    for _ in range(depth):
        x = float(np.sin(x))
    assert found == pytest.approx(x)


def test_a_seed_of_ones_runs_kernels_without_it(monkeypatch):
    n = MIN_SPLIT_ELEMENTS + 3
    x = np.linspace(-2.0, 2.0, n)
    monkeypatch.setattr(regions, "KERNELS", {})
    used = []
    seed = regions.is_unit_seed
    monkeypatch.setattr(regions, "is_unit_seed", lambda g, key, raw: used.append(seed(g, key, raw)) or used[-1])
    # (the chain's region hands the sweep an adjoint per read of x: sigmoid(x) * x's is x itself
    # at a seed of ones, a leaf, no array of the kernels' own: its general kernels run)
    source = "sum(exp(-x * x) * sin(x) * tanh(x))"
    unit = api.grad(source, at={"x": x}).gradient["x"]
    general = api.grad(source.replace("sum(", "3.0 * sum("), at={"x": x}).gradient["x"]    # a seed of 3.0
    assert used == [True, False]
    kernels = [k for k in regions.KERNELS.values() if isinstance(k, regions.GradKernels)][0]
    assert all("g" not in k.reads for k in kernels.unit_reverse)
    stars = lambda kernels: sum(k.expr.text.count("*") for k in kernels if k.expr)      # noqa: E731 (numpy's loops: none)
    assert stars(kernels.unit_reverse) < stars(kernels.reverse)
    monkeypatch.setattr(regions, "is_unit_seed", lambda g, key, raw: False)
    assert api.grad(source, at={"x": x}).gradient["x"].tobytes() == unit.tobytes()
    assert np.allclose(general, 3.0 * unit, rtol=1e-13, atol=1e-13)


def test_a_seed_of_ones_with_a_number_leaf_takes_the_general_kernels(monkeypatch):
    n = MIN_SPLIT_ELEMENTS + 3
    at = {"x": np.linspace(-2.0, 2.0, n), "y": 0.75}
    monkeypatch.setattr(regions, "KERNELS", {})
    source = "sum(sin(x * y) * y + exp(-y * x) * x)"
    fused_grad = api.grad(source, at=at).gradient
    monkeypatch.setattr(regions, "run", lambda plan, values: None)         # op by op
    unfused = api.grad(source, at=at).gradient
    assert np.allclose(fused_grad["x"], unfused["x"], rtol=1e-13, atol=0)
    assert fused_grad["y"] == pytest.approx(unfused["y"], rel=1e-12)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_starts_its_own_pool():
    apply_split(np.exp, np.zeros(MIN_SPLIT_ELEMENTS), np.empty(MIN_SPLIT_ELEMENTS))
    assert region_threads.WORKERS
    pid = os.fork()
    if pid == 0:                                   # the child: the parent's pool threads are gone
        code = 1
        try:
            out = apply_split(np.exp, np.zeros(2 * MIN_SPLIT_ELEMENTS), np.empty(2 * MIN_SPLIT_ELEMENTS))
            code = 0 if (out == 1.0).all() else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the child hung on the parent's pool")
        time.sleep(0.05)
    assert os.WEXITSTATUS(status) == 0


def test_a_split_keeps_the_engines_error_state_no_warning_on_stderr():
    # numpy 2's seterr is the caller's context; pool threads ran without it and warned of the
    # nan a log of a negative number makes (the region then runs op by op, as it should, quietly)
    code = ("import numpy as np\nfrom autodiff.engine import api\n"
            "api.grad('sum(log(x * x - 1.0) * x + tanh(x) * x)', at={'x': np.linspace(-2, 2, 1 << 18)})\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "Warning" not in p.stderr, p.stderr


def test_a_forked_child_has_a_free_pool_lock():
    region_threads.POOL_LOCK.acquire()
    try:
        held = region_threads.POOL_LOCK
        region_threads.forget_pool()                 # what a child runs after the fork
        assert region_threads.POOL_LOCK is not held and region_threads.POOL_LOCK.acquire(blocking=False)
        region_threads.POOL_LOCK.release()
    finally:
        held.release()
