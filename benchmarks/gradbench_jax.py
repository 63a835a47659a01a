"""The evals of gradbench_evals.py in jax.numpy (gradbench_numpylike.py), for
benchmarks/gradbench.py's JAX process, which jits `jax.value_and_grad` of each."""
import jax
import jax.numpy as jnp

from gradbench_numpylike import evals

# Every other engine computes in float64; JAX would silently drop to float32 without this.
jax.config.update("jax_enable_x64", True)

FUNCTIONS = evals(jnp, jax.grad, jax.nn.sigmoid)
