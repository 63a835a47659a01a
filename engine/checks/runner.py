"""Running the cases of check files: every point of every case, one CaseResult per case.

A case's own mistakes (a formula that does not parse, a program that fails) make that case an
`error`, counted as failed; they never stop the other cases. `--jobs` runs cases in processes,
`--shard K/N` picks a deterministic part of the suite. Returns results; never prints.
"""
from __future__ import annotations

import functools
import math
import time
import zlib
from dataclasses import dataclass, field

from ...parser.errors import SourceError, option
from . import datarefs
from ..core.backend import GPU_INSTALL_HINT, DeviceUnavailable, np, on_device, to_host_value
from ...parser.files import confined_path, read_text
from .gradient import check_gradient
from .hand import HandGradient, expression_target
from .report import FAILING, KINK, SEVERITY_ORDER, WARNING, tolerance_for
from .verdicts import compare
from .workers import run_in_process, run_supervised
from ..diff.common import check_wrt
from ..diff.function import Function, ReplayRunner
from ..lang.target import bind_inputs, constant, load
from ..lang.limits import Limits
from ..lang.values import set_dtype

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


@dataclass
class CaseResult:
    """One case of a check file, over all its points: `status` (passed, failed, error, skipped),
    the worst `verdict`, the worst errors and `where` they were, and the failing rows."""
    file: str
    name: str
    index: int
    line: int
    status: str                    # passed, failed, error, skipped
    points: int = 0
    verdict: str = ""              # the worst verdict over its points and entries
    worst_abs: float | None = None
    worst_rel: float | None = None
    where: str = ""                # the point and entry of the failure (or of the worst error)
    inputs: dict = field(default_factory=dict)   # that point's input values (on the host)
    entry: str = ""                # and its entry: `x`, `x[3]`, `value`
    message: str = ""              # why it failed, errored or was skipped
    warnings: list = field(default_factory=list)
    rows: list = field(default_factory=list)     # failing rows, as dicts (for JSON and JUnit)
    seed: int | None = None
    mode: str = "full"
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status in (FAILED, ERROR)


def hessian_function():
    """The engine's Hessian (forward-over-reverse): name -> name -> value in `.hessian`."""
    from ..diff.higher import hessian
    return hessian


def case_points(case, target) -> list:
    """The case's points as dicts of raw input values (random ones drawn deterministically)."""
    if case.points_file is not None:
        return datarefs.points_of(case.file, case.points_file)
    if case.points == [{}] and target.inputs:       # the case names no point: say how, in the file's words
        raise SourceError("missing input", f"the case gives no value for {', '.join(target.inputs)}", None,
                          "add at = { " + ", ".join(f"{n} = ..." for n in target.inputs) + " } "
                          "(or points = [...], or random = { count = 20, ... })")
    if case.points is not None:
        out = []
        for k, p in enumerate(case.points):
            point = {}
            for name, v in p.items():
                what = f"at {name}" if len(case.points) == 1 else f"points[{k}].{name}"
                if datarefs.is_reference(v):
                    point[name] = datarefs.value_of(case.file, v)
                else:
                    point[name] = constant(v, what) if isinstance(v, str) else \
                        (np().asarray(v, dtype=np().float64) if isinstance(v, list) else v)
            out.append(point)
        return out
    seed = case.options.get("seed")
    rng = np().random.default_rng(zlib.crc32(case.name.encode()) if seed is None else seed)
    missing = [v for v in target.inputs if v not in case.random["ranges"]]
    if missing:
        raise SourceError("missing input", f"random gives no range for {', '.join(missing)}")
    out = []
    for _ in range(case.random["count"]):
        point = {}
        for name, (lo, hi, shape) in case.random["ranges"].items():
            v = rng.uniform(lo, hi, size=shape)
            point[name] = float(v) if shape == () else v
        out.append(point)
    return out


