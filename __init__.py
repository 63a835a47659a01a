"""autodiff: differentiate expressions and small Python-like programs, exactly.

The public Python API (the CLI is built on it):

    >>> import autodiff
    >>> r = autodiff.grad("x**2*y + y + 2", at={"x": 3, "y": 4})
    >>> r.value, r.gradient["x"], r.gradient["y"]
    (42.0, 24.0, 10.0)
"""
__version__ = "0.1.0"

__all__ = ["grad", "evaluate", "check_gradient", "function", "SourceError", "__version__"]


def __getattr__(name):
    # Lazy: `import autodiff` stays cheap; the engine loads on first use.
    if name in ("grad", "evaluate", "check_gradient", "function"):
        from .engine import api
        return getattr(api, name)
    if name == "SourceError":
        from .parser.errors import SourceError
        return SourceError
    raise AttributeError(f"module 'autodiff' has no attribute {name!r}")
