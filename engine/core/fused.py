"""Fused VJP kernels for large float64 (and complex128) arrays, generated from the rules table with numexpr.

Each elementwise primitive's VJP rule is recorded once per argument layout by the one rule
tracer (core/rule_tracer.py) on probes of the arrays, and its equations lowered into one tree of
the fused IR (core/fusion.py), e.g. sin's `g * cos(x)` or div's `-g * x / (y * y)`: numexpr's
text and the device's CUDA source are printed from that tree (`Expression`,
core/device_kernels.py). numexpr evaluates it blocked and multi-threaded, without one temporary
array of n per op. So the table stays the one source of derivatives: nothing here restates a
rule. A rule that does anything a kernel cannot (sum a broadcast, branch on values, call a
function numexpr lacks) is `Unfusable` and keeps its ordinary path, as do small arrays, scalars,
float32, boxes (a recorded sweep) and graph tapes. Over complex128 arrays an equation is numexpr's
only where its entry's `complex_bits` says numexpr computes numpy's bits (core/fused_ir.py's
complex_refusal; a complex product is probed once per process); complex64 and complex values
on the device are declined, said as such.

tape.bind records an elementwise primitive over arrays with `FUSED_RULES[name]`: a copy of the
table entry whose VJPs try the kernel first.
"""
from __future__ import annotations

import math

from .backend import np, on_device, xp
from .fused_ir import Expression, Unfusable, is_number, numexpr_text  # noqa: F401  (the kernels' names)
from .primitives import Primitive
from .rules import TABLE
from .tape import FUSED_RULES, Shape

FUSE_MIN_ELEMENTS = 1 << 16        # below this numpy's per-op cost is small and numexpr's start-up is not
MIN_FUSED_OPS = 2                  # operations (each writes one parenthesis) a kernel must fuse to pay
_numexpr = None


# what the fusion lowering raises where a rule does what no kernel can (a sum, a branch on values,
# float(), a function numexpr lacks): the rule keeps its ordinary path
TRACE_ERRORS = (Unfusable, TypeError, ValueError, AttributeError, ArithmeticError)
DECLINED: dict = {}        # what a fast path left to the rules -> why (decline)
MAX_DECLINED = 256
# complex arrays on the device: its kernels are CUDA C printed over doubles (core/device_kernels.py);
# complex<double> arithmetic in C is not checked against cupy's own kernels to the bit (issue 32)
DEVICE_COMPLEX = ("complex values on the device: its fused kernels are CUDA C over float64 arrays "
                  "(complex arithmetic in C is not checked against cupy's to the bit)")


def layout(v):
    """What a kernel depends on about one value: its kind and shape (floats are variables)."""
    c = v.__class__
    if v is None:
        return None
    if c is float:
        return ("float", v, math.copysign(1.0, v))  # baked in: rules branch on constants (y != 0);
                                                     # -0.0 == 0.0, but its kernel is not 0.0's
    if c is Shape:
        return ("shape", v.shape)
    if (c is np().ndarray or c is xp().ndarray) and v.dtype in (np().float64, np().bool_, np().complex128):
        if v.dtype.kind == "c" and c is not np().ndarray:
            raise Unfusable(DEVICE_COMPLEX)
        return (v.dtype.kind, v.shape)                   # numpy's, or the device's (cupy's)
    if getattr(v, "dtype", None) == np().complex64 and getattr(v, "ndim", 0):      # issue 32: said as such
        raise Unfusable("a complex64 array: numexpr has no complex64 kernels, and complex128's would "
                        "round apart from numpy's complex64 loops")
    raise Unfusable("not a float64 or complex128 array")


def decline(what: str, why) -> None:
    """Note why a fast path left `what` (a primitive's VJP, a region) to the rules, which run it
    op by op: DECLINED keeps the newest MAX_DECLINED reasons, one for each thing."""
    DECLINED.pop(what, None)
    if len(DECLINED) >= MAX_DECLINED:
        del DECLINED[next(iter(DECLINED))]
    DECLINED[what] = why if why.__class__ is str else f"{why.__class__.__name__}: {why}"


def trace(rule, g, ans, args, what="a VJP") -> Expression | None:
    """The rule as one kernel over g, ans, a0, a1..., or None if it is not fusable (the reason
    noted under `what`): recorded by the one rule tracer and lowered (core/fusion.py). A rule
    that does with a probe what no kernel can raises one of TRACE_ERRORS; anything else is a
    bug, and raises."""
    from .fusion import Fused, Tree, miniature, traced     # lazy: the tracer loads on the first large sweep

    def leaf(name, v):
        if v is None or v.__class__ is float:
            return v
        if v.__class__ is Shape:                # its miniature, as the probes' examples are
            return Shape(miniature(v.shape), v.dtype)
        return Fused(name, v.shape, boolean=v.dtype.kind == "b", complex=v.dtype.kind == "c")
    try:
        out = traced(Tree, rule, [leaf("g", g), leaf("ans", ans), *(leaf(f"a{i}", a) for i, a in enumerate(args))])
    except TRACE_ERRORS as e:
        return decline(what, e)
    if out.__class__ is not Fused or out.boolean or is_number(out.expr):
        return decline(what, "the rule gives no array of numbers")
    if operations(unmasked(out.expr)) < MIN_FUSED_OPS:
        return decline(what, "one operation (g * y) or none: numpy's is as quick")
    if out.shape != tuple(g.shape):
        return decline(what, "the adjoint has another shape than g")
    looped = numpy_looped(out.expr) if g.__class__ is np().ndarray else None    # (the device's are its libm's)
    if looped:
        return decline(what, f"{looped}: numpy's loop computes it (a region's step), numexpr's rounds apart")
    return Expression(out.expr)


