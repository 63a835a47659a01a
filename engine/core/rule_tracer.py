"""The one tracer of the rules: a rule run on probes is recorded as equations (the IR of a rule
body), which the lowerings print: diff/rule_tracer.py as the lines of a generated Python function
(the compiled replays, emit), core/fused.py as fused kernels (numexpr's text and CUDA source from
the same fused equations).

A `Probe` carries a real value (its example), answers its shape, ndim, size, dtype and strides as
fixed facts (what is made from a trace runs only at the layouts it was traced at), and hands
every operation on it (an operator, a numpy ufunc or array function, an indexing, an allowed
method, a write) to its recorder, which makes it an `Equation` with the real result computed as
it goes. A probe is a plain object of its own class: no rule is told it is traced. While a rule
is recorded the array module it sees (`np()`, `xp()`) is `Numpy`, whose functions that make
arrays become equations too and whose array type is, where the lowering asks for it (the
replays), the probes' of arrays (`ArrayProbe`), so a rule's own test for numpy's array takes its
array path; `Layout` stands in for an array's flags.

A branch on a value is the recorder's `decide` (the Python lowering writes an `if` whose other
side calls the rule as it is; the fused lowering refuses it or keeps it as a guard); what no
equation can show (a math-module call, a reference count, a write into an argument, a power of
numbers, a value read out) raises `Untraceable`, and the lowering calls the rule as it is (or
runs it op by op)."""
from __future__ import annotations

import operator
from threading import get_ident

from .backend import np, seen_through
from .rules.comparisons import ASSUMED_FINITE

STATIC = frozenset(("shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"))
LAYOUT = frozenset(("c_contiguous", "f_contiguous", "contiguous", "forc", "fnc"))
# methods that make a value from their array (never write into it, never read a value out)
METHODS = frozenset(("transpose", "reshape", "ravel", "flatten", "astype", "copy", "sum", "any", "all", "max",
                     "min", "mean", "prod", "squeeze", "swapaxes", "conj", "dot", "cumsum", "clip", "item"))
# numpy's functions that make an array from shapes or lists, dispatched to no argument: followed
MAKERS = frozenset(("empty", "zeros", "ones", "full", "asarray", "ascontiguousarray", "array", "arange"))
BRANCHES_MAX = 8            # decisions on values one rule may take on its traced path
# numpy functions that write into an argument (its position): only into an array the rule made
WRITES = {"copyto": 0, "put": 0, "putmask": 0, "place": 0, "fill_diagonal": 0, "put_along_axis": 0}


# What a rule, or numpy, raises when given a stand-in it cannot treat as its value (a truth of an
# array, an attribute the stand-in lacks, a value check that fails, an index): the tracers take
# these as "not traceable here" and call the rule as it is; anything else is a bug and propagates.
REFUSALS = (TypeError, ValueError, ArithmeticError, AttributeError, LookupError, NotImplementedError)


class Untraceable(BaseException):
    """What an equation cannot show: the rule is called as it is. Not an Exception, so that a
    rule's own `except Exception` does not take it for a value's error and trace the wrong branch."""


class Equation:
    """One operation of a rule body: `op` (what it applies: ("binary", "+"), ("unary", "-"),
    ("ufunc", ufunc, method), ("function", numpy function), ("call", callable), ("method", name),
    ("attr", "T"), ("index",), ("store",)), its operands (probes or constants) and keywords."""
    __slots__ = ("op", "args", "kwargs")

    def __init__(self, op, args, kwargs=None):
        self.op, self.args, self.kwargs = op, tuple(args), kwargs or {}

    def __repr__(self):
        return f"Equation({self.op!r}, {self.args!r}, {self.kwargs!r})"


