"""Issue 28 item 5: per-primitive facts on the primitive. What the lowerings need of a table entry
(numexpr's name, C's name, whether it is dear, whether its VJP tapes what it reads, plannable,
elementwise in its values, a guarded kink) is a field of the entry (core/primitives.py's FACTS),
read off the table when the lowerings load: no list elsewhere names primitives.

The table of primitive x lowering is printed (`pytest -s`), and an elementwise primitive that
gets no fused kernel must say why (`no_fusion=`, or a kink a region cannot guard). A new entry
made the documented one way, `unary_entry`, gets the fused kernel with nothing else stated, and
agrees with the op-by-op run to the bit."""
import math

import numpy as np
import pytest

from autodiff.engine.core import device_kernels, fused, fused_ir, region_pipeline, region_plan, region_program, regions
from autodiff.engine.core.backend import xp
from autodiff.engine.core.primitives import FACTS, TABLE, Primitive
from autodiff.engine.core.rules.arithmetic import div
from autodiff.engine.core.rules.comparisons import eq, where
from autodiff.engine.core.rules.elementwise import cos, unary_entry
from autodiff.engine.core.tape import Shape, Tape, backward

N = fused.FUSE_MIN_ELEMENTS
X0 = np.concatenate([np.linspace(-3.0, 3.0, N - 1), [0.0]])     # with sinc's special point, 0.0


def one_node_plan(prim):
    builder = region_plan.PlanBuilder()
    leaves = [builder.leaf() for _ in range(prim.arity)]
    builder.add(prim.name, (None,) * prim.arity, tuple(enumerate(leaves)), None)
    return builder.plan(None)


def region_kernels(prim):
    """(kernels of a region of this one primitive over traced arrays, or None; why not)."""
    if not region_plan.eligible(prim):
        return None, "not region-eligible"
    plan = one_node_plan(prim)
    key = tuple(("array", True, False) for _ in range(prim.arity))
    compiled = regions.compile_region(plan, key, (N,), True)
    return compiled, fused.DECLINED.get(regions.region_name(plan))


def translates_to_c(compiled) -> bool:
    """Whether every numexpr kernel of the region has CUDA C source (core/device_kernels.py)."""
    booleans = {k.name for k in compiled.forward + compiled.reverse if k.boolean}
    for kernel in compiled.forward + compiled.reverse:
        if kernel.expr is None:
            continue
        dtypes = {name: "bool" if name in booleans else "float64" for name in kernel.reads}
        try:
            device_kernels.translate(kernel.expr.tree, dtypes)
        except device_kernels.NotTranslatable:
            return False
    return True


def fused_vjps(prim) -> str:
    """Per argument, whether fused.py traces its VJP into one numexpr kernel."""
    if not isinstance(prim.vjps, tuple) or prim.arity not in (1, 2):
        return "-"
    args = tuple(np.full(N, 0.5 + 0.25 * i) for i in range(prim.arity))
    ans = prim.impl(*args) if prim.needs_ans else None
    seen = tuple(a if prim.needs_args else Shape(a.shape, a.dtype) for a in args)
    marks = []
    for pos, rule in enumerate(prim.vjps):
        marks.append("." if rule is None else
                     "k" if fused.trace(rule, np.ones(N), ans, seen, f"facts {prim.name} {pos}") else "-")
    return "".join(marks)


def fusion_reason(prim) -> str | None:
    """Why an elementwise primitive gets no fused kernel, as its entry states it."""
    if prim.no_fusion is not None:
        return prim.no_fusion
    if prim.kink is not None and not prim.guarded_kink:
        return f"a kink a region cannot guard ({prim.kink}): its note is made op by op"
    return None


def fusion_complaints(prims) -> list:
    """The elementwise primitives whose fused kernel is missing without a reason, or whose stated
    reason is stale (they fuse)."""
    complaints = []
    for prim in prims:
        if not prim.elementwise:
            continue
        compiled, why = region_kernels(prim)
        reason = fusion_reason(prim)
        if compiled is None and reason is None:
            complaints.append(f"{prim.name}: no fused kernel ({why}) and no no_fusion= on its entry")
        elif compiled is not None and prim.no_fusion is not None:
            complaints.append(f"{prim.name}: fuses, but its entry says no_fusion={prim.no_fusion!r}")
    return complaints


