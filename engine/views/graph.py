"""The recorded tape as a graph a person can follow: nodes n1..nk, each with its op, its inputs,
shape, forward value, adjoint (∂output/∂node) and the source span it came from.

Numbering follows Hands-on ML's figure D-3: the inputs first (n1 = x, n2 = y), then the tape in
execution order. Constants are not recorded on the tape (only traced values are), but a student
following D-3 expects to see them: each scalar constant becomes a node the first time an op uses
it (deduplicated by value, so `x**2*y + (y + 2)` numbers exactly as D-3 does: n3 = 2), array
constants one node per use. Constant nodes have no adjoint: nothing is differentiated through them.

Long tapes (loops) are folded (a loop body repeated many times is shown once at its first and once
at its last iteration) and then cut to `max_nodes` with a summary of what was left out.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from ..core.numbers import is_whole, number_text
from ..core.tape import Dual, Shape, Var, strip, sweep

# How ops read in a label: infix for the operators the language writes infix.
INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "matmul": "@"}


@dataclass
class Node:
    id: int                      # n{id}
    kind: str                    # "input", "const" or "op"
    op: str                      # the primitive's name; the input's name; "const"
    inputs: tuple = ()           # ids of the nodes this one reads, in argument order
    params: dict | None = None   # non-array parameters of the op (axis, index, shape)
    shape: tuple = ()
    value: object = None         # the forward value (a raw value; forward-mode views keep the Dual)
    adjoint: object = None       # ∂output/∂node; None: the node does not reach the output
    span: object = None          # parser Span, or None
    tape_index: int | None = None
    known: bool = True           # False for an array constant whose rule saved only its shape

    @property
    def name(self) -> str:
        return f"n{self.id}"


@dataclass
class Omission:
    """A stretch of op nodes not shown: a folded loop or a cut."""
    kind: str                    # "fold" or "cut"
    count: int                   # op nodes left out
    ops: dict                    # op name -> how many
    lines: tuple                 # (first line, last line) of their spans, or ()
    period: int = 0              # fold: nodes per repetition
    repeats: int = 0             # fold: repetitions in all (first and last shown)
    first_id: int = 0            # the first and last node left out
    last_id: int = 0


@dataclass
class Graph:
    nodes: list                  # Node by id - 1
    output: int | None           # id of the output node (None: the output does not depend on inputs)
    value: object = None         # the output's value
    reduced: str | None = None   # how a non-scalar output was reduced for the adjoints
    shown: list = field(default_factory=list)   # ids in display order, Omission markers between
    source: str = ""

    def node(self, ident: int) -> Node:
        return self.nodes[ident - 1]

    def ops(self):
        return [nd for nd in self.nodes if nd.kind == "op"]

    def edges(self):
        """(from id, to id, argument position) for every argument of every node."""
        return [(src, nd.id, pos) for nd in self.nodes for pos, src in enumerate(nd.inputs)]

    def visible(self) -> set:
        """Ids shown after folding and cutting: the shown ops, every input, the constants they use."""
        ids = {i for i in self.shown if isinstance(i, int)}
        ids |= {nd.id for nd in self.nodes if nd.kind == "input"}
        for i in list(ids):
            ids |= {s for s in self.node(i).inputs if self.node(s).kind == "const"}
        return ids


# ---- building the graph ------------------------------------------------------------------------

def _shape(v) -> tuple:
    if isinstance(v, Shape):
        return tuple(v.shape)
    v = strip(v)
    return tuple(getattr(v, "shape", ()))


def _is_scalar_number(v) -> bool:
    v = strip(v)
    if v.__class__ in (float, int):
        return True
    return getattr(v, "shape", None) == () and getattr(v, "dtype", None) is not None and v.dtype.kind == "f"


def build(tape, input_names, output_index=None, adjoints=None, value=None, source="") -> Graph:
    """Number the tape's entries (inputs, constants at first use, ops) and attach values/adjoints."""
    nodes: list = []
    by_tape: dict = {}
    consts: dict = {}

    def add(node):
        node.id = len(nodes) + 1
        nodes.append(node)
        return node.id

    names = iter(input_names)
    for i, e in enumerate(tape.entries):
        if e is None:
            continue
        if e.prim is None:
            name = next(names, None) or f"input{len(by_tape) + 1}"
            by_tape[i] = add(Node(0, "input", name, (), None, _shape(e.value), e.value,
                                  None if adjoints is None else adjoints[i], e.span, i))
            continue
        traced = dict(e.parents)
        inputs = []
        for pos, arg in enumerate(e.args):
            if pos in traced:
                inputs.append(by_tape[traced[pos]])
                continue
            if isinstance(arg, Shape):
                inputs.append(add(Node(0, "const", "const", shape=tuple(arg.shape), known=False)))
            elif _is_scalar_number(arg) or isinstance(arg, bool):
                number = float(strip(arg))
                key = ("scalar", number, math.copysign(1.0, number))     # -0.0 is not 0.0's node
                if key not in consts:
                    consts[key] = add(Node(0, "const", "const", value=strip(arg)))
                inputs.append(consts[key])
            else:
                inputs.append(add(Node(0, "const", "const", shape=_shape(arg), value=strip(arg))))
        params = {k: v for k, v in (e.params or {}).items() if v is not None}
        custom = getattr(e.prim, "custom", None)          # a user rule: its function, with the rule's line
        if custom is not None:
            params["rule"] = custom.where()
        by_tape[i] = add(Node(0, "op", e.prim.name if custom is None else custom.name, tuple(inputs),
                              params or None, _shape(e.value),
                              e.value, None if adjoints is None else adjoints[i], e.span, i))
    out = by_tape.get(output_index) if output_index is not None else None
    g = Graph(nodes, out, value, source=source)
    g.shown = [nd.id for nd in nodes if nd.kind == "op"]
    return g


