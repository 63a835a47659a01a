"""Fused kernels on the GPU: CUDA C for `cupy.ElementwiseKernel`, printed from the same tree of
the fused IR (core/fusion.py) that numexpr's text is printed from on the CPU (no text is read
back), and compiled once per tree and layout.

The tree is what numexpr evaluates on the CPU, which runs without its optimizations
(core/fused.py): nothing is rewritten (a power stays pow, x / c a division; the lowering writes
numpy's x ** 2.0, x ** 0.5 and x ** -1.0 as x * x, sqrt(x) and 1 / x itself), so a kernel on the
GPU rounds as the CPU's does. A node of numbers alone (which numexpr would fold) is not printed:
the rule then runs op by op. Each template is printed as C: a function by its table entry's
`c_name` (asin for arcsin, fabs for abs), pow for powers (CUDA's pow takes a negative base to an
integral power, as numpy's does), `c ? a : b` for where. Arrays are float64 (`double`
parameters) or bool; float32 is not fused, as on the CPU, so no double literal ever widens a
float computation.
"""
from __future__ import annotations

from .backend import xp
from .fused_ir import is_number
from .rules import TABLE

# numexpr's function name -> CUDA C's (each table entry's `c_name` fact): read off the table once, here
C_FUNCTIONS = {prim.numexpr: prim.c_name for prim in TABLE.values() if prim.c_name is not None}
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
PARAM_TYPES = {"float64": "float64", "bool": "bool"}     # numpy dtype -> ElementwiseKernel type
# NVRTC's options for every kernel (cupy.ElementwiseKernel's `options`): without --fmad=false it
# contracts a*b + c into one fused multiply-add, rounded once, where numpy (the interpreter's
# reference, and numexpr on the host) rounds the product and the sum apart
NVRTC_OPTIONS = ("--fmad=false",)
# identifiers a kernel's parameters may not take: its output, cupy's loop index, C's words
RESERVED = {"out", "i", "true", "false", "pow", "where", "int", "float", "double", "bool", "char",
            "long", "short", "void", "const", "return", "if", "else", "for", "while", "do",
            "NAN", "INFINITY", "HUGE_VAL"}      # macros of CUDA's math headers
RESERVED.update(C_FUNCTIONS.values())
WHERE = "where({}, {}, {})"
OPERATORS = {f"({{}} {op} {{}})": op for op in ("+", "-", "*", "/", "**") + COMPARISONS}

KERNELS: dict = {}                # (numexpr text, ((name, dtype), ...)) -> Kernel, or None: not fusable


class NotTranslatable(Exception):
    """A tree (or a layout) the device's kernels cannot run: the rule keeps its path."""


class Printer:
    """The C of one tree over arrays of given kinds ("double" or "bool"), and the arrays it reads
    in order of first use."""

    def __init__(self, kinds: dict):
        self.kinds, self.names = kinds, []

    def c(self, tree) -> tuple:
        """(C text, its kind) of a tree."""
        if tree.__class__ is str:
            return self.leaf(tree)
        template, operands = tree[0], [self.c(operand) for operand in tree[1:]]
        if all(is_number(operand) for operand in tree[1:]):
            raise NotTranslatable("a node of numbers alone")
        if template == WHERE:
            (condition, kind), yes, no = operands
            if kind != "bool" or yes[1] != "double" or no[1] != "double":
                raise NotTranslatable("where on a condition that is not boolean")
            return f"({condition} ? {yes[0]} : {no[0]})", "double"
        if any(kind != "double" for _, kind in operands):
            raise NotTranslatable("arithmetic on a boolean")
        texts = [text for text, _ in operands]
        if template == "(-{})" and len(texts) == 1:
            return f"(-{texts[0]})", "double"
        if template.endswith("({})") and len(texts) == 1:
            function = C_FUNCTIONS.get(template[:-4])
            if function is None:
                raise NotTranslatable(f"no device function {template[:-4]}")
            return f"{function}({texts[0]})", "double"
        op = OPERATORS.get(template)                    # "({} * {})" -> "*"
        if op is None or len(texts) != 2:
            raise NotTranslatable(f"no device form of {template}")
        if op == "**":
            return f"pow({texts[0]}, {texts[1]})", "double"
        return f"({texts[0]} {op} {texts[1]})", "bool" if op in COMPARISONS else "double"

    def leaf(self, text) -> tuple:
        if is_number(text):
            return (f"({text})" if text[0] == "-" else text), "double"
        if text not in self.kinds or text in RESERVED or text.startswith("_"):    # _ind, _raw_x: cupy's
            raise NotTranslatable(f"no array {text}")
        if text not in self.names:
            self.names.append(text)
        return text, self.kinds[text]


def translate(tree, dtypes: dict) -> tuple:
    """(parameter names in order, in_params, operation) of the kernel for `tree` over arrays of
    `dtypes` (name -> numpy dtype name); NotTranslatable if it has none."""
    kinds = {}
    for name, dtype in dtypes.items():
        if dtype not in PARAM_TYPES:
            raise NotTranslatable(f"a {dtype} array")
        kinds[name] = "bool" if dtype == "bool" else "double"
    printer = Printer(kinds)
    text, kind = printer.c(tree)
    if kind != "double" or not printer.names:
        raise NotTranslatable("not a function of arrays giving numbers")
    params = tuple(printer.names)
    in_params = ", ".join(f"{PARAM_TYPES[dtypes[name]]} {name}" for name in params)
    return params, in_params, f"out = {text};"


class Kernel:
    """One compiled kernel and the order of its parameters."""
    __slots__ = ("params", "function")

    def __init__(self, params, function):
        self.params, self.function = params, function


def kernel_key(expr, names: dict) -> tuple:
    """An expression's kernel's key: its numexpr text (a string keeps its hash; the text and the
    tree are one), and the arrays' dtypes."""
    return expr.text, tuple(sorted((name, v.dtype.name) for name, v in names.items()))


def kernel_for(expr, names: dict):
    """The cached kernel for `expr` (a fused_ir.Expression) over these arrays' dtypes, or None
    if it is not fusable."""
    key = kernel_key(expr, names)
    dtypes = key[1]
    if key in KERNELS:
        return KERNELS[key]
    try:
        params, in_params, operation = translate(expr.tree, dict(dtypes))
    except NotTranslatable:
        KERNELS[key] = None
        return None
    compiled = xp().ElementwiseKernel(in_params, "float64 out", operation, f"autodiff_fused_{len(KERNELS)}",
                                      options=NVRTC_OPTIONS)
    KERNELS[key] = Kernel(params, compiled)
    return KERNELS[key]


def evaluate(expr, names: dict):
    """`expr` (its tree printed as C) over the device arrays among `names` in one kernel (cupy
    broadcasts them), or None if it has none: the caller's op-by-op path then."""
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
