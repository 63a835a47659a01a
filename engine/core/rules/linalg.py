"""Linear algebra: det, log|det| (slogdet's differentiable half), inv, solve, cholesky, the
eigen-decomposition of a symmetric matrix (values and vectors, one entry each), and einsum. All
act on the last two axes (stacks of matrices work). Each rule is written in these same ops, so
the Hessian of det or of log|det| comes out of the table like any other.

eigh and cholesky read the symmetric part (A + Aᵀ)/2 of their argument (numpy reads one
triangle; the two agree on the symmetric matrices they are meant for, and the symmetric part
keeps the derivative a derivative of what is computed); eigh and cholesky of a complex matrix
read its Hermitian part (A + Aᴴ)/2.

Complex matrices (core/complexes.py's convention: a rule is the plain transpose of the real-linear
derivative): det, inv, solve and einsum are holomorphic in the entries, so their real rules, with
plain transposes (never conjugate ones), hold as written. log|det|, the eigenvalues of a
Hermitian matrix and the singular values are real functions of complex entries: their rules
conjugate the factors where the derivative reads Re(...) (`conj_if`, `_real_if`). The
Cholesky factor of a Hermitian positive definite matrix (A = L Lᴴ, L's diagonal real) has
dL = L Φ(L⁻¹ dS L⁻ᴴ), dS the Hermitian part of dA, and its plain transpose. The
eigenvectors of a Hermitian matrix and the singular vectors of a complex matrix: their rules hold
each vector's phase, and a loss that depends on that phase (arbitrary: v and e^{iφ} v are both
eigenvectors; u_k and v_k share one) is refused (`refuse_phase_dependence`)."""
from __future__ import annotations

from ..backend import xp
from ..complexes import is_complex
from ..notes import NOTES
from ..primitives import PerPosition, defprim, ndim, params_op, plain_scalar, shape
from ..tape import bind, strip
from .arithmetic import div, matmul, matrix_transpose
from .complexes import conj, imag, real
from .joins import concatenate
from .comparisons import where
from .reductions import sum
from .shapes import expand_dims, getitem, reshape, untake


def _matrix_of(g):
    """A per-matrix scalar (shape batch) made to broadcast against the matrices (batch, 1, 1)."""
    return expand_dims(expand_dims(g, -1), -1)


def _trace_product(a, b):
    """trace(a @ b) for each matrix of the stacks, as sum(aᵀ * b)."""
    return sum(sum(matrix_transpose(a) * b, -1), -1)


def float_dtype(v):
    """v's dtype where it is a float array, the real one of a complex array (float32 for
    complex64), else float64 (a numpy dtype is falsy: no `or`)."""
    dtype = getattr(v, "dtype", None)
    if dtype is not None and dtype.kind == "c":
        return xp().finfo(dtype).dtype          # (no array made: emit traces the rules that ask)
    return dtype if dtype is not None and dtype.kind == "f" else xp().float64


def conj_if(x, v):
    """conj(v) where x is complex, v itself where it is real (no step on a real tape)."""
    return conj(v) if is_complex(x) else v


def _real_if(x, v):
    """real(v) where x is complex (the derivative of a real function of complex entries reads
    the real part), v itself where it is real."""
    return real(v) if is_complex(x) else v


def _np_linalg():
    return xp().linalg


def _cofactors(x):
    """The cofactor matrix, from the determinants of the minors (det's derivative where x is
    singular, when ans * inv(x)ᵀ does not exist)."""
    m = xp()
    n = shape(x)[-1]
    if n == 1:
        return xp().ones_like(strip(x))
    keep = m.array([[k for k in range(n) if k != i] for i in range(n)])       # (n, n-1)
    rows = keep.reshape(n, 1, n - 1, 1)
    cols = keep.reshape(1, n, 1, n - 1)
    signs = ((-1.0) ** m.add.outer(m.arange(n), m.arange(n))).astype(float_dtype(strip(x)))
    return det(getitem(x, (Ellipsis, rows, cols))) * signs


def _singular(x):
    """x with its first row 0: the other side of det's rules' test for a singular matrix."""
    x = x.copy()
    x[..., 0, :] = 0.0
    return x


def _det_gradient(ans, x):
    if bool(xp().all(strip(ans) != 0)):
        return _matrix_of(ans) * matrix_transpose(inv(x))
    return _cofactors(x)


det = defprim("det", lambda x: plain_scalar(_np_linalg().det(x)), needs_ans=True, builtin="det",
              vjp=(lambda g, ans, x: _matrix_of(g) * _det_gradient(ans, x),),
              jvp=(lambda t, ans, x: sum(sum(_det_gradient(ans, x) * t, -1), -1),), complex_values=True,
              emits_at_shapes=True, other_side=_singular)
