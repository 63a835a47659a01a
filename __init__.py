"""autodiff: differentiate expressions and small Python-like programs, exactly.

The public Python API (the CLI is built on it):

    >>> import autodiff
    >>> r = autodiff.grad("x**2*y + y + 2", at={"x": 3, "y": 4})
    >>> r.value, r.gradient["x"], r.gradient["y"]
    (42.0, 24.0, 10.0)
"""
__version__ = "0.1.0"

# The engine's entry points (engine/api.py), and the typed results they return.
_ENTRY_POINTS = ("grad", "evaluate", "jacobian", "hessian", "derivatives", "graph", "explain", "check_gradient",
                "check_jacobian", "check_hessian", "check_file", "GradResult", "RunResult", "JacobianResult",
                "HessianResult", "DerivativeResult", "CheckReport", "CaseResult", "Limits", "function",
                "release_buffers")

__all__ = [*_ENTRY_POINTS, "SourceError", "__version__"]


def __dir__():
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):
    # Lazy: `import autodiff` stays cheap; the engine loads on first use.
    if name in _ENTRY_POINTS:
        from .engine import api
        return getattr(api, name)
    if name == "testing":              # autodiff.testing.assert_gradient
        from importlib import import_module
        return import_module(f"{__name__}.testing")
    if name == "SourceError":
        from .parser.errors import SourceError
        return SourceError
    raise AttributeError(f"module 'autodiff' has no attribute {name!r}")
