"""The adjoint's own stores tidied before it is printed (issue 31 item 3, "no dead adjoints"):
the reverse sweep (emit/adjoint.py) writes each adjoint store as a `Store` (its name, its
expression, whether it accumulates), and this pass, over the sweep's statements and their
structure (sequence, if/else, loops run to a fixpoint), does two things a reader would otherwise
trip over:

- a zero start an accumulation reads at once: `x_b = 0.0` reaching `x_b = x_b + e` on every path
  makes it `x_b = e` (the engine stores a first contribution as it comes, engine/core/tape.py,
  so this is the engine's number to the bit, the sign of a zero included);
- a store no path reads before it is overwritten or the function returns (a backward liveness:
  a zero store at the end of a loop's body the next iteration reads stays).

Only the writer's `Store`s are rewritten or dropped; every other statement (a rule's lines, pops,
calls) is kept as it is, and what it reads and writes is read off Python's own parse of it (the
statement structure too), never guessed from its text. A sweep with a statement the pass does not
follow (break, return before the end, try, a nested def) is left as written."""
from __future__ import annotations

import ast


class Store(str):
    """An adjoint store as the reverse sweep writes it: `name = 0.0` (expr None), `name = expr`,
    or `name = name + expr` (accumulates); its text is the line printed."""

    def __new__(cls, pad: str, name: str, expr, line=None, accumulates=False):
        text = f"{name} = {name} + {expr}" if accumulates else f"{name} = {'0.0' if expr is None else expr}"
        self = super().__new__(cls, pad + (text if line is None else f"{text}  # line {line}"))
        self.pad, self.name, self.expr, self.line, self.accumulates = pad, name, expr, line, accumulates
        return self

    def assigned(self) -> "Store":
        """The accumulation as an assignment (what it adds to is a zero)."""
        return Store(self.pad, self.name, self.expr, self.line)


class Note(str):
    """An --explain comment: it goes with the store after it."""


class Unfollowed(Exception):
    """A statement the pass does not follow: the lines are left as written."""


def tidied(lines: list) -> list:
    """`lines` (one function body's statements from its adjoint's zero starts to its return, one
    line each) with the zero starts folded into the accumulations they reach and the dead stores
    dropped; as written where the pass does not follow a statement."""
    if not any(isinstance(s, Store) for s in lines) or any("\n" in s for s in lines):
        return list(lines)
    try:
        tree = ast.parse("def _f():\n" + "\n".join(lines)).body[0].body
        stores = {k: s for k, s in enumerate(lines) if isinstance(s, Store)}
        flow = Flow(tree, stores)
        flow.zeros(tree, frozenset())
        folded = [flow.folded(k, s) for k, s in enumerate(lines)]
        flow.stores = {k: s for k, s in enumerate(folded) if isinstance(s, Store)}
        flow.live(tree, frozenset())
    except (Unfollowed, SyntaxError):     # a line Python does not parse is left as written too
        return list(lines)
    return flow.without_dead(folded)


def line_of(node) -> int:
    return node.lineno - 2          # the index in `lines` (the parse starts with `def _f():`)


