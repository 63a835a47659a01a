"""Issue 14, large inputs replay: a trace of a run over large arrays is kept when what it holds
fits TRACE_MAX_BYTES (diff/large_trace.py), its sweep uses the fused VJPs the interpreter's lean
tape uses, and it gives the interpreter's numbers to the bit (a plain run's regions are the
Program pass's, core/lazy.py: the same bits). A program whose trace would hold too much stays
interpreted."""
import tracemalloc

import numpy as np

import autodiff
from autodiff.engine.core import fused, ops
from autodiff.engine.core.tape import FUSED_RULES, Tape, Var
from autodiff.engine.diff import large_trace, reverse
from autodiff.engine.diff.function import Function, ReplayRunner
from autodiff.engine.diff.program_fusion import FUSED_AWAY, FUSED_REGIONS
from autodiff.engine.diff.replay import record_trace
from test_replay import assert_same_gradient, same_number

N = fused.FUSE_MIN_ELEMENTS
LSE = "def f(x):\n    m = max(x)\n    return m + log(sum(exp(x - m)))\n"
# LSE weighted by a constant array w, which a kept trace holds (its constants, not its values)
WEIGHTED_LSE = ("import numpy as np\n\ndef f(x):\n    w = np.arange(len(x)) * 1.0\n    m = max(x)\n"
                "    return m + log(sum(exp(x - m))) + sum(w * x)\n")


def program(tmp_path, text):
    path = tmp_path / "program.py"
    path.write_text(text)
    return str(path)


def points(n, count=4, seed=14):
    rng = np.random.default_rng(seed)
    return [{"x": rng.normal(size=n)} for _ in range(count)]


def check_both_ways(source, at_points, fn=None):
    """Every call's gradient and value are the interpreter's, bit for bit; the Function's counts."""
    f = Function(source, fn)
    for at in at_points:
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    for at in at_points[:2]:
        value = f.evaluate_result(at)
        assert same_number(value.value, reverse.evaluate(None, at, target=f.target).value)
    return f


def test_log_sum_exp_of_a_large_vector_replays_with_the_interpreters_bits(tmp_path):
    f = check_both_ways(program(tmp_path, LSE), points(100_000), fn="f")
    assert f.replays >= 3


def test_a_fused_vjp_kernel_replays_as_the_lean_tape_sweeps_it():
    # tan's VJP, g * (1 + ans * ans), is a numexpr kernel at this size (a region of one
    # equation): the replay's step is the fused entry
    f = check_both_ways("sum(tan(x))", points(2 * N))
    assert f.replays >= 3
    trace = next(t for t in f.traces.values() if t)
    assert any(prim is FUSED_RULES["tan"] for prim in (e.prim for e in trace.body()))


def test_a_program_that_fuses_a_region_replays_at_large_sizes():
    # issue 28 item 4: the plain run's regions are the pass's (core/lazy.py), the op-by-op bits,
    # so its trace is kept and replayed (its Program's regions fused by the same pass)
    source = "sum(sin(x) * cos(x) + x * x)"
    f = check_both_ways(source, points(N, count=3))
    assert f.replays >= 2 and f.blocker is None and any(f.traces.values())
    small = check_both_ways(source, points(100, count=3))   # small arrays: no region runs, replayed
    assert small.replays >= 1


def test_a_value_whose_recording_run_met_a_region_is_the_plain_runs(tmp_path):
    # a first call in forward mode fuses nothing (Duals: op by op), so the next call records;
    # the value every call gives is a plain run's, fused, and so is every replay's
    source = "x ** 3.0 * x + x * cos(x) * c"
    f = Function(source)
    at = [{**point, "c": 0.5 + k} for k, point in enumerate(points(2 * N, count=3))]
    f.forward_grad_result(at[0], wrt=["c"])
    for point in at:
        assert same_number(f.evaluate_result(point).value, reverse.evaluate(None, point, target=f.target).value)
    assert f.blocker is None
    runner = ReplayRunner(f.target)
    for point in at:
        assert same_number(runner(point), reverse.evaluate(None, point, target=f.target).value)


