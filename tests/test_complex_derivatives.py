"""Issue 32 item 2: forward mode, the holomorphic derivative f'(z), Jacobians of complex values
(real 2x2 blocks, or the complex Jacobian with --holomorphic) and the Hessian of a real f of
complex inputs over the (re, im) pairs (engine/diff/complex_derivatives.py).

The expected numbers are derived by hand (each test says how) and agree with PyTorch complex128
and JAX (holomorphic=True) as the issue gives them: `abs(z)**2` at 1+2j -> 2+4j;
`real(z*conj(w)) + abs(exp(z))` at z = 0.3+0.4j, w = 1-2j -> z: 1+e^0.3-2j (= 2.34985880757600-2j),
w: 0.3+0.4j; `derivative "exp(z)*z" --at z=1j` -> (1+z)e^z = -0.30117+1.38177j."""
import cmath
import math

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.parser.errors import SourceError

from test_cli_grad import run_cli

MIXED = "real(z*conj(w)) + abs(exp(z))"
MIXED_AT = {"z": 0.3 + 0.4j, "w": 1 - 2j}


# ---- forward mode ------------------------------------------------------------------------------

def test_forward_gradient_is_the_reverse_ones_pytorchs_convention():
    r = api.grad("abs(z)**2", at={"z": 1 + 2j}, mode="forward")
    assert r.gradient["z"] == 2 + 4j and r.mode == "forward"
    g = api.grad(MIXED, at=MIXED_AT, mode="forward").gradient
    # real(z conj(w)) = x_z x_w + y_z y_w and |e^z| = e^{x_z}: z: x_w + e^{x_z} + i y_w, w: x_z + i y_z
    assert g["z"] == pytest.approx(1 + math.exp(0.3) - 2j, rel=1e-15)
    assert g["w"] == pytest.approx(0.3 + 0.4j, rel=1e-15)
    v = np.array([1 - 1j, 2 + 0.5j])
    assert np.array_equal(api.grad("sum(abs(v)**2) + x", at={"v": v, "x": 1.0}, mode="forward").gradient["v"], 2 * v)


def test_forward_gradient_with_a_cotangent():
    # v^T |v|^2 with v = (1, -3): 2 v_k times the weight, in both modes
    v = np.array([1 - 1j, 2 + 0.5j])
    for mode in ("forward", "reverse"):
        g = api.grad("abs(v)**2", at={"v": v}, seed=np.array([1.0, -3.0]), mode=mode).gradient["v"]
        np.testing.assert_allclose(g, [2 - 2j, -12 - 3j], rtol=1e-15)      # |v| rounds: sqrt(4.25)**2


def test_forward_jvp_takes_a_complex_tangent():
    from autodiff.engine.diff.forward import jvp
    from autodiff.engine.lang.target import bind, load
    target, inputs = bind(load("exp(z)*z", None, None), {"z": 1j})
    fprime = (1 + 1j) * cmath.exp(1j)
    for direction in (1.0, 1j, 0.5 - 2j):       # holomorphic: the JVP is f'(z) dz
        assert jvp(target, inputs, {"z": np.complex128(direction)})[1] == pytest.approx(fprime * direction, rel=1e-15)


# ---- derivative: f'(z) of a holomorphic f --------------------------------------------------------

def test_derivative_of_a_holomorphic_f_is_fprime():
    r = api.derivatives("exp(z)*z", at={"z": 1j}, order=3)
    # (z e^z)^(k) = (k + z) e^z
    for k, d in enumerate(r.derivatives, 1):
        assert d == pytest.approx((k + 1j) * cmath.exp(1j), rel=1e-15)
    assert r.derivatives[0] == pytest.approx(-0.30116867893975674 + 1.3817732906760363j, rel=1e-15)
    assert api.derivatives("log(z) + sqrt(z) + sin(z)/z", at={"z": 0.3 + 0.4j}).derivatives[0] == pytest.approx(
        1 / (0.3 + 0.4j) + 0.5 / cmath.sqrt(0.3 + 0.4j) + cmath.cos(0.3 + 0.4j) / (0.3 + 0.4j)
        - cmath.sin(0.3 + 0.4j) / (0.3 + 0.4j) ** 2, rel=1e-14)


