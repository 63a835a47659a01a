"""Products and np.linalg with numpy's arguments, as composites: dot outer inner kron cross
tensordot einsum, slogdet norm eigh svd qr eig (det inv solve cholesky pinv are table entries). The
language registers them under plain names (det, inv, ...); np.linalg.NAME maps to those."""
from __future__ import annotations

import math

from .. import ops
from ..backend import np, xp
from ..complexes import is_complex
from ..primitives import ndim, run_dtype, shape
from .axes import ArgumentError, axes_of, flag, keep_dims, one_axis, whole
from .elementwise import sign
from ..rules.arithmetic import matrix_transpose
from ..rules.linalg import singular_vectors
from .reductions import reduce_over
from .shapes import stack

_UNSET = object()       # an argument not given (numpy's _NoValue: rtol=None means something)


def dot(a, b):
    """numpy's dot: a product where either is a number; else the sum over a's last axis and b's
    only axis (a vector) or its second-to-last, with a's other axes first, then b's. Where b has
    at most two dimensions that is matmul (a's leading axes taken as a stack's); beyond, not:
    dot((1, 2), (2, 2, 2)) has shape (1, 2, 2), matmul's (2, 1, 2)."""
    if not shape(a) or not shape(b):
        return a * b
    sa, sb = shape(a), shape(b)
    summed = len(sb) - 2 if len(sb) > 1 else 0
    if sa[-1] != sb[summed]:
        raise ValueError(f"shapes {sa} and {sb} not aligned: {sa[-1]} (dim {len(sa) - 1}) != "
                         f"{sb[summed]} (dim {summed})")
    if len(sb) <= 2:
        return ops.matmul(a, b)
    return tensordot(a, b, ((len(sa) - 1,), (summed,)))


def outer(a, b):
    return ops.reshape(a, (-1, 1)) * ops.reshape(b, (1, -1))


def inner(a, b):
    if not shape(a) or not shape(b):
        return a * b
    return tensordot(a, b, ((ndim(a) - 1,), (ndim(b) - 1,)))


def kron(a, b):
    if not shape(a) or not shape(b):
        return a * b
    dims = max(ndim(a), ndim(b))
    a = ops.reshape(a, (1,) * (dims - ndim(a)) + shape(a))
    b = ops.reshape(b, (1,) * (dims - ndim(b)) + shape(b))
    # a[i, j] * b[k, l] laid out as [i k, j l]: interleave the axes, then merge each pair
    ea = ops.reshape(a, tuple(d for n in shape(a) for d in (n, 1)))
    eb = ops.reshape(b, tuple(d for n in shape(b) for d in (1, n)))
    return ops.reshape(ea * eb, tuple(p * q for p, q in zip(shape(a), shape(b))))


def cross(a, b, axis=-1):
    ax = one_axis(axis, ndim(a))
    if shape(a)[ax] != 3 or shape(b)[one_axis(axis, ndim(b))] != 3:
        raise ArgumentError("cross(): both vectors need 3 components along the axis")

    def part(v, i):
        return ops.getitem(v, (slice(None),) * one_axis(axis, ndim(v)) + (i,))
    a0, a1, a2 = (part(a, i) for i in range(3))
    b0, b1, b2 = (part(b, i) for i in range(3))
    return stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), ax)


def _contracted(axes, dims_a, dims_b):
    raw = ops.read(axes)
    if getattr(raw, "ndim", 0):             # [[1], [0]]: a list literal the language made an array
        axes = raw.astype(int).tolist()
    if not isinstance(ops.read(axes), (tuple, list)):
        n = whole(axes, "axes")
        return list(range(dims_a - n, dims_a)), list(range(n))
    left, right = axes
    left = [one_axis(v, dims_a) for v in (left if isinstance(left, (tuple, list)) else (left,))]
    right = [one_axis(v, dims_b) for v in (right if isinstance(right, (tuple, list)) else (right,))]
    return left, right