def lowering_row(prim) -> dict:
    compiled, _ = region_kernels(prim) if prim.elementwise else (None, None)
    return {"region": compiled is not None, "cuda": compiled is not None and translates_to_c(compiled),
            "vjp kernel": fused_vjps(prim) if prim.elementwise else "-", "numexpr": prim.numexpr or "",
            "c": prim.c_name or "", "dear": prim.dear, "hessian plan": prim.plannable,
            "taped vjp": prim.taped_vjp, "stacked": prim.elementwise_values, "guarded": prim.guarded_kink,
            "complex": prim.complex_bits,
            "reason": fusion_reason(prim) or "" if prim.elementwise and compiled is None else ""}


def test_the_table_of_primitives_and_lowerings_is_printed(capsys):
    rows = {name: lowering_row(prim) for name, prim in TABLE.items()}
    columns = list(next(iter(rows.values())))
    with capsys.disabled():
        print()
        print(f"{'primitive':14}" + " ".join(f"{c[:8]:>8}" for c in columns[:-1]) + "  reason")
        for name, row in rows.items():
            cells = " ".join(f"{('yes' if v is True else '' if v is False else v)[:8]:>8}"
                             for v in list(row.values())[:-1])
            print(f"{name:14}{cells}  {row['reason']}")
    # the fused ones are exactly the ones with a region's kernels that translate to C
    assert {n for n, r in rows.items() if r["cuda"]} == {n for n, r in rows.items() if r["region"]}
    # sin's VJP, g * cos(x): a kernel where this process's probe keeps cos in numexpr's kernels
    # (its bits numpy's), else it holds a function regions leave to numpy's loop: numpy's ops on the host
    looped = "cos" in region_program.NUMPY_LOOPS
    assert rows["sin"]["region"] and rows["sin"]["vjp kernel"] == ("-" if looped else "k") and rows["sin"]["hessian plan"]
    assert rows["tan"]["vjp kernel"] == "k"
    assert not rows["log2"]["region"] and rows["log2"]["reason"] == "numexpr has no log2"


def test_every_elementwise_primitive_fuses_or_says_why():
    assert fusion_complaints(TABLE.values()) == []


def test_the_lowerings_read_the_facts_off_the_table():
    # the indexes the lowerings keep are the entries' facts, not lists of their own
    assert fused_ir.UFUNCS == {u: p.numexpr for p in TABLE.values() if p.numexpr for u in p.ufuncs}
    assert device_kernels.C_FUNCTIONS == {p.numexpr: p.c_name for p in TABLE.values() if p.c_name}
    assert device_kernels.C_FUNCTIONS["arcsin"] == "asin" and device_kernels.C_FUNCTIONS["abs"] == "fabs"
    assert {n for n, p in TABLE.items() if p.guarded_kink} == {"sqrt"}
    assert TABLE["pow"].constant_args == (1,) and TABLE["lt"].elementwise_values and not TABLE["lt"].elementwise
    # the equations a Program's regions fuse to numpy's bits: numexpr's arithmetic, numpy's loops
    assert {n for n, p in TABLE.items() if p.fused_bits and not p.numpy_loop} == {"add", "sub", "mul", "div", "neg", "abs",
                                                                                  "sigmoid"}
    assert TABLE["exp"].fused_bits and TABLE["sin"].fused_bits and not TABLE["pow"].fused_bits


