"""A function of the language as three-address statements (the IR `autodiff emit` writes its
sweeps from): each primitive applied once, to names or numbers, its result named (the source's
name where the source names it); control flow kept as it is written (if, while, for over a
range), helpers called by name; a `return` that ends one branch takes the rest of its block into
the other (so every function has one exit, its result in `_out`). Arrays: indexing is the table's
getitem (an index a whole number, a name or a slice of numbers; names among several indices
with a slice, `x[i, :]`, a getitem of the flattened x at numpy's positions of those items, as
core/library/axes.py's gathered), item assignment its index_update, `for v in A` (enumerate, zip, targets that unpack: emit/iteration.py) a loop over
range(len(A)) with v = A[i], a comprehension a loop of index_update (several `for` clauses: the
comprehension of comprehensions, its first two axes made one), sum/mean/max/min (with an axis,
axes, keepdims) the table's reductions written as numpy's functions, a list of numbers an np.array
constant; methods, keywords, prod, norm, dot... as emit/builtin_forms.py writes them; var, std,
pinv, kron, np.fft's transforms... the library's entries as it applies them (emit/library_calls.py); a
tuple built or taken apart Python's text (Packed: no derivative through it), `grad(h)(x)` a call
of h's gradient helper (Derivative, emit/derivatives.py). What the IR has no form for yet is
refused with the construct and its line (`refuse`)."""
from __future__ import annotations

from ...parser import nodes
from ...parser.errors import SourceError
from ..core.backend import np
from ..core.rules import builtin_primitives
from ..lang.builtins import CONSTANTS as LANGUAGE_CONSTANTS
from ..lang.operator_closures import BINARY_OPS
from ..lang.operator_closures import COMPARISONS as COMPARE_OPS
from .ir import (Call, Copy, Derivative, For, Function, If, Jump, Opaque, Packed, Plain, Prim, While, jumps,
                 literal, refuse)
from .iteration import Iteration, is_range, names_read, pattern_names
from .builtin_forms import (Forms, as_builtin_call, attribute, gathered, kink_spelling, literal_value, positional,
                            positions_of, takes_whole)
from .builtin_ways import BY_WAY, first_spelling, numpy_spelling, refused_reason, way_of
from .fft_forms import FftForms
from .library_calls import LibraryCall
from .rule_text import primitive

# the table entry of each operator and comparison, as the language applies them
OPERATORS = {op: fn.primitive.name for op, fn in BINARY_OPS.items()}
COMPARISONS = {op: fn.primitive.name for op, fn in COMPARE_OPS.items()}
CONSTANTS = {name: f"np.{name}" for name in LANGUAGE_CONSTANTS}
OUT = "_out"
DERIVATIVES = BY_WAY["derivative"]      # the in-program derivatives emit writes (emit/derivatives.py)
DIRECTIONAL = BY_WAY["directional"]     # and the calls jvp(h, x, v), vjp(h, x, v)


def elementwise_builtins() -> dict:
    table = {}
    for prim in builtin_primitives():
        for name in filter(None, (prim.builtin, prim.alias)):
            table[name] = prim
    return table


