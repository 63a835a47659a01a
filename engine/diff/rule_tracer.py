"""The Python lowering of the one rule tracer (core/rule_tracer.py): a rule recorded on probes
becomes the lines of a generated function. Both compiled replays use it (diff/replay_compiled.py
for traces of Python floats and complex numbers, each VJP the form for its adjoint;
diff/replay_arrays.py for sweeps of numpy arrays and complex scalars), emit prints rules with it (emit/rule_text.py), and `rule_source` gives one rule as
Python source for given operand names.

The recorder's equations are printed here as Python (`line`): an operator, a call of a function
bound by name in the namespace (numpy's functions and ufunc methods, constants), a method, an
index, a write. A branch on a value becomes an `if` whose other side calls the rule as it is; a
rule that does what an equation cannot show (core/rule_tracer.Untraceable), a constant a line
cannot name (an array the rule made, an object), or a note is called as it is, bound by name;
and a traced rule whose lines do not give the rule's own result to the bit is called as it is
too."""
from __future__ import annotations

import re

from ..core.accumulate import INPLACE_MIN_ELEMENTS
from ..core.backend import np
from ..core.notes import NOTES
from ..core.rule_tracer import (PROBES, REFUSALS, Equation, Float64Probe, Probe, Recorder, Untraceable,  # noqa: F401
                                probe_of)
from ..core.tape import Shape
from .bits import same_bits

PLACEHOLDER = re.compile(r"@[art][0-9]*")    # a template's names: @a0 (an argument), @t1, @r (the target)
WHY = None                  # a list to collect (rule, why it was called as it is) in, for the tests


class Tracer(Recorder):
    """The lines of one generated function, and the rules traced into it one at a time."""

    def __init__(self, namespace: dict, allowed: set, assume_finite: bool = False, scalars_as_values=False,
                 notes_dropped=False):
        # a kink the rule notes taken as noted (for emitted source, which keeps no notes); the
        # replays, which must note it, call such a rule as it is
        self.notes_dropped = notes_dropped
        super().__init__(assume_finite=assume_finite)
        self.namespace = namespace
        # a numpy scalar where the rule gives a float (plain_scalar) taken as that value: for
        # emitted source, which runs on numpy's scalars (emit/rule_text.py); the replays, which
        # must give the rule's own float to the bit, leave it False
        self.scalars_as_values = scalars_as_values
        self.allowed = allowed      # ids of the arrays a line may name: the trace's own constants
        self.bound: dict = {}       # id -> bound name (with the object kept alive in namespace)
        self.count = 0
        self.templates: dict = {}   # a rule and its arguments' kinds -> its traced lines (Tracer.trace)
        self.kept: list = []        # the constants the templates' keys name by id, kept alive
        self.ufunc_methods: dict = {}   # (ufunc, method name) -> the bound method lines name

    # ---- names ----
    def bind(self, value) -> str:
        name = self.bound.get(id(value))
        if name is None:
            self.count += 1
            name = self.bound[id(value)] = f"k{self.count}"
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

    # ---- the Python printer of equations ----
    def line(self, equation: Equation) -> str:
        """The Python text of an equation (an expression, or a write's statement)."""
        op, args, kwargs = equation.op, equation.args, equation.kwargs
        kind = op[0]
        if kind == "text":          # a lowering's own spelling of what it recorded (emit's np.shape(x))
            return op[1]
        if kind == "binary":
            return f"{self.text(args[0])} {op[1]} {self.text(args[1])}"
        if kind == "unary":
            return f"{op[1]}{args[0].name}"
        if kind == "attr":
            return f"{args[0].name}.{op[1]}"
        if kind == "index":
            return f"{args[0].name}[{self.text(args[1])}]"
        if kind == "store":
            return f"{args[0].name}[{self.text(args[1])}] = {self.text(args[2])}"
        if kind == "method":
            return self._call_text(f"{args[0].name}.{op[1]}", args[1:], kwargs)
        fn = self.bound_method(op[1], op[2]) if kind == "ufunc" else op[1]
        return self._call_text(self.bind(fn), args, kwargs)

    def bound_method(self, ufunc, method):
        """`ufunc.method`, the same object each time (bound by id: one name per ufunc method)."""
        return self.ufunc_methods.setdefault((ufunc, method), getattr(ufunc, method))

    def _call_text(self, head, args, kwargs) -> str:
        parts = [self.text(a) for a in args] + [f"{k}={self.text(v)}" for k, v in kwargs.items()]
        return f"{head}({', '.join(parts)})"

    # ---- one rule ----
    def apply(self, fn, args, kwargs, target, lines, indent="    ", release=False) -> Probe:
        """Lines for `target = fn(*args, **kwargs)` (args: probes or the trace's constants):
        the rule traced, or called as it is. Returns the probe of `target`. A rule applied again
        to arguments of the same kinds (the steps of a loop) reuses the lines traced the first
        time, names changed: the same classes, shapes, dtypes, strides and constants take the
        same lines, and the caller checks the whole function's numbers. `release`: where the
        result is a large array, a last line lets go of the rule's temporaries (None), so that
        what they held is freed, and an array the result shares with one of them (a ufunc's
        out=) is the sweep's alone again, which accumulate adds into in place."""
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
        if release and template[1] and len(template[0]) > 1 and getattr(example, "size", 0) >= INPLACE_MIN_ELEMENTS:
            lines.append(indent + " = ".join(f"t{base + k}" for k in range(1, template[1] + 1)) + " = None")
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
        try:
            out = self.record(fn, args, kwargs)
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
            del NOTES.kinks[kinks:], NOTES.detached[detached:]
        if out is not None:         # printed apart: a printer's own error is a bug, not a refusal
            try:
                result = self.text(out)
                items = [(kind, name, what if kind == "if" else self.line(what)) for kind, name, what in self.items]
            except Untraceable as exc:      # a constant no line may name (an array the rule made)
                out = None
                if WHY is not None:
                    WHY.append((fn, str(exc)))
        called = self._call_text(self.bind(fn), args, kwargs)     # the rule as it is
        if out is None:
            return [f"@r = {called}"], self.local
        lines, pad = [], ""
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
