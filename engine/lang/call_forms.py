"""Compiling the call forms numpy code uses beyond `f(x, y)`: keyword arguments, the array
attributes `.T .shape .ndim .size .real .imag` and the array methods (`A.sum(axis=0)`), each method the
builtin of its name with the array as the first argument."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError
from ..core import ops
from ..core.notes import NOTES
from ..core.sequences import numpy_reading, read_lists
from .callables import Builtin, UserFunction
from .custom_rules import RULE_METHODS, CustomFunction
from .dicts import DICT_METHODS
from .dtypes import cast, dtype_of
from .errors import runtime_error
from .keywords import check_builtin_keywords, complete_arguments, unknown_keyword
from .spellings import foreign_library_error, method_spelling_hint
from .aliases import note, noting
from .values import describe, shape_of, size_of

# The methods, each the builtin of the same name (looked up by name when the call compiles,
# so a builtin added to the table is a method as soon as it is listed here).
METHODS = ("sum", "mean", "prod", "max", "min", "std", "var", "reshape", "transpose", "dot",
           "flatten", "ravel", "clip", "cumsum", "squeeze", "cumprod", "trace", "diagonal", "argmax",
           "argmin", "any", "all", "round", "copy", "astype", "item", "keys", "values", "items",
           "conj", "conjugate")
ATTRIBUTES = ("T", "shape", "ndim", "size", "real", "imag", "dtype")


def _flat(x):
    return ops.reshape(x, (size_of(x),)) if shape_of(x) else ops.reshape(x, (1,))


def _squeezed(x):
    return ops.reshape(x, tuple(n for n in shape_of(x) if n != 1)) if shape_of(x) else x


def fresh(x):
    """numpy's copy of x (core/library's `copy`; loaded at the first copy, not at start-up)."""
    from ..core.library.constructors import copy
    return copy(x)


def _flattened(x):
    """`x.flatten()`: numpy's copy of x as one axis (ravel is the view)."""
    return fresh(_flat(x))


def _item(x):
    """`x.item()`: the one number of an array of size 1, as numpy's (with its derivative)."""
    if size_of(x) != 1:
        raise ValueError("can only convert an array of size 1 to a Python scalar")
    return ops.reshape(x, ()) if shape_of(x) else x


def _astype(x, dtype):
    """`x.astype(float)`: the value (numbers are floats already); `x.astype(int)`: truncated toward
    zero as numpy casts, a step function (derivative 0), through the trunc builtin; bool and
    complex as numpy's (lang/dtypes.py, the constructors' dtype= too)."""
    out = cast(x, dtype, "astype()")
    return fresh(out) if out is x else out          # numpy's astype copies, its dtype the same or not


# Methods with no builtin of their name yet: what they are in existing ops.
METHOD_FALLBACKS = {"flatten": Builtin("flatten", _flattened, 1, 1), "ravel": Builtin("ravel", _flat, 1, 1),
                    "squeeze": Builtin("squeeze", _squeezed, 1, 1),
                    "item": Builtin("item", _item, 1, 1), "astype": Builtin("astype", _astype, 2, 2),
                    **DICT_METHODS}


def attribute_value(x, attr):
    return note(_attribute_value(x, attr))


def _attribute_value(x, attr):
    shape = shape_of(x)
    if attr == "T":
        return ops.transpose(x) if len(shape) > 1 else x
    if attr == "shape":
        return tuple(float(n) for n in shape)
    if attr == "ndim":
        return float(len(shape))
    if attr in ("real", "imag"):                # numpy's x.real, x.imag: the builtins real(x), imag(x)
        return getattr(ops, attr)(x)
    if attr == "dtype":
        return dtype_of(x)
    return float(size_of(x))


def unsupported_attribute(e, builtins=()) -> SourceError:
    """`.attr` the language lacks; `builtins` given for a method call: a builtin of that name (a
    PyTorch spelling, x.norm()) is named as the call to write."""
    if e.attr in METHODS:
        return SourceError("unsupported construct", f"`.{e.attr}` is a method: call it, `.{e.attr}(...)`",
                           e.attr_span)
    hint = method_spelling_hint(e.value, e.attr, builtins) or (
        f"the attributes are {', '.join('.' + a for a in ATTRIBUTES)} and the methods "
        f"{', '.join('.' + m + '()' for m in METHODS)}")
    return SourceError("unsupported construct", f"attribute `.{e.attr}` is not part of the language",
                       e.attr_span, hint)


def refuse_foreign_library(e, scope, builtins, args=None) -> None:
    """`torch.exp(x)` where `torch` names nothing of the program: another library's path."""
    root = e.value
    while isinstance(root, nodes.Attribute):
        root = root.value
    if isinstance(root, nodes.Name) and scope.find(root.id) is None and root.id not in builtins:
        err = foreign_library_error(e, args)
        if err is not None:
            raise err