class Lowering(Iteration):
    """One function's statements as IR; `helpers` are the program's functions by name."""

    def __init__(self, helpers: dict, global_names: set, closures: dict | None = None, ranks: dict | None = None,
                 shapes: dict | None = None, constants: dict | None = None, complex_run: bool = False):
        self.helpers, self.global_names = helpers, global_names
        self.complex_run = complex_run      # complex values in the run: the library composites traced at complex stand-ins (var: |c|²)
        self.constants = constants or {}    # a top-level constant's rank (emit/module.py's constant_ranks)
        self.ranks = ranks or {}            # a parameter's rank at the point given (--at), where known
        self.shapes = shapes or {}          # and its shape (kron's result is reshaped at its operands' shapes)
        self.fixed_shapes: dict = {}
        self.point_shapes = False           # a library composite's entries hold at the point's shapes only
        self.closures = closures or {}      # a closure's name -> (its lifted helper, the names it captures)
        self.builtins = elementwise_builtins()
        self.count = 0
        self.temps: set = set()
        self.whole = False          # lowering an index: its whole numbers are ints
        self.local_names: set = set()       # the function's parameters and the names it binds (not constants)
        self.renames: dict = {}             # a comprehension's variable -> the name it is given
        self.derived: dict = {}             # `g = grad(h)`: g -> (kind, h, argnum)
        self.tuples: dict = {}              # a name bound to a tuple -> the derivative that made it, or ""
        self.parts: dict = {}               # a temporary bound to a tuple whose items are named here -> them
        self.params: list = []              # the parameters of the function lowered
        self.fixed_ranks: dict = {}         # a parameter's rank at the point, where it is never rebound
        self.known: dict = {}               # a name's rank where the function's straight-line code gives it
        self.bound_temps: set = set()       # the temporaries bound (a rank is a temporary's where bound once)

    def fresh(self) -> str:
        self.count += 1
        name = f"_v{self.count}"
        self.temps.add(name)
        return name

    def function(self, node, own_defaults=True) -> Function:
        """`own_defaults`: the emitted function keeps its defaulted parameters' defaults (numbers);
        a helper's are passed at its calls (`defaults_of`), so its def has none."""
        self.local_names = set(node.params) | bound_names(node.body)
        self.params = list(node.params)
        self.fixed_ranks = {p: r for p, r in self.ranks.items() if p in node.params and p not in bound_names(node.body)}
        self.fixed_ranks.update({g: r for g, r in self.constants.items() if g not in self.local_names})
        self.fixed_shapes = {p: s for p, s in self.shapes.items() if p in self.fixed_ranks}
        self.known = {p: r for p, r in self.ranks.items() if p in node.params}
        body = self.block(list(node.body))
        defaulted = node.params[len(node.params) - len(node.defaults):]
        defaults = {p: default_value(d) for p, d in zip(defaulted, node.defaults)} if own_defaults else {}
        return Function(node.name, list(node.params), body, self.temps, defaults, self.point_shapes)

    def block(self, stmts: list) -> list:
        out: list = []
        for k, s in enumerate(stmts):
            if isinstance(s, nodes.If) and exits_somewhere(s) and not always_returns(s):
                rest = stmts[k + 1:]
                body = list(s.body) + ([] if always_returns_block(s.body) else rest)
                orelse = list(s.orelse) + ([] if always_returns_block(s.orelse) else rest)
                out += self.statement(nodes.If(s.test, tuple(body), tuple(orelse), s.span))
                return out
            out += self.statement(s)
            if isinstance(s, EXITS) or (isinstance(s, nodes.If) and always_returns(s)):
                return out
        return out

    def statement(self, s) -> list:
        saved = getattr(self, "out", None)
        self.out: list = []
        if isinstance(s, (nodes.If, nodes.While, nodes.For)):       # what they bind: of no one rank here
            for name in bound_names(s.body) | bound_names(getattr(s, "orelse", ())) | bound_names((s,)):
                self.known.pop(name, None)
        try:
            self.lowered(s)
            self.track(self.out)
            return self.out
        finally:
            self.out = saved

    def rank(self, x):
        """x's rank where it is one at every run: a parameter's at the point (--at), a value's made
        from those after it is bound (`L = tril(L)`, `d = x[i] - x[j]` in a loop's body; a name a
        branch or a loop binds has none where the branch or loop may or may not have bound it), which
        the emitted function's check of its inputs' ranks makes hold; else None."""
        if x.__class__ is not str:
            return 0 if isinstance(x, (int, float, complex)) else None
        return self.fixed_ranks.get(x, self.known.get(x))

    def temp_rank(self, target, rank) -> None:
        """A temporary's rank, `rank()`, where it is bound once (an if expression's, a loop's
        accumulator's, bound twice, has none)."""
        if target not in self.temps:
            return
        self.known[target] = rank() if target not in self.bound_temps else None
        self.bound_temps.add(target)

    def track(self, out) -> None:
        """The ranks of the names one statement binds, in order: a primitive's (rank_of), a copy's
        its source's; a name bound in a branch or a loop has none after it, one bound by anything
        else none."""
        for s in out:
            target = getattr(s, "target", None)
            if hasattr(s, "body"):
                for name in bound_ir(s):
                    self.known.pop(name, None)
            elif target in self.temps:          # bound as made (temp_rank)
                continue
            elif isinstance(s, Prim):
                self.known[s.target] = rank_of(s.prim, [self.rank(v) for v in s.operands], s.operands)
            elif isinstance(s, Copy):
                self.known[s.target] = None if s.source.__class__ is str and s.source == s.target else self.rank(s.source)
            elif target is not None:
                self.known.pop(target, None)

    def lowered(self, s) -> None:
        line = s.span.line
        if isinstance(s, nodes.Assign):
            self.assign(s, line)
        elif isinstance(s, nodes.AugAssign):
            value = nodes.BinChain((s.target, s.value), (s.op,), (s.op_span,), s.span)
            self.expr(value, s.target.id)
        elif isinstance(s, nodes.Return):
            if s.value is None:
                refuse("a return without a value", s.span)
            self.expr(s.value, OUT)
        elif isinstance(s, nodes.ExprStmt):
            self.expr(s.value, OUT)
        elif isinstance(s, nodes.SubscriptAssign):
            self.item_assignment(s, line)
        elif isinstance(s, nodes.Pass):
            pass
        elif isinstance(s, (nodes.Break, nodes.Continue)):
            self.out.append(Jump("break" if isinstance(s, nodes.Break) else "continue", line))
        elif isinstance(s, nodes.If):
            test = self.expr(s.test)
            self.out.append(If(test, self.block(list(s.body)), self.block(list(s.orelse)), line))
        elif isinstance(s, nodes.While):
            self.loop_while(s, line)
        elif isinstance(s, nodes.For):
            self.loop_for(s, line)
        else:
            refuse(f"{describe(s)}", s.span)

    def loop_while(self, s, line) -> None:
        check_loop_body(s.body)
        saved = self.out
        self.out = []
        test = self.expr(s.test)
        head = self.out
        self.out = saved
        self.out.append(While(head, test, self.block(list(s.body)), line))

    def loop_for(self, s, line) -> None:
        check_loop_body(s.body)
        it = s.iter
        if isinstance(s.target, nodes.Name) and is_range(it):
            bounds = [self.whole_value(a) for a in it.args]
            self.known[s.target.id] = 0         # a whole number in its body
            self.out.append(For(s.target.id, bounds, self.block(list(s.body)), line))
            return
        self.loop_items(s, line)     # an array's rows, enumerate, zip; a target that unpacks

    def item_assignment(self, s, line) -> None:
        """`x[i] = v`, `x[i] += v`: x rebound to the table's index_update of it (a copy with the
        items set, the language's value semantics); the x it overwrites is pushed for the
        reverse sweep where a rule reads it, as any reassigned name."""
        t = s.target
        if not isinstance(t.value, nodes.Name):
            refuse("an item assignment into anything but a name", s.span)
        name = t.value.id
        parts = [self.index_part(p) for p in t.index]
        heads = []              # x[i, j] = v of whole numbers: x[i] with its item j set, set in x
        if len(parts) > 1 and any(p.__class__ is str for p in parts):
            if not self.numbers_only(parts):
                return self.gathered_update(name, parts, s, line)
            heads, parts = parts[:-1], parts[-1:]
        rows = [name]
        for p in heads:
            rows.append(self.apply("getitem", [rows[-1], p], line, None))
        index = parts[0] if len(parts) == 1 else tuple(parts)
        value = self.value(s.value, None)
        if s.op is not None:
            old = self.apply("getitem", [rows[-1], index], line, None)
            value = self.apply(OPERATORS[s.op] if s.op != "**" else "pow", [old, value], line, None)
        for k in range(len(rows) - 1, -1, -1):
            value = self.apply("index_update", [rows[k], value, index], line, name if k == 0 else None)
            index = heads[k - 1] if k else index

    def gathered_update(self, name, parts, s, line) -> None:
        """`x[i, :] = v` (a name among several indices with a slice): the table's index_update of the
        flattened x at numpy's positions of those items (as subscript takes them), x then the
        flattened one gathered at all of x's positions (its shape again)."""
        every = self.plain(positions_of(name), None, line)
        at = self.plain(f"{every}[{index_text(parts)}]", None, line)
        flat = self.apply("reshape", [name, (-1,)], line, None)
        value = self.value(s.value, None)
        if s.op is not None:
            old = self.apply("getitem", [flat, at], line, None)
            value = self.apply(OPERATORS[s.op] if s.op != "**" else "pow", [old, value], line, None)
        flat = self.apply("index_update", [flat, value, at], line, None)
        self.apply("getitem", [flat, every], line, name)

    def assign(self, s, line) -> None:
        if not s.unpack and derivative_maker(s.value):
            self.derived[s.targets[0].id] = self.derivative_of(s.value)     # `g = grad(h)`: its calls are h's gradient
            return
        if not s.unpack:
            self.expr(s.value, s.targets[0].id)
            return
        made = self.made_by(s.value)
        if made is not None and made[0] == "value_and_grad" and len(s.targets) == 2:
            self.value_and_grad(made, s)
            return
        if self.is_directional(s.value) and len(s.targets) == 2:
            self.directional_pair(s)
            return
        if not isinstance(s.value, nodes.TupleExpr):
            whole = self.value(s.value, None)
            # `a, b = r`, r a tuple made here or a parameter whose rank the point does not give (a
            # rule's residuals): its items as Python takes them apart, no derivative through them
            if whole in self.parts and len(self.parts[whole]) == len(s.targets):     # slogdet's: its items
                for t, v in zip(s.targets, self.parts[whole]):
                    self.out.append(Copy(t.id, v, line))
                return
            if whole in self.tuples or (whole in self.params and whole not in self.ranks):
                for k, t in enumerate(s.targets):
                    self.out.append(Packed(t.id, f"{literal(whole)}[{k}]", line, [whole], "a tuple", s.span,
                                           self.tuples.get(whole, "")))
                return
            self.bind(nodes.TupleExpr(tuple(s.targets), s.span), whole, line)   # `a, b = row`: its items by getitem
            return
        if len(s.value.elts) != len(s.targets):
            refuse("unpacking anything but a tuple written out", s.span)
        values = [self.expr(v) for v in s.value.elts]     # all read before any is bound
        for t, v in zip(s.targets, values):
            self.out.append(Copy(t.id, v, line))

    # ---- expressions: each returns the name (or number) of its value ----
    def expr(self, e, target: str | None = None):
        value = self.value(e, target)
        if target is not None and value != target:
            self.out.append(Copy(target, value, e.span.line))
            self.temp_rank(target, lambda: self.rank(value))
            return target
        return value

    def value(self, e, target):
        line = e.span.line
        if isinstance(e, nodes.Num):
            return int(e.value) if self.whole and is_whole(e.value) else e.value
        if isinstance(e, nodes.Bool):
            return bool(e.value)
        if isinstance(e, nodes.Name):
            return self.name(e)
        if isinstance(e, nodes.UnaryOp):
            x = self.value(e.operand, None)
            return x if e.op == "+" else self.apply("neg", [x], line, target)
        if isinstance(e, nodes.BinChain):
            left = self.value(e.operands[0], None)
            for k, (op, operand) in enumerate(zip(e.ops, e.operands[1:])):
                last = k == len(e.ops) - 1
                left = self.apply(OPERATORS[op], [left, self.value(operand, None)], line, target if last else None)
            return left
        if isinstance(e, nodes.Power):
            return self.apply("pow", [self.value(e.base, None), self.value(e.exponent, None)], line, target)
        if isinstance(e, nodes.Compare):
            return self.compare(e, target)
        if isinstance(e, (nodes.BoolOp, nodes.Not)):
            return self.truth(e, target)
        if isinstance(e, nodes.IfExp):
            return self.if_expression(e, target)
        if isinstance(e, nodes.Call):
            if isinstance(e.func, nodes.Attribute):
                return self.value(as_builtin_call(e, refuse), target)
            return self.call(e, target)
        if isinstance(e, nodes.Attribute) or (isinstance(e, nodes.Subscript) and isinstance(e.value, nodes.Attribute)
                                                 and e.value.attr == "shape"):
            return attribute(self, e, target, refuse)
        if isinstance(e, nodes.Subscript):
            return self.subscript(e, target)
        if isinstance(e, nodes.ListComp) and not e.as_dict and len(e.clauses) == 1 and not e.clauses[0][2]:
            return self.comprehension(e, target)
        if isinstance(e, nodes.TupleExpr):
            return self.tuple_value(e, target)
        if isinstance(e, nodes.ListComp) and not e.as_dict and any(c[2] for c in e.clauses):
            refuse("a comprehension with `if` whose list is not summed", e.span,
                   "sum it (sum([... if ...]), mean(...)), or write where(condition, value, 0.0)")
        if isinstance(e, nodes.ListComp) and not e.as_dict and not any(c[2] for c in e.clauses):
            return self.nested_comprehension(e, target)
        if isinstance(e, nodes.ListComp):
            refuse("a dict comprehension" if e.as_dict else "a comprehension with several `for` clauses and `if`",
                   e.span, "write the loops out with for statements")
        if isinstance(e, nodes.ListExpr) and constant_list(e) is not None:
            return self.plain(f"np.array({constant_list(e)!r})", target, line)
        if isinstance(e, nodes.ListExpr) and e.elts and not any(isinstance(v, nodes.TupleExpr)
                                                                for v in e.elts):
            return Forms(self, refuse).stacked([self.value(v, None) for v in e.elts], 0, line, target)    # numpy's array of them
        refuse(f"{describe(e)}", e.span)

    def tuple_value(self, e, target):
        """`(a, b)`, `(g, None)`: Python's tuple of the items' values (None: a zero cotangent)."""
        items = ["None" if isinstance(x, nodes.NoneLit) else literal(self.value(x, None)) for x in e.elts]
        target = target or self.fresh()
        text = f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        self.out.append(Packed(target, text, e.span.line, [i for i in items if is_name(i)], "a tuple", e.span))
        self.tuples[target] = ""
        return target

    def derivative_of(self, e) -> tuple:
        """(kind, function, argnum) of `grad(h)`, `grad(h, k)`, `value_and_grad(h)`: h a function
        of the program (or a closure), k a whole number."""
        kind = e.func.id
        if e.keywords or not 1 <= len(e.args) <= 2 or not isinstance(e.args[0], nodes.Name):
            refuse(f"{kind}(...) other than {kind}(h) or {kind}(h, k) with h a function's name", e.span)
        argnum = e.args[1] if len(e.args) == 2 else nodes.Num(0.0, e.span)
        if not isinstance(argnum, nodes.Num) or not is_whole(argnum.value):
            refuse(f"{kind} with argnum other than one whole number", e.span, f"write {kind}(h, k), k a number")
        name = e.args[0].id
        if name not in self.helpers and name not in self.closures:
            refuse(f"{kind} of `{name}`, which is not a function of the program", e.span)
        return kind, name, int(argnum.value)

    def made_by(self, e):
        """(kind, function, argnum) where `e` calls an in-program derivative (grad(h)(x), g(x) after
        g = grad(h)), else None."""
        if not isinstance(e, nodes.Call):
            return None
        if isinstance(e.func, nodes.Call) and derivative_maker(e.func):
            return self.derivative_of(e.func)
        return self.derived.get(e.func.id) if isinstance(e.func, nodes.Name) else None

    def value_and_grad(self, made, s) -> None:
        """`v, g = value_and_grad(h)(x)`: v the call h(x) (its derivative h's, first order), g h's
        gradient helper; both read before either is bound."""
        _, name, argnum = made
        e = s.value
        gradient = self.derivative(("grad", name, argnum), e, None)
        value = self.value(nodes.Call(nodes.Name(name, e.span), e.args, e.span, e.keywords), None)
        for t, v in zip(s.targets, (value, gradient)):
            self.out.append(Copy(t.id, v, s.span.line))

    def derivative(self, made, e, target):
        """`grad(h)(x)`: the value of h's emitted gradient helper at the arguments."""
        kind, name, argnum = made
        label = f"{kind}({name})"
        wanted = len(e.args) if name not in self.helpers else len(self.helpers[name].params)
        count = f"{len(e.args)} {'was' if len(e.args) == 1 else 'were'} given"
        if kind == "hessian" and len(e.args) != 1:       # as the language's hessian says it
            raise SourceError("wrong arguments", f"{label} takes 1 argument but {count}", e.span)
        if len(e.args) != wanted:                           # as the language's call of h says it
            raise SourceError("wrong arguments", f"{name}() takes {wanted} argument{'s' * (wanted != 1)} but {count}",
                              e.span)
        args = [self.value(a, None) for a in e.args]
        if e.keywords:
            refuse("a call of a derivative with keywords", e.span)
        if name in self.closures:
            helper, captured = self.closures[name]
            name, args = helper, args + list(captured)
        target = target or self.fresh()
        text = f"{derivative_name(name, kind, argnum)}({', '.join(map(literal, args))})"
        self.out.append(Derivative(target, text, e.span.line, [a for a in args if a.__class__ is str], label,
                                   e.span, name, kind, argnum, list(args)))
        if kind == "value_and_grad":
            self.tuples[target] = label
        return target

    def is_directional(self, e) -> bool:
        return isinstance(e, nodes.Call) and isinstance(e.func, nodes.Name) and e.func.id in DIRECTIONAL \
            and e.func.module in ("", "jax") and e.func.id not in self.helpers and e.func.id not in self.local_names

    def directional_pair(self, s) -> None:
        """`y, t = jvp(h, x, v)`: y the call h(x) (its derivative h's, first order), t the helper's."""
        e = s.value
        pair = self.directional(e, e.func.id, None)
        x = e.args[1].elts[0] if isinstance(e.args[1], nodes.TupleExpr) else e.args[1]
        value = self.value(nodes.Call(e.args[0], (x,), e.span), None)
        self.out.append(Copy(s.targets[0].id, value, s.span.line))
        self.out.append(Packed(s.targets[1].id, f"{pair}[1]", s.span.line, [pair], "a tuple", s.span,
                               f"{e.func.id}({e.args[0].id})"))

    def directional(self, e, kind, target):
        """`jvp(h, x, v)`, `vjp(h, x, v)` (JAX's `jax.jvp(h, (x,), (v,))` too): (h(x), the derivative
        along v), (h(x), vᵀJ): a call of h's helper `h_jvp_along(x, v)`, h a function of one argument."""
        if len(e.args) != 3 or not isinstance(e.args[0], nodes.Name):
            refuse(f"{kind}(...) other than {kind}(h, x, v) with h a function's name", e.span)
        x, v = (a.elts[0] if isinstance(a, nodes.TupleExpr) and len(a.elts) == 1 else a for a in e.args[1:])
        if isinstance(x, nodes.TupleExpr) or isinstance(v, nodes.TupleExpr):
            refuse(f"{kind} of a function of several arguments", e.span, f"write {kind}(h, x, v), h of one argument")
        name = e.args[0].id
        if name not in self.helpers and name not in self.closures:
            refuse(f"{kind} of `{name}`, which is not a function of the program", e.span)
        args = [self.value(x, None)]
        helper, captured = self.closures.get(name, (name, []))
        args = [*args, *captured, self.value(v, None)]
        target = target or self.fresh()
        text = f"{derivative_name(helper, kind, 0)}({', '.join(map(literal, args))})"
        self.out.append(Derivative(target, text, e.span.line, [a for a in args if a.__class__ is str],
                                   f"{kind}({name})", e.span, helper, kind, 0))
        self.tuples[target] = f"{kind}({name})"
        return target

    def comprehension(self, e, target):
        """`[E for v in A]`, `[E for i, v in enumerate(A)]`, over a range or zip: the array of the
        items (numpy's array of the list), built as a loop of the table's index_update into zeros
        of the items' shape, the first item made before the loop (its shape gives the zeros');
        the comprehension's names named apart."""
        (pattern, it, _), line = e.clauses[0], e.span.line
        count, walk = self.walked(it, line)
        restore = self.renamed(pattern)

        def item(index):
            self.bind(pattern, walk(index), line)
            return self.value(e.elt, None)
        try:
            first = item(0)
            acc = target or self.fresh()
            zeros = self.plain(f"np.zeros((int({count}),) + np.shape({first}))", None, line)
            self.apply("index_update", [zeros, first, 0], line, acc)
            saved, self.out = self.out, []
            index = self.fresh()
            self.apply("index_update", [acc, item(index), index], line, acc)
            body, self.out = self.out, saved
        finally:
            restore()
        self.out.append(For(index, [1, count], body, line))
        return acc

    def nested_comprehension(self, e, target):
        """`[E for a in A for b in B]`: numpy's array of the flat list Python makes, the array of
        the comprehension over A of the comprehension over B with its first two axes made one (the
        gathered positions). B may be a (a row of an array: all of one length), else it may not
        read a (the rows could differ in length)."""
        outer = set(pattern_names(e.clauses[0][0]))
        for pattern, it, _ in e.clauses[1:]:
            if outer & names_read(it) and not (isinstance(it, nodes.Name) and it.id in outer):
                refuse("a comprehension whose inner `for` walks what an outer `for` names", it.span,
                       "write the loops out with for statements")
            outer |= set(pattern_names(pattern))
        inner = nodes.ListComp(e.elt, e.clauses[1:], e.span)
        rows = self.comprehension(nodes.ListComp(inner, e.clauses[:1], e.span), None)
        merged = f"{positions_of(rows)}.reshape((-1,) + np.shape({rows})[2:])"
        return gathered(self, rows, merged, e.span.line, target)

    def subscript(self, e, target):
        """`x[i]`, `x[1:]`, `x[i, 2]`: getitem, its index a whole number, a name or a constant slice."""
        value = self.value(e.value, None)
        number = len(e.index) == 1 and (isinstance(e.index[0], nodes.Num) or isinstance(e.index[0], nodes.UnaryOp)
                                        and e.index[0].op == "-" and isinstance(e.index[0].operand, nodes.Num))
        if value in self.parts and number and -len(self.parts[value]) <= self.index_part(e.index[0]) < len(self.parts[value]):
            return self.expr_named(self.parts[value][self.index_part(e.index[0])], target, e.span.line)
        if value in self.tuples and number:
            target = target or self.fresh()         # an item of a tuple: Python's
            self.out.append(Packed(target, f"{value}[{self.index_part(e.index[0])}]", e.span.line, [value],
                                   "a tuple", e.span, self.tuples[value]))
            return target
        parts = [self.index_part(p) for p in e.index]
        if len(parts) > 1 and any(p.__class__ is str for p in parts):
            if all(p.__class__ in (int, str) for p in parts) and not self.numbers_only(parts):
                return self.apply("getitem", [value, tuple(parts)], e.span.line, target)  # x[a, b]: numpy's pairs
            if not self.numbers_only(parts):      # x[i, :]: numpy's of x's positions
                return gathered(self, value, f"{positions_of(value)}[{index_text(parts)}]", e.span.line, target)
            for p in parts[:-1]:        # x[i, j] of whole numbers is x[i][j]
                value = self.apply("getitem", [value, p], e.span.line, None)
            return self.apply("getitem", [value, parts[-1]], e.span.line, target)
        index = parts[0] if len(parts) == 1 else tuple(parts)
        return self.apply("getitem", [value, index], e.span.line, target)

    def numbers_only(self, parts) -> bool:
        """Whether each of several indices is one number (its name's rank 0 at every run), so that
        x[i, j] is x[i][j]; an index array (x[np.arange(n), y]: numpy's pairs of its items), a slice,
        None or a name of no known rank is not (x[a][b] would index x's rows twice)."""
        return all(p.__class__ is not slice and p is not None and (p.__class__ is not str or self.rank(p) == 0)
                   for p in parts)

    def whole_value(self, e):
        """An index's or a range bound's value, its numbers whole (`x[t + 1]`, `range(len(x) - 1)`
        take ints in numpy, whole floats in the language)."""
        saved, self.whole = self.whole, True
        try:
            return self.value(e, None)
        finally:
            self.whole = saved

    def index_part(self, p):
        if isinstance(p, nodes.NoneLit):     # numpy's newaxis
            return None
        if isinstance(p, nodes.Slice):
            bounds = [None if b is None else self.index_part(b) for b in (p.lower, p.upper, p.step)]
            return slice(*bounds)        # a bound a name (x[i:i + 2]): its value where the line runs
        if isinstance(p, nodes.UnaryOp) and p.op == "-" and isinstance(p.operand, nodes.Num):
            return -self.index_part(p.operand)
        if isinstance(p, nodes.Num):
            if float(p.value) != int(p.value):
                refuse(f"the index {p.value!r}", p.span, "index with whole numbers")
            return int(p.value)
        value = self.whole_value(p)
        if value.__class__ is not str:
            refuse("this index", p.span, "index with whole numbers, names or slices of numbers")
        return value

    def name(self, e):
        if e.id in self.renames:
            return self.renames[e.id]
        if e.id in CONSTANTS and e.id not in self.global_names and e.id not in self.local_names:
            return CONSTANTS[e.id]
        return e.id

    def apply(self, prim_name, operands, line, target, spelling=None):
        """`prim_name`: the table entry's name, or an entry with its parameters given (builtin_forms.Bound)."""
        target = target or self.fresh()
        entry = primitive(prim_name) if prim_name.__class__ is str else prim_name
        made = self.fresh() if target in operands else target     # `x = x * 2`: the new value named apart, then bound
        self.out.append(Prim(made, entry, operands, line, spelling))
        self.temp_rank(made, lambda: rank_of(entry, [self.rank(v) for v in operands], operands))
        if made != target:
            self.out.append(Copy(target, made, line))
        return target

    def compare(self, e, target):
        left = self.value(e.left, None)
        parts = []
        for op, right_node in zip(e.ops, e.comparators):
            right = self.value(right_node, None)
            parts.append(self.apply(COMPARISONS[op], [left, right], e.span.line, None))
            left = right
        if len(parts) == 1:
            return self.expr_named(parts[0], target, e.span.line)
        return self.plain(" and ".join(parts), target, e.span.line)

    def expr_named(self, value, target, line):
        if target is not None:
            self.out.append(Copy(target, value, line))
            return target
        return value

    def truth(self, e, target):
        if isinstance(e, nodes.Not):
            return self.plain(f"not {self.value(e.operand, None)}", target, e.span.line)
        parts = [str(self.value(v, None)) for v in e.values]
        return self.plain(f" {e.op} ".join(parts), target, e.span.line)

    def plain(self, text, target, line, rank=None):
        """`rank`: the text's value's rank, where the form that writes it knows it (a mask's)."""
        target = target or self.fresh()
        self.out.append(Plain(target, text, line))
        self.temp_rank(target, lambda: rank)
        return target

    def if_expression(self, e, target):
        target = target or self.fresh()
        test = self.value(e.test, None)
        saved = self.out
        self.out = []
        self.expr(e.body, target)
        body = self.out
        self.out = []
        self.expr(e.orelse, target)
        orelse = self.out
        self.out = saved
        self.out.append(If(test, body, orelse, e.span.line))
        return target

    def call(self, e, target):
        made = self.made_by(e)
        if made is not None:
            return self.derivative(made, e, target)
        if isinstance(e.func, nodes.Call):
            refuse("a call of what a call returns other than grad(h)(x) or value_and_grad(h)(x) (such as "
                   "hessian(h)(x))", e.span, "emit writes grad and value_and_grad inside a program; differentiate "
                   "the others with `autodiff grad`")
        if not isinstance(e.func, nodes.Name):
            refuse("a call of what is not a function's name", e.span)
        name, line = e.func.id, e.span.line
        if self.is_directional(e):
            return self.directional(e, name, target)
        own = name in self.helpers or name in self.closures
        if not own:
            name = first_spelling(name)
        way = "own" if own else way_of(name, self.builtins, e.func.module)      # emit/builtin_ways.py
        if way == "frequencies":
            return FftForms(self, refuse).frequencies(name, positional(e, refuse), e, target)
        if way == "library":
            return LibraryCall(self, refuse).call(name, positional(e, refuse), e, target)
        if way == "form":
            return Forms(self, refuse).call(e, target, self.rank)
        if way == "refused":
            refuse(f"the builtin `{name}`", e.span, refused_reason(name))
        if way == "reduction" and name in ("sum", "mean") and len(e.args) == 1 and not e.keywords and \
                isinstance(e.args[0], nodes.ListComp) and not e.args[0].as_dict and any(c[2] for c in e.args[0].clauses):
            return self.filtered_sum(name, e.args[0], target, OPERATORS["+"], OPERATORS["/"])
        if way == "slogdet" and len(e.args) == 1 and not e.keywords:
            return self.slogdet(e, target)
        arguments = positional(e, refuse) if name not in self.helpers else list(e.args)
        if way == "reduction" and len(arguments) > 1 and \
                (len(arguments) > 2 or arguments[1] is None or isinstance(arguments[1], (nodes.TupleExpr, nodes.NoneLit))):
            axis, keep = (literal_value(a, refuse, f"the {k} of {name}") for a, k in
                          zip(arguments[1:3] + [None] * (3 - len(arguments)), ("axis", "keepdims")))
            return self.reduction_over(name, self.value(arguments[0], None), axis, keep, e, target)
        if e.keywords and (name in self.helpers or name in self.closures or None in arguments):
            refuse(f"a call of `{name}` with keywords", e.span, "pass its arguments by position")
        whole = name not in self.helpers and name not in self.closures and \
            not getattr(self.builtins.get(name), "elementwise", False)      # polygamma's n is an array
        args = [self.whole_value(a) if whole and takes_whole(name, k) else self.value(a, None)
                for k, a in enumerate(arguments)]
        if name in self.closures:
            helper, captured = self.closures[name]
            name, args = helper, args + list(captured)
        if name in self.helpers:
            target = target or self.fresh()
            self.out.append(Call(target, name, args + self.defaults_of(self.helpers[name], len(args), e), line))
            return target
        if way == "cut" and len(args) == 1:
            target = target or self.fresh()
            self.out.append(Copy(target, args[0], line, cut=True))
            return target
        if way == "reduction" and (len(args) == 1 or (len(args) == 2 and is_whole(args[1]))):
            return self.reduction(name, args, line, target)
        prim = self.builtins.get(name)
        if way != "entry" or len(args) != prim.arity:
            return self.opaque(e, name, args, target)
        return self.apply(prim.name, args, line, target, kink_spelling(prim))

    def defaults_of(self, helper, given, e) -> list:
        """The values of the helper's defaulted parameters a call leaves out, as Python takes them
        (at the def: a number, or a constant of the module the function does not rebind)."""
        missing = helper.params[given:]
        defaults = dict(zip(helper.params[len(helper.params) - len(helper.defaults):], helper.defaults))
        values = []
        for p in missing:
            default = defaults.get(p)
            if default is None:
                return []           # too few arguments: the call is refused as the language refuses it
            if not (isinstance(default, nodes.Num) or isinstance(default, nodes.Name) and default.id in
                    self.global_names and default.id not in self.local_names):
                refuse(f"a call that leaves out `{p}`, whose default is not a number or a constant of the module",
                       e.span, f"pass {p} at the call")
            values.append(self.value(default, None))
        return values

    def slogdet(self, e, target):
        """core/library/linalg.py's slogdet: the pair (the sign of det, a constant; the table's
        logabsdet), a tuple whose items keep their derivatives where it is taken apart as it is
        made (`s, l = slogdet(A)`, `slogdet(A)[1]`)."""
        line = e.span.line
        x = self.value(e.args[0], None)
        parts = [self.plain(f"np.sign(np.linalg.det({literal(x)}))", None, line), self.apply("logabsdet", [x], line, None)]
        return self.parts_of(parts, line, e.span, target)

    def parts_of(self, parts, line, span, target):
        """The tuple of `parts` (names made here: slogdet's, split's), whose items keep their
        derivatives where it is taken apart as it is made."""
        made = target or self.fresh()
        self.out.append(Packed(made, f"({', '.join(parts)},)", line, parts, "a tuple", span))
        self.tuples[made] = ""
        if target is None:          # a temporary: bound once, so its items are these
            self.parts[made] = parts
        return made

    def reduction_over(self, name, x, axis, keep, e, target):
        """numpy's sum/mean/max/min(x, axis, keepdims) with a tuple of axes or keepdims: the table's
        reduction over one axis at a time (the last first, so the others keep their numbers), or over
        all of x (max and min: over the axes moved first and made one, so that ties share the
        adjoint as the table's reduction over several axes shares it); keepdims puts each reduced
        axis back (put_back)."""
        line, ndim = e.span.line, self.rank(x)
        axes = self.reduced_axes(name, x, axis, keep, e)
        whole = axes is None or (ndim is not None and len(axes) == ndim)
        steps = [[x]] if whole else [[None, a] for a in sorted(axes, reverse=True)]
        if not whole and len(axes) > 1 and name in ("max", "min"):     # ties share as over all of them at once:
            moved = self.plain(f"np.moveaxis({positions_of(x)}, {tuple(axes)!r}, {tuple(range(len(axes)))!r})", None, line)
            x = gathered(self, x, f"{moved}.reshape((-1,) + np.shape({moved})[{len(axes)}:])", line, None)
            steps = [[None, 0]]             # the axes moved first and made one
        out = x
        for k, step in enumerate(steps):
            last = k == len(steps) - 1 and not keep
            out = self.reduction(name, [out, *step[1:]], line, target if last else None)
        return self.put_back(out, axes, line, target) if keep else out

    def reduced_axes(self, name, x, axis, keep, e):
        """The axes a reduction of x takes, not negative (None: all); a negative axis, or keepdims
        over all axes, needs x's rank: a parameter's at the point."""
        ndim = self.rank(x)
        axes = (axis,) if axis.__class__ is int else axis
        if (axes is None and keep) or any(a < 0 for a in axes or ()):
            if ndim is None:
                refuse(f"`{name}` with keepdims or a negative axis of a value whose rank is unknown here", e.span,
                       "write its axes as numbers from 0: axis=(0, 1)")
            axes = tuple(range(ndim)) if axes is None else tuple(a % ndim for a in axes)
        if axes is not None and len(set(axes)) != len(axes):
            refuse(f"`{name}` over an axis given twice", e.span, "name each axis once")
        return axes

    def put_back(self, out, axes, line, target):
        """keepdims: each reduced axis put back as one of length 1 (expand_dims, the first first)."""
        for k, a in enumerate(sorted(axes)):
            out = self.apply("expand_dims", [out, a], line, target if k == len(axes) - 1 else None)
        return out

    def reduction(self, name, args, line, target):
        """sum(x[, axis]), max, min: the table's, written as numpy's function of that name; mean(x[,
        axis]): that sum over the count it sums, as numpy's mean."""
        args = [args[0], *(int(a) for a in args[1:])]     # the axis: a whole number
        if name != "mean":
            return self.apply(name, args, line, target, f"np.{name}")
        total = self.apply("sum", args, line, None, "np.sum")
        count = f"np.size({args[0]})" if len(args) == 1 else f"np.shape({args[0]})[{args[1]}]"
        return self.apply("div", [total, self.plain(count, None, line)], line, target)

    def opaque(self, e, name, args, target):
        spelling = numpy_spelling(name, e.func.module)
        if spelling is None or e.keywords or (name in ("max", "min") and len(args) != 1):     # numpy's positions
            refuse(f"the builtin `{name}`" + (" with keywords" if e.keywords else ""), e.span)
        text = f"{spelling}({', '.join(map(literal, args))})"
        if name == "len":           # a count: no derivative flows through it
            return self.plain(text, target, e.span.line)
        target = target or self.fresh()
        self.out.append(Opaque(target, text, e.span.line, [a for a in args if a.__class__ is str], name, e.span))
        return target


