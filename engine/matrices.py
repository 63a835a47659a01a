"""The facade's Jacobian, Hessian and n-th derivatives (engine/api.py loads them on first use):
diff/ computes them, views/ fills in NaN provenance when a number is not finite
(`result.nonfinite`, as grad's).
Returns results; never prints."""
from __future__ import annotations

from .diff.forward import JacobianResult
from .diff.forward import jacobian as compute_jacobian
from .diff.higher import DerivativeResult, HessianResult
from .diff.higher import derivatives as compute_derivatives
from .diff.higher import hessian as compute_hessian
from .lang.target import load
from .views.provenance_derivatives import diagnose_derivatives
from .views.provenance_matrices import diagnose_hessian, diagnose_jacobian


def jacobian(source=None, at=None, wrt=None, mode="auto", fn=None, of=None, dtype_name="float64", limits=None,
             target=None, holomorphic=False) -> JacobianResult:
    """J[out..., in...] = ∂out/∂in for each input in `wrt` (all by default); `mode` is "forward",
    "reverse" or "auto" (whichever needs fewer passes). Complex values give real blocks, or with
    `holomorphic` the complex Jacobian of a holomorphic f (result.layout says which axis is which)."""
    target = target or load(source, fn, of)
    result = compute_jacobian(None, at, wrt, mode, dtype_name=dtype_name, limits=limits, target=target,
                              holomorphic=holomorphic)
    diagnose_jacobian(result, target, dtype_name, limits)
    return result


def hessian(source=None, at=None, wrt=None, method="forward-over-reverse", fn=None, of=None,
            dtype_name="float64", limits=None, target=None) -> HessianResult:
    """The Hessian of a scalar target, with its value and gradient; `method` is
    "forward-over-reverse" or "reverse-over-reverse"."""
    target = target or load(source, fn, of)
    result = compute_hessian(None, at, wrt, method, dtype_name=dtype_name, limits=limits, target=target)
    diagnose_hessian(result, target, dtype_name, limits)
    return result


def derivatives(source=None, at=None, order=1, method="reverse", fn=None, of=None, dtype_name="float64",
                limits=None, target=None, wrt=None) -> DerivativeResult:
    """f', ..., f^(order) of a scalar function of one scalar input (`method` "reverse": nested
    tapes, "forward": nested duals); with `wrt`, partial derivatives in that input, the others held."""
    target = target or load(source, fn, of)
    result = compute_derivatives(None, at, order, method, dtype_name=dtype_name, limits=limits, target=target,
                                 wrt=wrt)
    diagnose_derivatives(result, target, dtype_name, limits)
    return result
