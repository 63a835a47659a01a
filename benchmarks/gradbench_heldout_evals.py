"""The held-out GradBench set of benchmarks/gradbench_heldout.py: GradBench's evals (llsq, lse,
kmeans, gmm, ode, det, lstm, a hand-tracking-like ht, particle, saddle) written in the language the
way people write them from numpy or from GradBench's own Python tools — `where`, `sign`, `roll`,
gathers `x[idx]`, `None` axes, methods, helper functions, recursion, Python loops over counts that
are inputs, item assignment, `while` loops on computed values, `grad` inside the program — not
shaped to what the engine replays or fuses. The same computations, operation for operation, in
PyTorch eager and JAX (`reference(name, ops)`, over a small `ops` namespace of each framework's
own calls: torch's in-place item assignment, JAX's `.at[].set` (gmm's triangles: entry by entry
in torch as in the program, one scatter in JAX); loops over counts through
`ops.fori` (a Python loop in torch, `lax.fori_loop` in JAX, as JAX code writes them: jit would
otherwise unroll them and compile for minutes), `lax.cond`/`lax.while_loop` where jit needs them;
det's recursion is unrolled in both), at GradBench's own sizes (`SIZES`; the first lstm size, 64 steps, is
ours, GradBench's smallest is 1024).

Each eval's `inputs(name, size)` gives the inputs (fixed seed) and `WRT[name]` the inputs the
gradient is taken in (GradBench's); the others are constants (counts, indices, data)."""
from __future__ import annotations

import math

import numpy as np