# d log|det A| = Re tr(A⁻¹ dA): the adjoint g (A⁻¹)ᵀ with g's real part, for complex entries too
logabsdet = defprim("logabsdet", lambda x: plain_scalar(_np_linalg().slogdet(x)[1]),
                    vjp=(lambda g, ans, x: _matrix_of(_real_if(x, g)) * matrix_transpose(inv(x)),),
                    jvp=(lambda t, ans, x: _real_if(x, _trace_product(inv(x), t)),), complex_values=True,
                    emits_at_shapes=True)
inv = defprim("inv", lambda x: _np_linalg().inv(x), needs_ans=True, builtin="inv", emits_at_shapes=True,
              vjp=(lambda g, ans, x: -matmul(matmul(matrix_transpose(ans), g), matrix_transpose(ans)),),
              jvp=(lambda t, ans, x: -matmul(matmul(ans, t), ans),), complex_values=True)


def _pinv(x, rcond=1e-15):
    """numpy's pinv(x, rcond), step by step as numpy.linalg.pinv takes them (its bits on the host):
    the SVD of conj(x), singular values above rcond times the largest inverted, the others 0. A matrix
    with a singular value cut off is rank-deficient: pinv jumps where the rank changes, so its
    derivative is the one along matrices of the same rank (noted as a kink)."""
    m = xp()
    rows, columns = x.shape[-2:]
    if rows == 0 or columns == 0:
        return m.zeros(x.shape[:-2] + (columns, rows), dtype=x.dtype)
    u, s, vt = m.linalg.svd(m.conj(x), full_matrices=False)
    large = s > rcond * m.amax(s, axis=-1, keepdims=True)
    if not bool(m.all(large)):
        NOTES.kink("pinv", "pinv of a rank-deficient matrix: derivative taken along matrices of its rank")
    inverse = m.where(large, 1 / m.where(large, s, 1), 0)
    return m.matmul(m.swapaxes(vt, -1, -2), inverse[..., None] * m.swapaxes(u, -1, -2))


def _pinv_vjp(g, ans, x, rcond=1e-15):
    # dP = -P dA P + P Pᴴ dAᴴ (I - A P) + (I - P A) dAᴴ Pᴴ P (Golub and Pereyra, 1973, where the
    # rank is constant), transposed plainly: -Pᵀ G Pᵀ + conj((I - A P) Gᵀ P Pᴴ + Pᴴ P Gᵀ (I - P A))
    p, pt = ans, matrix_transpose(ans)
    ph, gt = conj_if(x, pt), matrix_transpose(g)
    left = matmul(gt, matmul(p, ph))
    right = matmul(matmul(ph, p), gt)
    return conj_if(x, left - matmul(x, matmul(p, left)) + right - matmul(matmul(right, p), x)) - \
        matmul(matmul(pt, g), pt)


def _pinv_jvp(t, ans, x, rcond=1e-15):
    p = ans
    th, ph = conj_if(x, matrix_transpose(t)), conj_if(x, matrix_transpose(p))
    left = matmul(p, matmul(ph, th))
    right = matmul(th, matmul(ph, p))
    return left - matmul(matmul(left, x), p) + right - matmul(p, matmul(x, right)) - matmul(matmul(p, t), p)


pinv = defprim("pinv", _pinv, needs_ans=True, make_op=params_op("rcond"), emits_at_shapes=True,
               kink="along matrices of the same rank", vjp=(_pinv_vjp,), jvp=(_pinv_jvp,), complex_values=True,
               holomorphic=False)


def _solve_vjp_a(g, ans, a, b):
    gb = solve(matrix_transpose(a), g)
    if ndim(b) == 1:
        return -(reshape(gb, (-1, 1)) * reshape(ans, (1, -1)))
    return -matmul(gb, matrix_transpose(ans))


solve = defprim("solve", lambda a, b: _np_linalg().solve(a, b), needs_ans=True, builtin="solve",
               emits_at_shapes=True,
                vjp=(_solve_vjp_a, lambda g, ans, a, b: solve(matrix_transpose(a), g)),
                jvp=(lambda t, ans, a, b: solve(a, -matmul(t, ans)),
                     lambda t, ans, a, b: solve(a, t)), complex_values=True)


def _symmetric(x):
    """(x + xᵀ)/2, or the Hermitian part (x + xᴴ)/2 of a complex x."""
    m = xp()
    flipped = m.swapaxes(x, -1, -2)
    return 0.5 * (x + (m.conj(flipped) if is_complex(x) else flipped))


