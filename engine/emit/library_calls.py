"""The library's composites (core/library: var, std, square, reciprocal, negative, power, pinv,
kron) as the IR's applications of the table's entries they apply, taken from the library function
itself, not from a copy of it: the function runs on stand-ins of the call's operands, recorded on
a tape (core/tape.py), and each recorded entry is one of the IR's Prims, so its forward and its
rules are the table's, as every primitive's (issue 28 item 4: one source of each composite).

The function is run at two sets of lengths of the operands' ranks. A number that differs between
them is one the library derives from the lengths (var's count): a `Measured` statement, whose
value the library gives again at the values the line meets where the module is written
(emit/examples.py), so the module holds at the point's shapes. Where the entries themselves
differ (pinv's rows against columns, kron's shapes), the run at the point's shapes is taken where
the point gives them (a parameter's), and the emitted function holds at those shapes only
(`Lowering.point_shapes`); elsewhere it is refused. A composite that reads a value out of its
operands (logsumexp's shift, var's mean where the count is 0) is not recorded: an entry shows no
such read."""
from __future__ import annotations

from ...parser import nodes
from ..core.backend import np
from ..core.errors import EngineError
from ..core.library import array_parameters, function, parameters
from ..core.notes import READS
from ..core.tape import Tape, Var
from .builtin_forms import Bound, kink_spelling, literal_value
from .ir import Measured

# the builtins emit writes from their library function's recorded entries
TRACED = ("var", "std", "square", "reciprocal", "negative", "power", "pinv", "kron")
# what the library (or numpy under it) raises at arguments it refuses: the user's mistake, named
LIBRARY_ERRORS = (EngineError, TypeError, ValueError, IndexError, ArithmeticError)
LENGTHS = (5, 7, 11, 13, 17, 19, 23, 29)        # the stand-ins' lengths where the point gives none
HINTS = {"pinv": "write solve(A.T @ A, A.T) for a matrix A with at least as many rows as columns, "
                 "solve(A @ A.T, A).T for a wide one",
         "kron": "write the product of reshaped arrays: reshape(a, (n, 1, m, 1)) * reshape(b, (1, p, 1, q))"}


class ReadOut(Exception):
    """The library read a value out of an operand (a shift, a mask): no entry shows it."""


def _read(*_):
    raise ReadOut()


def record(fn, stands, kwargs) -> tuple:
    """(steps, result) of `fn` run on `stands` (arrays and numbers: watched on a tape, None: not
    an operand) with `kwargs`: each step (entry, operands, params), an operand ("in", k) the k-th
    stand-in, ("at", j) the j-th step's value, else a constant; the result one such reference."""
    tape = Tape(persistent=True, keep_values=True)
    inputs = [None if s is None else tape.watch(s) for s in stands]
    first = len(tape.entries)
    kept, READS.hook = READS.hook, _read
    try:
        with np().errstate(all="ignore"):
            out = fn(*inputs, **kwargs)
    finally:
        READS.hook = kept
    at = {v.index: ("in", k) for k, v in enumerate(inputs) if v is not None}

    def ref(index):
        return at[index] if index < first else ("at", index - first)
    steps = []
    for e in tape.entries[first:]:
        parents = dict(e.parents)
        steps.append((e.prim, tuple(ref(parents[i]) if i in parents else constant(a) for i, a in enumerate(e.args)),
                      tuple(sorted((e.params or {}).items()))))
    if out.__class__ is not Var or out.tape is not tape:
        raise ReadOut()         # a value that does not depend on the operands
    return steps, ref(out.index)


def constant(value):
    """A recorded constant as the IR takes it (numpy's numbers as Python's); an array the library
    made from the operands' values is a value read out."""
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


def other_lengths(shapes) -> list:
    """The shapes at other lengths: each length above 1 another (of a set of lengths none of the
    first set has), in the reverse order (the longest the shortest), 1 still 1."""
    lengths = sorted({n for s in shapes for n in s if n > 1})
    fresh = [n for n in (*LENGTHS, *range(31, 999, 2)) if n not in lengths][:len(lengths)]
    mapped = dict(zip(lengths, reversed(fresh)))
    return [tuple(mapped.get(n, n) for n in s) for s in shapes]


def differs(a, b) -> bool:
    """Whether two constants recorded at two sets of lengths differ in more than a number."""
    return not (a == b or (a.__class__ in (int, float) and b.__class__ in (int, float)))


