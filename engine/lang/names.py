"""Which names a piece of AST binds and reads, and where a name lives (compile-time scopes)."""
from __future__ import annotations

from ...parser import nodes


def loop_target_names(target) -> tuple:
    """The names a loop target binds: one Name, or a TupleExpr of Names (`for a, b in pairs`)."""
    if isinstance(target, nodes.TupleExpr):
        return tuple(name.id for name in target.elts)
    return (target.id,)


def assigned_names(body) -> list:
    """Names a block binds (assignment targets, loop variables, nested defs), in order."""
    out = []
    stack = list(reversed(body))
    while stack:
        s = stack.pop()
        if isinstance(s, nodes.Assign):
            out.extend(t.id for t in s.targets)
        elif isinstance(s, nodes.AugAssign):
            out.append(s.target.id)
        elif isinstance(s, nodes.SubscriptAssign):
            out.append(s.target.value.id)
        elif isinstance(s, nodes.Import):
            out.extend(bound for name, bound, _ in s.names if bound != name)
        elif isinstance(s, nodes.For):
            out.extend(loop_target_names(s.target))
            stack.extend(reversed(s.body))
        elif isinstance(s, nodes.If):
            stack.extend(reversed(s.orelse))
            stack.extend(reversed(s.body))
        elif isinstance(s, nodes.While):
            stack.extend(reversed(s.body))
        elif isinstance(s, nodes.FunctionDef):
            out.append(s.name)
    seen, uniq = set(), []
    for name in out:
        if name not in seen:
            seen.add(name)
            uniq.append(name)
    return uniq


# Fields that hold no sub-nodes to visit: positions and operator spellings.
NOT_CHILDREN = frozenset({"span", "op_span", "op_spans", "op", "ops", "attr_span", "module_span", "names"})


def _binding_fields(x) -> tuple:
    """The fields of a statement that name what it binds, rather than read."""
    if isinstance(x, nodes.Assign):
        return ("targets",)
    if isinstance(x, nodes.For):
        return ("target",)
    if isinstance(x, nodes.FunctionDef):
        return ("name", "params")
    if isinstance(x, nodes.Lambda):
        return ("params",)
    return ()


def walk(tree, bindings: bool = True):
    """Every node of an AST (a node or a list of them) in source order, each before its children.
    Iterative, so a deep tree needs no deep Python stack. bindings=False skips the names a
    statement binds (assignment targets, loop variables, a def's name and parameters)."""
    stack = [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
            continue
        fields = getattr(x, "__dataclass_fields__", None)
        if not fields:
            continue
        yield x
        skip = () if bindings else _binding_fields(x)
        kids = []
        for f in fields:
            if f in NOT_CHILDREN or f in skip:
                continue
            v = getattr(x, f)
            if isinstance(v, (tuple, list)) or hasattr(v, "__dataclass_fields__"):
                kids.append(v)
        stack.extend(reversed(kids))


def loaded_names(tree) -> list:
    """Names an AST reads, in order of first appearance."""
    out, seen = [], set(_inner_bindings(tree))
    for x in walk(tree, bindings=False):
        if isinstance(x, nodes.Name) and x.id not in seen:
            seen.add(x.id)
            out.append(x.id)
    return out


def _inner_bindings(tree) -> set:
    """Names local to a lambda or a comprehension: read there, yet not inputs."""
    out = set()
    for x in walk(tree):
        if isinstance(x, nodes.Lambda):
            out.update(x.params)
        elif isinstance(x, nodes.ListComp):
            for target, _, _ in x.clauses:
                out.update(loop_target_names(target))
    return out


class Scope:
    """Compile-time knowledge of where a name lives: this function's locals, an enclosing
    function's, the module's globals, or the builtins."""

    def __init__(self, locals_, parent, globals_):
        self.locals = set(locals_)
        self.parent = parent
        self.globals = globals_

    def find(self, name):
        if self.locals is not None and name in self.locals and self.parent is not None:
            return "local"
        s = self.parent
        while s is not None and s.parent is not None:
            if name in s.locals:
                return "free"
            s = s.parent
        if name in self.globals:
            return "global"
        return None

    def enclosing_locals(self) -> list:
        """The locals of this scope and of every enclosing one (candidates for `did you mean`)."""
        out = []
        s = self
        while s is not None:
            out.extend(s.locals or ())
            s = s.parent
        return out
