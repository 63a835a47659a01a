"""Table-driven tests of engine.rules.TABLE: every primitive, on its domain, against numbers.

For each case: the reverse-mode VJP against central differences, the VJP against the JVP
(<vjp(g), t> == <g, jvp(t)>), the JVP against a directional difference, and the second
derivative (nested tapes) against central differences of the first. A primitive that is added
to the table without rules for its arguments, or without a case here, fails the first tests.
"""
import math
from dataclasses import dataclass, field

import numpy as np
import pytest

import autodiff
from autodiff.engine.core import ops
from autodiff.engine.core import rules
from autodiff.engine.core.notes import NOTES, reset
from autodiff.engine.core.tape import Dual, Tape, Var, backward, bind, new_level, strip

from devices import device, host

rng = np.random.default_rng(20240607)


def arr(*vals):
    return device(np.array(vals, dtype=float))


def rand(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape)


@dataclass
class Case:
    name: str
    args: tuple
    params: dict = field(default_factory=dict)
    diff: tuple = None            # positions of differentiable arguments (default: all)
    second: bool = True           # check the second derivative too
    label: str = ""

    def __post_init__(self):
        if self.diff is None:
            self.diff = tuple(range(len(self.args)))
        self.args, self.params = device(self.args), device(self.params)   # the engine's device

    @property
    def prim(self):
        return rules.TABLE[self.name]

    def __repr__(self):
        shapes = ",".join("s" if isinstance(a, float) else "x".join(map(str, np.shape(a))) or "0d"
                          for a in self.args)
        return f"{self.name}({shapes}){self.label}"


# ---- the domain of each primitive --------------------------------------------------------------

# Points strictly inside each function's domain; 0 wherever 0 is inside it.
UNARY_POINTS = {
    "neg": [0.0, 2.5, -1.25],
    "sin": [0.0, 1.3, -2.0], "cos": [0.0, 0.7, -3.0], "tan": [0.0, 0.5, -1.2],
    "arcsin": [0.0, 0.5, -0.9], "arccos": [0.0, 0.5, -0.9], "arctan": [0.0, 3.0, -0.4],
    "sinh": [0.0, 1.5, -2.0], "cosh": [0.0, 1.5, -2.0], "tanh": [0.0, 0.8, -3.0],
    "exp": [0.0, 1.0, -5.0], "log": [1.0, 0.02, 30.0], "log2": [1.0, 0.3, 8.0],
    "log10": [1.0, 0.3, 100.0], "sqrt": [1.0, 0.04, 9.0],
    "abs": [0.5, -2.0, 3.0], "relu": [0.5, -2.0, 3.0],
    "sigmoid": [0.0, 4.0, -30.0], "softplus": [0.0, 3.0, -40.0, 25.0],
    "log1p": [0.0, -0.9, 30.0], "expm1": [0.0, 1e-8, -5.0, 2.0], "exp2": [0.0, 3.5, -4.0],
    "cbrt": [1.0, -0.3, 27.0], "arcsinh": [0.0, 1.5, -20.0], "arccosh": [1.5, 1.01, 30.0],
    "arctanh": [0.0, 0.5, -0.99],
    "erf": [0.0, 1.2, -3.0], "erfc": [0.0, 1.2, -3.0, 5.0], "logit": [0.5, 0.01, 0.97],
    "log_expit": [0.0, 3.0, -40.0, 25.0], "sinc": [0.0, 0.3, -1.7, 2.0, 1e-9],
    "erfinv": [0.0, 0.5, -0.9], "erfcinv": [1.0, 0.3, 1.7], "ndtri": [0.5, 0.1, 0.97],
    "ndtr": [0.0, 1.2, -3.0], "log_ndtr": [0.0, 1.2, -10.0, 5.0], "erfcx": [0.0, 1.2, -1.5, 10.0],
    "loggamma": [0.5, 3.2, 30.0, 0.05], "entr": [0.5, 2.0, 0.05],
    "gammaln": [0.5, 3.2, 30.0, 0.05], "gamma": [0.5, 3.2, -0.5, 1.0],
    # complex numbers' own functions on real points (tests/test_complex.py: on complex ones)
    "real": [0.0, 2.5, -1.25], "conj": [0.0, 2.5, -1.25], "imag": [0.0, 2.5, -1.25], "angle": [0.5, 3.0, -2.0],
}

BINARY_NAMES = ["add", "sub", "mul", "div", "pow", "maximum", "minimum",
                "arctan2", "hypot", "logaddexp", "fmod", "mod", "beta", "xlogy", "xlog1py",
                "logaddexp2", "fmax", "fmin", "copysign", "heaviside", "rel_entr", "kl_div", "huber", "pseudo_huber"]


def binary_cases(name):
    # pow's base, div's divisor, beta's arguments and xlogy's y away from 0 (fmod's and mod's
    # too: their quotient then stays between two whole numbers)
    positive = name in ("pow", "div", "beta", "xlogy", "xlog1py", "fmod", "mod", "rel_entr", "kl_div", "huber",
                        "pseudo_huber")
    lo = 0.5 if positive else -2.0

    def r(*shape):
        return rand(*shape, low=lo, high=2.0)
    pairs = [(1.3, 0.7), (-0.4, 1.9) if not positive else (0.8, 1.9),
             (r(3), r(3)), (r(2, 3), r(2, 3)),
             (1.5, r(3)), (r(3), 0.6),                        # scalar with a vector
             (r(3, 1), r(1, 4)),                             # both broadcast
             (r(2, 3), r(3)), (r(3), r(2, 3))]               # rank promotion
    return [Case(name, (x, y)) for x, y in pairs]


