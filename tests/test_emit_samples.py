"""`autodiff emit` of every sample under samples/higher and of the functions
samples/project/checks/ checks (issue 31 item 4): each emits at its point (its header's, its
check file's), the emitted module's checks pass there (api.validate_emitted: adjoint against AD,
tangent against central differences, the dot-product test), and its f_vjp with a random
cotangent is autodiff's vector-Jacobian product to 1e-12 at five random points near it."""
from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import numpy as np
import pytest

import autodiff
from autodiff.engine import api

ROOT = Path(__file__).resolve().parent.parent
HIGHER = ROOT / "samples" / "higher"
PROJECT = ROOT / "samples" / "project"

# each sample of samples/higher at its header's point
HIGHER_POINTS = {
    "logsumexp.py": {"z": [1.0, 2.0, 3.0]},
    "nested_grad.py": {"a": 0.5},
    "perturbation.py": {"x": 3.0},
    "polar.py": {"r": 2.0, "t": 0.5},
    "rosenbrock.py": {"x": -1.2, "y": 1.0},
    "softmax.py": {"z": [1.0, 2.0, 3.0]},
}


def project_cases() -> list:
    """(name, program, fn, wrt, point) of each case of samples/project/checks/*.grad.toml."""
    cases = []
    for check in sorted((PROJECT / "checks").glob("*.toml")):
        for case in tomllib.loads(check.read_text(encoding="utf-8"))["case"]:
            cases.append((case["name"], (check.parent / case["program"]).resolve(), case.get("fn"), case.get("wrt"),
                          case["at"]))
    return cases


CASES = [(name, HIGHER / name, None, None, point) for name, point in sorted(HIGHER_POINTS.items())] + project_cases()
# what does not emit yet, and the words emit refuses it with (exit 2, its line): each flips to a
# failure (strict) once it emits, so the list shrinks as emit learns
NOT_YET: dict = {}


def marked(case):
    words = NOT_YET.get(case[1].name)
    if words is None:
        return case
    return pytest.param(*case, id=case[0], marks=pytest.mark.xfail(strict=True, raises=api.SourceError,
                                                                   reason=f"emit: {words}"))


def test_every_sample_of_samples_higher_is_listed():
    assert sorted(p.name for p in HIGHER.glob("*.py")) == sorted(HIGHER_POINTS)
    assert sorted({c[1].name for c in project_cases()}) == sorted(p.name for p in (PROJECT / "src").glob("*.py"))


def near(rng, point: dict) -> dict:
    """A random point near `point`: each float moved by up to 0.1, whole-number labels kept."""
    out = {}
    for name, value in point.items():
        v = np.asarray(value)
        if v.dtype.kind in "iu":
            out[name] = v
        else:
            moved = v + rng.uniform(-0.1, 0.1, v.shape)
            out[name] = float(moved) if moved.ndim == 0 else moved
    return out


def reference_vjp(path, fn, point, wrt, cotangent) -> tuple:
    """(value, the VJP of each of wrt): autodiff.jacobian's blocks contracted with the cotangent."""
    result = autodiff.jacobian(str(path), at=point, fn=fn, wrt=wrt)
    cot = np.asarray(cotangent)
    grads = [np.tensordot(cot, np.asarray(result.jacobian[w]), axes=cot.ndim) for w in wrt]
    return result.value, grads


@pytest.mark.parametrize("name, path, fn, wrt, point", [marked(c) for c in CASES], ids=[c[0] for c in CASES])
def test_every_higher_and_project_sample_emits_validates_and_matches_autodiffs_vjp(tmp_path, name, path, fn, wrt,
                                                                                   point):
    target = api.load(str(path), fn)
    if path.name in NOT_YET:
        with pytest.raises(api.SourceError) as err:
            api.emit(None, wrt=wrt, target=target, at=point)
        assert NOT_YET[path.name] in err.value.message and err.value.span is not None
    values = {p: np.asarray(v) if isinstance(v, list) else v for p, v in point.items()}    # labels stay whole
    out = tmp_path / "emitted.py"
    out.write_text(api.emit(None, wrt=wrt, mode="both", target=target, at=values))
    rows = api.validate_emitted(str(out), target, values, wrt)
    assert rows and [r["verdict"] for r in rows] == ["pass"] * len(rows), rows
    spec = importlib.util.spec_from_file_location(f"emitted_{path.stem}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vjp = getattr(module, f"{fn or 'f'}_vjp")
    wrt = list(wrt or target.inputs)
    rng = np.random.default_rng(31)
    for _ in range(5):
        at = near(rng, values)
        primal = np.asarray(getattr(module, fn or "f")(*at.values()))
        cotangent = rng.uniform(-1.0, 1.0, primal.shape) if primal.ndim else float(rng.uniform(-1.0, 1.0))
        value, grads = vjp(*at.values(), cotangent=cotangent)
        expected_value, expected = reference_vjp(path, fn, at, wrt, cotangent)
        np.testing.assert_allclose(value, expected_value, rtol=1e-12, atol=1e-12)
        assert len(grads) == len(wrt)
        for w, g, e in zip(wrt, grads, expected):
            assert np.shape(g) == np.shape(at[w])
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"{name}: {w}")