def tensordot(a, b, axes=2):
    left, right = _contracted(axes, ndim(a), ndim(b))
    if [shape(a)[i] for i in left] != [shape(b)[j] for j in right]:
        raise ArgumentError("tensordot(): the contracted axes have different lengths")
    free_a = [i for i in range(ndim(a)) if i not in left]
    free_b = [j for j in range(ndim(b)) if j not in right]
    k = math.prod(shape(a)[i] for i in left)
    kept_a, kept_b = tuple(shape(a)[i] for i in free_a), tuple(shape(b)[j] for j in free_b)
    # the sizes written out, not -1: an empty contracted axis leaves -1 undetermined
    ma = ops.reshape(ops.permute_dims(a, tuple(free_a + left)), (math.prod(kept_a), k))
    mb = ops.reshape(ops.permute_dims(b, tuple(right + free_b)), (k, math.prod(kept_b)))
    return ops.reshape(ops.matmul(ma, mb), kept_a + kept_b)


def _ellipsis_spelled(spec, operands):
    """numpy's '...' written out: each operand's broadcast axes get letters the subscripts do not
    use (the last ones shared, as numpy aligns them from the right), the operands broadcast to
    the common lengths there, and the output (implicit: first) gets them too."""
    inputs, arrow, output = spec.partition("->")
    parts = inputs.split(",")
    if len(parts) != len(operands):
        return spec, operands
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in spec]
    counts = [ndim(x) - len(p.replace("...", "")) if "..." in p else 0 for p, x in zip(parts, operands)]
    if any(c < 0 for c in counts) or any(p.count("...") > 1 or p.replace("...", "").count(".") for p in parts):
        raise ArgumentError("einsum(): '...' must be written once per operand, as three dots")
    most = max(counts)
    letters = "".join(free[:most])
    lengths = np().broadcast_shapes(*(shape(x)[p.index("..."):p.index("...") + c]
                                     for p, x, c in zip(parts, operands, counts) if "..." in p))
    spelled, broadcast = [], []
    for p, x, c in zip(parts, operands, counts):
        if "..." in p:
            at = p.index("...")
            target = shape(x)[:at] + tuple(lengths[len(lengths) - c:]) + shape(x)[at + c:]
            x = ops.broadcast_to(x, target) if target != shape(x) else x
            p = p.replace("...", letters[most - c:])
        spelled.append(p)
        broadcast.append(x)
    if arrow:
        output = output.replace("...", letters)
    else:
        chars = "".join(spelled)
        output = letters + "".join(sorted(c for c in set(chars) if chars.count(c) == 1 and c not in letters))
    return ",".join(spelled) + "->" + output, broadcast


def einsum(subscripts, *operands):
    spec = str(subscripts).replace(" ", "")
    if "." in spec:
        spec, operands = _ellipsis_spelled(spec, operands)
    if "->" not in spec:                    # numpy's implicit output: the letters seen once, sorted
        letters = spec.replace(",", "")
        spec += "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(spec.split("->")[0].split(",")) != len(operands):
        raise ArgumentError(f"einsum(): {spec!r} names {len(spec.split('->')[0].split(','))} operands, "
                         f"{len(operands)} given")
    return ops.einsum(spec, *operands)


def slogdet(a):
    """(sign, log|det|): log|det| has its gradient; the sign of a real a is a constant (-1, 0 or
    1), of a complex a det/|det|, the phase of det, with its gradient (elementwise.sign's)."""
    if is_complex(a):
        return sign(ops.det(a)), ops.logabsdet(a)
    sign_ = xp().sign(xp().linalg.det(ops.read(a)))
    return (sign_.item() if xp().ndim(sign_) == 0 else sign_), ops.logabsdet(a)


def _squared_magnitude(x):
    """|x|² elementwise: x * x, or real(x * conj(x)) for complex entries."""
    return ops.real(x * ops.conj(x)) if is_complex(x) else x * x


def _vector_norm(x, order, axes):
    if order is None or order == 2:
        return ops.sqrt(ops.sum(_squared_magnitude(x), axes)) if axes is not None else ops.norm(x)
    if order == math.inf:
        return reduce_over(ops.max, ops.abs(x), axes, False)
    if order == -math.inf:
        return reduce_over(ops.min, ops.abs(x), axes, False)
    if order == 1:
        return ops.sum(ops.abs(x), axes)
    if order == 0:
        return ops.sum(ops.ne(x, 0.0) * 1.0, axes)      # a mask no derivative follows (a guard's read)
    return ops.sum(ops.abs(x) ** float(order), axes) ** (1.0 / float(order))


