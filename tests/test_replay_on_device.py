"""A replayed or recording run on the GPU gives its results on the host, as the interpreted run
does: the first call at an input signature is interpreted, the second records the trace, the
later ones replay it (on the strict stand-in for cupy, where a device array reaching numpy fails)."""
import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import backend
from test_fused_regions import CHAIN       # benchmarks/_reference_arrays.CHAIN

LARGE = 1 << 17          # replayed since the byte budget (diff/large_trace.py)


def host(v) -> bool:
    if isinstance(v, dict):
        return all(host(x) for x in v.values())
    return v.__class__ in (float, int, bool) or v.__class__ is np.ndarray


@pytest.mark.parametrize("source, at", [
    ("sum(x * x) + y", {"x": np.linspace(0.1, 1.0, 5), "y": 2.0}),
    ("x * x * y", {"x": 3.0, "y": 4.0}),
    ("def f(x):\n    m = max(x)\n    return m + log(sum(exp(x - m)))\n", {"x": np.linspace(-1.0, 1.0, LARGE)}),
    (CHAIN, {"x": np.linspace(-2.0, 2.0, LARGE)}),
])
def test_every_call_gives_host_results(source, at, standin_gpu, tmp_path):
    backend.select_device("gpu")
    if source.startswith("def"):
        (tmp_path / "f.py").write_text(source)
        source = str(tmp_path / "f.py")
    f = api.function(source)
    for _ in range(4):       # (evaluate first: its second call records, its third replays)
        assert host(f(at)) and host(f(at))
        value = f(at)
        grads = f.grad(at)
        assert host(value) and host(grads), (type(value), {k: type(g) for k, g in grads.items()})
        run = f.evaluate_result(at)
        result = f.grad_result(at)
        assert host(run.value) and host(run.inputs)
        assert host(result.value) and host(result.gradient) and host(result.inputs)
        jacobian = f.jacobian(at)
        assert host(jacobian), {k: type(j) for k, j in jacobian.items()}


def test_gradients_replay_on_the_device_with_the_interpreters_bits(standin_gpu):
    # the recording check compared the replay's device arrays with the interpreted run's host
    # results, which never matched: no gradient replayed on a GPU
    backend.select_device("gpu")
    at = {"x": np.linspace(0.1, 1.0, 5), "y": 2.0}
    f = api.function("sum(sin(x) * x) * y + y * y")
    results = [f.grad_result(at) for _ in range(4)]
    assert f.replays >= 2
    first = results[0]
    for result in results[1:]:
        assert host(result.value) and host(result.gradient)
        assert np.asarray(result.value).tobytes() == np.asarray(first.value).tobytes()
        for name in first.gradient:
            assert np.asarray(result.gradient[name]).tobytes() == np.asarray(first.gradient[name]).tobytes()
