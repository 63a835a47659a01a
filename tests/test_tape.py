"""The tape: a Wengert list swept backwards without recursion, levels for nested derivatives,
symbolic zeros, freeing as the sweep passes, and stop_gradient."""
import math

import numpy as np
import pytest

import autodiff
from autodiff.engine.core import ops
from autodiff.engine.core import rules
from autodiff.engine.core.tape import Dual, Tape, backward, bind, new_level, strip


def grad_of(f, x, seed=1.0):
    tape = Tape()
    v = tape.watch(x)
    out = f(v)
    g = backward(tape, out, seed)[v.index]
    return out, g


def test_entries_are_recorded_in_execution_order_with_parents():
    tape = Tape()
    x, y = tape.watch(2.0), tape.watch(3.0)
    a = x * y
    b = ops.sin(a)
    c = b + x
    assert [e.prim.name if e.prim else "leaf" for e in tape.entries] == ["leaf", "leaf", "mul", "sin", "add"]
    assert tape.entries[2].parents == ((0, x.index), (1, y.index))
    assert tape.entries[4].parents == ((0, b.index), (1, x.index))
    assert (a.index, b.index, c.index) == (2, 3, 4)


def test_a_constant_argument_is_not_a_parent():
    tape = Tape()
    x = tape.watch(2.0)
    y = 3.0 * x
    assert tape.entries[y.index].parents == ((1, x.index),)


def test_adjoints_accumulate_over_every_use():
    out, g = grad_of(lambda x: x * x * x + x, 2.0)
    assert strip(out) == 10.0 and g == 3 * 4.0 + 1


def test_a_long_chain_is_swept_without_recursion():
    steps = 100_000

    def f(x):
        for _ in range(steps):
            x = x * 1.00001
        return x
    out, g = grad_of(f, 1.0)
    assert g == pytest.approx(1.00001 ** steps, rel=1e-9)


def test_output_that_does_not_depend_on_the_tape_gives_symbolic_zeros():
    tape = Tape()
    x = tape.watch(2.0)
    adj = backward(tape, 5.0, 1.0)
    assert adj == [None]
    y = tape.watch(1.0)
    out = x * 2.0
    adj = backward(tape, out, 1.0)
    assert adj[x.index] == 2.0 and adj[y.index] is None


def test_unconnected_inputs_are_reported_with_an_exact_zero():
    r = autodiff.grad("x * 2 + 0 * sum(detach(y))", at={"x": 1.0, "y": [1.0, 2.0]})
    assert r.unconnected == ["y"]
    assert r.gradient["y"].tolist() == [0.0, 0.0] and r.gradient["x"] == 2.0


def test_non_persistent_tape_frees_entries_as_it_sweeps():
    tape = Tape()
    x = tape.watch(np.array([1.0, 2.0]))
    out = ops.sum(ops.exp(x) * x)
    backward(tape, out, 1.0)
    assert all(e is None for e in tape.entries[x.index + 1:])


def test_persistent_tape_can_be_swept_again_with_the_same_result():
    tape = Tape(persistent=True, keep_values=True)
    x = tape.watch(np.array([1.0, 2.0]))
    y = ops.sin(x) * x
    first = [backward(tape, ops.getitem(y, i), 1.0)[x.index] for i in range(2)]
    again = backward(tape, ops.getitem(y, 0), 1.0)[x.index]
    np.testing.assert_array_equal(first[0], again)
    jac = np.array([strip(row) for row in first])
    expected = np.diag(np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0]))
    np.testing.assert_allclose(jac, expected, rtol=1e-15)
    assert tape.entries[y.index].value is not None           # graph views can read node values


def test_only_what_a_rule_needs_is_saved():
    tape = Tape()
    x = tape.watch(np.ones(3))
    s = x + 1.0
    entry = tape.entries[s.index]
    assert not isinstance(entry.args[0], np.ndarray)      # add needs only the shapes
    assert entry.ans is None
    e = ops.exp(x)
    assert tape.entries[e.index].ans is not None           # exp reuses its output


