"""The library's composites (core/library: var, std, prod, cumsum, square, reciprocal, negative,
power, complex, transpose, outer, pinv, kron, np.fft's transforms) as the IR's applications of the
table's entries they apply, taken from the library function itself, not from a copy of it: the
function runs on stand-ins of the call's operands, recorded on a tape (core/tape.py), and each
recorded entry is one of the IR's Prims, so its forward and its rules are the table's, as every
primitive's (issue 28 item 4: one source of each composite; numpy's arguments resolved once, by
the library).

The function is run at two sets of lengths of the operands' ranks (each rank where one is
unknown). A number that differs between them is one the library derives from the lengths (var's
count): a `Measured` statement, whose value the library gives again at the values the line meets
where the module is written (emit/examples.py), written as numpy's text of those lengths where the
library agrees with it at other lengths. A parameter that differs (np.fft's lengths, reshape's
shape) is a `MeasuredParameter`, a constant of the rules' text at the point. Where the entries
themselves differ (pinv's rows against columns), the run at the point's shapes is taken where the
point gives them (a parameter's), and the emitted function holds at those shapes only
(`Lowering.point_shapes`); elsewhere it is refused. A composite that reads a value out of its
operands (logsumexp's shift, var's mean where the count is 0) or makes an array constant (triu's
mask) is not recorded (`ReadOut`): no entry shows it; emit/builtin_forms.py writes those."""
from __future__ import annotations

import inspect
from collections import namedtuple

from ...parser import nodes
from ..core.backend import np
from ..core.errors import EngineError
from ..core.library import array_parameters, function, parameters
from ..core.notes import READS
from ..core.tape import Tape, Var
from ..lang.errors import runtime_error
from .builtin_forms import Bound, kink_spelling, literal_value
from .fft_forms import of_shape
from .ir import AtPoint, Measured, MeasuredParameter

# the builtins emit writes from their library function's recorded entries
TRACED = ("var", "std", "square", "reciprocal", "negative", "power", "pinv", "kron", "fft", "ifft", "rfft", "irfft",
          "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "fftshift", "ifftshift",
          "complex", "cumsum", "transpose", "prod", "outer", "eigvalsh", "float_power", "trapezoid", "trapz", "cov",
          "polyval")
# those of square matrices (the last two axes): their stand-ins are square
SQUARE = ("eigvalsh",)
# what the library (or numpy under it) raises at arguments it refuses: the user's mistake, located as
# the language locates it (lang/errors.py)
LIBRARY_ERRORS = (EngineError, TypeError, ValueError, IndexError, ArithmeticError)
LENGTHS = (5, 7, 11, 13, 17, 19, 23, 29)        # the stand-ins' lengths where the point gives none
HINTS = {"kron": "write the product of reshaped arrays: reshape(a, (n, 1, m, 1)) * reshape(b, (1, p, 1, q))"}


# a recorded operand that is a value of the run: the k-th operand ("in") or the k-th step's ("at")
Ref = namedtuple("Ref", "kind k")


class ReadOut(Exception):
    """The library read a value out of an operand (a shift, a mask): no entry shows it."""


def _read(*_):
    raise ReadOut()


def record(fn, stands, kwargs) -> tuple:
    """(steps, result) of `fn` run on `stands` (arrays and numbers: watched on a tape, None: not
    an operand) with `kwargs`: each step (entry, operands, params, the rank of its value), an
    operand a Ref (the k-th stand-in's, or the j-th step's value) or a constant; the result a Ref."""
    tape = Tape(persistent=True, keep_values=True)
    inputs = [None if s is None else tape.watch(s) for s in stands]
    first = len(tape.entries)
    kept, READS.hook = READS.hook, _read
    try:
        with np().errstate(all="ignore"):
            out = fn(*inputs, **kwargs)
    finally:
        READS.hook = kept
    at = {v.index: Ref("in", k) for k, v in enumerate(inputs) if v is not None}

    def ref(index):
        return at[index] if index < first else Ref("at", index - first)
    steps = []
    for e in tape.entries[first:]:
        parents = dict(e.parents)
        args = tuple(ref(parents[i]) if i in parents else constant(a) for i, a in enumerate(e.args))
        params = e.params or {}
        given = positional(e.prim, len(args), params)
        if given is not None:       # np.fft's lengths, axes and norm, reshape's shape: operands after its arguments
            args, params = args + tuple(constant(params[n]) for n in given), {}
        steps.append((e.prim, args, tuple(sorted(params.items())), np().ndim(e.value)))
    if out.__class__ is not Var or out.tape is not tape:
        raise ReadOut()         # a value that does not depend on the operands
    return steps, ref(out.index)


