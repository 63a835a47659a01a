# Your own derivative rule, in JAX's spelling (issue 30): softplus with a stable custom_jvp rule.
# The rule serves forward mode as written and reverse mode transposed; Hessians and n-th
# derivatives differentiate the rule itself. With `--check`, the rule is verified where the run
# used it (against AD of softplus and central differences).
#
#   autodiff grad samples/programs/softplus.py --at x=[-1.3,0.5]
# expect value: 1.2150854380130989
# expect gradient x: [0.214165016957441, 0.622459331201855]
import jax
import jax.numpy as jnp


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return softplus(x), t / (1.0 + jnp.exp(-x))


def f(x):
    return jnp.sum(softplus(x))