# ---- levels: nested derivatives without perturbation confusion ----------------------------------

def test_no_perturbation_confusion_reverse_over_reverse():
    # d/dx (x * d/dy (x + y)) = d/dx (x * 1) = 1, not 2
    outer = Tape()
    x = outer.watch(3.0)
    inner = Tape()
    y = inner.watch(5.0)
    dy = backward(inner, x + y, 1.0)[y.index]
    out = x * dy
    assert strip(backward(outer, out, 1.0)[x.index]) == 1.0


def test_no_perturbation_confusion_forward_over_forward():
    lx, ly = new_level(), new_level()
    x = Dual(3.0, 1.0, lx)
    y = Dual(5.0, 1.0, ly)
    inner = x + y                          # d/dy: the tangent at level ly
    dy = inner.tangent
    out = x * dy
    assert out.tangent == 1.0


def test_forward_mode_tangents():
    level = new_level()
    out = ops.sin(Dual(0.5, 1.0, level)) * 2.0
    assert out.primal == 2 * math.sin(0.5) and out.tangent == 2 * math.cos(0.5)


def test_second_and_third_derivatives_by_nesting():
    def nth(f, x, n):
        tapes, boxes = [], []
        v = x
        for _ in range(n):
            tapes.append(Tape())
            v = tapes[-1].watch(v)
            boxes.append(v)
        out = f(v)
        for tape, box in zip(reversed(tapes), reversed(boxes)):
            out = backward(tape, out, 1.0)[box.index]
        return strip(out)
    assert nth(ops.sin, 0.7, 1) == pytest.approx(math.cos(0.7), rel=1e-15)
    assert nth(ops.sin, 0.7, 2) == pytest.approx(-math.sin(0.7), rel=1e-15)
    assert nth(ops.sin, 0.7, 3) == pytest.approx(-math.cos(0.7), rel=1e-15)
    assert nth(lambda x: x ** 4.0, 2.0, 3) == pytest.approx(24 * 2.0, rel=1e-15)
    assert nth(ops.exp, 1.0, 4) == pytest.approx(math.e, rel=1e-15)


def test_mixed_second_derivative():
    # d2/dxdy (x**2 * y) = 2x
    outer = Tape()
    x = outer.watch(3.0)
    inner = Tape()
    y = inner.watch(4.0)
    dfdy = backward(inner, x ** 2.0 * y, 1.0)[y.index]
    assert strip(backward(outer, dfdy, 1.0)[x.index]) == 6.0


def test_forward_over_reverse_gives_a_hessian_vector_product():
    level = new_level()
    x = Dual(np.array([1.0, 2.0]), np.array([1.0, 0.0]), level)   # direction e1
    tape = Tape()
    v = tape.watch(x)
    f = ops.sum(v * v * v)                       # Hessian = diag(6x)
    g = backward(tape, f, 1.0)[v.index]
    assert g.__class__ is Dual
    np.testing.assert_array_equal(g.primal, [3.0, 12.0])
    np.testing.assert_array_equal(g.tangent, [6.0, 0.0])


# ---- stop_gradient and boxes -------------------------------------------------------------------

def test_stop_gradient_cuts_every_level():
    outer = Tape()
    x = outer.watch(2.0)
    inner = Tape()
    y = inner.watch(x)
    cut = ops.stop_gradient(y * y)
    assert cut.__class__ is float and cut == 4.0
    out, g = grad_of(lambda v: ops.stop_gradient(v * v) * v, 3.0)
    assert g == 9.0


def test_bind_on_raw_values_records_nothing():
    assert bind(ops.mul.primitive, (2.0, 3.0), None) == 6.0
    tape = Tape()
    x = tape.watch(2.0)
    ops.mul(2.0, 3.0)
    assert len(tape) == 1 and x.index == 0


