"""What a for loop or a comprehension walks, as the IR (emit/lower.py) writes it: a count and the
item at an index. A range's items are its numbers, an array's its rows (the table's getitem),
`enumerate(xs[, start])`'s the pairs (index + start, item), `zip(a, b, ...)`'s the tuples of the
items at one index, as far as the shortest; a target that unpacks (`for i, v in ...`, `for a, b
in rows`) binds each name to its part (a pair's, or an array row's items by getitem, the row
checked to have as many, as Python's unpacking does: numpy's reshape error where not). A
comprehension with `if` is emitted where its list is summed (sum or mean of it): a loop that adds
the items its conditions keep, as numpy sums the list they make."""
from __future__ import annotations

from ...parser import nodes
from .ir import Copy, For, If, Plain, Prim, literal, refuse


def is_call(e, name) -> bool:
    return isinstance(e, nodes.Call) and isinstance(e.func, nodes.Name) and e.func.id == name and not e.keywords


def is_range(e) -> bool:
    return is_call(e, "range") and 1 <= len(e.args) <= 3


def pattern_names(target) -> list:
    if isinstance(target, nodes.Name):
        return [target.id]
    if isinstance(target, nodes.TupleExpr):
        return [n for t in target.elts for n in pattern_names(t)]
    refuse("a loop target that is not a name or names", target.span)


def names_read(node) -> set:
    """The names an expression reads (a comprehension's inner `for` reading an outer one's)."""
    if isinstance(node, nodes.Name):
        return {node.id}
    if isinstance(node, tuple):
        return set().union(*map(names_read, node)) if node else set()
    if isinstance(node, nodes.Node) and not isinstance(node, nodes.Span):
        return names_read(tuple(getattr(node, f) for f in node._fields))
    return set()


class Iteration:
    """A mixin of Lowering: `self` lowers expressions (value, whole_value, plain, apply, fresh)."""

    def walked(self, it, line) -> tuple:
        """(count, item): the number of items `it` walks, and item(index) -> the item there (a
        value, or a list of the values of a pair or tuple)."""
        if is_range(it):
            bounds = [self.whole_value(a) for a in it.args]
            steps = self.plain(f"range({', '.join(map(literal, bounds))})", None, line)
            return self.plain(f"len({steps})", None, line), lambda k: self.plain(f"{steps}[{literal(k)}]", None, line)
        if is_call(it, "enumerate") and 1 <= len(it.args) <= 2:
            count, item = self.walked(it.args[0], line)
            start = self.whole_value(it.args[1]) if len(it.args) == 2 else 0
            if start == 0:
                return count, lambda k: [k, item(k)]
            return count, lambda k: [self.plain(f"{literal(k)} + {literal(start)}", None, line), item(k)]
        if is_call(it, "zip") and it.args:
            walks = [self.walked(a, line) for a in it.args]
            count = walks[0][0] if len(walks) == 1 else \
                self.plain(f"min({', '.join(literal(c) for c, _ in walks)})", None, line)
            return count, lambda k: [item(k) for _, item in walks]
        if isinstance(it, (nodes.Call, nodes.ListExpr, nodes.TupleExpr, nodes.ListComp)) and not isinstance(
                getattr(it, "func", None), nodes.Attribute):
            refuse("a loop over anything but range, enumerate, zip or an array", it.span,
                   "loop over range(len(x)) and index x[i]")
        array = self.value(it, None)
        return self.plain(f"len({array})", None, line), lambda k: self.apply("getitem", [array, k], line, None)

    def bind(self, target, value, line) -> None:
        """The loop target's names bound to the item (unpacked where the target is a tuple)."""
        if isinstance(target, nodes.Name):
            name = self.renames.get(target.id, target.id)
            last = self.out[-1] if self.out else None
            if isinstance(last, (Prim, Plain)) and last.target == value and value in self.temps \
                    and value.__class__ is str:     # the item made just now: named as the source names it
                last.target = name
                return
            self.out.append(Copy(name, value, line))
            return
        if not isinstance(target, nodes.TupleExpr):
            refuse("a loop target that is not a name or names", target.span)
        if not isinstance(value, list):     # an array's items: its first axis must be as long as the names
            n = len(target.elts)
            self.plain(f"np.reshape({literal(value)}, ({n},) + np.shape({literal(value)})[1:])", None, line)
        parts = value if isinstance(value, list) else \
            [self.apply("getitem", [value, j], line, None) for j in range(len(target.elts))]
        if len(parts) != len(target.elts):
            refuse(f"unpacking {len(parts)} values into {len(target.elts)} names", target.span)
        for t, v in zip(target.elts, parts):
            self.bind(t, v, line)

    def loop_items(self, s, line) -> None:
        """`for TARGET in ITER` over anything but a range into one name: a loop over the items'
        indices, the target bound to the item at each."""
        count, item = self.walked(s.iter, line)
        index = self.fresh()
        saved, self.out = self.out, []
        self.bind(s.target, item(index), line)
        binds, self.out = self.out, saved
        self.out.append(For(index, [count], binds + self.block(list(s.body)), line))

    def renamed(self, pattern):
        """The comprehension's names given fresh names (restored by the returned function)."""
        names = pattern_names(pattern)
        before = {n: self.renames.get(n) for n in names}
        for n in names:
            self.renames[n] = self.fresh()

        def restore():
            for n, old in before.items():
                if old is None:
                    self.renames.pop(n, None)
                else:
                    self.renames[n] = old
        return restore

    def filtered_sum(self, name, e, target, add, divide):
        """sum([E for p in it if c ... for q in it2 if c2 ...]) or mean(...): the kept items' sum
        (over each item's elements, as numpy sums the list), mean its quotient by their count; the
        clauses nested loops, each one's conditions an if around the loops inside it."""
        line = e.span.line
        total, kept = self.fresh(), self.fresh()
        self.out += [Copy(total, 0.0, line), Plain(kept, "0", line)]
        self.out += self.filtered_loop(e, 0, total, kept, add)
        if name == "sum":
            return self.expr_named(total, target, line)
        return self.apply(divide, [total, kept], line, target)

    def filtered_loop(self, e, k, total, kept, add) -> list:
        """The loop of clause k (what computes its iterable first), its body the clause's names
        bound, then its conditions' if around the next clause's loop (the last: the item added)."""
        (pattern, it, conds), line = e.clauses[k], e.span.line
        saved, self.out = self.out, []
        count, item = self.walked(it, line)
        index = self.fresh()
        before, self.out = self.out, []
        restore = self.renamed(pattern)
        try:
            self.bind(pattern, item(index), line)
            tests = [str(self.value(c, None)) for c in conds]
            test = None if not tests else tests[0] if len(tests) == 1 else self.plain(" and ".join(tests), None, line)
            head, self.out = self.out, []
            if k + 1 < len(e.clauses):
                self.out += self.filtered_loop(e, k + 1, total, kept, add)
            else:
                element = self.apply("sum", [self.value(e.elt, None)], line, None, "np.sum")
                self.apply(add, [total, element], line, total)
                self.out.append(Plain(kept, f"{kept} + 1", line))
            inner = self.out
        finally:
            restore()
            self.out = saved
        return before + [For(index, [count], head + ([If(test, inner, [], line)] if test is not None else inner), line)]
