"""`autodiff graph`: the tape as numbered nodes (Hands-on ML figure D-3), in every format."""
import json
import math
import shutil
import subprocess

import lark
import numpy as np
import pytest

from autodiff.cli.render import common as render
from autodiff.cli.render import graph_text
from autodiff.cli.main import invoke
from autodiff.engine import api
from at_syntax import parse_at
from autodiff.engine.views import graph as graph_view

D3 = "x**2*y + (y + 2)"           # the graph of figure D-3: n6 = y + 2 is its own node
SEED = "x**2*y + y + 2"           # the seed's text: parsed left to right, ((x²y) + y) + 2


def cli(capsys, *args):
    render._consoles.clear()       # a console per captured stdout
    code = invoke(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def graph_of(src, at, max_nodes=0, **kw):
    r = api.grad(src, at=at, keep_tape=True, **kw)
    return graph_view.layout(graph_view.from_result(r, src), max_nodes), r


def test_figure_d3_numbering_values_and_adjoints():
    g, _ = graph_of(D3, {"x": 3, "y": 4})
    rows = [(nd.name, graph_view.expression(g, nd, graph_view.short), graph_view.primal(nd.value), nd.adjoint) for nd in g.nodes]
    assert rows == [("n1", "x", 3.0, 24.0), ("n2", "y", 4.0, 10.0), ("n3", "2", 2.0, None),
                    ("n4", "n1 ** n3", 9.0, 4.0), ("n5", "n4 * n2", 36.0, 1.0),
                    ("n6", "n2 + n3", 6.0, 1.0), ("n7", "n5 + n6", 42.0, 1.0)]
    assert g.output == 7


def test_seed_expression_values_and_adjoints():
    g, r = graph_of(SEED, {"x": 3, "y": 4})
    values = [graph_view.primal(nd.value) for nd in g.nodes]
    assert values == [3.0, 4.0, 2.0, 9.0, 36.0, 40.0, 42.0]
    by_input = {nd.op: nd.adjoint for nd in g.nodes if nd.kind == "input"}
    assert by_input == r.gradient == {"x": 24.0, "y": 10.0}
    spans = [(nd.span.line, nd.span.column) for nd in g.ops()]
    assert spans == [(1, 2), (1, 5), (1, 8), (1, 12)]          # the operators' places in the text
    assert [graph_view.span_text(nd.span, SEED) for nd in g.ops()] == ["**", "*", "+", "+"]


def test_unreached_nodes_have_no_adjoint_and_constants_are_deduplicated():
    src = "def f(x):\n    unused = sin(x) * 3\n    return x * 3 + 3\n"
    tgt = api.load(src, filename="prog.py")
    r = api.grad(None, {"x": 1.0}, target=tgt, keep_tape=True)
    g = graph_view.from_result(r, src)
    sin = next(nd for nd in g.nodes if nd.op == "sin")
    assert sin.adjoint is None and sin.span.line == 2
    consts = [nd for nd in g.nodes if nd.kind == "const"]
    assert [c.value for c in consts] == [3.0]                    # one node for the constant 3


def test_a_negative_zero_constant_is_not_zeros_node():
    # -0.0 == 0.0 in Python: the graph showed x * (0.0 * -1.0) as n1 * n2 with n2 the 0 of x * 0.0
    g, _ = graph_of("x * 0.0 + x * (0.0 * -1.0)", {"x": 2.0})
    consts = [nd for nd in g.nodes if nd.kind == "const"]
    assert [math.copysign(1.0, c.value) for c in consts] == [1.0, -1.0]


def test_array_constants_and_shapes():
    g, r = graph_of("sum(x * [1, 2, 3])", {"x": parse_at(["x=[1,2,3]"])["x"]})
    mul = next(nd for nd in g.nodes if nd.op == "mul")
    const = g.node(mul.inputs[1])
    assert const.kind == "const" and const.shape == (3,)
    assert mul.shape == (3,) and list(mul.adjoint) == [1.0, 1.0, 1.0]
    assert list(g.node(1).adjoint) == [1.0, 2.0, 3.0]


LOOP = "def f(x):\n    y = x\n    for i in range(200):\n        y = y * x + 1\n    return y\n"


def loop_graph(max_nodes):
    tgt = api.load(LOOP, filename="loop.py")
    r = api.grad(None, {"x": 0.5}, target=tgt, keep_tape=True)
    return graph_view.layout(graph_view.from_result(r, LOOP), max_nodes), r


def test_long_loop_is_folded_and_cut_with_a_summary_that_accounts_for_every_node():
    g, _ = loop_graph(10)
    ops = g.ops()
    assert len(ops) == 400
    shown = [s for s in g.shown if isinstance(s, int)]
    left_out = [s for s in g.shown if isinstance(s, graph_view.Omission)]
    assert len(shown) <= 10 and left_out
    assert len(shown) + sum(o.count for o in left_out) == len(ops)
    assert g.output in shown
    fold = [o for o in left_out if o.kind == "fold"]
    assert fold and fold[0].period == 2 and fold[0].ops == {"mul": 198, "add": 198}
    assert fold[0].lines == (4, 4)


def test_no_limit_shows_everything():
    g, _ = loop_graph(0)
    assert [s for s in g.shown] == [nd.id for nd in g.ops()]


# ---- formats -------------------------------------------------------------------------------------

DOT_GRAMMAR = r"""
start: "digraph" ID "{" stmt* "}"
stmt: (node_stmt | edge_stmt | attr_stmt) ";"?
attr_stmt: ("graph" | "node" | "edge") attrs | ID "=" value
node_stmt: ID attrs?
edge_stmt: ID ("->" ID)+ attrs?
attrs: "[" (attr ("," attr)*)? "]"
attr: ID "=" value
value: ID | STRING | NUMBER
ID: /[A-Za-z_][A-Za-z_0-9]*/
NUMBER: /-?[0-9]+(\.[0-9]+)?/
STRING: /"(\\.|[^"\\])*"/
%import common.WS
%ignore WS
"""


def parse_dot(text):
    tree = lark.Lark(DOT_GRAMMAR, parser="lalr").parse(text)
    nodes, edges = {}, []
    for stmt in tree.find_data("node_stmt"):
        attrs = {a.children[0].value: a.children[1].children[0].value for a in stmt.find_data("attr")}
        nodes[stmt.children[0].value] = attrs
    for stmt in tree.find_data("edge_stmt"):
        ids = [c.value for c in stmt.children if isinstance(c, lark.Token)]
        edges.append(tuple(ids))
    return nodes, edges


def test_dot_parses_back_with_every_node_and_edge(capsys):
    code, out, _ = cli(capsys, "graph", D3, "--at", "x=3,y=4", "--format", "dot")
    assert code == 0
    nodes, edges = parse_dot(out)
    assert set(nodes) == {f"n{i}" for i in range(1, 8)}
    assert set(edges) == {("n1", "n4"), ("n3", "n4"), ("n4", "n5"), ("n2", "n5"), ("n2", "n6"),
                          ("n3", "n6"), ("n5", "n7"), ("n6", "n7")}
    assert "value 42" in nodes["n7"]["label"] and "∂f/∂n4 = 4" in nodes["n4"]["label"]
    assert nodes["n1"]["shape"] == "ellipse"


def test_dot_of_a_cut_loop_parses_and_routes_hidden_edges_through_the_gap():
    g, _ = loop_graph(8)
    from autodiff.cli.render.graph_text import to_dot
    nodes, edges = parse_dot(to_dot(g))
    gaps = [n for n in nodes if n.startswith("gap")]
    assert gaps
    for a, b in edges:
        assert a in nodes and b in nodes
    assert any(a in gaps for a, _ in edges)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_dot_renders_with_graphviz(capsys):
    code, out, _ = cli(capsys, "graph", SEED, "--at", "x=3,y=4", "--format", "dot")
    assert code == 0
    svg = subprocess.run(["dot", "-Tsvg"], input=out, capture_output=True, text=True, timeout=60)
    assert svg.returncode == 0, svg.stderr
    assert "<svg" in svg.stdout and "n7 = n6 + n3" in svg.stdout


MERMAID_GRAMMAR = r"""
start: "flowchart" DIR _NL line*
line: (node | edge | classdef) _NL
node: ID shape (":::" ID)?
shape: "[" STRING "]" | "([" STRING "])"
edge: ID "-->" ID
classdef: "classDef" ID /[^\n]+/
DIR: "BT" | "TB" | "LR" | "RL"
ID: /[A-Za-z_][A-Za-z_0-9]*/
STRING: /"[^"\n]*"/
_NL: /\n/
%ignore " "
"""


def test_mermaid_is_well_formed(capsys):
    code, out, _ = cli(capsys, "graph", SEED, "--at", "x=3,y=4", "--format", "mermaid")
    assert code == 0
    tree = lark.Lark(MERMAID_GRAMMAR, parser="lalr").parse(out)
    defined = {n.children[0].value for n in tree.find_data("node")}
    assert defined == {f"n{i}" for i in range(1, 8)}
    for e in tree.find_data("edge"):
        assert {e.children[0].value, e.children[1].value} <= defined
    assert '"n4 = n1 ** n3<br/>value 9<br/>∂f/∂n4 = 4<br/>1:2 **"' in out


def test_mermaid_escapes_quotes_and_angle_brackets():
    from autodiff.cli.render.graph_text import mermaid_string
    assert mermaid_string('a "b" <c>') == '"a #quot;b#quot; #lt;c#gt;"'


def test_json_lists_nodes_and_edges(capsys):
    code, out, _ = cli(capsys, "graph", D3, "--at", "x=3,y=4", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["output_node"] == "n7" and doc["value"] == 42.0
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert [nodes[f"n{i}"]["value"] for i in range(1, 8)] == [3, 4, 2, 9, 36, 6, 42]
    assert [nodes[f"n{i}"]["adjoint"] for i in range(1, 8)] == [24, 10, None, 4, 1, 1, 1]
    assert nodes["n4"]["span"] == {"line": 1, "column": 2, "end_line": 1, "end_column": 4}
    assert {(e["from"], e["to"]) for e in doc["edges"]} == {
        ("n1", "n4"), ("n3", "n4"), ("n4", "n5"), ("n2", "n5"), ("n2", "n6"), ("n3", "n6"),
        ("n5", "n7"), ("n6", "n7")}
    assert doc["omitted"] == []


def test_tree_and_table_show_values_adjoints_and_places(capsys):
    code, out, _ = cli(capsys, "graph", D3, "--at", "x=3,y=4")
    assert code == 0
    assert "n7 = n5 + n6  value 42  ∂f/∂n7 = 1  1:8 `+`" in out
    assert "n4 = n1 ** n3  value 9  ∂f/∂n4 = 4  1:2 `**`" in out
    assert "n1 x = 3  ∂f/∂n1 = 24" in out
    code, out, _ = cli(capsys, "graph", D3, "--at", "x=3,y=4", "--format", "table")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("n4 "))
    assert row.split() == ["n4", "n1", "**", "n3", "()", "9", "4", "1:2", "`**`"]


def test_cli_loop_summary(tmp_path, capsys):
    prog = tmp_path / "loop.py"
    prog.write_text(LOOP)
    code, out, _ = cli(capsys, "graph", str(prog), "--at", "x=0.5", "--max-nodes", "8", "--format", "table")
    assert code == 0
    assert "loop body of 2 nodes repeated 200 times" in out
    assert "lines" in out or "line 4" in out


def test_usage_errors_exit_2(capsys):
    code, _, err = cli(capsys, "graph", SEED, "--at", "x=3")
    assert code == 2 and "y" in err
    code, _, err = cli(capsys, "graph", SEED, "--at", "x=3,y=4", "--format", "png")
    assert code == 2


def test_output_not_depending_on_inputs(capsys):
    code, out, _ = cli(capsys, "graph", "1 + 2 * 3", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["value"] == 7.0 and doc["output_node"] is None and doc["nodes"] == []
    code, out, _ = cli(capsys, "graph", "1 + 2 * 3")
    assert code == 0 and "does not depend on the inputs" in out


@pytest.mark.parametrize("fmt, sample", [("dot", "samples/views/d3.dot"), ("mermaid", "samples/views/d3.mmd")])
def test_samples_are_current(capsys, fmt, sample):
    code, out, _ = cli(capsys, "graph", "samples/views/d3.py", "--at", "x=3,y=4", "--format", fmt)
    assert code == 0
    with open(sample, encoding="utf-8") as f:
        assert out == f.read()


def test_d3_sample_program_numbers(capsys):
    code, out, _ = cli(capsys, "graph", "samples/views/d3.py", "--at", "x=3,y=4", "--format", "json")
    doc = json.loads(out)
    assert [n["value"] for n in doc["nodes"]] == [3, 4, 2, 9, 36, 6, 42]
    assert [n["adjoint"] for n in doc["nodes"]] == [24, 10, None, 4, 1, 1, 1]


def test_output_inside_a_loop_is_never_folded_away(tmp_path):
    src = ("def f(x):\n    y = x\n    r = x\n    for i in range(50):\n        y = y * x + 1\n"
           "        if i == 20:\n            r = y\n    return r\n")
    r = api.grad(None, {"x": 0.5}, target=api.load(src, filename="mid.py"), keep_tape=True)
    g = graph_view.layout(graph_view.from_result(r, src), 12)
    shown = [s for s in g.shown if isinstance(s, int)]
    assert g.output in shown and len(shown) <= 12
    assert len(shown) + sum(o.count for o in g.shown if isinstance(o, graph_view.Omission)) == len(g.ops())


# ---- a graph of n nodes costs O(n) (issue 27 item 19) ------------------------------------------

class CountedId(int):
    """A node id that counts the equality tests made with it: looking edges up in a list of the
    visible ids made DOT, Mermaid and JSON quadratic (200,000 nodes never finished)."""
    tests = [0]

    def __eq__(self, other):
        CountedId.tests[0] += 1
        return int.__eq__(self, other)

    __hash__ = int.__hash__


class CountedSource(str):
    """A source text that counts how often it is split into lines (once per label was
    quadratic for a long expression)."""
    splits = [0]

    def splitlines(self, *args):
        CountedSource.splits[0] += 1
        return str.splitlines(self, *args)


def chain(n):
    return f"def f(x):\n    for i in range({n}):\n        x = x * 1.0001\n    return x\n"


def counted_graph(n, max_nodes=0):
    src = chain(n)
    tgt = api.load(src, filename="chain.py")
    r = api.grad(None, {"x": 1.0}, target=tgt, keep_tape=True)
    g = graph_view.from_result(r, CountedSource(src))
    for nd in g.nodes:
        nd.id = CountedId(nd.id)
        nd.inputs = tuple(CountedId(i) for i in nd.inputs)
    g.output = CountedId(g.output)
    return g, tgt, r


def _rich(name):
    def show(g, tgt, r):
        from autodiff.cli.render import views
        render._consoles.clear()
        getattr(views, name)(tgt, r, g)
    return show


RENDERINGS = {"dot": lambda g, tgt, r: graph_text.to_dot(g), "mermaid": lambda g, tgt, r: graph_text.to_mermaid(g),
              "json": lambda g, tgt, r: graph_text.to_json(g), "table": _rich("graph_table"),
              "tree": _rich("graph_tree")}


def work(fmt, n, max_nodes, capsys):
    """(id equality tests, source splits) of laying out and rendering the chain of n ops."""
    g, tgt, r = counted_graph(n)
    CountedId.tests[0] = CountedSource.splits[0] = 0
    RENDERINGS[fmt](graph_view.layout(g, max_nodes), tgt, r)
    capsys.readouterr()
    return CountedId.tests[0], CountedSource.splits[0]


@pytest.mark.parametrize("max_nodes", [0, 60])
@pytest.mark.parametrize("fmt", RENDERINGS)
def test_twice_the_nodes_cost_twice_the_work(fmt, max_nodes, capsys):
    (small, small_splits), (large, large_splits) = work(fmt, 300, max_nodes, capsys), work(fmt, 600, max_nodes, capsys)
    assert large <= 2.05 * small + 50, (small, large)
    assert small_splits <= 1 and large_splits <= 1


def test_the_tree_of_a_long_chain_grows_linearly(tmp_path, capsys):
    # each level of a rich tree indents by a guide: the chain's n-th line had n guides
    sizes = []
    for n in (200, 400):
        (tmp_path / "chain.py").write_text(chain(n))
        code, out, _ = cli(capsys, "graph", str(tmp_path / "chain.py"), "--at", "x=1", "--max-nodes", "0")
        assert code == 0
        assert max(len(line) for line in out.splitlines()) < 200
        assert f"n{n + 2} = n{n + 1} * n2" in out and "n3 = n1 * n2" in out    # every op is shown
        sizes.append(len(out))
    assert sizes[1] <= 2.05 * sizes[0]


# ---- the views sweep as grad sweeps: the one reverse sweep (issue 28 item 2) ---------------------

LOOP_OF_TWO = """\
def f(x, y):
    s = 0.0
    for i in range(4):
        s = s + x * y * i + sin(x) * x
    return s
"""

VIEWED = [
    ("x*x*y + sin(x)*x + y*y", {"x": 0.7, "y": -1.3}),
    (LOOP_OF_TWO, {"x": 0.3, "y": 1.9}),
    ("sum(x*x + exp(x)*x + [sum(x*y), sum(y)][0] * y)",          # arrays above the in-place size
     {"x": np.linspace(-1.0, 1.0, 1 << 15), "y": np.linspace(0.5, 2.0, 1 << 15)}),
    ("sum([x*y, sin(x), y] * x)", {"x": np.array([0.5, -2.0]), "y": np.array([3.0, 0.25])}),
]


def _bits(v):
    v = np.asarray(v, dtype=np.float64)
    return v.shape, v.tobytes()


@pytest.mark.parametrize("src, at", VIEWED)
def test_the_views_adjoints_are_the_gradient_grad_returns_to_the_bit(src, at):
    from autodiff.engine.views import explain
    target = api.load(src, filename="viewed.py") if src.startswith("def") else api.load(src)
    plain = api.grad(None, at=at, target=target)
    kept = api.grad(None, at=at, target=target, keep_tape=True)
    graph = graph_view.from_result(kept, src)
    explained = explain.reverse(kept, src)
    for g in (graph, explained.graph):
        adjoints = {nd.op: nd.adjoint for nd in g.nodes if nd.kind == "input"}
        assert set(adjoints) == set(at)
        for name, gradient in plain.gradient.items():
            assert _bits(adjoints[name]) == _bits(gradient), name
    totals = {s.node: s.total for s in explained.steps}
    for nd in explained.graph.nodes:
        if nd.kind == "input":
            assert _bits(totals[nd.id]) == _bits(plain.gradient[nd.op])