def test_boxes_are_truthy_by_their_value_and_strip_peels_all_levels():
    tape = Tape()
    v = tape.watch(0.0)
    assert not v and bool(tape.watch(2.0))
    inner = Tape()
    w = inner.watch(v)
    assert w.level > v.level and strip(w) == 0.0
    assert strip(Dual(Dual(1.5, 1.0, new_level()), 1.0, new_level())) == 1.5


def test_boxes_are_hashable_by_identity():
    tape = Tape()
    a, b = tape.watch(1.0), tape.watch(1.0)
    assert len({a, b}) == 2
    assert isinstance(a == b, bool) and (a == b) is True     # comparisons give plain values


# ---- the one sweep's hooks (issue 28 item 2) -----------------------------------------------------

BIG = 1 << 15                     # above core/accumulate.py's in-place threshold


def _repeated_uses(tape, x):
    """x used four times, so its adjoint accumulates (in place, where the sweep owns the buffer)."""
    return ops.sum(ops.sin(x) * x + x * 3.0 + ops.exp(x))


def test_a_hook_that_keeps_every_term_sees_it_unchanged_after_the_sweep():
    from autodiff.engine.core.tape import sweep
    x0 = np.linspace(-1.0, 1.0, BIG)
    told = []

    def on_step(i, pos, j, g, c):
        told.append((g, c, np.copy(g), np.copy(c)))
    tape = Tape(persistent=True)
    x = tape.watch(x0)
    out = _repeated_uses(tape, x)
    hooked = sweep(tape, out.index, 1.0, on_step=on_step)
    assert len(told) == 10 and all(c.shape == (BIG,) for _, c, _, _ in told)
    for g, c, g_then, c_then in told:                       # nothing kept was added into
        np.testing.assert_array_equal(g, g_then)
        np.testing.assert_array_equal(c, c_then)
    plain = backward(tape, out, 1.0)                        # the same adjoints as the plain sweep
    assert hooked[x.index].tobytes() == plain[x.index].tobytes()
    np.testing.assert_allclose(plain[x.index], np.cos(x0) * x0 + np.sin(x0) + 3.0 + np.exp(x0), rtol=1e-15)


def test_the_hooks_see_each_term_of_a_variadic_primitive_and_keep_every_adjoint():
    from autodiff.engine.core.tape import sweep
    tape = Tape(persistent=True)
    x, y = tape.watch(2.0), tape.watch(3.0)
    s = ops.stack([x * y, ops.sin(x), y])
    out = ops.sum(s * np.array([1.0, 10.0, 100.0]))
    terms = []
    kept = sweep(tape, out.index, 1.0, on_step=lambda i, pos, j, g, c: terms.append((i, pos, j)), keep=True)
    mul, sin, stack, times, total = range(2, 7)
    assert terms == [(total, 0, times), (times, 0, stack), (stack, 0, mul), (stack, 1, sin), (stack, 2, y.index),
                     (sin, 0, x.index), (mul, 0, x.index), (mul, 1, y.index)]
    assert all(a is not None for a in kept)                 # every adjoint stays, not only the leaves'
    np.testing.assert_array_equal(kept[stack], [1.0, 10.0, 100.0])
    assert (kept[x.index], kept[y.index]) == (10 * math.cos(2.0) + 3.0, 2.0 + 100.0)
    plain = backward(tape, out, 1.0)
    assert [a is None for a in plain] == [False, False] + [True] * 5   # the plain sweep drops them


def test_a_rerun_sweep_leaves_the_notes_as_it_found_them():
    from autodiff.engine.core.notes import NOTES
    from autodiff.engine.core.tape import sweep
    tape = Tape(persistent=True)
    x = tape.watch(np.array([0.0, 2.0]))
    out = ops.sum(ops.abs(x) * x)
    kinks, span = list(NOTES.kinks), NOTES.span
    sweep(tape, out.index, 1.0, keep=True, rerun=True)
    assert NOTES.kinks == kinks and NOTES.span is span


