"""lark parse events -> AST nodes for the forms numpy code is written in: imports, keyword
arguments and defaults, attributes and module paths (`np.linalg.det`), lambda, list
comprehensions, None and `...` in subscripts, item assignment. A mixin of transform.ASTBuilder.
"""
from __future__ import annotations

from .lalr import Token

from . import nodes
from .errors import STRING_PLACES, SourceError
from .modules import MODULE_ROOTS, SUBMODULES, is_submodule
from .spans import checked_name, join, span_of, tok_span

# np.fft's transforms: their norm ("backward", "ortho", "forward") is their fourth parameter
FFT_NAMES = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn",
             "hfft", "ihfft")

# The one place strings are taken: these builtins' string parameters, by position and keyword
# (numpy's names). The callee is judged by its last name, so `np.linalg.norm` and `la.norm` count.
STRING_ARGUMENTS = {"einsum": ((0, None),), "norm": ((1, "ord"),), "cond": ((1, "p"),), "pad": ((2, "mode"),),
                    "convolve": ((2, "mode"),), "searchsorted": ((2, "side"),), "qr": ((1, "mode"),),
                    **{name: ((5, "method"),) for name in ("quantile", "percentile", "nanquantile", "nanpercentile")},
                    "eigh": ((1, "UPLO"),), "eigvalsh": ((1, "UPLO"),),
                    "solve_triangular": ((2, "trans"),), **{name: ((3, "norm"),) for name in FFT_NAMES},
                    # numpy's dtype by name (dtype='float64', x.astype('int64')): engine/lang/dtypes.py
                    **{name: ((1, "dtype"),) for name in ("zeros", "ones", "identity", "zeros_like", "ones_like",
                                                          "array", "asarray")},
                    "full": ((2, "dtype"),), "full_like": ((2, "dtype"),), "eye": ((3, "dtype"),),
                    "arange": ((None, "dtype"),), "linspace": ((None, "dtype"),), "astype": ((0, "dtype"),)}
TRIPLE_QUOTES = ("'" * 3, '"' * 3)


def string_value(tokens) -> str:
    """The text of adjacent string literals, as Python joins them (`r` and `u` prefixes taken)."""
    parts = []
    for tok in tokens:
        text = str(tok)
        prefix = text[:len(text) - len(text.lstrip("ubrfUBRF"))].lower()
        if "b" in prefix or "f" in prefix:
            raise SourceError("unsupported construct", f"{prefix}-strings are not part of the language",
                              tok_span(tok), "write a plain string: 'ij,jk->ik'")
        quote = 3 if text[len(prefix):].startswith(TRIPLE_QUOTES) else 1
        body = text[len(prefix) + quote:len(text) - quote]
        if "r" not in prefix and "\\" in body:
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        parts.append(body)
    return "".join(parts)


def _callee_name(func) -> str | None:
    if isinstance(func, nodes.Name):
        return func.id.rsplit(".", 1)[-1]
    return func.attr if isinstance(func, nodes.Attribute) else None


def misplaced_string(node) -> SourceError:
    return SourceError("syntax error", f"strings are not part of the language here: {node.value!r} (only as "
                       f"docstrings, dict keys (d[\"W\"]) and as {STRING_PLACES})", node.span)


def check_string_arguments(func, args, keywords) -> None:
    """A string argument is an error unless it is in one of STRING_ARGUMENTS' places."""
    places = STRING_ARGUMENTS.get(_callee_name(func), ())
    positions, names = {p for p, _ in places}, {k for _, k in places if k is not None}
    for index, arg in enumerate(args):
        if isinstance(arg, nodes.Str) and index not in positions:
            raise misplaced_string(arg)
    for item in keywords:
        if isinstance(item.value, nodes.Str) and item.name not in names:
            raise misplaced_string(item.value)


