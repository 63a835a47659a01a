"""The builtins made of engine/core/library's functions: each under its numpy name, taking
numpy's parameters (the positional range comes from the function's signature), the constructors
in the working float type; and numpy's second spellings of the language's own builtins."""
from __future__ import annotations

import inspect

from ..core.library import FUNCTIONS, TAKES_DTYPE
from .values import dtype

# numpy's second spelling -> the builtin it names
SECOND_SPELLINGS = {"absolute": "abs", "amax": "max", "amin": "min"}


def positional_range(fn):
    """(fewest, most) positional arguments fn takes; most is 99 for *args."""
    lo = hi = 0
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return lo, 99
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            hi += 1
            lo += p.default is p.empty
    return lo, hi


def _in_working_dtype(fn):
    def make(*args, **kwargs):
        kwargs.setdefault("dtype", dtype())
        return fn(*args, **kwargs)
    make.__name__ = fn.__name__
    make.__signature__ = inspect.signature(fn)       # keyword plumbing reads the real parameters
    return make


def add_library_builtins(add, numeric):
    """add(name, fn, lo, hi) each library function, wrapped by numeric(name, fn)."""
    for name, fn in FUNCTIONS.items():
        lo, hi = positional_range(fn)
        add(name, numeric(name, _in_working_dtype(fn) if name in TAKES_DTYPE else fn), lo, hi)


def add_second_spellings(table):
    for second, first in SECOND_SPELLINGS.items():
        builtin = table.get(first)
        if builtin is not None:
            table[second] = builtin