def _matrix_norm(x, order, axes):
    rows, cols = axes
    if order in (None, "fro"):
        return ops.sqrt(ops.sum(_squared_magnitude(x), axes))
    if order in ("nuc", 2, -2) and (rows, cols) != (ndim(x) - 2, ndim(x) - 1):
        x = ops.permute_dims(x, tuple(a for a in range(ndim(x)) if a not in axes) + (rows, cols))
    if order == "nuc":
        return ops.sum(svd(x, compute_uv=False), -1)
    if order in (1, -1):
        sums = ops.sum(ops.abs(x), rows)
        return reduce_over(ops.max if order == 1 else ops.min, sums, cols - (cols > rows), False)
    if order in (math.inf, -math.inf):
        sums = ops.sum(ops.abs(x), cols)
        return reduce_over(ops.max if order > 0 else ops.min, sums, rows - (rows > cols), False)
    if order in (2, -2):
        values = svd(x, compute_uv=False)
        return reduce_over(ops.max if order == 2 else ops.min, values, -1, False)
    raise ArgumentError(f"norm(): ord {order!r} is not a matrix norm")


def norm(x, ord=None, axis=None, keepdims=False):
    order = ops.read(ord)
    if axis is None and ord is not None and ndim(x) == 2:
        axes = (0, 1)
    else:
        axes = axes_of(axis, ndim(x))
    if axes is not None and len(axes) == 2:      # numpy's (row axis, column axis), in the order given
        given = (0, 1) if axis is None else tuple(one_axis(a, ndim(x)) for a in ops.read(axis))
        result = _matrix_norm(x, order, given)
    else:
        result = _vector_norm(x, order, axes)
    return keep_dims(result, x, axes) if keepdims else result


def _triangle_of(a, uplo, name):
    """The symmetric (Hermitian, for complex a) matrix numpy's eigh reads from one triangle of a:
    'L' the lower, 'U' the upper (the other triangle is not read, so it gets no gradient)."""
    side = str(ops.read(uplo)).upper()
    if side not in ("L", "U"):
        raise ArgumentError(f"{name}(): UPLO must be 'L' or 'U', not {uplo!r}")
    n = shape(a)[-1]
    m = xp()
    ones = m.ones((n, n), dtype=m.asarray(ops.read(a)).dtype)
    strict = m.tril(ones, -1) if side == "L" else m.triu(ones, 1)
    kept = a * (strict + m.eye(n, dtype=ones.dtype))
    mirrored = matrix_transpose(a * strict)
    return kept + (ops.conj(mirrored) if is_complex(a) else mirrored)     # Hermitian: the conjugate


