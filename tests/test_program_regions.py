"""Issue 28 item 4(b): the fusion pass over a recorded Program (core/program_regions.py) finds
regions across statements and calls, where no AST region of one expression could reach."""
import importlib.util
from pathlib import Path

import numpy as np

from autodiff.engine.core.program import Program
from autodiff.engine.core.program_regions import find_regions
from autodiff.engine.diff import reverse
from autodiff.engine.diff.function import Function

ROOT = Path(__file__).resolve().parent.parent

def benchmark_program(name):
    """An eval's program as benchmarks/gradbench_evals.py writes it (the in-tree GradBench set)."""
    spec = importlib.util.spec_from_file_location("gradbench_evals", ROOT / "benchmarks" / "gradbench_evals.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS[name]


def recorded(tmp_path, source, at):
    path = tmp_path / "program.py"
    path.write_text(source)
    result = reverse.grad(None, at, target=Function(str(path), "f").target, keep_tape=True)
    entries = result.tape.entries
    leaves = sum(1 for e in entries if e.prim is None)
    return Program(equations=entries, leaves=leaves, output=result.output_index, constant=None), entries


def test_a_region_spans_a_functions_return_two_loops_and_the_last_statement(tmp_path):
    rng = np.random.default_rng(28)
    at = {"alphas": rng.normal(size=3), "means": rng.normal(size=(3, 4)), "logsigs": 0.1 * rng.normal(size=(3, 4)),
          "X": rng.normal(size=(1 << 16, 4))}
    program, entries = recorded(tmp_path, benchmark_program("gmm"), at)
    found = find_regions(program, [e.value for e in entries])
    lines = [sorted({e.span.line for e in region.plan.program.body()}) for region in found]
    # per call of term: (X - mean) * e and d * d (two statements), over (2^16,) a call's
    # 0.5 * ... and ... - that (its return, where m reads it), and one region from `s = 0 * m`
    # through the second loop's three calls' returns to log(s) and m + log(s) on the last line
    assert lines == [[3, 4], [4]] * 3 + [[3, 4]] * 3 + [[4, 10, 12, 14]]
    last = found[-1]
    names = [e.prim.name for e in last.plan.program.body()]
    assert names == ["mul"] + ["mul", "sub", "sub", "exp", "add"] * 3 + ["log", "add"]
    assert all(np.asarray(entries[p].value).shape == (1 << 16,) for p in last.positions)


def test_nothing_small_nor_read_outside_joins_a_region(tmp_path):
    source = "def f(x, y):\n    t = x * y\n    u = t - x\n    return sum(exp(u) * y) + sum(t)\n"
    rng = np.random.default_rng(1)
    program, entries = recorded(tmp_path, source, {"x": rng.normal(size=1 << 16), "y": rng.normal(size=1 << 16)})
    found = find_regions(program, [e.value for e in entries])
    # t is read by sum(t) too: it is a leaf of the region of u, exp(u) and * y
    assert [[entries[p].prim.name for p in region.positions] for region in found] == [["sub", "exp", "mul"]]
    small, _ = recorded(tmp_path, source, {"x": rng.normal(size=100), "y": rng.normal(size=100)})
    assert find_regions(small, [e.value for e in small.equations]) == []


def test_two_leaves_broadcast_along_different_axes_make_no_region(tmp_path):
    """numexpr iterates such operands element by element (the held-out kmeans' region replayed
    2.3 times slower than numpy's ops); one broadcast leaf still makes a region."""
    rng = np.random.default_rng(2)
    two = "def f(p, c):\n    d = p[:, None, :] - c[None, :, :]\n    return sum(d * d * 0.5)\n"
    program, entries = recorded(tmp_path, two, {"p": rng.normal(size=(1000, 10, 8))[:, :1, :].copy()[:, 0, :],
                                                "c": rng.normal(size=(10, 8))})
    assert find_regions(program, [e.value for e in entries]) == []
    one = "def f(p, c):\n    d = p - c[0]\n    return sum(d * d * 0.5)\n"
    program, entries = recorded(tmp_path, one, {"p": rng.normal(size=(1 << 14, 8)), "c": rng.normal(size=(10, 8))})
    assert [[entries[q].prim.name for q in region.positions] for region in find_regions(program, [e.value for e in entries])] \
        == [["sub", "mul", "mul"]]


def test_complex_equations_join_a_region_where_its_kernels_are_numpys_bits(tmp_path):
    """Issue 32 item 2: complex128 equations are region members where the region computes them
    with numpy's bits (numexpr's + - conj real, numpy's own loop for a product, exp); a complex
    power is not (numpy's takes its own paths by the exponent), and a 2j is a constant."""
    rng = np.random.default_rng(32)
    source = "def f(x, y):\n    t = x * y\n    u = t - conj(x) * 2j\n    v = exp(u) * y\n    return sum(real(v) + abs(u ** 2.0))\n"
    at = {"x": rng.normal(size=1 << 16) + 1j * rng.normal(size=1 << 16), "y": rng.normal(size=1 << 16) + 0j}
    program, entries = recorded(tmp_path, source, at)
    found = find_regions(program, [e.value for e in entries])
    assert [[entries[p].prim.name for p in region.positions] for region in found] == \
        [["mul", "conj", "mul", "sub"], ["exp", "mul", "real"]]
    assert [(e.prim.name, e.args) for e in found[0].plan.program.body()][2] == ("mul", (None, 2j))   # conj(x) * 2j


def test_regions_differing_in_a_constants_sign_share_no_kernels(tmp_path):
    """-0.0 == 0.0 in Python, but x * -0.0 is not x * 0.0: a region's kernels bake its constants
    in, so the key they are shared by holds a constant's sign. Two programs alike but for it,
    replayed in one process, gave the first one's zeros to the second (every sign wrong)."""
    x = np.linspace(1.0, 2.0, 1 << 17)
    for sign in ("1.0", "-1.0"):
        path = tmp_path / f"p{sign}.py"
        path.write_text(f"def f(x):\n    c = 0.0 * {sign}\n    y = x * c\n    return y * 2.0\n")
        f = Function(str(path), "f")
        for _ in range(3):
            value = f(x=x)
        assert f.replays > 0
        expected = x * (0.0 * float(sign)) * 2.0
        assert np.array_equal(np.signbit(value), np.signbit(expected)) and np.signbit(expected).all() == (sign == "-1.0")
