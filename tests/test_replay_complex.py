"""Issue 32 item 2: runs holding complex values replay through `autodiff.function` like real ones.
A replayed value or gradient is the interpreter's to the bit at moving points (the gradient in
PyTorch's convention, made from the sweep's adjoint in the interpreter's one place:
diff/reverse.py's `reported_gradients`), a branch on a complex value's real part is a guard, and
what of a replay does not take complex values refuses them with a typed reason counted in
`f.fallbacks` (diff/fallbacks.py): compiled float code, a generated sweep over complex scalars,
replayed n-th derivatives and the drivers' real forms over complex values inside (interpreted).
Replayed Hessians, Jacobians and forward-mode gradients of complex inputs (or, for a Jacobian, a
complex output) run the drivers' complex forms over the trace (diff/replay_complex.py): the
interpreter's bits."""
import math

import numpy as np
import pytest

import autodiff
from autodiff.engine.diff import replay_arrays, reverse
from autodiff.engine.diff.fallbacks import COMPLEX_DERIVATIVES, COMPLEX_FLOAT_CODE, COMPLEX_GENERATED_SWEEP
from autodiff.engine.diff.function import Function
from autodiff.parser.errors import SourceError
from test_replay import assert_same_gradient, kinks_of, same_number

MIXED = "real(z*conj(w)) + abs(exp(z))"
A = np.array([[1 + 1j, 2 - 0.5j], [0.5j, 3 - 1j]])
B = np.array([1 - 1j, 2 + 0.5j])
H = np.array([[2.0, 1 - 1j], [1 + 1j, 3.0]])

# programs of tests/test_complex.py, each with its i-th point (i = 0..4): a point moves every call
PROGRAMS = {
    MIXED: lambda i: {"z": 0.3 + 0.1 * i + 0.4j, "w": 1 - 2j + 0.25j * i},
    "abs(z)**2": lambda i: {"z": 1 + 2j - 0.3 * i},
    "real(x*2j*exp(1j*x))": lambda i: {"x": 0.5 + 0.1 * i},
    "real(complex(a, b)**2)": lambda i: {"a": 1.0 + i, "b": 2.0 - 0.5 * i},
    "imag(log(z)) + real(z**2.5) + abs(z/(1+z))": lambda i: {"z": 0.3 + 0.4j + 0.2 * i},
    "sum(abs(fft(x))**2)": lambda i: {"x": np.array([1.0, 2.0, 3.0, 4.0]) + 0.5 * i},
    "sum(abs(dot(A, b))**2)": lambda i: {"A": A + 0.25 * i, "b": B * (1 + 0.1j * i)},
    "abs(einsum('ij,j,i->', A, b, conj(b)))": lambda i: {"A": A - 0.5j * i, "b": B + 0.1 * i},
    "abs(det(A)) + real(sum(solve(A, b)))": lambda i: {"A": A + 0.3 * i, "b": B},
    "sum(abs(eigh(h)[0]) * 2) + real(trace(inv(h)))": lambda i: {"h": H + 0.5 * i * np.eye(2)},
    "sum(abs(eig(A)[0])**2) + abs(eig(A)[1][0, 1])": lambda i: {"A": A + 0.2j * i},
    "sum(real(exp(z)*w + z*z*w - w/z))": lambda i: {"z": np.array([1 + 1j, 2 - 1j, 0.5j]) + 0.1 * i,
                                                     "w": np.array([1 - 1j, 2 + 0.5j, 3.0])},
}


def fresh_value(f, at):
    return reverse.evaluate(None, at, target=f.target)