class CallFormsCompiler:
    """The Interpreter's keyword calls, attributes and methods (a mixin: `self` is the Interpreter)."""

    def e_Attribute(self, e, scope):
        refuse_foreign_library(e, scope, self.builtins)
        if e.attr not in ATTRIBUTES:
            raise unsupported_attribute(e)
        value = self.expr(e.value, scope)
        attr, span = e.attr, e.span

        def attribute(frame):
            v = value(frame)
            if isinstance(v, (tuple, UserFunction, Builtin)) or v is None:
                raise SourceError("type error", f"`.{attr}` of {describe(v)}: only arrays and numbers have it", span)
            NOTES.span = span
            return attribute_value(numpy_reading(v), attr)
        return attribute

    def method_call(self, e, scope):
        """`A.sum(axis=0)` is `sum(A, axis=0)`; `A.transpose(1, 0)` and `A.reshape(2, 3)` pass
        their several numbers as numpy's methods do."""
        method = e.func
        if method.attr in ATTRIBUTES:
            raise SourceError("unsupported construct", f"`.{method.attr}` is an attribute, not a method",
                              method.attr_span, f"write x.{method.attr} without ( )")
        refuse_foreign_library(method, scope, self.builtins, e.args)
        if method.attr in RULE_METHODS:
            return self.rule_method_call(e, scope)
        if method.attr not in METHODS:
            raise unsupported_attribute(method, self.builtins)
        builtin = self.builtins.get(method.attr) or METHOD_FALLBACKS.get(method.attr)
        if not isinstance(builtin, Builtin):
            raise SourceError("unsupported construct", f"the method `.{method.attr}()` needs the builtin "
                              f"{method.attr}(), which the language does not have yet", method.attr_span)
        receiver = self.expr(method.value, scope)
        args = [self.expr(a, scope) for a in e.args]
        if method.attr == "transpose" and len(args) > 1:
            items = args
            args = [lambda frame: tuple(a(frame) for a in items)]     # A.transpose(1, 0): the axes as one
        if e.keywords:
            return self.builtin_keyword_call(builtin, [receiver] + args, e.keywords, scope, e.span)
        return self.builtin_call(builtin, [receiver] + args, e.span)

    def rule_method_call(self, e, scope):
        """`f.defvjp(fwd, bwd)` and `f.defjvp(jvp)` (also as the decorator @f.defjvp): the rule of
        a custom_vjp or custom_jvp function f (lang/custom_rules.py)."""
        method = e.func
        attr, span = method.attr, e.span
        if e.keywords:
            raise SourceError("wrong arguments", f"`.{attr}` takes no keyword arguments", e.keywords[0].span)
        count = 2 if attr == "defvjp" else 1
        if len(e.args) != count:
            raise SourceError("wrong arguments", f"`.{attr}` takes {count} argument{'s' if count > 1 else ''} "
                              f"but {len(e.args)} were given", span,
                              "write f.defvjp(fwd, bwd)" if count == 2 else "write f.defjvp(jvp)")
        receiver = self.expr(method.value, scope)
        args = [self.expr(a, scope) for a in e.args]
        named = f"`{method.value.id}`, " if isinstance(method.value, nodes.Name) else ""

        def define(frame):
            f = receiver(frame)
            what = f"{named}{describe(f)}"
            if not isinstance(f, CustomFunction):
                kind = "custom_vjp" if attr == "defvjp" else "custom_jvp"
                raise SourceError("type error", f"`.{attr}` on {what}, which is not a {kind} function",
                                  span, f"make it one first: decorate its def with @jax.{kind}")
            return getattr(f, attr)(*[a(frame) for a in args], span=span)
        return define

    def builtin_keyword_call(self, b, args, keywords, scope, span):
        check_builtin_keywords(b, len(args), keywords, span)
        named = [(kw.name, self.expr(kw.value, scope)) for kw in keywords]
        names = [name for name, _ in named]
        fn, label = b.fn, f"{b.name}()"
        noted = noting(self.may_write)

        def call_keywords(frame):
            vals = [a(frame) for a in args]
            kw = [ev(frame) for _, ev in named]
            NOTES.span = span
            try:
                vals, kw = read_lists(vals), dict(zip(names, read_lists(kw)))
                return noted(fn(*vals, **kw))
            except Exception as exc:
                raise runtime_error(exc, span, label, vals) from None
        return call_keywords

    def keyword_call(self, func, args, keywords, scope, span):
        """A call with keywords of whatever value `func` computes."""
        named = [(kw.name, self.expr(kw.value, scope)) for kw in keywords]
        me = self

        def call_keywords(frame):
            f = func(frame)
            vals = [a(frame) for a in args]
            kw = {name: ev(frame) for name, ev in named}
            return me.call_with_keywords(f, vals, kw, span)
        return call_keywords

    def call_with_keywords(self, f, vals, kw, span):
        if isinstance(f, UserFunction):
            return self.call_user(f, complete_arguments(f, vals, kw, span), span)
        if isinstance(f, CustomFunction):          # its primal function's parameters
            return f(*read_lists(complete_arguments(f.fn, vals, kw, span)), span=span)
        if isinstance(f, Builtin):
            check_builtin_keywords(f, len(vals), list(kw), span)
            vals, kw = read_lists(vals), dict(zip(kw, read_lists(list(kw.values()))))
            NOTES.span = span
            try:
                return f.fn(*vals, **kw)
            except Exception as exc:
                raise runtime_error(exc, span, f"{f.name}()", vals) from None
        name = getattr(f, "name", None)
        if name is None:
            raise SourceError("type error", f"{describe(f)} is not a function", span)
        raise unknown_keyword(name, next(iter(kw)), (), span)