def test_derivative_of_a_complex_output_of_a_real_input():
    # d/dx e^{ix} = i e^{ix}, d²/dx² = -e^{ix}
    r = api.derivatives("exp(1j*x)", at={"x": 0.5}, order=2)
    assert r.derivatives == pytest.approx([1j * cmath.exp(0.5j), -cmath.exp(0.5j)], rel=1e-15)


@pytest.mark.parametrize("source, named", [("conj(z)*z", "conj (1:1)"), ("abs(z)**2", "abs (1:1)"),
                                           ("exp(z) + real(z)", "real (1:10)"), ("imag(z)*z", "imag (1:1)"),
                                           ("angle(z)", "angle (1:1)")])
def test_derivative_of_a_non_holomorphic_f_is_refused_with_the_reason(source, named):
    with pytest.raises(SourceError) as e:
        api.derivatives(source, at={"z": 1 + 1j})
    assert e.value.kind == "not holomorphic"
    assert named in e.value.message and "Cauchy-Riemann" in e.value.message
    assert "autodiff grad" in e.value.hint


def test_derivative_cli_text_and_json():
    out = run_cli("derivative", "exp(z)*z", "--at", "z=1j")
    assert out.code == 0
    assert "-0.30116867893975674+1.3817732906760363j" in out.out and "holomorphic=True" in out.out
    doc = run_cli("derivative", "exp(z)*z", "--at", "z=1j", "--json").json
    assert doc["derivatives"] == [{"real": -0.30116867893975674, "imag": 1.3817732906760363}]
    assert doc["holomorphic"] is True
    bad = run_cli("derivative", "abs(z)**2", "--at", "z=1j")
    assert bad.code == 2 and "not holomorphic" in bad.err and "abs (1:1)" in bad.err


# ---- Jacobians ---------------------------------------------------------------------------------

def test_jacobian_of_complex_values_is_real_2x2_blocks():
    r = api.jacobian("exp(z)*z", at={"z": 1j})
    a, b = (1 + 1j) * cmath.exp(1j), None
    a, b = a.real, a.imag
    # f = u + iv holomorphic: [[du/dx, du/dy], [dv/dx, dv/dy]] = [[Re f', -Im f'], [Im f', Re f']]
    np.testing.assert_allclose(r.jacobian["z"], [[a, -b], [b, a]], rtol=1e-15)
    assert r.layout["z"] == "[output index, z index, (re, im) of the output, (re, im) of z]"
    # v * conj(v) = |v|^2 elementwise: d re / d(x, y) = (2x, 2y), the imaginary part constant
    v = np.array([1j, 2 + 1j])
    j = api.jacobian("v*conj(v)", at={"v": v}).jacobian["v"]
    assert j.shape == (2, 2, 2, 2)
    expected = np.zeros((2, 2, 2, 2))
    expected[0, 0, 0] = [0, 2]
    expected[1, 1, 0] = [4, 2]
    np.testing.assert_array_equal(j, expected)


def test_jacobian_of_a_complex_output_of_real_inputs_in_every_mode():
    # e^{ix} = cos x + i sin x: (re, im) / dx = (-sin x, cos x)
    for mode in ("auto", "forward", "reverse"):
        r = api.jacobian("exp(1j*x)", at={"x": 0.5}, mode=mode)
        np.testing.assert_allclose(r.jacobian["x"], [-math.sin(0.5), math.cos(0.5)], rtol=1e-15)
        assert r.layout["x"] == "[output index, x index, (re, im) of the output]"


def test_holomorphic_jacobian_is_the_complex_one():
    v = np.array([1j, 2 + 1j])
    j = api.jacobian("v*v", at={"v": v}, holomorphic=True)
    np.testing.assert_array_equal(j.jacobian["v"], np.diag(2 * v))
    assert j.holomorphic and not j.layout
    assert api.jacobian("exp(z)*z", at={"z": 1j}, holomorphic=True).jacobian["z"] == pytest.approx(
        (1 + 1j) * cmath.exp(1j), rel=1e-15)


