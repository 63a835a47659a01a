"""The threads of a fused region's kernels: numpy's array functions (tanh, exp, sqrt, log, ...)
split over the cores, and numexpr's workers (`more_numexpr_workers`).

numpy's SIMD loops for these beat numexpr's, but run on one core; numpy releases the GIL inside
a ufunc's loop, so a few threads applying the ufunc to contiguous chunks of the same arrays
(`out=` the matching chunk of the output) run side by side. The function is elementwise, and
every chunk is a contiguous run like the whole, so the bits are those of one call.

The pool starts on the first split (nothing at import: start-up stays as it was) with a thread
for each core numexpr's kernels run on (numexpr's own count, as the host left it), and arrays
under MIN_SPLIT_ELEMENTS, 0-d or not contiguous take one plain call.
"""
from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

MIN_SPLIT_ELEMENTS = 1 << 17     # below this a thread's hand-off costs about what it saves
CHUNK_ALIGN = 4096               # chunk boundaries on whole pages of float64 (and SIMD widths)
POOL_LOCK = threading.Lock()
WORKERS: list = []               # [the executor, its thread count], once started
KERNEL_CORES: list = []          # [numexpr's thread count as the host left it], once numexpr is loaded
FEW_CORES = 4                    # up to this many cores numexpr gets WORKERS_PER_CORE workers a core
WORKERS_PER_CORE = 2
HOST_SETTINGS = ("NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS", "OMP_NUM_THREADS")


def forget_pool() -> None:
    """In a forked child (a check batch's worker) the pool's threads do not exist: a new one
    starts on the child's first split instead of waiting forever on the parent's (and a lock a
    parent's thread held at the fork is a new, free one)."""
    global POOL_LOCK
    del WORKERS[:]
    POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=forget_pool)


def thread_count() -> int:
    """The cores numexpr's kernels run on (its thread count before `more_numexpr_workers`), else
    the cores; 1: no split."""
    if KERNEL_CORES:
        return KERNEL_CORES[0]
    try:
        import numexpr            # lazy: it may be missing (fused.py's concern), and start-up stays fast
        return max(1, int(numexpr.get_num_threads()))
    except (ImportError, ValueError):    # missing or unusable (a NUMEXPR_NUM_THREADS that is no number)
        return max(1, os.cpu_count() or 1)


def more_numexpr_workers(numexpr) -> None:
    """Two numexpr workers per core where its kernels run on FEW_CORES or fewer, unless the host
    chose the count (an environment variable of HOST_SETTINGS, or set_num_threads before the first
    kernel). numexpr's workers take a kernel's blocks in turns and the caller waits; with one
    worker per core, the scheduler of this 2-core VM now and then woke both on one core after an
    idle gap, and that kernel took twice as long: `sin(x) * x + 1.0` at 1e6 after a 2 ms sleep was
    slow (1.5x its tenth percentile) in 13 and 28 of 95 runs, in 3 of 95 with two workers per
    core, whose back-to-back time was the same (2.8 ms). On more cores one misplaced worker costs
    a share of 1/cores, and numexpr keeps its count. numpy's functions split here keep one thread
    per core: the caller computes a part itself, so a woken worker finds its core busy."""
    threads = max(1, int(numexpr.get_num_threads()))
    KERNEL_CORES[:] = [threads]
    if (any(os.environ.get(name) for name in HOST_SETTINGS) or threads != getattr(numexpr, "nthreads", threads)
            or not 1 < threads <= FEW_CORES):
        return
    numexpr.set_num_threads(min(threads * WORKERS_PER_CORE, int(getattr(numexpr, "MAX_THREADS", threads))))


def executor():
    """The pool, and the threads the work is split over (the caller's own among them)."""
    if not WORKERS:
        with POOL_LOCK:
            if not WORKERS:
                threads = thread_count()
                pool = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="region") if threads > 1 else None
                WORKERS.extend((pool, threads))
    return WORKERS[0], WORKERS[1]


def splittable(argument, out) -> bool:
    return (argument.size >= MIN_SPLIT_ELEMENTS and argument.shape == out.shape
            and argument.flags.c_contiguous and out.flags.c_contiguous)


def apply_split(function, argument, out):
    """`function(argument, out=out)`, its chunks on several threads where that pays. `out` may be
    `argument` itself (in place: each chunk reads and writes its own run)."""
    if argument.size < MIN_SPLIT_ELEMENTS or not splittable(argument, out):
        return function(argument, out=out)
    source, target = argument.reshape(-1), out.reshape(-1)     # views: contiguous
    run_parts(lambda lo, hi: function(source[lo:hi], out=target[lo:hi]), source.size)
    return out


def run_parts(task, size) -> None:
    """`task(lo, hi)` over contiguous runs that cover range(size), on the pool's threads (the
    caller's among them) where `size` is worth it, else once over all of it."""
    pool, threads = executor() if size >= MIN_SPLIT_ELEMENTS else (None, 1)
    if pool is None:
        task(0, size)
        return
    step = -(-size // threads)
    step = -(-step // CHUNK_ALIGN) * CHUNK_ALIGN
    bounds = [(start, min(start + step, size)) for start in range(step, size, step)]
    # numpy 2's error state (the engine's seterr(all="ignore")) is the caller's context, which a
    # pool thread does not inherit: each chunk runs in a copy of it, or a nan warns on stderr
    # a worker drops its work item (and so `task`, and the arrays its closure holds) only after it
    # has set the future's result: the caller, woken, would find those arrays held still and not
    # give them back to the buffer pool (core/buffer_pool.py's `alone`), now and then. The workers
    # reach the task through `held`, which the caller empties once every part is done
    context = contextvars.copy_context()
    held = [task]
    futures = [pool.submit(context.copy().run, _part, held, lo, hi) for lo, hi in bounds]
    try:
        task(0, min(step, size))
    finally:
        errors = [future.exception() for future in futures]       # every part done (waits)
        held.clear()
    for error in errors:
        if error is not None:
            raise error                     # a worker's error is raised here


def _part(held, lo, hi) -> None:
    held[0](lo, hi)
