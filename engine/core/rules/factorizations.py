"""Factorizations numpy returns as several arrays, one entry per array: the thin QR of a real or
complex matrix with at least as many rows as columns (Q and R, LAPACK's signs and, for a complex
one, R's real diagonal), and the eigen-decomposition of
a general real or complex matrix with distinct eigenvalues, complex ones included (values in
LAPACK's order, unit eigenvectors as columns, numpy's dtypes). Each rule is written in the ops, so they differentiate again.

QR's JVP: with C = Qᵀ dA R⁻¹ and M = triu(C) + tril(C, -1)ᵀ (the upper triangular part of
dR R⁻¹, Qᵀ dQ being antisymmetric), dR = M R and dQ = dA R⁻¹ - Q M; the VJPs are its transpose. A complex matrix: C = Qᴴ dA R⁻¹ and
M = triu(C, 1) + tril(C, -1)ᴴ + Re diag(C) (Qᴴ dQ anti-Hermitian, diag R real), the VJPs the
plain transposes (core/complexes.py's convention).
eig's: with C = V⁻¹ dA V, dw = diag(C) and dV = V (F ∘ C), F_ij = 1 / (w_j - w_i) off the
diagonal, then less v_k Re(v_kᴴ dv_k) per column (numpy's unit norm; for complex vectors the
phase held: Im (V⁻¹ dV)_kk = 0, PyTorch's, and a loss that depends on the phase is refused).
The eigenvalues are holomorphic (the real rules hold with plain transposes), the eigenvectors
are not (the real part taken); the VJPs are the plain transposes of the JVPs."""
from __future__ import annotations

from ..backend import xp
from ..complexes import is_complex
from ..errors import EngineError
from ..primitives import defprim, shape
from ..tape import strip
from .arithmetic import div, matmul, matrix_transpose
from .comparisons import where
from .complexes import conj, real
from .linalg import refuse_phase_dependence, conj_if, float_dtype, inv
from .reductions import sum
from .shapes import expand_dims


def _masks(n, like):
    """(upper triangle with the diagonal, strictly lower triangle) as constant float masks."""
    m = xp()
    ones = m.ones((n, n), dtype=float_dtype(like))
    return m.triu(ones), m.tril(ones, -1)


def _upper_of(c, n, like):
    """M = triu(C) + tril(C, -1)ᵀ: the upper triangular matrix of C's two triangles. For a
    complex `like`: triu(C, 1) + tril(C, -1)ᴴ + Re diag(C) (Qᴴ dQ is anti-Hermitian, and R's
    diagonal stays real, LAPACK's)."""
    upper, lower = _masks(n, like)
    if not is_complex(like):
        return c * upper + matrix_transpose(c * lower)
    diagonal = xp().eye(n, dtype=float_dtype(like))
    return c * (upper - diagonal) + conj(matrix_transpose(c * lower)) + real(c) * diagonal


def _upper_of_transposed(m_bar, n, like):
    """The transpose of _upper_of: triu(M̄) + tril(M̄ᵀ, -1); for a complex `like`,
    triu(M̄, 1) + tril(conj(M̄ᵀ), -1) + Re diag(M̄)."""
    upper, lower = _masks(n, like)
    if not is_complex(like):
        return m_bar * upper + matrix_transpose(m_bar) * lower
    diagonal = xp().eye(n, dtype=float_dtype(like))
    return m_bar * (upper - diagonal) + conj(matrix_transpose(m_bar)) * lower + real(m_bar) * diagonal


def _adjoint_if(x, v):
    """vᴴ where x is complex, vᵀ where it is real."""
    return conj(matrix_transpose(v)) if is_complex(x) else matrix_transpose(v)


def _qr(x):
    rows, columns = shape(x)[-2:]
    if rows < columns:
        raise EngineError("value error", f"qr() of a {rows}x{columns} matrix: the derivatives need at least "
                          "as many rows as columns (qr of the transpose gives an LQ factorization)")
    return xp().linalg.qr(x)


def _qr_parts(x):
    """Q, R⁻¹ and the size of R, as ops (the rules differentiate again)."""
    return qr_q(x), inv(qr_r(x)), shape(x)[-1]


def _qr_r_jvp(t, ans, x):
    q, rinv, n = _qr_parts(x)
    c = matmul(matmul(_adjoint_if(x, q), t), rinv)
    return matmul(_upper_of(c, n, strip(ans)), ans)


