"""The modules numpy code names, and the names they may be bound to: plain data (no lark), for
the parser's module paths and the interpreter's import declarations."""

# Names a module path may start with; `np.sin`, `math.pi`, `np.linalg.det`, `np.fft.fft`, `scipy.special.erf`
# all name the builtin of the last part (nothing is imported). JAX's spelling reads the same:
# `jnp.exp` is exp, `jax.grad` the language's grad, `jax.custom_vjp` its custom_vjp.
MODULE_ROOTS = ("np", "numpy", "math", "scipy", "jax", "jnp")
SUBMODULES = ("linalg", "special", "fft")
# `import numpy as np` and the like: the names each module may be bound to with `as` (the paths
# above are spelled with these roots only).
MODULE_ALIASES = {"numpy": ("np", "numpy"), "math": ("math",), "scipy": ("scipy",),
                  "scipy.special": (), "numpy.linalg": (), "numpy.fft": (), "scipy.linalg": (), "jax": ("jax",),
                  "jax.numpy": ("jnp", "np")}          # the submodules: any name (below)
# `import numpy.linalg as la`, `from numpy import linalg`, `from scipy import special as sp`,
# `import scipy.linalg` (its solve_triangular, cho_factor, cho_solve are builtins too): the
# submodules that may be bound to a name of the user's choosing; that name then starts a module
# path as the roots do (`la.det`), from its import on.
SUBMODULE_PARENTS = {"linalg": ("numpy", "scipy"), "special": ("scipy",), "fft": ("numpy",)}


def is_submodule(name: str, parent: str) -> bool:
    """Whether `parent.name` is one of the submodules above (numpy.linalg, scipy.linalg, scipy.special)."""
    return parent in SUBMODULE_PARENTS.get(name, ())

# The array libraries whose code people paste: a path through one of these names (`torch.exp`,
# `tf.norm`) is that library's, not numpy's. The value names the library in messages. (JAX's
# `jnp` reads as numpy: its names are numpy's.)
FOREIGN_MODULES = {"torch": "PyTorch", "tf": "TensorFlow", "tensorflow": "TensorFlow"}