def adjoints(tape, out_index, seed, on_step=None) -> list:
    """Every adjoint of a kept tape (None: symbolic zero), from the one reverse sweep
    (core/tape.sweep) keeping them all and leaving the notes as the computation left them;
    `on_step(i, pos, j, g, contribution)` is told each chain-rule term."""
    return sweep(tape, out_index, seed, on_step=on_step, keep=True, rerun=True)


def from_result(result, source: str = "") -> Graph:
    """The graph of a GradResult computed with keep_tape=True, with every adjoint."""
    adj = adjoints(result.tape, result.output_index, result.seed)
    g = build(result.tape, list(result.gradient), result.output_index, adj, result.value, source)
    g.reduced = result.reduced
    return g


# ---- folding loops and cutting long graphs ------------------------------------------------------

def _key(nd: Node):
    s = nd.span
    return (nd.op, s.line, s.column) if s is not None else (nd.op,)


def _find_fold(keys, i, budget, window=256, min_repeats=3):
    """The longest run of a block repeated from position i: (period, repeats), or None.
    `budget` is a one-element list of comparisons left: folding is a convenience, and an
    irregular tape (chaotic branching) must not make it quadratic."""
    n = len(keys)
    best = None
    k0 = keys[i]
    for p in range(1, min(window, (n - i) // min_repeats) + 1):
        if keys[i + p] != k0 or keys[i + 2 * p] != k0:
            continue
        j = i
        while j + p < n and keys[j] == keys[j + p]:
            j += 1
        budget[0] -= j - i + 1
        reps = (j - i) // p + 1
        if reps >= min_repeats and (best is None or p * reps > best[0] * best[1]):
            best = (p, reps)
            if p * reps >= n - i - p:        # covers the rest: a longer period cannot do better
                break
        if budget[0] <= 0:
            break
    return best


def _summary(kind, nodes, **extra) -> Omission:
    ops: dict = {}
    lines = [nd.span.line for nd in nodes if nd.span is not None]
    for nd in nodes:
        ops[nd.op] = ops.get(nd.op, 0) + 1
    ops = dict(sorted(ops.items(), key=lambda kv: -kv[1]))
    return Omission(kind, len(nodes), ops, (min(lines), max(lines)) if lines else (),
                    first_id=nodes[0].id, last_id=nodes[-1].id, **extra)


def layout(graph: Graph, max_nodes: int = 60, fold: bool = True) -> Graph:
    """Decide which op nodes are shown: fold loop bodies repeated 3 times or more (first and last
    iteration shown), then cut the middle so at most `max_nodes` ops remain (0: no limit). The
    output node is always shown."""
    ops = graph.ops()
    if not max_nodes or len(ops) <= max_nodes:
        graph.shown = [nd.id for nd in ops]
        return graph
    shown: list = []
    if fold:
        ids: dict = {}
        keys = [ids.setdefault(_key(nd), len(ids)) for nd in ops]
        budget = [2_000_000]
        out_pos = next((k for k, nd in enumerate(ops) if nd.id == graph.output), -1)
        i = 0
        while i < len(ops):
            found = _find_fold(keys, i, budget) if budget[0] > 0 else None
            if found is not None and i + found[0] <= out_pos < i + found[0] * (found[1] - 1):
                found = None                      # never fold the output away
            if found is None:
                shown.append(ops[i].id)
                i += 1
                continue
            p, reps = found
            shown.extend(nd.id for nd in ops[i:i + p])
            shown.append(_summary("fold", ops[i + p:i + p * (reps - 1)], period=p, repeats=reps))
            shown.extend(nd.id for nd in ops[i + p * (reps - 1):i + p * reps])
            i += p * reps
    else:
        shown = [nd.id for nd in ops]
    ids = [s for s in shown if isinstance(s, int)]
    if len(ids) > max_nodes:
        shown = _cut(graph, shown, ids, max_nodes)
    graph.shown = shown
    return graph


def _cut(graph, items, ids, max_nodes) -> list:
    """Keep the first and last ops (and the output); each dropped stretch becomes one Omission
    counting every op in it, folded ones included."""
    head_n = max_nodes // 2
    keep = set(ids[:head_n]) | set(ids[len(ids) - (max_nodes - head_n):])
    if graph.output is not None:
        keep.add(graph.output)
    kept = [isinstance(item, int) and item in keep for item in items]
    prev = None                                   # a fold stays when its neighbours both stay:
    for k, item in enumerate(items):              # the op before it (one pass forwards) ...
        if isinstance(item, int):
            prev = item
        else:
            kept[k] = prev in keep
    nxt = None
    for k in range(len(items) - 1, -1, -1):       # ... and the op after it (one pass backwards)
        if isinstance(items[k], int):
            nxt = items[k]
        elif kept[k]:
            kept[k] = nxt in keep
    ops = graph.ops()
    position = {nd.id: k for k, nd in enumerate(ops)}
    out, run = [], []
    for item, stays in zip(items, kept):
        if stays:
            if run:
                out.append(_dropped(ops, position, run))
                run = []
            out.append(item)
        else:
            run.append(item)
    if run:
        out.append(_dropped(ops, position, run))
    return out


def _dropped(ops, position, run) -> Omission:
    """The omission of a run of items: every op from its first to its last (its own slice of
    the ops, never a scan of them all: a scan per run was quadratic)."""
    first = run[0] if isinstance(run[0], int) else run[0].first_id
    last = run[-1] if isinstance(run[-1], int) else run[-1].last_id
    return _summary("cut", ops[position[first]:position[last] + 1])


# ---- labels shared by every rendering -----------------------------------------------------------

def expression(graph: Graph, nd: Node, fmt) -> str:
    """`n1 ** n3`, `sin(n2)`, `sum(n4, axis=0)`: the node's op applied to its inputs."""
    if nd.kind == "input":
        return nd.op
    if nd.kind == "const":
        if nd.value is not None:
            return fmt(nd.value)
        return f"constant array{nd.shape}"
    args = [graph.node(i).name for i in nd.inputs]
    if nd.op in INFIX and len(args) == 2:
        return f"{args[0]} {INFIX[nd.op]} {args[1]}"
    if nd.op == "neg" and len(args) == 1:
        return f"-{args[0]}"
    if nd.op == "getitem" and nd.params:
        return f"{args[0]}[{_index_text(nd.params.get('index'))}]"
    extra = [f"{k.rstrip('_')}={v}" for k, v in (nd.params or {}).items()]
    return f"{nd.op}({', '.join(args + extra)})"


def _index_text(index) -> str:
    if isinstance(index, tuple):
        return ", ".join(_index_text(i) for i in index)
    if isinstance(index, slice):
        parts = ["" if v is None else str(v) for v in (index.start, index.stop, index.step)]
        return ":".join(parts[:2]) + (f":{parts[2]}" if index.step is not None else "")
    if isinstance(index, float) and is_whole(index):
        return str(int(index))
    return str(index)


@functools.lru_cache(maxsize=4)
def source_lines(source: str) -> list:
    """The source's lines, split once per source: a label per node split it again and again
    (quadratic for a long expression)."""
    return source.splitlines()


def span_text(span, source: str, width: int = 24) -> str:
    """The source text a span covers (one line, shortened), for labels."""
    if span is None or not source:
        return ""
    lines = source_lines(source)
    if not 1 <= span.line <= len(lines):
        return ""
    line = lines[span.line - 1]
    end = span.end_column - 1 if span.end_line == span.line else len(line)
    depth = 0                                     # a call's or subscript's span stops at its
    for ch in line[span.column - 1:end]:          # last argument: extend it to the closing bracket
        depth += (ch in "([") - (ch in ")]")
    while depth > 0 and end < len(line):
        depth += (line[end] in "([") - (line[end] in ")]")
        end += 1
    text = line[span.column - 1:end].strip()
    return text if len(text) <= width else text[:width - 1] + "…"


def primal(v):
    """The value under a forward-mode box at the views' level (Duals keep their tangent apart)."""
    while v.__class__ is Var:
        v = v.value
    return v.primal if v.__class__ is Dual else v


def short(v) -> str:
    """A number as the output shows it (3 not 3.0), an array by its shape."""
    v = strip(v)
    if v.__class__ is bool:
        return str(v)
    if v.__class__ in (float, int) or getattr(v, "shape", None) == ():
        return number_text(float(v))
    return f"array{tuple(getattr(v, 'shape', ()))}"