def _qr_r_vjp(g, ans, x):
    # the plain transposes of the JVP's maps: C = Qᴴ dA R⁻¹ gives Ā = conj(Q) C̄ R⁻ᵀ
    q, rinv, n = _qr_parts(x)
    c_bar = _upper_of_transposed(matmul(g, matrix_transpose(ans)), n, strip(ans))
    return matmul(matmul(conj_if(x, q), c_bar), matrix_transpose(rinv))


def _qr_q_jvp(t, ans, x):
    q, rinv, n = _qr_parts(x)
    c = matmul(matmul(_adjoint_if(x, q), t), rinv)
    return matmul(t, rinv) - matmul(q, _upper_of(c, n, strip(ans)))


def _qr_q_vjp(g, ans, x):
    q, rinv, n = _qr_parts(x)
    c_bar = _upper_of_transposed(-matmul(matrix_transpose(q), g), n, strip(ans))
    return matmul(g + matmul(conj_if(x, q), c_bar), matrix_transpose(rinv))


# complex values: Q with orthonormal columns (QᴴQ = I), R with LAPACK's real diagonal
qr_q = defprim("qr_q", lambda x: _qr(x)[0], needs_ans=True, vjp=(_qr_q_vjp,), jvp=(_qr_q_jvp,),
               complex_values=True, holomorphic=False)
qr_r = defprim("qr_r", lambda x: _qr(x)[1], needs_ans=True, vjp=(_qr_r_vjp,), jvp=(_qr_r_jvp,),
               complex_values=True, holomorphic=False)


def _eig(x):
    m = xp()
    if not hasattr(m.linalg, "eig"):
        raise EngineError("value error", "eig() of a general matrix is not available on this device (cupy has "
                          "no general eigensolver); a symmetric matrix's: use eigh")
    return m.linalg.eig(x)


def _eig_parts(x):
    """V, V⁻¹ and F (1 / (w_j - w_i) off the diagonal, 0 on it), as ops."""
    values, vectors = eig_values(x), eig_vectors(x)
    diagonal = xp().eye(shape(values)[-1], dtype=bool)
    gaps = expand_dims(values, -2) - expand_dims(values, -1)
    return vectors, inv(vectors), where(diagonal, 0.0, div(1.0, where(diagonal, 1.0, gaps)))


def _eig_values_jvp(t, ans, x):
    vectors = eig_vectors(x)
    return sum(matrix_transpose(inv(vectors)) * matmul(t, vectors), -2)


def _eig_values_vjp(g, ans, x):
    vectors = eig_vectors(x)
    return matmul(matrix_transpose(inv(vectors)) * expand_dims(g, -2), matrix_transpose(vectors))


def _unit_norm_part(vectors, v):
    """Re(v_kᴴ · column k of v) per column (v_kᵀ · for real vectors): the part of a tangent that
    changes the unit columns' norms."""
    if not is_complex(vectors):
        return sum(vectors * v, -2)
    return real(sum(conj(vectors) * v, -2))


def _eig_vectors_jvp(t, ans, x):
    vectors, vinv, gaps = _eig_parts(x)
    raw = matmul(vectors, gaps * matmul(matmul(vinv, t), vectors))
    return raw - vectors * expand_dims(_unit_norm_part(vectors, raw), -2)


def _eig_vectors_vjp(g, ans, x):
    vectors, vinv, gaps = _eig_parts(x)
    if is_complex(vectors):
        refuse_phase_dependence(matmul(matrix_transpose(vectors), g), "eigenvector",
                                 "use a function of abs(v), or of v conj(v)ᵀ")
        g_raw = g - conj(vectors) * expand_dims(real(sum(g * vectors, -2)), -2)
    else:
        g_raw = g - vectors * expand_dims(sum(g * vectors, -2), -2)
    c_bar = gaps * matmul(matrix_transpose(vectors), g_raw)
    return matmul(matmul(matrix_transpose(vinv), c_bar), matrix_transpose(vectors))


# complex values (a complex matrix, or a real one with complex eigenvalues, numpy's complex
# results): the eigenvalues are holomorphic in A where distinct (dw = diag(V⁻¹ dA V), the real
# rules with plain transposes); the unit eigenvectors hold Im of (V⁻¹ dV)'s diagonal at 0
# (PyTorch's), and a loss that depends on a vector's phase is refused (refuse_phase_dependence)
eig_values = defprim("eig_values", lambda x: _eig(x)[0], vjp=(_eig_values_vjp,), jvp=(_eig_values_jvp,),
                     complex_values=True)
eig_vectors = defprim("eig_vectors", lambda x: _eig(x)[1], needs_ans=True,
                      vjp=(_eig_vectors_vjp,), jvp=(_eig_vectors_jvp,), complex_values=True, holomorphic=False)