def test_a_region_over_small_arrays_does_not_keep_large_inputs_from_replaying(tmp_path):
    # GradBench's held-out gmm: `alphas + sum_qs - 0.5 * sqsum` may root a region, but over
    # fewer elements than a kernel takes; whether a run met a region is what the recording tape
    # counted as it ran (no analysis of the text), so the large arrays around it replay
    source = "def f(x):\n    y = x[:100]\n    t = sin(y) * y + y * y\n    return sum(t) + sum(exp(x) * x)\n"
    f = check_both_ways(program(tmp_path, source), points(2 * N), fn="f")
    assert f.replays >= 3 and f.blocker is None and f.fallbacks == {}


def test_large_arrays_made_inside_a_region_program_replay_with_the_interpreters_bits(tmp_path):
    # small inputs, a large array made inside: the plain run fuses its region (core/lazy.py), the
    # replay fuses the same pass's region, both the op-by-op bits
    source = "def f(x):\n    A = ones(70000) * x\n    return sum(sin(A) * A * A + A)\n"
    f = Function(program(tmp_path, source), "f")
    for x in (0.3, 0.7, 1.1, 0.2):
        assert_same_gradient(f.grad_result({"x": x}), reverse.grad(None, {"x": x}, target=f.target))
    assert f.replays >= 2


def test_the_byte_budget_declines_a_long_program(tmp_path):
    # 48 arrays of 10^5 float64 values (38 MB, over the 32 MiB budget) alive at once, and their
    # stack (38 MB more), none of them read by the sweep (roll's and stack's VJPs read no value):
    # a replay would hold them all where the interpreter's lean tape holds none of them
    source = ("import numpy as np\n\ndef f(x):\n    parts = [np.roll(x, k) for k in range(48)]\n"
              "    return sum(np.stack(parts))\n")
    f = check_both_ways(program(tmp_path, source), points(100_000, count=3), fn="f")
    assert f.replays == 0 and not any(f.traces.values())
    short = source.replace("range(48)", "range(4)")
    assert check_both_ways(program(tmp_path, short), points(100_000, count=3), fn="f").replays >= 1


def test_the_byte_budget_keeps_a_long_program_whose_sweep_reads_its_values(tmp_path):
    """48 cbrt's of 10^5 float64 values (no region takes cbrt: the interpreter runs them one by
    one): a sweep reads each one's value (38 MB), which the interpreter's lean tape holds as well;
    what a replay holds beyond them is within the budget, so the trace is kept and replays
    (before: declined, every call interpreted)."""
    source = "def f(x):\n    s = x\n    for k in range(48):\n        s = cbrt(s)\n    return sum(s)\n"
    f = check_both_ways(program(tmp_path, source), points(100_000, count=3), fn="f")
    assert f.replays >= 1 and f.fallbacks == {}


def test_held_bytes_count_each_array_once(monkeypatch):
    from autodiff.engine.diff import replay_release

    def trace():
        tape = Tape(persistent=True, keep_values=True)
        x = tape.watch(np.ones(1000))
        y = ops.exp(x - ops.max(x))
        return record_trace(tape, ops.sum(y * y), (), 0)
    # under RELEASE_FROM_BYTES a replay releases nothing: x, x - m, exp(x - m) and y * y, each once
    assert large_trace.held_bytes(trace()) == 4 * 1000 * 8
    monkeypatch.setattr(replay_release, "RELEASE_FROM_BYTES", 0)
    # releasing: at most three at once: x, exp(x - m) (its VJP reads it: needs_ans; mul keeps it
    # twice, counted once) and x - m or y * y, each dropped once read (sub's and sum's VJPs read no
    # argument); max and sum give numbers
    assert large_trace.held_bytes(trace()) == 3 * 1000 * 8


def test_checks_repeated_runs_replay_large_inputs(tmp_path):
    runner = ReplayRunner(autodiff.function(program(tmp_path, LSE), "f").target)
    for at in points(100_000, count=3):
        out = runner(at)
        assert same_number(out, reverse.evaluate(None, at, target=runner.target).value)
    assert any(runner.traces.values())


