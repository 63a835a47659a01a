"""numpy's dtypes as programs write them (engine/lang/dtypes.py): `dtype=` of the constructors and
`.astype()` take `float`, `np.float64`, `int`, `np.int64`, `bool`, `complex`, `np.complex128`
and `x.dtype`; values are numpy's (a float dtype bit for bit; an integer dtype numpy's whole
numbers, held as the run's floats); gradients flow through a float or complex dtype as numpy's
values do and an integer or bool one is a step (derivative 0); float32 in a float64 run is a
located error saying what to write."""

import numpy as np
import pytest

import autodiff
from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine import api

X = np.array([1.5, -2.7, 0.0, -0.0, 3.25])


def run(source, at=None):
    target = api.load(source)
    return autodiff.evaluate(None, at={k: v for k, v in (at or {}).items() if k in target.inputs},
                             target=target).value


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f":
        assert got.dtype == want.dtype and np.array_equal(got.view(np.int64), want.view(np.int64)), (got, want)
    elif want.dtype.kind == "c":
        assert got.dtype == want.dtype and np.array_equal(got.view(np.float64).view(np.int64),
                                                         want.view(np.float64).view(np.int64)), (got, want)
    elif want.dtype.kind == "b":
        assert got.dtype == np.bool_ and np.array_equal(got, want), (got, want)
    else:                       # numpy's integers: the run's whole numbers, equal entry by entry
        assert got.dtype.kind in "fiu" and got.tolist() == want.tolist(), (got, want)


FLOATS, INTS = ("float", "np.float64"), ("int", "np.int64")
CASES = [(f"np.zeros((2, 3), dtype={t})", lambda t: np.zeros((2, 3), dtype=t)) for t in (*FLOATS, *INTS, "bool", "complex")]
CASES += [
    ("np.ones(3, dtype=np.complex128)", lambda: np.ones(3, dtype=np.complex128)),
    ("np.ones(3, dtype=int)", lambda: np.ones(3, dtype=int)),
    ("np.zeros((2, 2), float)", lambda: np.zeros((2, 2), float)),
    ("np.full(3, 2.7, dtype=int)", lambda: np.full(3, 2.7, dtype=int)),
    ("np.full((2, 2), -2.7, dtype=np.float64)", lambda: np.full((2, 2), -2.7, dtype=np.float64)),
    ("np.full(2, 1.5, dtype=complex)", lambda: np.full(2, 1.5, dtype=complex)),
    ("np.eye(3, dtype=bool)", lambda: np.eye(3, dtype=bool)),
    ("np.eye(2, 3, 1, int)", lambda: np.eye(2, 3, 1, int)),
    ("np.identity(2, dtype=np.int64)", lambda: np.identity(2, dtype=np.int64)),
    ("np.arange(1, 7, 2, dtype=int)", lambda: np.arange(1, 7, 2, dtype=int)),
    ("np.arange(0.5, 3, dtype=float)", lambda: np.arange(0.5, 3, dtype=float)),
    ("np.linspace(-1.5, 1.5, 4, dtype=int)", lambda: np.linspace(-1.5, 1.5, 4, dtype=int)),
    ("np.linspace(0, 1, 5, dtype=np.float64)", lambda: np.linspace(0, 1, 5, dtype=np.float64)),
    ("np.array([1.7, -2.5, 0.0, -0.0], dtype=int)", lambda: np.array([1.7, -2.5, 0.0, -0.0], dtype=int)),
    ("np.array([1.7, 0.0, -2.0], dtype=bool)", lambda: np.array([1.7, 0.0, -2.0], dtype=bool)),
    ("np.array([1, 2], float)", lambda: np.array([1, 2], float)),
    ("np.asarray([1.5, -0.0], dtype=complex)", lambda: np.asarray([1.5, -0.0], dtype=complex)),
    # numpy's names of them, as strings
    ("np.zeros(3, dtype='float64')", lambda: np.zeros(3, dtype="float64")),
    ("np.zeros(2, 'complex128')", lambda: np.zeros(2, "complex128")),
    ("np.eye(2, dtype='bool')", lambda: np.eye(2, dtype="bool")),
    ("np.full(2, -1.5, 'int')", lambda: np.full(2, -1.5, "int")),
    ("np.array([0.5, -1.5]).astype('int64')", lambda: np.array([0.5, -1.5]).astype("int64")),
    ("np.linspace(0, 1, 3, dtype='float64')", lambda: np.linspace(0, 1, 3, dtype="float64")),
]


@pytest.mark.parametrize("expr, make", CASES, ids=[c[0] for c in CASES])
def test_constructors_take_numpys_dtypes_with_numpys_values(expr, make):
    spelled = expr.split("dtype=")[-1].rstrip(")") if "dtype=" in expr else None
    numpy_type = {"float": float, "int": int, "bool": bool, "complex": complex, "np.float64": np.float64,
                  "np.int64": np.int64, "np.complex128": np.complex128}.get(spelled)
    want = make(numpy_type) if make.__code__.co_argcount else make()
    same_bits(run(expr), want)


