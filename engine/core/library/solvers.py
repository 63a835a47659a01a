"""Linear systems and powers with numpy's and scipy.linalg's arguments, as composites of the
table's entries: matrix_power, lstsq (full rank), solve_triangular, cho_factor and cho_solve.
scipy is no dependency: `scipy.linalg.solve_triangular` is the language's spelling of these.

A triangular system is solved as the general system of its triangle (the other triangle is not
read, so it gets no gradient); cho_factor's factor has zeros in the triangle scipy leaves
unspecified, which cho_solve, like scipy's, never reads."""
from __future__ import annotations

from .. import ops
from ..backend import xp
from ..complexes import is_complex
from ..primitives import ndim, shape
from ..rules.arithmetic import matrix_transpose
from .axes import ArgumentError, whole


def matrix_power(a, n):
    """a to the whole power n by numpy's sequence of products (binary decomposition), so the
    values are numpy's to the bit; a negative n inverts first, 0 is the identity."""
    count = whole(n, "matrix_power(): the exponent")
    if ndim(a) < 2 or shape(a)[-1] != shape(a)[-2]:
        raise ArgumentError(f"matrix_power(): a must be a square matrix (or a stack of them), not of shape {shape(a)}")
    if count == 0:
        raw = xp().asarray(ops.read(a))
        return xp().broadcast_to(xp().eye(shape(a)[-1], dtype=raw.dtype), shape(a)).copy()
    if count < 0:
        a, count = ops.inv(a), -count
    if count <= 3:
        result = a
        for _ in range(count - 1):
            result = ops.matmul(result, a)
        return result
    z = result = None
    while count > 0:
        z = a if z is None else ops.matmul(z, z)
        count, bit = divmod(count, 2)
        if bit:
            result = z if result is None else ops.matmul(result, z)
    return result


def _triangle(a, lower, unit_diagonal):
    """The triangle of a that a triangular solve reads, with ones on its diagonal if unit."""
    m = xp()
    n = shape(a)[-1]
    ones = m.ones((n, n), dtype=m.asarray(ops.read(a)).dtype)
    if unit_diagonal:
        return a * (m.tril(ones, -1) if lower else m.triu(ones, 1)) + m.eye(n, dtype=ones.dtype)
    return a * (m.tril(ones) if lower else m.triu(ones))


def conjugate_transpose(v):
    """v's conjugate transpose, numpy's v.conj().T of a matrix (its transpose where v is real)."""
    t = matrix_transpose(v)
    return ops.conj(t) if is_complex(v) else t


def _transposed(trans):
    """0, 1 or 2: solve with the triangle itself, its transpose or its conjugate transpose."""
    spelled = ops.read(trans)
    for code, spellings in ((0, (0, "N", "n")), (1, (1, "T", "t")), (2, (2, "C", "c"))):
        if spelled in spellings:
            return code
    raise ArgumentError(f"solve_triangular(): trans must be 0, 1, 2, 'N', 'T' or 'C', not {spelled!r}")


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
    """scipy.linalg.solve_triangular: x with T x = b, T the lower or upper triangle of a (its
    diagonal ones if unit_diagonal), transposed for trans 1 or 'T', conjugate-transposed for 2 or
    'C' (the transpose for real numbers). overwrite_b and check_finite change nothing here."""
    if ndim(a) != 2 or shape(a)[0] != shape(a)[1]:
        raise ArgumentError(f"solve_triangular(): expected a square matrix, not one of shape {shape(a)}")
    t = _triangle(a, bool(ops.read(lower)), bool(ops.read(unit_diagonal)))
    how = _transposed(trans)
    return ops.solve(t if how == 0 else matrix_transpose(t) if how == 1 else conjugate_transpose(t), b)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cho_factor: (c, lower), c the Cholesky factor, upper (Uᴴ U = a) unless
    lower; the other triangle holds zeros (scipy leaves it unspecified)."""
    factor = ops.cholesky(a)
    is_lower = bool(ops.read(lower))
    return (factor if is_lower else conjugate_transpose(factor)), is_lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """scipy.linalg.cho_solve: x with a x = b, from cho_factor's (c, lower)."""
    if not isinstance(c_and_lower, (tuple, list)) or len(c_and_lower) != 2:
        raise ArgumentError("cho_solve(): the first argument is the pair (c, lower) that cho_factor returns")
    c, lower = c_and_lower
    is_lower = bool(ops.read(lower))
    y = solve_triangular(c, b, trans=0 if is_lower else 2, lower=is_lower)      # L y = b, or Uᴴ y = b
    return solve_triangular(c, y, trans=2 if is_lower else 0, lower=is_lower)


def lstsq(a, b, rcond=None):
    """numpy's lstsq of a matrix of full rank: (x, residuals, rank, singular values). x is the
    least-squares solution of a tall a (by its QR), the least-norm one of a wide a (by aᴴ's QR); residuals
    are the squared residual norms where a is tall (numpy's), else empty. rcond as numpy's:
    None is machine precision times the larger dimension."""
    if ndim(a) != 2:
        raise ArgumentError(f"lstsq(): a must be a matrix, not of shape {shape(a)}")
    m = xp()
    raw = m.asarray(ops.read(a))
    rows, columns = raw.shape
    values = ops.singular_values(a)
    plain = m.asarray(ops.read(values))
    cutoff = m.finfo(raw.dtype).eps * max(rows, columns) if rcond is None else float(ops.read(rcond))
    rank = int((plain > cutoff * plain.max()).sum()) if plain.size else 0
    if rank < min(rows, columns):
        raise ArgumentError(f"lstsq(): the matrix has rank {rank}, less than {min(rows, columns)}: only a "
                            "matrix of full rank has a least-squares solution that is differentiable here")
    if rows >= columns:
        q, r = ops.qr_q(a), ops.qr_r(a)
        x = ops.solve(r, ops.matmul(conjugate_transpose(q), b))
    else:               # aᴴ = QR: the least-norm x = aᴴ(aaᴴ)⁻¹b = Q R⁻ᴴ b, without squaring a's condition
        q, r = ops.qr_q(conjugate_transpose(a)), ops.qr_r(conjugate_transpose(a))
        x = ops.matmul(q, ops.solve(conjugate_transpose(r), b))
    if rows > columns:
        residual = b - ops.matmul(a, x)
        squares = ops.real(residual * ops.conj(residual)) if is_complex(residual) else residual * residual
        residuals = ops.sum(squares, 0)
        residuals = ops.reshape(residuals, (1,)) if ndim(b) == 1 else residuals
    else:
        residuals = m.zeros((0,), dtype=raw.real.dtype)
    return x, residuals, float(rank), values