def eigh(a, UPLO=None):
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric part of a; with UPLO
    ('L' or 'U'), of the symmetric matrix that triangle of a spells, as numpy reads it."""
    if UPLO is not None:
        a = _triangle_of(a, UPLO, "eigh")
    return ops.eigvalsh(a), ops.eigh_vectors(a)


def eigvalsh(a, UPLO=None):
    """The eigenvalues, ascending, of the symmetric part of a; with UPLO ('L' or 'U'), of the
    symmetric matrix that triangle of a spells, as numpy reads it (eigh's values)."""
    return ops.eigvalsh(a if UPLO is None else _triangle_of(a, UPLO, "eigvalsh"))


def qr(a, mode="reduced"):
    """numpy's QR of a matrix with at least as many rows as columns, LAPACK's signs: (Q, R), or
    R alone for mode='r' ('complete' is 'reduced' for a square matrix)."""
    spelled = ops.read(mode)
    rows, columns = shape(a)[-2:]
    if spelled == "complete" and rows != columns:
        raise ArgumentError("qr(): mode 'complete' of a non-square matrix is not supported; "
                            "use mode='reduced' (numpy's default)")
    if spelled == "r":
        return ops.qr_r(a)
    if spelled not in ("reduced", "complete"):
        raise ArgumentError(f"qr(): mode must be 'reduced', 'complete' or 'r', not {spelled!r}")
    return ops.qr_q(a), ops.qr_r(a)


def eig(a):
    """(eigenvalues, unit eigenvectors as columns) in LAPACK's order as numpy gives them: complex
    where the matrix is, or where a real one has complex eigenvalues; distinct eigenvalues give
    the derivatives (core/rules/factorizations.py)."""
    return ops.eig_values(a), ops.eig_vectors(a)


def svd(a, full_matrices=True, compute_uv=True):
    """numpy's SVD, LAPACK's values and vectors (thin factors: full_matrices=True only for a
    square matrix). Distinct, non-zero singular values give the derivatives; a wide matrix's
    factors come from its transpose's (their signs may differ from numpy's)."""
    if not compute_uv:
        return ops.singular_values(a)
    rows, columns = shape(a)[-2:]
    if full_matrices and rows != columns:
        raise ArgumentError("svd(): full_matrices=True of a non-square matrix is not supported; "
                            "pass full_matrices=False")
    u, vh = singular_vectors(a)
    return u, ops.singular_values(a), vh


def pinv(a, rcond=None, hermitian=False, rtol=_UNSET):
    """numpy's pinv (core/rules/linalg.py's entry): the SVD's pseudo-inverse of a matrix or a stack
    of them, singular values of at most rcond times the largest taken as 0. rcond and rtol as
    numpy 2's: neither given is 1e-15; rtol=None is the larger dimension times the dtype's
    machine epsilon; both given is numpy's error. hermitian=True reads the lower triangle, as
    numpy's does (the other gets no gradient), and inverts the Hermitian matrix it spells by
    its SVD (numpy's values to rounding: numpy takes an eigendecomposition there)."""
    if ndim(a) < 2:
        raise ArgumentError(f"pinv(): a must be a matrix or a stack of them, not of shape {shape(a)}")
    if rcond is not None and rtol is not _UNSET:
        raise ArgumentError("pinv(): rtol and rcond can't be both set; pass one of them")
    if rcond is not None:
        rcond = _number(rcond, "rcond")
    elif rtol is _UNSET:
        rcond = 1e-15
    elif rtol is None:          # the run's dtype is its arrays' (float32 with complex64)
        rcond = max(shape(a)[-2:]) * float(xp().finfo(run_dtype[0]).eps)
    else:
        rcond = _number(rtol, "rtol")
    if flag(hermitian, "pinv(): hermitian"):
        a = _triangle_of(a, "L", "pinv")
    return ops.pinv(a, rcond)


def _number(value, what):
    """A whole or real number given to pinv (a tolerance), as a float."""
    value = ops.read(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) and getattr(value, "shape", None) != ():
        raise ArgumentError(f"pinv(): {what} must be a number, not {value!r}")
    return float(value)


MATRIX_ORDERS = (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf)


def cond(x, p=None):
    """numpy's linalg.cond: the 2-norm's s_max / s_min of the singular values (p None or 2; -2
    s_min / s_max), the other matrix norms' norm(x, p) * norm(inv(x), p) of a square x, stacked
    over leading axes; nan turned inf where x holds no nan (a singular x), as numpy's."""
    order = ops.read(p)
    if not isinstance(order, (str, int, float, type(None))) or order not in MATRIX_ORDERS:
        raise ArgumentError(f"cond(): p {order!r} is not a matrix norm: give None, 2, -2, 'fro', 'nuc', 1, -1, "
                            "inf or -inf")
    if ndim(x) < 2 or 0 in shape(x)[-2:]:
        raise ArgumentError("cond(): the array must have at least 2 dimensions, none of the last two empty")
    if order in (None, 2, -2):
        values = ops.singular_values(x)
        largest, smallest = ops.getitem(values, (Ellipsis, 0)), ops.getitem(values, (Ellipsis, -1))
        r = ops.div(smallest, largest) if order == -2 else ops.div(largest, smallest)
    else:
        if shape(x)[-1] != shape(x)[-2]:
            raise ArgumentError("cond(): the last 2 dimensions of the array must be square for p "
                                f"{order!r} (p None, 2 or -2 take any shape)")
        inverse = _inverse_or_none(x)
        if inverse is None:
            return math.inf             # numpy's cond of a singular matrix (its inverse's nan, made inf)
        r = norm(x, order, axis=(-2, -1)) * norm(inverse, order, axis=(-2, -1))
    m = xp()
    raw = m.asarray(ops.read(r))
    singular = m.isnan(raw) & ~m.isnan(m.asarray(ops.read(x))).any(axis=(-2, -1))
    return ops.where(singular, math.inf, r) if bool(singular.any()) else r


def _inverse_or_none(x):
    """inv(x), or None for a singular matrix x (numpy's cond then gives inf); a stack holding a
    singular matrix is refused (numpy gives inf for that one alone)."""
    try:
        return ops.inv(x)
    except np().linalg.LinAlgError:
        if ndim(x) == 2:
            return None
        raise ArgumentError("cond(): a matrix of the stack is singular: its condition number is inf; take "
                            "cond(x) (the 2-norm's) or cond of each matrix") from None
