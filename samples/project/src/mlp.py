"""A two-layer MLP classifier: softmax cross-entropy, and its backprop written by hand."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import matplotlib.pyplot as plt


@dataclass
class Config:
    hidden: int = 8
    lr: float = 0.5
    steps: int = 300


def init_params(n_in: int, n_hidden: int, n_out: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "W1": rng.normal(scale=0.5, size=(n_in, n_hidden)),
        "b1": np.zeros(n_hidden),
        "W2": rng.normal(scale=0.5, size=(n_hidden, n_out)),
        "b2": np.zeros(n_out),
    }


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def forward(params: dict[str, np.ndarray], X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = np.tanh(X @ params["W1"] + params["b1"])
    p = softmax(h @ params["W2"] + params["b2"])
    return h, p


def loss(W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
         X: np.ndarray, y: np.ndarray) -> float:
    """Mean cross-entropy of the integer class labels y under the network's softmax."""
    params = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
    _, p = forward(params, X)
    n = X.shape[0]
    return -np.mean(np.log(p[np.arange(n), y]))


def loss_grad(W1, b1, W2, b2, X, y):
    """Backprop by hand: the gradients by parameter name."""
    params = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
    h, p = forward(params, X)
    n = X.shape[0]
    d = p.copy()
    d[np.arange(n), y] -= 1.0
    d /= n
    grads = {}
    grads["W2"] = h.T @ d
    grads["b2"] = d.sum(axis=0)
    dh = (d @ params["W2"].T) * (1.0 - h ** 2)
    grads["W1"] = X.T @ dh
    grads["b1"] = dh.sum(axis=0)
    return grads


def train(cfg: Config, X: np.ndarray, y: np.ndarray):
    params = init_params(X.shape[1], cfg.hidden, int(y.max()) + 1)
    history = []
    for _ in range(cfg.steps):
        grads = loss_grad(**params, X=X, y=y)
        for k in params:
            params[k] = params[k] - cfg.lr * grads[k]
        history.append(loss(**params, X=X, y=y))
    return params, history


if __name__ == "__main__":
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1).astype(int)
    params, history = train(Config(), X, y)
    print(f"loss {history[0]:.3f} -> {history[-1]:.3f}")
    plt.plot(history)
    plt.savefig("loss.png")
