"""emit/builtin_ways.py: every builtin the language offers is written by `autodiff emit` in exactly
one way, or refused with a stated reason (issue 28 item 8: the ways were three lists, TRACED,
FORMS and FFT_FORMS, and a chain of special cases in emit/lower.py; a second spelling such as
`absolute` was in none and was written as numpy's function, its derivative refused)."""
from __future__ import annotations

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core.library import function
from autodiff.engine.emit.builtin_ways import BY_WAY, NO_NUMPY, REFUSED, WAY, first_spelling, refused_reason, way_of
from autodiff.engine.emit.lower import elementwise_builtins
from autodiff.engine.lang.builtins import make_builtins
from autodiff.engine.lang.numpy_builtins import SECOND_SPELLINGS
from autodiff.parser.errors import SourceError

BUILTINS = make_builtins(None)
ENTRIES = elementwise_builtins()
CALLABLE = sorted(name for name, b in BUILTINS.items() if callable(b) and not isinstance(b, type))


def table() -> dict:
    """builtin -> its way (a second spelling: the way of the builtin it spells)."""
    return {name: way_of(first_spelling(name), ENTRIES) for name in CALLABLE}


def printed(ways: dict) -> str:
    by_way: dict = {}
    for name, way in ways.items():
        by_way.setdefault(way, []).append(name)
    return "\n".join(f"{way} ({len(names)}): {', '.join(names)}" for way, names in sorted(by_way.items()))


def test_every_builtin_is_written_one_way_or_refused_with_its_reason():
    ways = table()
    assert set(ways.values()) <= set(BY_WAY) | {"entry", "numpy", "refused"}, printed(ways)
    listed = [name for names in BY_WAY.values() for name in names]
    assert len(listed) == len(set(listed)) == len(WAY), "a builtin in two ways:\n" + printed(ways)
    assert not set(listed) - set(BUILTINS), f"ways for builtins the language has not: {set(listed) - set(BUILTINS)}"
    assert not set(REFUSED) - set(BUILTINS) and not set(REFUSED) & set(WAY)
    for name, way in ways.items():
        if way == "refused":
            assert refused_reason(first_spelling(name)), f"{name} refused with no reason\n" + printed(ways)
    assert ways["abs"] == "entry" and ways["var"] == "library" and ways["norm"] == "form" and \
        ways["fftfreq"] == "frequencies" and ways["amax"] == "reduction" and ways["zeros"] == "numpy", printed(ways)


def test_a_library_builtin_is_the_librarys_function_and_an_entry_is_the_tables():
    ways = table()
    for name in BY_WAY["library"]:
        assert callable(function(name)), name
    for name, way in ways.items():
        if way == "entry":
            prim = ENTRIES[first_spelling(name)]
            assert prim.elementwise or prim.emits_at_shapes, name


@pytest.mark.parametrize("name", sorted(n for n in CALLABLE if way_of(first_spelling(n), ENTRIES) == "refused"))
def test_a_refused_builtin_says_why(name):
    with pytest.raises(SourceError) as e:
        api.emit(f"2.0 * {name}(x) * x", wrt=["x"])
    assert f"the builtin `{name}`" in str(e.value) and e.value.hint == refused_reason(name)
    assert (e.value.span.line, e.value.span.column) == (1, 7)


@pytest.mark.parametrize("second, first", sorted(SECOND_SPELLINGS.items()))
def test_a_second_spelling_is_written_as_the_builtin_it_spells(second, first):
    # absolute(x) and remainder(x, 2.0) were numpy's np.absolute, np.remainder with their
    # derivative refused; amax/amin had no axis form
    call = "(x, 0)" if first in ("max", "min") else "(x, 2.0)" if first == "mod" else "(x)"
    at = {"x": np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.5]])}
    ours, theirs = (api.emit(f"sum({name}{call})", wrt=["x"], at=at).splitlines() for name in (second, first))
    assert [line for line in ours if not line.startswith("# source")] == \
        [line for line in theirs if not line.startswith("# source")]


def test_no_numpy_is_the_reason_where_numpy_has_no_function():
    assert way_of("expit", ENTRIES) == "refused" and refused_reason("expit") == NO_NUMPY
