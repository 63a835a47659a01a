"""Hand-derived gradients: formulas in the language (compiled once, run at each point) or
numbers and arrays, for checks against AD or finite differences."""
from __future__ import annotations

from ...parser import parse_expression
from ...parser.errors import SourceError
from ..core.backend import np, to_device, to_host_value
from ..lang.builtins import builtin_names
from ..lang.names import loaded_names
from ..diff.function import ReplayRunner
from ..lang.target import Target
from ..lang.values import as_input, shape_of


class HandGradient:
    """Hand-derived gradient entries: formulas in the language (compiled once, evaluated at each
    point) or numbers and arrays."""

    def __init__(self, spec: dict, input_names, limits=None, what="grad", variables=None):
        self.parts = {}
        for name, item in spec.items():
            if name not in input_names:
                raise SourceError("unknown input", f"{what} gives {name!r}, which is not an input "
                                  f"(the inputs: {', '.join(input_names) or 'none'})")
            if isinstance(item, str):
                target = expression_target(item, f"{what} {name}")
                unknown = [v for v in target.inputs if v not in (variables or input_names)]
                if unknown:
                    raise SourceError("unknown name", f"{what} {name} = {item!r} uses {unknown[0]!r}, which is "
                                      "not an input", None, source=item, filename=f"{what} {name}")
                self.parts[name] = ("formula", target, ReplayRunner(target, limits))
            else:
                self.parts[name] = ("value", item, None)

    def at(self, inputs: dict) -> dict:
        out = {}
        for name, (kind, item, runner) in self.parts.items():
            if kind == "formula":
                v = runner({k: to_device(inputs[k]) for k in item.inputs})
            else:
                v = as_input(np().asarray(item, dtype=np().float64)) if isinstance(item, (list, tuple)) \
                    else as_input(item)
            want = shape_of(inputs[name])
            got = shape_of(v)
            if got != want:
                if got == ():
                    v = np().full(want, float(v))
                else:
                    raise SourceError("shape mismatch", f"the hand-derived gradient for {name} has shape {got}, "
                                      f"but {name} has shape {want}")
            out[name] = to_host_value(v)       # compared on the host with the AD gradient
        return out


def expression_target(text: str, what: str | None = None):
    """An expression as a target, never taken for a file name (formulas in check files)."""
    try:
        node = parse_expression(text, filename=what)
    except SourceError as e:
        if e.filename is None:
            e.filename = what
        raise
    names = builtin_names()
    return Target(text, what, "expression", [v for v in loaded_names(node) if v not in names], node)
