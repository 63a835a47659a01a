"""Hardening III item 1 (core/ownership.py): every array the API hands out is its caller's alone:
no two results, no result and an argument, no result and a later call's result share memory,
whatever the entry point (grad with or without a seed, forward mode, jacobian, hessian,
derivatives, evaluate, a Function's calls, interpreted, recording or replayed) and whatever the
size (the buffer pool's lent arrays over 65,536 elements)."""
import numpy as np
import pytest

import autodiff
from autodiff.engine import api
from autodiff.engine.core import buffer_pool, fused

N = fused.FUSE_MIN_ELEMENTS


def arrays_of(obj, found=None) -> list:
    """Every numpy array a result hands out (its value and derivatives: not its echoed inputs)."""
    found = [] if found is None else found
    if isinstance(obj, np.ndarray):
        found.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            arrays_of(v, found)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            arrays_of(v, found)
    elif hasattr(obj, "__dataclass_fields__"):
        for name in ("value", "gradient", "jacobian", "hessian", "derivatives"):
            arrays_of(getattr(obj, name, None), found)
    return found


def assert_owned(results, arguments):
    """No two arrays of `results` (the results of one or several calls) share memory, nor does
    any of them share memory with an array of `arguments`."""
    handed = arrays_of(results)
    args = arrays_of(arguments)
    for i, a in enumerate(handed):
        assert a.flags.writeable, f"result {i} is read-only"
        for j in range(i):
            assert not np.shares_memory(a, handed[j]), f"results {j} and {i} share memory"
        for k, b in enumerate(args):
            assert not np.shares_memory(a, b), f"result {i} shares memory with argument {k}"


def scaled_twice_is_scaled_once(gradient, expected):
    for k in gradient:
        gradient[k] *= 0.5
    for k in gradient:
        np.testing.assert_array_equal(gradient[k], np.asarray(expected[k]) * 0.5)


def test_two_gradient_entries_are_two_arrays():
    at = {"x": np.array([1., 2.]), "y": np.array([3., 4.])}
    g = autodiff.grad("sum(x + y)", at=at).gradient
    assert g["x"] is not g["y"]
    scaled_twice_is_scaled_once(g, {"x": [1., 1.], "y": [1., 1.]})
    assert_owned(g, at)


@pytest.mark.parametrize("source", ["x", "reshape(x, (2, 2))", "transpose(x)", "x[:]", "x * 1.0"])
def test_a_gradient_is_never_the_callers_seed(source):
    x = np.arange(4.0).reshape(2, 2) if source.startswith("transpose") else np.arange(4.0)
    seed = np.arange(1.0, 5.0).reshape(2, 2) if source.startswith(("reshape", "transpose")) else np.arange(1.0, 5.0)
    kept = seed.copy()
    for mode, keep_tape in (("reverse", False), ("forward", False), ("reverse", True)):
        result = api.grad(source, at={"x": x}, seed=seed, mode=mode, keep_tape=keep_tape)
        assert_owned(result, {"x": x, "seed": seed})
        result.gradient["x"] *= 0.5
        np.testing.assert_array_equal(seed, kept)


def calls(f, at, seed):
    """Every entry point of a Function, once each (the Hessian of a scalar output)."""
    first = f.inputs[0]
    made = [f(at), f.grad(at), f.value_and_grad(at), f.grad(at, seed=seed), f.grad(at, wrt=[first]),
            f.jacobian(at), f.jacobian(at, mode="forward")]
    return made + ([f.hessian(at)] if np.ndim(made[0]) == 0 else [])


CONSTANT = """
def f(x, y):
    return ones(2) * 2
"""


@pytest.mark.parametrize("source", ["x + y * 0.0", "x + 0.0", "x * y", "maximum(x, y)", "x[:] + y[:]",
                                    "sum(x * y)", "sum(x) + sum(y) * 2", "program"])
