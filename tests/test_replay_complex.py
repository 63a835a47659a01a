"""Issue 32 item 2: runs holding complex values replay through `autodiff.function` like real ones.
A replayed value or gradient is the interpreter's to the bit at moving points (the gradient in
PyTorch's convention, made from the sweep's adjoint in the interpreter's one place:
diff/reverse.py's `reported_gradients`), a branch on a complex value's real part is a guard, and
compiled code (a scalar trace's, a generated array sweep) takes complex numbers as it takes
floats, the step replay's numbers to the bit (where a scalar trace's compiled code is refused,
that is counted in `f.fallbacks`, diff/fallbacks.py). Replayed Hessians, Jacobians and
forward-mode gradients of complex inputs (or, for a Jacobian, a complex output) run the drivers'
complex forms over the trace (diff/replay_complex.py), real inputs and a real output through
complex values inside their real forms, and n-th derivatives (f'(z), or a complex output's)
nested duals over the trace (diff/replay_derivatives.py): the interpreter's bits; a pass that
meets a note or a non-finite number is declined as a real trace's is."""
import math

import numpy as np
import pytest

import autodiff
from autodiff.engine.diff import replay_arrays, replay_compiled, reverse
from autodiff.engine.diff.fallbacks import COMPLEX_FLOAT_CODE
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
    # the compiled gradient leaves a complex output to the step replay, which raised it, and the
    # interpreter confirmed it (diff/function.py's `confirm`)
    assert f.interpreted == 3 and f.fallbacks == {"a replayed step raised SourceError": 1}


def counting(trace, name):
    """The compiled function `name` of `trace`, wrapped to count its calls (it still answers)."""
    made, calls = trace.compiled, []
    function = getattr(made, name)

    def counted(*args):
        calls.append(args)
        return function(*args)
    setattr(made, name, counted)
    return calls


def test_compiled_code_replays_complex_scalars_to_the_interpreters_bits():
    for source in ("abs(z)**2", MIXED, "real(complex(a, b)**2)", "real(x*2j*exp(1j*x))",
                   "imag(log(z)) + real(z**2.5) + abs(z/(1+z))"):
        f, g = Function(source), Function(source)
        for i in range(3):                      # plain, recording, then the first replay compiles it
            f.grad_result(PROGRAMS[source](i))
            g.evaluate_result(PROGRAMS[source](i))
        trace = next(iter(f.traces.values()))
        assert trace.complex_scalars and trace.compiled, source
        gradients, values = counting(trace, "gradient"), counting(next(iter(g.traces.values())), "forward")
        for i in range(3, 8):
            at = PROGRAMS[source](i) if i < 5 else {k: v * (1 + 0.5j * (i - 4)) if isinstance(v, complex) else v - i
                                                    for k, v in PROGRAMS[source](i).items()}
            assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
            value = g.evaluate_result(at)
            assert same_number(value.value, fresh_value(g, at).value) and kinks_of(value) == kinks_of(fresh_value(g, at))
        assert (len(gradients), len(values)) == (5, 5), source      # the compiled code answered each
        assert (f.fallbacks, g.fallbacks, f.replays, g.replays) == ({}, {}, 6, 6), source


# one call per builtin of the table that takes a complex number (its complex rule), and the
# operators: compiled, the step replay's and the interpreter's bits at moving points, a zero
# and the extremes among them
COMPLEX_POINTS = [(0.5 + 0.3j, 0.75 - 0.2j), (1.5 - 0.5j, 0.5 + 2j), (-0.7 + 0.1j, 2.0 + 0j), (0j, 1 + 1j),
                  (1e-300 + 0j, 1e300 + 0j), (-2.5 - 0.5j, -0.5j), (3 + 0j, 0j), (0.25 + 0.25j, 0.25 - 0.25j)]


def complex_rule_cases() -> list:
    from test_replay_compiled import builtin_calls
    return builtin_calls("real({}(z) * w)", "real({}(z, w) * (1 + 2j))", {"z": 0.5 + 0.3j, "w": 0.75 - 0.2j}) + [
        "real(z * w + z / w - z ** w) + abs(z - w)", "abs(z) ** 2 + real(z ** 3) - imag(-z)",
        "imag(exp(z) * sin(w) / (1 + z * z))"]


@pytest.mark.parametrize("source", complex_rule_cases())
def test_every_complex_rule_compiles_to_the_interpreters_bits(source):
    f = Function(source)
    for z, w in COMPLEX_POINTS[:2] + COMPLEX_POINTS:
        at = {k: v for k, v in (("z", z), ("w", w)) if k in f.inputs}
        fresh = reverse.grad(None, at, target=f.target)
        assert_same_gradient(f.grad_result(at), fresh)
        value = f.evaluate_result(at)
        assert same_number(value.value, fresh.value) and kinks_of(value) == kinks_of(fresh_value(f, at))
    trace = next(iter(f.traces.values()))
    assert trace.complex_scalars and trace.compiled, source
    assert set(f.fallbacks) <= {"non-finite result"}, f.fallbacks         # a nan's provenance: interpreted


