# Logistic regression as a numpy user writes it: np. spelling, .T, keyword arguments, a method.
# The loss is the mean negative log-likelihood plus an L2 penalty whose weight is a default.
#
#   autodiff grad samples/numpy/logistic_regression.py --at w=[0.5,-0.25],b=0.1
# expect value: 0.8305122240796287
# expect gradient w: [0.10675396427810925, -0.5914616287880385]
# expect gradient b: 0.03206441021376297
import numpy as np

X = [[1.0, 2.0], [2.0, -1.0], [-1.5, 0.5], [0.5, 1.5]]
y = [1.0, 0.0, 0.0, 1.0]


def f(w, b, l2=0.01):
    logits = X @ w + b
    p = 1.0 / (1.0 + np.exp(-logits))
    nll = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p), axis=0)
    return nll + l2 * (w ** 2).sum()
