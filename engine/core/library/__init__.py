"""numpy's functions with numpy's arguments (`axis=None, keepdims=False`, `ddof=0`, `ord=None`),
as composites of the table's entries: each differentiates at every order with no rule of its
own. The table's entries with `builtin=` (log1p, erf, det, ...) are the rest of the builtins.
Core errors only: numpy-like ValueError, IndexError and TypeError, which the language locates.

SIGNATURES names each function's module and parameters without importing it: the modules load
on the first call of one of their functions (`function(name)`), so start-up does not pay for
them. tests/test_numpy_builtins.py checks SIGNATURES against the functions themselves.
"""
from __future__ import annotations

import importlib

# builtin name -> (module, function, its parameters: `name` required, `name=` with a default,
# `*name` any number; `name[]` an array (numpy's array_like): a tuple given there is the array
# numpy reads it as, where other parameters take tuples of axes, shapes or counts as they are)
SIGNATURES = {
    "square": ("elementwise", "square", "x[]"),
    "reciprocal": ("elementwise", "reciprocal", "x[]"),
    "negative": ("elementwise", "negative", "x[]"),
    "power": ("elementwise", "power", "x1[] x2[]"),
    "sign": ("elementwise", "sign", "x[]"),
    "deg2rad": ("elementwise", "deg2rad", "x[]"),
    "rad2deg": ("elementwise", "rad2deg", "x[]"),
    "degrees": ("elementwise", "rad2deg", "x[]"),
    "radians": ("elementwise", "deg2rad", "x[]"),
    "clip": ("elementwise", "clip", "a[] a_min[]= a_max[]="),
    "complex": ("elementwise", "complex_", "real[] imag[]"),
    # numpy's float_power: power in floating point (a float32 run keeps float32, its working type)
    "float_power": ("elementwise", "power", "x1[] x2[]"),
    "expit": ("elementwise", "expit", "x[]"),
    "digamma": ("elementwise", "digamma", "x[]"),
    "polygamma": ("elementwise", "polygamma", "n[] x[]"),
    "betaln": ("elementwise", "betaln", "a[] b[]"),
    "i0": ("elementwise", "i0", "x[]"),
    "i1": ("elementwise", "i1", "x[]"),
    "i0e": ("elementwise", "i0e", "x[]"),
    "i1e": ("elementwise", "i1e", "x[]"),
    "j0": ("elementwise", "j0", "x[]"),
    "j1": ("elementwise", "j1", "x[]"),
    "round": ("elementwise", "round_", "a[] decimals="),
    "around": ("elementwise", "round_", "a[] decimals="),
    "int": ("elementwise", "int_", "x[]"),
    "float": ("elementwise", "float_", "x[]"),
    "prod": ("reductions", "prod", "a[] axis= keepdims="),
    "var": ("reductions", "var", "a[] axis= ddof= keepdims="),
    "std": ("reductions", "std", "a[] axis= ddof= keepdims="),
    "logsumexp": ("reductions", "logsumexp", "a[] axis= b[]= keepdims= return_sign="),
    "softmax": ("reductions", "softmax", "x[] axis="),
    "log_softmax": ("reductions", "log_softmax", "x[] axis="),
    "average": ("reductions", "average", "a[] axis= weights[]= returned="),
    "argmax": ("reductions", "argmax", "a[] axis= keepdims="),
    "argmin": ("reductions", "argmin", "a[] axis= keepdims="),
    "cumsum": ("reductions", "cumsum", "a[] axis="),
    "cumprod": ("reductions", "cumprod", "a[] axis="),
    "cummax": ("reductions", "cummax", "a[] axis="),
    "cummin": ("reductions", "cummin", "a[] axis="),
    "logcumsumexp": ("reductions", "logcumsumexp", "a[] axis="),
    "sort": ("reductions", "sort", "a[] axis="),
    "median": ("statistics", "median", "a[] axis= out= overwrite_input= keepdims="),
    "quantile": ("statistics", "quantile", "a[] q axis= out= overwrite_input= method= keepdims="),
    "percentile": ("statistics", "percentile", "a[] q axis= out= overwrite_input= method= keepdims="),
    "nanmedian": ("statistics", "nanmedian", "a[] axis= out= overwrite_input= keepdims="),
    "nanquantile": ("statistics", "nanquantile", "a[] q axis= out= overwrite_input= method= keepdims="),
    "nanpercentile": ("statistics", "nanpercentile", "a[] q axis= out= overwrite_input= method= keepdims="),
    "nansum": ("statistics", "nansum", "a[] axis= keepdims="),
    "nanprod": ("statistics", "nanprod", "a[] axis= keepdims="),
    "nanmean": ("statistics", "nanmean", "a[] axis= keepdims="),
    "nanmax": ("statistics", "nanmax", "a[] axis= keepdims="),
    "nanmin": ("statistics", "nanmin", "a[] axis= keepdims="),
    "nanvar": ("statistics", "nanvar", "a[] axis= ddof= keepdims="),
    "nanstd": ("statistics", "nanstd", "a[] axis= ddof= keepdims="),
    "diff": ("series", "diff", "a[] n= axis= prepend[]= append[]="),
    "convolve": ("series", "convolve", "a[] v[] mode="),
    "interp": ("series", "interp", "x[] xp[] fp[] left= right= period="),
    "searchsorted": ("series", "searchsorted", "a[] v[] side= sorter[]="),
    "argsort": ("reductions", "argsort", "a[] axis="),
    "topk": ("reductions", "topk", "a[] k axis="),
    "polyval": ("series", "polyval", "p[] x[]"),
    "trapezoid": ("series", "trapezoid", "y[] x[]= dx= axis="),
    "trapz": ("series", "trapezoid", "y[] x[]= dx= axis="),
    "cov": ("statistics", "cov", "m[] y[]= rowvar= bias= ddof= fweights[]= aweights[]= dtype="),
    "corrcoef": ("statistics", "corrcoef", "x[] y[]= rowvar= dtype="),
    "size": ("shapes", "size_", "a[] axis="),
    "concatenate": ("shapes", "concatenate", "arrays axis="),
    "stack": ("shapes", "stack", "arrays axis="),
    "hstack": ("shapes", "hstack", "tup"),
    "vstack": ("shapes", "vstack", "tup"),
    "append": ("shapes", "append", "arr[] values[] axis="),
    "split": ("shapes", "split", "ary[] indices_or_sections axis="),
    "pad": ("shapes", "pad", "array[] pad_width mode= constant_values="),
    "expand_dims": ("shapes", "expand_dims", "a[] axis"),
    "squeeze": ("shapes", "squeeze", "a[] axis="),
    "flip": ("shapes", "flip", "m[] axis="),
    "roll": ("shapes", "roll", "a[] shift axis="),
    "broadcast_to": ("shapes", "broadcast_to", "array[] shape"),
    "tile": ("shapes", "tile", "A[] reps"),
    "repeat": ("shapes", "repeat", "a[] repeats axis="),
    "transpose": ("shapes", "transpose", "a[] axes="),
    "moveaxis": ("shapes", "moveaxis", "a[] source destination"),
    "swapaxes": ("shapes", "swapaxes", "a[] axis1 axis2"),
    "diag": ("shapes", "diag", "v[] k="),
    "diagonal": ("shapes", "diagonal", "a[] offset= axis1= axis2="),
    "trace": ("shapes", "trace", "a[] offset= axis1= axis2="),
    "triu": ("shapes", "triu", "m[] k="),
    "tril": ("shapes", "tril", "m[] k="),
    "eye": ("constructors", "eye", "N M= k= dtype="),
    "identity": ("constructors", "identity", "n dtype="),
    "full": ("constructors", "full", "shape fill_value dtype="),
    "zeros_like": ("constructors", "zeros_like", "a[] dtype="),
    "ones_like": ("constructors", "ones_like", "a[] dtype="),
    "full_like": ("constructors", "full_like", "a[] fill_value dtype="),
    "array": ("constructors", "array", "object dtype="),
    "asarray": ("constructors", "asarray", "object dtype="),
    "copy": ("constructors", "copy", "a[]"),
    "dot": ("linalg", "dot", "a[] b[]"),
    "outer": ("linalg", "outer", "a[] b[]"),
    "inner": ("linalg", "inner", "a[] b[]"),
    "kron": ("linalg", "kron", "a[] b[]"),
    "cross": ("linalg", "cross", "a[] b[] axis="),
    "tensordot": ("linalg", "tensordot", "a[] b[] axes="),
    "einsum": ("linalg", "einsum", "subscripts *operands[]"),
    "slogdet": ("linalg", "slogdet", "a[]"),
    "norm": ("linalg", "norm", "x[] ord= axis= keepdims="),
    "eigh": ("linalg", "eigh", "a[] UPLO="),
    "eigvalsh": ("linalg", "eigvalsh", "a[] UPLO="),
    "eig": ("linalg", "eig", "a[]"),
    "qr": ("linalg", "qr", "a[] mode="),
    "matrix_power": ("solvers", "matrix_power", "a[] n"),
    "lstsq": ("solvers", "lstsq", "a[] b[] rcond="),
    "solve_triangular": ("solvers", "solve_triangular",
                         "a[] b[] trans= lower= unit_diagonal= overwrite_b= check_finite="),
    "cho_factor": ("solvers", "cho_factor", "a[] lower= overwrite_a= check_finite="),
    "cho_solve": ("solvers", "cho_solve", "c_and_lower b[] overwrite_b= check_finite="),
    "svd": ("linalg", "svd", "a[] full_matrices= compute_uv="),
    "pinv": ("linalg", "pinv", "a[] rcond= hermitian= rtol="),
    "cond": ("linalg", "cond", "x[] p="),
    "fft": ("fft", "fft", "a[] n= axis= norm="),
    "ifft": ("fft", "ifft", "a[] n= axis= norm="),
    "rfft": ("fft", "rfft", "a[] n= axis= norm="),
    "irfft": ("fft", "irfft", "a[] n= axis= norm="),
    "fft2": ("fft", "fft2", "a[] s= axes= norm="),
    "ifft2": ("fft", "ifft2", "a[] s= axes= norm="),
    "fftn": ("fft", "fftn", "a[] s= axes= norm="),
    "ifftn": ("fft", "ifftn", "a[] s= axes= norm="),
    "rfft2": ("fft", "rfft2", "a[] s= axes= norm="),
    "irfft2": ("fft", "irfft2", "a[] s= axes= norm="),
    "rfftn": ("fft", "rfftn", "a[] s= axes= norm="),
    "irfftn": ("fft", "irfftn", "a[] s= axes= norm="),
    "hfft": ("fft", "hfft", "a[] n= axis= norm="),
    "ihfft": ("fft", "ihfft", "a[] n= axis= norm="),
    "fftshift": ("fft", "fftshift", "x[] axes="),
    "ifftshift": ("fft", "ifftshift", "x[] axes="),
    "fftfreq": ("fft", "fftfreq", "n d="),
    "rfftfreq": ("fft", "rfftfreq", "n d="),
}

