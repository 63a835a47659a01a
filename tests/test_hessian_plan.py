"""A replayed Hessian's planned sweep (diff/hessian_plan.py): recorded at one point, replayed at
others, it gives the bound sweep's numbers to the bit (and so the interpreter's to rounding);
where a raw value of the sweep could depend on the point, no plan is made."""
import numpy as np
import pytest

from autodiff.engine.diff import hessian_plan, replay_higher
from autodiff.engine.diff.function import Function
from autodiff.engine.diff.bits import same_bits
from test_replay import POINTS, TABLE_CASES
from test_replay_higher import assert_close, pick
from autodiff.engine.diff import higher


def trace_of(f):
    (trace,) = f.traces.values()
    return trace


def plans_of(f) -> list:
    return [plan for key, plan in trace_of(f).annotations.items() if key[0] == "hessian"]


def planned_and_bound(f, first, second, wrt=None):
    """f's Hessian at `second` by the plan recorded at `first`, and by the bound sweep."""
    for _ in range(3):                     # interpreted, trace recorded, plan recorded
        f.hessian(first, wrt=wrt)
    planned = f.hessian(second, wrt=wrt)
    for key in [key for key in trace_of(f).annotations if key[0] == "hessian"]:
        trace_of(f).annotations[key] = False
    return planned, f.hessian(second, wrt=wrt)


def assert_same_bits(ours, theirs):
    for a in theirs:
        for b in theirs[a]:
            assert same_bits(ours[a][b], theirs[a][b]), (a, b)


@pytest.mark.parametrize("expr", TABLE_CASES)
@pytest.mark.parametrize("points", range(len(POINTS)))
def test_a_planned_hessian_is_the_bound_sweeps_to_the_bit(expr, points):
    first, second = POINTS[points]
    f = Function(expr)
    first, second = pick(f.target, first), pick(f.target, second)
    try:
        planned, bound = planned_and_bound(f, first, second)
    except Exception:                      # the interpreter's error: tests/test_replay_higher.py's
        return
    assert_same_bits(planned, bound)


STRUCTURED = ["sum(x ** 2 * sin(x)) + log(sum(exp(x))) + sum(x) ** 3",
              "sum(tanh(x) * cos(x)) * sum(x * x) - sum(x / (2.0 + x))",
              "log(sum(exp(x - 1.0))) / sum(x * x + 1.0) + sum(-x) * sum(sinh(x) * cosh(x))",
              "sum(arctan(x) * log(2.0 + x) - tan(x * 0.5)) * sum(x ** 0.0 * x) + sum(reshape(x, (4, 6)) ** 3)",
              "sum(exp(x) * sum(x)) + log10(sum(x * x) + 1.0) * log2(3.0 + sum(x))",
              "sum(sum(transpose(reshape(x, (4, 6))), axis=0) ** 2) * sum(x)"]


@pytest.mark.parametrize("expr", STRUCTURED)
def test_a_structured_plan_replays_at_other_points_to_the_bit(expr):
    first = {"x": np.linspace(-1.0, 1.0, 24)}
    f = Function(expr)
    for second in ({"x": np.linspace(-0.7, 1.3, 24)}, {"x": np.where(np.arange(24) % 3 == 0, 0.0, 0.4)}):
        planned, bound = planned_and_bound(f, first, second)
        assert plans_of(f) == [False]                   # (set so by planned_and_bound)
        assert_same_bits(planned, bound)
        assert_close(planned, higher.hessian(None, second, None, target=f.target).hessian)
        trace_of(f).annotations.clear()


def test_the_benchmarks_hessian_plans_once_and_replays_without_the_sweep(monkeypatch):
    f = Function(STRUCTURED[0])
    at = {"x": np.linspace(-1.0, 1.0, 200)}
    for _ in range(3):
        f.hessian(at)
    (plan,) = plans_of(f)
    assert isinstance(plan, hessian_plan.HessianPlan) and plan.binds()

    def no_sweep(*args):
        raise AssertionError("a planned Hessian ran the bound sweep")
    monkeypatch.setattr(replay_higher, "planned_adjoints", no_sweep)
    replays = f.replays
    moved = {"x": at["x"] * 1.03 + 0.01}
    planned = f.hessian(moved)
    assert f.replays == replays + 1 and plans_of(f) == [plan]
    monkeypatch.undo()
    trace_of(f).annotations[("hessian", (0,))] = False
    assert_same_bits(planned, f.hessian(moved))


