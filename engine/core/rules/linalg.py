"""Linear algebra: det, log|det| (slogdet's differentiable half), inv, solve, cholesky, the
eigen-decomposition of a symmetric matrix (values and vectors, one entry each), and einsum. All
act on the last two axes (stacks of matrices work). Each rule is written in these same ops, so
the Hessian of det or of log|det| comes out of the table like any other.

eigh and cholesky read the symmetric part (A + Aᵀ)/2 of their argument (numpy reads one
triangle; the two agree on the symmetric matrices they are meant for, and the symmetric part
keeps the derivative a derivative of what is computed)."""
from __future__ import annotations

from ..backend import xp
from ..primitives import PerPosition, defprim, ndim, plain_scalar, shape
from ..tape import bind, strip
from .arithmetic import div, matmul, matrix_transpose
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
    """v's dtype where it is a float array, else float64 (a numpy dtype is falsy: no `or`)."""
    dtype = getattr(v, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" else xp().float64


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
              jvp=(lambda t, ans, x: sum(sum(_det_gradient(ans, x) * t, -1), -1),),
              emits_at_shapes=True, other_side=_singular)
logabsdet = defprim("logabsdet", lambda x: plain_scalar(_np_linalg().slogdet(x)[1]),
                    vjp=(lambda g, ans, x: _matrix_of(g) * matrix_transpose(inv(x)),),
                    jvp=(lambda t, ans, x: _trace_product(inv(x), t),))
inv = defprim("inv", lambda x: _np_linalg().inv(x), needs_ans=True, builtin="inv", emits_at_shapes=True,
              vjp=(lambda g, ans, x: -matmul(matmul(matrix_transpose(ans), g), matrix_transpose(ans)),),
              jvp=(lambda t, ans, x: -matmul(matmul(ans, t), ans),))


def _solve_vjp_a(g, ans, a, b):
    gb = solve(matrix_transpose(a), g)
    if ndim(b) == 1:
        return -(reshape(gb, (-1, 1)) * reshape(ans, (1, -1)))
    return -matmul(gb, matrix_transpose(ans))


solve = defprim("solve", lambda a, b: _np_linalg().solve(a, b), needs_ans=True, builtin="solve",
               emits_at_shapes=True,
                vjp=(_solve_vjp_a, lambda g, ans, a, b: solve(matrix_transpose(a), g)),
                jvp=(lambda t, ans, a, b: solve(a, -matmul(t, ans)),
                     lambda t, ans, a, b: solve(a, t)))


def _symmetric(x):
    m = xp()
    return 0.5 * (x + m.swapaxes(x, -1, -2))


def _half_lower(n, like):
    """The mask that takes the lower triangle and halves the diagonal (Φ of the Cholesky rules)."""
    m = xp()
    mask = m.tril(m.ones((n, n), dtype=float_dtype(like)))
    m.fill_diagonal(mask, 0.5)
    return mask


def _cholesky_vjp(g, ans, x):
    # Murray (2016): Ā = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹, then its symmetric part
    linv = inv(ans)
    inner = matmul(matrix_transpose(ans), g) * _half_lower(shape(ans)[-1], strip(ans))
    s = matmul(matmul(matrix_transpose(linv), inner), linv)
    return 0.5 * (s + matrix_transpose(s))


def _cholesky_jvp(t, ans, x):
    linv = inv(ans)
    sym = 0.5 * (t + matrix_transpose(t))
    inner = matmul(matmul(linv, sym), matrix_transpose(linv)) * _half_lower(shape(ans)[-1], strip(ans))
    return matmul(ans, inner)


cholesky = defprim("cholesky", lambda x: _np_linalg().cholesky(_symmetric(x)), needs_ans=True, emits_at_shapes=True,
                   builtin="cholesky", vjp=(_cholesky_vjp,), jvp=(_cholesky_jvp,))


def _eigh(x):
    return _np_linalg().eigh(_symmetric(x))


def _eigvalsh_vjp(g, ans, x):
    vectors = eigh_vectors(x)
    return matmul(vectors * expand_dims(g, -2), matrix_transpose(vectors))


def _eigvalsh_jvp(t, ans, x):
    vectors = eigh_vectors(x)
    return sum(vectors * matmul(0.5 * (t + matrix_transpose(t)), vectors), -2)


eigvalsh = defprim("eigvalsh", lambda x: _eigh(x)[0], vjp=(_eigvalsh_vjp,), jvp=(_eigvalsh_jvp,),
                   builtin="eigvalsh")