def _half_lower(n, like):
    """The mask that takes the lower triangle and halves the diagonal (Φ of the Cholesky rules)."""
    m = xp()
    mask = m.tril(m.ones((n, n), dtype=float_dtype(like)))
    m.fill_diagonal(mask, 0.5)
    return mask


def _cholesky_vjp(g, ans, x):
    # Murray (2016): Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, then its symmetric part; for a complex x (A = L Lᴴ, the
    # plain transpose of dL = L Φ(L⁻¹ dS L⁻ᴴ)): L⁻ᵀ Φ(Lᵀ L̄) conj(L⁻¹), then its Hermitian part
    linv = inv(ans)
    inner = matmul(matrix_transpose(ans), g) * _half_lower(shape(ans)[-1], strip(ans))
    s = matmul(matmul(matrix_transpose(linv), inner), conj_if(x, linv))
    return _hermitian_part(x, s)


def _cholesky_jvp(t, ans, x):
    # dL = L Φ(L⁻¹ dS L⁻ᴴ), dS the Hermitian part of dA (the symmetric part of a real one); the
    # diagonal of L⁻¹ dS L⁻ᴴ is real, as L's stays
    linv = inv(ans)
    inner = matmul(matmul(linv, _hermitian_part(x, t)), conj_if(x, matrix_transpose(linv)))
    return matmul(ans, inner * _half_lower(shape(ans)[-1], strip(ans)))


# complex values: A Hermitian positive definite, numpy's lower L with A = L Lᴴ (a real diagonal)
cholesky = defprim("cholesky", lambda x: _np_linalg().cholesky(_symmetric(x)), needs_ans=True, emits_at_shapes=True,
                   builtin="cholesky", vjp=(_cholesky_vjp,), jvp=(_cholesky_jvp,), complex_values=True,
                   holomorphic=False)


def _eigh(x):
    return _np_linalg().eigh(_symmetric(x))


def _eigvalsh_vjp(g, ans, x):
    # dw_k = Re(v_kᴴ dA v_k): the adjoint conj(V) diag(g) Vᵀ (V diag(g) Vᵀ for a real x)
    vectors = eigh_vectors(x)
    return matmul(conj_if(x, vectors) * expand_dims(_real_if(x, g), -2), matrix_transpose(vectors))


def _eigvalsh_jvp(t, ans, x):
    vectors = eigh_vectors(x)
    if is_complex(x):
        return real(sum(conj(vectors) * matmul(t, vectors), -2))
    return sum(vectors * matmul(0.5 * (t + matrix_transpose(t)), vectors), -2)


eigvalsh = defprim("eigvalsh", lambda x: _eigh(x)[0], vjp=(_eigvalsh_vjp,), jvp=(_eigvalsh_jvp,),
                   complex_values=True, holomorphic=False, emits_at_shapes=True)