@pytest.mark.parametrize("source", sorted(PROGRAMS))
def test_complex_programs_replay_to_the_interpreters_bits(source):
    point = PROGRAMS[source]
    f, g, h = Function(source), Function(source), Function(source)
    for i in range(5):
        at = point(i)
        fresh = reverse.grad(None, at, target=f.target)
        assert_same_gradient(f.grad_result(at), fresh)
        value = g.evaluate_result(at)
        assert same_number(value.value, fresh_value(g, at).value) and kinks_of(value) == kinks_of(fresh)
        both = h.value_and_grad(at)
        assert same_number(both[0], fresh.value)
        assert all(same_number(both[1][k], fresh.gradient[k]) for k in fresh.gradient)
    for run in (f, g, h):           # a plain run, the recording run, then three replays
        assert (run.replays, run.interpreted, run.blocker) == (3, 2, None), (source, run.fallbacks)


def test_a_replayed_gradient_is_pytorchs_convention():
    f = autodiff.function("abs(z)**2")
    for i in range(5):
        z = 1 + 2j - 0.3 * i
        assert f.grad(z=z)["z"] == pytest.approx(2 * z, rel=1e-15)
    m = autodiff.function(MIXED)
    for i in range(5):
        z, w = 0.3 + 0.1 * i + 0.4j, 1 - 2j + 0.25j * i
        got = m.grad(z=z, w=w)
        assert got["z"] == pytest.approx(w + math.exp(z.real), rel=1e-15)
        assert got["w"] == pytest.approx(z, rel=1e-15)
    assert (f.replays, m.replays) == (3, 3)
    r = autodiff.function("real(x*2j*exp(1j*x))")           # a real input: a real gradient
    for x in (0.5, 0.7, 1.5, 0.2, 0.9):
        got = r.grad(x=x)["x"]
        assert got.__class__ is float and got == pytest.approx(-2 * math.sin(x) - 2 * x * math.cos(x), rel=1e-14)
    assert r.replays == 3


BRANCH = """
def f(z, w):
    if real(z) > 0:
        return abs(z)**2 + real(w * z)
    return imag(z * conj(w))
"""


def test_a_branch_on_a_complex_values_real_part_is_a_guard(tmp_path):
    path = tmp_path / "branch.py"
    path.write_text(BRANCH)
    f = Function(str(path))
    points = [(1 + 2j, 1j), (2 - 1j, 1 + 1j), (0.5 + 0.5j, 2j), (-1 + 1j, 1j), (-2 + 0.5j, 1 - 1j),
              (3 + 1j, 1j), (-0.5 - 1j, 2j)]
    for z, w in points:
        at = {"z": z, "w": w}
        got = f.grad_result(at)
        assert_same_gradient(got, reverse.grad(None, at, target=f.target))
        want = 2 * z + np.conj(w) if z.real > 0 else 1j * w      # imag(z conj(w)) = ya - xb: -b + ia
        assert got.gradient["z"] == pytest.approx(want, rel=1e-15)
    # the first path replays from the third call; -1+1j changes it (its run recorded as a second
    # path), and each path replays from then on
    assert f.fallbacks.get("path changed") == 1
    assert (f.replays, f.interpreted) == (4, 3)


def test_a_complex_output_is_refused_by_a_replayed_gradient_as_by_the_interpreter():
    f = autodiff.function("exp(z)*z")
    for i in range(4):
        z = 1j + 0.1 * i
        assert same_number(f(z=z), reverse.evaluate("exp(z)*z", {"z": z}).value)
    assert f.replays == 2
    with pytest.raises(SourceError, match="the output is complex: a gradient needs a real output") as replayed:
        f.grad(z=0.5j)
    with pytest.raises(SourceError) as interpreted:
        reverse.grad("exp(z)*z", {"z": 0.5j})
    assert str(replayed.value) == str(interpreted.value)
    # the replay raised it, and the interpreter confirmed it (diff/function.py's `_confirmed`)
    assert f.interpreted == 3 and f.fallbacks == {COMPLEX_FLOAT_CODE: 3, "a replayed step raised SourceError": 1}