def test_a_complex_trace_whose_compiled_code_is_refused_is_counted(monkeypatch):
    monkeypatch.setattr(replay_compiled, "COMPILE_MAX_STEPS", 1)         # no compiled code is made
    f = autodiff.function("abs(z)**2")
    for i in range(5):
        assert f.grad(z=1 + 2j + i)["z"] == pytest.approx(2 * (1 + 2j + i), rel=1e-15)
    # each replay, and the recording run's check, asks for compiled code: the step replay answers
    assert f.fallbacks == {COMPLEX_FLOAT_CODE: 4} and f.replays == 3


def test_a_generated_sweep_takes_complex_arrays_and_complex_scalars(monkeypatch):
    monkeypatch.setattr(replay_arrays, "SWEEP_SECONDS_PER_ROW", 0.0)      # made at the first planned sweep
    scalars = {"sum(abs(z * v + w)**2)": lambda i: {"z": 0.5 + 0.3j * i, "v": np.array([1.0, 2.0, -1.0]) + i,
                                                      "w": 1 - 1j * i},
               "abs(sum(v * z)) + real(sum(exp(v * 1j) * z))": lambda i: {"v": np.array([0.1, 0.2]) * (1 + i),
                                                                          "z": 1j + 0.5 * i}}
    for source, point in [("sum(abs(dot(A, b))**2)", PROGRAMS["sum(abs(dot(A, b))**2)"]), *scalars.items()]:
        f = Function(source)
        for i in range(7):
            at = point(i)
            assert_same_gradient(f.grad_result(at), reverse.grad(None, at, target=f.target))
        plans = [p for p in next(iter(f.traces.values())).annotations.values() if hasattr(p, "array_sweep")]
        assert plans and all(p.array_sweep for p in plans), source    # made, and its bits were the interpreter's
        assert f.fallbacks == {} and f.replays == 5


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


# real inputs and a real output through complex values inside: the interpreted drivers take their
# real forms, and so do the replays (diff/replay_complex.py hands them to diff/replay_higher.py)
THROUGH_COMPLEX = {
    "real(x*2j*exp(1j*x))": lambda i: {"x": 0.5 + 0.1 * i},
    "real(exp(1j*x)*x)": lambda i: {"x": 0.3 + 0.2 * i},
    "abs(sqrt(x + 1j)) * y": lambda i: {"x": 0.3 + 0.2 * i, "y": 1.5 - 0.25 * i},
    "real(complex(a, b)**2)": lambda i: {"a": 1.0 + i, "b": 2.0 - 0.5 * i},
    "sum(abs(fft(x))**2)": lambda i: {"x": np.array([1.0, 2.0, 3.0, 4.0]) + 0.5 * i},
    "sum(real(x * exp(1j*x)) * y)": lambda i: {"x": np.array([0.1, 0.5, 1.0]) + 0.1 * i,
                                               "y": np.array([1.0, 2.0, -1.0]) * (1 + i)},
    "imag(fft(x)) * y": lambda i: {"x": np.array([1.0, 2.0, 3.0, 4.0]) + 0.5 * i, "y": 2.0 + i},
}
MATRICES = ["hessian", "jacobian auto", "jacobian forward", "jacobian reverse", "forward grad"]


def replayed_matrix(kind, f, at):
    if kind == "hessian":
        return f.hessian(at)
    if kind.startswith("jacobian"):
        return f.jacobian(at, mode=kind.split()[1])
    return f.forward_grad_result(at)


def same_matrix(kind, got, want) -> bool:
    if kind == "forward grad":
        assert_same_gradient(got, want)
        got, want = got.gradient, want.gradient
    got, want = flat_blocks(got), flat_blocks(want)
    return len(got) == len(want) and all(same_number(a, b) for a, b in zip(got, want))


@pytest.mark.parametrize("kind", MATRICES)
@pytest.mark.parametrize("source", sorted(THROUGH_COMPLEX))
def test_derivatives_of_real_inputs_through_complex_values_replay_to_the_interpreters_bits(source, kind):
    f = Function(source)
    vector = source.startswith("imag(fft")
    if kind == "hessian" and vector:                # not a scalar: the interpreter's error, confirmed
        with pytest.raises(SourceError, match="scalar output"):
            for i in range(3):
                f.hessian(THROUGH_COMPLEX[source](i))
        return
    for i in range(5):
        at = THROUGH_COMPLEX[source](i)
        assert same_matrix(kind, replayed_matrix(kind, f, at), fresh_matrix(kind, f, at)), (source, i)
    assert (f.replays, f.interpreted, f.fallbacks) == (3, 2, {}), source