def run_case(case, mode=None, seed=None) -> CaseResult:
    """Check every point of one case; never raises for the case's own mistakes."""
    start = time.perf_counter()
    result = CaseResult(file=case.file, name=case.name, index=case.index, line=case.line, status=SKIPPED,
                        mode=mode or case.options.get("mode", "full"))
    if case.skip:
        result.message = case.skip
        result.verdict = SKIPPED
        return result
    try:
        with on_device(case.options.get("device")):      # the case's device, else the current one
            _run(case, result, seed)
    except DeviceUnavailable as e:
        result.status, result.verdict = ERROR, "error"
        result.message = SourceError("no gpu", f"device = \"gpu\": {e.message}", None,
                                     GPU_INSTALL_HINT).format(spelling=option)
    except SourceError as e:
        result.status, result.verdict = ERROR, "error"
        result.message = e.format(spelling=option)     # the front end spells the settings
    except RecursionError:
        result.status, result.verdict = ERROR, "error"
        result.message = "error: too deep\n  the case nests too deeply for the interpreter"
    except Exception as e:      # a bug in autodiff: reported on this case, the others still run
        result.status, result.verdict = ERROR, "error"
        result.message = f"internal error: {type(e).__name__}: {e} (a bug in autodiff; please report it)"
    result.seconds = time.perf_counter() - start
    return result


def _run(case, result, seed):
    opts = case.options
    dtype = opts.get("dtype", "float64")
    set_dtype(dtype)
    limits = Limits(steps=opts.get("max_steps", 10_000_000))
    target = _case_target(case)
    points = case_points(case, target)
    target = target.given(points[0]) if points else target     # defaulted parameters given: inputs
    runner = ReplayRunner(target, limits)        # the check's perturbed runs replay its tape
    function = Function(target=target)            # so do its points' gradients
    wrt = case.wrt
    for w in wrt or ():
        if w not in target.inputs:
            raise SourceError("unknown input", f"wrt names {w!r}, which is not an input "
                              f"(the inputs: {', '.join(target.inputs) or 'none'})")
    names = check_wrt(target, wrt)                # integer data: constants of the check, never moved
    spec = case.grad if case.grad is not None else case.functions.get("hand")
    hand = HandGradient(spec, names, limits, variables=list(target.inputs), program=target) \
        if spec is not None else None
    expected = _Expected(case.value, target.inputs, limits) if case.value is not None else None
    tol = tolerance_for(dtype, opts.get("rtol"), opts.get("atol"), opts.get("step"))
    if seed is None:
        seed = opts.get("seed", zlib.crc32(case.name.encode()) & 0x7FFFFFFF)
    result.seed = seed if result.mode == "fast" else None
    result.warnings += datarefs.nonfinite_warnings(case, points)
    result.points = len(points)
    worst, largest = None, (None, None)
    verdicts = set()
    for k, point in enumerate(points):
        inputs = {name: to_host_value(v) for name, v in bind_inputs(target, point).items()}   # checks: on the host
        ad = function.grad_result(inputs, wrt, None, dtype_name=dtype, limits=limits)
        report = check_gradient(target=target, at=inputs, grad=hand, mode=result.mode, seed=seed, dtype=dtype,
                                rtol=tol.rtol, atol=tol.atol, step=tol.step, wrt=wrt, limits=limits,
                                ad_result=ad, runner=runner, trust_rules=opts.get("rules") == "trusted")
        rows = _point_rows(case, target, inputs, report, ad, expected, dtype, limits, tol)
        rows += _function_rows(case, target, inputs, names, seed, dtype, limits, tol)
        where = f"point {k + 1} ({_point_text(inputs)})" if len(points) > 1 or inputs else "the point"
        for row in rows:
            verdicts.add(row.verdict)
            if row.verdict in WARNING:
                result.warnings.append(f"{where}, {row.label}: {row.verdict}: {row.reason}")
            if row.failed:
                result.rows.append(_row_dict(row, where))
            key = (row.failed, _rank(row.rel_err), _rank(row.abs_err))
            if worst is None or key > worst[0]:
                worst = (key, row, where, inputs)
            largest = (_larger(largest[0], row.abs_err), _larger(largest[1], row.rel_err))
    _conclude(result, verdicts, worst, largest)


def _case_target(case):
    """The case's function: its formula `f`, or the program file it names."""
    if case.f is not None:
        return expression_target(case.f, "f")
    resolved = confined_path(case.file, case.program)     # again: a symlink may have moved since
    text = read_text(resolved, "program")
    return load(text, case.fn, case.of, filename=case.program)


