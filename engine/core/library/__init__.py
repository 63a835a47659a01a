"""numpy's functions with numpy's arguments (`axis=None, keepdims=False`, `ddof=0`, `ord=None`),
as composites of the table's entries: each differentiates at every order with no rule of its
own. FUNCTIONS maps the builtin name to the function; the table's entries with `builtin=`
(log1p, erf, det, ...) are the rest of the builtins. Core errors only: numpy-like ValueError,
IndexError and TypeError, which the language locates."""
from __future__ import annotations

from . import constructors, elementwise, linalg, reductions, shapes

FUNCTIONS = {
    **{name: getattr(elementwise, name) for name in (
        "square", "reciprocal", "negative", "power", "deg2rad", "rad2deg", "clip", "floor_divide", "mod", "expit",
        "digamma", "polygamma", "betaln", "i0", "i1", "j0", "j1")},
    "round": elementwise.round_, "around": elementwise.round_, "remainder": elementwise.mod,
    "int": elementwise.int_, "float": elementwise.float_,
    **{name: getattr(reductions, name) for name in (
        "prod", "var", "std", "logsumexp", "average", "argmax", "argmin", "cumsum", "cumprod",
        "cummax", "cummin", "logcumsumexp", "sort", "argsort", "topk")},
    **{name: getattr(shapes, name) for name in (
        "concatenate", "stack", "hstack", "vstack", "split", "pad", "expand_dims", "squeeze", "flip",
        "roll", "broadcast_to", "tile", "repeat", "transpose", "moveaxis", "swapaxes", "diag",
        "diagonal", "trace", "triu", "tril")},
    **{name: getattr(constructors, name) for name in (
        "eye", "identity", "full", "zeros_like", "ones_like", "full_like", "array", "asarray")},
    **{name: getattr(linalg, name) for name in (
        "outer", "inner", "kron", "cross", "tensordot", "einsum", "slogdet", "norm", "eigh", "svd",
        "pinv")},
}

# Constructors take the float type of the arrays they make: the language passes its working one.
TAKES_DTYPE = frozenset({"eye", "identity", "full"})

# np.linalg.NAME for these names is the builtin of the same name (det inv solve cholesky are
# table entries; norm keeps the language's builtin with ord/axis/keepdims).
LINALG_NAMES = ("det", "slogdet", "inv", "solve", "norm", "cholesky", "svd", "eigh", "eigvalsh", "pinv")
