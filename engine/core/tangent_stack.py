"""Structured stacks of tangents: a stack of k tangents of shape (k,) + S (core/batch.py) kept as
a few diagonals plus a few rank-one terms instead of k x size numbers.

A seed of basis tangents is the identity: row r is e_r, a diagonal. The JVP rules of elementwise
primitives scale each tangent elementwise (a diagonal stays one: diag(d) * f = diag(d * f)), a
sum over the value axes makes a dense (k,) stack, which broadcast back to an array is rank one,
outer(u, ones), and scaling keeps outer(u, v) as outer(u, v * f). So the Hessian of a program of
elementwise steps and reductions costs O(size) per step and one O(k x size) assembly at the end.

`TangentStack` is understood by the engine's ops and numpy's protocols (`__array_ufunc__`,
`__array_function__`, core/stack_protocols.py) for those cases only: products and quotients by
raw factors, sums and differences of stacks, negation, the full sum over the value axes,
broadcasting, reshape and expand_dims past the stack's axis, where() with a condition on the
values (the stack times the mask). Anything else (matmul, indexing, stack, a comparison, a
where() whose condition is itself a stack, a partial sum of a diagonal, more than MAX_RANK_ONE
rank-one terms) gets the dense array, so it runs exactly as a dense stack would.

A TangentStack holds finite numbers only: an operation whose result would hold an inf or a nan
(a factor inf where a diagonal is 0, a division by 0) is done on the dense array instead, so the
strong zeros of tangent_times / zero_where_zero (a 0 tangent times an inf factor stays 0) mean
what they mean on a dense stack, and the zeros a diagonal does not store never become nan.
"""
from __future__ import annotations

from math import prod

from .backend import np
from .numbers import finite, finite_array
from .stack_protocols import StackArray, joint_shape

MAX_RANK_ONE = 6
# Off: every stack of basis tangents is dense (the tests' reference); on only where it pays: a
# stack of fewer rows is quicker dense than as a few arrays and Python bookkeeping
STRUCTURED = [True]
MIN_STRUCTURED_ROWS = 16
SMALL_PRODUCT = 1 << 16      # elements of a dense stack assembled by BLAS's matmul


def structured_seed(k: int, dtype_name: str, backend_name: str) -> bool:
    """Whether a basis of k tangents is seeded structured: numpy float64, enough rows."""
    return STRUCTURED[0] and k >= MIN_STRUCTURED_ROWS and dtype_name == "float64" and backend_name == "numpy"