class Flow:
    """The two analyses over the parsed body: which adjoints hold the zero a store wrote (forward,
    on every path), and which are read later (backward); loops to a fixpoint."""

    def __init__(self, tree, stores: dict):
        self.tree, self.stores = tree, stores
        self.zero_at: dict = {}        # an accumulation's index -> whether its name holds a zero there
        self.read: dict = {}            # a store's index -> whether a later statement may read it
        self.mutated = mutated_names(tree)

    def store(self, node):
        s = self.stores.get(line_of(node))
        return s if s is not None and isinstance(node, ast.Assign) else None

    # ---- forward: the names that hold a zero store's 0.0 on every path ----
    def zeros(self, body, z: frozenset) -> frozenset:
        for node in body:
            s = self.store(node)
            if s is not None:
                if s.accumulates:
                    self.zero_at[line_of(node)] = s.name in z
                z = z | {s.name} if s.expr is None else z - {s.name}
            elif isinstance(node, ast.If):
                z = z - written(node.test)
                z = self.zeros(node.body, z) & self.zeros(node.orelse, z)
            elif isinstance(node, (ast.For, ast.While)):
                z = self.zeros_loop(loop(node), z)
            else:
                z = z - written(simple(node))
        return z

    def zeros_loop(self, node, z: frozenset) -> frozenset:
        head = z - written(node.iter if isinstance(node, ast.For) else node.test)
        while True:             # the sets only shrink: the last pass is the one that holds
            entry = head - (written(node.target) if isinstance(node, ast.For) else frozenset())
            after = head & self.zeros(node.body, entry)
            if isinstance(node, ast.While):
                after = after - written(node.test)
            if after == head:
                return head
            head = after

    def folded(self, k, s):
        """The store at index k, an accumulation of a zero written as an assignment (unless an
        array it names is written in place somewhere: then the sum's new array is kept)."""
        if not (isinstance(s, Store) and s.accumulates and self.zero_at.get(k)):
            return s
        if s.name in self.mutated or reads_of_text(s.expr) & self.mutated:
            return s
        return s.assigned()

    # ---- backward: the names a later statement may read ----
    def live(self, body, after: frozenset) -> frozenset:
        for node in reversed(body):
            s = self.store(node)
            if s is not None:
                k = line_of(node)
                read = s.name in after
                self.read[k] = self.read.get(k, False) or read
                if read:            # a dead store reads nothing (its reads die with it)
                    after = (after - {s.name}) | reads_of_text(s.expr) | ({s.name} if s.accumulates else set())
            elif isinstance(node, ast.If):
                after = self.live(node.body, after) | self.live(node.orelse, after) | reads(node.test)
            elif isinstance(node, (ast.For, ast.While)):
                after = self.live_loop(loop(node), after)
            else:
                node = simple(node)
                after = (after - killed(node)) | reads(node)
        return after

    def live_loop(self, node, after: frozenset) -> frozenset:
        """Live where the loop takes its next item (or tests again): after it, or in the body."""
        head = after | (reads(node.test) if isinstance(node, ast.While) else frozenset())
        while True:             # the sets only grow
            inner = self.live(node.body, head)
            if isinstance(node, ast.For):
                inner = inner - killed(node.target)
            grown = head | inner
            if grown == head:
                return head | (reads(node.iter) if isinstance(node, ast.For) else frozenset())
            head = grown

    def without_dead(self, lines: list) -> list:
        """The lines less the dead stores (and the --explain note before each); a block left empty
        gets `pass`."""
        dead = {k for k, read in self.read.items() if not read}
        for k in list(dead):
            if k > 0 and isinstance(lines[k - 1], Note):
                dead.add(k - 1)
        keep = set()
        for body in blocks(self.tree):
            indices = [k for node in body for k in range(line_of(node), node.end_lineno - 1)]
            if indices and all(k in dead for k in indices):
                keep.add(indices[-1])
        return [(lines[k].pad + "pass" if k in keep else s) for k, s in enumerate(lines) if k not in dead or k in keep]


def blocks(body):
    """Every statement list in the body (itself, each if's and loop's)."""
    yield body
    for node in body:
        for inner in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if inner:
                yield from blocks(inner)


FOLLOWED = (ast.Assign, ast.AugAssign, ast.Expr, ast.Pass, ast.Return)


def simple(node):
    """A statement that is not a store, an if or a loop: one the pass follows (a return only as
    the last statement, a loop without `else`), or Unfollowed."""
    if not isinstance(node, FOLLOWED):
        raise Unfollowed(type(node).__name__)
    return node


def loop(node):
    """A for or while loop without `else` (one with it is not followed)."""
    if node.orelse:
        raise Unfollowed("a loop's else")
    return node


def reads(node) -> frozenset:
    """The names a statement or expression reads (an augmented assignment's target too)."""
    if node is None:
        return frozenset()
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        names.add(node.target.id)
    return frozenset(names)


def reads_of_text(expr) -> frozenset:
    return reads(ast.parse(str(expr), mode="eval")) if expr is not None else frozenset()


def written(node) -> frozenset:
    """The names a statement or expression may bind (a walrus, an augmented assignment's target)."""
    if node is None:
        return frozenset()
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)))


def killed(node) -> frozenset:
    """The names a statement surely binds anew (an assignment's names, a loop's target)."""
    if isinstance(node, ast.Assign):
        return frozenset(n for t in node.targets for n in bound_names(t))
    if isinstance(node, (ast.Name, ast.Tuple, ast.List)):
        return frozenset(bound_names(node))
    return frozenset()


def bound_names(target) -> list:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in bound_names(t)]
    return []


IN_PLACE_CALLS = {"at", "copyto", "put", "place", "putmask", "fill", "sort", "resize", "setfield", "itemset"}


def mutated_names(tree) -> frozenset:
    """The names whose arrays some statement writes into: `a[i] = ...`, `a += ...`, `out=a`,
    `np.add.at(a, ...)`, `np.copyto(a, ...)`, `a.fill(...)`, `operator.iadd(a, ...)`."""
    names = set()
    for n in (m for node in tree for m in ast.walk(node)):
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                base = t
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name) and (base is not t or isinstance(n, ast.AugAssign)):
                    names.add(base.id)
        elif isinstance(n, ast.Call):
            names.update(k.value.id for k in n.keywords if k.arg == "out" and isinstance(k.value, ast.Name))
            f = n.func
            if isinstance(f, ast.Attribute) and (f.attr in IN_PLACE_CALLS or f.attr.startswith("i")
                                                 and getattr(f.value, "id", None) == "operator"):
                target = f.value if f.attr in ("fill", "sort", "resize", "setfield", "itemset") else \
                    (n.args[0] if n.args else None)
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return frozenset(names)
