"""The one tracer of the rules: a rule run on probes becomes the lines of a generated function.
Both compiled replays use it (diff/replay_compiled.py for traces of Python floats, each VJP the
table's float form; diff/replay_arrays.py for sweeps of numpy arrays), and `rule_source` gives
one rule as Python source for given operand names.

A `Probe` carries the real value of the run being compiled (its example), answers its shape,
ndim, size, dtype and strides as fixed facts (a made function runs only at the layouts it was
made at), and hands every operation on it (an operator, a numpy ufunc or array function, an
indexing, an allowed method, a write) to its tracer, which makes it a line with the real result
computed as it goes. A probe is a plain object of its own class: no rule is told it is traced.
While a rule is traced the array module it sees (`np()`, `xp()`) is `Numpy`, whose array type
is the probes' of arrays (`ArrayProbe`), so a rule's own test for numpy's array takes its array
path; `Layout` stands in for an array's flags.

A branch on a value becomes an `if` whose other side calls the rule as it is; a rule that does
what a line cannot show (a math-module call, a reference count, a write into an argument, an
array it cannot name, a power of numbers, a note) is called as it is, bound by name
(`Untraceable`); and a traced rule whose lines do not give the rule's own result to the bit is
called as it is too."""
from __future__ import annotations

import operator
import re
from threading import get_ident

from ..core.backend import np, seen_through
from ..core.notes import NOTES
from ..core.rules.comparisons import ASSUMED_FINITE
from ..core.tape import Shape
from .bits import same_bits

STATIC = frozenset(("shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"))
LAYOUT = frozenset(("c_contiguous", "f_contiguous", "contiguous", "forc", "fnc"))
# methods that make a value from their array (never write into it, never read a value out)
METHODS = frozenset(("transpose", "reshape", "ravel", "flatten", "astype", "copy", "sum", "any", "all", "max",
                     "min", "mean", "prod", "squeeze", "swapaxes", "conj", "dot", "cumsum", "clip", "item"))
# numpy's functions that make an array from shapes or lists, dispatched to no argument: followed
MAKERS = frozenset(("empty", "zeros", "ones", "full", "asarray", "ascontiguousarray", "array", "arange"))


# What a rule, or numpy, raises when given a stand-in it cannot treat as its value (a truth of an
# array, an attribute the stand-in lacks, a value check that fails, an index): the tracers take
# these as "not traceable here" and call the rule as it is; anything else is a bug and propagates.
REFUSALS = (TypeError, ValueError, ArithmeticError, AttributeError, LookupError, NotImplementedError)


class Untraceable(BaseException):
    """What a line cannot show: the rule is called as it is. Not an Exception, so that a rule's
    own `except Exception` does not take it for a value's error and trace the wrong branch."""


class Probe:
    """A value while a rule is traced: its real value (the example) and its name in the code."""
    __slots__ = ("name", "example", "tracer")

    def __init__(self, name, example, tracer):
        self.name, self.example, self.tracer = name, example, tracer

    def __getattr__(self, attr):
        if attr in STATIC:
            return getattr(self.example, attr)
        if attr == "T":
            return self.tracer.let(f"{self.name}.T", self.example.T)
        if attr == "flags":                         # the layout: fixed by the inputs' strides
            return Layout(self.example.flags)
        if attr in METHODS and hasattr(self.example, attr):
            return lambda *args, **kwargs: self.tracer.call_method(self, attr, args, kwargs)
        if hasattr(self.example, attr):             # base, data, ctypes, fill...: not followed
            raise Untraceable(attr)
        raise AttributeError(attr)                  # what the value itself says

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return self.tracer.ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        return self.tracer.function(func, args, kwargs)

    def __bool__(self):
        return self.tracer.decide(self)

    def __len__(self):
        return len(self.example)

    def _refuse(self, *args, **kwargs):
        raise Untraceable("the value read out")

    __array__ = __float__ = __int__ = __index__ = __complex__ = __iter__ = __round__ = _refuse
    __contains__ = __reduce__ = __reduce_ex__ = __copy__ = __deepcopy__ = _refuse
    __hash__ = object.__hash__

    def __getitem__(self, key):
        return self.tracer.index(self, key)

    def __setitem__(self, key, value):
        self.tracer.store(self, key, value)

    def __neg__(self): return self.tracer.unary(operator.neg, "-", self)
    def __pos__(self): return self.tracer.unary(operator.pos, "+", self)
    def __abs__(self): return self.tracer.call(abs, (self,), {})
    def __invert__(self): return self.tracer.unary(operator.invert, "~", self)


