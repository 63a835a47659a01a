"""Hand-derived Jacobians, Hessians, tangents and adjoints written as functions of the program
(issue 29 item 4), checked entry by entry against AD:

- `jacobian = "jac_fn"`: jac_fn(params...) returns the Jacobian (out.shape + in.shape; a tuple in
  the order of the inputs checked, or a dict, for several), against the engine's Jacobian;
- `hessian = "hess_fn"`: hess_fn(params...) returns the Hessian (one input: a matrix; several: a
  nested tuple or a dict of dicts), against the engine's Hessian (forward-over-reverse);
- `jvp = "f_jvp"`: f_jvp(params..., tangents...) returns J·u (Tapenade's tangent), against AD's
  forward mode, at seeded random tangents u;
- `vjp = "f_vjp"`: f_vjp(params..., cotangent) returns Jᵀ·v (the adjoint: a tuple in the order of
  the inputs checked, a dict, or one array), against AD's reverse sweep seeded with v;
- both: the dot-product test ⟨J·u, v⟩ = ⟨u, Jᵀ·v⟩ of the two hand functions, with its own row.
Returns rows (EntryCheck); never prints."""
from __future__ import annotations

from ..core.backend import np, to_device, to_host_value
from ..core.tape import strip
from ..diff import forward, reverse
from ..lang.target import Runner
from ..lang.values import shape_of
from .gradient import name_the_slips
from .hand import by_name, call_in_order, program_function
from .report import CheckReport, tolerance_for
from .verdicts import compare

DOT_LABEL = "⟨J·u, v⟩ = ⟨u, Jᵀ·v⟩"


def _call(target, name, inputs: dict, extra=(), what="jacobian"):
    """Run the program's function `name` on the target's inputs (by position, then `extra`)."""
    runner = Runner(program_function(target, name, what))
    return call_in_order(runner, [inputs[n] for n in target.inputs] + list(extra))


def _key(kind, names, a, b=None) -> str:
    if len(names) == 1:
        return kind
    return f"{kind}[{a}]" if b is None else f"{kind}[{a},{b}]"


def jacobian_rows(result, target, fn_name, tol) -> list:
    """The hand Jacobian against a JacobianResult."""
    names = list(result.jacobian)
    got = by_name(_call(target, fn_name, result.inputs), names, f"the hand-derived jacobian {fn_name}")
    claimed = {_key("J", names, w): _host(got[w]) for w in names}
    reference = {_key("J", names, w): result.jacobian[w] for w in names}
    return compare(claimed, reference, result.inputs, tol, list(claimed))


def hessian_rows(result, target, fn_name, tol) -> list:
    """The hand Hessian against a HessianResult: one input, a matrix; several, nested by name."""
    names = list(result.hessian)
    out = _call(target, fn_name, result.inputs, what="hessian")
    what = f"the hand-derived hessian {fn_name}"
    if len(names) == 1:
        got = {names[0]: {names[0]: out}}
    else:
        got = {a: by_name(row, names, what) for a, row in by_name(out, names, what).items()}
    claimed, reference = {}, {}
    for a in names:
        for b in names:
            claimed[_key("H", names, a, b)] = _host(got[a][b])
            reference[_key("H", names, a, b)] = result.hessian[a][b]
    return compare(claimed, reference, result.inputs, tol, list(claimed))


def matrix_report(kind, rows, result, dtype, tol) -> CheckReport:
    """A hand Jacobian's or Hessian's rows as a report (claimed: hand, reference: AD)."""
    return CheckReport(mode="full", claimed="hand", reference="AD", dtype=dtype, tolerance=tol, value=result.value,
                       entries=rows, kind=kind)


def tangent_rows(target, inputs: dict, names, jvp_name, vjp_name, seed: int, tol, limits=None,
                 dtype="float64") -> list:
    """The tangent and adjoint claims at seeded directions u (over the inputs checked) and v (over
    the output), against AD; with both, the dot-product test of the two. A wrong adjoint is a wrong
    gradient of vᵀf: its rows name the terms it equals and misses (name_the_slips)."""
    rng = np().random.default_rng([seed, 29])
    u = {n: _direction(rng, inputs[n]) for n in names}
    value = strip(reverse.grad(None, inputs, names, target=target, limits=limits, dtype_name=dtype).value)
    v = _direction(rng, value)
    rows, jvp_claim, vjp_claim = [], None, None
    if jvp_name is not None:
        jvp_claim = _host(_call(target, jvp_name, inputs, [u[n] for n in names], "jvp"))
        _, ad_tangent, _ = forward.jvp(target, {k: to_device(x) for k, x in inputs.items()},
                                       {n: to_device(u[n]) for n in names}, limits)
        ad = np().zeros(shape_of(value)) if ad_tangent is None else _host(ad_tangent)
        rows += compare({"jvp": jvp_claim}, {"jvp": ad}, inputs, tol)
    if vjp_name is not None:
        got = by_name(_call(target, vjp_name, inputs, [v], "vjp"), names, f"the hand-derived vjp {vjp_name}")
        vjp_claim = {n: _host(got[n]) for n in names}
        ad = reverse.grad(None, inputs, names, v, target=target, limits=limits, dtype_name=dtype).gradient
        adjoint_rows = compare(vjp_claim, ad, inputs, tol, names)
        name_the_slips(adjoint_rows, target, inputs, vjp_claim, ad, v, dtype, limits, tol)
        for row in adjoint_rows:
            row.label = f"vjp {row.label}"
        rows += adjoint_rows
    if jvp_claim is not None and vjp_claim is not None:
        left = float(np().sum(np().asarray(jvp_claim) * v))
        right = float(sum(np().sum(u[n] * np().asarray(vjp_claim[n])) for n in names))
        (row,) = compare({DOT_LABEL: right}, {DOT_LABEL: left}, inputs, tol)
        row.reason = row.reason.replace("hand-derived", "⟨u, Jᵀ·v⟩ of the vjp").replace("vs AD",
                                                                                     "vs ⟨J·u, v⟩ of the jvp")
        rows.append(row)
    return rows


def _direction(rng, like):
    shape = shape_of(like)
    return float(rng.standard_normal()) if shape == () else rng.standard_normal(shape)


def _host(v):
    """A hand function's result on the host, float64, or complex128 where it is complex (a
    --holomorphic Jacobian's f'(z), compared part by part)."""
    v = to_host_value(strip(v))
    if isinstance(v, (list, tuple)) or hasattr(v, "shape"):
        a = np().asarray(v)
        return a.astype(np().complex128 if a.dtype.kind == "c" else np().float64)
    return complex(v) if isinstance(v, complex) else float(v)


__all__ = ["jacobian_rows", "hessian_rows", "tangent_rows", "matrix_report", "tolerance_for", "DOT_LABEL"]