class Probe:
    """A value while a rule is traced: its real value (the example) and its name in the IR."""
    __slots__ = ("name", "example", "tracer")

    def __init__(self, name, example, tracer):
        self.name, self.example, self.tracer = name, example, tracer

    def __getattr__(self, attr):
        if attr in STATIC:
            return self.tracer.fact(self, attr)
        if attr == "T":
            return self.tracer.let(Equation(("attr", "T"), (self,)), self.example.T)
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


# Python's binary operators a probe answers: name (of its dunder methods) -> (operator, symbol)
OPERATORS = {"add": (operator.add, "+"), "sub": (operator.sub, "-"), "mul": (operator.mul, "*"),
             "truediv": (operator.truediv, "/"), "floordiv": (operator.floordiv, "//"),
             "mod": (operator.mod, "%"), "pow": (operator.pow, "**"), "matmul": (operator.matmul, "@"),
             "and": (operator.and_, "&"), "or": (operator.or_, "|"), "xor": (operator.xor, "^")}
for _name, (_op, _symbol) in OPERATORS.items():
    _forward, _reflected = _binary(_op, _symbol)
    setattr(Probe, f"__{_name}__", _forward)
    setattr(Probe, f"__r{_name}__", _reflected)


def _in_place(name, op, symbol):
    def operator_(self, other):
        return self.tracer.in_place(name, op, symbol, self, other)
    return operator_


for _name in ("add", "sub", "mul", "truediv", "pow", "matmul", "and", "or", "xor"):
    setattr(Probe, f"__i{_name}__", _in_place(_name, *OPERATORS[_name]))

for _name, _op, _symbol in (("eq", operator.eq, "=="), ("ne", operator.ne, "!="), ("lt", operator.lt, "<"),
                            ("le", operator.le, "<="), ("gt", operator.gt, ">"), ("ge", operator.ge, ">=")):
    setattr(Probe, f"__{_name}__", _binary(_op, _symbol)[0])


class ArrayProbe(Probe):
    """A probe of a numpy array: the array type of the module a rule sees while it is traced for
    a lowering that asks for it (Numpy.ndarray), so a rule's `x.__class__ is m.ndarray` takes its
    array path."""
    __slots__ = ()


class Float64Probe(Probe):
    """A probe of a numpy float64 scalar."""
    __slots__ = ()


PROBES = (Probe, ArrayProbe, Float64Probe)
ARRAY_TYPES = {"ndarray": ArrayProbe}     # numpy's types the probes stand for (float64 stays a dtype)


def probe_of(name, example, tracer) -> Probe:
    """The probe of `example`: of numpy's type's probe class, else a Probe."""
    numpy = tracer.numpy._module
    c = example.__class__
    kind = ArrayProbe if c is numpy.ndarray else Float64Probe if c is numpy.float64 else Probe
    return kind(name, example, tracer)


class Numpy:
    """numpy while a rule is traced (core/backend.py's seen_through): its own names, but for the
    functions that make arrays, whose calls in the tracing thread become equations, and the types
    in `types` (the probes', where a lowering asks for them; another thread's engine work
    meanwhile gets numpy's own)."""

    def __init__(self, module, tracer, types):
        self._module, self._tracer, self._thread, self._types = module, tracer, get_ident(), types

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if get_ident() == self._thread:
            if name in MAKERS:
                return lambda *args, **kwargs: self._tracer.call(value, args, kwargs)
            if name in self._types:
                return self._types[name]
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


