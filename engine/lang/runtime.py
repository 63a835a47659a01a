"""What a running program is made of: frames, function values, limits, and the checks and
errors that the interpreter and the builtins share."""
from __future__ import annotations

import difflib

from ...parser.errors import SourceError
from ..core import ops as O
from ..core.backend import is_array, np, xp
from ..core.numbers import is_whole
from ..core.tape import Dual, Var, strip
from .values import describe, dtype, shape_of

BREAK, CONTINUE, RETURN = 1, 2, 3
_FRAMES_PER_CALL = 50       # Python frames one call of the language may take, generously
_NESTED_CHAIN = 8           # a + b + ... with more operators than this runs as a loop


class Limits:
    """Bounds that turn runaway programs into errors: executed steps, call depth, array size."""

    def __init__(self, steps: int = 10_000_000, depth: int = 200, elements: int = 250_000_000):
        self.steps = steps
        self.depth = depth
        self.elements = elements


class Frame:
    __slots__ = ("vars", "parent", "ret")

    def __init__(self, vars, parent):
        self.vars = vars
        self.parent = parent
        self.ret = None


class UserFunction:
    __slots__ = ("name", "params", "body", "closure", "node", "interp")

    def __init__(self, name, params, body, closure, node, interp):
        self.name, self.params, self.body, self.closure, self.node, self.interp = (
            name, params, body, closure, node, interp)

    def __call__(self, *args, span=None):
        return self.interp.call_user(self, args, span or self.node.span)

    def __repr__(self):
        return f"<function {self.name}>"


class Builtin:
    __slots__ = ("name", "fn", "min_args", "max_args")

    def __init__(self, name, fn, min_args, max_args):
        self.name, self.fn, self.min_args, self.max_args = name, fn, min_args, max_args

    def __call__(self, *args, span=None):
        return self.fn(*args)

    def __repr__(self):
        return f"<builtin {self.name}>"


class RangeValue:
    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def truth(v, span, what="condition"):
    """A value as a branch decision; arrays of several elements are ambiguous, as in numpy."""
    c = v.__class__
    if c is bool:
        return v
    if c is float:
        return v != 0.0
    v = strip(v)
    if v.__class__ in (bool, float, int):
        return bool(v)
    if is_array(v):
        if v.size == 1:
            return bool(v.reshape(()))
        raise SourceError("ambiguous condition", f"the {what} is an array of shape {tuple(v.shape)}; "
                          "an array of several elements is neither true nor false", span,
                          "use any(...) or all(...) to say which you mean")
    if isinstance(v, RangeValue) or v is None or isinstance(v, (UserFunction, Builtin, tuple)):
        raise SourceError("type error", f"the {what} is {describe(v)}, not a number", span)
    return bool(v)


def as_int(v, span, what="an index"):
    v = strip(v)
    if is_array(v) and v.ndim == 0:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SourceError("type error", f"{what} must be a whole number, not {describe(v)}", span)
    if not is_whole(v):
        raise SourceError("type error", f"{what} must be a whole number, not {v!r}", span)
    return int(v)


def runtime_error(exc, span, what):
    """Turn an exception raised by the engine or numpy into a SourceError at the node at fault."""
    if isinstance(exc, SourceError):
        if exc.span is None:
            exc.span = span
        return exc
    msg = str(exc)
    if isinstance(exc, MemoryError):
        return SourceError("too large", f"{what}: the result does not fit in memory ({msg or 'out of memory'})",
                           span, "use smaller arrays, or raise --max-elements if this is intended")
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


class LimitError(SourceError):
    pass



class GradFunction:
    """The value of `grad(f)`: the derivative of a one-argument function, nestable."""
    __slots__ = ("fn", "interp", "name")

    def __init__(self, fn, interp):
        self.fn = fn
        self.interp = interp
        self.name = f"grad({getattr(fn, 'name', 'f')})"

    def __call__(self, *args, span=None):
        from ..core.tape import Tape, backward
        if len(args) != 1:
            raise SourceError("wrong arguments", f"{self.name} takes 1 argument but {len(args)} were given", span)
        tape = Tape(persistent=False)
        x = tape.watch(args[0])
        y = self.interp.call(self.fn, [x], span)
        if shape_of(y) != ():
            raise SourceError("shape mismatch", f"grad needs a function with a scalar output; "
                              f"{self.name[5:-1]} returned {describe(y)}", span, "wrap the output in sum(...)")
        adj = backward(tape, y, 1.0 if dtype() == "float64" else np().float32(1.0))
        g = adj[x.index]
        return g if g is not None else O.zeros_like(args[0]) * 1.0


def _drop_tapes(frame):
    """A failed run is never swept: free its partial tapes now, while the GC is still paused,
    rather than let the error carry millions of entries (an endless loop at the step limit)
    to the code that reports it."""
    for v in frame.vars.values():
        while v.__class__ is Dual:
            v = v.primal
        if v.__class__ is Var and not v.tape.persistent:
            del v.tape.entries[:]


def _raw_getitem(v, index):
    r = v[index]
    return float(r) if r.__class__ is np().float64 else r


def _bad_index(iv, span):
    raise SourceError("type error", "an index array must hold whole numbers", span)


def _equal(a, b) -> bool:
    a, b = strip(a), strip(b)
    if a.__class__ is float and b.__class__ is float:
        return a == b
    try:
        return bool(xp().any(xp().asarray(a) == xp().asarray(b)))
    except Exception:
        return False


def _iterate(seq, span):
    if isinstance(seq, RangeValue):
        return map(float, range(seq.start, seq.stop, seq.step))
    shp = shape_of(seq)
    if isinstance(seq, tuple):
        return iter(seq)
    if not shp:
        raise SourceError("type error", f"cannot loop over {describe(seq)}", span,
                          "loop over range(n) or over an array")
    if seq.__class__ in (Var, Dual):
        return (O.getitem(seq, i) for i in range(shp[0]))
    return (_raw_getitem(seq, i) for i in range(shp[0]))


def _arity(name, lo, hi, got):
    want = f"{lo}" if lo == hi else (f"{lo} to {hi}" if hi < 99 else f"at least {lo}")
    plural = "" if (lo == hi == 1) else "s"
    return f"{name}() takes {want} argument{plural} but {got} {'was' if got == 1 else 'were'} given"


def _scope_names(scope):
    out = []
    s = scope
    while s is not None:
        out.extend(s.locals or ())
        s = s.parent
    return out


def unknown_name(name, span, candidates):
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1)
    hint = f"did you mean `{close[0]}`?" if close else None
    return SourceError("unknown name", f"`{name}` is not defined", span, hint)
