# The log-likelihood of points under a 1-d mixture of Gaussians, written with a stable
# log-sum-exp over the components (max with keepdims, then a sum over axis 1).
#
#   autodiff grad samples/numpy/gaussian_mixture.py --at means=[-1.0,2.0],log_sigmas=[0.0,-0.5]
# expect value: -8.200603183697732
# expect gradient means: [1.0872247783753444, 0.6475403587293261]
# expect gradient log_sigmas: [-1.655338860075401, -1.2441197260785888]
import numpy as np
from math import pi

data = [-1.2, -0.8, 0.1, 1.9, 2.4]
weights = [0.4, 0.6]


def log_normal(x, mean, log_sigma):
    z = (x - mean) / np.exp(log_sigma)
    return -0.5 * z ** 2 - log_sigma - 0.5 * np.log(2 * pi)


def f(means, log_sigmas):
    scores = log_normal(data[:, None], means[None, :], log_sigmas[None, :]) + np.log(weights)
    top = scores.max(axis=1, keepdims=True)
    per_point = top[:, 0] + np.log(np.sum(np.exp(scores - top), axis=1))
    return per_point.sum()
