"""The language as numpy code is written (issue 15, the language part): imports, keyword arguments
and defaults, attributes and methods. Each form: reverse mode = forward mode = central differences."""
import numpy as np
import pytest

from autodiff.engine import api
from numpy_forms_checks import A, agree, error, load, value

# ---- item 1: imports and module paths ------------------------------------------------------------

def test_imports_are_declarations_that_name_builtins():
    src = """
        import numpy as np
        import numpy
        import math
        import scipy.special
        from numpy import sin, cos
        from math import pi, exp as e_to
        def f(x):
            return np.sum(sin(x) * cos(x)) + numpy.sum(x) * math.pi + pi + e_to(x[0])
        """
    r = agree(src, x=[0.3, 1.1])
    x = np.array([0.3, 1.1])
    assert r.value == pytest.approx(np.sum(np.sin(x) * np.cos(x)) + x.sum() * np.pi + np.pi + np.exp(0.3))


def test_submodule_paths_resolve_to_the_builtin_of_that_name():
    r = agree("import numpy as np\ndef f(x):\n    return np.linalg.norm(x) + scipy.special.sigmoid(x[0])\n",
              x=[3.0, 4.0])
    assert r.value == pytest.approx(5.0 + 1 / (1 + np.exp(-3.0)))


def test_submodules_bound_to_names_of_ones_choosing():
    src = """
        import scipy.special as sp
        import numpy.linalg as la
        from numpy import linalg
        from scipy import special as spc
        def f(A):
            return la.det(A) + linalg.norm(A, 'fro') + sum(sp.expit(A) * spc.erf(A)) + la.norm(A, ord='nuc')
        """
    r = agree(src, A=[[2.0, 0.5], [0.1, 1.5]])
    a = np.array([[2.0, 0.5], [0.1, 1.5]])
    import scipy.special
    special = scipy.special.expit(a) * scipy.special.erf(a)
    assert r.value == pytest.approx(np.linalg.det(a) + np.linalg.norm(a) + np.sum(special) + np.linalg.norm(a, "nuc"))


def test_a_submodule_alias_lasts_for_its_own_parse_only():
    load("import numpy.linalg as la\ndef f(x):\n    return la.det(x)\n")
    err = error("def f(x):\n    return la.det(x)\n")
    assert "attribute `.det`" in err.message


@pytest.mark.parametrize("src, message, place", [
    # (an import the target does not reach is not compiled: tests/test_files_as_written.py)
    ("import pandas as pd\ndef f(x):\n    return pd.exp(x)\n", "`pd` (used at 3:12) is bound by the import at "
     "1:1: module `pandas` is not available", (3, 12)),
    ("from numpy import sine\ndef f(x):\n    return sine(x)\n", "`sine` is not among the language's builtins",
     (1, 19)),
    ("import numpy as onp\ndef f(x):\n    return onp.sum(x)\n", "may only be bound as np, numpy", (1, 1)),
    ("from numpy import special\ndef f(x):\n    return special.erf(x)\n",
     "`special` is a module of scipy, not of numpy", (1, 19)),
    ("from math import linalg\ndef f(x):\n    return linalg.det(x)\n", "`linalg` is a module of numpy, not of math",
     (1, 18)),
    ("import numpy as la\ndef f(x):\n    return la.det(x)\n", "may only be bound as np, numpy", (1, 1)),
    ("def f(x):\n    return la.det(x)\n", "attribute `.det` is not part of the language", (2, 15)),
])
def test_imports_of_anything_else_are_errors_at_their_place(src, message, place):
    err = error(src)
    assert message in err.message and (err.span.line, err.span.column) == place


def test_sine_suggests_sin():
    assert "sin" in error("from numpy import sine\ndef f(x):\n    return sine(x)\n").hint


# ---- item 2: keyword arguments and defaults ------------------------------------------------------