def default_value(node):
    """A parameter's default, a number (the language's: a float) or True/False/None as written."""
    value = literal_value(node, refuse, "a parameter's default")
    if value.__class__ not in (int, float, bool) and value is not None:
        refuse("a parameter whose default is not a number", node.span, "give it a number as its default")
    return float(value) if value.__class__ is int else value


def rank_of(prim, ranks, operands):
    """The rank of `prim`'s value at operands of those ranks (None: one unknown), by its forward
    on arrays of those ranks, of length 4 and no two elements equal (a number a whole one, so an
    index reads as one); None where that fails (the operands' shapes or values matter there)."""
    if any(r is None for r, v in zip(ranks, operands) if v.__class__ is str):
        return None
    numpy = np()
    stands = [(numpy.arange(4 ** r).reshape((4,) * r) * 0.01 + 0.5 + k if r else numpy.int64(k + 1))
              if v.__class__ is str else v for k, (r, v) in enumerate(zip(ranks, operands))]
    try:
        with numpy.errstate(all="ignore"):
            return int(numpy.ndim(prim.impl(*stands)))
    except (IndexError, ValueError, TypeError, ArithmeticError, AttributeError):
        return None


def bound_ir(s) -> set:
    """The names an IR statement with a body (if, while, for) binds in it."""
    names = {getattr(s, "target", None)} - {None}
    for body in (getattr(s, "body", None), getattr(s, "orelse", None), getattr(s, "head", None)):
        for x in body or ():
            names |= {x.target} if getattr(x, "target", None) is not None and not hasattr(x, "body") else bound_ir(x)
    return names


