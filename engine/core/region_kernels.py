"""Running a fused region's kernels (core/region_program.py's schedule) on arrays, writing into
buffers of core/buffer_pool.py where it has one of the shape (numexpr's `out=`, a ufunc's `out=`).
The arrays the kernels make and free (a temporary read for the last time, a value the reverse
sweep has read) go back to the pool when nothing else refers to them, never a user's array, a
value a tape keeps, an output handed out (the caller lends those) or a view.
"""
from __future__ import annotations

from functools import partial

from .backend import np, xp
from .buffer_pool import alone, keep, poolable, take
from .fused import Unfusable, evaluate, evaluate_into
from .numbers import finite
from .primitives import broadcast_shape
from .region_threads import MIN_SPLIT_ELEMENTS, apply_split, run_parts

INPUTS = ("g", "nan_marker")       # names bound by the caller, besides the leaves a0, a1, ...
# what numexpr raises where it refuses a kernel (too many operands or registers, a type it has no
# opcode for); the device's compiler's refusals are device_kernels.evaluate's None
KERNEL_ERRORS = (ValueError, TypeError, RuntimeError, KeyError, NotImplementedError)


def give(names, name) -> None:
    """Free `name` of `names`, pooling its array where `names` held the only reference to it."""
    if name in INPUTS or name[0] == "a" or not alone(names, name) or not poolable(names[name], np()):
        del names[name]
    else:
        keep(names.pop(name))


def run_kernels(kernels, names) -> None:
    """Run the kernels in order on `names` (name -> array), freeing what each reads last. A
    function's argument made here and read by nothing after is overwritten in place."""
    made = set()
    for kernel in kernels:
        if kernel.check:
            if has_zero(names[kernel.name]):
                raise Unfusable("a guard holds (sqrt at 0): op by op, for its note")
            for name in kernel.frees:
                del names[name]
            continue
        if kernel.steps:
            out = run_pipeline(kernel, {name: names[name] for name in kernel.reads})
        elif kernel.operands:
            out = apply_ufunc(getattr(xp(), kernel.function), [names[o] if o.__class__ is str else o
                                                              for o in kernel.operands])
        elif kernel.function is not None:
            argument = kernel.reads[0]      # overwritten where it is a temporary read for the last time
            out = apply_function(kernel, names[argument], argument in made and argument in kernel.frees)
        else:
            inputs = {name: names[name] for name in kernel.reads}
            buffer = None if kernel.boolean or kernel.complex else take(broadcast_shape(*(v.shape for v in inputs.values())))
            out = evaluate_into(kernel.expr, inputs, buffer) if buffer is not None else evaluate(kernel.expr, inputs)
            inputs = None                   # its references would keep the freed arrays out of the pool
            if out is None:
                raise Unfusable("numexpr is not installed")
        names[kernel.name] = out
        made.add(kernel.name)
        for name in kernel.frees:
            if name != kernel.reads[0] or kernel.function is None or kernel.steps or kernel.operands:
                give(names, name)
            else:
                del names[name]             # a function's argument it overwrote in place: its output


def apply_function(kernel, argument, in_place):
    """The array module's kernel.function of `argument`, into `argument` itself where in_place."""
    function = getattr(xp(), kernel.function)
    split = argument.__class__ is np().ndarray and argument.size >= MIN_SPLIT_ELEMENTS
    if split:                                  # over the cores (region_threads): one call's bits
        function = partial(apply_split, function)
    if in_place:
        return function(argument, out=argument)
    buffer = take(argument.shape) if argument.ndim and argument.dtype.kind != "c" else None
    if buffer is None and split:
        buffer = np().empty(argument.shape, dtype=argument.dtype)
    out = function(argument) if buffer is None else function(argument, out=buffer)
    if out.__class__ is not argument.__class__:
        out = xp().asarray(out)          # of a 0-d array (a traced number): a scalar
    return out


def apply_ufunc(ufunc, operands):
    """numpy's ufunc of the operands (arrays and numbers: a region's complex step numpy runs), its
    output's parts on several threads where the arrays are numpy's, of one shape and contiguous
    (an elementwise loop computes each element alike in any part: one call's bits)."""
    arrays = [v for v in operands if v.__class__ not in (float, complex)]
    numpy = np()
    shape = arrays[0].shape
    if (arrays[0].size < MIN_SPLIT_ELEMENTS or not all(v.__class__ is numpy.ndarray and v.shape == shape
                                                       and v.flags.c_contiguous for v in arrays)):
        return ufunc(*operands)
    out = numpy.empty(shape, dtype=numpy.result_type(*operands))
    flat = [v if v.__class__ in (float, complex) else v.reshape(-1) for v in operands]
    target = out.reshape(-1)
    run_parts(lambda lo, hi: ufunc(*(v if v.__class__ in (float, complex) else v[lo:hi] for v in flat),
                                   out=target[lo:hi]), target.size)
    return out


def run_pipeline(kernel, arrays):
    """A pipeline kernel (core/region_pipeline.py): its steps and function in one pass, each thread
    over its part of a buffer of the output's shape; where the arrays are not all numpy's, of that
    shape and contiguous (or 0-d), its argument's numexpr kernel and the function."""
    numpy = np()
    shape = broadcast_shape(*(v.shape for v in arrays.values()))
    if not shape or not all(v.__class__ is numpy.ndarray and (not v.ndim or (v.shape == shape and v.flags.c_contiguous))
                            for v in arrays.values()):
        argument = evaluate(kernel.argument, arrays)
        if argument is None:
            raise Unfusable("numexpr is not installed")
        return apply_function(kernel, argument, in_place=True)         # numexpr's new array
    out = take(shape)
    out = numpy.empty(shape) if out is None else out
    target = out.reshape(-1)
    flat = {name: v.reshape(-1) if v.ndim else v for name, v in arrays.items()}
    calls = [(getattr(numpy, ufunc), operands) for ufunc, operands in kernel.steps]
    function = getattr(numpy, kernel.function)

    def part(lo, hi):
        chunk = target[lo:hi]
        for ufunc, operands in calls:
            ufunc(*(chunk if operand is None else operand if operand.__class__ is float
                    else flat[operand] if not flat[operand].ndim else flat[operand][lo:hi] for operand in operands),
                  out=chunk)
        function(chunk, out=chunk)
    run_parts(part, target.size)
    return out


def has_zero(a) -> bool:
    """Whether an element of `a` is 0 (or -0), over the threads where it is large."""
    if a.__class__ is not np().ndarray or not a.flags.c_contiguous:
        return bool((a == 0.0).any())
    flat, found = a.reshape(-1), []            # run_parts: one part below its split size
    run_parts(lambda lo, hi: found.append(bool((flat[lo:hi] == 0.0).any())), flat.size)
    return any(found)


def run_checked(kernels, names, out_name):
    """Run the kernels; Unfusable if numexpr refuses one or the output is not finite (the region
    then runs op by op, for its notes)."""
    try:
        run_kernels(kernels, names)
    except Unfusable:
        raise
    except KERNEL_ERRORS as e:          # numexpr refused the kernel (too big, ...): op by op
        raise Unfusable(f"the kernel library refused a kernel ({e.__class__.__name__}: {e})") from None
    out = names[out_name]
    if not finite(out):                 # on a GPU, one number comes back (one sync per region)
        raise Unfusable("a non-finite output: op by op, for its notes")
    return out
