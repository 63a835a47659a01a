"""What a value or gradient replay holds (diff/replay_release.py): a value of the run only while
a later step or the reverse sweep reads it, by the table's facts (needs_args, needs_ans); the
replay stays the interpreter's to the bit."""
import numpy as np

from autodiff.engine.diff import large_trace, replay_release, reverse
from autodiff.engine.diff.function import Function
from test_replay import assert_same_gradient, same_number

ASSIGNMENTS = ("import numpy as np\n\ndef f(x):\n    A = np.zeros((40, 1000))\n    for i in range({n}):\n"
               "        A[i] = x * (i + 1.0)\n    return np.sum(A * A)\n")


def replayed_both_ways(path, n, count=4):
    """f of ASSIGNMENTS with n item assignments: every call's gradient and value the interpreter's,
    bit for bit."""
    path.write_text(ASSIGNMENTS.format(n=n))
    f = Function(str(path), "f")
    rng = np.random.default_rng(n)
    for _ in range(count):
        at = {"x": rng.normal(size=1000)}
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
        assert same_number(f.evaluate_result(at).value, reverse.evaluate(None, at, target=f.target).value)
    return f


def test_a_loop_of_item_assignments_holds_no_old_versions(tmp_path, monkeypatch):
    """GradBench's gmm (issue 28, task G item 1): each `A[i] = v` is an index_update, whose VJPs
    read neither argument, so its old version of A is read once, by the next assignment. The bytes
    a trace holds do not grow with the assignments (before: one (40, 1000) array per assignment,
    10 against 40 of them), and a trace over the budget for the versions keeps replaying."""
    monkeypatch.setattr(large_trace, "TRACE_MAX_BYTES", 2 * 1000 * 1000)    # under 40 versions' 12.8 MB
    assert replayed_both_ways(tmp_path / "program.py", 40).replays == 6
    monkeypatch.undo()
    held = []
    measured = replay_release.held_bytes
    monkeypatch.setattr(replay_release, "held_bytes", lambda trace, skipped=(): held.append(
        measured(trace, skipped)) or held[-1])
    for n in (10, 40):
        f = replayed_both_ways(tmp_path / "program.py", n)
        assert (f.replays, f.fallbacks) == (6, {})
    # zeros (a constant the trace keeps), A as read and as assigned (then A and A * A); x and
    # x * (i + 1). Not the recorded run's A, which A * A's equation recorded as its arguments: a
    # kept trace holds its constants, not the run's values (core/program.py's seal)
    assert held == [3 * 40 * 1000 * 8 + 2 * 1000 * 8] * 2


def test_a_released_replay_drops_only_what_no_step_and_no_sweep_reads(tmp_path):
    """The values a gradient replay drops are read by no later step and by no VJP: the plain
    replay (every value kept) and the releasing one give the same output and adjoints."""
    from autodiff.engine.diff.replay import replay_adjoints, replay_output, replay_values
    f = replayed_both_ways(tmp_path / "program.py", 12, count=3)
    trace = next(t for t in f.traces.values() if t)
    at = [np.random.default_rng(3).normal(size=1000)]
    full, lean = replay_values(trace, at), replay_values(trace, at, release=[0])
    dropped = [j for j, v in enumerate(lean) if v is None]
    assert len(dropped) >= 12 and all(full[j] is not None for j in dropped)
    assert same_number(replay_output(trace, full), replay_output(trace, lean))
    _, want = replay_adjoints(trace, full, 1.0, [0])
    _, got = replay_adjoints(trace, lean, 1.0, [0])
    assert want[0].tobytes() == got[0].tobytes()


def test_drivers_that_read_every_value_do_not_replay_a_trace_whose_every_value_is_over_the_budget(tmp_path, monkeypatch):
    """A trace kept for what a value or a gradient replay holds: n-th derivatives (Hessians,
    forward tangents), which replay keeping every value, take the interpreter where the whole
    run is more than a trace may hold (the bound a trace was kept by before), bit-equal."""
    from autodiff.engine.diff import higher
    monkeypatch.setattr(large_trace, "TRACE_MAX_BYTES", 2 * 1000 * 1000)    # 40 versions: 12.8 MB
    path = tmp_path / "program.py"
    path.write_text(ASSIGNMENTS.format(n=40).replace("x * (i + 1.0)", "x * s * (i + 1.0)").replace("f(x)", "f(x, s)"))
    f = Function(str(path), "f")
    at = {"x": np.linspace(-1.0, 1.0, 1000), "s": 0.5}
    for _ in range(3):
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    assert f.replays == 1
    for _ in range(2):
        ours = f.derivatives_result(at, 2, wrt="s")
        assert ours.derivatives == higher.derivatives(None, at, 2, target=f.target, wrt="s").derivatives
    assert f.replays == 1 and f.fallbacks == {
        "a trace whose every value is more than a trace may hold (it replays values and gradients, which "
        "release them)": 2}
    monkeypatch.setattr(large_trace, "TRACE_MAX_BYTES", 16 * 1000 * 1000)
    f.derivatives_result(at, 2, wrt="s")
    assert f.replays == 2


