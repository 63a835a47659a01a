"""The array module seam: numpy on the CPU, cupy on a GPU. The only place that imports either.

numpy itself loads on first use, so a scalar-only command never pays for it. cupy loads only
when a GPU is asked for (`use("cupy")`).
"""
from __future__ import annotations

_np = None
_xp = None
tune_allocator_on_load = False    # set by the CLI: tune glibc's allocator when numpy loads
_name = "numpy"


def np():
    """numpy, imported on first call. Floating-point warnings are silenced: the engine reports
    non-finite values itself, with the node that produced them."""
    global _np
    if _np is None:
        if tune_allocator_on_load:
            tune_allocator()
        import numpy
        numpy.seterr(all="ignore")
        _np = numpy
    return _np


def tune_allocator() -> bool:
    """Keep freed memory in the process (glibc only). By default glibc returns every large numpy
    temporary to the OS and page-faults it back on the next op; with higher mmap/trim thresholds
    a 20-op chain over 1e6 elements ran about 20% faster here. The CLI calls this for its own
    process; the library never changes its host's allocator. Returns whether it applied."""
    import sys
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20)) and bool(libc.mallopt(m_trim_threshold, 1 << 30))
    except (OSError, AttributeError):          # not glibc (musl, ...): nothing to tune
        return False


def quiet_thread() -> None:
    """Silence numpy's floating-point warnings in the calling thread too (numpy keeps that state
    per thread), if numpy is loaded; np() does it for the thread that loads it."""
    if _np is not None:
        _np.seterr(all="ignore")


def xp():
    """The active array module (numpy unless a GPU was chosen)."""
    global _xp
    if _xp is None:
        _xp = np()
    return _xp


def use(name: str) -> None:
    """Select the array module: "numpy" or "cupy" (the `gpu` extra)."""
    global _xp, _name
    if name == "numpy":
        _xp, _name = np(), "numpy"
    elif name == "cupy":
        try:
            import cupy
        except ImportError as exc:             # cupy missing or no CUDA runtime
            raise RuntimeError("a GPU was asked for but cupy is not importable: "
                               "pip install 'autodiff[gpu]' on a machine with CUDA") from exc
        _xp, _name = cupy, "cupy"
    else:
        raise ValueError(f"unknown backend {name!r}")


def name() -> str:
    return _name


def is_array(v) -> bool:
    """An array of the active module (numpy scalars count as arrays: they carry a dtype)."""
    return _np is not None and isinstance(v, (_np.ndarray, _np.generic)) or (
        _xp is not None and _xp is not _np and isinstance(v, _xp.ndarray))


def to_host(v):
    """A value as numpy/Python data for printing (cupy arrays come back to the CPU)."""
    if _xp is not None and _xp is not _np and isinstance(v, _xp.ndarray):
        return _xp.asnumpy(v)
    return v
