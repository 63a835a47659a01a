"""Issue 28 item 4 (core/lazy.py): an interpreted run fuses by the Program pass's rules. Its
elementwise equations over large arrays are pending until something else reads them; a forced
value is a region of the pending equations it reads, across statements and calls, whose kernels
give numpy's bits; a region's reads hand their adjoints to the sweep where the op-by-op sweep adds
them. So a run with regions gives, to the bit, the values and gradients of the same run op by op
(fused.FUSE_MIN_ELEMENTS out of reach: numpy's ops, one at a time)."""
import subprocess
import sys

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import fused, regions
from autodiff.engine.diff import reverse
from test_fused_regions import fused_runs  # noqa: F401  (the regions' runs: (plan, fused or not))

N = fused.FUSE_MIN_ELEMENTS
CHAIN = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
         " + sigmoid(x) * x)")                      # benchmarks/_reference_arrays.CHAIN
ACROSS = "def f(x):\n    a = sin(x) * x\n    b = exp(-a) + a * a\n    return sum(b * x)\n"
CALLED = ("def g(a, x):\n    return exp(-a) + a * a\n\n"
          "def f(x):\n    a = sin(x) * x\n    b = g(a, x)\n    return sum(b * x)\n")


def names(plan) -> list:
    """A region's plan as its primitives' names, in order."""
    return [e.prim.name for e in plan.program.body()]


def program(tmp_path, text):
    path = tmp_path / "program.py"
    path.write_text(text)
    return api.load(str(path), fn="f")


def op_by_op(fn, *args, **kwargs):
    """fn's answer with every fast path off: numpy's ops one at a time (the reference)."""
    saved, functions = fused.FUSE_MIN_ELEMENTS, dict(api._COMPILED)
    api._COMPILED.clear()
    fused.FUSE_MIN_ELEMENTS = 10 ** 15
    try:
        return fn(*args, **kwargs)
    finally:
        fused.FUSE_MIN_ELEMENTS = saved
        api._COMPILED.clear()
        api._COMPILED.update(functions)


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_op_by_op_bits(source, at, target=None):
    on = reverse.grad(source, at, target=target)
    off = op_by_op(reverse.grad, source, at, target=target)
    assert same(on.value, off.value)
    for name in at:
        assert same(on.gradient[name], off.gradient[name]), name
    return on


def complex_point(n=N):
    rng = np.random.default_rng(32)
    return {"z": rng.normal(size=n) + 1j * rng.normal(size=n), "x": rng.normal(size=n)}


@pytest.mark.parametrize("source, at", [
    (CHAIN, {"x": np.linspace(-2, 2, 100_000)}),
    ("sum(softplus(x * 2.0) * x + erf(x) * x)", {"x": np.linspace(-3, 3, N)}),
    ("sum(x * y - x / y + (-x) * 2.0)", {"x": np.linspace(0.2, 0.9, N), "y": np.linspace(1.3, 0.4, N)}),
    ("sum(exp(x) * sin(y) / (x + y) - tanh(x * y))", {"x": np.linspace(0.2, 0.9, N), "y": np.linspace(1.3, 0.4, N)}),
    ("sum(log(x) * x + x * x * x + (x * 0.5 + 1.0) ** 2.0)", {"x": np.linspace(0.2, 0.9, N)}),
    ("sum(real(exp(z * x) * z + conj(z) * x - z * z) * x)", complex_point()),
], ids=["chain", "softplus-erf", "arithmetic", "functions", "log-square", "complex"])
def test_a_fused_run_gives_the_op_by_op_bits(source, at, fused_runs):
    from autodiff.engine.core.backend import np as host, xp
    assert_op_by_op_bits(source, at)
    if "z" in at and xp() is not host():     # complex values on the device: op by op (fused.DEVICE_COMPLEX)
        assert fused_runs and not any(ok for _, ok in fused_runs)
    else:
        assert fused_runs and all(ok for _, ok in fused_runs)


def test_one_array_under_two_names_gets_the_op_by_op_sums(tmp_path):
    # found by a fuzz of random programs: the finder of regions in one expression's AST (before
    # core/lazy.py) gave 93 elements of this gradient other last bits than the op-by-op run
    target = program(tmp_path, "def f(y):\n    t = y\n    return sum(sigmoid(t) * log(y))\n")
    assert_op_by_op_bits(None, {"y": np.linspace(-3.0, 3.0, 70000)[::-1] * 0.7}, target=target)   # log: nan below 0


