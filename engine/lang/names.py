"""Which names a piece of AST binds and reads, and where a name lives (compile-time scopes)."""
from __future__ import annotations


from ...parser import nodes as n


def assigned_names(body) -> list:
    """Names a block binds (assignment targets, loop variables, nested defs), in order."""
    out = []
    stack = list(reversed(body))
    while stack:
        s = stack.pop()
        if isinstance(s, n.Assign):
            out.extend(t.id for t in s.targets)
        elif isinstance(s, n.AugAssign):
            out.append(s.target.id)
        elif isinstance(s, n.For):
            out.append(s.target.id)
            stack.extend(reversed(s.body))
        elif isinstance(s, (n.If,)):
            stack.extend(reversed(s.orelse))
            stack.extend(reversed(s.body))
        elif isinstance(s, n.While):
            stack.extend(reversed(s.body))
        elif isinstance(s, n.FunctionDef):
            out.append(s.name)
    seen, uniq = set(), []
    for name in out:
        if name not in seen:
            seen.add(name)
            uniq.append(name)
    return uniq


_SKIP_FIELDS = {"span", "op_span", "op_spans", "op", "ops"}


def loaded_names(node) -> list:
    """Names an AST reads, in order of first appearance (iterative: no recursion limit)."""
    out, seen = [], set()
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, n.Name):
            if x.id not in seen:
                seen.add(x.id)
                out.append(x.id)
            continue
        if isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
            continue
        fields = getattr(x, "__dataclass_fields__", None)
        if not fields:
            continue
        kids = []
        for f in fields:
            if f in _SKIP_FIELDS:
                continue
            if (isinstance(x, n.Assign) and f == "targets") or (isinstance(x, n.For) and f == "target") \
                    or (isinstance(x, n.FunctionDef) and f in ("name", "params")):
                continue
            v = getattr(x, f)
            if v is None or isinstance(v, (str, float, bool, int)):
                continue
            kids.append(v)
        stack.extend(reversed(kids))
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
