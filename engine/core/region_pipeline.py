"""Pipelines: a fused region's array function (numpy's exp, tanh, sqrt, ...) and the arithmetic
that makes its argument, in one pass over memory.

The schedule (core/region_program.py) gives an array function's argument a numexpr kernel of its
own: one pass writes the argument, a second applies the function. Where that argument is read by
the function alone, is kept for no later phase, and is a chain of exact operations (each step has
at most one operand that is the chain so far; the others are arrays its kernel reads, and numbers),
each thread that applies the function to its part of the output first makes the argument's part
there with numpy's ufuncs, in place: one pass, numpy's SIMD loops instead of numexpr's (measured
on the chain, exp(-abs(x)) at 1e6: 1.8 ms as two kernels, 0.9 as one pipeline).

The same bits: + - * abs, negation and division are IEEE operations, exact alike in numpy and
numexpr (which runs without its optimizations: core/fused.py), and x ** 2.0 is x * x there
already. A division by a number, powers, comparisons and where stay in numexpr's kernels. Where the arrays are not all of the output's shape and contiguous (a broadcast
or strided leaf, another backend's arrays), the argument's numexpr kernel runs, then the function.
"""
from __future__ import annotations

from .fused_ir import is_number
from .region_program import Kernel, template_of
from .rules import TABLE

CHAIN = None                # an operand that is the chain so far (the output's part, in place)
# a step's template -> the numpy ufunc that computes it to numexpr's bits: the table's `exact`
# entries, by their first `ufuncs` name, read off the table once, here
UFUNCS = {template_of(prim): prim.ufuncs[0] for prim in TABLE.values() if prim.exact}


def pipelined(program, kernels, kept) -> list:
    """`kernels` with each array function whose argument's kernel only it reads (and no later
    phase: `kept`) made one pipeline kernel, at the argument kernel's place (its reads are freed
    where they were; the argument's array is never made)."""
    readers: dict = {}
    for kernel in kernels:
        for name in kernel.reads:
            readers[name] = readers.get(name, 0) + 1
    position = {kernel.name: i for i, kernel in enumerate(kernels)}
    out = list(kernels)
    for i, kernel in enumerate(kernels):
        if kernel.function is None or kernel.steps or kernel.complex:
            continue                          # (a complex chain: numpy's product is no exact operation)
        argument = kernel.reads[0]
        j = position.get(argument)
        if j is None or readers[argument] != 1 or argument in kept:
            continue
        made = kernels[j]
        calls = None if made.expr is None or made.boolean else chain_of(program.steps, argument, set(made.reads))
        if calls is None:
            continue
        out[i] = None
        out[j] = Kernel(name=kernel.name, expr=None, function=kernel.function, reads=made.reads, frees=(),
                        steps=calls, argument=made.expr)
    return [kernel for kernel in out if kernel is not None]


def chain_of(steps, name, reads):
    """The ufunc calls that make step `name` from `reads` and numbers, innermost first, each
    (ufunc name, operands: a read's name, a number, or CHAIN); None where it is no chain of
    exact operations."""
    calls = []
    while True:
        template, texts, _, boolean = steps[name]
        ufunc = UFUNCS.get(template)
        if boolean or ufunc is None or (ufunc == "divide" and is_number(texts[1])):
            return None
        inner = {text for text in texts if text not in reads and not is_number(text)}
        if len(inner) > 1 or not inner <= steps.keys():
            return None
        calls.append((ufunc, tuple(CHAIN if text in inner else float(text) if is_number(text) else text
                                   for text in texts)))
        if not inner:
            if all(operand.__class__ is float for operand in calls[-1][1]):
                return None                   # numbers alone: no array to run over
            return tuple(reversed(calls))
        name = inner.pop()