def test_a_region_spans_statements_and_a_call(tmp_path, fused_runs):
    at = {"x": np.linspace(-2, 2, N)}
    for text in (ACROSS, CALLED):
        fused_runs.clear()
        assert_op_by_op_bits(None, at, target=program(tmp_path, text))
        # sin(x) * x, exp(-a) + a * a (in g's body), b * x: one region, one set of kernels
        assert [(names(plan), ok) for plan, ok in fused_runs] == [(["sin", "mul", "neg", "exp", "mul", "add", "mul"], True)]


PEAK = """
import sys, tracemalloc, numpy as np
from autodiff.engine import api
from autodiff.engine.core import buffer_pool, fused
from autodiff.engine.diff import reverse
if sys.argv[3] == "off":
    fused.FUSE_MIN_ELEMENTS = 10 ** 15
target = api.load(sys.argv[1], fn="f")
x = np.linspace(-2, 2, int(sys.argv[2]))
reverse.grad(None, {"x": x}, target=target)
buffer_pool.POOL.clear()
tracemalloc.start()
base = tracemalloc.get_traced_memory()[0]
reverse.grad(None, {"x": x}, target=target)
print((tracemalloc.get_traced_memory()[1] - base) / x.nbytes)
"""


def steady_peak(path, n, on=True) -> float:
    """A gradient's peak memory in arrays of n, in a fresh process (benchmarks/arrays.py's way),
    after a first one (its kernels traced), its buffers not pooled from that one."""
    out = subprocess.run([sys.executable, "-c", PEAK, str(path), str(n), "on" if on else "off"],
                         capture_output=True, text=True, check=True).stdout
    return float(out)


def test_a_region_across_statements_holds_fewer_arrays(tmp_path):
    # op by op: x's adjoint and six arrays of n; the region keeps its three reads' adjoints of x
    # (the interpreter's AST regions, exp(-a) + a * a alone, kept five)
    path = tmp_path / "program.py"
    path.write_text(ACROSS)
    assert steady_peak(path, 1 << 20) <= 3.05
    assert steady_peak(path, 1 << 20, on=False) >= 6.95


def test_a_value_read_inside_a_region_undoes_it(tmp_path, fused_runs):
    # sum(b) forces b: a region of x * x * 2.0, exp and * x; sum(a) then reads a, inside it, as
    # a region of x * x * 2.0: the sweep would add their adjoints otherwise than op by op, so both
    # are undone before the sweep (their equations recorded one by one, their values again)
    from autodiff.engine.core import lazy
    text = "def f(x):\n    a = x * x * 2.0\n    b = exp(a) * x\n    s = sum(b)\n    return s + sum(a)\n"
    undone = lazy.RESETTLED[0]
    assert_op_by_op_bits(None, {"x": np.linspace(-1, 1, N)}, target=program(tmp_path, text))
    assert lazy.RESETTLED[0] == undone + 2
    assert [names(plan) for plan, _ in fused_runs] == [["mul", "mul", "exp", "mul"], ["mul", "mul"]]


def test_a_long_pending_chain_is_forced_in_regions_of_bounded_size(tmp_path, fused_runs):
    text = "def f(x):\n    y = x\n    for k in range(150):\n        y = y * 0.999 + x\n    return sum(y)\n"
    assert_op_by_op_bits(None, {"x": np.linspace(-1, 1, N)}, target=program(tmp_path, text))
    sizes = [len(names(plan)) for plan, _ in fused_runs]
    assert sum(sizes) == 300 and max(sizes) <= 64 and all(ok for _, ok in fused_runs)


@pytest.mark.parametrize("source, summed", [
    (CHAIN, 1),                                   # x read nine times in one region, by no one else
    ("sum((x * 2.0 + abs(x)) * x)", 0),           # abs(x) (a kink: no region's) reads x between its reads
    ("sum(x * x + x * 0.5) + sum(x * 3.0)", 0),   # x * 3.0, after the region: the sweep adds it first
    ("sum(abs(x)) + sum(x * x + x * 0.5)", 1),    # abs(x) before it: the sweep adds it after the sum
])
def test_a_values_reads_are_summed_in_one_kernel_where_nothing_reads_it_between(source, summed):
    """A region hands over a value's reads' adjoints summed in the op-by-op sweep's order, by one
    kernel (regions.GradKernels.summed), where every other reader of it comes before the region's
    first read of it (core/lazy.py's settle); else each read's adjoint apart, where the sweep adds
    it. The op-by-op bits either way (before: each read's adjoint apart, always: the chain's
    reverse 8 kernels, 7 adds, 8 finiteness checks)."""
    from autodiff.engine.core import lazy
    x = np.random.default_rng(28).normal(size=2 * N) * 2.0
    before = lazy.SUMMED[0]
    assert_op_by_op_bits(source, {"x": x})
    assert lazy.SUMMED[0] - before == summed


