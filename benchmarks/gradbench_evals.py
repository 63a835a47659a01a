"""The GradBench-style evals of benchmarks/gradbench.py: each written in the language (PROGRAMS)
and in PyTorch, HIPS autograd and JAX (gradbench_torch.py; gradbench_numpylike.py for autograd and JAX,
each run in its own process), with inputs made from a size by `inputs`.

These are the evals' shapes of computation (least squares, log-sum-exp, k-means' objective, an
explicit ODE integration, a diagonal Gaussian mixture's log-likelihood, an LSTM over a sequence,
a nested derivative), written as far as the language allows: no in-place updates, loops over
range(len(...)), lists only as literals. Every input is differentiated, by every engine."""
from __future__ import annotations

import numpy as np

PROGRAMS = {
    "llsq": """
def f(x, T, y):
    r = y - T @ x
    return 0.5 * sum(r * r)
""",
    "lse": """
def f(x):
    m = max(x)
    return m + log(sum(exp(x - m)))
""",
    "kmeans": """
def f(P, C):
    best = sum((P - C[0]) ** 2, 1)
    for k in range(1, len(C)):
        best = minimum(best, sum((P - C[k]) ** 2, 1))
    return sum(best)
""",
    "ode": """
def f(x, y0):
    y = y0
    h = 0.01
    for k in range(20):
        y = y + h * (x - y * y)
    return sum(y)
""",
    "gmm": """
def term(X, alpha, mean, logsig):
    d = (X - mean) * exp(-logsig)
    return alpha + sum(-logsig) - 0.5 * sum(d * d, 1)

def f(alphas, means, logsigs, X):
    m = term(X, alphas[0], means[0], logsigs[0])
    for k in range(1, len(alphas)):
        m = maximum(m, term(X, alphas[k], means[k], logsigs[k]))
    s = 0 * m
    for k in range(len(alphas)):
        s = s + exp(term(X, alphas[k], means[k], logsigs[k]) - m)
    a = max(alphas)
    return sum(m + log(s)) - len(X) * (a + log(sum(exp(alphas - a))))
""",
    "lstm": """
def f(Wi, Wf, Wo, Wc, Ui, Uf, Uo, Uc, X):
    h = 0 * (Wi @ X[0])
    c = h
    loss = 0.0
    for t in range(len(X) - 1):
        x = X[t]
        i = sigmoid(Wi @ x + Ui @ h)
        g = sigmoid(Wf @ x + Uf @ h)
        o = sigmoid(Wo @ x + Uo @ h)
        c = g * c + i * tanh(Wc @ x + Uc @ h)
        h = o * tanh(c)
        e = h - X[t + 1]
        loss = loss + sum(e * e)
    return loss
""",
    "nested": """
def h(w):
    return w * w * w + sin(w) * w

def f(x):
    s = 0.0
    for k in range(len(x)):
        s = s + grad(h)(x[k]) * x[k]
    return s
""",
}

# Sizes: small, medium, large (the number of points, of elements, or of time steps).
SIZES = {
    "llsq": (10, 100, 1000), "lse": (10, 1000, 100000), "kmeans": (10, 100, 1000), "ode": (4, 64, 1024),
    "gmm": (10, 100, 1000), "lstm": (4, 16, 32), "nested": (4, 16, 64),
}


def inputs(name: str, size: int) -> dict:
    """The inputs of an eval at a size, the same for every engine (a fixed seed)."""
    rng = np.random.default_rng(20260101 + size)
    if name == "llsq":
        t = np.linspace(-1.0, 1.0, size)
        return {"x": rng.normal(size=8), "T": np.stack([t ** j for j in range(8)], 1), "y": np.sin(3 * t)}
    if name == "lse":
        return {"x": rng.normal(size=size)}
    if name == "kmeans":
        return {"P": rng.normal(size=(size, 4)), "C": rng.normal(size=(5, 4))}
    if name == "ode":
        return {"x": rng.uniform(0.5, 1.5, size=size), "y0": rng.uniform(0.0, 1.0, size=size)}
    if name == "gmm":
        return {"alphas": rng.normal(size=3), "means": rng.normal(size=(3, 4)), "logsigs": 0.1 * rng.normal(size=(3, 4)),
                "X": rng.normal(size=(size, 4))}
    if name == "lstm":
        hidden = 8
        w = {k: 0.3 * rng.normal(size=(hidden, hidden)) for k in ("Wi", "Wf", "Wo", "Wc", "Ui", "Uf", "Uo", "Uc")}
        return {**w, "X": rng.normal(size=(size, hidden))}
    if name == "nested":
        return {"x": rng.uniform(-1.0, 1.0, size=size)}
    raise KeyError(name)
