"""Replays that never go stale (issue 27, items 2, 3, 4 and 6): small programs, and every builtin
a replay may recompute, called five times at changing inputs, each call's result compared with a
fresh interpretation to the bit: value, Python type, dtype and shape, gradient, notes, counts.
A result the caller writes into must change no later call's (each is the caller's alone)."""
import math

import numpy as np
import pytest

from autodiff.engine.diff.function import Function, ReplayRunner
from autodiff.engine.core.rules import builtin_primitives
from autodiff.engine.lang.target import Runner, load


def replayed_builtins() -> frozenset:
    """The builtins walked here: the table's differentiable ones (a replay recomputes them from
    the tape), the shape builtins, the reductions and composites with static arguments, grad."""
    names = {"len", "zeros", "ones", "arange", "range", "dot", "sum", "mean", "max", "min", "reshape", "norm",
             "transpose", "grad", "value_and_grad"}
    for prim in builtin_primitives():
        if prim.nondiff or any(rule is None for rule in prim.vjps[:prim.arity or 0]):
            continue
        names.update(filter(None, (prim.builtin, prim.alias)))
    return frozenset(names)


def identical(a, b) -> bool:
    """The same class, and for arrays the same dtype, shape and bytes; floats to the bit."""
    if a.__class__ is not b.__class__:
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return math.copysign(1.0, a) == math.copysign(1.0, b) and a == b or (a != a and b != b)
    if a is None or isinstance(a, (bool, int, str)):
        return a == b
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def scribble(value) -> None:
    """Write into every writable array of a result, as a caller may."""
    if isinstance(value, dict):
        for v in value.values():
            scribble(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            scribble(v)
    elif isinstance(value, np.ndarray) and value.flags.writeable and value.size:
        value.fill(99.0)


def function(source) -> Function:
    """A program's Function, loaded afresh (a program's text, or an expression)."""
    return Function(target=load(source, filename="program.py")) if "\n" in source else Function(source)


# what each way of calling a Function returns: a full result, or a dict of arrays
CALLS = {
    "evaluate": lambda f, at, dtype: f.evaluate_result(at, dtype),
    "grad": lambda f, at, dtype: f.grad_result(at, None, None, dtype),
    "forward": lambda f, at, dtype: f.forward_grad_result(at, None, None, dtype),
    "jacobian": lambda f, at, dtype: f.jacobian(at),
    "hessian": lambda f, at, dtype: f.hessian(at),
    "derivatives": lambda f, at, dtype: f.derivatives_result(at, 2, "reverse", None, dtype),
    "forward derivatives": lambda f, at, dtype: f.derivatives_result(at, 3, "forward", None, dtype),
}
FIELDS = ("value", "gradient", "derivatives", "unconnected", "reduced", "tape_length", "steps")


def outcome(call, f, at, dtype):
    """(the result, None) or (None, the error's class and text)."""
    try:
        return call(f, dict(at), dtype), None
    except Exception as err:        # the same error either way is the same answer
        return None, (type(err).__name__, str(err))


def differences(fresh, replayed) -> list:
    """Where a replayed result differs from a fresh interpretation's (repr'd at once: the caller
    writes into the result after)."""
    if not hasattr(fresh, "__dataclass_fields__"):
        return [] if identical(fresh, replayed) else [("result", repr(fresh), repr(replayed))]
    out = []
    for name in FIELDS:
        if hasattr(fresh, name) and not identical(getattr(fresh, name), getattr(replayed, name)):
            out.append((name, repr(getattr(fresh, name)), repr(getattr(replayed, name))))
    kinks = [[(op, s and (s.line, s.column), detail) for op, s, detail in r.kinks] for r in (fresh, replayed)]
    if kinks[0] != kinks[1]:
        out.append(("kinks", *kinks))
    if list(fresh.signature) != list(replayed.signature):
        out.append(("signature", fresh.signature, replayed.signature))
    return out


def replays_agree(source, points, dtype="float64", calls=("evaluate", "grad", "forward")) -> int:
    """Call one Function at each point in turn (plain, recording, then replaying runs), each
    call checked against a new Function's first (interpreted) call. Returns the replays made."""
    replays = 0
    for name in calls:
        if dtype != "float64" and name in ("jacobian", "hessian"):
            continue                        # these take the float64 working dtype only
        call = CALLS[name]
        kept = function(source)
        for k, at in enumerate(points):
            fresh, fresh_error = outcome(call, function(source), at, dtype)
            replayed, error = outcome(call, kept, at, dtype)
            assert error == fresh_error, (name, k, source)
            if fresh is not None:
                assert differences(fresh, replayed) == [], (name, k, source)
                scribble(getattr(replayed, "value", None))
                scribble(getattr(replayed, "gradient", replayed))
        replays += kept.replays
    return replays


def vectors(*rows):
    return [{"u": np.array(row, dtype=float)} for row in rows]


def numbers(*values):
    return [{"x": float(v)} for v in values]


ROWS = ([1, 2, 3], [1, 2, 3], [0, 0, 5], [0, 0, 0], [4, -1, 0.5])
SCALARS = (2, 2, -3, 0, 0.5)

# (program, points, whether its later calls replay). The reproducers first.
PROGRAMS = [
    ("ones(3) * 2", [{}] * 5, True),                                # item 2
    ("def f(x):\n    return ones(3) * 2\n", numbers(*SCALARS), True),
    ("zeros(2) + 1 / 3", [{}] * 5, True),
    ("sin(1.0)", [{}] * 5, True),                                   # item 6 (float32 below)
    ("1 / 3 + 0 * sum(u)", vectors(*ROWS), True),
    ("norm(u, 0)", vectors(*ROWS), None),                           # item 3
    ("norm(u, 0) * sum(u)", vectors(*ROWS), None),
    ("def f(u):\n    k = 0\n    return norm(u, k) * u[0]\n", vectors(*ROWS), None),
    ("def len(t):\n    return t\ndef f(x):\n    c = len(x) > 0\n    return x * c + x\n",   # item 4
     numbers(*SCALARS), None),
    ("from numpy import sin as len\ndef f(x):\n    return x * (len(x) > 0) + x\n", numbers(*SCALARS), None),
    ("def f(x):\n    sin = floor\n    return sin(x) * x\n", numbers(2.5, 2.5, -3.5, 0.5, 1.5), None),
    ("def h(len, x):\n    return x * (len(x) > 0) + x\ndef f(x):\n    return h(sin, x)\n",
     numbers(*SCALARS), None),
    ("def ones(n):\n    return n\ndef f(x):\n    return x * (ones(x) > 0) + x\n", numbers(*SCALARS), None),
    ("def f(x):\n    s = 0.0\n    for zeros in (x, 2 * x):\n        s = s + zeros\n    return s\n",
     numbers(*SCALARS), True),
    # shapes, constants and reductions the analysis lets replay
    ("norm(u) + norm(u, 1) + norm(u, inf) + norm(u, -inf) + norm(u, 3)", vectors(*ROWS), True),
    ("sum(transpose(u) * u) + len(u)", vectors(*ROWS), True),
    ("max(u) - min(u) + mean(u) + dot(u, u)", vectors(*ROWS), True),
    ("sum(reshape(u, 3, 1) * u) + sum(u * arange(3))", vectors(*ROWS), True),
    ("sum(maximum(u, 0.0)) + sum(minimum(u, 1.0)) + sum(abs(u))", vectors(*ROWS), True),
    ("u[0] * u[1] + sum(u[1:] * u[:-1])", vectors(*ROWS), True),
    ("x * 3 + minimum(x, 2.0)", numbers(1, 1, 2, 3, 2), True),
    ("sqrt(x) + log(x) + x ** 0.5", numbers(1, 1, 4, 0.5, 0), True),
    ("x if x > 0 else -x", numbers(*SCALARS), True),
    ("def f(x):\n    s = 0.0\n    for i in range(3):\n        s = s + x * i\n    return s\n", numbers(*SCALARS), True),
    ("def f(x):\n    if x > 1:\n        return x * 2\n    return ones(2) * x\n", numbers(2, 2, 0, 3, 0.5), True),
    ("def f(x, n):\n    s = 0.0\n    for i in range(n):\n        s = s + x\n    return s\n",
     [{"x": 1.0, "n": 2.0}, {"x": 1.0, "n": 2.0}, {"x": 2.0, "n": 3.0}, {"x": 1.0, "n": 2.0}, {"x": 3.0, "n": 1.0}],
     True),
    ("def g(t):\n    return t * t\ndef f(x):\n    return g(x) + grad(g)(x)\n", numbers(*SCALARS), None),
    # builtins that read a traced value as a plain number: interpreted, or replayed correctly
    ("int(x) * x + round(x) + x // 1 + x % 1", numbers(1.5, 1.5, 2.5, -1.5, 0.5), None),
    ("sum(sort(u) * arange(3)) + argmax(u) + logsumexp(u) + sum(cummax(u)) + sum(clip(u, 0, 2))",
     vectors(*ROWS), None),
    ("stop_gradient(x) * x + any(x > 1)", numbers(*SCALARS), None),
    # issue 29 item 2: list literals, arrays where their elements have one shape, else sequences
    ("sum(concatenate([u, u[:2] * 2]) ** 2) + sum(hstack([0.0, u]) * arange(4))", vectors(*ROWS), None),
    ("def f(u):\n    parts = [u, u[1:]]\n    return sum(stack([u[:2], u[1:]]) ** 2) + sum(concatenate(parts) * 3)\n",
     vectors(*ROWS), None),
    ("sum([u[0], u[1] * 2, 3.0] * u) + sum([[u[0], 1.0], [2.0, u[2]]] @ u[:2])", vectors(*ROWS), True),
    ("sum(vstack([u, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]) * u)", vectors(*ROWS), None),
    # issue 29 item 3: a defaulted parameter given at some calls only: its own trace when given
    ("def f(x, k=2.0):\n    return x * k + sin(x)\n",
     [{"x": 1.0}, {"x": 1.0}, {"x": 1.0, "k": 3.0}, {"x": 1.0, "k": 3.0}, {"x": 2.0}, {"x": 2.0, "k": 0.5}], True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("source, points, replays", PROGRAMS, ids=[p[0][:40].replace("\n", " ") for p in PROGRAMS])
def test_every_replayed_call_is_a_fresh_interpretations_to_the_bit(source, points, replays, dtype):
    made = replays_agree(source, points, dtype)
    if replays:
        assert made > 0


@pytest.mark.parametrize("source, points, replays", PROGRAMS, ids=[p[0][:40].replace("\n", " ") for p in PROGRAMS])
def test_jacobians_and_hessians_replay_as_fresh_ones(source, points, replays):
    replays_agree(source, points, calls=("jacobian", "hessian"))


SCALAR_PROGRAMS = [p for p in PROGRAMS if all(set(at) <= {"x"} for at in p[1]) and p[1][0]]


@pytest.mark.parametrize("source, points, replays", SCALAR_PROGRAMS,
                         ids=[p[0][:40].replace("\n", " ") for p in SCALAR_PROGRAMS])
def test_nth_derivatives_replay_as_fresh_ones(source, points, replays):
    replays_agree(source, points, calls=("derivatives", "forward derivatives"))


@pytest.mark.parametrize("source, points, replays", PROGRAMS, ids=[p[0][:40].replace("\n", " ") for p in PROGRAMS])
def test_the_checks_replay_runner_gives_a_fresh_runners_outputs(source, points, replays):
    target = load(source, filename="program.py") if "\n" in source else load(source)
    kept = ReplayRunner(target)
    for k, at in enumerate(points):
        fresh, replayed = Runner(target)(dict(at)), kept(dict(at))
        assert identical(fresh, replayed), (k, source, fresh, replayed)
        scribble(replayed)


# ---- every builtin a replay may recompute, at inputs where what it reads changes --------------

_RNG = np.random.default_rng(27)
_UNIT = [np.round(_RNG.uniform(0.1, 0.9, 3), 3) for _ in range(5)]
_SPD = [a @ a.T + np.eye(3) for a in (_RNG.normal(size=(3, 3)) for _ in range(5))]


def _pairs(us, vs):
    return [{"u": u, "v": v} for u, v in zip(us, vs)]


UNIT = [{"u": u} for u in _UNIT]                                  # (0, 1): every domain's inside
ABOVE_ONE = [{"u": 1.0 + u} for u in _UNIT]
SIGNED = vectors([1, -2, 3], [1, -2, 3], [0, 0, -5], [0, 0, 0], [-4, 1, 0.5])   # with zeros and ties
PAIRS = _pairs(_UNIT, _UNIT[::-1])
TIES = _pairs([np.array(r, float) for r in ROWS], [np.array(r, float) for r in ([1, 0, 3], [1, 0, 3], [0, 1, 5],
                                                                                 [0, 0, 0], [4, 4, 0.5])])
MATRIX = [{"M": m} for m in _SPD]
SYSTEM = [{"M": m, "u": u} for m, u in zip(_SPD, _UNIT)]

# builtin name -> (program, points): each builtin the analysis lets a replay recompute
FORMS = {
    "len": ("sum(u) * len(u)", SIGNED),
    "zeros": ("sum(u * (zeros(3) + 2))", SIGNED),
    "ones": ("sum(u * ones(3))", SIGNED),
    "arange": ("sum(u * arange(3))", SIGNED),
    "range": ("def f(u):\n    s = 0.0\n    for i in range(3):\n        s = s + u[i] * i\n    return s\n", SIGNED),
    "dot": ("dot(u, u)", SIGNED),
    "sum": ("sum(u * u, 0)", SIGNED),
    "mean": ("mean(u * u, 0)", SIGNED),
    "max": ("max(u, 0) + max(u)", SIGNED),
    "min": ("min(u, 0) + min(u)", SIGNED),
    "reshape": ("sum(reshape(u, 1, 3) * u)", SIGNED),
    "norm": ("norm(u) + norm(u, 1) + norm(u, 2, 0) + norm(u, inf) + norm(u, -inf) + norm(u, 3)", SIGNED),
    "transpose": ("sum(transpose(M, (1, 0)) @ M) + sum(transpose(M))", MATRIX),
    "grad": ("def g(t):\n    return t * t * t\ndef f(u):\n    return grad(g)(u[1]) * u[0]\n", SIGNED),
    "value_and_grad": ("def g(t):\n    return sin(t)\ndef f(u):\n    v, d = value_and_grad(g)(u[0])\n"
                       "    return v * d\n", SIGNED),
    "matmul": ("sum(matmul(M, u))", SYSTEM),
    "solve": ("sum(solve(M, u))", SYSTEM),
    "det": ("det(M)", MATRIX),
    "inv": ("sum(inv(M))", MATRIX),
    "cholesky": ("sum(cholesky(M))", MATRIX),
    "eigvalsh": ("sum(eigvalsh(M))", MATRIX),
}
_ABOVE_ONE = {"arccosh", "acosh"}
_WITH_KINKS = {"abs", "fabs", "relu", "maximum", "minimum", "hypot", "sqrt", "fmax", "fmin", "copysign", "heaviside"}


def form(name):
    """The program and points that exercise builtin `name`."""
    if name in FORMS:
        return FORMS[name]
    binary = name in ("maximum", "minimum", "arctan2", "atan2", "hypot", "logaddexp", "fmod", "beta", "xlogy",
                      "mod", "floor_divide", "remainder", "logaddexp2", "fmax", "fmin", "copysign", "heaviside",
                      "xlog1py", "rel_entr", "kl_div", "huber", "pseudo_huber")
    if binary:
        return f"sum({name}(u, v))", (TIES if name in _WITH_KINKS else PAIRS)
    points = ABOVE_ONE if name in _ABOVE_ONE else (SIGNED if name in _WITH_KINKS - {"sqrt"} else UNIT)
    return f"sum({name}(u))", points


def test_every_builtin_a_replay_recomputes_has_a_form_here():
    names = sorted(replayed_builtins())
    assert "norm" in names and "transpose" in names and "len" in names
    for name in names:
        source, points = form(name)
        assert name in source and len(points) == 5


@pytest.mark.parametrize("name", sorted(replayed_builtins()))
def test_every_builtin_a_replay_recomputes_replays_to_the_bit(name):
    source, points = form(name)
    assert replays_agree(source, points) > 0
