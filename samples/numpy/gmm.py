# A Gaussian-mixture log-likelihood: K one-dimensional components with means mu, log standard
# deviations log_sigma and mixing logits, over fixed data X. logsumexp keeps it stable.
#
#   autodiff grad samples/numpy/gmm.py --at mu=[-1,0.5,2],log_sigma=[0,-0.5,0.3],logits=[0.2,0,-0.4]
# expect value: -14.265469011936265
# expect gradient mu: [-0.04559503326998854, -0.02446263723183284, -0.21521478224865753]
# expect gradient log_sigma: [-0.020845320513172894, -0.051024046948561885, -1.058346700374262]
# expect gradient logits: [-0.2681390668424637, 0.01387100851007439, 0.2542680583323893]

X = [-1.3, -0.2, 0.4, 0.9, 1.7, 2.6, -2.1, 0.05]


def f(mu, log_sigma, logits):
    log_weights = logits - logsumexp(logits)
    z = (expand_dims(X, 1) - mu) / exp(log_sigma)                # (points, components)
    log_pdf = -0.5 * z * z - log_sigma - 0.5 * log(2 * pi)
    return sum(logsumexp(log_pdf + log_weights, 1))
