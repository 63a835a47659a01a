"""The array module seam: numpy on the CPU, cupy on a GPU. The only place that imports either.

numpy itself loads on first use, so a scalar-only command never pays for it. cupy loads only
when a GPU is asked for (`select_device("gpu")`). Host data (numpy arrays, lists, numbers) goes to
the device once, through `xp().asarray`; results come back once, through `to_host`.
"""
from __future__ import annotations

from contextlib import contextmanager

from .errors import EngineError

_np = None
_xp = None
tune_allocator_on_load = False    # set by the CLI: tune glibc's allocator when numpy loads
_name = "numpy"
_gpu_module = None                # a cupy-like module given by provide_gpu_module (the tests' stand-in)
DEVICES = ("cpu", "gpu")
GPU_INSTALL_HINT = ("pip install 'autodiff[gpu]' (it pulls the cupy build for current CUDA) "
                    "on a machine with an NVIDIA GPU")


class DeviceUnavailable(EngineError):
    """The GPU was asked for but cupy or a CUDA device is missing."""

    def __init__(self, message: str):
        super().__init__("no gpu", message, "device")


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


def loaded_np():
    """numpy if the engine has loaded it, else None (then no array was made: the scalar path)."""
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


@contextmanager
def seen_through(module):
    """np() and xp() give `module` meanwhile: a compiled replay's stand-in for numpy while it
    traces a rule on the CPU (diff/replay_arrays.py), which follows the calls that make arrays."""
    global _np, _xp
    saved = _np, _xp
    _np = _xp = module
    try:
        yield
    finally:
        _np, _xp = saved


def xp():
    """The active array module (numpy unless a GPU was chosen)."""
    global _xp
    if _xp is None:
        _xp = np()
    return _xp


def name() -> str:
    return _name


def provide_gpu_module(module) -> None:
    """Use `module` (cupy-like: ndarray, asarray, asnumpy and numpy's functions) as the GPU's
    array module instead of importing cupy; None forgets it. The tests' strict stand-in."""
    global _gpu_module
    _gpu_module = module


def _gpu_array_module():
    """cupy with at least one CUDA device, or DeviceUnavailable saying what to install."""
    if _gpu_module is not None:
        return _gpu_module
    try:
        import cupy
    except (ImportError, OSError, RuntimeError) as exc:    # missing, or a build that finds no CUDA runtime
        raise DeviceUnavailable(f"the GPU was asked for but cupy is not importable ({exc})") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except (RuntimeError, OSError) as exc:    # cupy's CUDARuntimeError (a RuntimeError): no driver, no device
        raise DeviceUnavailable(f"the GPU was asked for but CUDA finds no device ({exc})") from None
    if count < 1:
        raise DeviceUnavailable("the GPU was asked for but CUDA finds no device")
    return cupy


def select_device(device: str) -> None:
    """Run the engine on "cpu" (numpy) or "gpu" (cupy, or the module given to provide_gpu_module)."""
    global _xp, _name
    if device == "cpu":
        _xp, _name = np(), "numpy"
    elif device == "gpu":
        module = _gpu_array_module()
        np()                                  # host-side helpers (printing, checks) still use numpy
        _xp, _name = module, "cupy"
    else:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")


def device() -> str:
    """The device the engine runs on: "cpu" or "gpu"."""
    return "cpu" if _xp is None or _xp is _np else "gpu"


@contextmanager
def on_device(device_name: str | None):
    """Run a block on `device_name` (None: the current device), then restore the previous one."""
    if device_name is None:
        yield
        return
    global _xp, _name
    before = _xp, _name
    select_device(device_name)
    try:
        yield
    finally:
        _xp, _name = before


def is_array(v) -> bool:
    """An array of the active module (numpy scalars count as arrays: they carry a dtype)."""
    return _np is not None and isinstance(v, (_np.ndarray, _np.generic)) or (
        _xp is not None and _xp is not _np and isinstance(v, _xp.ndarray))


def to_device(v):
    """Host data (a numpy array or scalar) on the active device: one transfer. Identity on the CPU,
    for device arrays and for Python numbers (which cupy takes as they are)."""
    if _xp is None or _xp is _np or not isinstance(v, (_np.ndarray, _np.generic)):
        return v
    return _xp.asarray(v)


def special_functions():
    """scipy.special's functions for the active device: scipy's on the CPU (imported on first use:
    it costs a quarter of a second), cupyx.scipy.special's on a GPU (the stand-in's `special`)."""
    if _xp is None or _xp is _np:
        import scipy.special
        return scipy.special
    special = getattr(_xp, "special", None)
    if special is not None:
        return special
    import cupyx.scipy.special
    return cupyx.scipy.special


def module_of(v):
    """The array module that holds `v` (as cupy.get_array_module): xp() for a device array,
    numpy for anything else (results, which come back to the host)."""
    if _xp is not None and _xp is not _np and isinstance(v, _xp.ndarray):
        return _xp
    return np()


def to_host_value(v):
    """A result as the CPU path gives it: a device array comes back (one transfer), a 0-d one as a
    number (a Python float in float64). Host values are returned as they are."""
    if _xp is None or _xp is _np or not isinstance(v, _xp.ndarray):
        return v
    a = _xp.asnumpy(v)
    if a.ndim:
        return a
    number = a[()]
    return float(number) if number.__class__ is _np.float64 else number


def to_host(v):
    """A value as numpy/Python data for printing (cupy arrays come back to the CPU)."""
    if _xp is not None and _xp is not _np and isinstance(v, _xp.ndarray):
        return _xp.asnumpy(v)
    return v