def test_compiled_float_code_refuses_complex_scalars_with_its_reason():
    f = autodiff.function("abs(z)**2")
    for i in range(5):
        f.grad(z=1 + 2j + i)
    # each replay (and the recording run's check) asks for compiled code, which takes floats only
    assert f.fallbacks == {COMPLEX_FLOAT_CODE: 4}
    assert f.replays == 3


def test_a_generated_sweep_takes_complex_arrays_and_refuses_complex_scalars(monkeypatch):
    monkeypatch.setattr(replay_arrays, "SWEEP_SECONDS_PER_ROW", 0.0)      # made at the first planned sweep
    source = "sum(abs(dot(A, b))**2)"
    f = Function(source)
    for i in range(6):
        at = PROGRAMS[source](i)
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    plans = [p for p in next(iter(f.traces.values())).annotations.values() if hasattr(p, "array_sweep")]
    assert plans and all(p.array_sweep for p in plans)          # made, and its bits were the interpreter's
    assert f.fallbacks == {}
    s = Function(MIXED)
    for i in range(4):
        at = PROGRAMS[MIXED](i)
        assert_same_gradient(s.grad_result(at), reverse.grad(None, at, target=s.target))
    assert s.fallbacks[COMPLEX_GENERATED_SWEEP] == 1            # asked once: none is made


def flat_blocks(d) -> list:
    return [v for k in sorted(d) for v in (flat_blocks(d[k]) if isinstance(d[k], dict) else [d[k]])]


def fresh_matrix(kind, f, at):
    """The interpreted driver's answer at `at`, by a fresh interpretation."""
    from autodiff.engine.diff import forward, higher
    if kind == "hessian":
        return higher.hessian(None, at, target=f.target).hessian
    if kind.startswith("jacobian"):
        return forward.jacobian(None, at, mode=kind.split()[1], target=f.target).jacobian
    return forward.gradient(None, at, target=f.target)


# the programs whose complex form the interpreted driver takes (a complex input; for a Jacobian,
# or a complex output): the replay runs it over the trace
REAL_INPUTS = ("real(x*2j*exp(1j*x))", "real(complex(a, b)**2)", "sum(abs(fft(x))**2)")
COMPLEX_FORM = sorted(s for s in PROGRAMS if s not in REAL_INPUTS)
JACOBIANS = {**{s: PROGRAMS[s] for s in COMPLEX_FORM},
             "exp(z)*z": lambda i: {"z": 1j + 0.1 * i},                              # a complex output
             "fft(x) * conj(w)": lambda i: {"x": np.array([1.0, 2.0, 3.0, 4.0]) + 0.5 * i, "w": 1 + 1j * i}}


@pytest.mark.parametrize("source", COMPLEX_FORM)
def test_replayed_hessians_of_complex_programs_are_the_interpreters_bits(source):
    f = Function(source)
    for i in range(5):
        at = PROGRAMS[source](i)
        got, want = flat_blocks(f.hessian(at)), flat_blocks(fresh_matrix("hessian", f, at))
        assert len(got) == len(want) and all(same_number(a, b) for a, b in zip(got, want)), (source, i)
    assert (f.replays, f.interpreted, f.fallbacks) == (3, 2, {}), source


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
@pytest.mark.parametrize("source", sorted(JACOBIANS))
def test_replayed_jacobians_of_complex_programs_are_the_interpreters_bits(source, mode):
    f = Function(source)
    for i in range(5):
        at = JACOBIANS[source](i)
        got, want = flat_blocks(f.jacobian(at, mode=mode)), flat_blocks(fresh_matrix("jacobian " + mode, f, at))
        assert len(got) == len(want) and all(same_number(a, b) for a, b in zip(got, want)), (source, i)
    assert (f.replays, f.interpreted, f.fallbacks) == (3, 2, {}), source