def derivative_name(function: str, kind: str, argnum: int) -> str:
    """The emitted helper of `kind(function, argnum)`: h_grad, h_value_and_grad, h_grad_1,
    h_jvp_along, h_vjp_along."""
    return f"{function}_{kind}" + (f"_{argnum}" if argnum else "") + ("_along" if kind in DIRECTIONAL else "")


def derivative_maker(e) -> bool:
    """`grad(h)`, `jax.value_and_grad(h, 1)`: a call that makes an in-program derivative emit writes."""
    return isinstance(e, nodes.Call) and isinstance(e.func, nodes.Name) and e.func.id in DERIVATIVES \
        and e.func.module in ("", "jax")


def is_name(text: str) -> bool:
    return text.isidentifier() and text != "None"


def bound_names(body) -> set:
    """The names a block binds (assignments, loop targets), in branches and loops too: a local
    `e` is the program's, not the constant."""
    names: set = set()
    for s in body:
        targets = getattr(s, "targets", None) or [getattr(s, "target", None)]
        for t in targets:
            for n in (t.elts if isinstance(t, nodes.TupleExpr) else (t,)):
                if isinstance(n, nodes.Name):
                    names.add(n.id)
        for inner in ("body", "orelse"):
            if isinstance(getattr(s, inner, None), tuple) and not isinstance(s, nodes.FunctionDef):
                names |= bound_names(getattr(s, inner))
    return names


