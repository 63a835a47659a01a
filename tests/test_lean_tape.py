"""Issue 11, lean memory: the tape keeps only what each rule reads, and adjoints accumulate in
place only into buffers the sweep owns (never a user's array, a seed, or a value still kept)."""
import sys
import tracemalloc

import numpy as np

from autodiff.engine import api
from autodiff.engine.core import accumulate as accumulation
from autodiff.engine.core import ops
from autodiff.engine.core.tape import Shape, Tape, backward
from autodiff.engine.diff import reverse
from test_fused_regions import CHAIN       # benchmarks/_reference_arrays.CHAIN

N = 1 << 16                                       # above accumulate's in-place threshold


def entries_by_prim(tape):
    return {e.prim.name: e for e in tape.entries if e is not None and e.prim is not None}


def test_rules_written_in_their_output_keep_no_argument():
    tape = Tape()
    x = tape.watch(np.linspace(0.1, 1.0, 5))
    out = ops.sum(ops.tanh(ops.exp(ops.sqrt(x + 1.0))) * 3.0)
    kept = entries_by_prim(tape)
    for name in ("tanh", "exp", "sqrt"):
        assert isinstance(kept[name].args[0], Shape) and kept[name].ans is not None
    assert isinstance(kept["mul"].args[0], Shape) and kept["mul"].args[1] == 3.0   # tanh(...) not kept twice
    g = backward(tape, out, 1.0)[0]
    s = np.sqrt(np.linspace(0.1, 1.0, 5) + 1.0)
    np.testing.assert_allclose(g, 3.0 * (1 - np.tanh(np.exp(s)) ** 2) * np.exp(s) * 0.5 / s)


def test_pow_by_a_constant_keeps_no_output_and_div_keeps_the_divisor():
    tape = Tape()
    x = tape.watch(np.linspace(0.5, 2.0, 4))
    ops.sum(ops.div(ops.pow(x, 3.0), 7.0))
    kept = entries_by_prim(tape)
    assert kept["pow"].ans is None
    assert isinstance(kept["div"].args[0], Shape) and kept["div"].args[1] == 7.0


def test_graph_tapes_still_keep_everything():
    r = api.grad("sum(x ** 3.0 / 7.0)", at={"x": np.linspace(0.5, 2.0, 4)}, keep_tape=True)
    pow_entry = entries_by_prim(r.tape)["pow"]
    assert pow_entry.ans is not None and not isinstance(pow_entry.args[0], Shape)


def test_in_place_accumulation_never_writes_the_users_seed_or_inputs():
    x = np.linspace(-1, 1, N)
    seed = np.full(N, 2.0)
    before_x, before_seed = x.copy(), seed.copy()
    r = api.grad("x + x + x", at={"x": x}, seed=seed)
    np.testing.assert_array_equal(r.gradient["x"], 3 * before_seed)
    np.testing.assert_array_equal(seed, before_seed)
    np.testing.assert_array_equal(x, before_x)


def chain_peak(x, target):
    """An interpreted gradient's extra peak (a Function's plain run: its second call records a
    trace, which keeps every value, the price of the replays after it)."""
    reverse.grad(None, {"x": x}, target=target)            # warm up (imports, caches)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = reverse.grad(None, {"x": x}, target=target)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return result.gradient["x"], peak / (8 * x.size)


def test_in_place_accumulation_is_taken_and_agrees(monkeypatch):
    x = np.linspace(-2, 2, N)
    for source, saved in ((CHAIN, 0.0), ("sum(x * x)", 0.9)):   # x*x: g*x + x*g makes no third array
        target = api.load(source)
        monkeypatch.setattr(accumulation, "INPLACE_MIN_ELEMENTS", 10 ** 12)       # never in place
        expected, peak_without = chain_peak(x, target)
        monkeypatch.setattr(accumulation, "INPLACE_MIN_ELEMENTS", 1 << 14)
        got, peak_with = chain_peak(x, target)
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)
        assert peak_with <= peak_without - saved + 0.01


