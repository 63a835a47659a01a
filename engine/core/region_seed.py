"""A fused region's reverse kernels for a seed of ones: the gradient of `sum(region)`, whose VJP
hands the region a broadcast 1.0 (one number, strides 0), the usual case of a loss.

The adjoints' steps are taken again with the seed g replaced by 1.0: `1.0 * y` is `y` and
`y / 1.0` is `y` exactly (IEEE, signed zeros and nans included), so the kernels have the same
bits with fewer ops (the chain's reverse: four multiplications), and arithmetic of numbers
alone folds. An adjoint that would need anything else of numbers alone (a comparison of the
seed), or that is no array of the sweep's own, keeps the general kernels only (Unfusable).
"""
from __future__ import annotations

import math
import operator

from .fused_ir import Unfusable, is_number
from .fusion import Fused

SEED = "g"
ONE = "1.0"
FOLDS = {"({} * {})": operator.mul, "({} + {})": operator.add, "({} - {})": operator.sub,
         "({} / {})": operator.truediv}


def unit_seed_adjoints(program, adjoints: dict, available) -> dict:
    """Leaf position -> the step of its adjoint when g is 1.0 (steps are added to `program`)."""
    replaced = {SEED: ONE}
    for name, (template, texts, _, boolean) in list(program.steps.items()):
        new = tuple(replaced.get(text, text) for text in texts)
        if new != texts:
            replaced[name] = None if None in new else with_one(program, template, new, boolean)
    found = {pos: replaced.get(name, name) for pos, name in adjoints.items()}
    names = list(found.values())
    # (two reads of one leaf may share an adjoint's step, x * x's: as the general kernels do)
    if (len(set(names)) != len(set(adjoints.values()))
            or any(name not in program.steps or name in available or program.steps[name][3] for name in names)):
        raise Unfusable("an adjoint that is no array of the sweep's own")
    return found


def with_one(program, template, texts, boolean):
    """The step (or number) of `template` over `texts`, where the seed became 1.0; None where
    numbers alone would not fold exactly (a comparison, a function, a zero)."""
    if template == "({} * {})" and ONE in texts:
        y = texts[1] if texts[0] == ONE else texts[0]
        # 1.0 * y is y for a real y; a complex one's product with (1+0j) may flip a zero's sign
        return None if y in program.complex else y
    if template == "({} / {})" and texts[1] == ONE:
        return texts[0]                                               # y / 1.0 is y
    if all(map(is_number, texts)):
        return folded(template, texts)
    operands = [Fused(text, ()) for text in texts]
    return program.add(template, operands, (), boolean).expr


def folded(template, texts):
    """Arithmetic of numbers, in Python's doubles (numexpr's IEEE rounding); None for anything
    else, and for a zero (its sign would hang on the text)."""
    if template == "(-{})":
        value = -float(texts[0])
    elif template in FOLDS and float(texts[1]) != 0.0:
        value = FOLDS[template](float(texts[0]), float(texts[1]))
    else:
        return None
    return repr(value) if math.isfinite(value) and value != 0.0 else None


def is_unit_seed(g, key, raw) -> bool:
    """Whether g is a broadcast 1.0 (strides 0: one number) over the shape of every array leaf
    (a number among the traced leaves: its adjoint would not be summed over the shape)."""
    if not g.ndim or any(g.strides) or g.flat[0] != 1.0:
        return False
    return all(layout[0] == "const" or getattr(value, "shape", None) == g.shape for layout, value in zip(key, raw))
