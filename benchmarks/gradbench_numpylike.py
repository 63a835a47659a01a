"""The evals of gradbench_evals.py over a numpy-like module, function for function (same inputs,
same operations): HIPS autograd's and JAX's processes of benchmarks/gradbench.py build theirs from
here (gradbench_autograd.py, gradbench_jax.py), so the two references cannot drift apart. Under
JAX the Python loops unroll when traced: the trip counts come from the shapes, fixed per size."""


def evals(m, grad, sigmoid) -> dict:
    """name -> the eval written with `m` (autograd.numpy, jax.numpy), `grad` and `sigmoid`."""
    def llsq(x, T, y):
        r = y - m.dot(T, x)
        return 0.5 * m.sum(r * r)

    def lse(x):
        top = m.max(x)
        return top + m.log(m.sum(m.exp(x - top)))

    def kmeans(P, C):
        best = m.sum((P - C[0]) ** 2, 1)
        for k in range(1, len(C)):
            best = m.minimum(best, m.sum((P - C[k]) ** 2, 1))
        return m.sum(best)

    def ode(x, y0):
        y = y0
        for _ in range(20):
            y = y + 0.01 * (x - y * y)
        return m.sum(y)

    def gmm_term(X, alpha, mean, logsig):
        d = (X - mean) * m.exp(-logsig)
        return alpha + m.sum(-logsig) - 0.5 * m.sum(d * d, 1)

    def gmm(alphas, means, logsigs, X):
        top = gmm_term(X, alphas[0], means[0], logsigs[0])
        for k in range(1, len(alphas)):
            top = m.maximum(top, gmm_term(X, alphas[k], means[k], logsigs[k]))
        s = 0 * top
        for k in range(len(alphas)):
            s = s + m.exp(gmm_term(X, alphas[k], means[k], logsigs[k]) - top)
        a = m.max(alphas)
        return m.sum(top + m.log(s)) - len(X) * (a + m.log(m.sum(m.exp(alphas - a))))

    def lstm(Wi, Wf, Wo, Wc, Ui, Uf, Uo, Uc, X):
        h = 0 * m.dot(Wi, X[0])
        c = h
        loss = 0.0
        for t in range(len(X) - 1):
            x = X[t]
            i = sigmoid(m.dot(Wi, x) + m.dot(Ui, h))
            g = sigmoid(m.dot(Wf, x) + m.dot(Uf, h))
            o = sigmoid(m.dot(Wo, x) + m.dot(Uo, h))
            c = g * c + i * m.tanh(m.dot(Wc, x) + m.dot(Uc, h))
            h = o * m.tanh(c)
            e = h - X[t + 1]
            loss = loss + m.sum(e * e)
        return loss

    def nested_h(w):
        return w * w * w + m.sin(w) * w

    def nested(x):
        dh = grad(nested_h)
        s = 0.0
        for k in range(len(x)):
            s = s + dh(x[k]) * x[k]
        return s

    return {"llsq": llsq, "lse": lse, "kmeans": kmeans, "ode": ode, "gmm": gmm, "lstm": lstm, "nested": nested}
