"""The fused IR's few shared names: the kernels' expressions (core/fusion.py lowers rule bodies into
them; core/fused.py and core/regions.py run them; numexpr's text is printed here, CUDA's in
core/device_kernels.py), the refusal of a rule no kernel can express, and numexpr's spelling of
each ufunc (the table's `numexpr` facts)."""
from __future__ import annotations

from .rules import TABLE

# numpy ufunc's __name__ -> numexpr's spelling of it: each table entry's `numexpr` fact under the
# `ufuncs` its forward applies, read off the table once, here
UFUNCS = {ufunc: prim.numexpr for prim in TABLE.values() if prim.numexpr is not None for ufunc in prim.ufuncs}


# numexpr's spelling -> its entries' `complex_bits` (whether numexpr's kernel of it over complex128
# values computes numpy's bits; "probe": this process's probe decides): read off the table once
COMPLEX_BITS = {prim.numexpr: prim.complex_bits for prim in TABLE.values() if prim.numexpr is not None}
PROBED: dict = {}           # spelling -> None (numpy's bits) or why not, once per process


def complex_refusal(spelling) -> str | None:
    """None where numexpr's kernel of `spelling` (a table entry's `numexpr`) computes numpy's
    bits on complex128 values (the entry's `complex_bits`), else why not (a region or kernel
    with such an equation over complex values stays op by op, with that reason)."""
    bits = COMPLEX_BITS.get(spelling, False)
    if bits is True:
        return None
    if bits == "probe":
        if spelling not in PROBED:
            PROBED[spelling] = probe_complex(spelling)
        return PROBED[spelling]
    return f"numexpr's complex {spelling} is its own kernel, not numpy's loop: not numpy's bits"


def probe_complex(spelling) -> str | None:
    """Compare numexpr's kernel of a binary operator with numpy's loop on complex128 values of
    every magnitude and sign (zeros, infinities and nans among them): None where every element
    has numpy's bits. Where numpy's loop fuses one multiply-add (FMA) for a complex product and
    numexpr rounds each product, some 40% of the random elements differ: the probe sees it."""
    import numpy
    try:
        import numexpr
    except (ImportError, ValueError):
        return "numexpr is not installed"
    rng = numpy.random.default_rng(32)
    parts = numpy.concatenate([rng.standard_normal(4096) * 10.0 ** rng.integers(-300, 300, 4096),
                               [0.0, -0.0, numpy.inf, -numpy.inf, numpy.nan, 1e-310, -1e-310]])
    x, y = numpy.empty(8192, dtype=complex), numpy.empty(8192, dtype=complex)
    for v in (x, y):
        v.real, v.imag = rng.choice(parts, 8192), rng.choice(parts, 8192)
    ufunc = next(getattr(numpy, p.ufuncs[0]) for p in TABLE.values() if p.numexpr == spelling)
    with numpy.errstate(all="ignore"):
        theirs = numexpr.evaluate(f"x {spelling} y", local_dict={"x": x, "y": y}, optimization="none").view(float)
        ours = ufunc(x, y).view(float)
    # each part's bits (the sign of a zero too), any nan as any other
    same = bool(((theirs.view(numpy.int64) == ours.view(numpy.int64)) | (numpy.isnan(theirs) & numpy.isnan(ours))).all())
    return None if same else (f"numexpr's complex `{spelling}` rounds apart from numpy's loop on this CPU (numpy's "
                              "fuses multiply-adds, FMA): not numpy's bits")


def probe_real(spelling) -> str | None:
    """Compare numexpr's kernel of a function (an entry's `numexpr`, whose `numpy_loop` is
    "probe") with numpy's loop on float64 values of every magnitude and sign (zeros, infinities,
    nans and subnormals among them; small, huge and moderate arguments, each branch of an
    argument reduction): None where every element has numpy's bits, else why not. numpy's
    vectorized (SIMD) loops of sin and cos round apart from libm on some CPUs; where both call
    the same libm, numexpr's kernel is numpy's bits and the function stays in a region's kernels."""
    import numpy
    try:
        import numexpr
    except (ImportError, ValueError):
        return "numexpr is not installed"
    rng = numpy.random.default_rng(28)
    # (a few thousand values: the probe runs in the first gradient, whose peak memory is measured)
    x = numpy.concatenate([rng.standard_normal(2048) * 10.0 ** rng.integers(-300, 300, 2048),
                           rng.uniform(-10.0, 10.0, 2048), numpy.linspace(-2.0, 2.0, 2049),
                           [0.0, -0.0, numpy.inf, -numpy.inf, numpy.nan, 1e-310, -1e-310, 2.0 ** 60, 1e300]])
    ufunc = next(getattr(numpy, p.ufuncs[0]) for p in TABLE.values() if p.numexpr == spelling)
    with numpy.errstate(all="ignore"):
        theirs = numexpr.evaluate(f"{spelling}(x)", local_dict={"x": x}, optimization="none")
        ours = ufunc(x)
    same = bool(((theirs.view(numpy.int64) == ours.view(numpy.int64)) | (numpy.isnan(theirs) & numpy.isnan(ours))).all())
    return None if same else f"numexpr's {spelling} rounds apart from numpy's loop on this CPU: numpy's loop runs it"


class Unfusable(Exception):
    """A rule that a numexpr kernel cannot express: it keeps its ordinary path."""


def is_number(expr) -> bool:
    """Whether a tree of the fused IR (core/fusion.py) is a number's text."""
    if expr.__class__ is not str:
        return False
    try:
        float(expr)
    except ValueError:
        return False
    return True


def complex_constant(text):
    """The complex number of a complex constant's text in the fused IR ("complex(-0.0, -1.0)", as
    core/fusion.py writes one: only a region's numpy steps take them), else None."""
    if text.__class__ is not str or not text.startswith("complex("):
        return None
    real, imag = text[len("complex("):-1].split(", ")
    return complex(float(real), float(imag))


def is_constant(text) -> bool:
    """Whether a tree of the fused IR is a number's text, real or complex."""
    return is_number(text) or complex_constant(text) is not None


def numexpr_text(tree) -> str:
    """numexpr's text of a tree of the fused IR (core/fusion.py): each node's template is
    numexpr's spelling."""
    if tree.__class__ is str:
        return tree
    return tree[0].format(*(numexpr_text(operand) for operand in tree[1:]))


class Expression:
    """One kernel's expression: its tree of the fused IR and numexpr's text printed from it (the
    device's CUDA source is printed from the same tree: core/device_kernels.py)."""
    __slots__ = ("tree", "text")

    def __init__(self, tree):
        self.tree, self.text = tree, numexpr_text(tree)

    def __repr__(self):
        return f"Expression({self.text})"
