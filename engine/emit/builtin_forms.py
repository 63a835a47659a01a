"""The call forms of numpy code as the IR's (emit/lower.py) calls of the table's entries: a method
is the builtin of its name with the array first (the language's own method table,
lang/call_forms.py), keyword arguments take their builtin's positions, and the builtins whose
numpy arguments choose a composite of table entries are lowered to it: norm by its `ord` and
`axis` (core/library/linalg.py's vector and matrix norms), each written from the same entries the
library applies, so their rules are the table's; squeeze, trace and diagonal as the library's
gathered (a getitem of the flattened array at numpy's rearrangement of its positions). The
composites emit records from the library function itself (var, std, prod, pinv, kron, np.fft's
transforms...) are emit/library_calls.py's."""
from __future__ import annotations

import functools

import math

from ...parser import nodes
from functools import lru_cache

from ..lang.builtins import make_builtins
from ..lang.call_forms import METHODS
from ..lang.dtypes import spelled_kind
from ..lang.keywords import accepted_keywords
from .builtin_ways import numpy_spelling
from .rule_text import primitive

INF = {"inf": math.inf}


def kink_spelling(prim):
    """A forward that notes its kink (sqrt at 0, a tie of maximum's, pinv of a rank-deficient
    matrix) cannot be traced at the stand-ins: numpy's function of the builtin's name (builtin_ways'
    numpy_spelling: np.NAME or np.linalg.NAME) is its text (None: the rule's text)."""
    return numpy_spelling(prim.builtin or prim.name, "") if prim.kink else None


def as_builtin_call(e, refuse):
    """`A.sum(axis=0)` as `sum(A, axis=0)`, `A.transpose(1, 0)` as `transpose(A, (1, 0))`: the
    language's methods (lang/call_forms.py's METHODS), each the builtin of its name; those with no
    builtin of their name (its METHOD_FALLBACKS) as what they are there: x.copy() and
    x.astype(float) (np.float64) the value, x.astype(int) (np.int64) trunc(x), x.flatten() and x.ravel() reshape(x, -1),
    x.item() reshape(x, ())."""
    method = e.func
    if method.attr not in METHODS or method.attr in ("keys", "values", "items"):
        refuse(f"the method `.{method.attr}()`", e.span)
    x, name = method.value, method.attr
    kind = spelled_kind(e.args[0].id) if name == "astype" and len(e.args) == 1 and isinstance(e.args[0], nodes.Name) \
        else None
    if name == "copy" or kind == "f":
        return x
    if name == "astype" and kind != "i":
        refuse("`.astype()` to anything but float or int (np.float64, np.int64)", e.span)
    if kind == "i" or name in ("flatten", "ravel", "item"):
        shape = (nodes.Num(-1.0, e.span),) if name in ("flatten", "ravel") else ()
        return nodes.Call(nodes.Name("trunc" if kind else "reshape", method.attr_span), (x, *shape), e.span)
    args = tuple(e.args)
    if method.attr == "transpose" and len(args) > 1:
        args = (nodes.TupleExpr(args, e.span),)
    return nodes.Call(nodes.Name(method.attr, method.attr_span), (method.value, *args), e.span, e.keywords)


def attribute(low, e, target, refuse):
    """`A.T` as transpose(A); `.shape`, `.ndim`, `.size` (and `A.shape[k]`, `e` its subscript)
    as numpy's whole numbers, which carry no derivative. `low`: the Lowering."""
    node = e.value if isinstance(e, nodes.Subscript) else e
    if node.attr == "T" and node is e:
        return low.call(nodes.Call(nodes.Name("transpose", node.attr_span), (node.value,), e.span), target)
    if node.attr not in ("shape", "ndim", "size"):
        refuse(f"the attribute `.{node.attr}`", e.span)
    text = f"np.{node.attr}({low.value(node.value, None)})"
    if node is not e:
        if len(e.index) != 1 or not isinstance(e.index[0], (nodes.Num, nodes.UnaryOp)):
            refuse("indexing a shape by anything but a number", e.span)
        text += f"[{low.index_part(e.index[0])!r}]"
    made = low.plain(text, target, e.span.line)
    if node.attr == "shape" and node is e:      # a tuple of whole numbers: `n, d = X.shape` takes it apart
        low.tuples[made] = ""
    return made


def positions_of(x: str) -> str:
    """The text of an array of x's positions (its flat indices, in its shape)."""
    return f"np.arange(np.size({x})).reshape(np.shape({x}))"