PROGRAMS = {
    "llsq": """
import numpy as np

def f(x, n):
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    r = np.sign(t)
    p = np.ones(n)
    for j in range(len(x)):
        r = r - x[j] * p
        p = p * t
    return 0.5 * np.sum(r * r)
""",
    "lse": """
import numpy as np

def f(x):
    a = x.max()
    return a + np.log(np.exp(x - a).sum())
""",
    "kmeans": """
import numpy as np

def f(points, centroids):
    d = points[:, None, :] - centroids[None, :, :]
    dist = np.sum(d * d, axis=2)
    return np.sum(np.min(dist, axis=1))
""",
    "gmm": """
import numpy as np
from scipy.special import gammaln

def log_gamma_distrib(a, p):
    out = 0.25 * p * (p - 1) * np.log(np.pi)
    for j in range(1, p + 1):
        out = out + gammaln(a + 0.5 * (1 - j))
    return out

def log_wishart_prior(p, wishart_gamma, wishart_m, sum_qs, Qdiags, icf):
    n = p + wishart_m + 1
    k = icf.shape[0]
    out = np.sum(0.5 * wishart_gamma * wishart_gamma * (np.sum(Qdiags ** 2, axis=1) + np.sum(icf[:, p:] ** 2, axis=1))
                 - wishart_m * sum_qs)
    C = n * p * (np.log(wishart_gamma) - 0.5 * np.log(2)) - log_gamma_distrib(0.5 * n, p)
    return out - k * C

def logsumexp(x):
    mx = np.max(x)
    return mx + np.log(np.sum(np.exp(x - mx)))

def logsumexpvec(x):
    mx = np.max(x, axis=-1)
    return mx + np.log(np.sum(np.exp(x - mx[..., None]), axis=-1))

def make_L(icf, d):
    k = icf.shape[0]
    Ls = np.zeros((k, d, d))
    for c in range(k):
        idx = d
        for i in range(d):
            for j in range(i + 1, d):
                Ls[c, j, i] = icf[c, idx]
                idx += 1
    return Ls

def f(alphas, means, icf, x, wishart_gamma, wishart_m):
    n, d = x.shape
    Qdiags = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    Ls = make_L(icf, d)
    xcentered = x[:, None, :] - means[None, :, :]
    Lxcentered = Qdiags * xcentered + np.einsum("ijk,mik->mij", Ls, xcentered)
    sqsum = np.sum(Lxcentered ** 2, axis=2)
    inner = alphas + sum_qs - 0.5 * sqsum
    const = -n * d * 0.5 * np.log(2 * np.pi)
    return (const + np.sum(logsumexpvec(inner)) - n * logsumexp(alphas)
            + log_wishart_prior(d, wishart_gamma, wishart_m, sum_qs, Qdiags, icf))
""",
    "ode": """
import numpy as np

def ode_fun(x, y):
    y_rot = np.roll(y, 1)
    i = np.arange(len(x))
    return np.where(i == 0, x, x * y_rot)

def runge_kutta(x, yi, tf, s):
    h = tf / s
    y = yi
    for _ in range(s):
        k1 = ode_fun(x, y)
        k2 = ode_fun(x, y + h / 2 * k1)
        k3 = ode_fun(x, y + h / 2 * k2)
        k4 = ode_fun(x, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y

def f(x, s):
    y = runge_kutta(x, np.zeros(len(x)), 2.0, s)
    return y[-1]
""",
    "det": """
import numpy as np

def det_by_minor(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    s = 1.0
    for j in range(n):
        minor = np.concatenate((A[1:, :j], A[1:, j + 1:]), axis=1)
        total = total + s * A[0, j] * det_by_minor(minor)
        s = -s
    return total

def f(A):
    return det_by_minor(A)
""",
    "lstm": """
import numpy as np

def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))

def lstm_model(weight, bias, hidden, cell, inp):
    b = len(inp)
    gates = np.concatenate((inp, hidden, inp, hidden)) * weight + bias
    forget = logistic(gates[0:b])
    ingate = logistic(gates[b:2 * b])
    outgate = logistic(gates[2 * b:3 * b])
    change = np.tanh(gates[3 * b:])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell

def lstm_predict(w, w2, s, x):
    s2 = np.array(s)
    x2 = x * w2[0]
    for i in range(0, len(s), 2):
        h, c = lstm_model(w[i], w[i + 1], s[i], s[i + 1], x2)
        s2[i] = h
        s2[i + 1] = c
        x2 = h
    return x2 * w2[1] + w2[2], s2

def f(main_params, extra_params, state, sequence):
    total = 0.0
    count = 0
    inp = sequence[0]
    b = len(inp)
    for t in range(len(sequence) - 1):
        ypred, state = lstm_predict(main_params, extra_params, state, inp)
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2)
        ygold = sequence[t + 1]
        total += np.sum(ygold * ynorm)
        count += b
        inp = ygold
    return -total / count
""",
    "ht": """
import numpy as np

def rodrigues(r):
    n = np.sqrt(np.sum(r * r))
    if n < 0.0001:
        return np.eye(3)
    k = r / n
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(n) * K + (1 - np.cos(n)) * (K @ K)

def pose(theta, base_relatives, parents):
    B = len(parents)
    absolutes = np.zeros((B, 4, 4))
    for i in range(B):
        T = np.eye(4)
        T[:3, :3] = rodrigues(theta[i])
        rel = base_relatives[i] @ T
        if parents[i] == -1:
            absolutes[i] = rel
        else:
            absolutes[i] = absolutes[parents[i]] @ rel
    return absolutes

def f(theta, trans, base_relatives, inverse_base_absolutes, parents, base_positions, weights, correspondences, points):
    absolutes = pose(theta, base_relatives, parents)
    verts = np.zeros((len(weights[0]), 3))
    for b in range(len(parents)):
        M = absolutes[b] @ inverse_base_absolutes[b]
        moved = (M @ base_positions)[:3]
        verts = verts + weights[b][:, None] * moved.T
    verts = verts + trans
    err = points - verts[correspondences]
    return np.sum(err * err)
""",
    "particle": """
import numpy as np

def naive_euler(w):
    x = np.array([0.0, 8.0])
    xdot = np.array([0.75, 0.0])
    delta_t = 1e-1
    p = lambda x: (1.0 / np.linalg.norm(x - np.array([10.0, 10.0 - w]))
                   + 1.0 / np.linalg.norm(x - np.array([10.0, 0.0])))
    while True:
        xddot = -grad(p)(x)
        x_new = x + delta_t * xdot
        if x_new[1] > 0:
            x = x_new
            xdot = xdot + delta_t * xddot
        else:
            delta_t_f = -x[1] / xdot[1]
            x_t_f = x + delta_t_f * xdot
            return x_t_f[0] ** 2

def f(w):
    return naive_euler(w)
""",
    "saddle": """
import numpy as np

def objective(p1, p2):
    return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

def argmax_inner(p1, start):
    p = start
    g = grad(lambda q: objective(p1, q))(p)
    while np.sqrt(np.sum(g * g)) > 1e-5:
        p = p + 0.25 * g
        g = grad(lambda q: objective(p1, q))(p)
    return p

def f(p1):
    p2 = argmax_inner(p1, np.array([1.0, 1.0]))
    return objective(p1, p2)
""",
}

