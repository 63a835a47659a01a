"""Probes: the stand-ins a compiled replay of arrays runs each rule on (diff/replay_arrays.py,
whose lines diff/rule_probes.py's Tracer writes).

A `Probe` carries the real value of the run being compiled (the example), answers its class,
shape, ndim, size, dtype and strides as fixed facts (a made function runs only at the layouts it
was made at), and hands every operation on it (an operator, a numpy ufunc or array function, an
indexing, an allowed method, a write) to its tracer, which makes it a line. `Numpy` stands in for
numpy's module and `Layout` for an array's flags while a rule is traced; what a line cannot show
raises `Untraceable`."""
from __future__ import annotations

import operator
from threading import get_ident

STATIC = frozenset(("shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"))
LAYOUT = frozenset(("c_contiguous", "f_contiguous", "contiguous", "forc", "fnc"))
# methods that make a value from their array (never write into it, never read a value out)
METHODS = frozenset(("transpose", "reshape", "ravel", "flatten", "astype", "copy", "sum", "any", "all", "max",
                     "min", "mean", "prod", "squeeze", "swapaxes", "conj", "dot", "cumsum", "clip", "item"))
# numpy's functions that make an array from shapes or lists, dispatched to no argument: followed
MAKERS = frozenset(("empty", "zeros", "ones", "full", "asarray", "ascontiguousarray", "array"))


# What a rule, or numpy, raises when given a stand-in it cannot treat as its value (a truth of an
# array, an attribute the stand-in lacks, a value check that fails, an index): the tracers take
# these as "not traceable here" and call the rule as it is; anything else is a bug and propagates.
REFUSALS = (TypeError, ValueError, ArithmeticError, AttributeError, LookupError, NotImplementedError)


class Untraceable(BaseException):
    """What a line cannot show: the rule is called as it is (here and in replay_compiled.py's
    float tracer). Not an Exception, so that a rule's own `except Exception` does not take it
    for a value's error and trace the wrong branch."""


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