def _point_rows(case, target, inputs, report, ad, expected, dtype, limits, tol) -> list:
    """Every row checked at one point: the gradient check's, the expected value's, the Hessian's."""
    rows = list(report.rows)
    if report.projection is not None and report.full is not None:
        rows.append(report.projection)
    if expected is not None:
        for r in compare({"value": expected.at(inputs)}, {"value": ad.value}, {}, tol):
            r.reason = r.reason.replace("hand-derived", "expected").replace("vs AD", "vs computed")
            if r.verdict == KINK:       # a kink does not excuse a wrong value
                r.verdict, r.reason = "fail", r.reason.split(" at a non-differentiable")[0]
            rows.append(r)
    if case.hessian is not None:
        rows += _hessian_rows(case, target, inputs, dtype, limits, tol)
    return rows


def _function_rows(case, target, inputs, names, seed, dtype, limits, tol) -> list:
    """The claims a case makes as functions of the program: its Jacobian, Hessian, tangent and
    adjoint (checks/hand_functions.py), each against AD."""
    from .hand_functions import hessian_rows, jacobian_rows, tangent_rows
    fns, rows = case.functions, []
    if "jacobian" in fns:
        from ..diff.forward import jacobian
        got = jacobian(None, inputs, case.wrt, dtype_name=dtype, limits=limits, target=target)
        rows += jacobian_rows(got, target, fns["jacobian"], tol)
    if "hessian" in fns:
        got = hessian_function()(None, inputs, case.wrt, dtype_name=dtype, limits=limits, target=target)
        rows += hessian_rows(got, target, fns["hessian"], tol)
    if "jvp" in fns or "vjp" in fns:
        rows += tangent_rows(target, inputs, names, fns.get("jvp"), fns.get("vjp"), seed, tol, limits, dtype)
    return rows


def _conclude(result, verdicts, worst, largest) -> None:
    """The case's verdict, status and message from the verdicts of all its rows: the worst errors
    are the largest of all its rows (the absolute one and the relative one each its own largest);
    `where`, `entry` and the message name one row: the worst failure, else the largest relative
    error."""
    result.worst_abs, result.worst_rel = largest
    if worst is not None:
        _, row, where, result.inputs = worst
        result.where, result.entry = f"{where}, {row.label}", row.label
    failed = any(v in FAILING for v in verdicts)
    result.verdict = next((v for v in SEVERITY_ORDER if v in verdicts), "pass")
    if failed:
        result.status = FAILED
        result.message = f"{result.where}: {row.verdict}: {row.reason}"    # a failing row ranks first
    else:
        result.status = PASSED
    if len(result.warnings) > 20:
        more = len(result.warnings) - 20
        result.warnings = result.warnings[:20] + [f"… and {more} more warnings"]


def _hessian_rows(case, target, inputs, dtype, limits, tol):
    """Hand-derived Hessian entries against the engine's Hessian (forward-over-reverse)."""
    hessian = hessian_function()
    got = hessian(None, inputs, dtype_name=dtype, limits=limits, target=target)
    matrix = getattr(got, "hessian", got)
    rows = []
    for a, row in case.hessian.items():
        spec = HandGradient(row, list(target.inputs), limits, what=f"hessian {a}", program=target)
        want = spec.at(inputs)
        for b, v in want.items():
            try:
                ref = matrix[a][b]
            except (KeyError, TypeError, IndexError):
                raise SourceError("unknown input", f"hessian {a}.{b}: not a pair of inputs") from None
            for r in compare({f"∂²/∂{a}∂{b}": v}, {f"∂²/∂{a}∂{b}": ref}, inputs, tol):
                r.reason = r.reason.replace("AD", "the engine's Hessian")
                rows.append(r)
    return rows


