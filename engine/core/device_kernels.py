"""Fused VJP kernels on the GPU: the numexpr expressions core/fused.py traces from the rules table,
translated into CUDA C for `cupy.ElementwiseKernel` and compiled once per expression and layout.

The text is our own generated syntax (fused.py's `Symbol` writes it): fully parenthesized binary
operators, unary minus, calls of numexpr's functions, `where(c, a, b)`, float literals and the
names of the arrays (g, ans, a0, a1...). A small recursive-descent reader (never eval) builds a
tree; anything it does not know raises `NotTranslatable`, and the rule then runs op by op.

The tree is what numexpr evaluates on the CPU (it runs without its optimizations, core/fused.py):
constants are folded, `where` with a constant condition is its branch, and nothing else is
rewritten (a power stays pow, x / c a division; the text writes numpy's x ** 2.0, x ** 0.5 and
x ** -1.0 as x * x, sqrt(x) and 1 / x itself). So a kernel on the GPU rounds as the CPU's does.
Then it is written as C: asin for arcsin, fabs for abs, pow for powers (CUDA's pow takes a
negative base to an integral power, as numpy's does), `c ? a : b` for where. Arrays are float64
(`double` parameters) or bool; float32 is not fused, as on the CPU, so no double literal ever
widens a float computation.
"""
from __future__ import annotations

import re

from .backend import np, xp
from .rules import TABLE

# numexpr's function name -> CUDA C's (each table entry's `c_name` fact), and -> the numpy ufunc
# that folds it over a constant on the host (the first of the entry's `ufuncs`): read off the
# table once, here
C_FUNCTIONS = {prim.numexpr: prim.c_name for prim in TABLE.values() if prim.c_name is not None}
HOST_FUNCTIONS = {prim.numexpr: prim.ufuncs[0] for prim in TABLE.values() if prim.c_name is not None}
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
PARAM_TYPES = {"float64": "float64", "bool": "bool"}     # numpy dtype -> ElementwiseKernel type
# identifiers a kernel's parameters may not take: its output, cupy's loop index, C's words
RESERVED = {"out", "i", "true", "false", "pow", "where", "int", "float", "double", "bool", "char",
            "long", "short", "void", "const", "return", "if", "else", "for", "while", "do",
            "NAN", "INFINITY", "HUGE_VAL"}      # macros of CUDA's math headers
RESERVED.update(C_FUNCTIONS.values())
TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)"
                   r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\*\*|[<>=!]=|[-+*/(),<>]))")

KERNELS: dict = {}                # (expression, ((name, dtype), ...)) -> Kernel, or None: not fusable


class NotTranslatable(Exception):
    """An expression (or a layout) the device's kernels cannot run: the rule keeps its path."""


# The tree: ("const", float or bool), ("name", name, kind), ("neg", a), ("bin", op, a, b),
# ("call", function, a), ("where", c, a, b). Kinds are "double" and "bool".

def kind_of(node) -> str:
    tag = node[0]
    if tag == "const":
        return "bool" if node[1].__class__ is bool else "double"
    if tag == "name":
        return node[2]
    if tag == "bin":
        return "bool" if node[1] in COMPARISONS else "double"
    return "double"


def need_double(*nodes) -> None:
    if any(kind_of(n) != "double" for n in nodes):
        raise NotTranslatable("arithmetic on a boolean")


def constant(value):
    """A folded constant: numpy's float64 arithmetic on the host, as numexpr folds."""
    if isinstance(value, (bool, np().bool_)):
        return ("const", bool(value))
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise NotTranslatable("a constant that is not finite")
    return ("const", value)


def negate(a):
    need_double(a)
    return constant(-a[1]) if a[0] == "const" else ("neg", a)


