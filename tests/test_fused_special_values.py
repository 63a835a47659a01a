"""Issue 27 item 9, the fast paths at special values: every elementwise primitive and operator that
fuses (core/fused.py's VJP kernels, core/regions.py's regions) gives each element the value and
gradient the op-by-op rules give it in an array of two, whatever its array's length, over a grid
of special values (+-0, +-inf, nan, +-1, subnormals, huge, negative, positive) and for `**` the
exponents numpy's loop computes without pow (0.5, 2, -1, 0, 1), others, a traced number, an array
of one element and an array. Bit for bit, except that a finite number may differ by ULPS where
the kernels' libm and numpy's SIMD loops round apart (pow above all); signs, zeros, infinities
and nans always match."""
import itertools

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import fused, region_plan, regions
from autodiff.engine.core.rules import TABLE
from autodiff.engine.diff import program_fusion
from test_region_schedule import fused_count

BIG = 70_000                     # above fused.FUSE_MIN_ELEMENTS: the kernels run
ULPS = 4                         # the documented rounding of a finite entry (pow: 1 on this CPU)
GRID = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324, 1e-310, 1e-160, 1e300, -1e300,
        1e103, -2.5, -0.5, 0.5, 0.3, 3.0]
EXPONENTS = [0.5, 2.0, -1.0, 0.0, 1.0, 3.0, 1.5, -0.5, -2.0, -3.0, 2.5, 1.0 / 3.0]
TRACED_EXPONENTS = [0.5, 2.0, -1.0, 0.0, 1.0, 3.0, 1.5, -0.5, -0.0, np.inf, -np.inf, np.nan]
FILLERS = (0.75, 1.5)            # the other elements: a value in the function's domain
# a number's gradient sums over the elements: theirs is exactly 0 where x ** p has x = 1, p ** x x = 0
SUMMED_FILLERS = {"xp": 1.0, "xq": 1.0, "px": 0.0}
OPERATORS = {"add": "x + y", "sub": "x - y", "mul": "x * y", "div": "x / y", "pow": "x ** y", "neg": "-x"}


def fusing_primitives():
    """The table's elementwise entries with a VJP of their own (those fused.install fuses)."""
    return sorted(name for name, prim in TABLE.items() if prim.elementwise and isinstance(prim.vjps, tuple))


def source_of(name):
    prim = TABLE[name]
    if name in OPERATORS:
        return OPERATORS[name]
    if name == "where":
        return "where(x > y, x, y)"
    assert prim.builtin, f"{name}: no way to write it"
    return f"{prim.builtin}(x)" if prim.arity == 1 else f"{prim.builtin}(x, y)"


def in_regions(prim) -> bool:
    """Whether a region may hold the entry (core/lazy.py takes the Program pass's rules): no kink,
    and its kernels give numpy's bits."""
    return region_plan.eligible(prim) and bool(prim.fused_bits)          # (sqrt's kink: guarded)


def cases():
    """(source, its inputs, the primitive a region may hold, or None): kinks and kernels that are
    not numpy's bits stay out of regions; a power only as a square (x * x, numpy's own)."""
    for name in fusing_primitives():
        source = source_of(name)
        yield pytest.param(source, "xy" if "y" in source else "x", name if in_regions(TABLE[name]) else None, id=name)
    for c in EXPONENTS:
        yield pytest.param(f"x ** {c!r}", "x", "pow" if c == 2.0 else None, id=f"pow-{c:g}")
    yield pytest.param("x ** p", "xp", None, id="pow-traced-number")
    yield pytest.param("x ** q", "xq", None, id="pow-one-element-array")
    yield pytest.param("p ** x", "px", None, id="pow-number-base")


def entries(names):
    """The grid's points for these inputs: a value each, pairs for two."""
    columns = [GRID if name in "xy" else TRACED_EXPONENTS for name in names]
    return list(itertools.product(*columns))


