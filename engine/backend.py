"""The array module seam: numpy on the CPU, cupy on a GPU. The only place that imports either.

numpy itself loads on first use, so a scalar-only command never pays for it. cupy loads only
when a GPU is asked for (`use("cupy")`).
"""
from __future__ import annotations

_np = None
_xp = None
_name = "numpy"


def np():
    """numpy, imported on first call. Floating-point warnings are silenced: the engine reports
    non-finite values itself, with the node that produced them."""
    global _np
    if _np is None:
        import numpy
        numpy.seterr(all="ignore")
        _np = numpy
    return _np


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