def gathered(low, x, positions, line, target):
    """core/library/axes.py's gathered: the table's getitem of the flattened x at `positions` (the
    text of numpy's rearrangement of an array of x's positions, made where the line runs)."""
    flat = low.apply("reshape", [x, (-1,)], line, None)
    return low.apply("getitem", [flat, low.plain(positions, None, line)], line, target)


@lru_cache(maxsize=1)
def language_builtins() -> dict:
    """The language's builtins (those of no interpreter's): their signatures say their keywords."""
    return make_builtins(None)


def parameters(name) -> tuple:
    """The names of a builtin's parameters after its first (the operand), as the language's own
    signature has them (lang/keywords.py); () where it takes them as *args (reshape's shape)."""
    builtin = language_builtins().get(name)
    return accepted_keywords(builtin.fn)[1:] if builtin is not None and hasattr(builtin, "fn") else ()


# numpy's parameters that take whole numbers (shapes, counts, axes, offsets): the language's numbers
# are floats and takes a whole float there (core/library/axes.py's `whole`), numpy an int, so an
# argument given at one of them is written with its whole numbers as ints
WHOLE_PARAMETERS = frozenset(("shape", "N", "M", "k", "n", "reps", "repeats", "axis", "indices_or_sections", "num",
                              "shift", "axis1", "axis2", "offset", "ddof", "decimals"))
SHAPE_ONLY = ("zeros", "ones", "empty")      # take the shape as their only arguments (*shape)


def takes_whole(name, k) -> bool:
    """Whether numpy takes the builtin `name`'s k-th argument as a whole number (its shape, a count,
    an axis), as the language's signature names its parameters."""
    if name in SHAPE_ONLY:
        return True
    builtin = language_builtins().get(name)
    names = accepted_keywords(builtin.fn) if builtin is not None and hasattr(builtin, "fn") else ()
    return k < len(names) and names[k] in WHOLE_PARAMETERS


def positional(e, refuse) -> list:
    """The call's arguments by position, its keywords placed at their builtin's parameters (None
    for one not given)."""
    args = list(e.args)
    if not e.keywords:
        return args
    builtin = language_builtins().get(e.func.id)
    accepted = accepted_keywords(builtin.fn) if builtin is not None and hasattr(builtin, "fn") else ()
    for kw in e.keywords:
        if kw.name not in accepted:
            refuse(f"the keyword `{kw.name}=` of `{e.func.id}`", kw.span)
        k = accepted.index(kw.name)
        args += [None] * (k + 1 - len(args))
        args[k] = kw.value
    return args


def literal_value(node, refuse, what):
    """A number, a string, inf, None or a tuple of them written in the call: an ord, an axis."""
    if node is None or isinstance(node, nodes.NoneLit):
        return None
    if isinstance(node, nodes.Num):
        return int(node.value) if float(node.value).is_integer() else float(node.value)
    if isinstance(node, nodes.Str):
        return node.value
    if isinstance(node, nodes.Bool):
        return bool(node.value)
    if isinstance(node, nodes.Name) and node.id in INF:
        return INF[node.id]
    if isinstance(node, nodes.UnaryOp) and node.op == "-":
        return -literal_value(node.operand, refuse, what)
    if isinstance(node, nodes.TupleExpr):
        return tuple(literal_value(v, refuse, what) for v in node.elts)
    refuse(f"{what} that is not written as a number", node.span, f"write {what} as numbers in the call")