def _binary(op, symbol):
    def forward(self, other):
        return self.tracer.binary(op, symbol, self, other)

    def reflected(self, other):
        return self.tracer.binary(op, symbol, other, self)
    return forward, reflected


for _name, _op, _symbol in (("add", operator.add, "+"), ("sub", operator.sub, "-"), ("mul", operator.mul, "*"),
                            ("truediv", operator.truediv, "/"), ("floordiv", operator.floordiv, "//"),
                            ("mod", operator.mod, "%"), ("pow", operator.pow, "**"),
                            ("matmul", operator.matmul, "@"), ("and", operator.and_, "&"),
                            ("or", operator.or_, "|"), ("xor", operator.xor, "^")):
    _forward, _reflected = _binary(_op, _symbol)
    setattr(Probe, f"__{_name}__", _forward)
    setattr(Probe, f"__r{_name}__", _reflected)


def _in_place(name, symbol):
    def operator_(self, other):
        return self.tracer.in_place(name, symbol, self, other)
    return operator_


for _name, _symbol in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("pow", "**"),
                      ("matmul", "@"), ("and", "&"), ("or", "|"), ("xor", "^")):
    setattr(Probe, f"__i{_name}__", _in_place(_name, _symbol))

for _name, _op, _symbol in (("eq", operator.eq, "=="), ("ne", operator.ne, "!="), ("lt", operator.lt, "<"),
                            ("le", operator.le, "<="), ("gt", operator.gt, ">"), ("ge", operator.ge, ">=")):
    setattr(Probe, f"__{_name}__", _binary(_op, _symbol)[0])


class ArrayProbe(Probe):
    """A probe of a numpy array: the array type of the module a rule sees while it is traced
    (Numpy.ndarray), so a rule's `x.__class__ is m.ndarray` takes its array path."""
    __slots__ = ()


class Float64Probe(Probe):
    """A probe of a numpy float64 scalar: the module's float64 while a rule is traced."""
    __slots__ = ()


PROBES = (Probe, ArrayProbe, Float64Probe)
TYPES = {"ndarray": ArrayProbe}     # numpy's types the probes stand for (float64 stays a dtype)


def probe_of(name, example, tracer) -> Probe:
    """The probe of `example`: of numpy's type's probe class (TYPES), else a Probe."""
    numpy = tracer.numpy._module
    c = example.__class__
    kind = ArrayProbe if c is numpy.ndarray else Float64Probe if c is numpy.float64 else Probe
    return kind(name, example, tracer)


class Numpy:
    """numpy while a rule is traced (core/backend.py's seen_through): its own names, but for the
    functions that make arrays, whose calls in the tracing thread become lines, and its array
    type, which is the probes' (another thread's engine work meanwhile gets numpy's own)."""

    def __init__(self, module, tracer):
        self._module, self._tracer, self._thread = module, tracer, get_ident()

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if get_ident() == self._thread:
            if name in MAKERS:
                return lambda *args, **kwargs: self._tracer.call(value, args, kwargs)
            if name in TYPES:
                return TYPES[name]
        return value


class Layout:
    """An array's flags while a rule is traced: only its layout is a fixed fact."""
    __slots__ = ("flags",)

    def __init__(self, flags):
        self.flags = flags

    def __getattr__(self, name):
        if name in LAYOUT:
            return getattr(self.flags, name)
        raise Untraceable(f"flags.{name}")      # writeable, owndata: whose buffer it is