def all_cases():
    cases = []
    for name, points in UNARY_POINTS.items():
        cases += [Case(name, (p,)) for p in points]
        cases.append(Case(name, (np.array(points),), label="[vector]"))
    cases.append(Case("exp", (rand(2, 2),), label="[matrix]"))
    for name in BINARY_NAMES:
        cases += binary_cases(name)
    cases += [Case("pow", (arr(-1.5, 2.0, -0.5), 2.0), diff=(0,), label="[negative base, whole power]"),
              Case("pow", (arr(-1.5, 2.0, -0.5), 3.0), diff=(0,), label="[negative base, cube]"),
              Case("pow", (arr(0.0, 0.0, 1.5), arr(0.0, 2.0, 0.0)), diff=(0,), label="[zero powers]"),
              Case("pow", (0.0, 0.0), diff=(0,), label="[0**0]")]
    cases += [Case("matmul", (rand(3), rand(3))), Case("matmul", (rand(2, 3), rand(3))),
              Case("matmul", (rand(3), rand(3, 2))), Case("matmul", (rand(2, 3), rand(3, 4)))]
    cond = np.array([True, False, True])
    cases += [Case("where", (cond, rand(3), rand(3)), diff=(1, 2)),
              Case("where", (cond, 2.0, rand(3)), diff=(1, 2)),
              Case("where", (np.array([[True], [False]]), rand(2, 3), rand(3)), diff=(1, 2)),
              Case("where", (True, 1.5, -0.5), diff=(1, 2))]
    m = rand(2, 3)
    cases += [Case("sum", (m,)), Case("sum", (m,), {"axis": 0}), Case("sum", (m,), {"axis": 1}),
              Case("sum", (rand(2, 3, 2),), {"axis": (0, 2)}, label="[axes]"),
              Case("sum", (1.5,))]
    distinct = np.array([[0.3, -1.2, 2.0], [1.1, 0.7, -0.4]])
    for name in ("max", "min"):
        cases += [Case(name, (distinct,)), Case(name, (distinct,), {"axis": 0}),
                  Case(name, (distinct,), {"axis": 1}), Case(name, (distinct[0],)),
                  Case(name, (distinct.reshape(2, 3, 1),), {"axis": (0, 2)}, label="[axes]")]
    cases += [Case("prod", (arr(0.5, -1.5, 2.0),)), Case("prod", (rand(2, 2, low=0.5),)),
              Case("prod", (arr(0.0, 2.0, 3.0),), label="[one zero]"),
              Case("prod", (arr(0.0, 2.0, 0.0),), label="[two zeros]"),
              Case("prod", (1.5,))]
    cases += [Case("prod", (rand(2, 3, low=0.5),), {"axis": 1}), Case("prod", (rand(2, 3),), {"axis": 0}),
              Case("prod", (np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]]),), {"axis": 1}, label="[zeros, axis]"),
              Case("prod", (np.array([[0.0, 2.0], [0.0, 0.5]]),), {"axis": 0}, label="[zeros, axis 0]")]
    cases += [Case("prod_except", (arr(0.5, -1.5, 2.0),), {"axis": 0}),
              Case("prod_except", (np.array([[0.0, 2.0, -1.5], [1.2, 0.0, 0.0]]),), {"axis": 1}, label="[zeros]"),
              Case("prod_except", (rand(3, 2),), {"axis": 0})]
    cases += extra_cases()
    cases += [Case("norm", (arr(3.0, -4.0),)), Case("norm", (rand(2, 3),)), Case("norm", (-2.0,))]
    cases += [Case("reshape", (m,), {"shape_": (3, 2)}), Case("reshape", (m,), {"shape_": (6,)}),
              Case("transpose", (m,)), Case("transpose", (rand(3),)),
              Case("expand_dims", (rand(3),), {"axis": 0}), Case("expand_dims", (rand(3),), {"axis": 1}),
              Case("broadcast_to", (rand(3),), {"shape_": (2, 3)}),
              Case("broadcast_to", (rand(1, 3),), {"shape_": (4, 3)}),
              Case("broadcast_to", (0.7,), {"shape_": (3,)}),
              Case("sum_to", (m,), {"shape_": (3,)}), Case("sum_to", (m,), {"shape_": (1, 3)}),
              Case("sum_to", (m,), {"shape_": (2, 1)}), Case("sum_to", (m,), {"shape_": ()})]
    v4 = rand(4)
    cases += [Case("getitem", (v4,), {"index": 1}), Case("getitem", (v4,), {"index": slice(1, None)}),
              Case("getitem", (v4,), {"index": slice(None, -1)}),
              Case("getitem", (v4,), {"index": np.array([0, 0, 2])}, label="[repeated]"),
              Case("getitem", (m,), {"index": (1, slice(None))}),
              Case("getitem", (m,), {"index": (slice(None), 2)}), Case("getitem", (m,), {"index": (1, 2)})]
    cases += [Case("untake", (rand(2),), {"index": slice(1, 3), "shape_": (4,)}),
              Case("untake", (rand(3),), {"index": np.array([0, 0, 2]), "shape_": (4,)}),
              Case("untake", (0.4,), {"index": (1, 2), "shape_": (2, 3)})]
    cases += [Case("stack", (1.0, -2.0, 0.5)), Case("stack", (rand(3), rand(3))),
              Case("stack", (rand(2, 2), rand(2, 2), rand(2, 2)))]
    cases += index_update_cases()
    return cases


def index_update_cases():
    """x[index] = v as a value (issue 15): one item, a slice with v broadcast, a column, a mask,
    integer arrays."""
    m = rand(2, 3)
    return [Case("index_update", (rand(4), 0.7), {"index": 1}),
            Case("index_update", (rand(4), rand(2)), {"index": slice(1, 3)}),
            Case("index_update", (rand(4), 0.3), {"index": slice(None)}, label="[broadcast]"),
            Case("index_update", (m, rand(2)), {"index": (slice(None), 0)}, label="[column]"),
            Case("index_update", (m, rand(3)), {"index": 1}, label="[row]"),
            Case("index_update", (rand(4), rand(2)), {"index": np.array([True, False, False, True])},
                 label="[mask]"),
            Case("index_update", (rand(4), rand(2)), {"index": np.array([3, 0])}, label="[integers]"),
            Case("index_update", (rand(4), rand(3)), {"index": np.array([2, 0, 2])}, label="[repeated]"),
            Case("index_update", (m, 0.5), {"index": (np.array([1, 1]), np.array([0, 0]))},
                 label="[repeated, broadcast]")]


def spd(n):
    a = rand(n, n)
    return a @ a.T + n * np.eye(n)


def symmetric_distinct(n):
    q, _ = np.linalg.qr(rand(n, n))
    return (q * np.arange(1.0, n + 1.0) * 1.7) @ q.T


