"""On a real GPU (cupy and a CUDA device; skipped without them, see conftest.py): the seed examples,
the rules table, a program with control flow, a Hessian and a check file, each equal to the CPU's
result to rounding. benchmarks/gpu.sh runs these first."""
from pathlib import Path

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import backend
from autodiff.engine.core.tape import strip

import test_rules

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parent.parent
RTOL, ATOL = 1e-12, 1e-14                 # rounding: cuda's libm and reductions order sums otherwise


def close(gpu, cpu):
    np.testing.assert_allclose(np.asarray(gpu, dtype=float), np.asarray(cpu, dtype=float), rtol=RTOL, atol=ATOL)


SEEDS = [("x**2*y + y + 2", {"x": 3.0, "y": 4.0}), ("5 + x*y", {"x": 0.5, "y": -2.0}),
         ("2*dot(x, x)", {"x": np.arange(4.0)}), ("sum(x)", {"x": np.arange(4.0)}),
         ("x*x", {"x": np.arange(4.0)}), ("sum(detach(x*x)*x)", {"x": np.arange(4.0)}),
         ("sum((v1 + v2) * 2)", {"v1": np.ones(2), "v2": np.full(2, 2.0)}),
         ("log(x) + sin(x)", {"x": np.linspace(0.5, 3.0, 7)})]


@pytest.mark.parametrize("expr, at", SEEDS, ids=[s for s, _ in SEEDS])
def test_seed_examples_match_the_cpu(expr, at):
    cpu = api.grad(expr, at=at, device="cpu")
    gpu = api.grad(expr, at=at, device="gpu")
    close(gpu.value, cpu.value)
    for name in cpu.gradient:
        close(gpu.gradient[name], cpu.gradient[name])


def _host(v):
    """A device array (cupy's or the stand-in's: both have .get()) as numpy; anything else as it is."""
    return v.get() if hasattr(v, "get") and not isinstance(v, (np.ndarray, dict)) else v


def _to_device(v):
    """A parameter on the device: arrays, and the arrays of a tuple index."""
    if isinstance(v, tuple):
        return tuple(_to_device(p) for p in v)
    return backend.xp().asarray(_host(v)) if hasattr(v, "shape") else v


def _vjp_on(device, case):
    """The case's value and VJP with a fixed cotangent, computed on `device`, as host arrays."""
    with api.device_scope(device):
        args = tuple(backend.xp().asarray(_host(a)) if hasattr(a, "shape") else a for a in case.args)
        params = {k: _to_device(v) for k, v in (case.params or {}).items()}
        moved = test_rules.Case(case.name, args, params, case.diff, case.second, case.label)
        out = test_rules.value(moved, args)
        g = backend.xp().ones_like(out) if hasattr(out, "shape") else 1.0
        grads = test_rules.vjp(moved, args, g)
        return backend.to_host(strip(out)), [backend.to_host(strip(v)) for v in grads]


@pytest.mark.parametrize("case", test_rules.DIFF_CASES, ids=repr)
def test_rules_table_matches_the_cpu(case):
    cpu_value, cpu_grads = _vjp_on("cpu", case)
    gpu_value, gpu_grads = _vjp_on("gpu", case)
    close(gpu_value, cpu_value)
    for g, c in zip(gpu_grads, cpu_grads):
        close(g, c)


def test_a_program_with_control_flow_matches_the_cpu():
    program = str(ROOT / "samples/programs/control.py")
    for a in (0.37, -1.5, 2.0):
        cpu = api.grad(program, at={"a": a}, device="cpu")
        gpu = api.grad(program, at={"a": a}, device="gpu")
        assert gpu.signature == cpu.signature          # the same branches, decided on the device
        close(gpu.value, cpu.value)
        close(gpu.gradient["a"], cpu.gradient["a"])


def test_a_hessian_matches_the_cpu():
    at = {"x": np.array([-1.2, 1.0, 0.5, 2.0])}
    expr = "sum(100 * (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)"
    for method in ("forward-over-reverse", "reverse-over-reverse"):
        cpu = api.hessian(expr, at=at, method=method, device="cpu")
        gpu = api.hessian(expr, at=at, method=method, device="gpu")
        close(gpu.hessian["x"]["x"], cpu.hessian["x"]["x"])


def test_a_check_file_passes_as_on_the_cpu():
    cases = api.load_check_file(str(ROOT / "samples/checks/seeds.toml"))
    cpu = api.run_check_cases(cases, device="cpu")
    gpu = api.run_check_cases(cases, device="gpu")
    assert [r.verdict for r in gpu] == [r.verdict for r in cpu]
    assert all(r.status == "passed" for r in gpu)


def test_the_chain_fused_on_the_device_equals_it_op_by_op(tmp_path, monkeypatch):
    """The 20-op chain's gradient (benchmarks/gpu_chain.py) with its VJPs fused into device kernels
    (engine/core/device_kernels.py) against the same sweep op by op, on the device both times."""
    import importlib.util
    from autodiff.engine.core import device_kernels, fused
    spec = importlib.util.spec_from_file_location("gpu_chain", ROOT / "benchmarks/gpu_chain.py")
    chain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chain)
    program = tmp_path / "chain.py"
    program.write_text(chain.CHAIN)
    x = np.linspace(-2.0, 2.0, 2 * fused.FUSE_MIN_ELEMENTS)
    device_kernels.KERNELS.clear()
    on = api.grad(str(program), at={"x": x}, device="gpu")
    assert any(device_kernels.KERNELS.values()), "no VJP of the chain ran as a device kernel"
    monkeypatch.setattr(fused, "FUSE_MIN_ELEMENTS", 10 ** 12)
    off = api.grad(str(program), at={"x": x}, device="gpu")
    close(on.value, off.value)
    close(on.gradient["x"], off.gradient["x"])