def index_text(parts) -> str:
    """Python's text of an index: its names as names, slices as a:b:c, None as None."""
    def part(p):
        if p.__class__ is slice:
            bounds = ["" if b is None else literal(b) for b in (p.start, p.stop)]
            return ":".join(bounds) + ("" if p.step is None else f":{literal(p.step)}")
        return "None" if p is None else literal(p)
    return ", ".join(map(part, parts))


def is_whole(v) -> bool:
    return v.__class__ in (int, float) and float(v).is_integer()


def constant_list(e):
    """A list of numbers (nested) as Python's list, or None where an item is not a number."""
    items = []
    for x in e.elts:
        if isinstance(x, nodes.ListExpr):
            inner = constant_list(x)
            if inner is None:
                return None
            items.append(inner)
        elif isinstance(x, nodes.Num):
            items.append(float(x.value))
        elif isinstance(x, nodes.UnaryOp) and x.op == "-" and isinstance(x.operand, nodes.Num):
            items.append(-float(x.operand.value))
        else:
            return None
    return items


def describe(node) -> str:
    return {"Subscript": "indexing", "SubscriptAssign": "an item assignment", "ListComp": "a comprehension",
            "Lambda": "a lambda (closure)", "ListExpr": "a list", "TupleExpr": "a tuple", "Break": "break",
            "Continue": "continue", "Attribute": "a method or attribute", "Str": "a string",
            "FunctionDef": "a nested function (closure)", "Import": "an import",
            "DictExpr": "a dict other than one of parameters bound in the function emitted or a helper",
            "DictComp": "a dict comprehension"}.get(type(node).__name__,
                                                                                     type(node).__name__)


def check_loop_body(body) -> None:
    for s in walk_statements(body):
        if isinstance(s, nodes.Return):
            refuse("`return` inside a loop", s.span, "end the loop with break and return after it")


def walk_statements(body):
    for s in body:
        yield s
        if isinstance(s, nodes.If):
            yield from walk_statements(s.body)
            yield from walk_statements(s.orelse)


EXITS = (nodes.Return, nodes.Break, nodes.Continue)


def exits_somewhere(s) -> bool:
    """A return, break or continue in `s` (a break in a loop nested in it is that loop's)."""
    return any(isinstance(x, EXITS) for x in walk_statements([s]))


def always_returns_block(body) -> bool:
    """Every path through `body` leaves it (return, break or continue)."""
    return any(isinstance(s, EXITS) or (isinstance(s, nodes.If) and always_returns(s)) for s in body)


def always_returns(s) -> bool:
    return always_returns_block(s.body) and always_returns_block(s.orelse)