# n-th derivatives: a complex input's (f'(z) of a holomorphic f), a real input's of a complex
# output (nested duals, as the interpreter takes them), and a real input's and output's through
# complex values inside (the real form); `wrt`: the input varied, the others held
NTH = {
    "exp(z)*z": (lambda i: {"z": 1j + 0.1 * i}, None),
    "sin(z)**2 + z**3/(1 + z)": (lambda i: {"z": 0.3 + 0.4j - 0.1j * i}, None),
    "exp(z)*abs(w)": (lambda i: {"z": 0.5 - 0.5j * i, "w": 1 + 1j * i}, "z"),
    "exp(1j*x)*x": (lambda i: {"x": 0.3 + 0.2 * i}, None),
    "real(exp(1j*x)*x)": (lambda i: {"x": 0.3 + 0.2 * i}, None),
    "abs(sqrt(x + 1j))": (lambda i: {"x": 0.3 + 0.2 * i}, None),
}


@pytest.mark.parametrize("method", ["reverse", "forward"])
@pytest.mark.parametrize("source", sorted(NTH))
def test_replayed_nth_derivatives_of_complex_values_are_the_interpreters_bits(source, method):
    from autodiff.engine.diff import higher
    from test_replay_derivatives import same_derivatives
    point, wrt = NTH[source]
    f = Function(source)
    for i in range(5):
        at = point(i)
        got, want = f.derivatives_result(at, 3, method, wrt), higher.derivatives(None, at, 3, method,
                                                                                  target=f.target, wrt=wrt)
        same_derivatives(got, want)
        assert got.method == want.method and got.name == want.name
    assert (f.replays, f.interpreted, f.fallbacks) == (3, 2, {}), source


def test_a_replayed_derivative_of_a_function_not_holomorphic_is_the_interpreters_error():
    f = Function("real(z)**2 + z")
    for i in range(2):
        f(z=1j + i)
    for z in (0.5j, 1 + 0.5j):
        with pytest.raises(SourceError, match="not holomorphic") as replayed:
            f.derivatives({"z": z}, order=2)
        from autodiff.engine.diff import higher
        with pytest.raises(SourceError) as interpreted:
            higher.derivatives(None, {"z": z}, 2, target=f.target)
        assert str(replayed.value) == str(interpreted.value)
    assert f.fallbacks == {"the replayed derivatives declines these values (a note, a non-finite number)": 2}


# points where a replayed pass meets a kink's note or a non-finite number (the 4th): the replay of
# a trace holding complex values declines them as a real trace's does, for the same counted reason
UNUSUAL = {
    "abs(z) * x": lambda i: {"z": (1 + 1j) * (1 - i / 3), "x": 1.0 + i},            # abs at 0: a note
    "real(log(z)) + imag(z)": lambda i: {"z": (1 + 1j) * (1 - i / 3)},              # log(0): -inf
    "abs(x*1j) * y": lambda i: {"x": 1.0 - i / 3, "y": 1.0 + i},                     # real inputs, abs at 0
}
WHAT = {"hessian": "hessian", "jacobian auto": "auto", "jacobian forward": "forward", "jacobian reverse": "reverse",
        "forward grad": "gradient"}


@pytest.mark.parametrize("kind", MATRICES)
@pytest.mark.parametrize("source", sorted(UNUSUAL))
def test_a_replayed_pass_meeting_a_note_or_a_non_finite_number_is_declined_as_a_real_traces(source, kind):
    f = Function(source)
    for i in range(5):
        at = UNUSUAL[source](i)
        assert same_matrix(kind, replayed_matrix(kind, f, at), fresh_matrix(kind, f, at)), (source, i)
    if source == "abs(x*1j) * y":       # real inputs: what the real twin's replay does, point for point
        twin = Function("abs(x) * y")
        for i in range(5):
            replayed_matrix(kind, twin, UNUSUAL[source](i))
        assert (f.replays, f.interpreted, f.fallbacks) == (twin.replays, twin.interpreted, twin.fallbacks)
        if kind in ("jacobian auto", "jacobian reverse"):   # a reverse sweep through a kink: as interpreted
            assert (f.replays, f.fallbacks) == (3, {})
            return
    reason = f"the replayed {WHAT[kind]} declines these values (a note, a non-finite number)"
    if source == "real(log(z)) + imag(z)":      # the typed fallback, checked under AUTODIFF_STRICT=1
        reason = "non-finite result"
    assert (f.replays, f.interpreted, f.fallbacks) == (2, 3, {reason: 1}), source


def test_large_complex_arrays_replay_on_the_interpreters_lean_path():
    """A large complex array's elementwise steps take the fused entries a replay gives them: the
    interpreter's bits. A program that fuses a region over complex128 arrays in a plain run
    (issue 32: complex regions; core/lazy.py) gives the op-by-op bits, so its trace is kept and
    replayed, its Program's regions fused by the same pass."""
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
