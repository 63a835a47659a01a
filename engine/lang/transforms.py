"""Derivatives inside programs: the values of `grad(f)`, `grad(f, argnum)`, `value_and_grad(f)`,
`hessian(f)`, and the calls `jvp(f, x, v)` and `vjp(f, x, v)`.

Each runs the program's function on boxes at a fresh level (a Tape for reverse mode, Duals for
forward mode), so they nest with each other and with the derivative being taken outside:
`jvp(grad(f), x, v)` is forward over reverse (a Hessian-vector product)."""
from __future__ import annotations

import weakref

from ...parser import nodes
from ...parser.errors import SourceError
from ..core import ops
from ..core.backend import is_array, np, xp
from ..core.primitives import TABLE
from ..core.sequences import numpy_reading
from ..core.rules.complexes import reported_gradient
from ..core.tape import BOXES, FUSED_RULES, Dual, Tape, Var, backward, new_level, strip
from .recorded_decisions import DECISIONS, nested_derivative, unguardable
from .names import walk
from .values import as_input, describe, dtype, shape_of, size_of

# Derivatives taken inside the program whose gradient a replay follows: run under a recording
# outer level, their inner sweeps are taped there in outer primitives (a run whose inner rules
# read a traced value as a number keeps no trace). The others (hessian, jvp, vjp) keep none.
NESTED_TRANSFORMS = frozenset({"grad", "value_and_grad"})
_OTHER_DERIVATIVE = "a derivative inside the program other than grad or value_and_grad (hessian, jvp, vjp)"


def nested_derivatives(tree) -> bool:
    """Whether the program names a derivative builtin a replay follows (grad, value_and_grad):
    then only its gradient in every input replays (diff/function.py). Which kinds of run may
    replay is a fact of the program's text, known before any run; a recording run that takes a
    derivative the text does not name so keeps no trace."""
    return any(isinstance(x, nodes.Name) and x.id in NESTED_TRANSFORMS for x in walk(tree, bindings=False))


def _one():
    return 1.0 if dtype() == "float64" else np().float32(1.0)


def _argnums(argnum, count, name, span):
    nums = argnum if isinstance(argnum, tuple) else (argnum,)
    out = []
    for a in nums:
        a = getattr(a, "value", a)
        if isinstance(a, bool) or not isinstance(a, (int, float)) or int(a) != a or not 0 <= int(a) < count:
            raise SourceError("wrong arguments", f"{name}: argnum {a!r} is not the position of one of the "
                              f"{count} arguments", span)
        out.append(int(a))
    return out


class DerivedFunction:
    """A function made from a function of the program by differentiating it."""
    __slots__ = ("fn", "interp", "name", "argnum")

    def __init__(self, fn, interp, argnum=0, kind="grad"):
        self.fn = fn
        self.interp = interp
        self.argnum = argnum
        self.name = f"{kind}({getattr(fn, 'name', 'f')})"

    def gradient(self, args, span):
        """(value, gradient) of fn at args with respect to the argnum's argument(s)."""
        args = list(args)
        if not args:
            raise SourceError("wrong arguments", f"{self.name} takes at least 1 argument but 0 were given", span)
        positions = _argnums(self.argnum, len(args), self.name, span)
        tape = Tape(persistent=False)
        for p in positions:
            if args[p].__class__ is bool or (is_array(args[p]) and args[p].dtype == bool):
                args[p] = as_input(args[p])    # a comparison's truth value is a number here
        watched = {p: tape.watch(args[p]) for p in positions}
        y = numpy_reading(self.interp.call(self.fn, [watched.get(i, a) for i, a in enumerate(args)], span))
        number_output(self.name, y, span)
        if shape_of(y) != ():
            fname = self.name[self.name.index("(") + 1:-1]
            raise SourceError("shape mismatch", f"{self.name[:self.name.index('(')]} needs a function with a "
                              f"scalar output; {fname} returned {describe(y)}", span, "wrap the output in sum(...)")
        if DECISIONS.entries is not None:
            nested_derivative(span)
            if not taped_sweep(tape):
                unguardable("a derivative inside the program whose sweep reads a traced value as a number", span)
        # a nested derivative records no steps, but its sweep may grow the outer tapes fast: the
        # limits are checked during the sweep and after it
        adj = backward(tape, y, _one(), check=lambda: self.interp.check_growth(span, short_name(self.name)))
        self.interp.check_tapes(span)
        grads = []
        for p in positions:
            g = adj[watched[p].index]
            grads.append(reported_gradient(g, args[p]) if g is not None else ops.zeros_like(args[p]) * 1.0)
        value = y.value if y.__class__ is Var and y.tape is tape else y
        return value, (tuple(grads) if isinstance(self.argnum, tuple) else grads[0])