def test_sin_and_cos_stay_in_numexpr_kernels_where_this_process_probes_numpys_bits(monkeypatch):
    # issue 28 item 4: a fact of their entries ("probe"), decided once per process by comparing
    # numexpr's kernel with numpy's loop (fused_ir.probe_real); before, they were always numpy's
    # loops, a step (an array) of their own in every region. Where the probe finds numexpr's apart
    # (numpy's SIMD loops on some CPUs), they stay numpy's loops: the same bits either way
    from autodiff.engine import api
    from autodiff.engine.core import lazy
    assert TABLE["sin"].numpy_loop == TABLE["cos"].numpy_loop == "probe"
    assert TABLE["sin"].fused_bits is True and not TABLE["sin"].exact      # (probed: not at every value)
    for name in ("sin", "cos"):
        assert (name in region_program.NUMPY_LOOPS) == (fused_ir.probe_real(name) is not None)
    assert {"exp", "tanh"} <= region_program.NUMPY_LOOPS                   # numpy_loop True: never probed
    x = np.linspace(-2.0, 2.0, 100_000)
    fused = api.grad("sum(sin(x) * cos(x) * x)", at={"x": x})          # one region of the lazy run
    assert fused.value == np.sum(np.sin(x) * np.cos(x) * x)
    monkeypatch.setattr(lazy, "ENABLED", [False])                       # op by op
    assert np.array_equal(fused.gradient["x"], api.grad("sum(sin(x) * cos(x) * x)", at={"x": x}).gradient["x"])


def test_the_region_pipelines_ufuncs_are_the_exact_entries():
    # a pipeline makes an array function's argument with numpy's ufuncs where they give numexpr's
    # bits: the entries `exact` (derived: numpy's bits by numexpr's own IEEE operation, `fused_bits`
    # without a numpy loop), keyed by their steps' templates in the fused IR
    assert {n for n, p in TABLE.items() if p.exact} == {"add", "sub", "mul", "div", "neg", "abs"}
    template_of = region_pipeline.template_of
    assert region_pipeline.UFUNCS == {template_of(p): p.ufuncs[0] for p in TABLE.values() if p.exact}
    assert region_pipeline.UFUNCS == {"({} + {})": "add", "({} - {})": "subtract", "({} * {})": "multiply",
                                      "({} / {})": "divide", "(-{})": "negative", "abs({})": "absolute"}


def test_the_complex_facts_are_the_kernels_own():
    """Issue 32 item 2: `complex_bits` says where numexpr's kernel over complex128 values computes
    numpy's bits: checked here on values of every magnitude, signed zeros, infinities and nans
    (each part's bits; any nan as any other). A complex product is probed per process (numpy's
    loop fuses multiply-adds where the CPU has them); the rest numpy's own loops run in a region."""
    import numexpr
    from autodiff.engine.core import fused_ir, region_program
    assert {n for n, p in TABLE.items() if p.complex_bits is True} == {"add", "sub", "neg", "conj", "real", "imag", "eq", "ne"}
    assert TABLE["mul"].complex_bits == "probe" and TABLE["div"].complex_bits is False
    assert fused_ir.COMPLEX_BITS == {p.numexpr: p.complex_bits for p in TABLE.values() if p.numexpr is not None}
    rng = np.random.default_rng(32)
    parts = np.concatenate([rng.normal(size=500) * 10.0 ** rng.integers(-300, 300, 500),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324]])
    z, w = np.empty(4096, dtype=complex), np.empty(4096, dtype=complex)
    for v in (z, w):
        v.real, v.imag = rng.choice(parts, 4096), rng.choice(parts, 4096)

    def same(a, b):
        if a.dtype != b.dtype:
            return False
        a, b = (a.view(float), b.view(float)) if a.dtype.kind == "c" else (a, b)
        if a.dtype.kind != "f":
            return np.array_equal(a, b)
        return bool(((a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))).all())
    for name, prim in TABLE.items():
        if prim.complex_bits is not True:
            continue
        binary = prim.arity == 2
        text = f"z {prim.numexpr} w" if binary else f"-z" if prim.numexpr == "-" else f"{prim.numexpr}(z)"
        theirs = numexpr.evaluate(text, local_dict={"z": z, "w": w}, optimization="none")
        ours = getattr(np, prim.ufuncs[0])(*((z, w) if binary else (z,)))
        assert same(theirs, ours), name
    assert (fused_ir.complex_refusal("*") is None) == same(numexpr.evaluate("z * w", optimization="none"), z * w)
    # numpy's own loops for the others in a region; never a power (numpy's takes its own paths)
    assert region_program.NUMPY_UFUNCS["({} * {})"] == "multiply" and region_program.NUMPY_UFUNCS["sin({})"] == "sin"
    assert "({} ** {})" not in region_program.NUMPY_UFUNCS and "abs({})" not in region_program.NUMPY_UFUNCS


