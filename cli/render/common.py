"""Everything people read: rich tables and diagnostics. Machines get JSON from output.py.

rich and the engine are imported inside the functions: JSON output uses notes_for without loading
rich, and a usage error is rendered without loading the engine. A value, a gradient, notes and
errors are Pages (page.py): plain text without rich when piped.
"""
from __future__ import annotations

from ..output import fmt_value, non_finite
from .page import CONSOLES, Page, console  # noqa: F401  (console: the renderers' rich console)

_consoles = CONSOLES        # tests clear it: a console binds to the stream it first saw


def error(err) -> None:
    """A SourceError in pip's style: `error: kind`, the message, the line with a caret, a hint."""
    from ..options import flag_spelling
    message, hint = err.spelled(flag_spelling)
    loc = err.location()
    page = Page().line(("error", "bold red"), f": {err.kind}")
    page.line("  " + (loc + ": " if loc else "") + message)
    for line in err.excerpt():
        page.line(("  " + line, "cyan" if "^" not in line else "bold red"))
    if hint:
        page.line(("hint", "bold magenta"), ": " + hint)
    page.show(stderr=True)


def indented(lead: str, text: str) -> str:
    """`lead` then `text`, its later lines indented under the first: `  [[2, 4],` / `   [6, 8]]`."""
    return lead + text.replace("\n", "\n" + " " * len(lead))


def inputs_line(inputs: dict) -> str:
    return ", ".join(f"{k}={' '.join(fmt_value(v, 40).split())}" for k, v in inputs.items())


def notes_for(result) -> list:
    """Warnings a user should see next to a result: non-finite values, kinks, unconnected inputs."""
    notes = []
    if getattr(result, "reduced", None) == "sum":
        from ...engine.lang.values import shape_of
        notes.append(f"the output has shape {shape_of(result.value)}: differentiated the sum of its elements "
                     "(use --cotangent V for vᵀJ)")
    if non_finite(result.value):
        notes.append("the value is not finite (nan or inf): check the inputs against the functions' domains")
    for name, g in (getattr(result, "gradient", None) or {}).items():
        if non_finite(g):
            notes.append(f"the gradient for {name} is not finite (nan or inf)")
    for finding in getattr(result, "nonfinite", ()) or ():     # NaN provenance: where it began
        notes.append(finding["message"])
    if getattr(result, "gradient", None) is not None:
        from ...engine.lang.values import integer_inputs
        for name in integer_inputs(getattr(result, "inputs", None)):
            notes.append(f"{name} is integer data (a constant of the run, as class labels or indices): "
                         "it has no derivative")
    for name in getattr(result, "unconnected", ()) or ():
        notes.append(f"{name} does not reach the output: its gradient is exactly 0 (unconnected)")
    notes.extend(complex_convention_note(result))
    seen = set()
    for op, span, detail in getattr(result, "kinks", ()) or ():
        key = (op, span.line if span else None, span.column if span else None)
        if key in seen:
            continue
        seen.add(key)
        where = f"line {span.line}, column {span.column}: " if span else ""
        notes.append(f"{where}{detail}")
        if len(seen) >= 10:
            notes.append("… (more kinks not shown)")
            break
    return notes


def complex_convention_note(result) -> list:
    """The convention of a gradient in complex inputs, stated once (README, "Complex numbers")."""
    from ...engine.core.complexes import is_complex
    names = [n for n in (getattr(result, "gradient", None) or {}) if is_complex(result.inputs.get(n))]
    if not names:
        return []
    return [f"complex input{'s' * (len(names) > 1)} {', '.join(names)}: the gradient is PyTorch's convention, "
            "∂f/∂x + i ∂f/∂y at z = x + iy (2z for |z|²); JAX's grad is its conjugate; "
            "--json also gives the Wirtinger derivatives ∂f/∂z and ∂f/∂z̄"]


def grad_result(target, result) -> None:
    page = Page().line(("value", "bold"), f" of {target.describe()} at {inputs_line(result.inputs)}")
    page.line("  " + fmt_value(result.value).replace("\n", "\n  "))
    header = ("∂f/∂input" if result.reduced is None else
              ("∂sum(f)/∂input" if result.reduced == "sum" else "vᵀJ"))
    page.blank().table(["input", header], [[name, fmt_value(g)] for name, g in result.gradient.items()])
    add_notes(page, notes_for(result))
    page.show()


def run_result(target, result) -> None:
    page = Page().line(("value", "bold"), f" of {target.describe()}" +
                       (f" at {inputs_line(result.inputs)}" if result.inputs else ""))
    page.line("  " + fmt_value(result.value).replace("\n", "\n  "))
    add_notes(page, notes_for(result))
    page.show()


def add_notes(page: Page, notes) -> Page:
    if notes:
        page.blank()
        for note in notes:
            page.line(("note", "yellow"), ": " + note)
    return page


def print_notes(notes) -> None:
    if notes:
        add_notes(Page(), notes).show()