def extra_cases():
    """The entries of numeric, special, scans, joins and linalg (issue 15)."""
    cases = [Case("polygamma", (arr(0.5, 2.0, 7.0),), {"n": n}) for n in (0, 1, 2)]
    cases += [Case("polygamma", (-0.5,), {"n": 0})]
    for name, points in (("bessel_j", arr(0.0, 1.5, -3.0, 12.0)), ("bessel_i", arr(0.0, 1.5, -2.0)),
                         ("spherical_j", arr(0.0, 1.5, -3.0, 12.0)), ("bessel_ie", arr(0.25, 1.5, -2.0, 30.0))):
        cases += [Case(name, (points,), {"n": n}) for n in (0, 1)] + [Case(name, (0.7,), {"n": 1})]
    cases += [Case("bessel_ie", (arr(1.5, -2.0),), {"n": 2})]
    for name in ("huber", "pseudo_huber"):          # delta > 0, r of either sign, inside and outside
        cases += [Case(name, (arr(0.5, 1.0, 2.0, 0.7), arr(-1.5, 0.3, -0.2, 2.5)), label="[signs]"),
                  Case(name, (0.8, arr(-1.5, 0.3, -0.2, 2.5)), label="[one delta]")]
    m, zeros = rand(2, 3), np.array([[0.0, 2.0, -1.5], [1.2, 0.0, 0.0]])
    for axis in (0, 1):
        cases += [Case("cumsum", (m,), {"axis": axis, "reverse": rev}) for rev in (False, True)]
        cases += [Case("cumprod", (m,), {"axis": axis}),
                  Case("cumprod", (zeros,), {"axis": axis}, label="[zeros]")]
    cases += [Case("cumprod", (arr(0.0, 0.0, 2.0),), {"axis": 0}, label="[two zeros]"),
              Case("cumsum", (np.zeros((0,)),), {"axis": 0, "reverse": False}, second=False, label="[empty]")]
    cases += [Case("permute_dims", (rand(2, 3, 4),), {"axes": (2, 0, 1)}),
              Case("permute_dims", (m,), {"axes": (1, 0)})]
    cases += [Case("concatenate", (rand(2), rand(3)), {"axis": 0}),
              Case("concatenate", (m, rand(2, 1), rand(2, 2)), {"axis": 1}),
              Case("concatenate", (m, rand(1, 3)), {"axis": 0}),
              Case("concatenate", (rand(0), rand(2)), {"axis": 0}, label="[empty]")]
    a3, sym = rand(3, 3) + 3 * np.eye(3), symmetric_distinct(3)
    cases += [Case("det", (a3,)), Case("det", (rand(2, 2, 2) + 2 * np.eye(2),), label="[stack]"),
              Case("det", (np.array([[1.0, 2.0], [2.0, 4.0]]),), second=False, label="[singular]"),
              Case("logabsdet", (a3,)), Case("logabsdet", (-a3,), label="[negative det]"),
              Case("inv", (a3,)), Case("inv", (rand(2, 2, 2) + 2 * np.eye(2),), label="[stack]"),
              Case("solve", (a3, rand(3))), Case("solve", (a3, rand(3, 2))),
              Case("cholesky", (spd(3),)), Case("cholesky", (np.array([[4.0]]),)),
              Case("eigvalsh", (sym,)), Case("eigh_vectors", (sym,)),
              Case("eigvalsh", (np.stack([sym, symmetric_distinct(3)]),), label="[stack]")]
    tall = np.array([[2.0, 0.3, -0.5], [0.1, 1.2, 0.4], [-0.6, 0.2, 0.7], [0.3, -0.4, 0.2]])
    for name in ("singular_values", "svd_vectors"):
        cases += [Case(name, (tall,)), Case(name, (a3,), label="[square]")]
    cases += [Case("svd_vectors", (rand(2, 3, 2),), label="[stack]")]
    cases += [Case("singular_values", (rand(2, 3),), label="[wide]")]
    cases += [Case("pinv", (tall,), {"rcond": 1e-15}),
              Case("pinv", (rand(2, 3),), {"rcond": 1e-15}, label="[wide]"),
              Case("pinv", (a3,), {"rcond": 1e-15}, label="[square]"),
              Case("pinv", (rand(2, 3, 2),), {"rcond": 1e-15}, label="[stack]"),
              Case("pinv", (tall,), {"rcond": 0.2}, label="[rcond]")]
    for name in ("qr_q", "qr_r"):           # issue 29 item 2: np.linalg.qr
        cases += [Case(name, (tall,)), Case(name, (a3,), label="[square]"),
                  Case(name, (rand(2, 3, 2),), label="[stack]")]
    general = np.array([[2.0, 0.5, -0.3], [0.1, -1.0, 0.4], [-0.2, 0.3, 0.8]])    # real, distinct eigenvalues
    for name in ("eig_values", "eig_vectors"):    # np.linalg.eig
        cases += [Case(name, (general,)), Case(name, (sym,), label="[symmetric]")]
    cases += [Case("einsum", (rand(2, 3), rand(3, 4)), {"subscripts": "ij,jk->ik"}),
              Case("einsum", (rand(3), rand(3)), {"subscripts": "i,i->"}),
              Case("einsum", (m,), {"subscripts": "ij->j"}),
              Case("einsum", (rand(2, 3), rand(3), rand(2)), {"subscripts": "ij,j,i->"}),
              Case("einsum", (rand(3, 3),), {"subscripts": "ii->"}, label="[trace]"),
              Case("einsum", (rand(3, 3), rand(3)), {"subscripts": "ii,i->i"}, label="[diagonal]"),
              Case("einsum", (rand(2, 2, 3),), {"subscripts": "iij->j"}, label="[diagonal, batch]")]
    cases += [Case("matmul", (rand(2, 3, 4), rand(2, 4, 2)), label="[stacks]"),
              Case("matmul", (rand(2, 3, 4), rand(4)), label="[stack, vector]"),
              Case("matmul", (rand(3), rand(2, 3, 4)), label="[vector, stack]"),
              Case("matmul", (rand(1, 3, 4), rand(2, 4, 2)), label="[broadcast stacks]"),
              Case("matmul", (rand(3, 4), rand(2, 4, 2)), label="[matrix, stack]")]
    return cases + fft_cases() + complex_linalg_cases()