class _Expected:
    """The expected value of a case: a number, an array or a formula of the inputs."""

    def __init__(self, spec, input_names, limits):
        self.spec, self.runner = spec, None
        if isinstance(spec, str):
            target = expression_target(spec, "value")
            unknown = [v for v in target.inputs if v not in input_names]
            if unknown:
                raise SourceError("unknown name", f"value = {spec!r} uses {unknown[0]!r}, which is not an input",
                                  None, source=spec, filename="value")
            self.runner = ReplayRunner(target, limits)

    def at(self, inputs):
        from ..core.backend import to_device
        from ..lang.values import as_input
        if self.runner is not None:
            return to_host_value(self.runner({k: to_device(inputs[k]) for k in self.runner.target.inputs}))
        return to_host_value(as_input(np().asarray(self.spec, dtype=np().float64)) if isinstance(self.spec, list)
                             else as_input(self.spec))


def _larger(a, b):
    """The larger of two errors, None where there is none, nan above every number (as _rank)."""
    if a is None or b is None:
        return a if b is None else b
    return b if _rank(b) > _rank(a) else a


def _rank(x):
    """An error as a sort key: None below every number, nan above every one."""
    if x is None:
        return -1.0
    return math.inf if x != x else x


def _point_text(inputs) -> str:
    from ..lang.values import to_python
    parts = []
    for k, v in inputs.items():
        p = to_python(v)
        if isinstance(p, list):
            text = repr(p) if len(repr(p)) <= 40 else f"array of shape {tuple(np().shape(p))}"
        else:
            text = f"{p:.6g}"
        parts.append(f"{k}={text}")
    return ", ".join(parts)


def _row_dict(row, where) -> dict:
    return {"where": where, "entry": row.label, "verdict": row.verdict, "claimed": row.claimed,
            "reference": row.reference, "abs_err": row.abs_err, "rel_err": row.rel_err,
            "error_estimate": row.error_estimate, "tolerance": row.tolerance, "reason": row.reason}


# ---- many cases -------------------------------------------------------------------------------

def override(cases: list, **settings) -> list:
    """The cases with the settings given (dtype, rtol, atol, step, device; None: each keeps its
    own) replacing their own, as `check --dtype ...` does."""
    given = {key: value for key, value in settings.items() if value is not None}
    for case in cases:
        case.options.update(given)
    return cases


def shard(cases: list, k: int, n: int) -> list:
    """The K-th of N parts (1-based), by position: deterministic and balanced."""
    return [c for i, c in enumerate(cases) if i % n == k - 1]


def run_cases(cases: list, jobs: int = 1, mode=None, seed=None, progress=None, isolate: bool = False) -> list:
    """Results in the order of `cases`; `progress(result)` is called as each finishes. With
    jobs > 1, or `isolate` (what `autodiff check` asks), in supervised worker processes: a case
    that kills its worker (a fatal error of the interpreter, a segfault, SIGKILL) is that case's
    error and the others still run; at most as many workers as cases and CPUs. Otherwise one case
    after another in this process. workers.Interrupted if workers.STOP is set."""
    run_one = functools.partial(run_case, mode=mode, seed=seed)
    if jobs <= 1 and (not isolate or uses_gpu(cases)):
        return run_in_process(cases, run_one, progress)
    np()            # the results hold arrays a worker made: the backend here must know numpy's types
    return run_supervised(cases, jobs, run_one, functools.partial(crashed_result, mode=mode), progress)


def uses_gpu(cases: list) -> bool:
    """Whether a case runs on the GPU: CUDA, once started in this process, does not survive a fork,
    so --jobs 1 keeps such a batch in process."""
    from ..core.backend import device
    return device() == "gpu" or any(c.options.get("device") == "gpu" for c in cases)


def crashed_result(case, why: str, mode=None) -> CaseResult:
    """The error of a case whose worker process died while running it."""
    return CaseResult(file=case.file, name=case.name, index=case.index, line=case.line, status=ERROR,
                      verdict="error", mode=mode or case.options.get("mode", "full"),
                      message=f"the worker process running this case {why}; the other cases still ran")


def invalid_file_result(path: str, error: SourceError) -> CaseResult:
    """An unreadable or invalid check file as one errored case: the other files still run."""
    return CaseResult(file=path, name="invalid check file", index=0,
                      line=error.span.line if error.span is not None else 1, status=ERROR, verdict="error",
                      message=error.format(spelling=option))