# ---- the tracer ----------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"@[art][0-9]*")    # a template's names: @a0 (an argument), @t1, @r (the target)
BRANCHES_MAX = 8            # decisions on values one rule may take on its traced path
WHY = None                  # a list to collect (rule, why it was called as it is) in, for the tests
# numpy functions that write into an argument (its position): only into an array the rule made
WRITES = {"copyto": 0, "put": 0, "putmask": 0, "place": 0, "fill_diagonal": 0, "put_along_axis": 0}


class Tracer:
    """The lines of one generated function, and the rules traced into it one at a time."""

    def __init__(self, namespace: dict, allowed: set, assume_finite: bool = False, scalars_as_values=False,
                 notes_dropped=False):
        self.namespace = namespace
        # a kink the rule notes taken as noted (for emitted source, which keeps no notes); the
        # replays, which must note it, call such a rule as it is
        self.notes_dropped = notes_dropped
        # a numpy scalar where the rule gives a float (plain_scalar) taken as that value: for
        # emitted source, which runs on numpy's scalars (emit/rule_text.py); the replays, which
        # must give the rule's own float to the bit, leave it False
        self.scalars_as_values = scalars_as_values
        # the rules' per-product finiteness tests taken as passed (core/rules/comparisons.py's
        # ASSUMED_FINITE): a sweep whose caller tests the result's finiteness at its end
        self.assume_finite = assume_finite
        self.allowed = allowed      # ids of the arrays a line may name: the trace's own constants
        self.bound: dict = {}       # id -> bound name (with the object kept alive in namespace)
        self.count = 0
        self.items: list = []       # the traced rule's ("let", name, text), ("do", None, text), ("if", name, outcome)
        self.decisions = 0
        self.made: dict = {}        # id -> the arrays the traced rule made itself (it may write into them)
        self.arguments: set = set()     # ids of the traced rule's arguments' values
        self.numpy = Numpy(np(), self)
        self.templates: dict = {}   # a rule and its arguments' kinds -> its traced lines (Tracer.trace)
        self.kept: list = []        # the constants the templates' keys name by id, kept alive
        self.ufunc_methods: dict = {}   # (ufunc, method name) -> the bound method lines name
        self.local = 0

    # ---- names ----
    def fresh(self, prefix="t") -> str:
        if prefix == "t":           # a temporary of the rule being traced: a placeholder
            self.local += 1
            return f"@t{self.local}"
        self.count += 1
        return f"{prefix}{self.count}"

    def bind(self, value) -> str:
        name = self.bound.get(id(value))
        if name is None:
            name = self.bound[id(value)] = self.fresh("k")
            self.namespace[name] = value
        return name

    def constant(self, value) -> str:
        """A constant a traced line uses: a number, a shape or dtype, or an array of the trace's own."""
        numpy = self.numpy._module      # numpy itself: np() is self.numpy while a rule is traced
        c = value.__class__
        if c is tuple:
            return "(" + "".join(f"{self.text(v)}, " for v in value) + ")"
        if c is list:
            return "[" + ", ".join(self.text(v) for v in value) + "]"
        if c is numpy.ndarray and id(value) not in self.allowed and value.flags.writeable:
            raise Untraceable("an array the rule made itself")     # a fresh array is made at each call
        if not (value is None or c in (bool, int, float, complex, str, slice, Shape, numpy.ndarray, type)
                or value is Ellipsis or isinstance(value, (numpy.generic, numpy.dtype))):
            raise Untraceable(f"a {c.__name__} in a rule")
        return self.bind(value)

    def text(self, value) -> str:
        return value.name if type(value) in PROBES else self.constant(value)

    @staticmethod
    def real(value):
        """The value with every probe replaced by its example (containers too)."""
        if type(value) in PROBES:
            return value.example
        c = value.__class__
        if c is tuple or c is list:
            return c(Tracer.real(v) for v in value)
        return value

    # ---- lines ----
    def let(self, text, example) -> Probe:
        c = example.__class__
        numpy = self.numpy._module
        if not (c in (float, int, bool, complex, numpy.ndarray) or isinstance(example, numpy.generic)):
            raise Untraceable(f"a {c.__name__} result")
        name = self.fresh()
        self.items.append(("let", name, text))
        if c is numpy.ndarray and example.base is None and id(example) not in self.arguments:
            self.made[id(example)] = example     # a new buffer (kept alive: its id stays its own)
        return probe_of(name, example, self)

    def writes_into(self, target) -> None:
        """Untraceable unless `target` is (a view of) an array the traced rule made: a write into
        an argument would change what the other side of a later decision calls the rule on."""
        root = target.example if type(target) in PROBES else None
        while root is not None and root.__class__ is self.numpy._module.ndarray and root.base is not None:
            root = root.base
        if root is None or self.made.get(id(root)) is not root:
            raise Untraceable("a write into an array the rule did not make")

    def store(self, probe, key, value) -> None:
        self.writes_into(probe)
        self._result(operator.setitem, (probe, key, value), {})
        self.items.append(("do", None, f"{probe.name}[{self.text(key)}] = {self.text(value)}"))

    def in_place(self, name, symbol, probe, other) -> Probe:
        """`probe op= other`: an array's in-place operator, or (a number's, which has none) the
        binary operator, as Python falls back to it."""
        if not hasattr(probe.example.__class__, f"__i{name}__"):
            return self.binary(getattr(operator, f"{name}_" if name in ("and", "or") else name), symbol, probe, other)
        self.writes_into(probe)
        return self.call(getattr(operator, f"i{name}"), (probe, other), {})

    def decide(self, probe) -> bool:
        try:
            outcome = bool(probe.example)
        except REFUSALS:
            raise Untraceable("the truth of an array") from None
        self.decisions += 1
        if self.decisions > BRANCHES_MAX:
            raise Untraceable("too many branches")
        self.items.append(("if", probe.name, outcome))
        return outcome

    def _result(self, fn, args, kwargs):
        try:
            return fn(*[self.real(a) for a in args], **{k: self.real(v) for k, v in kwargs.items()})
        except REFUSALS as exc:                 # what the value itself does: not followed
            raise Untraceable(str(exc)) from None

    def _call_text(self, head, args, kwargs) -> str:
        parts = [self.text(a) for a in args] + [f"{k}={self.text(v)}" for k, v in kwargs.items()]
        return f"{head}({', '.join(parts)})"

    def binary(self, op, symbol, a, b) -> Probe:
        if symbol == "**" and self.real(a).__class__ in (float, int) and self.real(b).__class__ in (float, int):
            raise Untraceable("a power of numbers, which may be complex: the rule's check must run")
        return self.let(f"{self.text(a)} {symbol} {self.text(b)}", self._result(op, (a, b), {}))

    def unary(self, op, symbol, a) -> Probe:
        return self.let(f"{symbol}{a.name}", self._result(op, (a,), {}))

    def call(self, fn, args, kwargs) -> Probe:
        return self.let(self._call_text(self.bind(fn), args, kwargs), self._result(fn, args, kwargs))

    def ufunc(self, ufunc, method, inputs, kwargs):
        out = kwargs.get("out")
        for target in (out if out.__class__ is tuple else (out,)) if out is not None else ():
            self.writes_into(target)
        if method == "at":                  # a scatter into an array the rule made: a statement
            self.writes_into(inputs[0])
            fn = self.bound_method(ufunc, method)
            self._result(fn, inputs, kwargs)
            self.items.append(("do", None, self._call_text(self.bind(fn), inputs, kwargs)))
            return None
        return self.call(self.bound_method(ufunc, method), inputs, kwargs)

    def bound_method(self, ufunc, method):
        """`ufunc.method`, the same object each time (bound by id: one name per ufunc method)."""
        return self.ufunc_methods.setdefault((ufunc, method), getattr(ufunc, method))

    def function(self, func, args, kwargs):
        if "out" in kwargs and kwargs["out"] is not None:
            self.writes_into(kwargs["out"])
        position = WRITES.get(getattr(func, "__name__", ""))
        if position is not None:
            self.writes_into(args[position] if position < len(args) else None)
        result = self._result(func, args, kwargs)
        if isinstance(result, self.numpy._module.dtype):          # result_type: a fact of the dtypes
            return result
        if result is None and position is not None:     # copyto: a statement
            self.items.append(("do", None, self._call_text(self.bind(func), args, kwargs)))
            return None
        return self.let(self._call_text(self.bind(func), args, kwargs), result)

    def call_method(self, probe, attr, args, kwargs) -> Probe:
        example = self._result(getattr(probe.example, attr), args, kwargs)
        return self.let(self._call_text(f"{probe.name}.{attr}", args, kwargs), example)

    def index(self, probe, key) -> Probe:
        return self.let(f"{probe.name}[{self.text(key)}]", self._result(operator.getitem, (probe, key), {}))

    # ---- one rule ----
    def apply(self, fn, args, kwargs, target, lines, indent="    ") -> Probe:
        """Lines for `target = fn(*args, **kwargs)` (args: probes or the trace's constants):
        the rule traced, or called as it is. Returns the probe of `target`. A rule applied again
        to arguments of the same kinds (the steps of a loop) reuses the lines traced the first
        time, names changed: the same classes, shapes, dtypes, strides and constants take the
        same lines, and the caller checks the whole function's numbers."""
        kinks, detached = len(NOTES.kinks), len(NOTES.detached)
        # the rule as it is on the examples first: the example of `target`, what the traced
        # lines must give, and any first-use setup a rule does (a module's constants) done with
        # real arrays
        example = fn(*[self.real(a) for a in args], **{k: self.real(v) for k, v in kwargs.items()})
        del NOTES.kinks[kinks:], NOTES.detached[detached:]
        names: dict = {}            # id of each distinct probe argument -> its placeholder number
        key = (fn, tuple(self.kind(a, names) for a in args), tuple((k, self.kind(v, names)) for k, v in kwargs.items()))
        template = self.templates.get(key)
        if template is None:
            template = self.templates[key] = self.trace(fn, args, kwargs, names, example)
        texts = {f"@a{number}": probe_name for probe_name, number in
                 ((a.name, names[id(a)]) for a in (*args, *kwargs.values()) if type(a) in PROBES)}
        texts["@r"] = target
        base = self.count
        self.count += template[1]
        lines += [indent + PLACEHOLDER.sub(lambda m: texts.get(m[0]) or f"t{base + int(m[0][2:])}", line)
                  for line in template[0]]
        return probe_of(target, example, self)

    def kind(self, value, names) -> tuple:
        """What of an argument the traced lines depend on: a probe's class, shape, dtype, strides
        and which argument it is (a rule may ask `x is y`), or a constant itself (kept alive)."""
        if type(value) in PROBES:
            number = names.setdefault(id(value), len(names))
            e = value.example
            return ("probe", number, e.__class__, getattr(e, "shape", None), getattr(e, "dtype", None),
                    getattr(e, "strides", None))
        if value.__class__ is Shape:        # made anew for each row: alike by what it stands for
            return ("shape", value.shape, value.dtype)
        self.kept.append(value)
        return ("constant", id(value))

    def trace(self, fn, args, kwargs, names, example) -> tuple:
        """(the lines of `@r = fn(...)` over placeholders @a0.. for the probe arguments and @t1..
        for the temporaries, how many temporaries): the rule traced, or called as it is."""
        kinks, detached = len(NOTES.kinks), len(NOTES.detached)
        stand = {}
        for a in (*args, *kwargs.values()):
            if type(a) in PROBES and id(a) not in stand:
                stand[id(a)] = probe_of(f"@a{names[id(a)]}", a.example, self)
        args = [stand.get(id(a), a) if type(a) in PROBES else a for a in args]
        kwargs = {k: stand.get(id(v), v) if type(v) in PROBES else v for k, v in kwargs.items()}
        self.items, self.decisions, self.made, self.local = [], 0, {}, 0
        self.arguments = {id(self.real(a)) for a in (*args, *kwargs.values())}
        try:
            ASSUMED_FINITE[0] = get_ident() if self.assume_finite else None
            with seen_through(self.numpy):
                out = fn(*args, **kwargs)
            ASSUMED_FINITE[0] = None
            result = self.text(out)
            if (len(NOTES.kinks) > kinks or len(NOTES.detached) > detached) and not self.notes_dropped:
                raise Untraceable("the rule notes a kink")
            loose = self.scalars_as_values and example.__class__ is float and type(out) is Float64Probe
            if example.__class__ is float and type(out) in PROBES and out.example.__class__ is not float \
                    and not loose:
                raise Untraceable("the value read out")     # plain_scalar's float() of a numpy scalar
            if not (same_bits(float(out.example), example) if loose else same_example(self.real(out), example)):
                raise Untraceable("the traced lines do not give the rule's own result")
        except Untraceable as exc:
            out = None
            if WHY is not None:
                WHY.append((fn, str(exc)))
        except REFUSALS as exc:     # a rule's check that a probe fails: called as it is
            out = None
            if WHY is not None:
                WHY.append((fn, repr(exc)))
        finally:
            ASSUMED_FINITE[0] = None
            del NOTES.kinks[kinks:], NOTES.detached[detached:]
            self.made = {}
        called = self._call_text(self.bind(fn), args, kwargs)     # the rule as it is
        if out is None:
            return [f"@r = {called}"], self.local
        lines, pad, items = [], "", self.items
        if items and items[-1][0] == "let" and items[-1][1] == result:    # `@r = <its expression>`
            items, result = items[:-1], items[-1][2]
        for kind, name, what in items:
            if kind == "let":
                lines.append(f"{pad}{name} = {what}")
            elif kind == "do":
                lines.append(f"{pad}{what}")
            else:                   # the other side of a decision: the rule as it is
                lines += [f"{pad}if {'not ' if what else ''}{name}:", f"{pad}    @r = {called}", f"{pad}else:"]
                pad += "    "
        lines.append(f"{pad}@r = {result}")
        return lines, self.local


