"""The errors of a running program: engine and numpy exceptions as located SourceErrors, unknown
names with a suggestion, wrong argument counts."""
from __future__ import annotations

from ...parser.errors import SourceError, option
from ..core.errors import EngineError
from ..core.lazy import forced_here
from ..core.primitives import shape
from ..core.tape import strip


def runtime_error(exc, span, what, operands=()):
    """Turn an exception raised by the engine or numpy into a SourceError at the node at fault. A
    shape mismatch names the shapes of the `operands` (an operator's, a call's arguments) where
    the message does not (numpy's matmul and solve name sizes only)."""
    if forced_here(exc) and not isinstance(exc, (SourceError, EngineError, MemoryError)):
        return exc                  # raised computing a pending value (core/lazy.py): not this reader's
    err = _located(exc, span, what)
    if operands and err.kind == "shape mismatch" and "with shapes" not in err.message \
            and all(hasattr(strip(v), "shape") for v in operands):           # arrays (no tuples)
        shapes = [str(shape(v)) for v in operands]
        shapes = " and ".join(shapes) if len(shapes) == 2 else ", ".join(shapes)
        err.message += f" (the {'operands' if what.startswith('`') else 'arguments'} have shapes {shapes})"
    return err


def _located(exc, span, what):
    if isinstance(exc, SourceError):
        if exc.span is None:
            exc.span = span
        return exc
    if isinstance(exc, EngineError):          # the one place core errors get a location and a hint
        hint = f"raise the limit with {option(exc.setting)}" if exc.setting else None
        return SourceError(exc.kind, exc.message, span, hint)
    msg = str(exc)
    if isinstance(exc, MemoryError):
        return SourceError("too large", f"{what}: the result does not fit in memory ({msg or 'out of memory'})",
                           span, f"use smaller arrays, or raise {option('max_elements')} if this is intended")
    if isinstance(exc, IndexError):
        return SourceError("index error", f"{what}: {msg}", span)
    if isinstance(exc, NotImplementedError):
        return SourceError("not implemented", f"{what}: {msg}", span)
    if isinstance(exc, RecursionError):
        return SourceError("too deep", f"{what}: the expression or the calls are nested too deeply for the "
                           "interpreter", span)
    if isinstance(exc, ValueError) and ("broadcast" in msg or "shape" in msg or "matmul" in msg
                                        or "dimension" in msg or "align" in msg):
        return SourceError("shape mismatch", f"{what}: {msg}", span)
    if isinstance(exc, TypeError):
        if "NoneType" in msg:
            return SourceError("type error", f"{what}: a value is nothing (a function without return?)", span)
        return SourceError("type error", f"{what}: {msg}", span)
    return SourceError("runtime error", f"{what}: {type(exc).__name__}: {msg}", span)


def arity_message(name, lo, hi, got):
    """`f() takes 2 arguments but 3 were given` (hi of 99 or more: no upper bound)."""
    want = f"{lo}" if lo == hi else (f"{lo} to {hi}" if hi < 99 else f"at least {lo}")
    plural = "" if (lo == hi == 1) else "s"
    return f"{name}() takes {want} argument{plural} but {got} {'was' if got == 1 else 'were'} given"


# Names other languages and textbooks use for a builtin: spelling closeness would miss them
# (`ln` reads like `len`).
OTHER_SPELLINGS = {"ln": "log", "pow": "**", "power": "**"}


def unassigned(name, span):
    """A name read where the run has not bound it (a local of a branch not taken, a global after
    its use), as Python's UnboundLocalError/NameError says it."""
    return SourceError("unknown name", f"`{name}` is used before it is assigned", span)


def unknown_name(name, span, candidates):
    names = set(candidates)
    other = OTHER_SPELLINGS.get(name)
    if other is not None and (other in names or not other.isidentifier()):
        close = [other]
    else:
        import difflib                       # only for a mistyped name: start-up stays cheap
        close = difflib.get_close_matches(name, sorted(names), n=1)
    hint = f"did you mean `{close[0]}`?" if close else None
    return SourceError("unknown name", f"`{name}` is not defined", span, hint)