def run(source, names, points, size, filler):
    """Each point's value and gradients: the points are the first elements of arrays of `size`
    (the rest `filler`). A number input (p, or q, an array of one element) takes one point a run,
    and its gradient is a sum over the elements, to which the filler's add exact zeros
    (SUMMED_FILLERS)."""
    at = {}
    for k, name in enumerate(names):
        column = [point[k] for point in points]
        if name in "pq":
            assert len(points) == 1
            at[name] = float(column[0]) if name == "p" else np.array(column)
        else:
            at[name] = np.full(size, filler)
            at[name][:len(points)] = column
    value = np.asarray(api.evaluate(source, at=at).value, dtype=float).reshape(-1)
    gradient = api.grad(f"sum({source})", at=at).gradient
    flat = {name: np.asarray(gradient[name], dtype=float).reshape(-1) for name in names}
    return [[value[i]] + [flat[name][i if name in "xy" else 0] for name in names] for i in range(len(points))]


def same(a, b, ulps=ULPS) -> bool:
    """Bit for bit, or two finite numbers of one sign within `ulps`."""
    if a != a or b != b:
        return a != a and b != b
    if np.signbit(a) != np.signbit(b) or (a == 0.0) != (b == 0.0) or np.isinf(a) != np.isinf(b):
        return False
    if a == b:
        return True
    distance = abs(int(np.float64(a).view(np.int64)) - int(np.float64(b).view(np.int64)))
    return distance <= ulps


def filler_for(source, names):
    """A filler whose own value and gradient are finite (arccosh takes 1.5, the rest 0.75)."""
    if names in SUMMED_FILLERS:
        return SUMMED_FILLERS[names]
    for filler in FILLERS:
        point = tuple(filler if name in "xy" else 0.5 for name in names)
        if np.isfinite(run(source, names, [point], 2, filler)[0]).all():
            return filler
    raise AssertionError(f"{source}: no filler in its domain")


def groups(names, small, region):
    """The large runs, as lists of the points' indices: each point alone where an input is a
    number; else all points in one array, or, for a region, the points whose value and gradients
    are finite in one (the region runs as kernels: a non-finite entry anywhere would send it op
    by op) and the others in another. (Indices: 0.0 == -0.0, so a point is no key.)"""
    every = list(range(len(small)))
    if "p" in names or "q" in names:
        return [[i] for i in every]
    if not region:
        return [every]
    finite = [i for i in every if np.isfinite(small[i]).all()]
    return [group for group in (finite, [i for i in every if i not in finite]) if group]


def differences(source, names, region):
    """The grid's points where an element of a large array differs from the same element in an
    array of two, (point, what, two's, large's), and why the fast paths declined the first large
    run (a region's finite points). `region`: the source times 1.0 twice (exact), three
    operations, a fused region where the primitive may be in one."""
    filler = filler_for(source, names)
    body = f"({source}) * 1.0 * 1.0" if region else source
    labels = ["value"] + [f"d{name}" for name in names]
    points = entries(names)
    small = [run(source, names, [point], 2, filler)[0] for point in points]
    found, declined = [], None
    for group in groups(names, small, region):
        fused.DECLINED.clear()
        for i, large in zip(group, run(body, names, [points[i] for i in group], BIG, filler)):
            found += [(points[i], what, a, b) for what, a, b in zip(labels, small[i], large) if not same(a, b)]
        declined = dict(fused.DECLINED) if declined is None else declined
    return found, declined


@pytest.fixture
def region_runs(monkeypatch):
    """Per region of an expression run: (its primitives' names, whether it ran as kernels). A
    replay's regions of its Program (diff/program_fusion.py, once its trace is kept) are not
    counted: what is asked is whether the interpreter fused the expression."""
    counted = []
    run = regions.run

    def spy(plan, values):
        out = run(plan, values)
        counted.append(({e.prim.name for e in plan.program.body()}, out is not None))
        return out
    monkeypatch.setattr(regions, "run", spy)
    impl = program_fusion.RegionEquation.impl

    def uncounted(self, *leaves):
        before = len(counted)
        try:
            return impl(self, *leaves)
        finally:
            del counted[before:]
    monkeypatch.setattr(program_fusion.RegionEquation, "impl", uncounted)
    return counted


@pytest.mark.parametrize("source, names, regional", list(cases()))
def test_a_large_array_gives_each_element_what_an_array_of_two_gives(source, names, regional):
    assert BIG >= fused.FUSE_MIN_ELEMENTS
    found, _ = differences(source, names, region=False)
    assert not found, f"{source}: {len(found)} differences, e.g. {found[:6]}"