def test_a_small_replay_keeps_every_value_and_a_large_one_releases(tmp_path):
    """Releasing costs each step a look at its list: a replay releases only where keeping every
    value would hold RELEASE_FROM_BYTES or more (ode at 4 replayed 84 -> 88 us releasing)."""
    from autodiff.engine.diff.replay import replay_values
    for n, width, releases in ((3, 10, False), (3, 20000, True)):
        path = tmp_path / f"program{width}.py"
        path.write_text(f"import numpy as np\n\ndef f(x):\n    A = np.zeros(({n}, {width}))\n"
                        f"    for i in range({n}):\n        A[i] = x * (i + 1.0)\n    return np.sum(A * A)\n")
        f = Function(str(path), "f")
        at = {"x": np.linspace(0.5, 1.5, width)}
        for _ in range(3):
            f.grad_result(at)
        assert f.replays == 1
        (trace,) = [t for t in f.traces.values() if t]
        assert replay_release.releases(trace) is releases
        values = replay_values(trace, [at["x"]], release=[0])
        assert any(v is None for v in values) is releases


def test_an_ode_shaped_trace_holds_what_the_lean_tape_holds_and_replays(tmp_path, monkeypatch):
    """GradBench's ode (issue 28, task O): s Runge-Kutta steps of `np.where(i == 0, x, x * y_rot)`.
    A releasing replay of its gradient in x holds the values that gradient's sweep reads by the
    table's facts, as the interpreter's lean tape keeps them (core/tape.py's vjp_reads): y_rot
    (mul reads it), not x * y_rot (where reads only its condition), nor the k's (mul reads the
    traced step h / 2 only for the derivative in s, not watched). Its trace keeps its constants
    (the masks i == 0, zeros and its roll), not the recorded run's values; what a replay holds
    beyond the lean tape is within a budget under the lean tape's own figure, so it is kept and
    replays, to the interpreter's bits (before: the replay kept every argument of mul and where
    and the k's, and the trace the run's values: over the budget, every call interpreted)."""
    from autodiff.engine.diff import trace_cache
    from autodiff.engine.diff.replay import replay_values
    from test_replay_heldout import gradbench_heldout_program
    n, s = 2000, 10
    path = tmp_path / "ode.py"
    path.write_text(gradbench_heldout_program("ode"))
    lean = []
    sweep = reverse.sweep

    def lean_tape(tape, out, seed, target):     # what the interpreter's tape holds as its sweep starts
        lean.append(trace_cache.distinct_bytes([a for e in tape.entries for a in (*e.args, e.ans, e.value)]))
        return sweep(tape, out, seed, target)
    monkeypatch.setattr(reverse, "sweep", lean_tape)
    monkeypatch.setattr(large_trace, "TRACE_MAX_BYTES", 1 << 18)      # 256 KiB, under the lean tape's 736,000
    f = Function(str(path))
    for k in range(4):
        at = {"x": np.random.default_rng(k).random(n), "s": float(s)}
        assert_same_gradient(f.grad_result(at, ["x"]), reverse.grad(None, at, ["x"], target=f.target))
    assert (f.replays, f.fallbacks) == (2, {})
    # y_rot 40 times but once a constant (the roll of zeros), 40 masks of n bools, x
    assert lean[-1] == 40 * n * 8 + 40 * n + n * 8
    (entry,) = [e for e in f.traces.values() if e]
    trace = next(t for t in entry.traces.values() if t) if hasattr(entry, "traces") else entry
    assert trace_cache.kept_bytes(entry) == 40 * n + 2 * n * 8      # the masks, zeros and its roll
    values = replay_values(trace, [at["x"], at["s"]], release=[0])
    assert trace_cache.distinct_bytes(values) == 39 * n * 8 + n * 8     # the traced y_rot's, x


def test_a_value_a_guard_reads_is_released_after_that_guard(tmp_path, monkeypatch):
    """One last-use pass (`last_uses`, the batched replay's too): a value that only a guard reads
    (`y > 0.0` on y = x * 2.0, whose sweep reads 2.0, not y) is dropped once that guard is checked,
    not kept for the whole replay (before: every value a guard read was kept to the end)."""
    from autodiff.engine.diff.replay import replay_values
    monkeypatch.setattr(replay_release, "RELEASE_FROM_BYTES", 0)
    path = tmp_path / "program.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    y = x * 2.0\n    m = y > 0.0\n"
                    "    return np.sum(np.where(m, sin(x), 0.0))\n")
    f = Function(str(path))
    at = {"x": np.linspace(0.5, 1.5, 1000)}
    for _ in range(3):
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    assert f.replays == 1
    (entry,) = [e for e in f.traces.values() if e]
    trace = next(t for t in entry.traces.values() if t) if hasattr(entry, "traces") else entry
    assert [g.sources[0][0] for g in trace.guards] == [1]           # y, at position 1, is what the guard reads
    values = replay_values(trace, [at["x"]], release=[0])
    assert values[1] is None and values[0] is at["x"]
