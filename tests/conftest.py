"""Test-wide settings. `AUTODIFF_TEST_DEVICE=standin` runs the engine on the strict CPU stand-in for
cupy (tests/strict_cupy.py) as its GPU, so a numpy call on a device array, an implicit copy to the
host or a numpy/device mix fails here as it would on a GPU. `.ci/run` runs the engine tests so a
second time. Tests marked `gpu` need cupy and a CUDA device: they are skipped without them (under
the stand-in they run on it)."""
import os
import sys
from pathlib import Path

import pytest

from autodiff.engine.core import backend

STANDIN = os.environ.get("AUTODIFF_TEST_DEVICE", "") == "standin"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs cupy and a CUDA device (skipped without them)")
    if STANDIN:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import strict_cupy
        backend.provide_gpu_module(strict_cupy)
        backend.select_device("gpu")


def real_gpu_available() -> bool:
    """cupy with a CUDA device; under the stand-in, never (the stand-in then plays the GPU)."""
    if STANDIN:
        return False
    try:
        backend.provide_gpu_module(None)
        with backend.on_device("gpu"):
            return True
    except backend.DeviceUnavailable:
        return False


def pytest_collection_modifyitems(config, items):
    if STANDIN or not any(item.get_closest_marker("gpu") for item in items) or real_gpu_available():
        return                   # under the stand-in the GPU tests run on it: their own code is checked
    skip = pytest.mark.skip(reason="needs cupy and a CUDA device (pip install 'autodiff[gpu]')")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture
def standin_gpu():
    """The strict stand-in as the GPU for one test; the device and module before it come back after."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import strict_cupy
    before = backend.device()
    backend.provide_gpu_module(strict_cupy)
    strict_cupy.SYNCS[0] = 0
    try:
        yield strict_cupy
    finally:
        if not STANDIN:
            backend.provide_gpu_module(None)
        backend.select_device(before)
