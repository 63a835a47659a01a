"""The chain rule made visible: the reverse sweep step by step (Hands-on ML figure D-3) and the
forward sweep of dual numbers (figure D-2), as data the CLI renders.

Reverse: each node's adjoint is complete when the sweep reaches it (every consumer comes later on
the tape), so one step per node lists its terms: ∂f/∂n4 = ∂f/∂n5 · ∂n5/∂n4 = 1 · 4 = 4. The local
derivative ∂n5/∂n4 is the node's VJP rule applied to 1 (scalars only; for arrays the step shows
the contribution, as a Jacobian would not fit on a line).

Forward: one pass per input, seeded with tangent 1 (an array input: tangent of ones). The inputs
are wrapped as Dual boxes at a level below a keep-values tape, so the tape records each node's
dual number a + bε while the JVP rules push the tangents, and the graph numbering is the same as
in the reverse view.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import graph as graph_view
from ..core.tape import Dual, Tape, Var, new_level
from ..lang.target import run_target


@dataclass
class Term:
    other: int              # reverse: the consumer's id; forward: the parent's id
    g: object               # reverse: ∂f/∂consumer; forward: the parent's tangent
    local: object           # ∂consumer/∂node (reverse) or ∂node/∂parent (forward); None for arrays
    contribution: object    # g · local


@dataclass
class Step:
    node: int
    terms: list = field(default_factory=list)
    total: object = None    # reverse: the adjoint; forward: the tangent (None: zero)
    seed: bool = False


@dataclass
class ReverseExplanation:
    graph: object
    steps: list             # from the output down to the inputs
    gradient: dict          # input name -> ∂f/∂input
    reduced: str | None


@dataclass
class ForwardPass:
    input: str
    graph: object
    steps: list             # in execution order; total is the tangent
    level: int
    derivative: object      # ∂f/∂input (the output's tangent)


def _scalar(v) -> bool:
    v = graph_view.primal(v)
    return v.__class__ in (float, int) or getattr(v, "shape", None) == ()


def _local(vjp_or_jvp, ans, args, params):
    return vjp_or_jvp(1.0, ans, *args, **params) if params else vjp_or_jvp(1.0, ans, *args)


def reverse(result, source: str = "") -> ReverseExplanation:
    """The reverse sweep of a GradResult computed with keep_tape=True."""
    tape = result.tape
    terms: dict = {}

    def on_step(i, pos, j, g, c):
        e = tape.entries[i]
        local = None
        if _scalar(g) and _scalar(c):
            local = _local(e.prim.vjps[pos], e.ans, e.args, e.params)
        terms.setdefault(j, []).append((i, g, local, c))

    adj = graph_view.adjoints(tape, result.output_index, result.seed, on_step)
    graph = graph_view.build(tape, list(result.gradient), result.output_index, adj, result.value, source)
    graph.reduced = result.reduced
    node_of = {nd.tape_index: nd.id for nd in graph.nodes if nd.tape_index is not None}
    steps = []
    if result.output_index is not None:
        steps.append(Step(node_of[result.output_index], [], result.seed, seed=True))
        for j in range(result.output_index - 1, -1, -1):
            if j in terms:
                ordered = sorted(terms[j], key=lambda t: t[0])      # consumers in tape order
                steps.append(Step(node_of[j], [Term(node_of[i], g, local, c) for i, g, local, c in ordered],
                                  adj[j]))
    return ReverseExplanation(graph, steps, dict(result.gradient), result.reduced)


def forward(target, inputs: dict, wrt=None, limits=None, source: str = "") -> list:
    """One dual-number pass per input in `wrt` (default: all inputs)."""
    from ..core.backend import np
    from ..lang.interp import Interpreter
    from ..core.notes import NOTES
    passes = []
    kinks = list(NOTES.kinks)
    for name in (wrt or list(inputs)):
        level = new_level()
        tape = Tape(persistent=True, keep_values=True)       # its level is above the duals'
        boxed = {}
        for k, v in inputs.items():
            if k == name:
                one = 1.0 if v.__class__ is float else np().ones_like(v)
                v = Dual(v, one, level)
            boxed[k] = tape.watch(v)
        out = run_target(target, boxed, Interpreter(limits))
        graph = graph_view.build(tape, list(inputs), out.index if _on(out, tape) else None,
                        None, graph_view.primal(out), source)
        passes.append(ForwardPass(name, graph, _forward_steps(tape, graph, level), level,
                                  _tangent(out.value if _on(out, tape) else out, level)))
    NOTES.kinks[:] = kinks
    return passes


def _on(out, tape) -> bool:
    return getattr(out, "tape", None) is tape


def _tangent(v, level):
    while v.__class__ is Var:
        v = v.value
    return v.tangent if v.__class__ is Dual and v.level == level else None


def _forward_steps(tape, graph, level) -> list:
    from ..core.notes import NOTES
    saved = list(NOTES.kinks)
    steps = []
    for nd in graph.nodes:
        if nd.tape_index is None:
            continue
        e = tape.entries[nd.tape_index]
        tangent = _tangent(e.value, level)
        step = Step(nd.id, [], tangent, seed=e.prim is None and tangent is not None)
        if e.prim is not None and tangent is not None:
            traced = dict(e.parents)
            primals = tuple(graph_view.primal(a) for a in e.args)
            ans = graph_view.primal(e.value)
            for pos, src in enumerate(nd.inputs):
                if pos not in traced:
                    continue
                t = _tangent(tape.entries[traced[pos]].value, level)
                if t is None or e.prim.jvps[pos] is None:
                    continue
                local = _local(e.prim.jvps[pos], ans, primals, e.params) if _scalar(t) and _scalar(ans) else None
                step.terms.append(Term(src, t, local, None if local is None else local * t))
        steps.append(step)
    NOTES.kinks[:] = saved
    return steps
