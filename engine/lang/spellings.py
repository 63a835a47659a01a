"""Names written the way another module spells them, answered with the language's spelling: a
numpy module path whose last name the language lacks (`np.linalg.qr`: the names that module has
in the language, never an unrelated builtin), a path through another array library (`torch.exp(x)`:
the language reads numpy, write exp(x)), and a PyTorch method (`x.detach()`: stop_gradient(x))."""
from __future__ import annotations

import difflib

from ...parser import nodes
from ...parser.errors import SourceError
from ...parser.modules import FOREIGN_MODULES, SUBMODULE_PARENTS, SUBMODULES

# Other libraries' names for a builtin of another name (TensorFlow's reductions, PyTorch's).
OTHER_LIBRARY_NAMES = {"reduce_sum": "sum", "reduce_mean": "mean", "reduce_max": "max", "reduce_min": "min",
                       "reduce_prod": "prod", "reduce_logsumexp": "logsumexp", "mm": "matmul", "bmm": "matmul",
                       "pow": "power", "sigmoid": "expit", "detach": "stop_gradient", "t": "transpose"}


def _module(path: str):
    """The Python module a path spells (`np.linalg` -> numpy.linalg), None for one it does not."""
    import importlib
    parts = path.split(".")
    if parts[-1] in SUBMODULES:
        root = "scipy" if parts[0] == "scipy" or parts[-1] == "special" else "numpy"
        name = f"{root}.{parts[-1]}"
    else:
        name = {"np": "numpy", "numpy": "numpy", "jnp": "numpy", "math": "math", "scipy": "scipy"}.get(parts[0])
    try:
        return importlib.import_module(name) if name else None
    except ImportError:
        return None


def unknown_module_name(name: str, path: str, span, builtins) -> SourceError:
    """`np.linalg.qr` where the language has no `qr`: the builtins numpy's module has, the close
    ones first; a suggestion only among them (never `sqrt` for np.linalg.qr)."""
    module = _module(path)
    there = sorted(b for b in builtins if b.isidentifier() and module is not None and hasattr(module, b))
    close = difflib.get_close_matches(name, there, n=3, cutoff=0.75)
    written = f"{path}.{name}"
    if close:
        hint = f"did you mean {' or '.join(f'`{path}.{c}`' for c in close)}?"
    elif len(there) <= 30:
        hint = f"the names of {path} the language has: {', '.join(there)}" if there else None
    else:
        hint = f"{written} has no builtin in the language yet"
    return SourceError("unknown name", f"`{written}` is not among the language's builtins", span, hint)


def misspelt_submodule_hint(name: str) -> str | None:
    """`np.lingalg.qr`: the submodule a name in a module path is a misspelling of, if one is close."""
    close = difflib.get_close_matches(name, SUBMODULES, n=1, cutoff=0.75)
    if not close:
        return None
    parent = SUBMODULE_PARENTS[close[0]][0]
    return f"did you mean `{close[0]}` ({'np' if parent == 'numpy' else parent}.{close[0]}.NAME)?"


def _foreign_root(node):
    """The library name a path `torch.x.y` starts with, None when it starts with no such name."""
    while isinstance(node, nodes.Attribute):
        node = node.value
    return node.id if isinstance(node, nodes.Name) and node.id in FOREIGN_MODULES else None


def _argument_text(args) -> str:
    shown = [a.id if isinstance(a, nodes.Name) else "..." for a in args]
    return ", ".join(shown) if shown else "x"


def foreign_library_error(node, args=None) -> SourceError | None:
    """`torch.exp(x)`, `tf.norm(b)`, `jnp.sum(x)` (node: the Attribute; args: the call's, None for
    a path not called): the language reads numpy; None where node is no such path."""
    root = _foreign_root(node)
    if root is None or not isinstance(node, nodes.Attribute):
        return None
    name = OTHER_LIBRARY_NAMES.get(node.attr, node.attr)
    spelled = f"{name}({_argument_text(args)})" if args is not None else name
    return SourceError("unsupported construct", f"`{root}` is {FOREIGN_MODULES[root]}'s: the language reads "
                       f"numpy: write {spelled}", node.span,
                       "numpy's names need no module (exp(x)) or are written through np. (np.exp(x))")


def foreign_library_use(node) -> SourceError | None:
    """foreign_library_error of a call `torch.exp(x)` (with its arguments) or a path `torch.pi`."""
    if isinstance(node, nodes.Call):
        return foreign_library_error(node.func, node.args)
    return foreign_library_error(node)


def method_spelling_hint(receiver, attr: str, builtins) -> str | None:
    """`x.detach()`, `x.norm()` (PyTorch's spellings): a method numpy arrays lack whose builtin the
    language has, as that builtin's call."""
    name = OTHER_LIBRARY_NAMES.get(attr, attr)
    if name not in builtins:
        return None
    return f"numpy arrays have no method .{attr}(): write {name}({_argument_text([receiver])})"


# math's functions whose numpy namesake computes something else (the others are numpy's to the bit)
MATH_NOT_NUMPY = {"remainder": ("IEEE's remainder, x - n*y with n the whole number nearest x/y",
                                "write x - y * round(x / y) (numpy's remainder(x, y) is x mod y, Python's %)")}


def refuse_math_namesake(module, name, span) -> None:
    """`math.remainder` (written so, or imported from math), whose numpy namesake (the builtin)
    computes something else: an error."""
    if module == "math" and name in MATH_NOT_NUMPY:
        what, hint = MATH_NOT_NUMPY[name]
        raise SourceError("unsupported construct", f"`math.{name}` is {what}, not numpy's `{name}`, which the "
                          "language has", span, hint)
