"""Rich output for forward mode, Jacobians, Hessians and n-th derivatives (people's view; the
JSON documents are built in higher.py).

rich and the engine are imported inside the functions: JSON output uses cost_summary without
loading rich.
"""
from __future__ import annotations

from ...engine.core.sequences import side_by_side
from ..options import with_flags
from ...engine.core.numbers import number_text
from ..output import fmt_value, non_finite
from .common import console, indented, inputs_line, notes_for, print_notes

MAX_TABLE_ROWS, MAX_TABLE_COLS = 24, 12


def _np():
    from ...engine.core.backend import np
    return np()


def forward_note(result) -> None:
    from ...engine.lang.values import size_of
    passes = sum(size_of(result.inputs[w]) for w in result.gradient)
    print_notes([f"forward mode: {passes} forward pass{'es' * (passes != 1)}, one per input element "
            "(reverse mode needs one sweep for the whole gradient)"])


def _count(n, word) -> str:
    return f"{n} {word}" + ("" if n == 1 else ("es" if word.endswith("s") else "s"))


def _labels(name, shape) -> list:
    """One label per element: x, or x[0], x[1], ..., or A[0,1] ..."""
    if not shape:
        return [name]
    return [f"{name}[{','.join(str(i) for i in idx)}]" for idx in _np().ndindex(*shape)]


def _block_table(rows, cols, matrix, corner=""):
    from rich.table import Table
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column(corner, style="bold")
    for column in cols:
        table.add_column(column, justify="right")
    for label, row in zip(rows, matrix):
        table.add_row(label, *(number_text(round(float(v), 12)) if abs(v) < 1e16 else number_text(float(v))
                               for v in row))
    return table


def _header(target, result, what) -> None:
    from rich.text import Text
    screen = console()
    at = f" at {inputs_line(result.inputs)}" if result.inputs else ""
    screen.print(Text.assemble(("value", "bold"), f" of {target.describe()}{at}"))
    screen.print(Text(indented("  ", fmt_value(result.value))))
    screen.print()
    screen.print(Text(what, style="bold"))


def jacobian_result(target, result) -> None:
    from rich.text import Text
    from ...engine.lang.values import shape_of, size_of
    screen = console()
    work = _count(result.passes, "forward pass" if result.mode == "forward" else "reverse sweep")
    _header(target, result, f"Jacobian by {result.mode} mode ({work}); {with_flags(result.reason)}")
    out_shape = shape_of(result.value)
    names = list(result.jacobian)
    in_shapes = {w: shape_of(result.inputs[w]) for w in names}
    cols = sum(size_of(result.inputs[w]) for w in names)
    if names and len(out_shape) <= 1 and all(len(s) <= 1 for s in in_shapes.values()) and not result.layout \
            and not result.holomorphic and cols <= MAX_TABLE_COLS and size_of(result.value) <= MAX_TABLE_ROWS:
        matrix = side_by_side([result.jacobian[w] for w in names], size_of(result.value))
        col_labels = [lab for w in names for lab in _labels(w, in_shapes[w])]
        screen.print(_block_table(_labels("f", out_shape), col_labels, matrix, "∂ out \\ in"))
    else:
        for w in names:
            block = result.jacobian[w]
            axes = f"  axes {result.layout[w]}" if w in result.layout else ""
            screen.print(Text(f"  ∂f/∂{w}  shape {_np().shape(block)}{axes}", style="bold"))
            screen.print(Text("  " + fmt_value(block, 100).replace("\n", "\n  ")))
    extra = [f"the Jacobian for {w} is not finite (nan or inf)" for w in names if non_finite(result.jacobian[w])]
    extra += _complex_notes(result.layout, result.holomorphic)
    if not names:
        extra.append("the target has no inputs: there is nothing to differentiate")
    print_notes(_without_gradient_notes(notes_for(result)) + extra)


def _without_gradient_notes(notes):
    return [n.replace("its gradient is exactly 0", "its derivatives are exactly 0") for n in notes]