def binary(op, a, b):
    need_double(a, b)
    if a[0] == "const" and b[0] == "const":
        x, y = np().float64(a[1]), np().float64(b[1])
        folded = {"+": x + y, "-": x - y, "*": x * y, "/": x / y, "**": x ** y, "<": x < y,
                  "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}
        return constant(folded[op])
    return ("bin", op, a, b)


def function(name, args):
    if name == "where":
        if len(args) != 3:
            raise NotTranslatable("where takes three arguments")
        condition, yes, no = args
        if kind_of(condition) != "bool":
            raise NotTranslatable("where on a condition that is not boolean")
        need_double(yes, no)
        if condition[0] == "const":
            return yes if condition[1] else no
        return ("where", condition, yes, no)
    if name not in C_FUNCTIONS or len(args) != 1:
        raise NotTranslatable(f"no device function {name}")
    a = args[0]
    need_double(a)
    if a[0] == "const":
        return constant(getattr(np(), HOST_FUNCTIONS[name])(np().float64(a[1])))
    return ("call", name, a)


class Reader:
    """A recursive-descent reader of the expressions fused.py writes, with Python's precedence
    (numexpr parses them as Python): comparison < + - < * / < unary minus < ** < calls."""

    def __init__(self, text: str, kinds: dict):
        self.tokens, self.at, self.kinds, self.names = tokenize(text), 0, kinds, []

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else (None, None)

    def take(self, expected=None):
        token = self.peek()
        if token[0] is None or (expected is not None and token[1] != expected):
            raise NotTranslatable(f"expected {expected or 'more'} in the expression")
        self.at += 1
        return token

    def read(self):
        tree = self.comparison()
        if self.at != len(self.tokens):
            raise NotTranslatable("text after the expression")
        return tree

    def comparison(self):
        left = self.sum()
        if self.peek()[1] in COMPARISONS:
            op = self.take()[1]
            left = binary(op, left, self.sum())
            if self.peek()[1] in COMPARISONS:
                raise NotTranslatable("a chained comparison")
        return left

    def sum(self):
        left = self.product()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            left = binary(op, left, self.product())
        return left

    def product(self):
        left = self.unary()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            left = binary(op, left, self.unary())
        return left

    def unary(self):
        if self.peek()[1] == "-":
            self.take()
            return negate(self.unary())
        base = self.primary()
        if self.peek()[1] == "**":
            self.take()
            return binary("**", base, self.unary())     # right-associative, binds tighter than -
        return base

    def primary(self):
        kind, text = self.take()
        if kind == "number":
            return constant(float(text))
        if kind == "op" and text == "(":
            inner = self.comparison()
            self.take(")")
            return inner
        if kind != "name":
            raise NotTranslatable(f"unexpected {text!r} in the expression")
        if self.peek()[1] == "(":
            self.take()
            args = [self.comparison()]
            while self.peek()[1] == ",":
                self.take()
                args.append(self.comparison())
            self.take(")")
            return function(text, args)
        return self.name(text)

    def name(self, text):
        if text not in self.kinds or text in RESERVED or text.startswith("_"):    # _ind, _raw_x: cupy's
            raise NotTranslatable(f"no array {text}")
        if text not in self.names:
            self.names.append(text)
        return ("name", text, self.kinds[text])


def tokenize(text: str) -> list:
    tokens, at = [], 0
    text = text.rstrip()
    while at < len(text):
        match = TOKEN.match(text, at)
        if match is None:
            raise NotTranslatable(f"unknown text {text[at:at + 10]!r} in the expression")
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        at = match.end()
    return tokens


def to_c(node) -> str:
    tag = node[0]
    if tag == "const":
        value = node[1]
        if value.__class__ is bool:
            return "true" if value else "false"
        return f"({value!r})" if repr(value)[0] == "-" else repr(value)
    if tag == "name":
        return node[1]
    if tag == "neg":
        return f"(-{to_c(node[1])})"
    if tag == "call":
        return f"{C_FUNCTIONS[node[1]]}({to_c(node[2])})"
    if tag == "where":
        return f"({to_c(node[1])} ? {to_c(node[2])} : {to_c(node[3])})"
    op, left, right = node[1], to_c(node[2]), to_c(node[3])
    return f"pow({left}, {right})" if op == "**" else f"({left} {op} {right})"


def translate(expr: str, dtypes: dict) -> tuple:
    """(parameter names in order, in_params, operation) of the kernel for `expr` over arrays of
    `dtypes` (name -> numpy dtype name); NotTranslatable if it has none."""
    kinds = {}
    for name, dtype in dtypes.items():
        if dtype not in PARAM_TYPES:
            raise NotTranslatable(f"a {dtype} array")
        kinds[name] = "bool" if dtype == "bool" else "double"
    reader = Reader(expr, kinds)
    tree = reader.read()
    if kind_of(tree) != "double" or not reader.names:
        raise NotTranslatable("not a function of arrays giving numbers")
    params = tuple(reader.names)
    in_params = ", ".join(f"{PARAM_TYPES[dtypes[name]]} {name}" for name in params)
    return params, in_params, f"out = {to_c(tree)};"


class Kernel:
    """One compiled kernel and the order of its parameters."""
    __slots__ = ("params", "function")

    def __init__(self, params, function):
        self.params, self.function = params, function


def kernel_key(expr: str, names: dict) -> tuple:
    return expr, tuple(sorted((name, v.dtype.name) for name, v in names.items()))


def kernel_for(expr: str, names: dict):
    """The cached kernel for `expr` over these arrays' dtypes, or None if it is not fusable."""
    key = kernel_key(expr, names)
    dtypes = key[1]
    if key in KERNELS:
        return KERNELS[key]
    try:
        params, in_params, operation = translate(expr, dict(dtypes))
    except NotTranslatable:
        KERNELS[key] = None
        return None
    compiled = xp().ElementwiseKernel(in_params, "float64 out", operation, f"autodiff_fused_{len(KERNELS)}")
    KERNELS[key] = Kernel(params, compiled)
    return KERNELS[key]


def evaluate(expr: str, names: dict):
    """`expr` over the device arrays among `names` in one kernel (cupy broadcasts them), or None
    if it has none: the caller's op-by-op path then."""
    array_type = xp().ndarray
    arrays = {name: v for name, v in names.items() if v.__class__ is array_type}
    kernel = kernel_for(expr, arrays)
    if kernel is None:
        return None
    try:
        return kernel.function(*(arrays[name] for name in kernel.params))     # compiled at its first call
    except compile_errors():
        KERNELS[kernel_key(expr, arrays)] = None
        return None


def compile_errors() -> tuple:
    """What the device's compiler raises where it refuses a kernel's C (cupy's CompileException)."""
    compiler = getattr(getattr(xp(), "cuda", None), "compiler", None)
    return (getattr(compiler, "CompileException", NotTranslatable),)