def test_a_value_asked_alone_fuses_on_a_values_only_tape(fused_runs):
    """A value's run watches its large float inputs on a values-only tape (diff/reverse.py's
    evaluate): its elementwise work fuses as a gradient's does, by the regions' forward kernels
    alone (no leaf a Var, nothing saved for a sweep), to the op-by-op bits and notes. Before, a
    value alone had nothing pending: the chain's 20 ops one at a time (at 1e6, where no trace
    is kept, every evaluate)."""
    x = np.linspace(-2, 2, 2 * N)
    on = reverse.evaluate(CHAIN, {"x": x})
    assert [(len(names(plan)), ok) for plan, ok in fused_runs] == [(20, True)]
    off = op_by_op(reverse.evaluate, CHAIN, {"x": x})
    assert same(on.value, off.value) and on.kinks == off.kinks == []
    y = np.abs(np.random.default_rng(5).normal(size=N))
    x, y = x[:N].copy(), y.copy()
    x[5] = y[5] = 0.0                          # sqrt at 0: its guard sends the region op by op, for its note
    on = reverse.evaluate("sum(sqrt(x * x + y) * x + x * 2.0)", {"x": x, "y": y})
    off = op_by_op(reverse.evaluate, "sum(sqrt(x * x + y) * x + x * 2.0)", {"x": x, "y": y})
    assert same(on.value, off.value) and on.kinks == off.kinks and [k[0] for k in on.kinks] == ["sqrt"]


def test_a_values_only_region_reads_a_value_once_however_often_it_is_read(monkeypatch):
    # the chain reads x nine times: its values-only region's forward kernels take x as ONE operand
    # (regions.layouts: ("same", False, 0)), not nine (before: nine operands of one array, whose
    # streams made the forward at 1e6 a tenth slower than one region's of the AST)
    monkeypatch.setattr(regions, "KERNELS", {})
    x = np.linspace(-2, 2, 2 * N)
    reverse.evaluate(CHAIN, {"x": x})
    compiled = [k for k in regions.KERNELS.values() if isinstance(k, regions.ForwardKernels)]
    assert len(compiled) == 1
    reads = {name for k in compiled[0].kernels for name in k.reads if name.startswith("a")}
    assert reads == {"a0"}


@pytest.mark.parametrize("run", ["evaluate", "grad"])
def test_a_value_nothing_reads_is_computed_and_notes_its_kinks(tmp_path, run):
    # numpy computes a statement whose value goes unused, and the op-by-op run notes the kink its
    # sqrt meets there; a pending value nothing forced was never computed: its note was lost
    target = program(tmp_path, "def f(x):\n    unused = sqrt(x * x) * 2.0\n    return sum(exp(x) * x)\n")
    x = np.linspace(-1.0, 1.0, N + 1)              # x[N // 2] is 0.0
    do = getattr(reverse, run)
    on, off = do(None, {"x": x}, target=target), op_by_op(do, None, {"x": x}, target=target)
    assert same(on.value, off.value) and on.kinks == off.kinks
    assert [k[0] for k in on.kinks] == ["sqrt"] and on.kinks[0][1].line == 2


def test_a_derivatives_first_tape_computes_the_values_nothing_reads_and_notes_their_kinks(tmp_path):
    # `derivative`'s first tape holds pending values over a large constant, as grad's does; its
    # run did not end as watched_run ends (force_all): an unused statement's sqrt never ran, and
    # its kink, which the op-by-op run notes, was lost
    target = program(tmp_path, "def f(x, A):\n    unused = sqrt(x * A)\n    s = sqrt(A * A * x)\n"
                               "    return sum(sin(x * A) + s + abs(A - x))\n")
    at = {"x": 0.0, "A": np.linspace(-1.0, 1.0, N + 1)}
    on = api.derivatives(None, at=at, order=2, wrt="x", target=target)
    off = op_by_op(api.derivatives, None, at=at, order=2, wrt="x", target=target)
    assert on.derivatives == off.derivatives
    assert on.kinks == off.kinks and [(k[0], k[1].line) for k in on.kinks] == [("sqrt", 2), ("sqrt", 3), ("abs", 4)]


