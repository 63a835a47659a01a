"""Keyword arguments and defaults: which keywords a builtin takes (read off its Python
signature, so a builtin added with `def cumsum(self, x, axis=None)` takes `axis=` with no list
to update), and how a user function's parameters are filled from positions, keywords and the
defaults its def evaluated."""
from __future__ import annotations

from ...parser.errors import SourceError
from .errors import arity_message

def accepted_keywords(fn) -> tuple:
    """The parameters of a builtin's function that a keyword may name: read off its code (through
    functools.wraps to the function wrapped), so nothing that holds an interpreter is kept."""
    bound = hasattr(fn, "__self__")
    func = _unwrapped(fn)
    if hasattr(func, "accepted_keywords"):      # a wrapper of *args, **kwargs that says what it takes
        return tuple(func.accepted_keywords)
    code = getattr(func, "__code__", None)
    if code is None:
        return ()
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return tuple(name for name in names[1 if bound else 0:] if not name.startswith("_"))


def _unwrapped(fn):
    """The function whose signature says a builtin's parameters: through a bound method and
    functools.wraps, to the first that says them itself (`accepted_keywords`)."""
    func = getattr(fn, "__func__", fn)
    while hasattr(func, "__wrapped__") and not hasattr(func, "accepted_keywords"):
        func = func.__wrapped__
    return func


def _positional_count(fn) -> int:
    """How many of accepted_keywords(fn) a position may fill: not the keyword-only ones
    (`zeros(self, *shape, dtype=None)` takes dtype= by keyword only)."""
    func = _unwrapped(fn)
    code = getattr(func, "__code__", None)
    if hasattr(func, "accepted_keywords") or code is None:
        return len(accepted_keywords(fn))
    return code.co_argcount - (1 if hasattr(fn, "__self__") else 0)


def unknown_keyword(fname, keyword, accepted, span) -> SourceError:
    listed = ", ".join(f"{k}=" for k in accepted)
    takes = f"{fname}() takes the keywords {listed}" if accepted else f"{fname}() takes no keyword arguments"
    return SourceError("wrong arguments", f"{fname}() got an unknown keyword argument `{keyword}`", span, takes)


def check_builtin_keywords(builtin, positional: int, keywords, span=None):
    """Compile-time checks of `f(a, b, name=...)` for a builtin: each keyword is one of its
    parameters, none repeats a positional argument, and the count fits."""
    accepted = accepted_keywords(builtin.fn)
    for kw in keywords:
        name, where = (kw.name, kw.span) if hasattr(kw, "span") else (kw, span)
        if name not in accepted:
            raise unknown_keyword(builtin.name, name, accepted, where)
        position = accepted.index(name)
        if position < positional and position < builtin.max_args and position < _positional_count(builtin.fn):
            raise SourceError("wrong arguments", f"{builtin.name}() got two values for `{name}` "
                              f"(argument {position + 1} and the keyword)", where)
    if positional > builtin.max_args or positional + len(keywords) < builtin.min_args:
        raise SourceError("wrong arguments", arity_message(builtin.name, builtin.min_args, builtin.max_args,
                                                           positional), span)


def complete_arguments(fn, args, keywords, span) -> list:
    """A user function's arguments in parameter order: positions first, then keywords, then
    the defaults its def evaluated for the parameters still unfilled."""
    params, defaults = fn.params, fn.defaults
    least = len(params) - len(defaults)
    if len(args) > len(params) or (not keywords and len(args) < least):
        raise SourceError("wrong arguments", arity_message(fn.name, least, len(params), len(args)), span)
    values = dict(zip(params, args))
    for name, value in (keywords or {}).items():
        if name not in params:
            raise unknown_keyword(fn.name, name, params, span)
        if name in values:
            raise SourceError("wrong arguments", f"{fn.name}() got two values for `{name}`", span)
        values[name] = value
    out = []
    for i, name in enumerate(params):
        if name in values:
            out.append(values[name])
        elif i >= least:
            out.append(defaults[i - least])
        else:
            raise SourceError("wrong arguments", f"{fn.name}() is missing the argument `{name}`", span)
    return out