@pytest.mark.parametrize("expr, expected", [
    ("sum(A, axis=0)", lambda a: a.sum(axis=0)),
    ("sum(A, axis=1, keepdims=True)", lambda a: a.sum(axis=1, keepdims=True)),
    ("sum(A, axis=(0, 1))", lambda a: a.sum(axis=(0, 1))),
    ("mean(A, axis=0, keepdims=True)", lambda a: a.mean(axis=0, keepdims=True)),
    ("mean(A, axis=(1, 0))", lambda a: a.mean(axis=(1, 0))),
    ("max(A, axis=1)", lambda a: a.max(axis=1)),
    ("min(A, axis=0, keepdims=True)", lambda a: a.min(axis=0, keepdims=True)),
    ("max(A, axis=(0, 1), keepdims=True)", lambda a: a.max(axis=(0, 1), keepdims=True)),
    ("prod(A, axis=0)", lambda a: a.prod(axis=0)),
    ("prod(A, axis=-1, keepdims=True)", lambda a: a.prod(axis=-1, keepdims=True)),
    ("prod(A, axis=(0, 1))", lambda a: a.prod(axis=(0, 1))),
    ("amax(A, 0)", lambda a: np.amax(a, 0)),
])
def test_reductions_take_axis_and_keepdims_as_numpy_does(expr, expected):
    a = np.array(A)
    got = value(f"def f(A):\n    return {expr}\n", A=A)
    np.testing.assert_allclose(got, expected(a))
    assert np.shape(got) == np.shape(expected(a))
    agree(f"def f(A):\n    return sum({expr} * {expr})\n", A=A)


def test_unknown_keyword_names_itself_and_lists_the_accepted_ones():
    err = error("def f(x):\n    return sum(x, axis=0, bogus=1)\n", x=[1.0, 2.0])
    assert "`bogus`" in err.message and (err.span.line, err.span.column) == (2, 27)
    assert "axis=" in err.hint and "keepdims=" in err.hint


def test_a_builtin_without_keywords_says_so():
    err = error("def f(x):\n    return sin(x, axis=0)\n")
    assert "takes no keyword arguments" in err.hint


def test_a_keyword_may_not_repeat_a_positional_argument():
    assert "two values" in error("def f(x):\n    return sum(x, 0, axis=0)\n", x=[1.0, 2.0]).message


def test_positional_after_keyword_is_a_syntax_error():
    err = error("def f(x):\n    return sum(axis=0, x)\n", x=[1.0])
    assert err.kind == "syntax error" and "follows a keyword" in err.message


def test_user_functions_take_defaults_and_keywords():
    src = """
        def scaled(x, scale=2.0, shift=0.0):
            return x * scale + shift
        def f(x):
            return scaled(x) + scaled(x, 3.0) + scaled(x, shift=1.0) + scaled(scale=4.0, x=x)
        """
    r = agree(src, x=1.5)
    assert r.value == pytest.approx(3.0 + 4.5 + 4.0 + 6.0) and r.gradient["x"] == pytest.approx(2 + 3 + 2 + 4)


def test_defaults_are_evaluated_once_when_the_def_runs():
    src = "k = 2.0\ndef g(x, c=k):\n    return x * c\nk = 5.0\ndef f(x):\n    return g(x)\n"
    assert value(src, x=1.0) == 2.0


def test_parameters_with_defaults_are_not_inputs():
    target = load("def f(x, scale=2.0):\n    return x * scale\n")
    assert target.inputs == ["x"]
    assert api.grad(None, at={"x": 3.0}, target=target).gradient["x"] == 2.0


@pytest.mark.parametrize("src, message", [
    ("def g(a, b=1):\n    return a\ndef f(x):\n    return g(x, b=1, c=2)\n", "unknown keyword argument `c`"),
    ("def g(a, b=1):\n    return a\ndef f(x):\n    return g(x, 1, 2)\n", "g() takes 1 to 2 arguments but 3"),
    ("def g(a, b=1):\n    return a\ndef f(x):\n    return g(b=2)\n", "missing the argument `a`"),
    ("def g(a, b):\n    return a\ndef f(x):\n    return g(x, a=2)\n", "two values for `a`"),
    ("def g(a=1, b):\n    return a\ndef f(x):\n    return x\n", "without a default follows one with a default"),
])
def test_wrong_user_calls_are_located_errors(src, message):
    assert message in error(src).message