def test_holomorphic_jacobian_refuses_a_non_holomorphic_target():
    with pytest.raises(SourceError) as e:
        api.jacobian("[z*z, conj(z)]", at={"z": 1j}, holomorphic=True)
    assert e.value.kind == "not holomorphic" and "conj (1:7)" in e.value.message
    assert "df/dy = 0-1j but i df/dx = 0+1j" in e.value.message      # d conj / dy = -i, i d conj / dx = i


def test_jacobian_cli():
    doc = run_cli("jacobian", "exp(z)*z", "--at", "z=1j", "--json").json
    assert doc["layout"] == {"z": "[output index, z index, (re, im) of the output, (re, im) of z]"}
    doc = run_cli("jacobian", "exp(z)*z", "--at", "z=1j", "--holomorphic", "--json").json
    assert doc["jacobian"]["z"] == {"real": -0.30116867893975674, "imag": 1.3817732906760363}
    assert doc["holomorphic"] is True
    out = run_cli("jacobian", "exp(z)*z", "--at", "z=1j")
    assert out.code == 0 and "(re, im) of z" in out.out
    bad = run_cli("jacobian", "conj(z)", "--at", "z=1j", "--holomorphic")
    assert bad.code == 2 and "not holomorphic" in bad.err and "--holomorphic" in bad.err


# ---- Hessians ----------------------------------------------------------------------------------

def test_hessian_of_a_real_f_of_complex_inputs_over_re_im_pairs():
    # real(z^3) = x^3 - 3xy^2: H = [[6x, -6y], [-6y, -6x]], at (1, 2): [[6, -12], [-12, -6]]
    r = api.hessian("real(z**3)", at={"z": 1 + 2j})
    np.testing.assert_array_equal(r.hessian["z"]["z"], [[6, -12], [-12, -6]])
    assert r.gradient["z"] == -9 - 12j                 # (3x^2 - 3y^2) + i(-6xy)
    assert r.layout == {"z": {"z": "[z index, z index, (re, im) of z, (re, im) of z]"}}
    # |z|^2 = x^2 + y^2: 2I
    np.testing.assert_allclose(api.hessian("abs(z)**2", at={"z": 1 + 2j}).hessian["z"]["z"], 2 * np.eye(2),
                               atol=1e-15)