@pytest.mark.parametrize("source, names, regional", list(cases()))
def test_a_region_gives_each_element_what_an_array_of_two_gives(source, names, regional, region_runs):
    found, declined = differences(source, names, region=True)
    assert not found, f"{source}: {len(found)} differences, e.g. {found[:6]}"
    declined = {what: why for what, why in declined.items() if what.startswith("the region of")}
    held = [ok for names_held, ok in region_runs if regional in names_held]
    if regional is None:             # its region is the two products, if any
        assert not any(names_held - {"mul"} for names_held, _ in region_runs)
    elif not any(held):              # the region says why it is no kernels
        assert declined and all("traced" in why or why.startswith("Unfusable") for why in declined.values()), declined
    elif names in ("x", "xy"):       # its finite points ran as kernels, forward and reverse
        assert not any("finite" in why or "guard" in why for why in declined.values()), declined


def test_the_regions_ran_as_kernels_where_they_could(region_runs):
    """The region tests compared kernels, not only op-by-op runs: a finite point's region runs."""
    for source, names in (("x ** 0.5", "x"), ("x ** p", "xp"), ("x ** q", "xq"), ("x ** y", "xy"),
                          ("x / y", "xy"), ("sin(x)", "x")):
        region_runs.clear()
        run(f"({source}) * 1.0 * 1.0", names, [tuple(0.3 for _ in names)], BIG, 0.75)
        assert region_runs and all(ok for _, ok in region_runs), source


def test_the_reported_case_minus_zero_to_the_half():
    """sum(x ** 0.5) at -0.0: +inf in an array of two, and now in one of 70,000 (was -inf)."""
    for size in (2, BIG):
        x = np.full(size, 1.0)
        x[0] = -0.0
        gradient = api.grad("sum(x ** 0.5)", at={"x": x}).gradient["x"]
        assert gradient[0] == np.inf and gradient[1] == 0.5


def test_a_fast_path_says_why_it_left_an_op_to_the_rules():
    fused.DECLINED.clear()
    x = np.linspace(0.5, 1.5, BIG)
    api.grad("sum(exp(x) * -0.0 + x * x)", at={"x": x})             # -0.0 shares 0.0's register
    assert "-0.0" in fused.DECLINED["the region of exp, mul, mul, add"]
    x[0] = -1.0
    api.grad("sum(log(x) * 2.0 * x)", at={"x": x})                  # nan: op by op, for its provenance
    assert "non-finite output" in fused.DECLINED["the region of log, mul, mul"]


def test_an_error_that_is_no_refusal_is_not_swallowed(monkeypatch):
    """A rule that fails on a symbol for a reason no kernel explains (a bug) raises, in a region's
    trace as in a fused VJP's, instead of running op by op unnoticed."""
    def broken(*args):
        raise LookupError("a bug in a rule")
    monkeypatch.setattr(regions, "KERNELS", {})
    monkeypatch.setattr(TABLE["tanh"], "vjps", (broken,))
    with pytest.raises(LookupError, match="a bug in a rule"):
        api.grad("sum(tanh(x) * 2.0 * x)", at={"x": np.linspace(0.5, 1.5, BIG)})
    with pytest.raises(LookupError, match="a bug in a rule"):
        fused.trace(broken, np.ones(BIG), None, (np.ones(BIG),))


@pytest.mark.parametrize("y", [0.0, -0.0])
def test_pow_in_x_at_a_zero_exponent_is_plus_zero_for_a_number_and_an_array(y):
    """The op-by-op rule itself: a number exponent gave +0 (x ** 0 is constant, 1 even at nan), an
    array exponent (what a region traces a number as) -0 at a negative x or y = -0.0, and nan at
    x = nan. Both give +0 now, as PyTorch; the mixed partial 1/x stays."""
    x = np.array([np.nan, -2.0, 2.0, 0.0, -0.0, np.inf, -np.inf])
    for exponent in (y, np.full(x.shape, y)):
        gradient = api.grad("sum(x ** y)", at={"x": x, "y": exponent}).gradient["x"]
        assert gradient.tolist() == [0.0] * x.size and not np.signbit(gradient).any(), exponent
    mixed = api.hessian("sum(x ** y)", at={"x": np.array([2.0, -4.0]), "y": np.array([y, y])}).hessian["x"]["y"]
    assert mixed.diagonal().tolist() == [0.5, -0.25]
