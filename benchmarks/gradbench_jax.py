"""The evals of gradbench_evals.py in jax.numpy, function for function (same inputs, same
operations), for benchmarks/gradbench.py's JAX process, which jits `jax.value_and_grad` of each.
The Python loops unroll when traced: the trip counts come from the shapes, fixed per size."""
import jax
import jax.numpy as jnp

# Every other engine computes in float64; JAX would silently drop to float32 without this.
jax.config.update("jax_enable_x64", True)


def llsq(x, T, y):
    r = y - T @ x
    return 0.5 * jnp.sum(r * r)


def lse(x):
    m = jnp.max(x)
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


def kmeans(P, C):
    best = jnp.sum((P - C[0]) ** 2, 1)
    for k in range(1, len(C)):
        best = jnp.minimum(best, jnp.sum((P - C[k]) ** 2, 1))
    return jnp.sum(best)


def ode(x, y0):
    y = y0
    for k in range(20):
        y = y + 0.01 * (x - y * y)
    return jnp.sum(y)


def gmm_term(X, alpha, mean, logsig):
    d = (X - mean) * jnp.exp(-logsig)
    return alpha + jnp.sum(-logsig) - 0.5 * jnp.sum(d * d, 1)


def gmm(alphas, means, logsigs, X):
    m = gmm_term(X, alphas[0], means[0], logsigs[0])
    for k in range(1, len(alphas)):
        m = jnp.maximum(m, gmm_term(X, alphas[k], means[k], logsigs[k]))
    s = 0 * m
    for k in range(len(alphas)):
        s = s + jnp.exp(gmm_term(X, alphas[k], means[k], logsigs[k]) - m)
    a = jnp.max(alphas)
    return jnp.sum(m + jnp.log(s)) - len(X) * (a + jnp.log(jnp.sum(jnp.exp(alphas - a))))


def lstm(Wi, Wf, Wo, Wc, Ui, Uf, Uo, Uc, X):
    h = 0 * (Wi @ X[0])
    c = h
    loss = 0.0
    for t in range(len(X) - 1):
        x = X[t]
        i = jax.nn.sigmoid(Wi @ x + Ui @ h)
        g = jax.nn.sigmoid(Wf @ x + Uf @ h)
        o = jax.nn.sigmoid(Wo @ x + Uo @ h)
        c = g * c + i * jnp.tanh(Wc @ x + Uc @ h)
        h = o * jnp.tanh(c)
        e = h - X[t + 1]
        loss = loss + jnp.sum(e * e)
    return loss


def nested_h(w):
    return w * w * w + jnp.sin(w) * w


def nested(x):
    dh = jax.grad(nested_h)
    s = 0.0
    for k in range(len(x)):
        s = s + dh(x[k]) * x[k]
    return s


FUNCTIONS = {"llsq": llsq, "lse": lse, "kmeans": kmeans, "ode": ode, "gmm": gmm, "lstm": lstm, "nested": nested}
