"""NaN provenance: when a result holds nan or inf, name the first node where it appeared, in the
forward sweep (a value) or the reverse sweep (an adjoint), with its source span.

The design keeps the hot path untouched: a normal run only checks its final value and gradient
(one `isfinite` each). Only when one of them is not finite is the target run again on a
persistent tape that keeps every node's value; the forward values are then scanned in execution
order and the reverse sweep is redone keeping every adjoint, and the first non-finite one in each
sweep is reported. The interpreter is deterministic, so the second run retraces the first.
This is JAX's `debug_nans` answer without its cost on runs that stay finite; the price is that a
nan which never reaches the value or the gradient (masked by `where`, say) goes unreported.
"""
from __future__ import annotations

from ..core import finite_known
from ..core.backend import is_array, np, to_host
from ..core.numbers import finite, nonfinite_word
from ..core.tape import Tape, strip


def not_finite(v) -> bool:
    v = strip(v)
    if is_array(v) and finite_known.taken(v):
        return False        # a fused region's adjoint, tested in the sweep that made it
    return not finite(v)


def _word(v) -> str:
    """'nan', 'inf' or '-inf' for what a non-finite value holds (nan first: it is the worse)."""
    v = strip(v)
    if is_array(v) or isinstance(v, complex):
        a = np().asarray(to_host(v))
        parts = (a.real, a.imag) if a.dtype.kind == "c" else (a.astype(float),)   # a complex value: both parts
        if any(np().isnan(part).any() for part in parts):
            return "nan"
        return "inf" if any((part == np().inf).any() for part in parts) else "-inf"
    return nonfinite_word(float(v))


def diagnose_grad(result, source, at, wrt, seed, target, dtype_name, limits) -> None:
    """Fill `result.nonfinite` when the value or a gradient is not finite."""
    if not (not_finite(result.value) or any(not_finite(g) for g in result.gradient.values())):
        return
    try:
        if result.tape is None:
            from ..diff.reverse import grad
            again = grad(None, result.inputs, list(result.gradient), seed, dtype_name=dtype_name,
                         limits=limits, target=target, keep_tape=True)
            diagnose_grad(again, source, at, wrt, seed, target, dtype_name, limits)
            result.nonfinite = again.nonfinite
            return
        result.nonfinite = scan(result.tape, list(result.gradient), result.output_index, result.seed,
                                target.source)
    except Exception:           # a diagnosis must never turn a result into an error
        result.nonfinite = []


def diagnose_run(result, target, dtype_name, limits) -> None:
    """Fill `result.nonfinite` for a plain evaluation whose value is not finite."""
    if not not_finite(result.value) or not result.inputs:
        return
    from ..lang.target import run_target
    from ..lang.interp import Interpreter
    from ..core.notes import NOTES
    kinks = list(NOTES.kinks)
    try:
        tape = Tape(persistent=True, keep_values=True)
        boxed = {k: tape.watch(v) for k, v in result.inputs.items()}
        run_target(target, boxed, Interpreter(limits))
        result.nonfinite = scan(tape, list(result.inputs), None, None, target.source)
    except Exception:           # a diagnosis must never turn a result into an error
        result.nonfinite = []
    finally:
        NOTES.kinks[:] = kinks


def _inside(prim, args, g, source) -> str:
    """Where inside a user's function (the primal function, g None; else its rule, given the
    cotangent g) the first nan or inf arose: its run again on a tape keeping every value."""
    custom = getattr(prim, "custom", None)
    if custom is None:
        return ""
    from .graph import span_text
    tape = custom.rerun_kept(args, g)
    if g is None:
        what = f"`{custom.name}`"
    elif custom.kind == "custom_vjp":
        what = f"the custom_vjp rule of `{custom.name}` (`{custom.fwd.name}`, `{custom.bwd.name}`)"
    else:
        what = f"the custom_jvp rule `{custom.jvp.name}`"
    for e in tape.entries:
        if e.prim is not None and not_finite(e.value) and e.span is not None:
            text = span_text(e.span, source)
            return (f"; inside {what}, {_word(e.value)} first appeared at line {e.span.line}, column "
                    f"{e.span.column}" + (f" (`{text}`)" if text else ""))
    return ""


def scan(tape, names, out_index, seed, source="", output="f") -> list:
    """The first non-finite forward value and the first non-finite adjoint, as findings; `output`
    names what the reverse sweep differentiates (f, f[1] for a Jacobian's row, ∂f/∂x for a Hessian's)."""
    from .graph import adjoints, build, expression, short, span_text
    graph = build(tape, names, source=source)
    node_of = {nd.tape_index: nd for nd in graph.nodes if nd.tape_index is not None}
    findings = []

    def where(nd):
        if nd.kind == "input":
            return f"{nd.name} (the input {nd.op})"
        text = span_text(nd.span, source)
        loc = f" at line {nd.span.line}, column {nd.span.column}" if nd.span is not None else ""
        return f"{nd.name} = {expression(graph, nd, short)}{loc}" + (f" (`{text}`)" if text else "")

    def finding(sweep_name, nd, word, message):
        s = nd.span
        return {"sweep": sweep_name, "node": nd.name, "op": nd.op, "value": word,
                "line": s.line if s is not None else None, "column": s.column if s is not None else None,
                "message": message}

    for i, e in enumerate(tape.entries):
        if e is not None and not_finite(e.value):
            nd = node_of[i]
            word = _word(e.value)
            if nd.kind == "input":
                msg = f"the input {nd.op} is {word}"
            else:
                bad_consts = [graph.node(k) for k in nd.inputs
                              if graph.node(k).kind == "const" and graph.node(k).value is not None
                              and not_finite(graph.node(k).value)]
                msg = f"{word} first appeared in the forward sweep at {where(nd)}" + \
                    _inside(e.prim, e.args, None, source)
                if bad_consts:
                    msg += f": its constant argument {bad_consts[0].name} is already {_word(bad_consts[0].value)}"
            findings.append(finding("forward", nd, word, msg))
            break

    if out_index is not None:
        first = []

        def on_step(i, pos, j, g, c):
            if not first and not_finite(c):
                first.append((i, j, g, c))
        adjoints(tape, out_index, seed, on_step)
        if first:
            i, j, g, c = first[0]
            consumer, target_node = node_of[i], node_of[j]
            word = _word(c)
            what = f"∂{output}/∂{target_node.name}"
            if target_node.kind == "input":
                what += f" (∂{output}/∂{target_node.op})"
            msg = (f"{word} first appeared in the reverse sweep in {what}: the derivative rule of "
                   f"{where(consumer)} gave {word}") + _inside(tape.entries[i].prim, tape.entries[i].args, g, source)
            kink = getattr(tape.entries[i].prim, "kink", None)
            if kink and not not_finite(g):
                msg += f" (convention: {kink})"
            findings.append(finding("reverse", consumer, word, msg))
    return findings