# GradBench's sizes (its evals' defaults or data files), a few of each: llsq (n, m), lse n,
# kmeans (k, n, d), gmm (d, k, n), ode (n, s), det ell, lstm (layers, steps; b = 14), ht (the
# points matched; 22 bones, 544 vertices), particle w, saddle start (one input each). GradBench's
# ode differentiates the last element of y, which s Runge-Kutta steps reach only from the last 4 s
# elements of x: at its sizes (4 s < n) that gradient is exactly 0, though every step is computed.
SIZES = {
    "llsq": ((16, 128), (256, 128), (4096, 128)),
    "lse": (2500, 40000, 640000),
    "kmeans": ((10, 1000, 8), (100, 1000, 8), (10, 10000, 16)),
    "gmm": ((2, 5, 1000), (10, 5, 1000), (10, 25, 1000)),
    "ode": ((1000, 1), (1000, 10), (10000, 100)),
    "det": (5, 6, 7),
    "lstm": ((2, 64), (2, 1024), (4, 1024)),
    "ht": (100, 1600, 12800),
    "particle": (0.0,),
    "saddle": (1.0,),
}

WRT = {"llsq": ["x"], "lse": ["x"], "kmeans": ["points", "centroids"], "gmm": ["alphas", "means", "icf"],
       "ode": ["x"], "det": ["A"], "lstm": ["main_params", "extra_params"], "ht": ["theta", "trans"],
       "particle": ["w"], "saddle": ["p1"]}


def label(size) -> str:
    return "x".join(map(str, size)) if isinstance(size, tuple) else str(size)


def inputs(name: str, size) -> dict:
    """The inputs of an eval at a size, the same for every engine (a fixed seed)."""
    rng = np.random.default_rng(31337)
    if name == "llsq":
        n, m = size
        return {"x": rng.random(m), "n": n}
    if name == "lse":
        return {"x": rng.uniform(-100.0, 100.0, size)}
    if name == "kmeans":
        k, n, d = size
        points = rng.random((n, d))
        return {"points": points, "centroids": points[-k:].copy()}
    if name == "gmm":
        d, k, n = size
        return {"alphas": rng.normal(size=k), "means": rng.uniform(size=(k, d)),
                "icf": rng.normal(size=(k, d + d * (d - 1) // 2)), "x": rng.normal(size=(n, d)),
                "wishart_gamma": 1.0, "wishart_m": 0}
    if name == "ode":
        n, s = size
        return {"x": rng.random(n), "s": s}
    if name == "det":
        return {"A": rng.random((size, size))}
    if name == "lstm":
        layers, steps = size
        b = 14
        return {"main_params": rng.normal(size=(2 * layers, 4 * b)), "extra_params": rng.normal(size=(3, b)),
                "state": rng.normal(size=(2 * layers, b)), "sequence": rng.normal(size=(steps, b))}
    if name == "ht":
        return hand(rng, size)
    if name == "particle":
        return {"w": float(size)}
    if name == "saddle":
        return {"p1": np.array([size, size])}
    raise KeyError(name)


def hand(rng, points: int, bones: int = 22, vertices: int = 544) -> dict:
    """A made-up hand: a chain of bones (each a child of one before it), skinning weights, a rest
    pose, and `points` observed points matched to vertices (of the model posed at random angles)."""
    parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, bones)])
    relatives = np.zeros((bones, 4, 4))
    for i in range(bones):
        axis = rng.normal(size=3)
        relatives[i] = np.eye(4)
        relatives[i, :3, :3] = _rotation(0.3 * axis)
        relatives[i, :3, 3] = rng.normal(size=3)
    absolutes = np.zeros_like(relatives)
    for i in range(bones):
        absolutes[i] = relatives[i] if parents[i] < 0 else absolutes[parents[i]] @ relatives[i]
    weights = rng.random((bones, vertices)) ** 4
    weights /= weights.sum(0)
    base = np.vstack([rng.normal(size=(3, vertices)), np.ones((1, vertices))])
    return {"theta": 0.3 * rng.normal(size=(bones, 3)), "trans": rng.normal(size=3), "base_relatives": relatives,
            "inverse_base_absolutes": np.linalg.inv(absolutes), "parents": parents, "base_positions": base,
            "weights": weights, "correspondences": rng.integers(0, vertices, points),
            "points": rng.normal(size=(points, 3))}


