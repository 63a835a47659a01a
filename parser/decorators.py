"""The decorators the language takes: JAX's custom derivatives, `@jax.custom_vjp`, `@custom_jvp`
(through jax or imported from it) and `@f.defjvp`. A decorated def reads as Python defines it:
`@d def f` is the def, then `f = d(f)` (the innermost decorator first). Any other decorator is
an error naming it."""
from __future__ import annotations

from . import nodes
from .errors import SourceError
from .spans import tok_span

# The builtins a decorator may name (as `@custom_vjp` or `@jax.custom_vjp`), and the method of a
# custom_jvp function that decorates its rule (`@f.defjvp`).
RULE_DECORATORS = ("custom_vjp", "custom_jvp")
DECORATOR_METHODS = ("defjvp",)
DECORATORS_HINT = "the only decorators the language takes are @jax.custom_vjp, @jax.custom_jvp and @f.defjvp"


def spelled(e) -> str:
    """A decorator's expression as written (near enough for a message)."""
    if isinstance(e, nodes.Name):
        return f"{e.module}.{e.id}" if e.module else e.id
    if isinstance(e, nodes.Attribute):
        return f"{spelled(e.value)}.{e.attr}"
    if isinstance(e, nodes.Call):
        return f"{spelled(e.func)}(...)"
    return "..."


def _allowed(e) -> bool:
    if isinstance(e, nodes.Name):
        return e.id in RULE_DECORATORS and e.module in ("", "jax")
    return isinstance(e, nodes.Attribute) and e.attr in DECORATOR_METHODS and isinstance(e.value, nodes.Name) \
        and not e.value.module


class DecoratorsBuilder:
    """The AST builder's decorators (a mixin of parser/transform.py's ASTBuilder)."""

    def decorator(self, c):
        at, expression = c[0], c[1]
        span = tok_span(at).to(expression.span)
        if str(at) != "@":
            raise SourceError("syntax error", f"unexpected {str(at)!r} at the start of a statement", tok_span(at))
        if not _allowed(expression):
            raise SourceError("unsupported construct", f"the decorator `@{spelled(expression)}` is not part of "
                              "the language", span, DECORATORS_HINT)
        return expression, span

    def decorated(self, c):
        *decorators, funcdef = c
        statements = [funcdef]
        for expression, span in reversed(decorators):
            target = nodes.Name(funcdef.name, span)
            call = nodes.Call(expression, (nodes.Name(funcdef.name, span),), span)
            statements.append(nodes.Assign((target,), call, False, span))
        return statements