class Forms:
    """The "form" builtins (emit/builtin_ways.py: those whose numpy arguments choose the entries they
    apply) lowered for one Lowering `low` (its apply, fresh, value and refuse)."""

    def __init__(self, low, refuse):
        self.low, self.refuse = low, refuse

    def apply(self, name, operands, line, target):
        return self.low.apply(name, operands, line, target, kink_spelling(primitive(name)))

    def call(self, e, target, rank):
        args = positional(e, self.refuse)
        name, line = e.func.id, e.span.line
        if name in ("einsum", "tensordot"):
            return Products(self).call(name, args, e, target, rank)
        if name in ("concatenate", "split", "stack", "solve_triangular"):
            return getattr(self, name)(args, e, target, rank)
        x = self.low.value(args[0], None)
        if name == "logsumexp":
            named = parameters(name)
            b, sign = (args[k] if len(args) > k else None for k in (2, 4))
            if (b is not None and not isinstance(b, nodes.NoneLit)) or \
                    (sign is not None and literal_value(sign, self.refuse, "the return_sign of logsumexp")):
                self.refuse("logsumexp with b= or return_sign=True", e.span,
                            "write log(sum(b * exp(a - c))) + c with c = stop_gradient(max(a))")
            kept = dict(zip(named, [literal_value(a, self.refuse, f"the {k} of {name}") for a, k in zip(args[1:], named)]))
            return self.logsumexp(x, kept.get("axis"), kept.get("keepdims"), rank, e, target)
        if name == "clip":
            bounds = [None if a is None or isinstance(a, nodes.NoneLit) else self.low.value(a, None) for a in args[1:3]]
            return self.clip(x, bounds, e, target)
        if name == "where":
            if len(args) != 3:
                self.refuse("where with other than three arguments", e.span, "write where(condition, a, b)")
            return self.apply("where", [x, *(self.low.value(a, None) for a in args[1:])], line, target)
        if name == "dot" and len(args) != 2:
            self.refuse(f"{name} with other than two arguments", e.span)
        named = parameters(name)
        params = [] if name == "dot" else [literal_value(a, self.refuse, f"the {k} of {name}") for a, k in
                  zip(args[1:], named or ("shape",) * len(args))]
        keepdims = dict(zip(named, params)).get("keepdims")
        if keepdims and name != "norm":
            self.refuse(f"`{name}` with keepdims", e.span)
        if name == "dot":
            return self.dot(x, self.low.value(args[1], None), rank, e, target)
        if name == "cumprod":          # core/library/reductions.py's: None flattens
            axis = self.axis(params[0] if params else None, rank(x), e)
            if axis is None:
                x, axis = self.low.apply("reshape", [x, (-1,)], e.span.line, None), 0
            return self.low.apply(name, [x, axis], e.span.line, target)
        if name in ("triu", "tril", "diag"):
            return self.triangle(name, x, int(params[0] or 0) if params else 0, rank(x), e, target)
        if name == "squeeze":
            return self.squeeze(x, params[0] if params else None, e, target)
        if name in ("trace", "diagonal"):
            return self.diagonal(x, params, e, target, summed=name == "trace")
        if name == "reshape":
            shape = params[0] if len(params) == 1 and params[0].__class__ is tuple else tuple(params)
            return self.low.apply("reshape", [x, tuple(int(n) for n in shape)], line, target)
        order = params[0] if params else None
        axis = params[1] if len(params) > 1 else None
        if keepdims:            # the reduced axes (all where none is named) put back, as sum's
            kept = self.low.reduced_axes(name, x, axis, True, e)
            return self.low.put_back(self.norm(x, order, axis, rank(x), e, None), kept, line, target)
        return self.norm(x, order, axis, rank(x), e, target)

    def triangle(self, name, x, k, ndim, e, target):
        """core/library/shapes.py's triu and tril (where a triangle's mask, x, else 0) and diag: of
        a matrix its diagonal (gathered), of a vector the matrix with it on the diagonal (the
        table's index_update of flat zeros at those positions, gathered as a square)."""
        line = e.span.line
        if name != "diag":
            mask = self.low.plain(f"np.{name}(np.ones(np.shape({x})[-2:]), {k!r})", None, line, 2)     # 1.0 in it
            return self.apply("where", [mask, x, 0.0], line, target)
        if ndim not in (1, 2):
            self.refuse("diag of a value whose rank is unknown here" if ndim is None else "diag of other than a vector "
                        "or a matrix", e.span, "write diagonal(A, k) for a matrix's diagonal")
        if ndim == 2:
            return self.gathered(x, f"np.diagonal({positions_of(x)}, {k!r})", line, target)
        side = self.low.plain(f"np.size({x}) + {abs(k)!r}", None, line)
        square = self.low.plain(f"np.arange(np.square({side})).reshape({side}, {side})", None, line)
        zeros = self.low.plain(f"np.zeros(np.square({side}))", None, line)
        at = self.low.plain(f"np.diagonal({square}, {k!r})", None, line)
        placed = self.low.apply("index_update", [zeros, x, at], line, None)
        return self.gathered(placed, square, line, target)

    def squeeze(self, x, axis, e, target):
        """core/library/shapes.py's squeeze (x less its axes of length 1, those of `axis`, which
        numpy requires to be 1) as core/library/axes.py's gathered: a getitem of the flattened x at
        numpy's squeeze of an array of x's positions, made where the line runs."""
        text = f"np.squeeze({positions_of(x)}" + ("" if axis is None else f", {axis!r}") + ")"
        return self.gathered(x, text, e.span.line, target)

    def diagonal(self, x, params, e, target, summed):
        """core/library/shapes.py's diagonal (a getitem of the flattened x at the positions numpy's
        diagonal takes of an array of x's positions, made where the line runs) and trace (their
        sum over the diagonal's axis, put first so that it is axis 0 at every rank)."""
        line = e.span.line
        offset, axis1, axis2 = (list(params) + [None] * 3)[:3]
        spec = f"{offset or 0!r}, {0 if axis1 is None else axis1!r}, {1 if axis2 is None else axis2!r}"
        text = f"np.diagonal({positions_of(x)}, {spec})"
        taken = self.gathered(x, f"np.moveaxis({text}, -1, 0)" if summed else text, line, None if summed else target)
        return self.reduce("sum", taken, 0, line, target) if summed else taken

    def gathered(self, x, positions, line, target):
        return gathered(self.low, x, positions, line, target)

    def clip(self, x, bounds, e, target):
        """core/library/elementwise.py's clip: x where it is within the bounds, else the bound."""
        line, out = e.span.line, x
        for bound, test in zip(bounds, ("lt", "gt")):
            if bound is not None:
                out = self.apply("where", [self.apply(test, [out, bound], line, None), bound, out], line, None)
        return self.low.expr_named(out, target, line) if target is not None else out

    def concatenate(self, args, e, target, rank):
        """core/library/shapes.py's concatenate: the table's entry of the arrays written in the call
        (a tuple or list of them), its axis given (None: each flattened first)."""
        if not args or not isinstance(args[0], (nodes.TupleExpr, nodes.ListExpr)) or not args[0].elts:
            self.refuse("concatenate of other than a tuple or list of arrays written in the call", e.span,
                        "write the arrays in the call: concatenate((a, b))")
        line = e.span.line
        items = [self.low.value(v, None) for v in args[0].elts]
        axis = literal_value(args[1], self.refuse, "the axis of concatenate") if len(args) > 1 else 0
        if axis is None:
            items, axis = [self.low.apply("reshape", [v, (-1,)], line, None) for v in items], 0
        if axis.__class__ is not int:
            self.refuse("concatenate with an axis that is not one whole number", e.span)
        axis = self.from_the_end("concatenate", axis, items, rank, e, 0)
        return self.low.apply(Bound(primitive("concatenate"), len(items), axis=axis), items, line, target)

    def from_the_end(self, name, axis, items, rank, e, added):
        """A negative axis counted from the end of the items' rank (plus the axes `added`: stack's
        new one), refused where no item's rank is known here."""
        if axis >= 0:
            return axis
        ranks = {rank(v) for v in items if v.__class__ is str} - {None}
        if not ranks:
            self.refuse(f"{name} along the axis {axis} of arrays whose rank is unknown here", e.span,
                        "write the axis as a number from 0")
        return axis + max(ranks) + added

    def solve_triangular(self, args, e, target, rank):
        """core/library/solvers.py's solve_triangular: the table's solve of the triangle of `a` it
        reads (a times the triangle of ones, ones on its diagonal where unit_diagonal), transposed
        for trans 1, 2, 'T' or 'C'; trans, lower and unit_diagonal written in the call."""
        line = e.span.line
        if len(args) < 2:
            self.refuse("solve_triangular with other than two arrays", e.span)
        a, b = (self.low.value(v, None) for v in args[:2])
        trans, lower, unit = (literal_value(v, self.refuse, f"the {k} of solve_triangular") for v, k in
                              zip((list(args[2:5]) + [None] * 3)[:3], ("trans", "lower", "unit_diagonal")))
        if trans not in (None, 0, 1, 2, "N", "T", "C", "n", "t", "c"):
            self.refuse(f"solve_triangular with trans={trans!r}", e.span, "write trans as 0, 1, 2, 'N', 'T' or 'C'")
        side = "tril" if lower else "triu"
        mask = self.low.plain(f"np.{side}(np.ones(np.shape({a})){', ' + str(-1 if lower else 1) if unit else ''})", None, line)
        t = self.low.apply("mul", [a, mask], line, None)
        if unit:
            t = self.low.apply("add", [t, self.low.plain(f"np.eye(np.shape({a})[-1])", None, line)], line, None)
        if trans not in (None, 0, "N", "n"):
            t = self.low.apply("transpose", [t], line, None)
        return self.low.apply("solve", [t, b], line, target)

    def stack(self, args, e, target, rank):
        """core/library/shapes.py's stack: each array given an axis of length 1 there (expand_dims),
        then concatenated along it."""
        if not args or not isinstance(args[0], (nodes.TupleExpr, nodes.ListExpr)) or not args[0].elts:
            self.refuse("stack of other than a tuple or list of arrays written in the call", e.span,
                        "write the arrays in the call: stack((a, b))")
        items = [self.low.value(v, None) for v in args[0].elts]
        axis = literal_value(args[1], self.refuse, "the axis of stack") if len(args) > 1 else 0
        if axis.__class__ is not int:
            self.refuse("stack with an axis that is not one whole number", e.span)
        return self.stacked(items, self.from_the_end("stack", axis, items, rank, e, 1), e.span.line, target)

    def stacked(self, items, axis, line, target):
        """The items (names or numbers) stacked along a new axis: a list of values written out
        (`[r * cos(t), r * sin(t)]`, numpy's array of them) and stack's."""
        rows = [self.low.apply("expand_dims", [v, axis], line, None) if v.__class__ is str else
                self.low.plain(f"np.array([{v!r}])", None, line) for v in items]     # a number: a constant
        return self.low.apply(Bound(primitive("concatenate"), len(rows), axis=axis), rows, line, target)

    def split(self, args, e, target, rank):
        """core/library/shapes.py's split: each part the table's getitem of the flattened array at
        its positions, numpy's own split of an array of the positions (so numpy's errors are its:
        sections that do not divide the axis); the tuple of the parts, each keeping its derivative
        where it is taken apart as it is made (`a, b = split(x, 2)`, `split(x, 2)[0]`)."""
        line = e.span.line
        given = args[1] if len(args) > 1 else None
        if isinstance(given, nodes.ListExpr):           # split(x, [2, 5]): the indices as a tuple
            given = nodes.TupleExpr(given.elts, given.span)
        sections = literal_value(given, self.refuse, "the sections of split")
        axis = literal_value(args[2], self.refuse, "the axis of split") if len(args) > 2 and args[2] is not None else 0
        if sections.__class__ is tuple and all(i.__class__ is int for i in sections):
            count = len(sections) + 1
        elif sections.__class__ is int and sections > 0:
            count = sections
        else:
            self.refuse("split into other than a number of sections or a tuple of indices written as whole numbers",
                        e.span, "write split(x, 4) or split(x, (2, 5))")
        if axis.__class__ is not int:
            self.refuse("split with an axis that is not one whole number", e.span)
        x = self.low.value(args[0], None)
        positions = self.low.plain(f"np.split({positions_of(x)}, {sections!r}, {axis})", None, line)
        flat = self.low.apply("reshape", [x, (-1,)], line, None)
        parts = [self.low.apply("getitem", [flat, self.low.plain(f"{positions}[{k}]", None, line)], line, None)
                 for k in range(count)]
        return self.low.parts_of(parts, line, e.span, target)

    def dot(self, a, b, rank, e, target):
        """numpy's dot (core/library/linalg.py's): a product where either is a number, matmul where
        b has at most two axes; the ranks are the point's (of parameters)."""
        ranks = [0 if v.__class__ is not str else rank(v) for v in (a, b)]
        if None in ranks:
            self.refuse("dot of a value whose rank is unknown here", e.span, "write a @ b (or a * b for numbers)")
        if 0 in ranks:
            return self.low.apply("mul", [a, b], e.span.line, target)
        if ranks[1] > 2:
            self.refuse("dot of an array of more than two axes", e.span)
        return self.low.apply("matmul", [a, b], e.span.line, target)

    def axis(self, axis, ndim, e):
        """One axis, not negative (the table's reductions take such), or None."""
        if axis is None:
            return None
        if axis.__class__ is tuple:
            if ndim is not None and sorted(a % ndim for a in axis) == list(range(ndim)):
                return None
            self.refuse("a reduction over several axes", e.span, "reduce one axis at a time")
        if axis < 0:
            if ndim is None:
                self.refuse(f"the axis {axis} of a value whose rank is unknown here", e.span,
                            "write the axis as a number from 0")
            axis += ndim
        return axis

    def logsumexp(self, x, axis, keepdims, rank, e, target):
        """core/library/reductions.py's logsumexp: log(sum(exp(x - shift))) + shift, the shift numpy's
        largest element over the axis (0 where it is not finite), a constant of the sweep as it is a
        constant to the engine's AD; keepdims puts the reduced axes back, as sum's."""
        line = e.span.line
        one = self.axis(axis[0] if axis.__class__ is tuple and len(axis) == 1 else axis, rank(x), e)
        top = self.low.plain(f"np.max({x}, axis={one!r}, keepdims=True)", None, line)
        shift = self.low.plain(f"np.where(np.isfinite({top}), {top}, 0.0)", None, line)
        summed = self.reduce("sum", self.apply("exp", [self.apply("sub", [x, shift], line, None)], line, None), one, line)
        back = self.low.plain(f"np.reshape({shift}, np.shape({summed}))", None, line)
        out = self.apply("add", [self.apply("log", [summed], line, None), back], line, None if keepdims else target)
        if not keepdims:
            return out
        return self.low.put_back(out, self.low.reduced_axes("logsumexp", x, one, True, e), line, target)

    def reduce(self, name, x, axis, line, target=None):
        return self.low.apply(name, [x] if axis is None else [x, axis], line, target, f"np.{name}")

    def norm(self, x, order, axis, ndim, e, target):
        """core/library/linalg.py's norm: a matrix norm over two axes (or ord given for a matrix),
        else a vector norm."""
        if axis is None and order.__class__ is str:        # 'fro', 'nuc': a matrix's
            axis = (0, 1)
        if axis is None and order is not None and ndim is None:
            self.refuse("norm with `ord` of a value whose rank is unknown here", e.span,
                        "give the axes: norm(x, ord, axis=0) for a vector, norm(A, ord, axis=(0, 1)) for a matrix")
        if axis is None and order is not None and ndim == 2:
            axis = (0, 1)
        if axis.__class__ is tuple and len(axis) == 2:
            return self.matrix_norm(x, order, tuple(self.axis(a, ndim, e) for a in axis), e, target, ndim)
        if axis.__class__ is tuple:
            axis = self.axis(axis, ndim, e) if len(axis) != 1 else self.axis(axis[0], ndim, e)
        return self.vector_norm(x, order, self.axis(axis, ndim, e), e, target)

    def vector_norm(self, x, order, axis, e, target):
        line, apply = e.span.line, self.apply
        if order is None or order == 2:
            if axis is None:            # the primal as numpy's (its derivative the table's norm)
                return self.low.apply("norm", [x], line, target, "np.linalg.norm")
            return apply("sqrt", [self.reduce("sum", apply("mul", [x, x], line, None), axis, line)], line, target)
        if order == 0:      # a count of the non-zero elements: no derivative
            mask = apply("mul", [apply("ne", [x, 0.0], line, None), 1.0], line, None)
            return self.reduce("sum", mask, axis, line, target)
        size = apply("abs", [x], line, None)
        if order in (math.inf, -math.inf):
            return self.reduce("max" if order > 0 else "min", size, axis, line, target)
        if order == 1:
            return self.reduce("sum", size, axis, line, target)
        if order.__class__ not in (int, float):
            self.refuse(f"norm with ord={order!r} of a vector", e.span)
        powered = self.reduce("sum", apply("pow", [size, float(order)], line, None), axis, line)
        return apply("pow", [powered, 1.0 / float(order)], line, target)

    def matrix_norm(self, x, order, axes, e, target, ndim):
        rows, cols = axes
        line, apply = e.span.line, self.apply
        if order in (None, "fro"):
            squares = apply("mul", [x, x], line, None)
            inner = self.reduce("sum", squares, max(rows, cols), line)
            return apply("sqrt", [self.reduce("sum", inner, min(rows, cols), line)], line, target)
        if order in (1, -1):
            sums = self.reduce("sum", apply("abs", [x], line, None), rows, line)
            return self.reduce("max" if order == 1 else "min", sums, cols - (cols > rows), line, target)
        if order in (math.inf, -math.inf):
            sums = self.reduce("sum", apply("abs", [x], line, None), cols, line)
            return self.reduce("max" if order > 0 else "min", sums, rows - (rows > cols), line, target)
        if order in ("nuc", 2, -2) and ndim == 2:      # of the singular values (the matrix's own axes)
            values = self.apply("singular_values", [x], line, None)
            return self.reduce({"nuc": "sum", 2: "max", -2: "min"}[order], values, None, line, target)
        self.refuse(f"norm with ord={order!r} of a matrix" + (" of a rank other than 2" if ndim else
                    " whose rank is unknown here"), e.span, "differentiate it with `autodiff grad` instead")


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Bound:
    """A table entry with its keyword parameters given (einsum's subscripts): its forward and
    rules those of the entry at them, its other facts the entry's (what the IR's Prim holds)."""

    def __init__(self, entry, arity, **params):
        self.entry, self.params, self.arity, self.reads = entry, params, arity, None
        self.impl = functools.partial(entry.impl, **params)
        self.generic_vjps = tuple(functools.partial(entry.generic_vjps[i], **params) for i in range(arity))
        self.jvps = tuple(functools.partial(entry.jvps[i], **params) for i in range(arity))

    def __getattr__(self, name):
        return getattr(self.entry, name)