class NumpyFormsBuilder:
    # Names bound to a submodule by an import earlier in the text being parsed (reset per parse by
    # transform.Indenter): `la.det` is then the builtin det, as `np.linalg.det` is.
    module_aliases = frozenset()

    def start_parse(self):
        self.module_aliases = frozenset()

    # ---- strings (arguments only) ----
    def string(self, c):
        return nodes.Str(string_value(c), join(c[0], c[-1]))

    # ---- calls: keyword arguments ----
    def keyword(self, c):
        name, value = c
        return nodes.Keyword(checked_name(name), value, tok_span(name))

    def call(self, c):
        func, items = c[0], tuple(c[1] or ())
        args, keywords, seen = [], [], set()
        for item in items:
            if isinstance(item, nodes.Keyword):
                if item.name in seen:
                    raise SourceError("syntax error", f"keyword argument `{item.name}` repeated", item.span)
                seen.add(item.name)
                keywords.append(item)
            elif keywords:
                raise SourceError("syntax error", "a positional argument follows a keyword argument",
                                  item.span, "put positional arguments first: f(x, axis=0)")
            else:
                args.append(item)
        check_string_arguments(func, args, keywords)
        last = items[-1] if items else None
        span = join(func, last.value if isinstance(last, nodes.Keyword) else last) if items else func.span
        return nodes.Call(func, tuple(args), span, tuple(keywords))

    # ---- attributes and module paths ----
    def attribute(self, c):
        value, attr = c
        name = checked_name(attr)
        root = value.id.split(".")[0] if isinstance(value, nodes.Name) else None
        if root in MODULE_ROOTS or root in self.module_aliases:
            if value.id in MODULE_ROOTS and name in SUBMODULES:      # np.fft; an alias's fft.fft is a name
                return nodes.Name(f"{value.id}.{name}", join(value, attr))
            return nodes.Name(name, join(value, attr), value.id)
        return nodes.Attribute(value, name, tok_span(attr), join(value, attr))

    # ---- imports ----
    def dotted_name(self, c):
        return ".".join(checked_name(t) for t in c), join(c[0], c[-1])

    def import_stmt(self, c):
        kw, (module, module_span), alias = c[0], c[1], c[-1] if len(c) > 2 else None
        alias_name = None
        end = module_span
        if alias is not None:
            alias_name = checked_name(alias)
            end = tok_span(alias)
            parent, _, submodule = module.rpartition(".")
            if is_submodule(submodule, parent):
                self.module_aliases = self.module_aliases | {alias_name}
        return nodes.Import(module, alias_name, (), module_span, tok_span(kw).to(end))

    def from_stmt(self, c):
        kw, (module, module_span) = c[0], c[1]
        if module == "__future__":
            return None                     # `from __future__ import annotations`: accepted, ignored
        names = next(x for x in c[2:] if isinstance(x, tuple) and x and isinstance(x[0], tuple))
        submodules = {bound for name, bound, _ in names if is_submodule(name, module)}
        if submodules:
            self.module_aliases = self.module_aliases | submodules
        return nodes.Import(module, None, names, module_span, tok_span(kw).to(names[-1][2]))

    def import_names(self, c):
        return tuple(x for x in c if x is not None)

    def import_name(self, c):
        name = c[0]
        bound = c[-1] if len(c) > 1 and c[-1] is not None else name
        return (checked_name(name), checked_name(bound), tok_span(name))

    # ---- def parameters with defaults, lambda ----
    def param(self, c):
        """NAME [: annotation] [= default]: the annotation is read and ignored."""
        name = c[0]
        default = c[-1] if len(c) > 1 else None
        return (name, default)

    lambda_param = param

    def annotation(self, c):
        return None                                 # type annotations: read, ignored

    def annassign(self, c):
        """`a: float = 1.0` is `a = 1.0`; `x: int` alone binds nothing (as in Python)."""
        target, _, value = c
        return None if value is None else self.assign([target, value])

    def params(self, c):
        names, defaults, seen = [], [], set()
        for item in c:
            if item is None:
                continue
            tok, default = item
            if str(tok) in seen:
                raise SourceError("syntax error", f"duplicate parameter {tok!s}", tok_span(tok))
            seen.add(str(tok))
            if default is None and defaults:
                raise SourceError("syntax error", f"parameter {tok!s} without a default follows one with a "
                                  "default", tok_span(tok))
            names.append(checked_name(tok))
            if default is not None:
                defaults.append(default)
        return names, defaults

    lambda_params = params

    def funcdef(self, c):
        name, params, body = c[0], c[1], c[-1]          # c[2]: the return annotation, ignored
        names, defaults = params or ((), ())
        return nodes.FunctionDef(checked_name(name), tuple(names), body, tok_span(name), tuple(defaults))

    def lambdef(self, c):
        kw, params, body = c
        names, defaults = params or ((), ())
        return nodes.Lambda(tuple(names), tuple(defaults), body, join(kw, body))

    # ---- atoms ----
    def none(self, c):
        return nodes.NoneLit(tok_span(c[0]))

    def ellipsis(self, c):
        return nodes.EllipsisLit(tok_span(c[0]))

    def empty_tuple(self, c):
        return nodes.TupleExpr((), join(c[0], c[1]))

    def list_comp(self, c):
        elt, clauses = c[0], tuple(c[1:])
        last = clauses[-1]
        end = last[2][-1] if last[2] else last[1]
        span = span_of(elt).to(span_of(end))
        return nodes.ListComp(elt, clauses, nodes.Span(span.line, span.column - 1, span.end_line,
                                                        span.end_column + 1))

    def comp_clause(self, c):
        parts = [x for x in c if not (isinstance(x, Token) and x.type in ("FOR", "IN"))]
        target, iterable, conds = parts[0], parts[1], tuple(parts[2:])
        return (target, iterable, conds)

    def comp_if(self, c):
        return c[-1]

    # ---- assignment to items ----
    def subscript_assign(self, target, op, op_token, value):
        if not isinstance(target.value, nodes.Name):
            raise SourceError("unsupported construct", "assignment to an item of an item (x[i][j] = ...) "
                              "is not part of the language", target.span, "write x[i, j] = ...")
        return nodes.SubscriptAssign(target, op, value, tok_span(op_token) if op_token else target.span,
                                     join(target, value))
