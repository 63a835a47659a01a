"""How `autodiff emit` writes each builtin of the language: one way per builtin, stated here only
(issue 28 item 8: a builtin cannot be in two lists of ways, nor silently in none).

The ways, and the module that writes each:
- "entry": the application of its table entry (core/primitives.py), whose rules give the
  derivative: a builtin whose entry is elementwise or `emits_at_shapes`. Derived from the entry.
- "library": the library function's recorded entries (emit/library_calls.py): var, std, pinv...
- "form": a composite of entries chosen by its numpy arguments (emit/builtin_forms.py): norm...
- "frequencies": np.fft's fftfreq and rfftfreq (emit/fft_forms.py).
- "reduction": sum, mean, max, min over numpy's axis (emit/lower.py's reduction).
- "slogdet": the pair (sign, logabsdet) (emit/lower.py).
- "cut": stop_gradient and detach, the value with no derivative.
- "count": len, a number no derivative flows through.
- "derivative", "directional": grad(h), value_and_grad(h), hessian(h); jvp and vjp calls
  (emit/derivatives.py).
- "numpy": numpy's function of its name, its value only: emit refuses it where the output's
  derivative goes through it (emit/activity.py).
- "refused": with the reason REFUSED states, or that numpy has no function of its name.
A second spelling (absolute, amax, amin, remainder) is written as the builtin it spells."""
from __future__ import annotations

from ..core.backend import np
from ..lang.builtins import STOP_GRADIENT
from ..lang.numpy_builtins import SECOND_SPELLINGS

BY_WAY = {
    "library": ("var", "std", "square", "reciprocal", "negative", "power", "pinv", "kron", "fft", "ifft", "rfft",
                "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn",
                "fftshift", "ifftshift", "complex", "cumsum", "transpose", "prod", "outer", "eigvalsh", "float_power",
                "trapezoid", "trapz", "cov", "polyval"),
    "form": ("norm", "reshape", "dot", "clip", "cumprod", "trace", "diagonal", "squeeze", "triu", "tril", "diag",
             "where", "einsum", "tensordot", "logsumexp", "concatenate", "split", "stack", "solve_triangular"),
    "frequencies": ("fftfreq", "rfftfreq"),
    "reduction": ("sum", "mean", "max", "min"),
    "slogdet": ("slogdet",),
    "cut": STOP_GRADIENT,
    "count": ("len",),
    "derivative": ("grad", "value_and_grad", "hessian"),
    "directional": ("jvp", "vjp"),
}
WAY = {name: way for way, names in BY_WAY.items() for name in names}
# why emit refuses a builtin, as the hint of its refusal (emit/iteration.py writes the loops,
# emit/custom.py the rules)
REFUSED = {
    **dict.fromkeys(("range", "enumerate", "zip"), "emit writes it as what a for loop counts through only "
                                                   "(for i in range(n): ...)"),
    **dict.fromkeys(("custom_vjp", "custom_jvp"), "emit writes it as a decorator only (@custom_vjp, then "
                                                  "f.defvjp(fwd, bwd))"),
    "int": "write x.astype(int), numpy's trunc",
    "float": "write x itself: the language's numbers are floats already",
}
NO_NUMPY = "emit writes numpy, which has no function of its name: differentiate it with `autodiff grad` instead"


def first_spelling(name: str) -> str:
    """The builtin a second spelling spells (absolute: abs), else `name`."""
    return SECOND_SPELLINGS.get(name, name)


def way_of(name: str, entries: dict, module: str = "") -> str:
    """The way emit writes the builtin `name` (a first spelling); `entries`: the table's entries by
    builtin name (emit/lower.py's elementwise_builtins)."""
    way = WAY.get(name)
    if way is not None:
        return way
    prim = entries.get(name)
    if prim is not None and (prim.elementwise or prim.emits_at_shapes):
        return "entry"
    return "refused" if name in REFUSED or numpy_spelling(name, module) is None else "numpy"


def refused_reason(name: str) -> str:
    """Why emit refuses the builtin `name` (its way "refused"), as what to write instead."""
    return REFUSED.get(name, NO_NUMPY)


def numpy_spelling(name: str, module: str):
    """numpy's function the language's builtin `name` is (the language takes numpy's names)."""
    if name == "len":
        return "len"
    if name in REFUSED or WAY.get(name) in ("cut", "derivative", "directional"):
        return None
    numpy = np()
    if module.endswith("linalg") and hasattr(numpy.linalg, name):
        return f"np.linalg.{name}"
    if hasattr(numpy, name) and callable(getattr(numpy, name)):
        return f"np.{name}"
    return f"np.linalg.{name}" if hasattr(numpy.linalg, name) else None