def test_a_functions_kept_traces_hold_a_bounded_total(tmp_path, monkeypatch):
    # a caller cycling through many large input shapes: each trace fits its own budget, and all
    # of them together fit MAX_KEPT_BYTES (the oldest go); every gradient stays the interpreter's
    from autodiff.engine.diff import trace_cache
    budget = 3 * 8 * (N + 40)                       # about three traces of the weights w
    monkeypatch.setattr(trace_cache, "MAX_KEPT_BYTES", budget)
    f = Function(program(tmp_path, WEIGHTED_LSE))
    for extra in range(6):
        at = {"x": np.linspace(-1.0, 1.0, N + extra)}
        for _ in range(3):
            assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
        assert sum(map(trace_cache.kept_bytes, f.traces.values())) <= budget
    assert f.replays > 0
    kept = [entry for entry in f.traces.values() if entry]
    assert 0 < len(kept) < 6


def test_kept_bytes_count_each_array_once(tmp_path):
    from autodiff.engine.diff import trace_cache
    f = Function(program(tmp_path, "import numpy as np\n\ndef f(x):\n    w = np.arange(len(x)) * 1.0\n"
                                   "    return sum(w * x) + sum(w * x * x)\n"))
    at = {"x": np.linspace(0.0, 1.0, 100)}
    for _ in range(3):
        f.grad_result(at)
    (entry,) = [e for e in f.traces.values() if e]
    # the constant w, once (two steps keep it); not x nor x * x, the run's values, which the
    # recording tape kept as mul's arguments (core/program.py's seal drops them)
    assert trace_cache.kept_bytes(entry) == 800
    assert trace_cache.kept_bytes(None) == trace_cache.kept_bytes(False) == 0


ACROSS = "def f(x, y):\n    t = x * y\n    u = t - x\n    v = exp(u) * y\n    return sum(v)\n"


def test_a_region_across_statements_replays_as_one_fused_region_with_the_interpreters_bits(tmp_path, monkeypatch):
    # issue 28 item 4(b): no expression holds three ops (no region of the AST); the pass over the
    # recorded Program finds x * y, t - x, exp(u), * y (three statements) as one region
    from autodiff.engine.core import regions
    rng = np.random.default_rng(28)
    at = [{"x": rng.normal(size=N), "y": rng.normal(size=N)} for _ in range(4)]
    f = check_both_ways(program(tmp_path, ACROSS), at, fn="f")
    assert f.replays >= 3
    trace = next(t for t in f.traces.values() if t)
    names = [e.prim.name for e in trace.body()]
    assert names == ["fused away"] * 3 + ["fused program region", "sum"]
    assert sorted({e.span.line for e in trace.body()[:4]}) == [2, 3, 4]
    assert all(e.prim is FUSED_AWAY for e in trace.body()[:3])
    lowered, = trace.annotations[FUSED_REGIONS].values()
    assert lowered.region.positions == (2, 3, 4, 5) and lowered.region.plan.program.operations() == 4
    runs = []
    real_run = regions.run
    interpreted = reverse.grad(None, at[0], target=f.target)   # (its own region: core/lazy.py)
    monkeypatch.setattr(regions, "run", lambda plan, values: runs.append(real_run(plan, values)) or runs[-1])
    assert_same_gradient(f.grad_result(at[0]), interpreted)
    assert len(runs) == 1 and runs[0].__class__ is Var      # one region, run by its kernels (None: op by op)
    kernels = runs[0].tape.entries[-1].args[0].kernels
    assert (len(kernels.forward), len(kernels.reverse)) == (2, 2)    # op by op: 4 forward ops, 7 VJPs