@pytest.mark.parametrize("source, at, wrt", [
    ("sum(x * x) * y", {"x": np.linspace(0, 1, 20), "y": 2.0}, ["x"]),          # y does not move
    ("sum(abs(x) * x)", {"x": np.linspace(-1, 1, 20)}, None),                    # a kink-noting step
    ("sum(x ** y)", {"x": np.linspace(0.5, 1, 20), "y": 2.5}, None),             # a traced exponent
    ("sum(maximum(x, 0.5) * x)", {"x": np.linspace(0, 1, 20)}, None),            # not a planned step
])
def test_no_plan_where_a_raw_value_could_depend_on_the_point(source, at, wrt):
    f = Function(source)
    moved = {k: v * 1.03 + 0.01 for k, v in at.items()}
    for _ in range(3):
        f.hessian(at, wrt=wrt)
    assert plans_of(f) in ([], [False])
    assert_close(f.hessian(moved, wrt=wrt), higher.hessian(None, moved, wrt, target=f.target).hessian)


def test_an_assembly_that_overflows_is_left_to_the_interpreter():
    """The terms of a structured stack are finite, their products may not be: a magnitude bound
    over the largest float makes the assembled rows checked, and an inf there is interpreted."""
    f = Function("sum(x * 1e200) * sum(x * 1e200)")
    at = {"x": np.full(20, 1e-201)}
    for _ in range(3):
        f.hessian(at)
    replays = f.replays
    moved = {"x": np.full(20, 2e-201)}
    theirs = higher.hessian(None, moved, None, target=f.target).hessian
    assert np.isinf(theirs["x"]["x"]).all()
    assert_close(f.hessian(moved), theirs)
    assert f.replays == replays                          # the interpreter answered


def test_magnitude_bound():
    from autodiff.engine.core.tangent_stack import TangentStack
    stack = TangentStack(4, (4,), ((0, np.array([1.0, -3.0, 2.0, 0.0])),), ((np.array([2.0, -5.0, 0.0, 1.0]), 0.5),))
    assert stack.magnitude_bound() >= np.abs(stack.dense()).max()
    assert stack.magnitude_bound() == 3.0 + 5.0 * 0.5


DENSE = "sum(sin(transpose(reshape(x, (3, 4)))) * exp(transpose(reshape(x, (3, 4)))))"   # transpose: dense


def test_a_sweep_on_dense_stacks_keeps_the_bound_sweep(monkeypatch):
    # on dense stacks the dispatch a plan saves is nothing beside the arrays' work, and the plan
    # held every step's stack to the end: 1,130 against 550 MiB and 2.8 against 0.85 s at 2,000
    monkeypatch.setattr(hessian_plan, "PLAN_DENSE_MAX_ELEMENTS", 10)
    f = Function(DENSE)
    x = np.linspace(0.1, 1.0, 12)
    for _ in range(4):
        got = f.hessian({"x": x})
    assert plans_of(f) == [False]
    assert_close(got, higher.hessian(None, {"x": x}, target=f.target).hessian)


def test_a_planned_sweep_drops_each_adjoint_once_passed_on():
    """The planned sweep is the one sweep: it keeps no adjoint past the equation that passes it
    on (only the leaves' remain); a replayed VJP's binds live as long as its call."""
    f = Function("sum(x ** 2.0 * sin(x)) + sum(exp(x)) * sum(x)")
    x = np.linspace(-1.0, 1.0, 50)
    for _ in range(3):
        f.hessian({"x": x})
    (plan,) = plans_of(f)
    trace = trace_of(f)
    kept = []
    sweep = hessian_plan.sweep_equations

    def keeping(*args, **kwargs):
        kept.append(sweep(*args, **kwargs))
        return kept[-1]
    hessian_plan.sweep_equations = keeping
    try:
        f.hessian({"x": x * 0.9})
    finally:
        hessian_plan.sweep_equations = sweep
    (adjoints,) = kept
    assert adjoints[0] is not None and adjoints[trace.leaves:] == [None] * (len(adjoints) - trace.leaves)
    assert plan.count == len(plan.binds()) > 0


