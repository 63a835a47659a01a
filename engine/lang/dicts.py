"""Dicts as containers, as ML code keeps its parameters (issue 29 item 2):
`params = {"W": W, "b": b}`, `params["W"]`, `grads[k] = ...`, `for k in params`,
`params.items()`, a dict returned by a function. A dict is a value like every other of the
language: `d[k] = v` rebinds `d` to an updated copy, so a dict passed to a function is never
changed by it. Keys are strings or numbers; values anything the language computes."""
from __future__ import annotations

from ...parser.errors import SourceError
from ..core.tape import BOXES
from .callables import Builtin
from .values import describe


def _key(k, span):
    """A dict key: a string, or a number (a float that holds a whole number is that int, as
    Python's hash makes 1 and 1.0 the same key)."""
    if k.__class__ is str:
        return k
    if isinstance(k, BOXES):
        raise SourceError("type error", "a dict key must be a string or a number, not a value computed from "
                          "an input", span)
    if k.__class__ in (float, int, bool):
        return int(k) if float(k).is_integer() else float(k)
    raise SourceError("type error", f"a dict key must be a string or a number, not {describe(k)}", span)


def item(d: dict, k, span):
    """`d[k]`, or an error naming the keys there are."""
    key = _key(k, span)
    try:
        return d[key]
    except KeyError:
        keys = ", ".join(repr(x) for x in d) or "none"
        raise SourceError("key error", f"the dict has no key {key!r} (its keys: {keys})", span) from None


def updated(d: dict, k, value, span) -> dict:
    """`d[k] = value` as a value: a new dict."""
    out = dict(d)
    out[_key(k, span)] = value
    return out


def from_pairs(pairs, span) -> dict:
    """The dict of (key, value) pairs, as a dict comprehension makes it."""
    return {_key(k, span): v for k, v in pairs}


class DictCompiler:
    """The Interpreter's dict literals (a mixin: `self` is the Interpreter)."""

    def e_DictExpr(self, e, scope):
        pairs = [(self.expr(k, scope), self.expr(v, scope), k.span) for k, v in zip(e.keys, e.values)]

        def dict_literal(frame):
            out = {}
            for key, value, span in pairs:
                out[_key(key(frame), span)] = value(frame)
            return out
        return dict_literal


def _of_dict(name):
    def method(d):
        if d.__class__ is not dict:
            raise TypeError(f".{name}() is a method of dicts, not of {describe(d)}")
        if name == "keys":
            return list(d)
        return list(d.values()) if name == "values" else [tuple(pair) for pair in d.items()]
    return method


# `d.keys()`, `d.values()`, `d.items()`: Python lists (loops take them item by item).
DICT_METHODS = {name: Builtin(name, _of_dict(name), 1, 1) for name in ("keys", "values", "items")}