def _gaps(x):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (eigenvalues assumed distinct)."""
    values = eigvalsh(x)
    n = shape(values)[-1]
    diagonal = xp().eye(n, dtype=bool)
    gaps = expand_dims(values, -2) - expand_dims(values, -1)
    return where(diagonal, 0.0, div(1.0, where(diagonal, 1.0, gaps)))


def _eigh_vectors_vjp(g, ans, x):
    s = matmul(ans, matmul(_gaps(x) * matmul(matrix_transpose(ans), g), matrix_transpose(ans)))
    return 0.5 * (s + matrix_transpose(s))


def _eigh_vectors_jvp(t, ans, x):
    sym = 0.5 * (t + matrix_transpose(t))
    return matmul(ans, _gaps(x) * matmul(matrix_transpose(ans), matmul(sym, ans)))


eigh_vectors = defprim("eigh_vectors", lambda x: _eigh(x)[1], needs_ans=True,
                       vjp=(_eigh_vectors_vjp,), jvp=(_eigh_vectors_jvp,))


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
# wide one): singular values, U and Vh, one entry each, from LAPACK; distinct, non-zero singular
# values for the derivatives (the rules are the JVP of Townsend (2016) and its transpose) -------

def _svd(x):
    return _np_linalg().svd(x, full_matrices=False)


def _svd_parts(x):
    """U, s and V of x, as ops (so the rules differentiate again)."""
    return svd_u(x), singular_values(x), matrix_transpose(svd_vh(x))


def _inverse_square_gaps(s):
    """F_ij = 1 / (s_j² - s_i²) off the diagonal, 0 on it."""
    diagonal = xp().eye(shape(s)[-1], dtype=bool)
    row, column = expand_dims(s, -2), expand_dims(s, -1)
    gaps = row * row - column * column
    return where(diagonal, 0.0, div(1.0, where(diagonal, 1.0, gaps)))


def _svd_u_jvp(t, ans, x):
    u, s, v = _svd_parts(x)
    row = expand_dims(s, -2)
    ds_scaled = matmul(matmul(matrix_transpose(u), t), v) * row            # dS S
    tv = matmul(t, v)
    return (matmul(u, _inverse_square_gaps(s) * (ds_scaled + matrix_transpose(ds_scaled)))
            + div(tv - matmul(u, matmul(matrix_transpose(u), tv)), row))


def _svd_u_vjp(g, ans, x):
    u, s, v = _svd_parts(x)
    row = expand_dims(s, -2)
    utg = matmul(matrix_transpose(u), g)
    gapped = _inverse_square_gaps(s) * utg
    inner = (gapped + matrix_transpose(gapped)) * row
    return matmul(matmul(u, inner) + div(g - matmul(u, utg), row), matrix_transpose(v))


def _svd_vh_jvp(t, ans, x):
    u, s, v = _svd_parts(x)
    scaled_ds = expand_dims(s, -1) * matmul(matmul(matrix_transpose(u), t), v)     # S dS
    return matrix_transpose(matmul(v, _inverse_square_gaps(s) * (scaled_ds + matrix_transpose(scaled_ds))))


def _svd_vh_vjp(g, ans, x):
    u, s, v = _svd_parts(x)
    gapped = _inverse_square_gaps(s) * matmul(matrix_transpose(v), matrix_transpose(g))
    inner = expand_dims(s, -1) * (gapped + matrix_transpose(gapped))
    return matmul(matmul(u, inner), matrix_transpose(v))


def _tall(x):
    if shape(x)[-2] < shape(x)[-1]:
        raise ValueError("the SVD entries take a matrix with at least as many rows as columns")
    return _svd(x)


def _singular_vectors(x):
    """U and Vh of x as ops, of any shape: a wide x's are those of xᵀ, swapped and transposed."""
    if shape(x)[-2] >= shape(x)[-1]:
        return svd_u(x), svd_vh(x)
    xt = matrix_transpose(x)
    return matrix_transpose(svd_vh(xt)), matrix_transpose(svd_u(xt))


def _singular_values_vjp(g, ans, x):
    u, vh = _singular_vectors(x)
    return matmul(u * expand_dims(g, -2), vh)


def _singular_values_jvp(t, ans, x):
    u, vh = _singular_vectors(x)
    return sum(u * matmul(t, matrix_transpose(vh)), -2)


singular_values = defprim("singular_values", lambda x: _np_linalg().svd(x, compute_uv=False),
                          vjp=(_singular_values_vjp,), jvp=(_singular_values_jvp,), emits_at_shapes=True)
svd_u = defprim("svd_u", lambda x: _tall(x)[0], vjp=(_svd_u_vjp,), jvp=(_svd_u_jvp,))
svd_vh = defprim("svd_vh", lambda x: _tall(x)[2], vjp=(_svd_vh_vjp,), jvp=(_svd_vh_jvp,))
