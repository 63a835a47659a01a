"""Complex values on the GPU path, checked on the strict cupy stand-in (no GPU is lent to CI):
values, gradients in both modes, Jacobians, Hessians and f'(z) are the CPU's (issue 32)."""
import numpy as np
import pytest
import autodiff

HPD = np.array([[3, 1j, 0.5], [-1j, 2, 0.2 - 0.1j], [0.5, 0.2 + 0.1j, 4]])
Z = np.array([0.3 + 0.4j, 1.2 - 0.7j, -2 + 0.1j])
CASES = [("sum(abs(cholesky(A))**2)", {"A": HPD}), ("sum(abs(qr(A)[1])**2)", {"A": HPD}),
         ("abs(det(A))", {"A": HPD}), ("real(sum(inv(A) @ z))", {"A": HPD, "z": Z}),
         ("sum(abs(fft(z))**2)", {"z": Z}), ("var(z) + abs(logsumexp(z))", {"z": Z}),
         ("sum(abs(exp(1j * z) * z + z * z) ** 2)", {"z": Z}), ("sum(abs(svd(A)[1]))", {"A": HPD}),
         ("sum(eigvalsh(A))", {"A": HPD}), ("real(slogdet(A)[1])", {"A": HPD})]

@pytest.mark.parametrize("source, at", CASES)
def test_complex_on_the_standin_gpu_is_the_cpus(standin_gpu, source, at):
    cpu = autodiff.grad(source, at=at)
    gpu = autodiff.grad(source, at=at, device="gpu")
    assert np.allclose(gpu.value, cpu.value, rtol=1e-12)
    for k in at:
        assert np.allclose(gpu.gradient[k], cpu.gradient[k], rtol=1e-10, atol=1e-12), k
    fwd = autodiff.grad(source, at=at, device="gpu", mode="forward")
    for k in at:
        assert np.allclose(fwd.gradient[k], cpu.gradient[k], rtol=1e-10, atol=1e-12), k


def test_complex_jacobians_hessians_and_derivatives_on_the_standin_gpu_are_the_cpus(standin_gpu):
    for call, kwargs in [(autodiff.jacobian, {"source": "exp(z) * z", "at": {"z": Z}}),
                         (autodiff.hessian, {"source": "real(sum(z ** 3))", "at": {"z": Z[:2]}})]:
        cpu, gpu = call(**kwargs), call(**kwargs, device="gpu")
        got = gpu.jacobian["z"] if call is autodiff.jacobian else gpu.hessian["z"]["z"]
        want = cpu.jacobian["z"] if call is autodiff.jacobian else cpu.hessian["z"]["z"]
        assert np.allclose(got, want, rtol=1e-12, atol=1e-14)
    cpu = autodiff.derivatives("exp(z) * z", at={"z": 1j}, order=3)
    gpu = autodiff.derivatives("exp(z) * z", at={"z": 1j}, order=3, device="gpu")
    assert np.allclose(gpu.derivatives, cpu.derivatives, rtol=1e-12)