def crand(*shape):
    return rand(*shape) + 1j * rand(*shape)


def complex_linalg_cases():
    """Linear algebra on complex matrices (issue 32 item 1): the holomorphic entries' real rules,
    and the real functions of complex entries (log|det|, eigenvalues of the Hermitian part,
    singular values, norm). The eigenvalues' and singular values' second derivatives go through
    the vectors' rules (phase-free: conj(V) diag(g) Vᵀ is the same for every phase of V). The
    vectors themselves are checked under phase-free losses (tests/test_complex.py): differences
    of LAPACK's vectors move their phases too."""
    ca = crand(3, 3) + 3 * np.eye(3)
    herm = ca + ca.conj().T
    return [Case("det", (ca,), label="[complex]"), Case("inv", (ca,), label="[complex]"),
            Case("solve", (ca, crand(3)), label="[complex]"), Case("solve", (ca, rand(3, 2)), label="[complex, real b]"),
            Case("logabsdet", (ca,), label="[complex]"), Case("eigvalsh", (herm,), label="[hermitian]"),
            Case("singular_values", (crand(4, 3),), label="[complex]"),
            Case("singular_values", (crand(2, 3),), label="[complex, wide]"),
            Case("pinv", (crand(4, 3),), {"rcond": 1e-15}, label="[complex]"),
            Case("pinv", (crand(2, 3),), {"rcond": 1e-15}, label="[complex, wide]"),
            Case("norm", (crand(4),), label="[complex]"), Case("matmul", (crand(2, 3), crand(3)), label="[complex]"),
            Case("einsum", (crand(2, 3), rand(3, 4)), {"subscripts": "ij,jk->ik"}, label="[complex]"),
            Case("sum", (crand(2, 3),), {"axis": 0}, label="[complex]")]


def fft_cases():
    """np.fft's entries (issue 32 item 1) on real and complex input, numpy's n/s padding and
    cutting, an axis that is not the last, and each norm."""
    def params(lengths, axes, norm="backward"):
        return {"lengths": lengths, "axes": axes, "norm": norm}
    cases = []
    for name in ("fft", "ifft"):
        cases += [Case(name, (rand(4),), params((4,), (0,)), label="[real]"),
                  Case(name, (crand(5),), params((5,), (0,)), label="[complex]"),
                  Case(name, (crand(3),), params((5,), (0,), "ortho"), label="[n padded, ortho]"),
                  Case(name, (crand(6),), params((4,), (0,), "forward"), label="[n cut, forward]"),
                  Case(name, (crand(3, 2),), params((3,), (0,)), label="[axis 0]")]
    for name in ("fft2", "ifft2", "fftn", "ifftn"):
        cases += [Case(name, (crand(3, 4),), params((3, 4), (0, 1))),
                  Case(name, (rand(2, 3),), params((3, 2), (0, 1), "ortho"), label="[real, s]")]
    cases += [Case("fftn", (crand(2, 3, 2),), params((2, 4), (0, 2), "forward"), label="[axes, s]"),
              Case("ifftn", (crand(2, 3, 2),), params((3, 2, 1), (0, 1, 2)), label="[3-d, s]")]
    cases += [Case("rfft", (rand(6),), params((6,), (0,))), Case("rfft", (rand(5),), params((5,), (0,)), label="[odd]"),
              Case("rfft", (rand(3),), params((6,), (0,), "ortho"), label="[n padded, ortho]"),
              Case("rfft", (rand(7),), params((5,), (0,), "forward"), label="[n cut, forward]"),
              Case("rfft", (rand(4, 2),), params((4,), (0,)), label="[axis 0]")]
    cases += [Case("irfft", (crand(4),), params((6,), (0,))),
              Case("irfft", (crand(4),), params((7,), (0,), "ortho"), label="[odd n, ortho]"),
              Case("irfft", (crand(6),), params((4,), (0,), "forward"), label="[n cut, forward]"),
              Case("irfft", (crand(2),), params((6,), (0,)), label="[n padded]"),
              Case("irfft", (rand(4),), params((6,), (0,)), label="[real]"),
              Case("irfft", (crand(3, 2),), params((4,), (0,)), label="[axis 0]")]
    for name in ("fftshift", "ifftshift"):
        cases += [Case(name, (rand(5),), {"axes": (0,)}),
                  Case(name, (crand(3, 4),), {"axes": (0, 1)}, label="[complex]"),
                  Case(name, (crand(3, 4),), {"axes": (1,)}, label="[one axis]")]
    return cases


CASES = all_cases()

# Primitives that carry no derivative at all (declared `nondiff`), with an example call.
NONDIFF = {
    "sign": (arr(-1.0, 0.0, 2.0),), "step": (arr(-1.0, 0.0, 2.0),),
    "share": (arr(1.0, 2.0, 3.0), arr(2.0, 2.0, 2.0)), "floor": (arr(-1.5, 0.0, 2.5),),
    "lt": (arr(1.0, 2.0), arr(2.0, 2.0)), "le": (arr(1.0, 2.0), arr(2.0, 2.0)),
    "gt": (arr(1.0, 2.0), arr(2.0, 2.0)), "ge": (arr(1.0, 2.0), arr(2.0, 2.0)),
    "eq": (arr(1.0, 2.0), arr(2.0, 2.0)), "ne": (arr(1.0, 2.0), arr(2.0, 2.0)),
    "ceil": (arr(-1.5, 0.0, 2.5),), "trunc": (arr(-1.5, 0.0, 2.5),), "rint": (arr(-1.5, 0.5, 2.5),),
    "floor_divide": (arr(-1.5, 1.0, 2.5), arr(0.5, 0.1, -2.0)),
}
# Arguments that are not differentiable by design (a condition), as (primitive, position).
NONDIFF_ARGS = {("where", 0)}


# ---- tools ------------------------------------------------------------------------------------

def apply(case, args):
    return bind(case.prim, tuple(args), case.params or None)


def value(case, args):
    return strip(apply(case, args))