KINKS = ("def f(x):\n    s = sqrt(x * x)\n    t = abs(x)\n    m = max(s)\n    u = sqrt(x * x + 0.0) * 2.0\n"
         "    for i in range(2):\n        u = u + sqrt(x * x * 1.0) + maximum(x, 0.0)\n    return sum(u + t) + m\n")


@pytest.mark.parametrize("source", ["sum(abs(x) * 2.0 + sqrt(x * x) + maximum(x, 0.0))", KINKS])
def test_kinks_noted_by_values_computed_late_are_reported_in_the_op_by_op_order(tmp_path, source, fused_runs):
    # a pending sqrt notes its kink when its region is computed (at a read, or at the run's end),
    # after kinks of later ops (abs, maximum: kink primitives stay op by op); the run's notes are
    # put back in the op-by-op run's order (NOTES.in_run_order), a --json's `kinks` as at 10
    # elements; a Function's recording compared its replay's notes (op-by-op order) with them and
    # refused every trace ("a kink noted by a constant part of the program"): it replays now
    target = program(tmp_path, source) if source.startswith("def") else None
    x = np.linspace(-1.0, 1.0, N + 1)              # x[N // 2] is 0.0: every kink is met
    on = reverse.grad(None if target else source, {"x": x}, target=target)
    off = op_by_op(reverse.grad, None if target else source, {"x": x}, target=target)
    assert fused_runs                              # regions were made (their kernels declined at the kink)
    assert same(on.gradient["x"], off.gradient["x"]) and on.kinks == off.kinks
    assert [k[0] for k in on.kinks][:3] == (["sqrt", "abs", "max"] if target else ["abs", "sqrt", "maximum"])
    f = api.function(str(tmp_path / "program.py"), "f") if target else api.function(source)
    for _ in range(4):
        assert same(f.grad(x=x + 0.0)["x"], off.gradient["x"])
    assert f.replays == 2 and not f.fallbacks


KMEANS = ("import numpy as np\n\ndef f(points, centroids):\n    d = points[:, None, :] - centroids[None, :, :]\n"
          "    dist = np.sum(d * d, axis=2)\n    return np.sum(np.min(dist, axis=1))\n")


def test_a_two_way_broadcast_stays_numpys_op_as_the_pass_says(tmp_path, fused_runs):
    # the pass over a Program declines a region whose leaves broadcast two ways (numexpr walks them
    # element by element: program_regions.broadcasts_one_way); an interpreted run fused kmeans'
    # (1000, 1, 8) - (1, 10, 8) anyway, so its replay "fused less" and every gradient was
    # interpreted (held-out kmeans 10x1000x8: 0/50 replayed, 1.6 ms a gradient against 0.7)
    rng = np.random.default_rng(28)
    at = {"points": rng.normal(size=(10_000, 8)), "centroids": rng.normal(size=(10, 8))}
    target = program(tmp_path, KMEANS)
    assert_op_by_op_bits(None, at, target=target)
    assert fused_runs == []
    f = api.function(str(tmp_path / "program.py"), fn="f")
    for k in range(3):
        f.grad(points=at["points"] * (1.0 + k * 1e-3), centroids=at["centroids"])
    assert f.replays >= 1 and f.fallbacks == {}


def test_a_vars_reads_are_plain_slot_reads_unless_a_tape_holds_a_pending_value():
    # Var's __getattr__ (the forcing of a pending value) is installed only while a tape that held
    # one lives: a class with a __getattr__ gets no specialized attribute reads in CPython 3.11,
    # and a scalar run interpreted 25% slower for it (scalar_loop: 0.78 -> 0.99 us an op)
    import gc
    from autodiff.engine.core import ops
    from autodiff.engine.core.tape import Tape, Var
    gc.collect()
    assert "__getattr__" not in Var.__dict__
    tape = Tape()
    x = tape.watch(np.linspace(-1.0, 1.0, N))
    y = ops.sin(x) * 2.0
    assert "__getattr__" in Var.__dict__ and tape.pending        # y is pending
    assert same(y.value, np.sin(np.linspace(-1.0, 1.0, N)) * 2.0)
    del tape, x, y
    gc.collect()
    assert "__getattr__" not in Var.__dict__