# Constructors take the float type of the arrays they make: the language passes its working one.
TAKES_DTYPE = frozenset({"eye", "identity", "full"})


def function(name):
    """The library function behind builtin `name`, its module imported now if not yet."""
    module, attr, _ = SIGNATURES[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), attr)


def parameters(name) -> list:
    """The parameter names of builtin `name`, in order (what keywords it accepts)."""
    return [p.replace("[]", "").strip("*=") for p in SIGNATURES[name][2].split()]


def array_parameters(name) -> tuple:
    """(positions, names, first) of the array parameters of builtin `name` (`name[]`): their
    positions and names, and the position from which every argument is one (`*name[]`; None
    if no such)."""
    positions, names, first = [], [], None
    for i, p in enumerate(SIGNATURES[name][2].split()):
        if "[]" in p:
            positions.append(i)
            names.append(p.replace("[]", "").strip("*="))
            if p.startswith("*"):
                first = i
    return frozenset(positions), frozenset(names), first


def positional_range(name) -> tuple:
    """(fewest, most) positional arguments of builtin `name`; most is 99 for `*name`."""
    params = SIGNATURES[name][2].split()
    if any(p.startswith("*") for p in params):
        return sum(1 for p in params if not p.endswith("=") and not p.startswith("*")), 99
    return sum(1 for p in params if not p.endswith("=")), len(params)