X_CASES = [
    ("x.astype(float)", lambda x: x.astype(float)), ("x.astype(np.float64)", lambda x: x.astype(np.float64)),
    ("x.astype(int)", lambda x: x.astype(int)), ("x.astype(np.int64)", lambda x: x.astype(np.int64)),
    ("x.astype(bool)", lambda x: x.astype(bool)), ("x.astype(dtype=complex)", lambda x: x.astype(complex)),
    ("x.astype(np.complex128) * 2j", lambda x: x.astype(np.complex128) * 2j),
    ("np.zeros_like(x, dtype=bool)", lambda x: np.zeros_like(x, dtype=bool)),
    ("np.ones_like(x, dtype=int)", lambda x: np.ones_like(x, dtype=int)),
    ("np.full_like(x, 0.5, dtype=complex)", lambda x: np.full_like(x, 0.5, dtype=complex)),
    ("np.array(x, dtype=float)", lambda x: np.array(x, dtype=float)),
    ("np.asarray(x, dtype=int)", lambda x: np.asarray(x, dtype=int)),
    ("np.zeros(3, dtype=x.dtype)", lambda x: np.zeros(3, dtype=x.dtype)),
    ("(x > 0).astype(x.dtype)", lambda x: (x > 0).astype(x.dtype)),
]


@pytest.mark.parametrize("expr, make", X_CASES, ids=[c[0] for c in X_CASES])
def test_astype_and_the_like_constructors_give_numpys_values(expr, make):
    same_bits(run(expr, {"x": X}), make(X))


def test_x_dtype_is_numpys_type_of_the_value():
    from autodiff.engine.lang.dtypes import dtype_of
    assert repr(dtype_of(X)) == "dtype('float64')" and repr(dtype_of(X > 0)) == "dtype('bool')"
    assert repr(dtype_of(X * 1j)) == "dtype('complex128')" and repr(dtype_of(X.astype(int))) == "dtype('int64')"
    same_bits(run("np.zeros(2, dtype=(x > 0).dtype)", {"x": X}), np.zeros(2, dtype=bool))
    same_bits(run("np.ones(2, dtype=(x * 1j).dtype)", {"x": X}), np.ones(2, dtype=complex))
    err = api_error("x.dtype", {"x": X})
    assert "the output is the dtype float64, not a number or an array" in err.message


def api_error(source, at):
    with pytest.raises(autodiff.SourceError) as info:
        run(source, at)
    return info.value


G = np.array([1.5, -2.0, 0.25])


@pytest.mark.parametrize("expr, want", [
    # a float dtype: the value itself, derivative and all
    ("sum(np.array([x[0], x[1] * 2.0], dtype=float) ** 2)", [2 * G[0], 8 * G[1], 0.0]),
    ("sum(x.astype(np.float64) ** 3)", 3 * G ** 2),
    ("sum(np.full(2, x[2], dtype=float))", [0.0, 0.0, 2.0]),
    # complex: numpy's x + 0j, |.|² differentiates to 2x
    ("sum(abs(x.astype(complex)) ** 2)", 2 * G),
    ("sum(2.0 * abs(np.asarray(x, dtype=np.complex128)) ** 2)", 4 * G),
    # int and bool: a step, as x.astype(int) always was (the other term keeps x in the output)
    ("sum(x * 0.0) + sum(np.array(x, dtype=int) * 1.0)", [0.0, 0.0, 0.0]),
    ("sum(x * x.astype(bool))", [1.0, 1.0, 1.0]),
])
def test_gradients_flow_through_a_float_dtype_as_numpys_values_do(expr, want):
    g = autodiff.grad(expr, at={"x": G}).gradient["x"]
    np.testing.assert_array_equal(g, np.asarray(want, dtype=float))


@pytest.mark.parametrize("expr, message, column", [
    ("np.zeros(3, dtype=np.float32) * x[0]", "zeros(): dtype=float32 in a float64 run", 1),
    ("x.astype(np.float32)", "astype(): dtype=float32 in a float64 run", 1),
    ("np.array(x, dtype=np.complex64)", "array(): dtype=complex64 in a float64 run", 1),
    ("np.zeros(3, dtype=x)", "zeros(): dtype must be a type numpy takes, not an array of shape (2,)", 1),
    ("x.astype(2.0)", "astype(): dtype must be a type numpy takes, not a number", 1),
    ("np.array(x, dtype='float16')", "array(): dtype 'float16' is not one the language has", 1),
    ("np.ones(2, dtype='float32') * x", "ones(): dtype=float32 in a float64 run", 1),
    ("(x * 1j).astype(float)", "astype(): casting complex values to a real type would drop", 2),
    ("np.arange(0, 2.5, 0.5, dtype=int) * x[0]", "arange() with an integer dtype and bounds or a step that are not whole", 1),
    # numpy: "arange() is only supported for booleans when the result has at most length 2" (it gave [0, 1, 1])
    ("np.arange(3, dtype=bool) * x[0]", "arange() with dtype bool makes at most 2 elements", 1),
])
def test_what_the_run_cannot_give_is_a_located_error_saying_what_to_write(capsys, expr, message, column):
    code, out, err = cli(capsys, "grad", f"sum({expr})", "--at", "x=[1.0,2.0]")
    assert code == 2 and message in err and f"1:{column + 4}" in err and "Traceback" not in err, err
    assert "hint:" in err
    if "float32" in message:
        assert "write dtype=float, or run the whole program in float32 (--dtype float32)" in err