# ---- item 3: attributes and methods --------------------------------------------------------------

def test_attributes_T_shape_ndim_size():
    src = "def f(A):\n    return sum(A.T @ A) + A.shape[0] * A.shape[1] + A.ndim + A.size\n"
    r = agree(src, A=A)
    a = np.array(A)
    assert r.value == pytest.approx((a.T @ a).sum() + 6 + 2 + 6)


def test_shape_and_len_are_numbers_for_range():
    src = """
        def f(A):
            total = 0.0
            for i in range(A.shape[0]):
                for j in range(len(A[i])):
                    total += A[i, j] * (i + j)
            return total
        """
    r = agree(src, A=A)
    assert r.value == pytest.approx(sum(A[i][j] * (i + j) for i in range(2) for j in range(3)))


@pytest.mark.parametrize("expr, expected", [
    ("A.sum()", lambda a: a.sum()), ("A.sum(axis=0)", lambda a: a.sum(axis=0)), ("A.sum(1)", lambda a: a.sum(1)),
    ("A.mean(axis=1, keepdims=True)", lambda a: a.mean(axis=1, keepdims=True)),
    ("A.prod(axis=0)", lambda a: a.prod(axis=0)), ("A.max(axis=1)", lambda a: a.max(axis=1)),
    ("A.min()", lambda a: a.min()), ("A.reshape(3, 2)", lambda a: a.reshape(3, 2)),
    ("A.reshape((6,))", lambda a: a.reshape((6,))), ("A.transpose()", lambda a: a.transpose()),
    ("A.dot(A.T)", lambda a: a.dot(a.T)), ("A.flatten()", lambda a: a.flatten()),
    ("A.ravel()", lambda a: a.ravel()), ("A[None].squeeze()", lambda a: a[None].squeeze()),
    ("A.T.sum(axis=0)", lambda a: a.T.sum(axis=0)),
    # issue 29 item 2: every method whose builtin exists, and copy/astype/item
    ("A.copy()", lambda a: a.copy()), ("A.astype(float)", lambda a: a.astype(float)),
    ("A[1, 2].item()", lambda a: a[1, 2].item()), ("A[1:, :1].item()", lambda a: a[1:, :1].item()),
    ("A.cumprod()", lambda a: a.cumprod()), ("A.cumprod(axis=1)", lambda a: a.cumprod(axis=1)),
    ("A.T.dot(A).trace()", lambda a: a.T.dot(a).trace()), ("A.diagonal()", lambda a: a.diagonal()),
    ("A.diagonal(1)", lambda a: a.diagonal(1)), ("A.clip(1.5, 4.5)", lambda a: a.clip(1.5, 4.5)),
    ("A.cumsum(axis=0)", lambda a: a.cumsum(axis=0)), ("A.std(axis=0)", lambda a: a.std(axis=0)),
    ("A.var()", lambda a: a.var()), ("(A * 0.321).round(1) * A", lambda a: (a * 0.321).round(1) * a),
    ("(A * 0.7).astype(int) * A", lambda a: (a * 0.7).astype(int) * a),
    ("A.max(axis=0, keepdims=True)", lambda a: a.max(axis=0, keepdims=True)),
])
def test_methods_are_the_builtins_with_the_array_first(expr, expected):
    a = np.array(A)
    got = value(f"def f(A):\n    return {expr}\n", A=A)
    np.testing.assert_allclose(got, expected(a))
    agree(f"def f(A):\n    return sum({expr} * {expr})\n", A=A)


@pytest.mark.parametrize("expr, message", [
    ("x.__class__", "attribute `.__class__` is not part of the language"),
    ("x.flat", "attribute `.flat`"), ("x.tolist()", "attribute `.tolist`"),
    ("x.sum", "`.sum` is a method: call it"),
])
def test_other_attributes_are_errors(expr, message):
    err = error(f"def f(x):\n    return {expr}\n", x=[1.0, 2.0])
    assert err.kind == "unsupported construct" and message in err.message
    assert (err.span.line, err.span.column) == (2, 14)


