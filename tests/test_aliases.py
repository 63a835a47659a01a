"""numpy's in-place writes under the language's value semantics (engine/lang/aliases.py): where
numpy would read other values than the language (a name of the written array, a view of the
written elements, a list or dict holding one, a caller's name of an argument written in place),
the read is an error naming the write; where numpy would read the same, the program runs as it did.
Each program is also run by numpy itself, and every one that runs agrees with it to the bit."""
import importlib.util
import textwrap

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.parser.errors import SourceError

X = np.array([1.0, 2.0, 3.0, 4.0])


def numpy_run(tmp_path, src, **at):
    path = tmp_path / "numpy_program.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("numpy_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f(**{k: np.array(v, dtype=float) for k, v in at.items()})


def ours(tmp_path, src, **at):
    path = tmp_path / "program.py"
    path.write_text(src)
    return api.grad(str(path), at=at)


REFUSED = {
    "a slice written, its array read": ("""
        def f(x):
            a = x * 1.0
            b = a[0:2]
            b[0] = 5.0
            return np.sum(a)
        """, "a", (6, 19), "b[...] = ...", 5),
    "an array written through a reshape of the input": ("""
        def f(x):
            a = x.reshape(2, 2)
            a[0, 0] = 0.0
            return np.sum(x)
        """, "x", (5, 19), "a[...] = ...", 4),
    "a transpose written": ("""
        def f(x):
            a = np.outer(x, x)
            b = a.T
            b[0] = 7.0
            return np.sum(a)
        """, "a", (6, 19), "b[...] = ...", 5),
    "a row of a loop written": ("""
        def f(x):
            a = np.outer(x, x)
            for row in a:
                row[0] = 100.0
            return np.sum(a)
        """, "a", (6, 19), "row[...] = ...", 5),
    "a name of the same array": ("""
        def f(x):
            a = x * 2.0
            b = a
            a[1] += 1.0
            return np.sum(b)
        """, "b", (6, 19), "a[...] += ...", 5),
    "an argument a helper writes in place": ("""
        def update(w, g):
            w -= 0.1 * g
        def f(x):
            update(x, x * 2)
            return np.sum(x)
        """, "x", (6, 19), "w -= ...", 3),
    "a dict another name holds": ("""
        def f(x):
            d = {"a": x}
            e = d
            e["a"] = x * 3
            return np.sum(d["a"])
        """, "d", (6, 19), "e[...] = ...", 5),
    "a view written twice, the second write on its element": ("""
        def f(x):
            a = x * 1.0
            b = a[0:2]
            a[3] = 1.0
            a[0] = 9.0
            return np.sum(b)
        """, "b", (7, 19), "a[...] = ...", 6),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_read_numpy_would_answer_otherwise_is_refused_naming_the_write(tmp_path, name):
    """Each program gave the language's old values silently (t1: 10 where numpy gives 14)."""
    body, read, where, how, line = REFUSED[name]
    src = "import numpy as np\n" + textwrap.dedent(body).lstrip("\n")
    with pytest.raises(SourceError) as err:
        ours(tmp_path, src, x=X)
    assert err.value.kind == "stale value"
    assert err.value.message.startswith(f"`{read}` was changed at line {line} by `{how}`"), err.value.message
    assert (err.value.span.line, err.value.span.column) == where
    assert "copy it before the write" in err.value.hint


AGREE = {
    "a view of other elements": """
        def f(x):
            X = np.outer(x, x)
            total = 0.0
            for t in range(3):
                prev = X[:, t]
                X[:, t + 1] = prev * 0.5
                total = total + np.sum(prev)
            return total + np.sum(X)
        """,
    "a copy kept": """
        def f(x):
            a = x * 1.0
            b = a.copy()
            c = np.array(a)
            d = a.flatten()
            a[0] = 5.0
            return np.sum(a) + np.sum(b) + np.sum(c) + np.sum(d)
        """,
    "a name taken again after the write": """
        def f(x):
            a = x * 1.0
            b = a
            a[0] = 5.0
            b = a
            return np.sum(b)
        """,
    "writes into a fresh array": """
        def f(x):
            out = np.zeros(4)
            for i in range(4):
                out[i] = x[i] * x[3 - i]
            out += 1.0
            return np.sum(out * x)
        """,
    "an array written, its old view never read": """
        def f(x):
            a = x * 1.0
            b = a[0:2]
            s = np.sum(b)
            a[0] = 9.0
            return s + np.sum(a)
        """,
    "a list extended, no one else holding it": """
        def f(x):
            parts = []
            for v in x:
                parts.append(v * v)
            parts += [x[0]]
            return sum(parts)
        """,
}


@pytest.mark.parametrize("name", list(AGREE))
def test_where_numpy_reads_the_same_the_program_runs_as_numpy(tmp_path, name):
    src = "import numpy as np\n" + textwrap.dedent(AGREE[name]).lstrip("\n")
    r = ours(tmp_path, src, x=X)
    assert r.value == numpy_run(tmp_path, src, x=X)


def test_a_write_no_one_else_can_see_searches_nothing(tmp_path):
    """The fast path: a value no other name holds (its reference count) and no view the program
    made of its memory is written without looking through the frames."""
    from autodiff.engine.lang import aliases
    src = ("import numpy as np\ndef f(x):\n    out = np.zeros(50)\n    for i in range(50):\n"
           "        out[i] = x[i % 4] * i\n    out += 1.0\n    return np.sum(out)\n")
    made = []
    init = aliases.Writes.__init__

    def recording(self):
        init(self)
        made.append(self)
    aliases.Writes.__init__ = recording
    try:
        ours(tmp_path, src, x=X)
    finally:
        aliases.Writes.__init__ = init
    assert made and sum(w.searches for w in made) == 0
    src_alias = src.replace("    out += 1.0\n", "    kept = out\n    out += 1.0\n")
    with pytest.raises(SourceError):
        ours(tmp_path, src_alias.replace("return np.sum(out)", "return np.sum(kept)"), x=X)


def test_a_function_gives_the_same_answer_or_the_same_error_at_every_point(tmp_path):
    """A replay runs no write: it runs what the interpreter recorded, so a program that was refused
    stays refused (its trace is never kept) and one that ran replays with its values."""
    import autodiff
    ok = tmp_path / "ok.py"
    ok.write_text("import numpy as np\n" + textwrap.dedent(AGREE["a view of other elements"]).lstrip("\n"))
    f = autodiff.function(str(ok))
    for k in range(4):
        x = X + k
        value, _ = f.value_and_grad(x=x)
        assert value == numpy_run(tmp_path, ok.read_text(), x=x)
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\n" + textwrap.dedent(REFUSED["a slice written, its array read"][0]).lstrip("\n"))
    g = autodiff.function(str(bad))
    for k in range(3):
        with pytest.raises(SourceError):
            g.value_and_grad(x=X + k)


def test_a_stale_item_of_a_list_a_builtin_reads_is_located_at_the_call(tmp_path):
    """np.stack(lst) after a write into one of lst's arrays: the list is read as an array before
    the builtin runs, and that read was outside the call's located errors (no line, no column)."""
    src = "import numpy as np\ndef f(x):\n    a = x * 1.0\n    lst = [a, x]\n    a[0] = 5.0\n    return np.sum(np.stack(lst))\n"
    with pytest.raises(SourceError) as err:
        ours(tmp_path, src, x=X)
    assert err.value.kind == "stale value" and err.value.message.startswith("this item was changed at line 5")
    assert (err.value.span.line, err.value.span.column) == (6, 19)


def test_np_copy_and_the_copies_numpy_makes_keep_their_values(tmp_path):
    src = ("import numpy as np\ndef f(x):\n    a = x * 1.0\n    b, c, d, e = np.copy(a), a.copy(), np.array(a), a.astype(float)\n"
           "    a[0] = 9.0\n    return np.sum(a) + np.sum(b * 2) + np.sum(c * 3) + np.sum(d * 4) + np.sum(e * 5)\n")
    r = ours(tmp_path, src, x=X)
    assert r.value == numpy_run(tmp_path, src, x=X)
    assert r.gradient["x"].tolist() == [14.0, 15.0, 15.0, 15.0]


LARGE = np.linspace(-1.0, 1.0, 1 << 16)          # pending values (core/lazy.py): fused.FUSE_MIN_ELEMENTS


@pytest.mark.parametrize("body, line", [("""
        def f(x):
            a = 2.0 * np.exp(x)
            b = a
            b += 1.0
            return np.sum(a * a)
        """, 5), ("""
        def update(w, g):
            w -= 0.1 * g

        def f(x):
            w = x * 3.0
            update(w, np.sin(x))
            return np.sum(w * w)
        """, 3)], ids=["a second name", "a helper's argument"])
def test_a_pending_value_written_in_place_is_stale_as_an_array_is(tmp_path, body, line):
    """An array too large for numpy's op-by-op path is pending (not computed yet) when `+=` asks
    whether numpy writes it in place: the question peeked, found no array and let the other name
    keep the old values (the first program gave sum((2 e^x)^2), numpy sum((2 e^x + 1)^2))."""
    src = "import numpy as np\n" + textwrap.dedent(body).lstrip("\n")
    with pytest.raises(SourceError) as err:
        ours(tmp_path, src, x=LARGE)
    assert err.value.kind == "stale value" and f"was changed at line {line} by" in err.value.message


def test_a_pending_value_no_one_else_holds_is_written_as_numpy_writes_it(tmp_path):
    src = "import numpy as np\n" + textwrap.dedent("""
        def f(x):
            a = 2.0 * np.exp(x)
            a += x * x
            a -= 1.0
            return np.sum(a * x)
        """).lstrip("\n")
    assert ours(tmp_path, src, x=LARGE).value == numpy_run(tmp_path, src, x=LARGE)