def test_the_plan_is_an_annotation_per_equation_of_the_program():
    """Issue 28 item 1: the Hessian plan's binds sit at the equation whose VJP made them, down
    the trace's Program (the sweep's accumulation is the sweep's own); no second list of steps."""
    f = Function("sum(sin(x) * exp(x))")
    x = np.linspace(-1.0, 1.0, 5)
    for _ in range(3):
        f.hessian({"x": x})
    (plan,) = plans_of(f)
    trace = trace_of(f)
    assert len(plan.at) == len(trace.equations)
    by_equation = {trace.equations[i].prim.name: {b[0].name for b in plan.binds(i)}
                   for i, step in enumerate(plan.at) if plan.binds(i)}
    assert set(by_equation) == {"sin", "exp", "mul"}        # sum's VJP broadcasts a raw seed: no bind
    assert "cos" in by_equation["sin"] and "mul" in by_equation["exp"]
    assert plan.count == len(plan.binds()) == sum(len(plan.binds(i)) for i in range(len(plan.at)))
    moved = {"x": x * 1.1}
    planned = f.hessian(moved)
    expected = np.diag(2.0 * np.cos(moved["x"]) * np.exp(moved["x"]))
    np.testing.assert_allclose(planned["x"]["x"], expected, rtol=1e-13, atol=1e-15)


def test_the_planned_hessian_is_the_one_reverse_sweep(monkeypatch):
    """Issue 28 item 2: a replayed Hessian's plan is swept by core/tape.py's one reverse sweep over
    the trace's Program (its steps, whose VJPs replay the recorded binds), not a loop of its own:
    every pass, recorded or planned, goes through the sweep's loop, and the Hessian is the bound
    sweep's to the bit."""
    from autodiff.engine.core import tape as tape_module
    swept = []
    loop = tape_module._sweep

    def counted(steps, adj, dropped, top, bottom, *rest):
        swept.append({type(steps[i]).__name__ for i in range(top, bottom - 1, -1) if steps[i] is not None})
        return loop(steps, adj, dropped, top, bottom, *rest)
    monkeypatch.setattr(tape_module, "_sweep", counted)
    f = Function(STRUCTURED[0])
    at = {"x": np.linspace(-1.0, 1.0, 40)}
    for _ in range(3):                     # interpreted, trace recorded, plan recorded
        f.hessian(at)
    (plan,) = plans_of(f)
    assert isinstance(plan, hessian_plan.HessianPlan)
    del swept[:]
    moved = {"x": at["x"] * 0.97 - 0.02}
    planned = f.hessian(moved)
    assert swept == [{"PlannedStep"}]
    trace_of(f).annotations[("hessian", (0,))] = False
    assert_same_bits(planned, f.hessian(moved))
    np.testing.assert_allclose(planned["x"]["x"], higher.hessian(None, moved, None, target=f.target).hessian["x"]["x"],
                               rtol=1e-12, atol=1e-12)