def hessian_result(target, result) -> None:
    from rich.text import Text
    from ...engine.lang.values import shape_of, size_of
    screen = console()
    names = list(result.hessian)
    shapes = {w: shape_of(result.inputs[w]) for w in names}
    screen.print(Text.assemble(("value", "bold"), f" of {target.describe()}"
                          + (f" at {inputs_line(result.inputs)}" if result.inputs else "")))
    screen.print(Text(indented("  ", fmt_value(result.value))))
    screen.print()
    screen.print(Text("gradient", style="bold"))
    for w in names:
        screen.print(Text(indented(f"  {w}: ", fmt_value(result.gradient[w], 100))))
    screen.print()
    work = _count(result.passes, "pass" if result.method.startswith("forward") else "outer sweep")
    screen.print(Text(f"Hessian by {result.method} ({work})", style="bold"))
    total = sum(size_of(result.inputs[w]) for w in names)
    if names and all(len(s) <= 1 for s in shapes.values()) and total <= MAX_TABLE_COLS and not result.layout:
        rows = [side_by_side([result.hessian[a][b] for b in names], max(1, size_of(result.inputs[a])))
                for a in names]
        matrix = _np().concatenate(rows, axis=0)
        labels = [lab for w in names for lab in _labels(w, shapes[w])]
        screen.print(_block_table(labels, labels, matrix, "∂² f"))
    else:
        for a in names:
            for b in names:
                axes = f"  axes {result.layout[a][b]}" if b in result.layout.get(a, {}) else ""
                screen.print(Text(f"  ∂²f/∂{a}∂{b}  shape {_np().shape(result.hessian[a][b])}{axes}", style="bold"))
                screen.print(Text("  " + fmt_value(result.hessian[a][b], 100).replace("\n", "\n  ")))
    extra = [] if names else ["the target has no inputs: there is nothing to differentiate"]
    extra += _complex_notes(result.layout, False)
    if any(non_finite(result.hessian[a][b]) for a in names for b in names):
        extra.append("the Hessian is not finite (nan or inf) somewhere")
    print_notes(_without_gradient_notes(notes_for(result)) + extra)


def _complex_notes(layout, holomorphic) -> list:
    """What the blocks of complex values mean (a Jacobian's or a Hessian's)."""
    if holomorphic:
        return ["complex values: the complex Jacobian df/dz of a holomorphic f (the Cauchy-Riemann equations "
                "hold here)"]
    if layout:
        return ["complex values: each is the pair (re, im); a block's trailing axes are the (re, im) parts "
                "named in its axes, e.g. [[d re f/d re z, d re f/d im z], [d im f/d re z, d im f/d im z]]"]
    return []


def _holomorphic_note(result) -> list:
    from ...engine.core.complexes import is_complex
    if not is_complex(result.inputs[result.name]):
        return []
    return [f"complex input {result.name}: f'({result.name}), the complex derivative of a holomorphic f (JAX's "
            "holomorphic=True); the Cauchy-Riemann equations hold here"]


def cost_summary(result) -> str:
    """How the cost grew with the order, from what was measured (the d2l exercise)."""
    sizes = result.tape_entries
    secs = f"{result.seconds:.3g} s in all"
    if result.method == "forward":
        return ("cost: nested forward duals; every operation at order N does the work of order N-1 "
                "at least twice (once for the primal, once for the tangent), so the work roughly "
                f"doubles per order (about 2^N); {secs}")
    base = ("cost: nested tapes; the tape of order k records f and the sweep of order k-1, so its "
            "size is that of the (k-1)-th derivative's computation")
    if len(sizes) < 2:
        return f"{base}; here {sizes[0] if sizes else 0} entries; {secs}"
    steps = [b - a for a, b in zip(sizes, sizes[1:])]
    if steps[-1] <= 1.5 * max(steps[0], 1) + 2:
        growth = "it grows about linearly here, or slower (the derivative expressions stay small)"
    else:
        growth = (f"it grows faster than linearly here (×{sizes[-1] / sizes[-2]:.2g} from order {len(sizes) - 1} "
                  f"to {len(sizes)}): the product and chain rules multiply the terms of each derivative, "
                  "and nested tapes share no common subexpressions")
    return f"{base}: {sizes[0]} entries at order 1, {sizes[-1]} at order {len(sizes)}; {growth}; {secs}"


def derivative_result(target, result) -> None:
    from rich.table import Table
    from rich.text import Text
    screen = console()
    screen.print(Text.assemble(("value", "bold"), f" of {target.describe()} at {inputs_line(result.inputs)}"))
    screen.print(Text(indented("  ", fmt_value(result.value))))
    screen.print()
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("order", justify="right")
    # several inputs (derivative --wrt): a partial derivative, the others held at their values
    d = "∂" if len(result.inputs) > 1 else "d"
    table.add_column(f"{d}^k f / {d}{result.name}^k", justify="right")
    if result.tape_entries:
        table.add_column("tape entries", justify="right")
    for k, d in enumerate(result.derivatives, 1):
        row = [str(k), fmt_value(d)]
        if result.tape_entries:
            row.append(str(result.tape_entries[k - 1]))
        table.add_row(*row)
    screen.print(table)
    notes = [cost_summary(result)] + _holomorphic_note(result)
    first = next((k for k, d in enumerate(result.derivatives, 1) if non_finite(d)), None)
    if first is not None:          # the order named even where provenance found no node
        notes.append(f"some derivatives are not finite (nan or inf), the first at order {first}: check the "
                     "point against the functions' domains")
    print_notes(notes + notes_for(result))