@pytest.mark.parametrize("expr, expected", [
    ("A.argmax()", 5), ("A.argmin()", 4), ("A.argmax(axis=0)", [1, 0, 1]), ("A.argmin(axis=1)", [0, 1]),
    ("A.any()", True), ("(A > 4.5).all()", False), ("A.astype(int)", [[1, 2, 3], [4, -5, 6]]),
])
def test_methods_of_whole_number_values_have_numpys_values_and_no_gradient(expr, expected):
    """argmax, argmin, any, all and astype(int): numpy's values; the input gets a zero gradient."""
    a = np.array(A)
    np.testing.assert_array_equal(value(f"def f(A):\n    return {expr}\n", A=A), eval(expr, {"A": a}))
    np.testing.assert_array_equal(value(f"def f(A):\n    return {expr}\n", A=A), expected)
    r = api.grad(None, at={"A": A}, target=load(f"def f(A):\n    return sum(A * 0.0) + sum({expr})\n"))
    np.testing.assert_array_equal(r.gradient["A"], np.zeros((2, 3)))


def test_astype_takes_a_dtype_and_item_one_entry():
    err = error("def f(x):\n    return x.astype(1)\n", x=[1.0, 2.0])
    assert "astype(): dtype must be a type numpy takes, not a number" in err.message and (err.span.line, err.span.column) == (2, 12)
    assert "np.float64" in err.hint
    err = error("def f(x):\n    return x.item()\n", x=[1.0, 2.0])
    assert "can only convert an array of size 1" in err.message


def test_attribute_of_a_function_is_a_type_error():
    assert "only arrays and numbers" in error("def g(y):\n    return y\ndef f(x):\n    return g.T\n").message


def test_library_builtins_take_their_numpy_keywords_from_the_language():
    # the library's functions are wrapped (loaded on first call): their keywords come from the
    # library's signatures, not from the wrapper's *args, **kwargs
    import numpy as np
    import autodiff
    A = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0]])
    r = autodiff.grad("sum(cumsum(A, axis=1)) + std(A, ddof=1) + prod(A, axis=0, keepdims=True).sum()",
                      at={"A": A})
    assert np.isfinite(r.gradient["A"]).all()
    with pytest.raises(autodiff.SourceError) as err:
        autodiff.grad("sum(cumsum(A, axes=1))", at={"A": A})
    assert "unknown keyword argument `axes`" in err.value.message and "axis=" in err.value.hint


# ---- issue 29 item 2: x[None] on a 0-d value, the empty list [] ------------------------------------

@pytest.mark.parametrize("expr, expected", [
    ("x[None] * 3.0", lambda x: x[None] * 3.0), ("x[None, None] * x", lambda x: x[None, None] * x),
    ("x[...] * x", lambda x: x[...] * x), ("x[..., None] + x", lambda x: x[..., None] + x),
    ("sum(x[np.newaxis] * x)", lambda x: np.sum(x[np.newaxis] * x)),
])
def test_new_axes_on_a_number_are_numpys(expr, expected):
    src = f"import numpy as np\ndef f(x):\n    return {expr}\n"
    got = value(src, x=1.5)
    want = expected(np.float64(1.5))
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want)
    agree(f"import numpy as np\ndef f(x):\n    return sum({expr} * {expr})\n", x=1.5)


def test_a_number_still_cannot_be_indexed_by_a_number():
    err = error("def f(x):\n    return x[0]\n")
    assert err.message == "cannot index a number" and (err.span.line, err.span.column) == (2, 12)


def test_the_empty_list_is_numpys_empty_array():
    src = "import numpy as np\ndef f(x):\n    return np.sum(np.concatenate([[], x])) + len([]) + np.sum([])\n"
    r = agree(src, x=[1.0, 2.0])
    assert r.value == 3.0 and r.gradient["x"].tolist() == [1.0, 1.0]
    assert value("def f(x):\n    return x + []\n", x=2.0).shape == (0,)
