"""The evals of gradbench_evals.py in HIPS autograd, function for function, for
benchmarks/gradbench.py's autograd process (where autograd is importable)."""
import autograd
import autograd.numpy as np


def llsq(x, T, y):
    r = y - np.dot(T, x)
    return 0.5 * np.sum(r * r)


def lse(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def kmeans(P, C):
    best = np.sum((P - C[0]) ** 2, 1)
    for k in range(1, len(C)):
        best = np.minimum(best, np.sum((P - C[k]) ** 2, 1))
    return np.sum(best)


def ode(x, y0):
    y = y0
    for k in range(20):
        y = y + 0.01 * (x - y * y)
    return np.sum(y)


def gmm_term(X, alpha, mean, logsig):
    d = (X - mean) * np.exp(-logsig)
    return alpha + np.sum(-logsig) - 0.5 * np.sum(d * d, 1)


def gmm(alphas, means, logsigs, X):
    m = gmm_term(X, alphas[0], means[0], logsigs[0])
    for k in range(1, len(alphas)):
        m = np.maximum(m, gmm_term(X, alphas[k], means[k], logsigs[k]))
    s = 0 * m
    for k in range(len(alphas)):
        s = s + np.exp(gmm_term(X, alphas[k], means[k], logsigs[k]) - m)
    a = np.max(alphas)
    return np.sum(m + np.log(s)) - len(X) * (a + np.log(np.sum(np.exp(alphas - a))))


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm(Wi, Wf, Wo, Wc, Ui, Uf, Uo, Uc, X):
    h = 0 * np.dot(Wi, X[0])
    c = h
    loss = 0.0
    for t in range(len(X) - 1):
        x = X[t]
        i = sigmoid(np.dot(Wi, x) + np.dot(Ui, h))
        g = sigmoid(np.dot(Wf, x) + np.dot(Uf, h))
        o = sigmoid(np.dot(Wo, x) + np.dot(Uo, h))
        c = g * c + i * np.tanh(np.dot(Wc, x) + np.dot(Uc, h))
        h = o * np.tanh(c)
        e = h - X[t + 1]
        loss = loss + np.sum(e * e)
    return loss


def nested_h(w):
    return w * w * w + np.sin(w) * w


def nested(x):
    dh = autograd.grad(nested_h)
    s = 0.0
    for k in range(len(x)):
        s = s + dh(x[k]) * x[k]
    return s


FUNCTIONS = {"llsq": llsq, "lse": lse, "kmeans": kmeans, "ode": ode, "gmm": gmm, "lstm": lstm, "nested": nested}