def inner(a, b) -> float:
    """Re sum(a * b): the pairing of an adjoint with a value in the sweep's convention (for complex
    values too, core/complexes.py: the adjoint g of y is that of the loss Re sum(g * y))."""
    return float(np.real(np.sum(np.asarray(host(a)) * np.asarray(host(b)))))


def is_complex(v) -> bool:
    return np.iscomplexobj(host(v))


def random_like(v):
    if isinstance(v, (float, int)) or np.ndim(v) == 0:
        r = float(rng.uniform(0.5, 1.5) * rng.choice([-1, 1]))
        return r + 1j * float(rng.uniform(-1.5, 1.5)) if is_complex(v) else r
    r = rng.uniform(-1.5, 1.5, size=np.shape(v))
    return device(r + 1j * rng.uniform(-1.5, 1.5, size=np.shape(v)) if is_complex(v) else r)


def perturbed(args, pos, k, h):
    out = list(args)
    a = args[pos]
    if isinstance(a, float):
        out[pos] = a + h
    else:
        b = np.array(host(a), dtype=complex if is_complex(a) else float)
        b.flat[k] += h
        out[pos] = device(b)
    return out


def central(fun, args, pos, h_rel=1e-6):
    """d fun / d args[pos] by central differences, one entry at a time; for a complex argument
    dfun/dx - i dfun/dy at each x + iy (the sweep's convention), its parts moved one at a time."""
    a = args[pos]
    n = 1 if isinstance(a, float) else np.size(a)
    parts = (1.0, 1j) if is_complex(a) else (1.0,)
    grad = np.zeros(np.shape(a), dtype=complex if is_complex(a) else float)
    for k in range(n):
        x = a if isinstance(a, float) else np.asarray(host(a)).flat[k]
        h = h_rel * max(1.0, abs(x))
        d = sum((fun(perturbed(args, pos, k, u * h)) - fun(perturbed(args, pos, k, -u * h))) / (2 * h) / u
                for u in parts)
        if isinstance(a, float):
            return d
        grad.flat[k] = d
    return grad


def vjp(case, args, g):
    tape = Tape()
    boxed = list(args)
    for p in case.diff:
        boxed[p] = tape.watch(args[p])
    out = apply(case, boxed)
    adj = backward(tape, out, g)
    return [zeros_or(adj[boxed[p].index], args[p]) for p in case.diff]


def zeros_or(g, like_value):
    if g is None:
        return 0.0 if isinstance(like_value, float) else device(np.zeros(np.shape(like_value)))
    if is_complex(g) and not is_complex(like_value):     # a real input reads its adjoint's real part
        return np.real(strip(g))
    return strip(g)


def jvp(case, args, tangents):
    level = new_level()
    boxed = list(args)
    for p, t in zip(case.diff, tangents):
        boxed[p] = Dual(args[p], t, level)
    out = apply(case, boxed)
    assert out.__class__ is Dual and out.level == level
    return out.tangent


def assert_close(actual, expected, rtol, atol, what):
    np.testing.assert_allclose(np.asarray(host(actual)), np.asarray(host(expected)), rtol=rtol, atol=atol,
                               err_msg=what)


# ---- the table is complete -------------------------------------------------------------------

def test_every_primitive_is_covered_by_a_case_or_declared_nondiff():
    covered = {c.name for c in CASES} | set(NONDIFF)
    missing = sorted(set(rules.TABLE) - covered)
    assert not missing, f"primitives without a test case here (add their domain): {missing}"


@pytest.mark.parametrize("name", sorted(rules.TABLE))
def test_every_primitive_has_rules_for_each_argument_or_is_nondiff(name):
    prim = rules.TABLE[name]
    if prim.nondiff:
        assert name in NONDIFF, f"{name} is declared nondiff but not listed as such in this test"
        return
    arities = {len(c.args) for c in CASES if c.name == name}
    assert arities, f"{name}: no case gives its arity"
    for arity in arities:
        for pos in range(arity):
            for kind, per_argument in (("VJP", prim.vjps), ("JVP", prim.jvps)):
                try:
                    rule = per_argument[pos]
                except (IndexError, KeyError):
                    rule = None
                if (name, pos) in NONDIFF_ARGS:
                    assert rule is None, f"{name} argument {pos} is declared non-differentiable"
                    continue
                assert callable(rule), f"{name}: no {kind} rule for argument {pos} and not declared nondiff"


@pytest.mark.parametrize("name", sorted(NONDIFF))
def test_nondiff_primitives_record_nothing_and_give_plain_values(name):
    prim = rules.TABLE[name]
    assert prim.nondiff
    args = device(NONDIFF[name])
    tape = Tape()
    boxed = tuple(tape.watch(a) for a in args)
    out = bind(prim, boxed, None)
    assert not isinstance(out, (Var, Dual)), "a nondiff primitive must return an unboxed value"
    assert len(tape) == len(args)                 # only the watched inputs, no entry for the op
    np.testing.assert_array_equal(host(out), host(bind(prim, args, None)))


# ---- each rule against the numbers ------------------------------------------------------------

DIFF_CASES = [c for c in CASES if c.diff]


@pytest.mark.parametrize("case", DIFF_CASES, ids=repr)
def test_vjp_matches_central_differences(case):
    out = value(case, case.args)
    g = random_like(out)
    got = vjp(case, case.args, g)
    for p, grad in zip(case.diff, got):
        assert np.shape(grad) == np.shape(case.args[p]), "a gradient has its input's shape"
        fd = central(lambda a: inner(g, value(case, a)), case.args, p)
        assert_close(grad, fd, rtol=1e-6, atol=1e-7, what=f"{case!r}: argument {p}")


@pytest.mark.parametrize("case", DIFF_CASES, ids=repr)
def test_vjp_agrees_with_jvp_and_jvp_with_a_directional_difference(case):
    out = value(case, case.args)
    g = random_like(out)
    tangents = [random_like(case.args[p]) for p in case.diff]
    grads = vjp(case, case.args, g)
    t_out = jvp(case, case.args, tangents)
    assert np.shape(strip(t_out)) == np.shape(out), "a tangent has the output's shape"
    lhs = sum(inner(gr, t) for gr, t in zip(grads, tangents))
    rhs = inner(g, strip(t_out))
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-10)

    def along(h):
        moved = list(case.args)
        for p, t in zip(case.diff, tangents):
            moved[p] = moved[p] + h * t
        return value(case, moved)
    h = 1e-6
    fd = (np.asarray(host(along(h))) - np.asarray(host(along(-h)))) / (2 * h)
    assert_close(strip(t_out), fd, rtol=1e-6, atol=1e-7, what=f"{case!r}: JVP")