def test_an_unknown_fact_is_refused():
    with pytest.raises(TypeError, match="no such fact"):
        Primitive("p", abs, numexpr_name="abs")
    assert set(FACTS) <= set(Primitive.__slots__)


# ---- a new primitive, made the documented one way ---------------------------------------------

def sinc_of_numpy(x):
    """numpy's sinc, written as numpy writes it (numpy/lib/function_base.py) in numpy's ufuncs."""
    if x.__class__ is float:
        y = math.pi * (1.0e-20 if x == 0.0 else x)
        return math.sin(y) / y
    m = xp()
    y = math.pi * m.where(x == 0, 1.0e-20, x)
    return m.sin(y) / y


def sinc_slope(ans, x):
    # sinc'(x) = (cos(pi x) - sinc(x)) / x; at 0 it is 0 (cos(0) - 1 over 1)
    return div(cos(math.pi * x) - ans, where(eq(x, 0.0), 1.0, x))


@pytest.fixture
def new_entry():
    """unary_entry, registered in the table for one test and taken out after it."""
    made = []

    def make(name, **kw):
        op = unary_entry(name, None, sinc_slope, needs_ans=True, needs_args=True, **kw)
        made.append(name)
        return op
    yield make
    for name in made:
        TABLE.pop(name, None)


def test_a_new_elementwise_entry_gets_the_fused_kernel(new_entry):
    sinc = new_entry("sinc_example", impl=sinc_of_numpy)    # 1 entry, no fact stated (the table's sinc is numpy's np.sinc)
    prim = sinc.primitive
    assert fusion_complaints([prim]) == []
    compiled, why = region_kernels(prim)
    assert compiled is not None, why
    assert translates_to_c(compiled)
    # its slope holds cos: numpy's loop where this process's probe says so (fused.numpy_looped)
    assert fused_vjps(prim) == ("-" if "cos" in region_program.NUMPY_LOOPS else "k")
    # the region and the op-by-op run agree to the bit, and with numpy
    tape = Tape()
    x = tape.watch(X0)
    out = regions.run(one_node_plan(prim), [x])
    assert out is not None and out.tape is tape
    assert np.array_equal(out.value, np.sinc(X0))
    g = np.linspace(0.5, 2.0, N)
    fused_adjoint = backward(tape, out, g)[x.index]
    plain = Tape()
    x2 = plain.watch(X0)
    y2 = sinc(x2)
    assert np.array_equal(y2.value, out.value)
    assert np.array_equal(backward(plain, y2, g)[x2.index], fused_adjoint)
    assert fused_adjoint[-1] == 0.0               # sinc'(0) = 0


def test_a_new_entry_without_a_kernel_must_say_why(new_entry):
    # numpy's own np.sinc is no ufunc numexpr has: the walk names the entry, until it says why
    bare = new_entry("sinc_bare", impl=lambda x: xp().sinc(x))
    assert fusion_complaints([bare.primitive]) == [
        "sinc_bare: no fused kernel (Unfusable: numexpr has no sinc) and no no_fusion= on its entry"]
    stated = new_entry("sinc_stated", impl=lambda x: xp().sinc(x), no_fusion="numexpr has no sinc")
    assert fusion_complaints([stated.primitive]) == []
    stale = new_entry("sinc_stale", impl=sinc_of_numpy, no_fusion="numexpr has no sinc")
    assert fusion_complaints([stale.primitive]) == [
        "sinc_stale: fuses, but its entry says no_fusion='numexpr has no sinc'"]
