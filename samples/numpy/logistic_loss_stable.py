# Logistic regression as numpy users write it, with an L2 penalty: np.logaddexp(0, -z) is
# -log(sigmoid(z)) without overflow, so the loss is the mean negative log-likelihood.
#
#   autodiff grad samples/numpy/logistic_loss_stable.py --at w=[0.3,-0.2,0.1],b=-0.05
# expect value: 0.586544024000331
# expect gradient w: [-0.3148763541926486, -0.03441115173539743, -0.09799261561045487]
# expect gradient b: -0.10067261921522372

X = [[0.5, 1.2, -0.3], [-1.1, 0.4, 0.8], [0.9, -0.7, 0.2], [0.1, 0.3, -1.5], [1.4, 0.2, 0.6]]
Y = [1.0, 0.0, 1.0, 0.0, 1.0]


def f(w, b):
    z = np.dot(X, w) + b
    nll = np.mean(np.logaddexp(0.0, -z) + (1.0 - np.asarray(Y)) * z)
    return nll + 0.01 * np.sum(np.square(w))