def _rotation(r):
    n = np.linalg.norm(r)
    k = r / n
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(n) * K + (1 - math.cos(n)) * (K @ K)


# ---- the same computations in PyTorch eager and JAX, through `ops` (torch_ops / jax_ops) ----

def ref_llsq(o, x, n):
    t = -1.0 + o.arange(n) * 2.0 / (n - 1)

    def term(j, rp):
        r, p = rp
        return r - x[j] * p, p * t
    r, _ = o.fori(len(x), term, (o.sign(t), o.ones(n)))
    return 0.5 * o.sum(r * r)


def ref_lse(o, x):
    a = o.max(x)
    return a + o.log(o.sum(o.exp(x - a)))


def ref_kmeans(o, points, centroids):
    d = points[:, None, :] - centroids[None, :, :]
    return o.sum(o.min(o.sum(d * d, 2), 1))


def ref_gmm(o, alphas, means, icf, x, wishart_gamma, wishart_m):
    n, d = x.shape
    k = icf.shape[0]
    Qdiags = o.exp(icf[:, :d])
    sum_qs = o.sum(icf[:, :d], 1)
    Ls = o.lower_triangles(icf[:, d:], k, d)
    xcentered = x[:, None, :] - means[None, :, :]
    Lx = Qdiags * xcentered + o.einsum("ijk,mik->mij", Ls, xcentered)
    inner = alphas + sum_qs - 0.5 * o.sum(Lx ** 2, 2)

    def lse(v):
        mx = o.max(v, -1)
        return mx + o.log(o.sum(o.exp(v - mx[..., None]), -1))    # rows, and a vector's as a 0-d array
    p, m = d, wishart_m
    dof = p + m + 1
    log_gamma = 0.25 * p * (p - 1) * math.log(math.pi) + sum(math.lgamma(0.5 * dof + 0.5 * (1 - j))
                                                             for j in range(1, p + 1))
    C = dof * p * (math.log(wishart_gamma) - 0.5 * math.log(2)) - log_gamma
    prior = o.sum(0.5 * wishart_gamma ** 2 * (o.sum(Qdiags ** 2, 1) + o.sum(icf[:, p:] ** 2, 1)) - m * sum_qs) - k * C
    return -n * d * 0.5 * math.log(2 * math.pi) + o.sum(lse(inner)) - n * lse(alphas) + prior


def ref_ode(o, x, s):
    def fun(y):
        return o.where(o.arange(len(x)) == 0, x, x * o.roll(y, 1))
    h = 2.0 / s

    def step(_, y):
        k1 = fun(y)
        k2 = fun(y + h / 2 * k1)
        k3 = fun(y + h / 2 * k2)
        k4 = fun(y + h * k3)
        return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return o.fori(s, step, o.zeros(len(x)))[-1]