class Recorder:
    """Records one rule body at a time as `items`: ("let", name, Equation), ("do", None,
    Equation) (a write) and ("if", name, outcome) (a decision on a value). A lowering subclasses
    it: `fresh` names the values, `decide` takes (or refuses) a branch; `types` are the numpy
    types the rules see as the probes' (ARRAY_TYPES: the array paths of the rules)."""

    def __init__(self, types=ARRAY_TYPES, assume_finite=False):
        # the rules' per-product finiteness tests taken as passed (core/rules/comparisons.py's
        # ASSUMED_FINITE): a sweep whose caller tests the result's finiteness at its end
        self.assume_finite = assume_finite
        self.items: list = []
        self.decisions = 0
        self.made: dict = {}        # id -> the arrays the traced rule made itself (it may write into them)
        self.arguments: set = set()     # ids of the traced rule's arguments' values
        self.numpy = Numpy(np(), self, types)
        self.local = 0

    def fresh(self) -> str:
        self.local += 1
        return f"@t{self.local}"

    def fact(self, probe, attr):
        """A probe's shape, ndim, size, dtype, strides...: its example's (fixed facts of a trace)."""
        return getattr(probe.example, attr)

    @staticmethod
    def real(value):
        """The value with every probe replaced by its example (containers too)."""
        if type(value) in PROBES:
            return value.example
        c = value.__class__
        if c is tuple or c is list:
            return c(Recorder.real(v) for v in value)
        return value

    def record(self, fn, args, kwargs):
        """Run fn on the probes among args, recording: its result (a probe, or a constant).
        Untraceable, or one of REFUSALS, where the rule does what no equation shows."""
        self.items, self.decisions, self.made, self.local = [], 0, {}, 0
        self.arguments = {id(self.real(a)) for a in (*args, *kwargs.values())}
        try:
            ASSUMED_FINITE[0] = get_ident() if self.assume_finite else None
            with seen_through(self.numpy):
                return fn(*args, **kwargs)
        finally:
            ASSUMED_FINITE[0] = None
            self.made = {}

    # ---- equations ----
    def let(self, equation, example) -> Probe:
        c = example.__class__
        numpy = self.numpy._module
        if not (c in (float, int, bool, complex, numpy.ndarray) or isinstance(example, numpy.generic)):
            raise Untraceable(f"a {c.__name__} result")
        name = self.fresh()
        self.items.append(("let", name, equation))
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
        self.items.append(("do", None, Equation(("store",), (probe, key, value))))

    def in_place(self, name, op, symbol, probe, other) -> Probe:
        """`probe op= other`: an array's in-place operator, or (a number's, which has none) the
        binary operator `op`, as Python falls back to it."""
        if not hasattr(probe.example.__class__, f"__i{name}__"):
            return self.binary(op, symbol, probe, other)
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

    def binary(self, op, symbol, a, b) -> Probe:
        if symbol == "**" and self.real(a).__class__ in (float, int) and self.real(b).__class__ in (float, int):
            raise Untraceable("a power of numbers, which may be complex: the rule's check must run")
        return self.let(Equation(("binary", symbol), (a, b)), self._result(op, (a, b), {}))

    def unary(self, op, symbol, a) -> Probe:
        return self.let(Equation(("unary", symbol), (a,)), self._result(op, (a,), {}))

    def call(self, fn, args, kwargs) -> Probe:
        return self.let(Equation(("call", fn), args, kwargs), self._result(fn, args, kwargs))

    def ufunc(self, ufunc, method, inputs, kwargs):
        out = kwargs.get("out")
        for target in (out if out.__class__ is tuple else (out,)) if out is not None else ():
            self.writes_into(target)
        equation = Equation(("ufunc", ufunc, method), inputs, kwargs)
        if method == "at":                  # a scatter into an array the rule made: a statement
            self.writes_into(inputs[0])
            self._result(getattr(ufunc, method), inputs, kwargs)
            self.items.append(("do", None, equation))
            return None
        return self.let(equation, self._result(getattr(ufunc, method), inputs, kwargs))

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
            self.items.append(("do", None, Equation(("function", func), args, kwargs)))
            return None
        return self.let(Equation(("function", func), args, kwargs), result)

    def call_method(self, probe, attr, args, kwargs) -> Probe:
        example = self._result(getattr(probe.example, attr), args, kwargs)
        return self.let(Equation(("method", attr), (probe, *args), kwargs), example)

    def index(self, probe, key) -> Probe:
        return self.let(Equation(("index",), (probe, key)), self._result(operator.getitem, (probe, key), {}))