def positional(entry, arity, params):
    """The names of the entry's parameters in the order its forward takes them after its `arity`
    arguments, where it takes them so (np.fft's entries, reshape); else None (a Bound entry)."""
    if not params:
        return None
    taken = list(inspect.signature(entry.impl).parameters.values())[arity:]
    names = [p.name for p in taken if p.kind is p.POSITIONAL_OR_KEYWORD]
    return names if len(names) == len(taken) and set(names) == set(params) else None


def constant(value):
    """A recorded constant as the IR takes it (numpy's numbers as Python's); an array the library
    made (from the operands' values, or a mask of their shapes) is not one: ReadOut."""
    numpy = np()
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        raise ReadOut()
    return value


def stand_in(shape, complex_):
    """A value of `shape` (a number where ()): no two elements equal, no zero, of full rank."""
    numpy = np()
    rng = numpy.random.default_rng(28)
    value = rng.uniform(0.5, 1.5, shape) + (1j * rng.uniform(0.5, 1.5, shape) if complex_ else 0.0)
    return value.item() if shape == () else value


def stand_in_lengths(name, rank) -> tuple:
    """The lengths of a stand-in operand of `rank` axes: distinct, but the last two one length
    for a builtin of square matrices."""
    lengths = LENGTHS[:rank]
    return lengths[:-1] + lengths[-2:-1] if name in SQUARE and rank >= 2 else lengths


def other_lengths(shapes) -> list:
    """The shapes at other lengths: each length above 1 another (of a set of lengths none of the
    first set has), in the reverse order (the longest the shortest), 1 still 1."""
    lengths = sorted({n for s in shapes for n in s if n > 1})
    fresh = [n for n in (*LENGTHS, *range(31, 999, 2)) if n not in lengths][:len(lengths)]
    mapped = dict(zip(lengths, reversed(fresh)))
    return [tuple(mapped.get(n, n) for n in s) for s in shapes]


def measured(entry, i, a, b):
    """How the entry's i-th operand, a constant recorded at two sets of lengths (a, b), is written:
    None where it is the same; "number" (a Measured line) where numbers differ; "parameter" (a
    MeasuredParameter, no line) where a parameter past the entry's differentiable arguments (np.fft's
    lengths) differs as tuples of whole numbers or strings; False where it cannot be written."""
    if a == b and a.__class__ is b.__class__:
        return None
    if a.__class__ in (int, float) and b.__class__ in (int, float):
        return "number"
    fixed = all(v.__class__ is str or v.__class__ is tuple and all(n.__class__ is int for n in v) for v in (a, b))
    return "parameter" if fixed and i >= len(entry.generic_vjps) else False