def rule_source(rule, args, examples: dict, target="r") -> tuple:
    """A rule of the table (a VJP or JVP form, a float forward) as Python source: the lines of
    `target = rule(*args)`, traced on probes (args: operand names, whose values `examples` gives,
    or constants), and the namespace of what the lines name (constants, numpy's functions, the
    rule itself where the other side of a branch calls it as it is: never formatted into the
    text). E.g. rule_source(TABLE["mul"].float_vjps[0], ["g", None, "x", "y"], {"g": 1.0, "x":
    2.0, "y": 3.0}) gives mul's adjoint of x, `r = g * y` under its strong zero's tests."""
    namespace, lines = {}, []
    tracer = Tracer(namespace, set())
    probes = [probe_of(a, examples[a], tracer) if a.__class__ is str else a for a in args]
    tracer.apply(rule, probes, {}, target, lines, indent="")
    return "\n".join(lines) + "\n", namespace


def same_example(a, b) -> bool:
    """The traced result is the rule's own: the same class, bits and (an array's) layout."""
    if a.__class__ is np().ndarray:
        return b.__class__ is a.__class__ and a.dtype == b.dtype and a.strides == b.strides and same_bits(a, b)
    if a.__class__ is float:
        return same_bits(a, b)
    return a.__class__ is b.__class__ and (a is b or a == b or (a != a and b != b))