def numpy_looped(tree) -> str | None:
    """A function of the tree that a region leaves to numpy's own loop (an entry's `numpy_loop`:
    numpy's bits are the reference, numexpr's kernel of it rounds apart): a VJP kernel holding
    one would not give the op-by-op run's bits, nor a region's."""
    from .region_program import NUMPY_LOOPS        # lazy: with the tracer
    if tree.__class__ is str:
        return None
    name = tree[0].split("(", 1)[0]
    if name in NUMPY_LOOPS:
        return name
    return next(filter(None, (numpy_looped(operand) for operand in tree[1:])), None)


def operations(tree) -> int:
    """The operations of a tree (its nodes)."""
    return 0 if tree.__class__ is str else 1 + sum(operations(operand) for operand in tree[1:])


def unmasked(tree):
    """The tree inside its strong-zero masks (rules.comparisons.strong_zero's
    `where(r == r, r, where(t == 0, 0, r))`): the masks change only nan entries, and the rule's
    numpy path applies them only after one reduction finds a non-finite one, so a kernel that
    evaluates them over every element pays for itself only where r is two operations or more
    (exp's `g * ans` in its masks costs numexpr 3-5x numpy's product and that reduction)."""
    while tree.__class__ is tuple and tree[0] == "where({}, {}, {})" and tree[1] == ("({} == {})", tree[2], tree[2]):
        tree = tree[2]
    return tree


def fused_vjp(rule, what="a VJP"):
    kernels = {}

    def vjp(g, ans, *args):
        if g.__class__ is not xp().ndarray or g.size < FUSE_MIN_ELEMENTS:
            return rule(g, ans, *args)            # small: numpy's ops, by design (no decline)
        try:       # (the host's kernels and the device's apart: numpy_looped asks which)
            key = (g.__class__ is np().ndarray, layout(g), layout(ans), tuple(layout(a) for a in args))
        except Unfusable as e:
            decline(what, e)
            return rule(g, ans, *args)
        if key not in kernels:
            with on_device("cpu"):     # the probes' examples are numpy's (cupy's ufuncs refuse a probe)
                kernels[key] = trace(rule, g, ans, args, what)
        expr = kernels[key]
        if expr is None:
            return rule(g, ans, *args)
        names = {"g": g, "ans": ans}
        names.update((f"a{i}", a) for i, a in enumerate(args))
        out = evaluate(expr, names)
        if out is None:
            decline(what, "no kernel library: numexpr is not installed, or the device cannot translate it")
            return rule(g, ans, *args)
        return out
    vjp.kernels = kernels
    return vjp


def evaluate(expr: Expression, names):
    """The kernel's result, or None where none runs (the rule's path then): on device arrays a
    cupy kernel printed from the expression's tree (core/device_kernels.py), None if it has
    none; on numpy arrays numexpr's of its text, None where numexpr is not installed."""
    global _numexpr
    if xp() is not np() and any(v.__class__ is xp().ndarray for v in names.values()):
        from . import device_kernels          # lazy: only a GPU run needs it, start-up stays fast
        return device_kernels.evaluate(expr, names)
    if _numexpr is None:                       # imported on the first large sweep: start-up stays fast
        try:
            import numexpr
        except (ImportError, ValueError):      # missing, or unusable: its import reads NUMEXPR_NUM_THREADS
            _numexpr = False                   # and OMP_NUM_THREADS as ints, and raises on any other text
            return None
        from .region_threads import more_numexpr_workers    # lazy: its thread pool's imports cost start-up 6 ms
        more_numexpr_workers(numexpr)
        _numexpr = numexpr
    if _numexpr is False:
        return None
    used = {k: v for k, v in names.items() if v.__class__ is np().ndarray}
    return _numexpr.evaluate(expr.text, local_dict=used, optimization="none")


def evaluate_into(expr, names, out):
    """evaluate(expr, names) written into `out` (a float64 buffer of the result's shape that the
    caller owns) when numexpr runs it on numpy arrays: a fresh array of n costs its page faults,
    often more than the kernel. Anything else (no buffer, another backend's arrays) is
    evaluate's."""
    if out is None or not _numexpr or any(v.__class__ is not np().ndarray for v in names.values()):
        return evaluate(expr, names)
    return _numexpr.evaluate(expr.text, local_dict=names, out=out, optimization="none")


def fused_entry(prim):
    """A copy of the table entry whose VJPs try a kernel first."""
    entry = object.__new__(Primitive)
    for slot in Primitive.__slots__:
        setattr(entry, slot, getattr(prim, slot))
    entry.vjps = tuple(None if rule is None else fused_vjp(rule, f"{prim.name}'s VJP in argument {i}")
                       for i, rule in enumerate(prim.vjps))
    return entry


def install() -> None:
    """Register the fused entries (tape.bind uses them for arrays). Cheap: nothing is imported
    or traced until a sweep over a large array needs a kernel."""
    for name, prim in TABLE.items():
        if prim.elementwise and isinstance(prim.vjps, tuple):
            FUSED_RULES[name] = fused_entry(prim)