class LibraryCall:
    """One call of a TRACED builtin, lowered for the Lowering `low`."""

    def __init__(self, low, refuse):
        self.low, self.refuse = low, refuse

    def call(self, name, args, e, target):
        """`args`: the call's arguments by position (None: not given): its array arguments the IR's
        values (names or numbers); one given as a length of a shape (len(x), x.shape[k]: np.fft's n)
        the value where the line runs; the others written as numbers (axis, ddof, norm)."""
        positions = array_parameters(name)[0]
        names = parameters(name)
        if len(args) > len(names):
            self.refuse(f"`{name}` with more than {len(names)} arguments", e.span)
        operands, lengths, kwargs = {}, {}, {}
        for k, node in enumerate(args):
            if node is None:
                continue
            if isinstance(node, nodes.NoneLit):     # clip's a_min=None: as written
                kwargs[names[k]] = None
            elif k in positions:
                operands[names[k]] = self.low.value(node, None)
            elif of_shape(node):
                lengths[names[k]] = self.low.value(node, None)
            else:
                kwargs[names[k]] = literal_value(node, self.refuse, f"the {names[k]} of {name}")
        called = Called(name, operands, lengths, kwargs, self.low.complex_run)
        steps, out, measured = self.recorded(called, e)
        return self.lowered(called, steps, out, measured, e, target)

    def run(self, called, shapes, lengths, e, quiet=False):
        """called.record, what it cannot record refused with the call's place (None where `quiet`:
        a rank tried that the library refuses); in a complex run, a composite that refuses complex
        operands (rfft) is run at real ones, as the program's must be."""
        try:
            try:
                return called.record(shapes, lengths)
            except LIBRARY_ERRORS:
                if not called.complex_:
                    raise
                called.complex_ = False
                return called.record(shapes, lengths)
        except ReadOut:
            self.refuse(f"`{called.name}` here: the library reads a value out of its operand (a number no table "
                        "entry gives)", e.span, "differentiate it with `autodiff grad` instead")
        except LIBRARY_ERRORS as exc:      # the user's mistake, as the language says it where it runs
            if quiet:
                return None
            raise runtime_error(exc, e.span, f"{called.name}()") from None

    def recorded(self, called, e):
        """(steps, result, measured): the steps at the point's shapes where it gives them all, else
        at stand-in lengths of the operands' ranks (each rank where one is unknown); `measured`,
        the positions (step, operand) of the numbers the library derives from the lengths."""
        shapes = [self.low.fixed_shapes.get(v) if v.__class__ is str else () for v in called.operands]
        ranks = [len(s) if s is not None else self.low.rank(v) for s, v in zip(shapes, called.operands)]
        known = all(s is not None for s in shapes) and not called.lengths
        runs, tried = [], (0, 1, 2) if None in ranks else (None,)     # a rank unknown: those the library takes
        for rank in tried:
            first = shapes if known else [stand_in_lengths(called.name, rank if r is None else r) for r in ranks]
            quiet = rank is not None and (rank != tried[-1] or runs)
            pair = [self.run(called, first, dict.fromkeys(called.lengths, 6), e, quiet),
                    self.run(called, other_lengths(first), dict.fromkeys(called.lengths, 10), e, quiet)]
            runs += pair if None not in pair else []
        (steps, out), numbers = runs[0], {}
        steps = [(*step[:3], step[3] if all(other[j][3] == step[3] for other, _ in runs if len(other) == len(steps))
                  else None) for j, step in enumerate(steps)]
        same = all(o == out and [(s[0], s[2], len(s[1])) for s in other] == called.entries(steps) for other, o in runs[1:])
        for other, _ in runs[1:] if same else ():
            for j, (step, there) in enumerate(zip(steps, other)):
                for i, (a, b) in enumerate(zip(step[1], there[1])):
                    how = measured(step[0], i, a, b)
                    same = same and how is not False
                    if how:
                        numbers[(j, i)] = "number" if numbers.get((j, i)) == "number" else how
        if same:
            return steps, out, numbers
        if not known:
            self.refuse(f"{called.name} of a value whose shape is unknown here (emit knows the shapes of the "
                        "emitted function's parameters, from --at)", e.span, HINTS.get(called.name))
        self.low.point_shapes = True        # its entries hold at the point's shapes: the module checks them
        return steps, out, {}

    def lowered(self, called, steps, out, measured, e, target):
        """The steps as the IR's Prims (a measured constant a Measured statement, a string an
        AtPoint: an operand that is a string is a name), the result's bound to `target`."""
        line, made = e.span.line, []
        for j, (entry, refs, params, rank) in enumerate(steps):
            values = []
            for i, r in enumerate(refs):
                if (j, i) in measured:
                    values.append(self.low.fresh())
                    kind = Measured if measured[(j, i)] == "number" else MeasuredParameter
                    text = ", ".join(called.sources())      # what it reads (their shapes, a length's value)
                    self.low.out.append(kind(values[-1], text, line, called.sources(), LengthsNumber(called, steps, (j, i))))
                elif r.__class__ is str:
                    values.append(self.low.fresh())
                    self.low.out.append(AtPoint(values[-1], repr(r), line))
                elif r.__class__ is Ref:
                    values.append(called.operands[r.k] if r.kind == "in" else made[r.k])
                else:
                    values.append(r)
            applied = Bound(entry, len(refs), **dict(params)) if params else entry
            made.append(self.low.apply(applied, values, line, None, kink_spelling(entry)))
            if rank is not None:        # the same at every length (and rank) it was run at
                self.low.known[made[-1]] = rank
        result = called.operands[out.k] if out.kind == "in" else made[out.k]
        return self.low.expr_named(result, target, line)