def test_a_bool_arange_of_two_elements_is_numpys():
    assert autodiff.evaluate("np.arange(2, dtype=bool) * x", at={"x": 1.5}).value.tolist() == \
        (np.arange(2, dtype=bool) * 1.5).tolist()


def test_float32_dtypes_are_the_runs_float_in_a_float32_run():
    r = autodiff.evaluate("np.zeros(2, dtype=np.float32) + x.astype(np.float64) + np.ones(2, dtype=float)",
                          at={"x": [1.5, 2.5]}, dtype_name="float32")
    assert r.value.dtype == np.float32 and r.value.tolist() == [2.5, 3.5]


def test_the_cli_takes_dtype_keywords_and_exits_0(capsys):
    code, out, err = cli(capsys, "grad", "sum(np.ones(3, dtype=np.float64) * x) + sum(np.zeros(2, dtype=int))",
                         "--at", "x=2", "--json")
    assert code == 0, err
    import json
    doc = json.loads(out)
    assert doc["value"] == 6.0 and doc["gradient"]["x"] == 3.0


@pytest.mark.parametrize("expr, name, spelled", [("np.float64(x)", "float64", "np.float64"), ("bool(x)", "bool", "bool")])
def test_calling_a_dtype_says_to_cast_with_astype(capsys, expr, name, spelled):
    code, out, err = cli(capsys, "grad", expr, "--at", "x=1")
    assert code == 2 and f"1:1: `{name}` is a dtype, not a function" in err and f"write x.astype({spelled}) to cast x" in err


@pytest.mark.parametrize("expr, expected", [
    ("(np.zeros(2) > 1).dtype == np.bool_", True), ("(np.zeros(2) > 1).dtype == bool", True),
    ("np.array([True]).dtype == np.bool_", True), ("np.zeros(2).dtype == float", True),
    ("np.zeros(2).dtype == np.float64", True), ("np.zeros(2).dtype != float", False),
    ("np.zeros(2).dtype == complex", False), ("np.zeros(2).dtype == np.zeros(3).dtype", True),
    ("(np.zeros(2) + 1j).dtype == complex", True), ("(np.zeros(2) > 1).dtype == float", False)])
def test_dtypes_compare_as_numpys(expr, expected):
    """A dtype compared by identity: `x.dtype == float` was False and a mask's dtype == np.bool_
    False (its dtype is `bool`, numpy 2's name), where numpy says True: a branch on it took the
    other side silently. Now numpy's equality of the names that spell one type."""
    assert api.evaluate(expr, at={}).value is expected
    assert bool(eval(expr, {"np": np})) is expected


@pytest.mark.parametrize("expr, expected", [
    ("np.sum(x.astype('f8'))", 6.5), ("np.sum(x.astype('double'))", 6.5), ("np.sum(x.astype('i8'))", 6.0),
    ("np.sum(np.ones(3, dtype='?') * x)", 6.5), ("np.sum(x.astype(np.bool_) * 1.0)", 3.0)])
def test_dtype_spellings_are_one_table(expr, expected):
    """Review: DType equality knew numpy's 'f8', 'double', '?' while dtype= and astype refused them
    ("dtype 'f8' is not one the language has"): two tables of spellings. Now one."""
    assert api.evaluate(expr, at={"x": np.array([1.5, 2.0, 3.0])}).value == expected


def test_a_string_refused_anywhere_lists_the_places_strings_may_stand():
    """Review: the tokenizer's refusal of a string said 'einsum's subscripts, norm's ord and pad's
    mode', a second list the places a call's check knows (cond's p, a dtype's name, ...) had
    outgrown. Both now say parser/errors.py's STRING_PLACES."""
    from autodiff.parser.errors import STRING_PLACES
    with pytest.raises(autodiff.SourceError) as err:
        api.evaluate("1.0 if x.dtype == 'f8' else 0.0", at={"x": np.array([1.0])})
    assert STRING_PLACES in err.value.message and "a dtype's name" in err.value.message