def test_regions_across_calls_and_their_sums_keep_the_interpreters_bits(tmp_path):
    # a region through a call (g's body and its caller) with a broadcast leaf (c) read once and a
    # leaf read twice (y); an overflow at one point (the kernels decline: op by op, not finite:
    # interpreted), all replayed or interpreted with the interpreter's bits
    source = ("def g(a, b):\n    return a * b - 1.0\n\n"
              "def f(x, y, c):\n    t = g(y, c)\n    u = exp(t) * y\n"
              "    return sum(u) + sum(x * 3.0)\n")
    rng = np.random.default_rng(4)
    at = [{"x": rng.normal(size=N), "y": rng.normal(size=N), "c": rng.normal(size=1)} for _ in range(4)]
    at.append({**at[0], "c": np.array([800.0])})
    f = check_both_ways(program(tmp_path, source), at, fn="f")
    assert f.replays >= 3
    trace = next(t for t in f.traces.values() if t)
    # each plan a Program of two leaves (y, c) and its equations: (primitive, constants, inputs)
    plans = [(lowered.region.plan.program.leaves, [(e.prim.name, e.args, e.parents) for e in lowered.region.plan.program.body()])
             for lowered in trace.annotations[FUSED_REGIONS].values()]
    assert plans == [(2, [("mul", (None, None), ((0, 0), (1, 1))), ("sub", (None, 1.0), ((0, 2),)),
                          ("exp", (None,), ((0, 3),)), ("mul", (None, None), ((0, 4), (1, 0)))])]


def test_a_program_its_replay_fuses_less_than_its_interpreter_interprets_its_derivatives(tmp_path):
    # x, read twice in a region and again after it: the plain run's region hands each read's
    # adjoint over where the sweep adds it (core/lazy.py), the pass over a trace keeps no region
    # (the sweep's order of sums is not its kernels'), so a replay would run the three equations
    # op by op where the interpreter runs one region: its gradients are interpreted (before:
    # replayed, and the 20-op chain's took 9 ms at 10^5 where interpreting took 6), its values
    # (op by op in a plain run too) replayed
    source = "def f(x):\n    w = x * x\n    v = w + x\n    return sum(v * 0.5) + sum(x * 3.0)\n"
    f = check_both_ways(program(tmp_path, source), points(N), fn="f")
    assert f.replays == 2 and f.fallbacks == {large_trace.FUSES_LESS: 2}     # 4 gradients, 2 values
    # its values' regions are the pass's whatever their sums (no sweep runs through them), their
    # leaves not watched (their forward kernels alone): x * x, + x, * 0.5 one region
    trace = next(t for t in f.traces.values() if t)
    assert trace.grads_interpreted and [e.prim.name for e in trace.body()] == [
        "fused away", "fused away", "fused program region", "sum", "mul", "sum", "add"]
    assert [lowered.watched for lowered in trace.annotations[FUSED_REGIONS].values()] == [False]
    h = Function(program(tmp_path, source), "f")       # a value's run records it: the first run's regions count
    at = points(N, count=1)[0]
    first = h.grad_result(at)
    h.evaluate_result(at)
    assert_same_gradient(h.grad_result(at), first)
    assert h.replays == 0 and h.fallbacks == {large_trace.FUSES_LESS: 1}     # (before: replayed op by op)
    g = check_both_ways("sum(x * x + x * 0.5)", points(N))             # no later read: the pass's region too
    assert g.replays >= 3


def test_a_trace_is_kept_where_only_its_fused_regions_insides_would_not_fit(tmp_path):
    # k-means' objective over 10^5 points of 4: its (10^5, 4) differences and squares come to more
    # than TRACE_MAX_BYTES, but each difference is inside a fused region, which the replay never makes
    source = ("def f(P, C):\n    best = sum((P - C[0]) ** 2, 1)\n    for k in range(1, len(C)):\n"
              "        best = minimum(best, sum((P - C[k]) ** 2, 1))\n    return sum(best)\n")
    rng = np.random.default_rng(5)
    at = [{"P": rng.normal(size=(100_000, 4)), "C": rng.normal(size=(5, 4))} for _ in range(3)]
    f = check_both_ways(program(tmp_path, source), at, fn="f")
    assert f.replays >= 2
    trace = next(t for t in f.traces.values() if t)
    assert len(trace.annotations[FUSED_REGIONS]) == 5