def number_output(name, y, span) -> None:
    """A derivative's function must return a number or an array (a tuple, a range, a function
    or nothing has no derivative: it was silently 0)."""
    v = strip(y)
    if not (v.__class__ in (float, int, bool) or is_array(v)):
        fname = name[name.index("(") + 1:-1] if "(" in name else "the function"
        raise SourceError("type error", f"{short_name(name)} needs a function whose output is a number or an "
                          f"array; {fname} returned {describe(y)}", span)


def taped_sweep(tape) -> bool:
    """Whether sweeping this nested derivative's tape on the outer level's boxes tapes there all
    its rules read: each rule's entry (or its fused copy, whose VJPs run the rule on boxes) is
    `taped_vjp` (no mask, share or branch made from a traced value: not abs's sign(x), max's tie
    share), with its `constant_args` untraced (pow's where() on a traced exponent). A run that
    records a trace and sweeps any other rule in a nested derivative keeps no trace: its replay
    would reuse a number the outer tape never held."""
    for entry in tape.entries:
        prim = entry.prim
        if prim is None:
            continue
        name = prim.name
        if not prim.taped_vjp or (prim is not TABLE.get(name) and prim is not FUSED_RULES.get(name)):
            return False
        for constant in prim.constant_args:
            if any(pos == constant for pos, _ in entry.parents) or entry.args[constant].__class__ in BOXES:
                return False
    return True


def short_name(name: str) -> str:
    """A derived function's name for a message: grad(grad(...(f))) nested 20 deep is cut short."""
    return name if len(name) <= 40 else name[:20] + "…" + name[-12:]


class GradFunction(DerivedFunction):
    """The value of `grad(f)`: the derivative of f with respect to its argnum's argument."""
    __slots__ = ()

    def __call__(self, *args, span=None):
        return self.gradient(args, span)[1]


class ValueAndGradFunction(DerivedFunction):
    """The value of `value_and_grad(f)`: (f(x), grad(f)(x)) from one run."""
    __slots__ = ()

    def __call__(self, *args, span=None):
        return self.gradient(args, span)


class HessianFunction(DerivedFunction):
    """The value of `hessian(f)`: forward over reverse, one tangent per element of x; the result
    has the shape x.shape + x.shape."""
    __slots__ = ()

    def __call__(self, *args, span=None):
        if len(args) != 1:
            raise SourceError("wrong arguments", f"{self.name} takes 1 argument but {len(args)} were given", span)
        unguardable(_OTHER_DERIVATIVE, span)
        x = args[0]
        shape = shape_of(x)
        grad = GradFunction(self.fn, self.interp)
        columns = []
        for k in range(max(size_of(x), 1)):
            basis = _one() if not shape else _unit(shape, k)
            columns.append(forward_pass(lambda v: grad(v, span=span), x, basis)[1])
        if not shape:
            return columns[0]
        return ops.reshape(ops.stack(columns), shape + shape)


def _unit(shape, k):
    e = xp().zeros(shape, dtype=dtype())       # on the device the program runs on
    e.reshape(-1)[k] = 1.0
    return e


