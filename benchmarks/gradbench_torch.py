"""The evals of gradbench_evals.py in PyTorch eager, function for function (same inputs, same
operations), for benchmarks/gradbench.py's torch process."""
import torch

def llsq(x, T, y):
    r = y - T @ x
    return 0.5 * (r * r).sum()

def lse(x):
    m = x.max()
    return m + torch.log(torch.exp(x - m).sum())

def kmeans(P, C):
    best = ((P - C[0]) ** 2).sum(1)
    for k in range(1, len(C)):
        best = torch.minimum(best, ((P - C[k]) ** 2).sum(1))
    return best.sum()

def ode(x, y0):
    y = y0
    for k in range(20):
        y = y + 0.01 * (x - y * y)
    return y.sum()

def gmm_term(X, alpha, mean, logsig):
    d = (X - mean) * torch.exp(-logsig)
    return alpha + (-logsig).sum() - 0.5 * (d * d).sum(1)

def gmm(alphas, means, logsigs, X):
    m = gmm_term(X, alphas[0], means[0], logsigs[0])
    for k in range(1, len(alphas)):
        m = torch.maximum(m, gmm_term(X, alphas[k], means[k], logsigs[k]))
    s = 0 * m
    for k in range(len(alphas)):
        s = s + torch.exp(gmm_term(X, alphas[k], means[k], logsigs[k]) - m)
    a = alphas.max()
    return (m + torch.log(s)).sum() - len(X) * (a + torch.log(torch.exp(alphas - a).sum()))

def lstm(Wi, Wf, Wo, Wc, Ui, Uf, Uo, Uc, X):
    h = 0 * (Wi @ X[0])
    c = h
    loss = 0.0
    for t in range(len(X) - 1):
        x = X[t]
        i = torch.sigmoid(Wi @ x + Ui @ h)
        g = torch.sigmoid(Wf @ x + Uf @ h)
        o = torch.sigmoid(Wo @ x + Uo @ h)
        c = g * c + i * torch.tanh(Wc @ x + Uc @ h)
        h = o * torch.tanh(c)
        e = h - X[t + 1]
        loss = loss + (e * e).sum()
    return loss

def nested_h(w):
    return w * w * w + torch.sin(w) * w

def nested(x):
    s = 0.0
    for k in range(len(x)):
        xk = x[k]
        (dh,) = torch.autograd.grad(nested_h(xk), xk, create_graph=True)
        s = s + dh * xk
    return s


FUNCTIONS = {"llsq": llsq, "lse": lse, "kmeans": kmeans, "ode": ode, "gmm": gmm, "lstm": lstm, "nested": nested}
