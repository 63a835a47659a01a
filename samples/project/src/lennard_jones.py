"""Lennard-Jones cluster: the total energy, and the forces derived by hand.

Run it to relax a small cluster by steepest descent and plot the energy.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
import matplotlib.pyplot as plt

EPSILON: float = 1.0
SIGMA: float = 1.0


@dataclass
class Cluster:
    positions: np.ndarray
    history: list = field(default_factory=list)

    def relax(self, step: float = 1e-3, iterations: int = 200) -> None:
        for _ in range(iterations):
            self.positions = self.positions + step * forces(self.positions)
            self.history.append(loss(self.positions))


def pair_energy(r2: float, epsilon: float = EPSILON, sigma: float = SIGMA) -> float:
    """4 eps ((s/r)^12 - (s/r)^6), from the squared distance."""
    s6 = (sigma ** 2 / r2) ** 3
    return 4.0 * epsilon * (s6 * s6 - s6)


def loss(x: np.ndarray) -> float:
    """Total energy of the particles at the rows of x, shape (n, 3)."""
    n = x.shape[0]
    energy = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = x[i] - x[j]
            energy += pair_energy(np.dot(d, d))
    return energy


def forces(x: np.ndarray, epsilon: float = EPSILON, sigma: float = SIGMA) -> np.ndarray:
    """-dE/dx by hand: F_i = sum_j 24 eps (2 s^12/r^14 - s^6/r^8) (x_i - x_j)."""
    n = x.shape[0]
    f = np.zeros_like(x)
    for i in range(n):
        for j in range(i + 1, n):
            d = x[i] - x[j]
            r2 = d @ d
            s6 = (sigma ** 2 / r2) ** 3
            fij = 24.0 * epsilon * (2.0 * s6 * s6 - s6) / r2 * d
            f[i] += fij
            f[j] -= fij
    return f


def spacing(x: np.ndarray) -> np.ndarray:
    """Distances between neighbours along the first axis (for the plot)."""
    return np.diff(np.sort(x[:, 0]))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    cluster = Cluster(rng.normal(scale=1.2, size=(5, 3)))
    try:
        cluster.relax()
    except FloatingPointError as err:
        print(f"relaxation diverged: {err}", file=sys.stderr)
    print(f"final energy: {cluster.history[-1]:.6f}")
    plt.plot(cluster.history)
    plt.xlabel("iteration")
    plt.savefig("energy.png")
