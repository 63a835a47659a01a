"""Hardening III item 18: a tuple where an array is expected is the array numpy reads it as
(np.asarray), in every operator, comparison (chained too), builtin and list; a shape mismatch
is a located error naming both shapes, never an internal error (engine/core/sequences.py)."""
import itertools
import math
import operator
import re

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.parser.errors import SourceError
from test_cli_grad import run_cli

SHAPES = [(), (2,), (3,), (2, 2), (2, 3)]
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "**": operator.pow, "//": operator.floordiv, "%": operator.mod, "@": operator.matmul,
          "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
          "==": operator.eq, "!=": operator.ne}


def value_of(shape, seed):
    """Positive, non-integral values (** and // stay finite), some equal across inputs (ties)."""
    n = math.prod(shape)
    v = np.array([0.5, 1.25, 2.0, 0.75, 1.5, 1.0][seed:] + [0.5, 1.25, 2.0, 0.75, 1.5, 1.0][:seed])[:n]
    return v.reshape(shape) if shape else float(v[0])


def literal(v, open_="(", close_=")") -> str:
    """A tuple literal spelling an array, ((0.5, 1.25), (2.0, 0.75)), or a list literal."""
    if np.ndim(v) == 0:
        return repr(float(v))
    one = "," if len(v) == 1 and open_ == "(" else ""
    return open_ + ", ".join(literal(r, open_, close_) for r in v) + one + close_


def forms(name, v):
    """The ways an operand of value v is written: (source, the same without tuples, or None
    where it is written without tuples)."""
    out = [(name, None)]
    if np.ndim(v) >= 1:
        out.append(("(" + ", ".join(f"{name}[{i}]" for i in range(len(v))) + ",)", name))   # traced rows
        out.append((literal(v), literal(v, "[", "]")))                                      # constants
    return out


def numpy_value(op, a, b):
    with np.errstate(all="ignore"):
        if op == "chain":                           # Python's `and` of numbers, elementwise of arrays
            result = True
            for r in (np.less(0.75, a), np.less(np.asarray(a), np.asarray(b))):
                if np.ndim(r) == 0:
                    if not r:
                        return False
                else:
                    result = r if result is True else np.logical_and(result, r)
            return result
        return BINARY[op](np.asarray(a), np.asarray(b))


def expression(op, left, right):
    return f"0.75 < {left} < {right}" if op == "chain" else f"{left} {op} {right}"


def used(source, at):
    """The inputs a source reads (an expression may take no others)."""
    return {k: v for k, v in at.items() if re.search(rf"\b{k}\b", source)}