def test_a_complex_region_across_statements_replays_fused_with_the_interpreters_bits(tmp_path, monkeypatch):
    """Issue 32 item 2: the pass over the recorded Program fuses complex128 equations too (the
    region's kernels: numexpr's exact complex kernels and numpy's own loops), value and gradient
    the interpreter's to the bit."""
    from autodiff.engine.core import regions
    rng = np.random.default_rng(32)
    source = "def f(x, y):\n    t = x * y\n    u = t - conj(x)\n    v = exp(u) * y\n    return sum(real(v))\n"
    at = [{"x": rng.normal(size=N) + 1j * rng.normal(size=N), "y": rng.normal(size=N) + 1j * rng.normal(size=N)}
          for _ in range(4)]
    f = check_both_ways(program(tmp_path, source), at, fn="f")
    assert f.replays >= 3
    trace = next(t for t in f.traces.values() if t)
    assert [e.prim.name for e in trace.body()] == ["fused away"] * 5 + ["fused program region", "sum"]
    runs = []
    real_run = regions.run
    monkeypatch.setattr(regions, "run", lambda plan, values: runs.append(real_run(plan, values)) or runs[-1])
    replayed = f.grad_result(at[0])
    assert len(runs) == 1 and runs[0].__class__ is Var      # run by its kernels (None: op by op)
    interpreted = reverse.grad(None, at[0], target=f.target)
    for name in ("x", "y"):
        assert replayed.gradient[name].tobytes() == interpreted.gradient[name].tobytes()


def test_held_bytes_count_each_buffer_once():
    """Views of one buffer (a reshape, slices, a transpose) are its memory, counted once, as the
    whole buffer a view keeps alive (before: each view's own bytes beside the base's); distinct
    buffers with the same contents stay apart."""
    from autodiff.engine.diff import trace_cache
    a = np.arange(1000.0)
    assert trace_cache.distinct_bytes([a, a[:500], a.reshape(10, 100), a.reshape(10, 100).T, a[::2]]) == 8000
    assert trace_cache.distinct_bytes([a[:10]]) == 8000                 # a small view keeps its whole base
    assert trace_cache.distinct_bytes([a, a.copy(), 1.0, None]) == 16000
    tape = Tape(persistent=True, keep_values=True)
    x = tape.watch(np.ones((10, 100)))
    r = ops.reshape(x, (1000,))                  # a view of x's buffer
    out = ops.sum(ops.sin(r))
    assert np.shares_memory(r.value, x.value)
    assert large_trace.held_bytes(record_trace(tape, out, (), 0)) == 2 * 1000 * 8     # x (and its view r), sin(r)


def test_a_fusing_run_whose_recording_would_not_fit_records_none(monkeypatch):
    # the values a plain run's regions never made (core/lazy.py's PENDING_BYTES) are more than a
    # trace may hold: a recording run, which keeps every value, is never paid for
    from autodiff.engine.diff import function
    monkeypatch.setattr(function, "TRACE_MAX_BYTES", 4 * 8 * N)
    f = check_both_ways("sum(exp(-x * x) * x + x * 0.5)", points(N, count=3))
    assert f.replays == 0 and f.blocker == "a trace larger than a trace may hold" and not any(f.traces.values())


def test_a_region_with_a_guarded_kink_replays_gradients_and_values_with_its_note():
    # sqrt's kink is guarded in a region's kernels (where it holds, the region runs op by op,
    # each equation at its own span), in an interpreted run's regions and a replay's alike: the
    # trace's gradients replay through one region (before: the pass kept sqrt out of a gradient's
    # regions, so the trace "fused less" than the interpreted run and every gradient was
    # interpreted, after a recording call that kept every value). At the kink the replay gives
    # the interpreter's gradient, value and note, to the bit.
    source = "sum(sqrt(x * x + y) * x + x * 2.0)"
    rng = np.random.default_rng(28)
    at = [{"x": rng.normal(size=N), "y": np.abs(rng.normal(size=N))} for _ in range(3)]
    f = check_both_ways(source, at)
    trace = next(t for t in f.traces.values() if t)
    assert not trace.grads_interpreted and [e.prim.name for e in trace.body()] == ["fused away"] * 5 + [
        "fused program region", "sum"]
    assert f.replays >= 2 and f.fallbacks == {}
    kink = {"x": at[0]["x"].copy(), "y": at[0]["y"].copy()}
    kink["x"][5] = kink["y"][5] = 0.0
    replays = f.replays
    grad, plain = f.grad_result(kink), reverse.grad(None, kink, target=f.target)
    assert f.replays == replays + 1
    assert_same_gradient(grad, plain)
    assert grad.kinks == plain.kinks and [k[0] for k in grad.kinks] == ["sqrt"]
    replayed, interpreted = f.evaluate_result(kink), reverse.evaluate(None, kink, target=f.target)
    assert f.replays == replays + 2 and same_number(replayed.value, interpreted.value)
    assert replayed.kinks == interpreted.kinks and [k[0] for k in replayed.kinks] == ["sqrt"]