class LibraryCall:
    """One call of a TRACED builtin, lowered for the Lowering `low`."""

    def __init__(self, low, refuse):
        self.low, self.refuse = low, refuse

    def call(self, name, args, e, target):
        positions = array_parameters(name)[0]
        names = parameters(name)
        operands, kwargs = [], {}
        for k, node in enumerate(args):
            if node is None or (k not in positions and isinstance(node, nodes.NoneLit)):
                continue
            if k in positions:
                operands.append(self.low.value(node, None))
            else:
                kwargs[names[k]] = literal_value(node, self.refuse, f"the {names[k]} of {name}")
        if len(operands) != len(positions):
            self.refuse(f"`{name}` with other than {len(positions)} array argument{'s' * (len(positions) > 1)}", e.span)
        steps, out, measured = self.recorded(name, operands, kwargs, e)
        return self.lowered(name, steps, out, operands, measured, kwargs, e, target)

    def shapes_of(self, operands):
        """The operands' shapes where known here (a parameter's at the point, () of a number),
        else None; their ranks where known, else None."""
        shapes = [self.low.fixed_shapes.get(v) if v.__class__ is str else () for v in operands]
        ranks = [len(s) if s is not None else self.low.rank(v) for s, v in zip(shapes, operands)]
        return shapes, ranks

    def run(self, name, operands, shapes, kwargs, e):
        """record_at, what it cannot record refused with the call's place."""
        try:
            return record_at(name, operands, shapes, kwargs, self.low.complex_run)
        except ReadOut:
            self.refuse(f"`{name}` here: the library reads a value out of its operand (a number no table entry "
                        "gives)", e.span, "differentiate it with `autodiff grad` instead")
        except LIBRARY_ERRORS as exc:
            self.refuse(f"`{name}` of these arguments ({exc})", e.span)

    def recorded(self, name, operands, kwargs, e):
        """(steps, result, measured): the steps at the point's shapes where it gives them all, else
        at stand-in lengths of the operands' ranks; `measured`, the positions (step, operand) of the
        numbers that depend on the lengths (a second run at other lengths tells)."""
        shapes, ranks = self.shapes_of(operands)
        tries = [[r] for r in ranks]
        for k, r in enumerate(ranks):
            if r is None:
                tries[k] = [0, 1, 2]            # a rank unknown here: every rank must give the same steps
        known = all(s is not None for s in shapes)
        runs = []
        for k in range(max(len(t) for t in tries)):
            first = shapes if known else [LENGTHS[:t[min(k, len(t) - 1)]] for t in tries]
            runs += [self.run(name, operands, first, kwargs, e), self.run(name, operands, other_lengths(first), kwargs, e)]
        (steps, out), same, measured = runs[0], True, set()
        for other, other_out in runs[1:]:
            same = same and other_out == out and len(other) == len(steps)
            for j, (step, there) in enumerate(zip(steps, other) if same else ()):
                same = same and step[0] is there[0] and step[2] == there[2] and len(step[1]) == len(there[1])
                for i, (a, b) in enumerate(zip(step[1], there[1]) if same else ()):
                    same = same and not differs(a, b)
                    if same and a != b:
                        measured.add((j, i))
        if same:
            return steps, out, measured
        if not known:
            self.refuse(f"{name} of a value whose shape is unknown here (emit knows the shapes of the emitted "
                        "function's parameters, from --at)", e.span, HINTS.get(name))
        self.low.point_shapes = True        # its entries hold at the point's shapes: the module checks them
        return steps, out, set()

    def lowered(self, name, steps, out, operands, measured, kwargs, e, target):
        """The steps as the IR's Prims (a measured number a Measured statement), the result's bound
        to `target`."""
        line, made = e.span.line, []
        for j, (entry, refs, params) in enumerate(steps):
            values = []
            for i, r in enumerate(refs):
                if (j, i) in measured:
                    values.append(self.measured(name, operands, kwargs, steps, j, i, line))
                elif r.__class__ is tuple and len(r) == 2 and r[0] in ("in", "at") and r[1].__class__ is int:
                    values.append(operands[r[1]] if r[0] == "in" else made[r[1]])
                else:
                    values.append(r)
            applied = Bound(entry, len(refs), **dict(params)) if params else entry
            last = out == ("at", j)
            made.append(self.low.apply(applied, values, line, target if last else None, kink_spelling(entry)))
        result = operands[out[1]] if out[0] == "in" else made[out[1]]
        return self.low.expr_named(result, target, line) if target is not None and result != target else result

    def measured(self, name, operands, kwargs, steps, j, i, line):
        """A Measured statement: the number at step j's operand i, as the library gives it at the
        shapes of the operands' values where the line runs."""
        target = self.low.fresh()
        sources = [v for v in operands if v.__class__ is str]
        number = LengthsNumber(name, operands, kwargs, steps, (j, i), self.low.complex_run)
        self.low.out.append(Measured(target, f"np.shape({', '.join(sources)})", line, sources, number))
        return target


class LengthsNumber:
    """The number a library composite derives from its operands' lengths (at step j's operand i,
    `at`): the library's, run again at the operands' shapes."""

    def __init__(self, name, operands, kwargs, steps, at, complex_):
        self.name, self.operands, self.kwargs, self.at, self.complex_ = name, operands, kwargs, at, complex_
        self.entries = [(s[0], s[2], len(s[1])) for s in steps]

    def __call__(self, shapes):
        """The number at the array operands of `shapes`."""
        given = iter(shapes)
        shapes = [tuple(next(given)) if v.__class__ is str else () for v in self.operands]
        try:
            again, _ = record_at(self.name, self.operands, shapes, self.kwargs, self.complex_)
        except ReadOut:
            again = []
        if [(s[0], s[2], len(s[1])) for s in again] != self.entries:
            raise ValueError(f"the library's {self.name} applies other entries at the shapes {shapes}")
        j, i = self.at
        return again[j][1][i]

    def text(self, names, shapes):
        """The number's text where it is a product of one operand's lengths (np.size or np.shape's)
        plus a whole number, as the library gives it at `shapes` and at three other sets of lengths
        of those ranks (lengths of 1 still 1); else None."""
        value = self(shapes)
        others = [other_lengths(shapes), [tuple(2 if n > 1 else 1 for n in s) for s in shapes],
                  [tuple(n + 3 if n > 1 else 1 for n in s) for s in shapes]]
        try:
            there = [self(o) for o in others]
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


def record_at(name, operands, shapes, kwargs, complex_):
    """The library function's steps at operands of `shapes` (numbers stay themselves)."""
    stands = [stand_in(tuple(s), complex_) if v.__class__ is str else None for v, s in zip(operands, shapes)]
    fn = function(name)
    numbers = {k: v for k, v in enumerate(operands) if v.__class__ is not str}
    return record(lambda *xs: fn(*[numbers.get(k, x) for k, x in enumerate(xs)], **kwargs), stands, {})