@pytest.mark.parametrize("source", COMPLEX_FORM)
def test_replayed_forward_gradients_of_complex_programs_are_the_interpreters_bits(source):
    f = Function(source)
    for i in range(5):
        at = PROGRAMS[source](i)
        got, want = f.forward_grad_result(at), fresh_matrix("forward grad", f, at)
        assert_same_gradient(got, want)
        assert got.mode == want.mode == "forward"
    assert (f.replays, f.interpreted, f.fallbacks) == (3, 2, {}), source


def test_a_replayed_hessian_of_complex_inputs_is_the_real_hessian_over_re_im():
    f = Function("abs(z)**2")          # x^2 + y^2: 2 I over (re, im), whatever the point
    for i in range(5):
        at = {"z": 1 + 2j - 0.3 * i}
        got = f.hessian(at)["z"]["z"]
        assert same_number(got, fresh_matrix("hessian", f, at)["z"]["z"])
        assert got == pytest.approx(np.array([[2.0, 0.0], [0.0, 2.0]]), abs=1e-15)
    assert f.replays == 3


def test_a_replayed_hessian_of_a_complex_output_is_refused_as_the_interpreter_refuses_it():
    f = Function("exp(z)*z")
    for i in range(2):
        f(z=1j + i)
    with pytest.raises(SourceError, match="the output is complex") as replayed:
        f.hessian({"z": 0.5j})
    with pytest.raises(SourceError) as interpreted:
        fresh_matrix("hessian", f, {"z": 0.5j})
    assert str(replayed.value) == str(interpreted.value)
    assert f.fallbacks == {"a replayed step raised SourceError": 1}


@pytest.mark.parametrize("kind", ["hessian", "jacobian", "forward grad", "derivatives"])
def test_replayed_derivatives_outside_the_complex_forms_are_interpreted_with_their_reason(kind):
    """Real inputs and a real output through complex values inside (the interpreted drivers' real
    forms), and n-th derivatives: interpreted, counted."""
    source = "real(x*2j*exp(1j*x))"
    f = Function(source)
    for i in range(4):
        at = PROGRAMS[source](i)
        if kind == "hessian":
            got, want = flat_blocks(f.hessian(at)), flat_blocks(fresh_matrix(kind, f, at))
        elif kind == "jacobian":
            got, want = flat_blocks(f.jacobian(at)), flat_blocks(fresh_matrix("jacobian auto", f, at))
        elif kind == "forward grad":
            got, want = flat_blocks(f.forward_grad_result(at).gradient), flat_blocks(fresh_matrix(kind, f, at).gradient)
        else:
            got = f.derivatives(at, order=2)
            want = Function(source).derivatives(at, order=2)
        assert len(got) == len(want) and all(same_number(a, b) for a, b in zip(got, want))
    assert f.replays == 0 and f.fallbacks == {COMPLEX_DERIVATIVES: 2}


def test_large_complex_arrays_replay_on_the_interpreters_lean_path():
    """A large complex array's elementwise steps take the fused entries a replay gives them (their
    VJPs decline complex arrays, as the interpreter's do): the interpreter's bits. An expression
    that could root a region over float64 arrays runs op by op over complex ones (core/regions.py's
    layouts), in the interpreter as in its recording run: that run met no region, and it replays."""
    rng = np.random.default_rng(1)
    n = 1 << 17
    f = Function("sum(real(z*w))")
    for _ in range(4):
        at = {"z": rng.normal(size=n) + 1j * rng.normal(size=n), "w": rng.normal(size=n) + 1j * rng.normal(size=n)}
        assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
    assert (f.replays, f.fallbacks) == (2, {})
    g = Function("sum(real(exp(z)*w + z*z*w - w/z))")
    for _ in range(3):
        at = {"z": rng.normal(size=n) + 1j * rng.normal(size=n), "w": rng.normal(size=n) + 1j * rng.normal(size=n)}
        assert_same_gradient(g.grad_result(at), reverse.grad(None, at, target=g.target))
    assert (g.replays, g.fallbacks) == (1, {})