def forward_pass(call, x, v):
    """(f(x), the derivative of f at x along v), by one run on Duals at a fresh level."""
    level = new_level()
    y = call(Dual(x, v, level))
    if y.__class__ is Dual and y.level == level:
        t = y.tangent
        if shape_of(t) != shape_of(y.primal):
            t = ops.broadcast_to(t, shape_of(y.primal))
        return y.primal, t
    return y, ops.zeros_like(y) * 1.0


def _matching(what, v, other, other_name, span):
    if isinstance(v, tuple) or isinstance(other, tuple):
        raise SourceError("type error", f"{what}: x and v must be numbers or arrays (one argument)", span)
    if shape_of(v) != shape_of(other):
        raise SourceError("shape mismatch", f"{what}: v has the shape {shape_of(v)} but {other_name} has "
                          f"{shape_of(other)}", span, f"v pairs with {other_name}: give it that shape")


def jvp(interp, f, x, v, span=None):
    """`jvp(f, x, v)`: (f(x), J·v), forward mode with the tangent v; JAX's spelling of one
    argument, `jax.jvp(f, (x,), (v,))`, reads the same."""
    if isinstance(x, tuple) and isinstance(v, tuple) and len(x) == len(v) == 1:
        x, v = x[0], v[0]
    _matching("jvp", v, x, "x", span)
    unguardable(_OTHER_DERIVATIVE, span)

    def call(dual):
        y = numpy_reading(interp.call(f, [dual], span))
        number_output(f"jvp({getattr(f, 'name', 'f')})", y, span)
        return y
    return forward_pass(call, x, v)


def vjp(interp, f, x, v, span=None):
    """`vjp(f, x, v)`: (f(x), vᵀJ), one reverse sweep seeded with v."""
    unguardable(_OTHER_DERIVATIVE, span)
    tape = Tape(persistent=False)
    watched = tape.watch(x)
    y = numpy_reading(interp.call(f, [watched], span))
    number_output(f"vjp({getattr(f, 'name', 'f')})", y, span)
    _matching("vjp", v, y, "f(x)", span)
    if y.__class__ is not Var or y.tape is not tape:
        return y, ops.zeros_like(x) * 1.0
    g = backward(tape, y, v, check=lambda: interp.check_growth(span, "vjp"))[watched.index]
    return y.value, g if g is not None else ops.zeros_like(x) * 1.0


def transform_builtins(interp) -> dict:
    """The builtins that differentiate a function of the program, by name. They hold the
    interpreter weakly (as Builtins do): a strong reference would make every interpreter a cycle
    that only a full collection frees, and repeated API calls would grow."""
    from .callables import Builtin
    if interp is not None:
        interp = weakref.proxy(interp)

    def function(name, f):
        if not callable(f) or isinstance(f, (int, float)):
            raise SourceError("type error", f"{name}() takes a function, not {describe(f)}")
        if getattr(f, "not_of_numbers", None):
            raise SourceError("type error", f"{name}() takes a function of numbers; {f.name}() is none: it "
                              f"{f.not_of_numbers}", None, "differentiate a function of the program or a math builtin")
        return f

    def grad(f, argnum=0):
        return GradFunction(function("grad", f), interp, argnum)

    def value_and_grad(f, argnum=0):
        return ValueAndGradFunction(function("value_and_grad", f), interp, argnum, "value_and_grad")

    def hessian(f):
        return HessianFunction(function("hessian", f), interp, 0, "hessian")

    def jvp_(f, x, v):
        return jvp(interp, function("jvp", f), x, v)

    def vjp_(f, x, v):
        return vjp(interp, function("vjp", f), x, v)
    return {"grad": Builtin("grad", grad, 1, 2), "value_and_grad": Builtin("value_and_grad", value_and_grad, 1, 2),
            "hessian": Builtin("hessian", hessian, 1, 1), "jvp": Builtin("jvp", jvp_, 3, 3),
            "vjp": Builtin("vjp", vjp_, 3, 3)}