def test_hessian_of_the_issues_mixed_function():
    # f = x_z x_w + y_z y_w + e^{x_z}: d²/dx_z² = e^0.3, the z-w block the identity, the rest 0
    h = api.hessian(MIXED, at=MIXED_AT).hessian
    np.testing.assert_allclose(h["z"]["z"], [[math.exp(0.3), 0], [0, 0]], rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(h["z"]["w"], np.eye(2))
    np.testing.assert_array_equal(h["w"]["z"], np.eye(2))
    np.testing.assert_array_equal(h["w"]["w"], np.zeros((2, 2)))


def test_hessian_of_complex_and_real_inputs_together():
    # real(z^3) + x imag(z) = x_z^3 - 3 x_z y^2 + x y: d²/dx dy = 1
    r = api.hessian("real(z**3) + x*imag(z)", at={"z": 1 + 2j, "x": 2.0})
    np.testing.assert_array_equal(r.hessian["z"]["x"], [0, 1])
    np.testing.assert_array_equal(r.hessian["x"]["z"], [0, 1])
    assert r.hessian["x"]["x"] == 0
    assert r.gradient == {"z": -9 - 10j, "x": 2.0}
    v = np.array([1 + 1j, 2 - 1j])                      # sum |v|^2: 2I over the (re, im) pairs
    h = api.hessian("sum(abs(v)**2)", at={"v": v}).hessian["v"]["v"]
    assert h.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(h, np.einsum("ij,pq->ijpq", np.eye(2), 2 * np.eye(2)), atol=1e-15)


def test_hessian_of_a_complex_output_is_refused():
    with pytest.raises(SourceError) as e:
        api.hessian("z*z", at={"z": 1j})
    assert e.value.kind == "bad output" and "complex" in e.value.message


def test_hessian_cli_states_the_layout():
    doc = run_cli("hessian", "real(z**3)", "--at", "z=1+2j", "--json").json
    assert doc["hessian"]["z"]["z"] == [[6.0, -12.0], [-12.0, -6.0]]
    assert doc["layout"] == {"z": {"z": "[z index, z index, (re, im) of z, (re, im) of z]"}}
    assert doc["wirtinger"]["z"]["dzbar"] == {"real": -4.5, "imag": -6.0}
    out = run_cli("hessian", "real(z**3)", "--at", "z=1+2j")
    assert out.code == 0 and "(re, im) of z" in out.out


TORCH_CASES = [
    ("abs(z)**2", {"z": 1 + 2j}, lambda t, z: t.abs(z) ** 2),
    (MIXED, MIXED_AT, lambda t, z, w: t.real(z * t.conj(w)) + t.abs(t.exp(z))),
    ("real(z**3) + imag(log(z))*abs(z)", {"z": 0.7 - 0.2j}, lambda t, z: t.real(z ** 3) + t.imag(t.log(z)) * t.abs(z)),
]


@pytest.mark.parametrize("source, at, torch_f", TORCH_CASES)
def test_forward_and_reverse_agree_with_torch_where_installed(source, at, torch_f):
    torch = pytest.importorskip("torch")
    args = [torch.tensor(v, dtype=torch.complex128, requires_grad=True) for v in at.values()]
    torch_f(torch, *args).backward()
    for mode in ("forward", "reverse"):
        g = api.grad(source, at=at, mode=mode).gradient
        for name, a in zip(at, args):
            assert g[name] == pytest.approx(complex(a.grad), rel=1e-13)


# ---- checks and views of complex derivatives ----------------------------------------------------

def test_derivative_check_compares_both_parts_along_the_real_axis():
    from autodiff.engine.checks.derivatives import check_derivatives
    from autodiff.engine.lang.target import load
    target = load("exp(z)*z", None, None)
    result = api.derivatives(None, at={"z": 1j}, order=2, target=target)
    report = check_derivatives(result, target)
    assert report.passed
    assert [row.label for row in report.entries] == ["f′ = df/dz (re)", "f′ = df/dz (im)",
                                                      "f″ = df′/dz (re)", "f″ = df′/dz (im)"]
    # f' = (1+z)e^z, f'' = (2+z)e^z at z = i, the claimed parts; FD of the order below agrees
    want = [(1 + 1j) * cmath.exp(1j), (2 + 1j) * cmath.exp(1j)]
    assert [row.claimed for row in report.entries] == pytest.approx(
        [want[0].real, want[0].imag, want[1].real, want[1].imag], rel=1e-15)
    assert [row.reference for row in report.entries] == pytest.approx([row.claimed for row in report.entries],
                                                                       rel=1e-9)


@pytest.mark.parametrize("args", [("grad", "abs(z)**2", "--at", "z=1+2j", "--mode", "forward", "--explain"),
                                  ("jacobian", "exp(z)*z", "--at", "z=1j", "--explain"),
                                  ("derivative", "exp(z)*z", "--at", "z=1j", "--explain"),
                                  ("jacobian", "exp(z)*z", "--at", "z=1j", "--holomorphic", "--explain")])
def test_views_not_done_for_complex_values_are_refused_not_crashes(args):
    out = run_cli(*args)
    assert out.code == 2 and ("complex" in out.err or "--holomorphic" in out.err)


# ---- --check and --hand of complex Jacobians and Hessians (the real layout) --------------------

ZS = np.array([1 + 2j, 0.5 - 1j])
SQUARE_BLOCKS = np.zeros((2, 2, 2, 2))           # d(z_i^2) = 2 z_i dz_i: [[2x, -2y], [2y, 2x]] on the diagonal
SQUARE_BLOCKS[0, 0] = [[2, -4], [4, 2]]
SQUARE_BLOCKS[1, 1] = [[1, 2], [-2, 1]]
SQUARE_LABELS = [f"∂f[{i}].{p}/∂z[{k}].{q}" for i in range(2) for p in ("real", "imag")
                 for k in range(2) for q in ("real", "imag")]
# f = real(z0^3) + |z1|^2 imag(z0) = x0^3 - 3 x0 y0^2 + (x1^2 + y1^2) y0 at z = [1+2j, 0.5-1j]
HESS_F = "real(z[0]**3) + abs(z[1])**2 * imag(z[0])"
HESS_BLOCKS = np.zeros((2, 2, 2, 2))
HESS_BLOCKS[0, 0] = [[6, -12], [-12, -6]]        # [[6x0, -6y0], [-6y0, -6x0]]
HESS_BLOCKS[0, 1] = [[0, 0], [1, -2]]            # d/dy0 of (2 x1 y0, 2 y1 y0)
HESS_BLOCKS[1, 0] = [[0, 1], [0, -2]]
HESS_BLOCKS[1, 1] = [[4, 0], [0, 4]]             # 2 y0 I


def _target(source):
    from autodiff.engine.lang.target import load
    return load(source, None, None)


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_jacobian_check_of_complex_values_perturbs_each_part(mode):
    target = _target("z*z")
    r = api.jacobian(None, at={"z": ZS}, target=target)
    np.testing.assert_array_equal(r.jacobian["z"], SQUARE_BLOCKS)
    report = api.check_jacobian(r, target, mode=mode, seed=7)
    assert report.passed
    if mode == "full":
        assert [row.label for row in report.entries] == SQUARE_LABELS
        # each entry's central difference of that output part along that input part
        np.testing.assert_allclose([row.reference for row in report.entries],
                                   np.moveaxis(SQUARE_BLOCKS, 2, 1).reshape(-1), atol=1e-9)
    wrong = SQUARE_BLOCKS.copy()
    wrong[1, 1, 1, 0] = 2.0                         # d im f1 / d re z1 is -2
    r.jacobian["z"] = wrong
    report = api.check_jacobian(r, target, mode=mode, seed=7)
    failed = (report.full if mode == "fast" else report).failures
    assert not report.passed and [row.label for row in failed] == ["∂f[1].imag/∂z[1].real"]
    assert failed[0].reference == pytest.approx(-2.0, abs=1e-9)


def test_jacobian_check_of_a_complex_output_of_a_real_input_and_a_holomorphic_one():
    target = _target("exp(1j*x)")
    report = api.check_jacobian(api.jacobian(None, at={"x": np.array([0.5, 1.0])}, target=target), target)
    assert report.passed and [row.label for row in report.entries][:3] == [
        "∂f[0].real/∂x[0]", "∂f[0].real/∂x[1]", "∂f[0].imag/∂x[0]"]
    assert report.entries[0].reference == pytest.approx(-math.sin(0.5), rel=1e-9)
    target = _target("exp(z)*z")
    r = api.jacobian(None, at={"z": 1j}, target=target, holomorphic=True)
    report = api.check_jacobian(r, target)          # f'(z) as its real blocks [[Re, -Im], [Im, Re]]
    a = (1 + 1j) * cmath.exp(1j)
    assert report.passed and [row.claimed for row in report.entries] == pytest.approx(
        [a.real, -a.imag, a.imag, a.real], rel=1e-15)
    r.jacobian["z"] = np.conj(a)
    assert [row.label for row in api.check_jacobian(r, target).failures] == ["∂f.real/∂z.imag", "∂f.imag/∂z.real"]


@pytest.mark.parametrize("source, at", [("z * z * (1 + 2j)", {"z": np.array([1 + 2j, -0.5j, 3.0])}),
                                        ("exp(z) * z", {"z": 1j}),
                                        ("exp(1j * x) * x", {"x": np.array([0.5, 1.0])})])
def test_a_holomorphic_jacobian_as_real_blocks_is_the_default_jacobian(source, at):
    # one layout of the real 2x2 blocks (diff/complex_derivatives.py): f'(z) laid out by
    # holomorphic_blocks, as checks/higher.py reads a --holomorphic Jacobian, is the default one
    from autodiff.engine.diff.complex_derivatives import holomorphic_blocks
    target, (name, x) = _target(source), next(iter(at.items()))
    h = api.jacobian(None, at=at, target=target, holomorphic=True)
    blocks = holomorphic_blocks(h.jacobian[name], np.shape(h.value), np.shape(x), np.iscomplexobj(x))
    np.testing.assert_allclose(blocks, api.jacobian(None, at=at, target=target).jacobian[name], rtol=1e-15, atol=0)
    f = np.asarray(h.jacobian[name]).reshape(-1)[0]
    first = blocks.reshape(-1, *blocks.shape[np.ndim(h.value) + np.ndim(x):])[0]
    expected = [[f.real, -f.imag], [f.imag, f.real]] if np.iscomplexobj(x) else [f.real, f.imag]
    assert first.tolist() == expected


def test_holomorphic_blocks_of_an_infinite_derivative_make_no_nan():
    from autodiff.engine.diff.complex_derivatives import holomorphic_blocks
    blocks = holomorphic_blocks(np.array([complex(math.inf, 0.0)]), (1,), (1,), True)
    assert blocks.tolist() == [[[[math.inf, 0.0], [0.0, math.inf]]]]


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_hessian_check_of_complex_inputs_perturbs_each_part(mode):
    target = _target(HESS_F)
    r = api.hessian(None, at={"z": ZS}, target=target)
    np.testing.assert_allclose(r.hessian["z"]["z"], HESS_BLOCKS, atol=1e-15)
    report = api.check_hessian(r, target, mode=mode, seed=3)
    assert report.passed
    if mode == "full":
        assert [row.label for row in report.entries][:3] == [
            "∂²f/∂z[0].real∂z[0].real", "∂²f/∂z[0].real∂z[0].imag", "∂²f/∂z[0].real∂z[1].real"]
        np.testing.assert_allclose([row.reference for row in report.entries],
                                   np.moveaxis(HESS_BLOCKS, 2, 1).reshape(-1), atol=1e-9)
    wrong = np.array(r.hessian["z"]["z"])
    wrong[0, 1, 1, 0] = 0.0                         # d²f / dy0 dx1 is 1
    r.hessian["z"]["z"] = wrong
    report = api.check_hessian(r, target, mode=mode, seed=3)
    failed = (report.full if mode == "fast" else report).failures
    assert not report.passed and [row.label for row in failed] == ["∂²f/∂z[0].imag∂z[1].real"]


def test_hessian_check_of_complex_and_real_inputs_together():
    target = _target("real(z**3) + x*imag(z)")
    r = api.hessian(None, at={"z": 1 + 2j, "x": 2.0}, target=target)
    report = api.check_hessian(r, target)
    assert report.passed
    assert [row.label for row in report.entries] == [
        "∂²f/∂z.real∂z.real", "∂²f/∂z.real∂z.imag", "∂²f/∂z.real∂x", "∂²f/∂z.imag∂z.real", "∂²f/∂z.imag∂z.imag",
        "∂²f/∂z.imag∂x", "∂²f/∂x∂z.real", "∂²f/∂x∂z.imag", "∂²f/∂x∂x"]
    assert [row.reference for row in report.entries] == pytest.approx([6, -12, 0, -12, -6, 1, 0, 1, 0], abs=1e-9)


HAND = """import numpy as np

def f(z):
    return z * z

def f_jac(z):
    x = np.real(z)
    y = np.imag(z)
    return np.array([[2 * x, -2 * y], [2 * y, 2 * x]])

def f_jac_wrong(z):
    x = np.real(z)
    y = np.imag(z)
    return np.array([[2 * x, 2 * y], [2 * y, 2 * x]])

def f_prime(z):
    return 2 * z

def f_prime_conj(z):
    return 2 * np.conj(z)

def e(z):
    return np.real(z ** 3)

def e_hess(z):
    x = np.real(z)
    y = np.imag(z)
    return np.array([[6 * x, -6 * y], [-6 * y, -6 * x]])

def e_hess_wrong(z):
    x = np.real(z)
    y = np.imag(z)
    return np.array([[6 * x, -6 * y], [-6 * y, 6 * x]])
"""


def _failing(out) -> list:
    import json
    return [e["entry"] for e in json.loads(out.out)["check"]["entries"] if e["verdict"] == "fail"]


def test_cli_check_of_complex_jacobians_and_hessians():
    assert run_cli("jacobian", "z*z", "--at", "z=[1+2j,0.5-1j]", "--check").code == 0
    assert run_cli("jacobian", "z*z", "--at", "z=[1+2j,0.5-1j]", "--check", "fast").code == 0
    assert run_cli("jacobian", "exp(z)*z", "--at", "z=1j", "--holomorphic", "--check").code == 0
    out = run_cli("hessian", HESS_F, "--at", "z=[1+2j,0.5-1j]", "--check", "--json")
    assert out.code == 0 and len(out.json["check"]["entries"]) == 16
    assert out.json["check"]["entries"][6]["entry"] == "∂²f/∂z[0].imag∂z[1].real"
    assert run_cli("hessian", HESS_F, "--at", "z=[1+2j,0.5-1j]", "--check", "fast").code == 0


def test_cli_hand_of_complex_jacobians_and_hessians(tmp_path):
    path = tmp_path / "cm.py"
    path.write_text(HAND)
    p = str(path)
    assert run_cli("jacobian", p, "--fn", "f", "--at", "z=1+2j", "--hand", "f_jac").code == 0
    bad = run_cli("jacobian", p, "--fn", "f", "--at", "z=1+2j", "--hand", "f_jac_wrong", "--json")
    assert bad.code == 1 and _failing(bad) == ["J[0, 1]"]       # d re f / d im z is -2y = -4
    assert run_cli("jacobian", p, "--fn", "f", "--at", "z=1+2j", "--hand", "f_prime", "--holomorphic").code == 0
    bad = run_cli("jacobian", p, "--fn", "f", "--at", "z=1+2j", "--hand", "f_prime_conj", "--holomorphic", "--json")
    assert bad.code == 1 and _failing(bad) == ["J.imag"]
    assert run_cli("hessian", p, "--fn", "e", "--at", "z=1+2j", "--hand", "e_hess").code == 0
    bad = run_cli("hessian", p, "--fn", "e", "--at", "z=1+2j", "--hand", "e_hess_wrong", "--json")
    assert bad.code == 1 and _failing(bad) == ["H[1, 1]"]       # d²f/dy² is -6x = -6


def test_cli_hand_complex_number_for_the_real_blocks_of_a_jacobian_is_a_mistake(tmp_path):
    """f'(z) given as --hand without --holomorphic was spread over the real 2x2 blocks and
    compared entry by entry (exit 1 with 6 nonsense failures); it is a user mistake."""
    path = tmp_path / "cm.py"
    path.write_text("def f(z):\n    return z * z\n\ndef fp(z):\n    return 2 * z\n")
    out = run_cli("jacobian", str(path), "--fn", "f", "--at", "z=1+2j", "--hand", "fp")
    assert out.code == 2 and "one complex number" in out.err and "(2, 2)" in out.err
    assert "--holomorphic" in out.err and "Traceback" not in out.err
    assert run_cli("jacobian", str(path), "--fn", "f", "--at", "z=1+2j", "--hand", "fp", "--holomorphic").code == 0


# h6-d2 item 3: the table's holomorphic=False on the Hermitian eigen-decomposition's and the SVD's
# entries (real values of complex entries, or vectors with a phase held): named on the path
_HERM = np.array([[2.0, 1 - 1j], [1 + 1j, 3.0]])
_SQUARE = np.array([[1 + 1j, 2 - 0.5j], [0.5j, 3 - 1j]])


@pytest.mark.parametrize("source, at, named", [
    ("eigvalsh(h)", {"h": _HERM}, "eigvalsh (1:1)"),
    ("eigh(h)[1]", {"h": _HERM}, "eigh_vectors"),
    ("svd(A)[1] * (1 + 0j)", {"A": _SQUARE}, "singular_values"),
    ("svd(A)[0]", {"A": _SQUARE}, "svd_vectors"),
    ("svd(A)[2]", {"A": _SQUARE}, "svd_vectors"),
])
def test_holomorphic_jacobian_through_hermitian_and_svd_entries_names_them(source, at, named):
    from autodiff.engine.core import rules
    with pytest.raises(SourceError) as e:
        api.jacobian(source, at=at, holomorphic=True)
    assert e.value.kind == "not holomorphic" and named in e.value.message and "(not holomorphic)" in e.value.message
    assert all(rules.TABLE[n].complex_values is True and rules.TABLE[n].holomorphic is False
               for n in ("eigvalsh", "eigh_vectors", "singular_values", "svd_vectors"))


def test_derivative_through_a_singular_value_is_refused_naming_it():
    with pytest.raises(SourceError) as e:
        api.derivatives("sum(svd(z * [[1, 2j], [0.5, 1]])[1]) * (1 + 0j)", at={"z": 1 + 1j})
    assert e.value.kind == "not holomorphic" and "singular_values" in e.value.message