@pytest.mark.parametrize("case", [c for c in DIFF_CASES if c.second], ids=repr)
def test_second_derivative_through_nested_tapes(case):
    out = value(case, case.args)
    g = random_like(out)
    ws = [random_like(case.args[p]) for p in case.diff]

    def first(args):                           # <w, d<g, f>/d args>, from one tape
        return sum(inner(w, gr) for w, gr in zip(ws, vjp(case, args, g)))

    outer = Tape()
    xs = list(case.args)
    for p in case.diff:
        xs[p] = outer.watch(case.args[p])
    inner_tape = Tape()
    ys = list(xs)
    for p in case.diff:
        ys[p] = inner_tape.watch(xs[p])
    adj = backward(inner_tape, apply(case, ys), g)
    total = 0.0
    for p, w in zip(case.diff, ws):
        gp = adj[ys[p].index]
        if gp is not None:
            total = total + ops.sum(ops.mul(w, gp))
    adj2 = backward(outer, total, 1.0)
    for q in case.diff:
        got = zeros_or(adj2[xs[q].index], case.args[q])
        fd = central(first, case.args, q, h_rel=1e-5)
        assert_close(got, fd, rtol=1e-5, atol=1e-6, what=f"{case!r}: second derivative, argument {q}")


def test_prod_has_every_derivative_where_elements_are_zero():
    # issue 15, item 7: the second derivative of prod at a zero element (it was refused)
    outer = Tape()
    x = outer.watch(arr(0.0, 2.0, 3.0))
    inner_tape = Tape()
    y = inner_tape.watch(x)
    g = backward(inner_tape, ops.prod(y), 1.0)[y.index]
    assert strip(g).tolist() == [6.0, 0.0, 0.0]
    assert strip(backward(outer, ops.sum(g), 1.0)[x.index]).tolist() == [5.0, 3.0, 2.0]


def test_first_derivative_of_prod_at_a_zero_stays_linear_in_size():
    # 10^5 elements: an n x n construction (10^10) at the first order would not fit
    case = Case("prod", (np.linspace(0.0, 1.0, 100_000),))        # on the engine's device
    for grad in (vjp(case, case.args, 1.0)[0], jvp(case, case.args, [device(np.ones(100_000))])):
        assert np.shape(strip(grad)) in ((100_000,), ())