def ref_det(o, A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    s = 1.0
    for j in range(n):
        total = total + s * A[0, j] * ref_det(o, o.concatenate((A[1:, :j], A[1:, j + 1:]), 1))
        s = -s
    return total


def ref_lstm(o, main_params, extra_params, state, sequence):
    b = sequence.shape[1]

    def model(weight, bias, hidden, cell, inp):
        gates = o.concatenate((inp, hidden, inp, hidden), 0) * weight + bias
        forget = 1.0 / (1.0 + o.exp(-gates[0:b]))
        ingate = 1.0 / (1.0 + o.exp(-gates[b:2 * b]))
        outgate = 1.0 / (1.0 + o.exp(-gates[2 * b:3 * b]))
        cell = cell * forget + ingate * o.tanh(gates[3 * b:])
        return outgate * o.tanh(cell), cell
    def step(t, carry):
        total, state = carry
        s2 = o.copy(state)
        x2 = sequence[t] * extra_params[0]
        for i in range(0, len(state), 2):
            h, c = model(main_params[i], main_params[i + 1], state[i], state[i + 1], x2)
            s2 = o.set(o.set(s2, i, h), i + 1, c)
            x2 = h
        ypred = x2 * extra_params[1] + extra_params[2]
        ynorm = ypred - o.log(o.sum(o.exp(ypred)) + 2)
        return total + o.sum(sequence[t + 1] * ynorm), s2
    total, _ = o.fori(len(sequence) - 1, step, (0.0 * main_params[0, 0], state))
    return -total / ((len(sequence) - 1) * b)


def ref_ht(o, theta, trans, base_relatives, inverse_base_absolutes, parents, base_positions, weights,
           correspondences, points):
    def rodrigues(r):
        n = o.sqrt(o.sum(r * r))

        def turned(r):
            k = r / n
            zero = 0.0 * k[0]
            K = o.stack([o.stack([zero, -k[2], k[1]]), o.stack([k[2], zero, -k[0]]), o.stack([-k[1], k[0], zero])])
            return o.eye(3) + o.sin(n) * K + (1 - o.cos(n)) * (K @ K)
        return o.cond(n < 0.0001, lambda r: o.eye(3) + 0.0 * r[0], turned, r)
    absolutes = []
    for i in range(len(parents)):
        T = o.set(o.eye(4), (slice(0, 3), slice(0, 3)), rodrigues(theta[i]))
        rel = base_relatives[i] @ T
        absolutes.append(rel if parents[i] == -1 else absolutes[parents[i]] @ rel)
    verts = o.zeros((weights.shape[1], 3))
    for b in range(len(parents)):
        moved = (absolutes[b] @ inverse_base_absolutes[b] @ base_positions)[:3]
        verts = verts + weights[b][:, None] * moved.T
    err = points - (verts + trans)[correspondences]
    return o.sum(err * err)


def ref_particle(o, w):
    def p(x):
        return 1.0 / o.norm(x - o.stack([10.0 + 0.0 * w, 10.0 - w])) + 1.0 / o.norm(x - o.array([10.0, 0.0]))
    delta_t = 1e-1

    def go_on(state):
        x, xdot = state
        return (x + delta_t * xdot)[1] > 0

    def step(state):
        x, xdot = state
        return x + delta_t * xdot, xdot - delta_t * o.grad(p)(x)
    x, xdot = o.while_loop(go_on, step, (o.array([0.0, 8.0]), o.array([0.75, 0.0])))
    delta_t_f = -x[1] / xdot[1]
    return (x + delta_t_f * xdot)[0] ** 2


def ref_saddle(o, p1):
    def objective(p1, p2):
        return (p1[0] ** 2 + p1[1] ** 2) - (p2[0] ** 2 + p2[1] ** 2)

    def g(p):
        return o.grad(lambda q: objective(p1, q))(p)

    def go_on(state):
        return o.sqrt(o.sum(state[1] * state[1])) > 1e-5

    def step(state):
        p = state[0] + 0.25 * state[1]
        return p, g(p)
    start = o.array([1.0, 1.0])
    p2, _ = o.while_loop(go_on, step, (start, g(start)))
    return objective(p1, p2)


REFERENCES = {"llsq": ref_llsq, "lse": ref_lse, "kmeans": ref_kmeans, "gmm": ref_gmm, "ode": ref_ode,
              "det": ref_det, "lstm": ref_lstm, "ht": ref_ht, "particle": ref_particle, "saddle": ref_saddle}

# JAX cannot reverse a while_loop: its derivative of these is forward mode (jacfwd), still jitted.
JAX_FORWARD = ("particle", "saddle")


class torch_ops:
    """The calls the references make, as PyTorch eager spells them (float64)."""

    def __init__(self):
        import torch
        self.t = torch

    def __getattr__(self, name):
        return getattr(self.t, name)

    def array(self, values):
        return self.t.tensor(values, dtype=self.t.float64)

    def arange(self, n):
        return self.t.arange(n, dtype=self.t.float64)

    def ones(self, n):
        return self.t.ones(n, dtype=self.t.float64)

    def zeros(self, shape):
        return self.t.zeros(shape, dtype=self.t.float64)

    def eye(self, n):
        return self.t.eye(n, dtype=self.t.float64)

    def sum(self, x, axis=None):
        return x.sum() if axis is None else x.sum(axis)

    def max(self, x, axis=None):
        return x.max() if axis is None else x.max(axis).values

    def min(self, x, axis):
        return x.min(axis).values

    def concatenate(self, parts, axis):
        return self.t.cat(parts, axis)

    def roll(self, x, shift):
        return self.t.roll(x, shift)

    def where(self, c, a, b):
        return self.t.where(c, a, b)

    def copy(self, x):
        return x.clone()

    def set(self, a, index, value):
        a[index] = value            # in place, as PyTorch code does it (autograd records the copy)
        return a

    def norm(self, x):
        return self.t.linalg.norm(x)

    def cond(self, pred, yes, no, operand):
        return yes(operand) if bool(pred) else no(operand)

    def while_loop(self, go_on, step, state):
        while bool(go_on(state)):
            state = step(state)
        return state

    def fori(self, n, body, carry):
        for i in range(n):
            carry = body(i, carry)
        return carry

    def lower_triangles(self, entries, k, d):
        """k matrices d x d whose strict lower triangles are `entries`, column by column: entry by
        entry, as the language's program does."""
        Ls = self.zeros((k, d, d))
        for c in range(k):
            idx = 0
            for i in range(d):
                for j in range(i + 1, d):
                    Ls[c, j, i] = entries[c, idx]
                    idx += 1
        return Ls

    def grad(self, fn):
        def gradient(x):
            x = x if x.requires_grad else x.detach().requires_grad_(True)
            return self.t.autograd.grad(fn(x), x, create_graph=True)[0]
        return gradient


class jax_ops:
    """The calls the references make, as JAX spells them (under jit: lax.cond, lax.while_loop, .at[].set)."""

    def __init__(self):
        import jax
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp

    def __getattr__(self, name):
        return getattr(self.jnp, name)

    def array(self, values):
        return self.jnp.asarray(values, dtype=self.jnp.float64)

    def arange(self, n):
        return self.jnp.arange(n, dtype=self.jnp.float64)

    def sum(self, x, axis=None):
        return self.jnp.sum(x, axis)

    def max(self, x, axis=None):
        return self.jnp.max(x, axis)

    def min(self, x, axis):
        return self.jnp.min(x, axis)

    def concatenate(self, parts, axis):
        return self.jnp.concatenate(parts, axis)

    def copy(self, x):
        return x

    def set(self, a, index, value):
        return a.at[index].set(value)

    def norm(self, x):
        return self.jnp.linalg.norm(x)

    def cond(self, pred, yes, no, operand):
        return self.jax.lax.cond(pred, yes, no, operand)

    def while_loop(self, go_on, step, state):
        return self.jax.lax.while_loop(go_on, step, state)

    def fori(self, n, body, carry):
        return self.jax.lax.fori_loop(0, n, body, carry)

    def lower_triangles(self, entries, k, d):
        """The same in one scatter (index arrays): jit would unroll the loops into k d² / 2 updates."""
        cols = [i for i in range(d) for j in range(i + 1, d)]
        rows = [j for i in range(d) for j in range(i + 1, d)]
        return self.jnp.zeros((k, d, d)).at[:, rows, cols].set(entries)

    def grad(self, fn):
        return self.jax.grad(fn)