class Products:
    """core/library/linalg.py's einsum and tensordot for one Forms: each an einsum of the table
    (its subscripts given, its rules the table's einsum rules)."""

    def __init__(self, forms):
        self.forms, self.low, self.refuse = forms, forms.low, forms.refuse

    def call(self, name, args, e, target, rank):
        if name == "einsum":
            if not args or not isinstance(args[0], nodes.Str):
                self.refuse("einsum whose subscripts are not a string written in the call", e.span,
                            "write einsum('ij,jk->ik', a, b)")
            operands = [self.low.value(a, None) for a in args[1:]]
            return self.einsum(args[0].value, operands, e, target)
        operands = [self.low.value(a, None) for a in args[:2]]
        ranks = [0 if v.__class__ is not str else rank(v) for v in operands]
        if None in ranks:
            self.refuse(f"{name} of a value whose rank is unknown here (emit knows the ranks of the emitted "
                        "function's parameters, from --at)", e.span, "write einsum(...) with its subscripts")
        axes = 2 if len(args) < 3 or args[2] is None else self.axes(args[2], e)
        return self.tensordot(operands, ranks, axes, e, target)

    def einsum(self, spec, operands, e, target):
        spec = spec.replace(" ", "")
        if "..." in spec:
            self.refuse("einsum with '...'", e.span, "write each axis with a letter")
        inputs, arrow, output = spec.partition("->")
        if not arrow:           # numpy's implicit output: the letters written once, in order
            output = "".join(sorted(c for c in set(inputs) if c.isalpha() and inputs.count(c) == 1))
        if len(inputs.split(",")) != len(operands):
            self.refuse(f"einsum with {len(inputs.split(','))} subscripts for {len(operands)} operands", e.span)
        if any(len(set(part)) != len(part) for part in inputs.split(",")):
            self.refuse("einsum with a letter repeated in one operand's subscripts (a diagonal)", e.span,
                        "take the diagonal first: einsum('i,i->', diagonal(A), v) for einsum('ii,i->', A, v)")
        entry = Bound(primitive("einsum"), len(operands), subscripts=f"{inputs}->{output}")
        return self.low.apply(entry, operands, e.span.line, target)

    def axes(self, node, e):
        """tensordot's axes: a whole number, or two lists (tuples) of axes."""
        def value(n):
            if isinstance(n, (nodes.ListExpr, nodes.TupleExpr)):
                return tuple(value(v) for v in n.elts)
            return literal_value(n, self.refuse, "the axes of tensordot")
        axes = value(node)
        if axes.__class__ is int or (axes.__class__ is tuple and len(axes) == 2):
            return axes
        self.refuse("tensordot's axes other than a number or two lists of axes", node.span)

    def tensordot(self, operands, ranks, axes, e, target):
        """numpy's tensordot as the einsum of its contraction: a's free axes, then b's."""
        ra, rb = ranks
        if axes.__class__ is int:
            left, right = list(range(ra - axes, ra)), list(range(axes))
        else:
            left, right = ([a] if a.__class__ is int else list(a) for a in axes)
        left, right = [a % ra for a in left], [b % rb for b in right]
        a = LETTERS[:ra]
        b = [LETTERS[ra + j] for j in range(rb)]
        for i, j in zip(left, right):
            b[j] = a[i]
        output = "".join(c for i, c in enumerate(a) if i not in left) + \
            "".join(c for j, c in enumerate(b) if j not in right)
        return self.einsum(f"{a},{''.join(b)}->{output}", operands, e, target)