def test_the_planned_sweeps_add_is_the_forward_mode_add_to_the_bit():
    """The planned sweep's `add` hook (hessian_plan.planned_add) writes out the batched bind of add
    for two Duals of one level and shape (no dispatch); anything else goes through `accumulate`'s
    dispatch. Either way the sum is the one `accumulate` gives (the recorded sweep's), to the bit."""
    from autodiff.engine.core.accumulate import accumulate
    from autodiff.engine.core.batch import batched
    from autodiff.engine.core.tangent_stack import TangentStack
    from autodiff.engine.core.tape import BATCHED, Dual, new_level

    def dense(t):
        return t.dense() if isinstance(t, TangentStack) else t

    def same(r, expected):
        assert r.__class__ is expected.__class__ is Dual and r.level == expected.level
        assert same_bits(r.primal, expected.primal)
        assert type(r.tangent) is type(expected.tangent) and same_bits(dense(r.tangent), dense(expected.tangent))

    level, k = new_level(), 4
    x = np.array([0.1, -2.5, 3.0, 1e-300])
    with batched(level, k, structured=True):
        binds = []
        inner = BATCHED[level]
        BATCHED[level] = lambda prim, args, params: binds.append(prim.name) or inner(prim, args, params)
        cases = [
            (Dual(x, TangentStack.identity(k, (4,)), level),                    # one shape: written out
             Dual(np.sin(x) / 3.0, TangentStack.outer(np.arange(1.0, 5.0), (4,)), level), True),
            (Dual(0.25, np.arange(4.0) / 7.0, level), Dual(-1.5, np.ones(4) / 3.0, level), True),   # floats
            (Dual(x, TangentStack.identity(k, (4,)), level),                    # broadcast: the bind
             Dual(np.array([2.0]), np.arange(4.0).reshape(4, 1), level), False),
            (Dual(x, TangentStack.identity(k, (4,)), level), x * 0.5, False),    # a raw contribution
        ]
        for prev, contrib, written_out in cases:
            del binds[:]
            got = hessian_plan.planned_add(prev, contrib)
            assert binds == ([] if written_out else ["add"])
            same(got, accumulate(prev, contrib))


def replanned(f, at, moved):
    """(the trace, its Hessian plan made afresh at `at`, the bound sweep's Hessian at `moved`),
    after checking the planned Hessian at `moved` is the bound one to the bit."""
    planned, bound = planned_and_bound(f, at, moved)
    assert_same_bits(planned, bound)
    trace = trace_of(f)
    for key in list(trace.annotations):
        if key[0] == "hessian":
            del trace.annotations[key]
    for _ in range(2):
        f.hessian(at)
    (plan,) = plans_of(f)
    return trace, plan, bound


def test_a_vjp_that_gives_its_adjoint_is_planned_as_a_pass_through():
    """A recorded VJP that made no bind and gave its adjoint as it is (add's, whose adjoint here
    is the raw seed, the same at every pass) is planned as a VJP without binds that gives the
    adjoint it is called with, the object itself; the Hessian stays the bound sweep's to the bit."""
    f = Function("sum(x ** 2 * sin(x)) + log(sum(exp(x))) + sum(x) ** 3")
    at, moved = {"x": np.linspace(-1.0, 1.0, 10)}, {"x": np.linspace(-0.9, 1.2, 10)}
    trace, plan, bound = replanned(f, at, moved)
    adds = [i for i, step in enumerate(plan.at) if step is not None and trace.equations[i].prim.name == "add"]
    assert len(adds) == 2
    g = object()
    for i in adds:
        parents, vjps, float_vjps = plan.at[i].run[:3]
        assert [pos for pos, _ in parents] == [0, 1] and vjps is float_vjps
        assert plan.binds(i) == [] and all(vjps[pos](g, None, [], 0, 1, False) is g for pos in (0, 1))
    assert_same_bits(f.hessian(moved), bound)


def test_a_replayed_vjp_whose_bind_reads_an_older_result_keeps_the_results():
    """A replayed VJP reads the previous bind's result from its locals; where a bind reads an
    older one (div's VJP at its denominator), the results are kept, and the Hessian is still the
    bound sweep's to the bit."""
    f = Function("sum(x / (1.0 + x * x))")
    at, moved = {"x": np.linspace(0.5, 1.5, 6)}, {"x": np.linspace(0.4, 1.7, 6)}
    trace, plan, bound = replanned(f, at, moved)
    older = [(i, b) for i, step in enumerate(plan.at) if step is not None
             for vjp in step.run[1] if vjp is not None
             for b, (_, _, _, arguments, _) in enumerate(vjp.binds) if any(-2 - b < s < -2 for s, _ in arguments)]
    assert older and all(trace.equations[i].prim.name == "div" for i, _ in older)
    assert_same_bits(f.hessian(moved), bound)