class TangentStack(StackArray):
    """k tangents of shape `vshape`: the sum of `diagonals`, (offset, d) with row i + offset
    holding d.flat[i] at element i (d of shape vshape), and `rank_one`, (u, v) with row r equal
    to u[r] * v (u of shape (k,), v a float or an array broadcasting to vshape)."""
    __slots__ = ("k", "vshape", "diagonals", "rank_one", "shape")

    def __init__(self, k, vshape, diagonals=(), rank_one=()):
        self.k = k
        self.vshape = vshape
        self.diagonals = diagonals
        self.rank_one = rank_one
        self.shape = (k,) + vshape

    @classmethod
    def identity(cls, k, vshape, offset=0):
        """Rows 0..k-1 are the basis vectors e_(r - offset) of a space of shape vshape."""
        return cls(k, tuple(vshape), ((offset, np().ones(vshape)),))

    @classmethod
    def outer(cls, u, vshape):
        """Row r is u[r] everywhere: a (k,) stack broadcast to shape vshape."""
        return cls(len(u), tuple(vshape), (), ((u, 1.0),))

    # ---- what numpy asks of an array ---------------------------------------------------
    @property
    def ndim(self):
        return 1 + len(self.vshape)

    @property
    def size(self):
        return self.k * prod(self.vshape)

    @property
    def dtype(self):
        return np().dtype("float64")

    def __len__(self):
        return self.k

    def __repr__(self):
        return f"TangentStack({self.shape}, {len(self.diagonals)} diagonal(s), {len(self.rank_one)} rank-one)"

    def dense(self):
        """The (k,) + vshape array this stands for."""
        return self.assembled(False).reshape(self.shape)

    def dense_columns(self):
        """The transpose of the dense (k, size) matrix, C-ordered: a Jacobian's columns are the
        rows of a stack, and copying a transposed view of 10^6 numbers costs more than this."""
        return self.assembled(True)

    def assembled(self, by_columns: bool):
        """The (k, size) matrix, or its transpose: the rank-one terms' products in one pass
        (BLAS's matmul where the result is small; einsum where it is large, where BLAS's threads
        are slow on a few columns), the diagonals added along strided views."""
        m = np()
        size = prod(self.vshape)
        if self.rank_one:
            # m.array of the rows, not m.stack: the same matrix without stack's Python checks
            us = m.array([u for u, _ in self.rank_one])
            vs = m.array([m.full(size, v) if v.__class__ is float else
                          (v if v.shape == self.vshape else m.broadcast_to(v, self.vshape)).reshape(-1)
                          for _, v in self.rank_one])
            left, right = (vs.T, us) if by_columns else (us.T, vs)
            out = left @ right if self.k * size <= SMALL_PRODUCT else m.einsum("ij,jk->ik", left, right)
        else:
            out = m.zeros((size, self.k) if by_columns else (self.k, size))
        flat = out.reshape(-1)
        width = self.k if by_columns else size
        for offset, d in self.diagonals:
            lo, hi = max(0, -offset), min(size, self.k - offset)
            if lo < hi:                        # element (i + offset, i) of the (k, size) matrix
                first = lo * (width + 1) + (offset if by_columns else offset * size)
                flat[first:first + (hi - lo - 1) * (width + 1) + 1:width + 1] += d.reshape(-1)[lo:hi]
        return out

    def magnitude_bound(self) -> float:
        """A bound on the magnitude of every number of the dense stack (its terms' largest
        magnitudes added up): where it is far below the largest float, the assembly is finite
        without a pass over its k x size numbers."""
        m = np()
        bound = 0.0
        for _, d in self.diagonals:
            if d.size:
                bound += float(m.abs(d).max())
        for u, v in self.rank_one:
            if u.size:
                bound += float(m.abs(u).max()) * (abs(v) if v.__class__ is float else
                                                  float(m.abs(v).max()) if v.size else 0.0)
        return bound

    def __array__(self, dtype=None, copy=None):
        d = self.dense()
        return d if dtype is None else d.astype(dtype)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dense(), name)      # .T, .astype, .reshape...: the dense array's

    def __getitem__(self, index):
        return self.dense()[index]

    # ---- the structured cases -----------------------------------------------------------
    def scaled(self, factor, divide=False):
        """self * factor (or / factor) for a raw factor broadcasting against the values, or None."""
        fshape = () if factor.__class__ is float else getattr(factor, "shape", ())
        vshape = self.vshape
        if fshape and fshape != vshape:
            if len(fshape) > len(vshape):
                return None
            vshape = joint_shape(vshape, fshape)
            if vshape is None:
                return None
            if vshape != self.vshape and self.diagonals:
                return None                     # a diagonal's values spread: not a diagonal any more
        diagonals = []
        for offset, d in self.diagonals:
            d = d / factor if divide else d * factor
            if not finite_array(d):            # an inf or nan: the dense stack's business
                return None
            diagonals.append((offset, d))
        rank_one = []
        ndarray = np().ndarray
        for u, v in self.rank_one:
            v = v / factor if divide else v * factor
            if not (finite_array(v) if v.__class__ is ndarray else finite(v)):     # (no dispatch for an array)
                return None
            rank_one.append((u, v))
        return TangentStack(self.k, vshape, diagonals, rank_one)

    def plus(self, other, negate=False):
        """self + other (or - other) for a stack of the same shape, or None."""
        if other.__class__ is not TangentStack or other.k != self.k or other.vshape != self.vshape:
            return None
        diagonals = dict(self.diagonals)
        for offset, d in other.diagonals:
            if offset in diagonals:
                total = diagonals[offset] - d if negate else diagonals[offset] + d
                if not finite_array(total):
                    return None
                diagonals[offset] = total
            else:
                diagonals[offset] = -d if negate else d
        rank_one = list(self.rank_one)
        for u, v in other.rank_one:
            u = -u if negate else u
            for j, (u0, v0) in enumerate(rank_one):
                if v0 is v or (v0.__class__ is float and v.__class__ is float and v0 == v):
                    rank_one[j] = (u0 + u, v0)          # the same v: one term
                    break
            else:
                rank_one.append((u, v))
        if len(rank_one) > MAX_RANK_ONE:
            return None
        return TangentStack(self.k, self.vshape, tuple(diagonals.items()), tuple(rank_one))

    def negated(self):
        return TangentStack(self.k, self.vshape, tuple((o, -d) for o, d in self.diagonals),
                            tuple((-u, v) for u, v in self.rank_one))

    def summed(self, keepdims=False):
        """The sum over the value axes: a dense (k,) stack."""
        m = np()
        size = prod(self.vshape)
        diagonals = self.diagonals
        if len(diagonals) == 1 and diagonals[0][0] == 0 and size == self.k:
            out = diagonals[0][1].reshape(-1).copy()   # the usual case: one diagonal, all rows
            diagonals = ()
        else:
            out = m.zeros(self.k)
        for offset, d in diagonals:
            lo, hi = max(0, -offset), min(size, self.k - offset)
            if lo < hi:
                out[lo + offset:hi + offset] += d.reshape(-1)[lo:hi]
        for u, v in self.rank_one:
            if v.__class__ is float:
                total = v * size
            else:
                total = m.add.reduce((v if v.shape == self.vshape else m.broadcast_to(v, self.vshape)), None)
            out += u * total
        return out.reshape((self.k,) + (1,) * len(self.vshape)) if keepdims else out

    def reshaped(self, shape):
        """The stack with its values reshaped (the stack's axis kept), or None."""
        shape = tuple(shape)
        if not shape or shape[0] not in (self.k, -1):
            return None
        size = prod(self.vshape)
        vshape = list(shape[1:])
        if -1 in vshape:
            known = prod(d for d in vshape if d != -1)
            vshape[vshape.index(-1)] = size // known if known else 0
        vshape = tuple(vshape)
        if not vshape or prod(vshape) != size:
            return None                        # a (k,) stack is dense: it holds k numbers
        return TangentStack(self.k, vshape, tuple((o, d.reshape(vshape)) for o, d in self.diagonals),
                            tuple((u, v if v.__class__ is float else np().broadcast_to(v, self.vshape).reshape(vshape))
                                  for u, v in self.rank_one))

    def broadcast(self, shape):
        """The stack broadcast to `shape` (the stack's axis first), or None."""
        shape = tuple(shape)
        if not shape or shape[0] != self.k:
            return None
        vshape = shape[1:]
        if vshape == self.vshape:
            return self
        if self.diagonals:
            return None
        if joint_shape(self.vshape, vshape) != vshape:
            return None
        return TangentStack(self.k, vshape, (), self.rank_one)
