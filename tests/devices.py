"""Moving test data to the engine's device and back: identity on the CPU; on the GPU (or its
strict stand-in, AUTODIFF_TEST_DEVICE=standin) numpy arrays go through the array module's
asarray, as the engine's own inputs do, and results come back through to_host."""
from autodiff.engine.core import backend
from autodiff.engine.core.tape import strip


def device(v):
    """v with its numpy arrays (in tuples, lists and dict values too) on the engine's device."""
    if backend.device() == "cpu":
        return v
    if isinstance(v, (tuple, list)):
        return v.__class__(device(x) for x in v)
    if isinstance(v, dict):
        return {k: device(x) for k, x in v.items()}
    if v.__class__.__module__ == "numpy" and hasattr(v, "dtype"):
        return backend.xp().asarray(v)
    return v


def host(v):
    """v (unboxed) as host data: numpy arrays, numbers, tuples of them."""
    v = strip(v)
    if isinstance(v, (tuple, list)):
        return v.__class__(host(x) for x in v)
    return backend.to_host(v)
