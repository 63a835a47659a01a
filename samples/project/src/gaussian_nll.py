"""Negative log-likelihood of a Gaussian in its mean and the Cholesky factor of its covariance,
with the gradient derived by hand (matrix cookbook, eqs. 57 and 61)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import matplotlib.pyplot as plt


@dataclass(frozen=True)
class Sample:
    X: np.ndarray
    label: str = "synthetic"


def loss(mu: np.ndarray, L: np.ndarray, X: np.ndarray) -> float:
    """-log N(X | mu, L L^T), summed over the rows of X; L lower triangular."""
    n, d = X.shape
    L = np.tril(L)
    diff = X - mu
    z = scipy.linalg.solve_triangular(L, diff.T, lower=True)
    logdet = 2.0 * np.sum(np.log(np.abs(np.diag(L))))
    return 0.5 * np.sum(z ** 2) + 0.5 * n * logdet + 0.5 * n * d * np.log(2.0 * np.pi)


def loss_grad(mu: np.ndarray, L: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(d/dmu, d/dL) by hand, through the covariance S = L L^T."""
    n = X.shape[0]
    L = np.tril(L)
    diff = X - mu
    S = L @ L.T
    c, low = scipy.linalg.cho_factor(S, lower=True)
    alpha = scipy.linalg.cho_solve((c, low), diff.T)
    g_mu = -alpha.sum(axis=1)
    g_S = 0.5 * (n * scipy.linalg.cho_solve((c, low), np.eye(len(mu))) - alpha @ alpha.T)
    return g_mu, np.tril(2.0 * g_S @ L)


def fit(sample: Sample, steps: int = 100, lr: float = 1e-2):
    d = sample.X.shape[1]
    mu, L = np.zeros(d), np.eye(d)
    for step in range(steps):
        g_mu, g_L = loss_grad(mu, L, sample.X)
        mu, L = mu - lr * g_mu, L - lr * g_L
        if step % 10 == 0:
            print(f"{step:4d} {loss(mu, L, sample.X):.4f}")
    return mu, L


if __name__ == "__main__":
    rng = np.random.default_rng(3)
    sample = Sample(rng.normal(size=(50, 2)) @ np.array([[1.0, 0.0], [0.6, 0.5]]))
    mu, L = fit(sample)
    plt.scatter(*sample.X.T, s=4)
    plt.title(f"mu = {mu.round(2)}")
    plt.show()