def test_a_buffer_someone_else_holds_is_not_written():
    assert accumulation.calibrate()                         # this interpreter counts as OWNED_REFS says
    held = np.ones(N)
    adjoints = [held]
    contribution = np.ones(N)
    out = accumulation.accumulate(adjoints[0], contribution)
    assert out is not held                                  # (the fresh contribution may be reused)
    np.testing.assert_array_equal(held, 1.0)
    adjoints = [np.ones(N)]                                 # only the adjoint list holds it
    contribution = np.ones(N)
    kept = [contribution]                                   # and the contribution is held too
    out = accumulation.accumulate(adjoints[0], contribution)
    assert out is adjoints[0]
    np.testing.assert_array_equal(out, 2.0)


def test_the_chain_gradient_keeps_its_peak_memory_lean():
    _, arrays = chain_peak(np.linspace(-2, 2, N), api.load(CHAIN))
    assert arrays <= 12.5, f"extra peak {arrays:.1f} arrays of n (21.1 before issue 11)"


def test_where_keeps_its_condition_not_its_branches():
    """where's VJPs read only its condition (its `reads` fact): a lean tape keeps stand-ins of the
    branches (GradBench's ode, `np.where(i == 0, x, x * y_rot)`: before, every x * y_rot kept)."""
    tape = Tape()
    x = tape.watch(np.linspace(-1.0, 1.0, 6))
    c = np.arange(6) % 2 == 0
    out = ops.sum(ops.where(c, x, x * x))
    kept = entries_by_prim(tape)["where"]
    assert kept.args[0] is c and isinstance(kept.args[1], Shape) and isinstance(kept.args[2], Shape)
    g = backward(tape, out, 1.0)[0]
    assert g.tobytes() == np.where(c, 1.0, 2.0 * np.linspace(-1.0, 1.0, 6)).tobytes()


def test_the_entry_a_tape_records_keeps_what_a_replays_plan_rebuilds():
    # plain_entry (the hot path) and lean_args (a replay's sweep plan) both state what the lean
    # tape keeps; over every table entry and every nonempty set of traced positions, with arrays,
    # numbers and a box among the arguments, they keep the same things
    from itertools import combinations
    from autodiff.engine.core.rules import TABLE
    from autodiff.engine.core.tape import lean_args, plain_entry
    kinds = (np.arange(4.0), 2.5, 3)
    checked = 0
    for prim in set(TABLE.values()):
        arity = prim.arity if prim.arity and prim.arity <= 3 else 2
        if prim.nondiff:
            continue
        for args in ((kinds[0],) * arity, tuple(kinds[i % 2] for i in range(arity))):
            for count in range(1, arity + 1):
                for traced in combinations(range(arity), count):
                    if any(prim.vjps[pos] is None for pos in traced) or (prim.reads is not None
                                                                          and len(prim.reads) < arity):
                        continue
                    parents = tuple((pos, pos) for pos in traced)
                    kept = plain_entry(prim, parents, args, 1.0, None).args   # float ans: no fused swap
                    rebuilt = lean_args(prim, parents, args)
                    assert len(kept) == len(rebuilt), prim.name
                    for a, b in zip(kept, rebuilt):
                        same = a is b or (isinstance(a, Shape) and isinstance(b, Shape)
                                          and a.shape == b.shape and a.dtype == b.dtype)
                        assert same, (prim.name, traced)
                    checked += 1
    assert checked > 100


def test_what_every_traced_position_reads_is_the_union_of_each_ones_facts():
    # vjp_reads where every argument is traced (x * x) takes the entry's Primitive.reads_all: it
    # is what the traced positions read one by one, together
    from autodiff.engine.core.rules import TABLE
    from autodiff.engine.core.tape import vjp_reads
    checked = 0
    for prim in set(TABLE.values()):
        if prim.reads is None:
            assert prim.reads_all is None
            continue
        alone = [vjp_reads(prim, ((pos, pos),)) for pos in range(len(prim.reads))]
        together = vjp_reads(prim, tuple((pos, pos) for pos in range(len(prim.reads))))
        assert together == (frozenset().union(*(p for p, _ in alone)), any(a for _, a in alone)), prim.name
        checked += 1
    assert checked >= 4                                     # mul, div, pow, where state theirs