def _gaps(x):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (eigenvalues assumed distinct)."""
    values = eigvalsh(x)
    n = shape(values)[-1]
    diagonal = xp().eye(n, dtype=bool)
    gaps = expand_dims(values, -2) - expand_dims(values, -1)
    return where(diagonal, 0.0, div(1.0, where(diagonal, 1.0, gaps)))


def _hermitian_part(x, t):
    """(t + tᵀ)/2, or (t + tᴴ)/2 where x is complex: the derivative of what eigh reads."""
    return 0.5 * (t + conj_if(x, matrix_transpose(t)))


def _eigh_vectors_vjp(g, ans, x):
    # conj(V) (F ∘ Vᵀ g) Vᵀ, then its Hermitian part: the diagonal of Vᵀ g (the vectors' phases,
    # for complex ones) meets F's zero diagonal
    inner = matmul(matrix_transpose(ans), g)
    if is_complex(x):
        refuse_phase_dependence(inner, "eigenvector", "use a function of abs(v) or of v conj(v)ᵀ")
    s = matmul(conj_if(x, ans), matmul(_gaps(x) * inner, matrix_transpose(ans)))
    return _hermitian_part(x, s)


def refuse_phase_dependence(inner, what, hint):
    """A loss of complex eigenvectors or singular vectors must not depend on the phase LAPACK
    gives each one (v and e^{iφ} v are both eigenvectors): Im diag(inner) = 0, as PyTorch checks."""
    m = xp()
    raw = m.asarray(strip(inner))
    phase = m.abs(m.imag(m.diagonal(raw, axis1=-2, axis2=-1)))
    tolerance = max(1e-8, 1e3 * float(m.finfo(raw.dtype).eps))         # complex64's rounding too
    if raw.size and float(m.max(phase)) > tolerance * max(1.0, float(m.max(m.abs(raw)))):
        raise NotImplementedError(f"the loss depends on the phase of a complex {what}, which is arbitrary "
                                  f"(v and e^{{i phi}} v are both answers): its derivative is undefined; {hint}")


def _eigh_vectors_jvp(t, ans, x):
    return matmul(ans, _gaps(x) * matmul(conj_if(x, matrix_transpose(ans)), matmul(_hermitian_part(x, t), ans)))


# complex values: the tangent and the adjoint of the Hermitian part's vectors with each vector's phase
# held (the loss must not depend on it: refuse_phase_dependence)
eigh_vectors = defprim("eigh_vectors", lambda x: _eigh(x)[1], needs_ans=True,
                       vjp=(_eigh_vectors_vjp,), jvp=(_eigh_vectors_jvp,), complex_values=True, holomorphic=False)


# ---- einsum: "ij,jk->ik" with the operands; each operand's adjoint is another einsum ----------

def _einsum_op(prim):
    def einsum_op(subscripts, *operands):
        return bind(prim, tuple(operands), {"subscripts": subscripts})
    return einsum_op


def _einsum_vjp(i):
    def vjp(g, ans, *xs, subscripts):
        inputs, output = subscripts.split("->")
        parts = inputs.split(",")
        mine = parts[i]
        unique = "".join(dict.fromkeys(mine))         # 'ii' -> 'i': a diagonal, scattered back below
        sizes = {c: shape(xs[i])[mine.index(c)] for c in unique}
        others = [p for k, p in enumerate(parts) if k != i]
        operands = [x for k, x in enumerate(xs) if k != i]
        missing = [c for c in unique if c not in output and not any(c in p for p in others)]
        if missing:                 # summed only here: the adjoint is constant along those axes
            others.append("".join(missing))
            operands.append(xp().ones(tuple(sizes[c] for c in missing), dtype=float_dtype(strip(xs[i]))))
        grad = einsum(",".join([output] + others) + "->" + unique, g, *operands)
        if unique == mine:
            return grad
        grids = xp().indices(tuple(sizes[c] for c in unique), sparse=True)
        return untake(grad, tuple(grids[unique.index(c)] for c in mine), shape(xs[i]))
    return vjp


def _einsum_jvp(i):
    def jvp(t, ans, *xs, subscripts):
        return einsum(subscripts, *[t if k == i else x for k, x in enumerate(xs)])
    return jvp


einsum = defprim("einsum", lambda *xs, subscripts: plain_scalar(xp().einsum(subscripts, *xs)),
                 arity=None, make_op=_einsum_op, vjp=PerPosition(_einsum_vjp), jvp=PerPosition(_einsum_jvp), complex_values=True)


# ---- the thin SVD of a matrix with at least as many rows as columns (the library transposes a
# wide one): the singular values, and the singular vectors U (m x n) and Vh (n x n) stacked as one
# (m + n) x n array (one entry: their derivatives share each vector's phase, below), from LAPACK;
# distinct, non-zero singular values for the derivatives. The rules are Townsend's (2016) JVP and
# its transpose: with dP = Uᴴ dA V and F_ij = 1 / (s_j² - s_i²) off the diagonal,
#   dU = U (F ∘ (dP S + S dPᴴ) + iΦ) + (I - UUᴴ) dA V S⁻¹,   dV = V (F ∘ (S dP + dPᴴ S) - iΦ),
# Φ = diag(Im dP_kk / (2 s_k)): a complex vector pair (u_k, v_k) is one up to a common phase
# e^{iφ}, the derivative holds it (half to each), and a loss that depends on it is refused -------

def _svd(x):
    return _np_linalg().svd(x, full_matrices=False)


def _inverse_square_gaps(s):
    """F_ij = 1 / (s_j² - s_i²) off the diagonal, 0 on it."""
    diagonal = xp().eye(shape(s)[-1], dtype=bool)
    row, column = expand_dims(s, -2), expand_dims(s, -1)
    gaps = row * row - column * column
    return where(diagonal, 0.0, div(1.0, where(diagonal, 1.0, gaps)))


def _svd_factors(x, ans):
    """U, Vh, V (= Vhᴴ), s, F and s as a row and as a column, as ops (the rules differentiate again)."""
    m = shape(x)[-2]
    u = getitem(ans, (Ellipsis, slice(0, m), slice(None)))
    vh = getitem(ans, (Ellipsis, slice(m, None), slice(None)))
    s = singular_values(x)
    return u, vh, conj_if(x, matrix_transpose(vh)), s, _inverse_square_gaps(s), expand_dims(s, -2), expand_dims(s, -1)


def _phase_term(x, p, s):
    """diag(i Im p_kk / (2 s_k)) for a complex x; None for a real one (no phase)."""
    if not is_complex(x):
        return None
    n = shape(s)[-1]
    eye = xp().eye(n, dtype=float_dtype(strip(s)))
    return expand_dims(1j * div(imag(sum(p * eye, -1)), 2.0 * s), -2) * eye


def _svd_vectors_jvp(t, ans, x):
    u, vh, v, s, gaps, row, column = _svd_factors(x, ans)
    uh = conj_if(x, matrix_transpose(u))
    tv = matmul(t, v)
    dp = matmul(uh, tv)
    dph = conj_if(x, matrix_transpose(dp))
    inner_u, inner_v = gaps * (dp * row + column * dph), gaps * (column * dp + dph * row)
    phase = _phase_term(x, dp, s)
    if phase is not None:
        inner_u, inner_v = inner_u + phase, inner_v - phase
    du = matmul(u, inner_u) + div(tv - matmul(u, matmul(uh, tv)), row)
    dvh = conj_if(x, matrix_transpose(matmul(v, inner_v)))
    return concatenate((du, dvh), ndim(x) - 2)


def _svd_vectors_vjp(g, ans, x):
    u, vh, v, s, gaps, row, column = _svd_factors(x, ans)
    m = shape(x)[-2]
    gu = getitem(g, (Ellipsis, slice(0, m), slice(None)))
    gvh = getitem(g, (Ellipsis, slice(m, None), slice(None)))
    of_u = matmul(matrix_transpose(u), gu)                                  # Uᵀ ḡ_U
    of_v = matmul(matrix_transpose(v), conj_if(x, matrix_transpose(gvh)))   # Vᵀ ḡ_Vhᴴ
    if is_complex(x):
        refuse_phase_dependence(of_u + of_v, "singular vector", "use a function of abs(u), abs(vh) or of u_k "
                                 "and vh_k together (one svd() call's u and vh are checked together)")
    k_u, k_v = gaps * of_u, gaps * of_v
    inner = (k_u * row + matrix_transpose(conj_if(x, k_u) * column)
             + k_v * column + matrix_transpose(conj_if(x, k_v) * row))
    phase_u, phase_v = _phase_term(x, of_u, s), _phase_term(x, of_v, s)
    if phase_u is not None:
        inner = inner + phase_u - phase_v
    cu = conj_if(x, u)
    projected = div(gu - matmul(cu, of_u), row)
    return matmul(matmul(cu, inner) + projected, conj_if(x, vh))


def _tall(x):
    if shape(x)[-2] < shape(x)[-1]:
        raise ValueError("the SVD entries take a matrix with at least as many rows as columns")
    return _svd(x)


def _stacked_vectors(x):
    u, _, vh = _tall(x)
    return xp().concatenate([u, vh], axis=-2)


def singular_vectors(x):
    """U and Vh of x as ops, of any shape: a wide x's are those of xᵀ, swapped and transposed."""
    tall = shape(x)[-2] >= shape(x)[-1]
    a = x if tall else matrix_transpose(x)
    stacked, m = svd_vectors(a), shape(a)[-2]
    u = getitem(stacked, (Ellipsis, slice(0, m), slice(None)))
    vh = getitem(stacked, (Ellipsis, slice(m, None), slice(None)))
    return (u, vh) if tall else (matrix_transpose(vh), matrix_transpose(u))


def _singular_values_vjp(g, ans, x):
    # ds_k = Re(u_kᴴ dA v_k): the adjoint conj(U diag(g) Vh) (U diag(g) Vh for a real x)
    u, vh = singular_vectors(x)
    return conj_if(x, matmul(u * expand_dims(_real_if(x, g), -2), vh))


def _singular_values_jvp(t, ans, x):
    u, vh = singular_vectors(x)
    return _real_if(x, sum(conj_if(x, u) * matmul(t, matrix_transpose(conj_if(x, vh))), -2))


singular_values = defprim("singular_values", lambda x: _np_linalg().svd(x, compute_uv=False),
                          vjp=(_singular_values_vjp,), jvp=(_singular_values_jvp,), complex_values=True,
                          holomorphic=False, emits_at_shapes=True)
svd_vectors = defprim("svd_vectors", _stacked_vectors, needs_ans=True, vjp=(_svd_vectors_vjp,),
                      jvp=(_svd_vectors_jvp,), complex_values=True, holomorphic=False)