class Called:
    """A call of the library function `name`: its array operands (the IR's names, or numbers; by
    parameter name in `given`), `lengths` (a parameter given as a length of a shape -> the IR's
    name of it), the other arguments as written (`kwargs`), and whether its operands are taken as
    complex (complex stand-ins in a complex run, as the hand form of var took |c|² there)."""

    def __init__(self, name, given, lengths, kwargs, complex_):
        self.name, self.given, self.lengths, self.kwargs, self.complex_ = name, given, lengths, kwargs, complex_
        self.operands = list(given.values())

    def sources(self) -> list:
        """The names whose values' shapes (an array operand's) or values (a length's) it reads."""
        return [v for v in self.operands if v.__class__ is str] + list(self.lengths.values())

    @staticmethod
    def entries(steps) -> list:
        return [(s[0], s[2], len(s[1])) for s in steps]

    def record(self, shapes, lengths) -> tuple:
        """The library function's steps at array operands of `shapes` (numbers stay themselves)
        and the lengths given (parameter name -> a whole number)."""
        stands = [stand_in(tuple(s), self.complex_) if v.__class__ is str else None for v, s in zip(self.operands, shapes)]
        fn = function(self.name)
        kwargs = {**self.kwargs, **{k: int(n) for k, n in lengths.items()}}
        names = list(self.given)

        def call(*xs):
            return fn(**{n: x if v.__class__ is str else v for n, x, v in zip(names, xs, self.operands)}, **kwargs)
        return record(call, stands, {})


class LengthsNumber:
    """The constant a library composite derives from its operands' lengths (at step j's operand
    i, `at`): the library's, run again at the values where the line runs."""

    def __init__(self, called, steps, at):
        self.called, self.at, self.entries = called, at, Called.entries(steps)

    def __call__(self, examples):
        """The constant at the sources' values (sources()'s order: the arrays', then the lengths')."""
        count = len(examples) - len(self.called.lengths)
        return self.of([np().shape(v) for v in examples[:count]], dict(zip(self.called.lengths, examples[count:])))

    def of(self, arrays, lengths):
        """The constant at array operands of these shapes (the sources'; a number's is ())."""
        given = iter(arrays)
        shapes = [next(given) if v.__class__ is str else () for v in self.called.operands]
        try:
            again, _ = self.called.record(shapes, lengths)
        except ReadOut:
            again = []
        if Called.entries(again) != self.entries:
            raise ValueError(f"the library's {self.called.name} applies other entries at the shapes {shapes}")
        j, i = self.at
        return again[j][1][i]

    def text(self, names, examples):
        """The number's text where it is a product of one array operand's lengths (np.size or
        np.shape's) plus a whole number, as the library gives it at these values and at three other
        sets of lengths of those ranks (lengths of 1 still 1); else None."""
        if self.called.lengths:
            return None
        shapes = [np().shape(v) for v in examples]
        value = self.of(shapes, {})
        others = [other_lengths(shapes), [tuple(2 if n > 1 else 1 for n in s) for s in shapes],
                  [tuple(n + 3 if n > 1 else 1 for n in s) for s in shapes]]
        try:
            there = [self.of(o, {}) for o in others]
        except ValueError:
            return None
        for k, (name, shape) in enumerate(zip(names, shapes)):
            for axes in sorted(subsets(len(shape)), key=len, reverse=True):
                c = value - product(shape, axes)
                if c.__class__ is float and not c.is_integer() or \
                        any(product(o[k], axes) + c != v for o, v in zip(others, there)):
                    continue
                whole = f"np.size({name})" if len(axes) == len(shape) else \
                    " * ".join(f"np.shape({name})[{a}]" for a in axes)
                return whole + (f" + {int(c)}" if c > 0 else f" - {int(-c)}" if c < 0 else "")
        return None


def subsets(n) -> list:
    """The non-empty sets of axes of a rank n (tuples)."""
    return [tuple(a for a in range(n) if mask >> a & 1) for mask in range(1, 2 ** n)]


def product(shape, axes) -> int:
    out = 1
    for a in axes:
        out *= shape[a]
    return out