def test_a_planned_vjp_that_gives_its_adjoint_passes_the_adjoint_itself():
    """A PlannedStep's VJP that gives its adjoint as it is (diff/hessian_plan.py's, for add):
    the one sweep passes the adjoint itself on, adds it as any contribution (into a buffer it
    does not own: g stays as it was), and tells the hooks of it."""
    from autodiff.engine.core.tape import PlannedStep, sweep_equations
    g = np.array([1.0, -2.0, 0.5])
    seen = []

    def given(g, ans, *args):
        return g

    def twice(g, ans, *args):
        seen.append(args)
        return g * 2.0
    passed = PlannedStep((((0, 0),), (given,), (given,), (), None, False, None, None))
    adj = sweep_equations([None, passed], 1, g, 1, values=[])
    assert adj[0] is g
    both = PlannedStep((((0, 0), (1, 0)), (given, twice), (given, twice), ("a", "b"), None, False, None, None))
    told = []
    adj = sweep_equations([None, both], 1, g, 1, values=[], keep=True,
                          on_step=lambda i, pos, j, gi, c: told.append((i, pos, j, c is gi)))
    assert np.array_equal(adj[0], g + g * 2.0) and adj[1] is g
    assert np.array_equal(g, [1.0, -2.0, 0.5]) and seen == [("a", "b")]
    assert told == [(1, 0, 0, True), (1, 1, 0, False)]
    assert 1.0 + sweep_equations([None, passed], 1, 3.0, 1, values=[])[0] == 4.0     # a float adjoint: as it is


def test_a_nested_level_over_numbers_records_by_the_ops_float_path_without_a_bind(monkeypatch):
    """bind applies a unary or binary primitive to the values one level down by its op
    (Primitive.float_op): where those are boxes over Python floats (the first tape of a nested
    derivative over a number) the op's float fast path records the step itself, without a
    second bind (and its question whether the step may be pending); the entries, values and
    derivatives are the ones the bind recorded."""
    from autodiff.engine.core import tape as tape_module
    from autodiff.engine.diff.higher import derivatives
    calls = []
    inner = tape_module.bind

    def counted(prim, args, params):
        calls.append(prim.name)
        return inner(prim, args, params)
    monkeypatch.setattr(tape_module, "bind", counted)        # bind's own call one level down
    outer, inner_tape = Tape(), Tape()
    x = inner_tape.watch(outer.watch(0.5))
    y = ops.sin(x) * ops.exp(x)
    assert calls == []
    assert [e.prim.name for e in outer.entries[1:]] == ["sin", "exp", "mul"]
    assert [e.args for e in outer.entries[1:]] == [(0.5,), (0.5,), (math.sin(0.5), math.exp(0.5))]
    assert strip(y) == math.sin(0.5) * math.exp(0.5)
    monkeypatch.undo()
    got = derivatives("sin(x)*exp(x)", at={"x": 0.5}, order=4)
    # f = sin x e^x: f' = e^x (sin + cos), f'' = 2 e^x cos, f''' = 2 e^x (cos - sin), f'''' = -4 f
    e, s, c = math.exp(0.5), math.sin(0.5), math.cos(0.5)
    assert got.derivatives == pytest.approx([e * (s + c), 2 * e * c, 2 * e * (c - s), -4 * e * s], rel=1e-14)


def test_a_tape_that_watches_a_box_holds_no_lazy_values():
    """One rule says which tapes may hold pending values (core/lazy.py): a tape over boxes (a
    nested derivative's tapes after the first, a derivative taken inside a program) records
    boxes of the level below, never an array that may pend, so watching a box makes it plain;
    a tape over numbers or arrays stays lazy (x * A with a large constant A fuses there)."""
    outer = Tape()
    assert outer.lazy
    x = outer.watch(np.linspace(0.0, 1.0, 4))
    assert outer.lazy
    inner = Tape()
    inner.watch(x)
    assert not inner.lazy
    dual = Tape()
    dual.watch(Dual(2.0, 1.0, new_level()))
    assert not dual.lazy
    assert not Tape(persistent=True).lazy and not Tape(keep_values=True).lazy