def test_a_functions_calls_share_no_memory_from_call_to_call(source, tmp_path):
    # interpreted, recorded, then replayed (the third call on), and the compiled replay later on
    if source == "program":
        path = tmp_path / "constant.py"
        path.write_text(CONSTANT)
        source = str(path)
    f = autodiff.function(source)
    at = {k: v for k, v in {"x": np.array([1.0, 2.0]), "y": np.array([1.0, 3.0])}.items() if k in f.inputs}
    seed = np.array([1.0, 1.0]) if "sum" not in source else np.array(2.0)
    held = [calls(f, at, seed) for _ in range(5)]
    assert f.replays > 0
    assert_owned(held, [at, seed])


@pytest.mark.parametrize("source", ["x", "x[:]", "ones(3) * 2", "x * 2", "reshape(x, (3, 1))"])
def test_evaluate_and_grad_share_no_memory_from_call_to_call(source):
    x = np.array([1.0, 2.0, 3.0])
    held = []
    for _ in range(5):
        if "x" not in source:
            held.append(autodiff.evaluate(source))
            continue
        held.append(autodiff.evaluate(source, at={"x": x}))
        held.append(autodiff.grad(source, at={"x": x}))
        held.append(autodiff.grad(source, at={"x": x}, mode="forward"))
        held.append(autodiff.jacobian(source, at={"x": x}))
        if "x" in source:
            held.append(autodiff.hessian(f"sum({source}) ** 2", at={"x": x}))
    assert_owned(held, {"x": x})


def test_derivatives_share_no_memory_from_call_to_call():
    f = autodiff.function("sin(t) * 2")
    held = [[f.derivatives(t=0.5, order=2), autodiff.derivatives("sin(t) * 2", at={"t": 0.5}, order=2).derivatives]
            for _ in range(4)]
    assert_owned(held, {})


@pytest.mark.parametrize("source", ["sum(exp(sin(x)) * x + y)", "exp(sin(x)) * x + x * y", "sum(x + y)",
                                    "sum(sin(x) * cos(x) * exp(x) + y)"])
def test_large_arrays_lent_by_the_pool_are_the_callers_alone(source):
    at = {"x": np.linspace(-2.0, 2.0, N), "y": np.linspace(1.0, 2.0, N)}
    f = autodiff.function(source)
    held = []
    for _ in range(4):
        held.append(autodiff.grad(source, at=at))
        held.append(autodiff.evaluate(source, at=at))
        held.append(f.value_and_grad(at))
        held.append(f(at))
    assert_owned(held, at)


def test_a_fresh_result_is_not_copied():
    from autodiff.engine.core import ownership
    # the pool's lent gradient is handed on as it is: the ownership walk copies only what another
    # holder (a result, an argument, the engine) can reach
    x = np.linspace(0.2, 0.9, N)
    gradient = api.grad("sum(sin(x) * x + 1.0) * sum(cos(x) * x + 2.0)", at={"x": x}).gradient["x"]
    assert buffer_pool.lent_refs(gradient) == 1
    fresh = {"a": np.ones(3), "b": np.ones(3)}
    ids = {k: id(v) for k, v in fresh.items()}
    assert ownership.owned(fresh) is fresh and all(id(fresh[k]) == ids[k] for k in fresh)


def test_the_walk_copies_what_another_holder_reaches():
    from autodiff.engine.core import ownership
    kept = np.ones(4)
    base = np.zeros(6)
    result = {"same": kept, "again": kept, "view": base[:3], "other": base[3:], "overlap": base[2:4],
              "read_only": np.broadcast_to(np.ones(1), (3,)), "nested": [kept[:2]]}
    del base
    ownership.owned(result)
    assert result["same"] is not kept and result["again"] is not kept and result["nested"][0].base is not kept
    assert not np.shares_memory(result["view"], result["overlap"])
    assert result["view"].base is result["other"].base      # two views apart of a base only they hold
    assert result["read_only"].flags.writeable
    assert_owned(result, kept)