def close(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return got.shape == want.shape and np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


# operators Python defines on two sequences: `+` joins them, comparisons give one truth value
PYTHONS = {"+", "<", "<=", ">", ">=", "==", "!=", "chain"}


@pytest.mark.parametrize("op", [*BINARY, "chain"])
def test_a_tuple_operand_is_the_array_numpy_reads_it_as(op):
    checked = mismatches = 0
    for sp, sq in itertools.product(SHAPES, SHAPES):
        p, q = value_of(sp, 0), value_of(sq, 2)
        at = {"p": p, "q": q}
        for (left, lt), (right, rt) in itertools.product(forms("p", p), forms("q", q)):
            if lt is None and rt is None:
                continue                                # arrays with arrays: tested elsewhere
            if lt is not None and rt is not None and op in PYTHONS:
                continue                                # two sequences: Python's (tested below)
            source = expression(op, left, right)
            try:
                want = numpy_value(op, p, q)
            except ValueError:                          # numpy refuses: a located shape mismatch
                with pytest.raises(SourceError) as caught:
                    api.evaluate(source, at=used(source, at))
                assert caught.value.span is not None, source
                if op != "@" or (np.ndim(p) and np.ndim(q)):       # (matmul of a number: no shapes)
                    assert "shape mismatch" in caught.value.kind, source
                    assert all(str(s).replace(" ", "") in caught.value.message.replace(" ", "")
                               for s in mismatched_shapes(op, p, q)), \
                        (source, caught.value.message)
                with pytest.raises(SourceError):
                    api.grad(f"sum({source})", at=used(source, at))
                mismatches += 1
                continue
            assert close(api.evaluate(source, at=used(source, at)).value, want), source
            # the gradient through the tuple is the gradient through the arrays it stands for
            plain = expression(op, lt or left, rt or right)
            if not used(source, at):
                checked += 1
                continue                                # constants only: nothing to differentiate
            r = api.grad(f"sum({source})", at=used(source, at))
            assert close(r.value, np.sum(want)), source
            ref = api.grad(f"sum({plain})", at=used(source, at))
            for name in used(source, at):
                assert close(r.gradient[name], ref.gradient[name]), (source, name)
            checked += 1
    assert checked > 20 and mismatches > 5


def mismatched_shapes(op, p, q):
    """The two shapes numpy could not broadcast together."""
    if op == "chain":
        try:
            return np.shape(np.less(0.75, p)), np.shape(np.less(np.asarray(p), np.asarray(q)))
        except ValueError:
            pass
    return np.shape(p), np.shape(q)


@pytest.mark.parametrize("argv, want", [
    (["grad", "sum(x ** (0,))", "--at", "x=[1,2]"], {"value": 2.0, "x": [0.0, 0.0]}),
    (["grad", "sum(A**(1,2))", "--at", "A=[1,2]"], {"value": 5.0, "A": [1.0, 4.0]}),
    (["grad", "sum(concatenate(((x, y), (z,)), axis=0))", "--at", "x=[1,2],y=[3,4],z=[5,6]"],
     {"value": 21.0, "x": [1.0, 1.0], "y": [1.0, 1.0], "z": [1.0, 1.0]}),
])
def test_the_issues_tuples_give_numpys_values(argv, want):
    out = run_cli(*argv, "--json")
    assert out.code == 0, out.err
    assert out.json["value"] == want.pop("value")
    assert {k: v for k, v in out.json["gradient"].items()} == want


def test_concatenate_of_nested_tuples_is_numpys_array():
    at = {"x": np.array([1.0, 2.0]), "y": np.array([3.0, 4.0]), "z": np.array([5.0, 6.0])}
    source = "concatenate(((x, y), (z,)), axis=0)"
    want = np.concatenate(((at["x"], at["y"]), (at["z"],)), axis=0)
    assert api.evaluate(source, at=at).value.tolist() == want.tolist()
    r = api.grad(source, at=at)
    assert np.asarray(r.value).tolist() == want.tolist()
    assert {k: g.tolist() for k, g in r.gradient.items()} == {"x": [1.0, 1.0], "y": [1.0, 1.0], "z": [1.0, 1.0]}


@pytest.mark.parametrize("argv, where, shapes", [
    (["grad", "sum(A + (x, x))", "--at", "A=[[2,1],[1,3]],x=[0.5,-1,2]"], "1:7", ["(2,2)", "(2,3)"]),
    (["run", "x > 0 < A", "--at", "A=[[2,1],[1,3]],x=[0.5,-1,2]"], "1:7", ["(2, 2)", "(3,)"]),
    (["grad", "sum(((x, y), (z,)) * x)", "--at", "x=[1,2],y=[3,4],z=[5]"], "1:20", ["(2, 2)", "(1, 1)"]),
])
def test_a_shape_mismatch_with_a_tuple_is_located(argv, where, shapes):
    out = run_cli(*argv)
    assert out.code == 2, out.err
    assert "shape mismatch" in out.err and where in out.err
    assert all(s in out.err for s in shapes), out.err


def test_replays_read_the_tuples_values_afresh():
    # the tuple of traced values was an object array a replay kept as a constant
    values = [float(api.evaluate("sum(x * (s, s))", at={"x": [1.0, 2.0], "s": s}).value) for s in (0.7, 1.0, 2.0, 3.0)]
    assert values == [3 * 0.7, 3.0, 6.0, 9.0]
    values = [float(api.evaluate("sum((s, 2) / x)", at={"x": [1.0, 2.0], "s": s}).value) for s in (0.7, 1.0, 2.0)]
    assert values == [1.7, 2.0, 3.0]


@pytest.mark.parametrize("source, want", [
    ("sin((s, 2 * s))", lambda s: np.sin((s, 2 * s))),
    ("maximum((s, 1.0), (1.0, s))", lambda s: np.maximum((s, 1.0), (1.0, s))),
    ("arctan2((s, s), (1.0, 2.0))", lambda s: np.arctan2((s, s), (1.0, 2.0))),
    ("det(((s, 1.0), (1.0, s)))", lambda s: np.linalg.det(((s, 1.0), (1.0, s)))),
    ("var((s, 2 * s, 4.0))", lambda s: np.var((s, 2 * s, 4.0))),
    ("flip((s, 2 * s))", lambda s: np.flip((s, 2 * s))),
    ("outer((s, 1.0), (2.0, s))", lambda s: np.outer((s, 1.0), (2.0, s))),
    ("tensordot((s, 1.0), (2.0, s), 1)", lambda s: np.tensordot((s, 1.0), (2.0, s), 1)),
    ("einsum('i,i', (s, 1.0), (2.0, s))", lambda s: np.einsum("i,i", (s, 1.0), (2.0, s))),
    ("zeros_like((s, s))", lambda s: np.zeros_like((s, s))),
    ("dot((s, s), (1.0, 2.0))", lambda s: np.dot((s, s), (1.0, 2.0))),
    ("mean((s, 2 * s))", lambda s: np.mean((s, 2 * s))),
    ("max((s, 2 * s))", lambda s: np.max((s, 2 * s))),
    ("where((s, -s) > 0, (s, s), 0)", lambda s: np.where(np.asarray((s, -s)) > 0, (s, s), 0)),
    ("reshape((s, s), 2, 1)", lambda s: np.reshape((s, s), (2, 1))),
    ("any((s - s, 0.0))", lambda s: np.any((s - s, 0.0))),
    ("hstack(((s, s), (1.0,)))", lambda s: np.hstack(((s, s), (1.0,)))),
    ("-(s, 2 * s)", lambda s: -np.asarray((s, 2 * s))),
    ("sum([(s, 1.0), (2.0, s)])", lambda s: np.sum([(s, 1.0), (2.0, s)])),
])
def test_builtins_read_a_tuple_as_numpy_does(source, want):
    for s in (0.7, 1.5):                        # twice: a replay reads the new value
        got = api.evaluate(source, at={"s": s}).value
        assert close(got, want(s)), (source, got)
    h = 1e-6                                    # the derivative flows through the tuple's elements
    r = api.grad(f"sum({source})", at={"s": 0.7})
    fd = (np.sum(want(0.7 + h)) - np.sum(want(0.7 - h))) / (2 * h)
    assert abs(float(r.gradient["s"]) - fd) < 1e-6, (source, r.gradient, fd)


def test_a_range_is_still_refused_by_builtins():
    with pytest.raises(SourceError, match="takes numbers or arrays"):
        api.evaluate("transpose(range(3))")


def test_item_assignment_reads_a_tuple_as_numpy_does():
    src = ("def f(x, s):\n    y = x * 1.0\n    y[0:2] = (s, 2 * s)\n    y[1:3] += (s, s)\n"
           "    return sum(y) + y.dot((1.0, 2.0, 3.0))\n")
    x, s = np.array([1.0, 2.0, 3.0]), 0.5
    y = x * 1.0
    y[0:2] = (s, 2 * s)
    y[1:3] += (s, s)
    r = api.grad(None, at={"x": x, "s": s}, target=api.load(src, filename="items.py"))
    assert r.value == np.sum(y) + y.dot((1.0, 2.0, 3.0))         # 15 s + 4 x[2]
    assert r.gradient["x"].tolist() == [0.0, 0.0, 4.0] and r.gradient["s"] == 15.0


@pytest.mark.parametrize("name", ["stop_gradient", "detach"])
def test_stop_gradient_of_a_tuple_stops_every_element(name):
    r = api.grad(f"sum({name}((s, 2 * s)) * x)", at={"x": [1.0, 2.0], "s": 0.5})
    assert r.value == 2.5 and r.gradient["s"] == 0.0 and r.gradient["x"].tolist() == [0.5, 1.0]


# ---- issue 29 item 2: a list literal is a Python list until numpy makes an array of it -----------

LISTS_AT = {"a": np.array([0.5, 1.25, 2.0]), "b": np.array([0.75, 1.5]), "s": 0.7}


@pytest.mark.parametrize("source, want", [
    ("concatenate([a, b])", lambda a, b, s: np.concatenate([a, b])),
    ("concatenate([a, b, [s, 1.0]], axis=0)", lambda a, b, s: np.concatenate([a, b, [s, 1.0]], axis=0)),
    ("concatenate([[a, a], [a * s]])", lambda a, b, s: np.concatenate([[a, a], [a * s]])),
    ("hstack([0.0, a])", lambda a, b, s: np.hstack([0.0, a])),
    ("hstack([s, a, b])", lambda a, b, s: np.hstack([s, a, b])),
    ("vstack([a, [[1.0, 2.0, 3.0], [s, s, s]]])", lambda a, b, s: np.vstack([a, [[1.0, 2.0, 3.0], [s, s, s]]])),
    ("stack([a, a * s], axis=1)", lambda a, b, s: np.stack([a, a * s], axis=1)),
    ("append([s, 1.0], b)", lambda a, b, s: np.append([s, 1.0], b)),
    ("append(s, [a, a])", lambda a, b, s: np.append(s, [a, a])),
    ("append([[s, 2.0]], [[1.0, s]], axis=0)", lambda a, b, s: np.append([[s, 2.0]], [[1.0, s]], axis=0)),
    ("det([[s, 1.0], [2.0, s]]) * [[1, 2], [3, 4]]", lambda a, b, s: np.linalg.det([[s, 1.0], [2.0, s]]) * np.array([[1, 2], [3, 4]])),
    ("[s, a[0], 2.0] * a", lambda a, b, s: np.array([s, a[0], 2.0]) * a),
])
def test_list_literals_read_as_numpy_reads_them(source, want):
    for s in (0.7, 1.5):                        # twice: a replay reads the new value
        at = {**LISTS_AT, "s": s}
        got = api.evaluate(source, at=used(source, at)).value
        expected = want(at["a"], at["b"], s)
        assert np.shape(got) == expected.shape and close(got, expected), (source, got)
    r = api.grad(f"sum(({source}) ** 2)", at=used(source, LISTS_AT))
    h = 1e-6
    for name in used(source, LISTS_AT):                # every input's gradient against central differences
        x = np.asarray(LISTS_AT[name], dtype=float)
        fd = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[i] += h
            down[i] -= h
            f = [np.sum(want(**{**LISTS_AT, name: p if p.shape else float(p)}) ** 2) for p in (up, down)]
            fd[i] = (f[0] - f[1]) / (2 * h)
        got = r.gradient.get(name, np.zeros(x.shape))
        assert np.allclose(got, fd, atol=1e-5), (source, name, got, fd)


def test_a_list_of_arrays_in_a_program_loops_indexes_and_concatenates():
    src = ("import numpy as np\ndef f(a, b):\n    parts = [a, b * 2]\n    s = 0.0\n    for p in parts:\n"
           "        s = s + np.sum(p)\n    return s + len(parts) + np.sum(parts[1]) + np.sum(np.concatenate(parts) ** 2)\n")
    r = api.grad(None, at={"a": LISTS_AT["a"], "b": LISTS_AT["b"]}, target=api.load(src, filename="p.py"))
    a, b = LISTS_AT["a"], LISTS_AT["b"]
    assert r.value == pytest.approx(a.sum() + 2 * b.sum() + 2 + 2 * b.sum() + np.sum(np.concatenate([a, 2 * b]) ** 2))
    assert r.gradient["a"].tolist() == pytest.approx((1 + 2 * a).tolist())
    assert r.gradient["b"].tolist() == pytest.approx((2 + 2 + 8 * b).tolist())


@pytest.mark.parametrize("argv, where", [
    (["grad", "sum([a, b])", "--at", "a=[0.5,1.25,2],b=[0.75,1.5]"], "1:1"),
    (["grad", "sum([a, b] * 2)", "--at", "a=[0.5,1.25,2],b=[0.75,1.5]"], "1:1"),   # Python repeats the list
    (["run", "exp([a, [1.0, 2.0]])", "--at", "a=[0.5,1.25,2]"], "1:1"),
    (["run", "array([[1.0, 2.0], [3.0]])"], "1:1"),
    (["run", "sum(x)", "--at", "x=[[1,2],[3]]"], "1:1"),
])
def test_a_ragged_list_used_as_an_array_is_a_located_shape_mismatch(argv, where):
    out = run_cli(*argv)
    assert out.code == 2, out.err
    assert "shape mismatch" in out.err and where in out.err and "Traceback" not in out.err
    assert "(3,)" in out.err or "(2,)" in out.err and "(1,)" in out.err, out.err


# issue 29 item 2: a list literal is a Python list until numpy makes an array of it
@pytest.mark.parametrize("source, want", [
    ("len([x[0]] + [x[1]])", 2.0),                       # numpy's reading would add: 1
    ("len([0.0] * 4) + len(3 * [x[0], x[1]])", 10.0),       # a literal count repeats the list
    ("sum([1.0, 2.0] * x[1])", 3.75),                    # a number from the data: numpy's scalar
    ("sum(np.array([x[0]] + [x[1], x[2]]) * x)", 0.5 * 0.5 + 1.25 * 1.25 + 2.0 * 2.0),
    ("sum(np.array([0.0] * 3) + x)", 3.75),
    ("sum([x[0], x[1]] + x[:2])", 2 * (0.5 + 1.25)),     # with an array: numpy adds elementwise
    ("sum(x[[0, 2]]) + [[1.0, x[1]], [x[2], 2.0]][0, 1]", 2.5 + 1.25),
    ("len([x, x[:2]] + [x])", 3.0),                      # a ragged list joins as Python joins it
])
def test_list_literals_join_and_repeat_as_python_lists(source, want):
    assert api.evaluate(source, at={"x": LISTS_AT["a"]}).value == pytest.approx(want)


APPEND = """import numpy as np
def f(x):
    parts = []
    for i in range(3):
        parts.append(x[i] * x[i])
    kept = len(parts)
    parts.append(x[0])
    rows = [x]
    rows.append(x[:2])
    return np.sum(np.array(parts)) + kept + np.sum(np.concatenate(rows)) + len([x[0]] + [x[1]])
"""


def test_append_rebinds_the_list_with_value_semantics_and_replays():
    f = api.Function(target=api.load(APPEND, filename="p.py"))
    for x in (np.array([0.5, 1.25, 2.0]), np.array([1.0, -2.0, 3.0])):
        value, g = f.value_and_grad(x=x)
        assert value == pytest.approx(np.sum(x ** 2) + x[0] + 3 + np.sum(x) + np.sum(x[:2]) + 2)
        assert g["x"].tolist() == pytest.approx((2 * x + [1 + 1 + 1, 1 + 1, 1]).tolist())


def test_append_to_an_array_says_to_write_np_append():
    src = "import numpy as np\ndef f(x):\n    y = x * 2\n    y.append(x[0])\n    return np.sum(y)\n"
    with pytest.raises(SourceError) as info:
        api.evaluate(None, at={"x": LISTS_AT["a"]}, target=api.load(src, filename="p.py"))
    assert "not a list" in info.value.message and "np.append" in info.value.hint
    assert (info.value.span.line, info.value.span.column) == (4, 5)


def test_an_item_of_a_list_is_assigned_on_a_copy():
    src = ("import numpy as np\ndef f(x):\n    parts = [x, x[:2]]\n    kept = [x, x[:2]]\n"
           "    parts[1] = x[:1] * 3.0\n"
           "    parts[0] += 1.0\n    return np.sum(np.concatenate(parts)) + 10.0 * np.sum(np.concatenate(kept))\n")
    r = api.grad(None, at={"x": LISTS_AT["a"]}, target=api.load(src, filename="p.py"))
    a = LISTS_AT["a"]
    assert r.value == pytest.approx(np.sum(a + 1.0) + 3.0 * a[0] + 10.0 * (np.sum(a) + np.sum(a[:2])))
    assert r.gradient["x"].tolist() == pytest.approx([1 + 3 + 20, 1 + 20, 1 + 10])


@pytest.mark.parametrize("body, name", [
    ("    kept = parts\n    parts[1] = x[:1] * 3.0\n    return np.sum(np.concatenate(kept))\n", "kept"),
    ("    kept = parts\n    parts.append(x[0])\n    return len(kept) * x[0]\n", "kept"),
    ("    p = {'a': parts}\n    parts[0] = x * 2\n    return np.sum(p['a'][1])\n", "p")])
def test_a_list_another_name_holds_is_not_read_after_a_write(body, name):
    """Python writes a list in place (`parts[1] = ...`, `.append`): another name of it, or a dict
    holding it, sees the write; the language kept the old list for them, silently. Now reading
    them after the write is an error naming it."""
    src = "import numpy as np\ndef f(x):\n    parts = [x, x[:2]]\n" + body
    with pytest.raises(SourceError) as info:
        api.grad(None, at={"x": LISTS_AT["a"]}, target=api.load(src, filename="p.py"))
    assert info.value.kind == "stale value" and "was changed at line 5" in info.value.message
    assert info.value.span is not None and info.value.span.line == 6


def test_blocks_side_by_side_are_one_matrix_for_the_checks_and_the_tables():
    # engine/core/sequences.side_by_side: the one layout of Jacobian blocks (and a Hessian's row of
    # blocks) as a matrix, for checks/higher.py's claimed matrix and the CLI's tables alike
    from autodiff.engine.core.sequences import side_by_side
    per_x = np.arange(6.0).reshape(2, 3)                # output (2,), input x (3,)
    per_y = np.array([10, 20])                          # output (2,), input y (): integers as floats
    m = side_by_side([per_x, per_y], 2)
    assert m.dtype == np.float64 and m.tolist() == [[0.0, 1.0, 2.0, 10.0], [3.0, 4.0, 5.0, 20.0]]
    assert side_by_side([np.float64(2.5)], 1).tolist() == [[2.5]]        # a scalar of a scalar
    assert side_by_side([], 3).tolist() == [[], [], []]                   # no inputs: empty rows
    assert side_by_side([np.zeros((0, 2))], 0).shape == (0, 2)           # no outputs (--at x=[])


A34 = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("expr", ["A[[True, False, True]]", "A[np.array([True, False, True])]",
                                  "A[np.asarray([True, False, True])]", "A[:, [True, False, True, False]]",
                                  "np.array([True, False, True])", "np.array([[True], [False]])",
                                  "np.array([True, 2.0])", "np.array([True, False]) * 3.0",
                                  "np.sum([True, True, False])"])
def test_a_sequence_of_truth_values_is_numpys_boolean_array(expr):
    """[True, False, True] was read as the floats [1, 0, 1], so A[[True, False, True]] took rows
    1, 0, 1 where numpy's mask takes rows 0 and 2 (silently: the shapes even agreed). Truth values
    alone now make a boolean array (a mask where it indexes); mixed with numbers, numpy's floats."""
    got = api.evaluate(expr, at={"A": A34} if "A" in expr else {}).value
    expected = eval(expr, {"np": np, "A": A34})
    assert np.shape(got) == np.shape(expected) and np.array_equal(got, expected)
    assert np.asarray(got).dtype.kind == np.asarray(expected).dtype.kind or np.asarray(expected).dtype.kind in "iu"


X4 = np.array([0.7, -1.3, 2.1, 1.6])


@pytest.mark.parametrize("source, expected", [
    ("len((x[0], x[1]) + (x[2],))", 3), ("((x[0], x[1]) + (x[2],))[2]", 2.1), ("len((x[0],) * 3)", 3),
    ("len(2 * (x[0], x[1]))", 4), ("sum((x[0], x[1]) + (x[2],))", 1.5), ("max((x[0], x[1]) + (x[2],))", 2.1),
    ("np.array((1.0, 2.0) + (3.0,))", [1.0, 2.0, 3.0]), ("x[0] if (x[0], x[1]) == (x[0], x[1]) else x[1]", 0.7),
    ("x[0] if (x[0], x[1]) != (x[0], x[2]) else x[1]", 0.7), ("x[0] if (1, 2) < (1, 3) else x[1]", 0.7),
    ("x[0] if [x[0]] + [x[1]] == [x[0], x[1]] else x[1]", 0.7), ("x[0] if (1.0, 2.0) == [1.0, 2.0] else x[1]", -1.3),
    ("x[0] if x.shape == (4,) else x[1]", 0.7), ("len(np.zeros(x.shape + (3,)).shape)", 2),
    ("len(x.shape * 2)", 2), ("x[0] if (x[0], 5.0) < (x[0], 4.0) else x[1]", -1.3),
    ("x[0] if ((1.0, 2.0), 3.0) <= ((1.0, 2.0), 3.0) else x[1]", 0.7)])
def test_two_sequences_meet_as_in_python(source, expected):
    """`(a, b) + (c,)` was numpy's sum [a + c, b + c] (and `A.shape + (3,)` a shape of sums), `(a,) * 3`
    the product [3a], `(a, b) == (a, b)` an array, where Python joins, repeats and compares: a
    program looping `t = t + (v,)` summed to 0 silently. Two sequences now meet as in Python; a
    sequence with an array or a traced number stays numpy's (the test above)."""
    got = api.evaluate(source, at={"x": X4} if "x" in source else {}).value
    want = eval(source, {"np": np, "x": X4})
    assert np.allclose(got, want) and np.allclose(got, expected) and np.shape(got) == np.shape(want)


@pytest.mark.parametrize("source, words", [
    ("def f(x):\n    return sum((x[0], x[1]) + [x[2]])\n", 'can only concatenate tuple (not "list") to tuple'),
    ("def f(x):\n    return x[0] if (1.0, 2.0) < [1.0, 3.0] else x[1]\n", "Python does not order them")])
def test_what_python_and_numpy_read_apart_is_refused_at_the_operator(tmp_path, source, words):
    """A list and a tuple joined or ordered: Python's error (they were numpy's sum and comparison)."""
    path = tmp_path / "program.py"
    path.write_text(source)
    with pytest.raises(SourceError) as caught:
        api.grad(str(path), at={"x": X4})
    assert words in caught.value.message and caught.value.span.line in (2, 3)
