"""The builtins made of engine/core/library's functions: each under its numpy name, taking
numpy's parameters (engine/core/library's SIGNATURES), the constructors in the working float
type; and numpy's second spellings of the language's own builtins."""
from __future__ import annotations

from ..core.library import SIGNATURES, TAKES_DTYPE, array_parameters, function, parameters, positional_range
from ..core.sequences import as_array
from .dtypes import cast
from .values import dtype

# numpy's second spelling -> the builtin it names
SECOND_SPELLINGS = {"absolute": "abs", "amax": "max", "amin": "min", "remainder": "mod"}


def _on_first_call(name):
    """The library function `name`, looked up (and its module imported) on the first call: a
    program that uses none of them never loads the library. A tuple given for an array
    parameter is the array numpy reads it as."""
    found = []
    with_dtype = name in TAKES_DTYPE
    arrays = array_parameters(name)
    at = parameters(name).index("dtype") if "dtype" in parameters(name) else None

    def call(*args, **kwargs):
        if not found:
            found.append(function(name))
        given = None
        if at is not None:          # the program's dtype= is applied to what the constructor made
            given = args[at] if len(args) > at else kwargs.pop("dtype", None)
            args = args[:at] + args[at + 1:]
            if with_dtype:
                kwargs["dtype"] = dtype()
        if arrays[0] and any(v.__class__ in (tuple, list) for v in (*args, *kwargs.values())):
            args, kwargs = _arrays_read(args, kwargs, *arrays)
        made = found[0](*args, **kwargs)
        return made if given is None else cast(made, given, f"{name}()")
    call.__name__ = name
    call.accepted_keywords = tuple(parameters(name))       # the keywords numpy's function takes
    return call


def _arrays_read(args, kwargs, positions, names, first):
    """The arguments with a tuple at an array parameter made the array numpy reads it as."""
    args = tuple(as_array(a) if i in positions or (first is not None and i >= first) else a
                 for i, a in enumerate(args))
    return args, {k: as_array(v) if k in names else v for k, v in kwargs.items()}


def add_library_builtins(add, numeric):
    """add(name, fn, lo, hi) each library function, wrapped by numeric(name, fn)."""
    for name in SIGNATURES:
        lo, hi = positional_range(name)
        add(name, numeric(name, _on_first_call(name)), lo, hi)


def add_second_spellings(table):
    for second, first in SECOND_SPELLINGS.items():
        builtin = table.get(first)
        if builtin is not None:
            table[second] = builtin