def test_hessian_and_nth_derivatives_of_prod_at_zeros():
    from autodiff.engine.diff.higher import derivatives, hessian
    r = hessian("prod(x)", at={"x": [0.0, 2.0, 0.0]})
    assert r.hessian["x"]["x"].tolist() == [[0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    r = hessian("prod(x)", at={"x": [0.0, 2.0, 0.0]}, method="reverse-over-reverse")
    assert r.hessian["x"]["x"].tolist() == [[0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    for method in ("reverse", "forward"):      # 2x^3 + 2x^2 with every factor 0 at x = 0
        r = derivatives("prod([x, 2*x, x + 1])", at={"x": 0.0}, order=4, method=method)
        assert list(r.derivatives) == [0.0, 4.0, 12.0, 0.0], method


def test_second_derivative_of_prod_at_zeros_in_a_program(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("def f(x):\n    return prod(x)\n\ndef g(x):\n    return sum(grad(f)(x))\n")
    r = autodiff.grad(str(program), at={"x": [0.0, 2.0, 3.0]}, fn="g")
    assert r.gradient["x"].tolist() == [5.0, 3.0, 2.0]
    # away from zeros the same second derivative is computed as before
    r = autodiff.grad(str(program), at={"x": [1.0, 2.0, 3.0]}, fn="g")
    assert r.gradient["x"].tolist() == [5.0, 4.0, 3.0]


# ---- domain edges, at exact values -------------------------------------------------------------

def grad1(name, x):
    tape = Tape()
    v = tape.watch(device(x))
    out = bind(rules.TABLE[name], (v,), None)
    seed = 1.0 if isinstance(x, float) else device(np.ones_like(x))
    return host(out), host(backward(tape, out, seed)[v.index])


@pytest.mark.parametrize("name, x, value_, slope", [
    ("log", 0.0, -math.inf, math.inf),
    ("log2", 0.0, -math.inf, math.inf),
    ("sqrt", 0.0, 0.0, math.inf),                # the convention: sqrt'(0) = +inf
    ("arcsin", 1.0, math.pi / 2, math.inf),
    ("arcsin", -1.0, -math.pi / 2, math.inf),
    ("arccos", 1.0, 0.0, -math.inf),
    ("exp", 1000.0, math.inf, math.inf),
    ("exp", -1000.0, 0.0, 0.0),
    ("sigmoid", 1000.0, 1.0, 0.0),
    ("sigmoid", -1000.0, 0.0, 0.0),
    ("softplus", 1000.0, 1000.0, 1.0),
    ("softplus", -1000.0, 0.0, 0.0),
    ("tanh", 50.0, 1.0, 0.0),
    ("log1p", -1.0, -math.inf, math.inf),
    ("cbrt", 0.0, 0.0, math.inf),
    ("arctanh", 1.0, math.inf, math.inf),
    ("arctanh", -1.0, -math.inf, math.inf),
    ("arccosh", 1.0, 0.0, math.inf),
    ("arcsinh", 1e200, math.asinh(1e200), 1e-200),
    ("arccosh", 1e200, math.acosh(1e200), 1e-200),
    ("erf", 10.0, 1.0, 0.0),
    ("erfc", 30.0, 0.0, 0.0),
    ("logit", 0.0, -math.inf, math.inf),
    ("logit", 1.0, math.inf, math.inf),
    ("expm1", 1000.0, math.inf, math.inf),
    ("expm1", -1000.0, -1.0, 0.0),
    ("exp2", -2000.0, 0.0, 0.0),
    ("exp2", 2000.0, math.inf, math.inf),
])
def test_domain_edges_give_ieee_values_not_errors(name, x, value_, slope):
    v, d = grad1(name, x)
    assert v == pytest.approx(value_) and d == pytest.approx(slope)
    va, da = grad1(name, np.array([x]))          # the array path agrees with the scalar path
    assert va[0] == pytest.approx(value_) and da[0] == pytest.approx(slope)


@pytest.mark.parametrize("name, x", [("log", -1.0), ("sqrt", -1.0), ("arcsin", 2.0), ("arccos", -1.5),
                                     ("log1p", -2.0), ("arctanh", 2.0), ("arccosh", 0.5), ("logit", 1.5)])
def test_outside_the_domain_the_value_is_nan_not_an_exception(name, x):
    v, _ = grad1(name, x)
    assert math.isnan(v)
    va, _ = grad1(name, np.array([x]))
    assert math.isnan(va[0])


@pytest.mark.parametrize("expr, at, value_, grads", [
    ("x**2", {"x": 0.0}, 0.0, {"x": 0.0}),
    ("x**y", {"x": 0.0, "y": 2.0}, 0.0, {"x": 0.0, "y": 0.0}),
    ("x**0.5", {"x": 0.0}, 0.0, {"x": math.inf}),
    ("x/y", {"x": 1.0, "y": 0.0}, math.inf, {"x": math.inf, "y": -math.inf}),
    ("x**-1", {"x": 0.0}, math.inf, {"x": -math.inf}),
    ("x**0", {"x": 0.0}, 1.0, {"x": 0.0}),                  # a constant: 0, not 0 * 0**-1 = nan
    ("x**y", {"x": 0.0, "y": 0.0}, 1.0, {"x": 0.0, "y": 0.0}),
    ("x**0", {"x": math.inf}, 1.0, {"x": 0.0}),
])
def test_arithmetic_at_zero(expr, at, value_, grads):
    r = autodiff.grad(expr, at=at)
    assert r.value == value_
    assert r.gradient == grads


# ---- kink conventions, and that they are noted -------------------------------------------------

def kinks_of(expr, at):
    r = autodiff.grad(expr, at=at)
    return r, [k[0] for k in r.kinks]


@pytest.mark.parametrize("expr, at, expected, op", [
    ("abs(x)", {"x": 0.0}, {"x": 0.0}, "abs"),
    ("relu(x)", {"x": 0.0}, {"x": 0.0}, "relu"),
    ("maximum(x, y)", {"x": 2.0, "y": 2.0}, {"x": 0.5, "y": 0.5}, "maximum"),
    ("minimum(x, y)", {"x": 2.0, "y": 2.0}, {"x": 0.5, "y": 0.5}, "minimum"),
    ("sqrt(x)", {"x": 0.0}, {"x": math.inf}, "sqrt"),
    # hardening task D: the new entries' conventions
    ("fmax(x, y)", {"x": 2.0, "y": 2.0}, {"x": 0.5, "y": 0.5}, "fmax"),
    ("fmin(x, y)", {"x": 2.0, "y": 2.0}, {"x": 0.5, "y": 0.5}, "fmin"),
    ("copysign(x, y)", {"x": 0.0, "y": -1.0}, {"x": 0.0, "y": 0.0}, "copysign"),
    ("heaviside(x, y)", {"x": 0.0, "y": 0.5}, {"x": 0.0, "y": 1.0}, "heaviside"),
    ("i0e(x)", {"x": 0.0}, {"x": 0.0}, "bessel_ie"),
    ("huber(x, y)", {"x": 1.5, "y": -1.5}, {"x": 0.0, "y": -1.5}, "huber"),
])
def test_scalar_kink_conventions_are_applied_and_noted(expr, at, expected, op):
    r, kink_ops = kinks_of(expr, at)
    assert r.gradient == expected
    assert op in kink_ops
    op_, span, detail = r.kinks[0]
    assert span is not None and (span.line, span.column) == (1, 1) and detail


@pytest.mark.parametrize("expr, x, expected, op", [
    ("sum(abs(x))", [-2.0, 0.0, 3.0], [-1.0, 0.0, 1.0], "abs"),
    ("sum(relu(x))", [-2.0, 0.0, 3.0], [0.0, 0.0, 1.0], "relu"),
    ("max(x)", [1.0, 3.0, 3.0], [0.0, 0.5, 0.5], "max"),
    ("min(x)", [2.0, -1.0, -1.0, -1.0], [0.0, 1 / 3, 1 / 3, 1 / 3], "min"),
    ("sum(maximum(x, 1))", [0.0, 1.0, 2.0], [0.0, 0.5, 1.0], "maximum"),
    ("sum(minimum(x, 1))", [0.0, 1.0, 2.0], [1.0, 0.5, 0.0], "minimum"),
    ("norm(x)", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], "norm"),
    ("sum(fmax(x, 1))", [0.0, 1.0, 2.0, math.nan], [0.0, 0.5, 1.0, 0.0], "fmax"),
    ("sum(fmin(x, 1))", [0.0, 1.0, 2.0, math.nan], [1.0, 0.5, 0.0, 0.0], "fmin"),
    ("sum(copysign(x, -1.0))", [-2.0, 0.0, 3.0], [1.0, 0.0, -1.0], "copysign"),
])
def test_array_kink_conventions_are_applied_and_noted(expr, x, expected, op):
    r, kink_ops = kinks_of(expr, {"x": x})
    np.testing.assert_allclose(r.gradient["x"], expected, rtol=1e-15)
    assert op in kink_ops


def test_fmax_and_fmin_give_the_gradient_to_the_number_beside_a_nan():
    # hardening task D: numpy's fmax/fmin ignore a nan; so does the gradient
    for name in ("fmax", "fmin"):
        r = autodiff.grad(f"sum({name}(x, y))", at={"x": [math.nan, 2.0, math.nan], "y": [1.0, math.nan, math.nan]})
        assert r.gradient["x"].tolist() == [0.0, 1.0, 0.0] and r.gradient["y"].tolist() == [1.0, 0.0, 0.0]


def test_sinc_has_every_derivative_at_0():
    # hardening task D: sinc'(0) = 0 and sinc''(0) = -pi²/3 (its slope goes through j_1, no 0/0)
    assert autodiff.grad("sinc(x)", at={"x": 0.0}).gradient["x"] == 0.0
    h = autodiff.hessian("sinc(x)", at={"x": 0.0}).hessian["x"]["x"]
    assert h == pytest.approx(-math.pi ** 2 / 3, rel=1e-14)


def test_sign_has_zero_derivative_everywhere():
    for x in (-2.0, 0.0, 3.0):
        r = autodiff.grad("sign(x)", at={"x": x})
        assert r.gradient == {"x": 0.0} and r.unconnected == ["x"]
    r = autodiff.grad("sum(sign(x) * x)", at={"x": [-2.0, 0.0, 3.0]})
    assert r.gradient["x"].tolist() == [-1.0, 0.0, 1.0]


def test_comparisons_carry_no_gradient():
    r = autodiff.grad("where(x > 0, x, 2*x)", at={"x": 1.5})
    assert r.gradient == {"x": 1.0}
    r = autodiff.grad("sum(where(x > 0, x, 2*x))", at={"x": [-1.0, 1.0]})
    assert r.gradient["x"].tolist() == [2.0, 1.0]


def test_smooth_points_note_no_kinks():
    for expr, at in (("abs(x) + relu(x) + sqrt(x)", {"x": 1.0}),
                     ("maximum(x, y) + minimum(x, y)", {"x": 1.0, "y": 2.0}),
                     ("max(x) + min(x) + norm(x)", {"x": [1.0, 2.0, 3.0]})):
        assert autodiff.grad(expr, at=at).kinks == []


def test_kink_convention_holds_in_forward_mode_too():
    level = new_level()
    for name, x, expected in (("abs", 0.0, 0.0), ("relu", 0.0, 0.0)):
        out = bind(rules.TABLE[name], (Dual(x, 1.0, level),), None)
        assert out.tangent == expected
    out = bind(ops.maximum.primitive, (Dual(2.0, 1.0, level), 2.0), None)
    assert out.tangent == 0.5


def test_kink_notes_are_kept_in_state_during_a_run():
    reset()
    tape = Tape()
    bind(ops.abs.primitive, (tape.watch(0.0),), None)
    assert [k[0] for k in NOTES.kinks] == ["abs"]
    reset()
    assert NOTES.kinks == []


def test_primitives_with_kinks_declare_their_convention():
    for name in ("abs", "relu", "maximum", "minimum", "max", "min", "sqrt", "norm"):
        assert rules.TABLE[name].kink, f"{name} has a kink but documents no convention"


# ---- float32 stays float32 -------------------------------------------------------------------------

def as32(v):
    v = host(v)
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == bool):
        return device(v)
    if isinstance(v, float):
        return np.float32(v)
    return device(np.asarray(v, dtype=np.complex64 if np.iscomplexobj(v) else np.float32))


@pytest.mark.parametrize("case", DIFF_CASES, ids=repr)
def test_float32_values_and_gradients_stay_float32(case):
    args = tuple(as32(a) for a in case.args)
    case32 = Case(case.name, args, case.params, case.diff, case.second, case.label)
    out = value(case32, args)
    assert np.asarray(host(out)).dtype in (np.float32, np.complex64), "the forward result (complex64 pairs with it)"
    g = np.ones_like(np.asarray(host(out)))
    g = g[()] if g.ndim == 0 else device(g)
    for p, grad in zip(case.diff, vjp(case32, args, g)):
        single = np.complex64 if np.iscomplexobj(case.args[p]) else np.float32
        assert np.asarray(host(grad)).dtype == single, f"the gradient of argument {p}"


# ---- accuracy on the tails (relative, not just absolute) ------------------------------------------

@pytest.mark.parametrize("x", [-700.0, -40.0, -30.0, -5.0, 0.0, 5.0, 30.0, 40.0])
def test_sigmoid_and_its_derivative_keep_their_digits_on_both_tails(x):
    def exact(v):                                   # sigmoid written the careful way, in math
        return 1 / (1 + math.exp(-v)) if v >= 0 else math.exp(v) / (1 + math.exp(v))
    value, slope = grad1("sigmoid", x)
    assert value == pytest.approx(exact(x), rel=1e-15, abs=0)
    assert slope == pytest.approx(exact(x) * exact(-x), rel=1e-14, abs=0)
    va, sa = grad1("sigmoid", np.array([x]))
    assert va[0] == pytest.approx(exact(x), rel=1e-15, abs=0) and sa[0] == pytest.approx(slope, rel=1e-14, abs=0)


@pytest.mark.parametrize("x", [-745.0, -40.0, -1e-3, 0.0, 1e-3, 40.0, 800.0])
def test_softplus_keeps_its_digits(x):
    value, slope = grad1("softplus", x)
    expected = max(x, 0.0) + math.log1p(math.exp(-abs(x)))
    assert value == pytest.approx(expected, rel=1e-15, abs=0)
    assert slope == pytest.approx(1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x)), rel=1e-14, abs=0)


@pytest.mark.parametrize("x", [1 - 2.0 ** -30, -(1 - 2.0 ** -40), 1 - 1e-12])
def test_arcsin_and_arccos_slopes_keep_their_digits_near_one(x):
    from fractions import Fraction
    exact = 1 / math.sqrt(float(1 - Fraction(x) ** 2))      # 1 - x**2 computed exactly
    assert grad1("arcsin", x)[1] == pytest.approx(exact, rel=1e-14, abs=0)
    assert grad1("arccos", x)[1] == pytest.approx(-exact, rel=1e-14, abs=0)


def test_share_of_an_int_and_a_number():
    """maximum's split of the gradient where an int meets a float (x > y is a Python bool)."""
    share = rules.TABLE["share"].impl
    assert [float(share(1, 2.0)), float(share(2.0, 1)), float(share(2, 2.0))] == [0.0, 1.0, 0.5]
    assert [float(share(np.float64(3.0), 1)), float(share(True, 0.5))] == [1.0, 1.0]
