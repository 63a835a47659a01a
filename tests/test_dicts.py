"""Issue 29 item 2: dicts as containers, as ML code keeps parameters (engine/lang/dicts.py):
literals, d["W"], d[k] = v as a value, for k in d, .keys() .values() .items(), len, a dict
returned by a function. Each gradient: reverse = forward = central differences."""
import numpy as np
import pytest

from numpy_forms_checks import agree, error, value

W = [[0.5, -1.0], [2.0, 0.25]]
B = [0.1, -0.3]


def test_a_dict_of_parameters_is_read_by_key_and_differentiated():
    src = """
        import numpy as np
        def forward(params, x):
            return np.tanh(params["W"] @ x + params["b"])

        def f(W, b):
            params = {"W": W, "b": b}
            return np.sum(forward(params, np.array([1.0, 2.0])) ** 2)
        """
    r = agree(src, W=W, b=B)
    w, b, x = np.array(W), np.array(B), np.array([1.0, 2.0])
    t = np.tanh(w @ x + b)
    assert r.value == pytest.approx(np.sum(t ** 2), rel=1e-14)
    np.testing.assert_allclose(r.gradient["b"], 2 * t * (1 - t ** 2), rtol=1e-12)


def test_item_assignment_loops_and_methods():
    src = """
        def scaled(params, c):
            out = {}
            for k in params:
                out[k] = params[k] * c
            return out

        def f(W, b):
            params = {"W": W, "b": b}
            grads = scaled(params, 3.0)
            grads["b"] += b
            total = 0.0
            for k, v in grads.items():
                total += sum(v * v)
            for v in params.values():
                total += sum(v)
            return total + len(params) + len(grads.keys()) + sum(params["b"])
        """
    r = agree(src, W=W, b=B)
    w, b = np.array(W), np.array(B)
    assert r.value == pytest.approx(np.sum((3 * w) ** 2) + np.sum((4 * b) ** 2) + w.sum() + b.sum() + 4 + b.sum())
    np.testing.assert_allclose(r.gradient["W"], 18 * w + 1, rtol=1e-12)
    np.testing.assert_allclose(r.gradient["b"], 32 * b + 2, rtol=1e-12)


def test_a_dict_a_callee_writes_is_not_read_as_it_was():
    """Python writes the caller's dict: d["a"] is 0.0 after clobber(d), so f gives 0.0; the language
    gave 6.0 (its dict a value the callee could not change). Reading d after the callee's write is
    now an error at the read (lang/aliases.py); the callee's own copy and a dict taken again are fine."""
    src = """
        def clobber(d):
            d["a"] = 0.0
            return d["a"]

        def f(x):
            d = {"a": x, 1: 2.0}
            z = clobber(d)
            return d["a"] * d[1.0] + z
        """
    err = error(src, x=3.0)
    assert err.kind == "stale value" and "`d` was changed at line 2 by `d[...] = ...`" in err.message
    assert (err.span.line, err.span.column) == (8, 12)
    assert value(src.replace("z = clobber(d)", "z = clobber(d)\n            d = {'a': z, 1: 2.0}"), x=3.0) == 0.0


@pytest.mark.parametrize("src, message, place", [
    ('def f(x):\n    d = {"a": x}\n    return d["b"]\n', "the dict has no key 'b' (its keys: 'a')", (3, 12)),
    ('def f(x):\n    d = {x: 1.0}\n    return d\n', "a dict key must be a string or a number, not a value computed "
     "from an input", (2, 10)),
    ('def f(x):\n    d = {"a": x}\n    return d["a", "b"]\n', "a dict takes one key", (3, 12)),
    ('def f(x):\n    return x.keys()\n', ".keys() is a method of dicts, not of an array of shape (2,)", (2, 12)),
])
def test_dict_mistakes_name_themselves(src, message, place):
    err = error(src, x=[1.0, 2.0])
    assert message in err.message and (err.span.line, err.span.column) == place


def test_dict_comprehensions_update_parameters_as_training_code_does():
    src = """
        import numpy as np
        def f(W, b):
            params = {"W": W, "b": b}
            grads = {k: 2.0 * v for k, v in params.items()}
            new = {k: params[k] - 0.1 * grads[k] for k in params}
            rows = {i: W[i] ** 2 for i in range(2)}
            return np.sum(new["W"] ** 2) + np.sum(new["b"]) + np.sum(rows[1]) + len({k: 1.0 for k in []})
        """
    r = agree(src, W=W, b=B)
    w, b = np.array(W), np.array(B)
    assert r.value == pytest.approx(np.sum((0.8 * w) ** 2) + np.sum(0.8 * b) + np.sum(w[1] ** 2), rel=1e-14)
    np.testing.assert_allclose(r.gradient["W"], 2 * 0.64 * w + np.array([[0, 0], [1, 1]]) * 2 * w, rtol=1e-12)


def test_a_dict_comprehensions_names_stay_inside_it():
    src = "k = 10.0\ndef f(x):\n    d = {k: x * k for k in range(3)}\n    return d[2] + k\n"
    assert value(src, x=1.0) == 12.0