def test_the_chain_with_sqrt_replays_its_gradient_without_a_values_only_trace():
    # the arrays benchmark's 20-op chain (sqrt among them): one region of 20 equations in the
    # replay as in the interpreted run; its second call records, the later ones replay
    source = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
              " + sigmoid(x) * x)")
    f = check_both_ways(source, points(N, count=4))
    trace = next(t for t in f.traces.values() if t)
    assert not trace.grads_interpreted and f.replays >= 3 and f.fallbacks == {}
    assert [e.prim.name for e in trace.body()].count("fused program region") == 1
    # a value's replay (no sweep follows) runs the region's forward kernels alone: a gradient's
    # forward would leave its saved arrays held by the region until the next call (the pool
    # then lacked them: tests/test_buffer_pool.py)
    lowered, = trace.annotations[FUSED_REGIONS].values()
    replays = f.replays
    f.evaluate_result(points(N, count=1, seed=5)[0])
    assert f.replays == replays + 1 and lowered.made is None and lowered.watched


def test_a_long_program_whose_pass_fuses_a_little_less_still_replays_its_gradients(tmp_path):
    """GradBench's held-out gmm at 10x25x1000 (benchmarks/gradbench_heldout_evals.py): 2,341
    equations, of which an interpreted run fuses 3 (one region of 250,000-element values) that
    the pass over its Program declines (their sums are not the sweep's). Its gradients were all
    interpreted for those 3 (FUSES_LESS: 91 ms a gradient against 18 replayed); the work the
    replay runs op by op weighs little against interpreting every equation, so they replay."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "gradbench_heldout_evals", Path(__file__).resolve().parent.parent / "benchmarks" / "gradbench_heldout_evals.py")
    evals = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evals)
    path = tmp_path / "gmm.py"
    path.write_text(evals.PROGRAMS["gmm"])
    at = evals.inputs("gmm", evals.SIZES["gmm"][2])
    f = autodiff.function(str(path))
    first = f.value_and_grad(at, wrt=evals.WRT["gmm"])
    for _ in range(2):
        again = f.value_and_grad(at, wrt=evals.WRT["gmm"])
    assert f.replays >= 1 and large_trace.FUSES_LESS not in f.fallbacks
    assert same_number(first[0], again[0])
    for name in evals.WRT["gmm"]:
        assert np.asarray(first[1][name]).tobytes() == np.asarray(again[1][name]).tobytes(), name


def test_a_recording_call_checks_its_trace_without_a_second_copy_of_every_value():
    # the recording call keeps every value of its run (the trace reads their types); the check
    # that its replay agrees (Function._refusal) replays values only: it keeps what a later step
    # reads, not a second copy of the run (the 20-op chain at 1e5: 40.3 -> 23.5 arrays of n)
    source = ("sum(exp(-(tanh(sin(x) * cos(x) + x) * 0.5 + 1.0) ** 2 / (1.0 + x * x)) * sqrt(x * x + 1.0)"
              " + sigmoid(x) * x)")
    n = 2 * N
    f = Function(source)
    x = np.linspace(-2, 2, n)
    f.grad_result({"x": x})                                  # the first call: plain
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        f.grad_result({"x": x})                              # the second: records and checks
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert any(f.traces.values()) and peak < 30 * 8 * n, peak / (8 * n)
