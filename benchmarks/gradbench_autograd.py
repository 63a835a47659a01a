"""The evals of gradbench_evals.py in HIPS autograd (gradbench_numpylike.py), for
benchmarks/gradbench.py's autograd process (where autograd is importable)."""
import autograd
import autograd.numpy as np

from gradbench_numpylike import evals


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


FUNCTIONS = evals(np, autograd.grad, sigmoid)
