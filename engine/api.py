"""The facade the CLI and Python users import: load a target (an expression or a program), bind
inputs, evaluate it, differentiate it (reverse or forward mode, Jacobians, Hessians, n-th
derivatives), check derivatives (gradient, Jacobian and Hessian checks, check files) and read a
finished tape (graph, explanations, plot data). Results come back with NaN provenance filled in;
nothing here prints. Everything past evaluate and grad is imported on first use (see _LAZY).

Every function takes `device="cpu"|"gpu"` (None: the current one, the CPU unless `use_device`
chose another): inputs move to that device once, results come back to the host once, and every
array a function returns is the caller's alone (core/ownership.py)."""
from __future__ import annotations

import functools
from contextlib import contextmanager

from ..parser.errors import SourceError, option
from .core import backend, buffer_pool
from .core.numbers import all_finite
from .core.ownership import owned
from .diff.common import seed_for
from .diff.function import Function
from .diff.reverse import GradResult, RunResult
from .diff.reverse import grad as _reverse_grad
from .lang.limits import Limits
from .lang.target import (Runner, Target, bind_inputs, check_output, constant, load, looks_like_file,
                          run_target, split_top_level)

# The rest of the facade, imported on first use: `autodiff grad "x*x"` must not pay at start-up for
# forward mode, Hessians, checks or views. Public name -> (module under engine/, its name there).
_LAZY = {
    "jvp": ("diff.forward", "jvp"), "jacobian": ("matrices", "jacobian"),
    "JacobianResult": ("diff.forward", "JacobianResult"), "choose_mode": ("diff.forward", "choose_mode"),
    "hessian": ("matrices", "hessian"), "derivatives": ("matrices", "derivatives"),
    "HessianResult": ("diff.higher", "HessianResult"), "DerivativeResult": ("diff.higher", "DerivativeResult"),
    "check_gradient": ("checks.gradient", "check_gradient"), "CheckReport": ("checks.report", "CheckReport"),
    "check_jacobian": ("checks.higher", "check_jacobian"), "check_hessian": ("checks.higher", "check_hessian"),
    "load_check_file": ("checks.files", "load_file"), "parse_check_text": ("checks.files", "parse_text"),
    "run_check_case": ("checks.runner", "run_case"), "run_check_cases": ("checks.runner", "run_cases"),
    "shard_cases": ("checks.runner", "shard"),
    "graph_from_result": ("views.graph", "from_result"), "layout_graph": ("views.graph", "layout"),
    "explain_reverse": ("views.explain", "reverse"), "explain_forward": ("views.explain", "forward"),
    "plot_data": ("views.plotdata", "sample"), "plot_breaks": ("views.plotdata", "breaks"),
    "load_data": ("lang.datafiles", "load_reference"), "load_inputs": ("lang.datainputs", "load_inputs"),
    "check_file": ("entrypoints", "check_file"), "graph": ("entrypoints", "graph"),
    "explain": ("entrypoints", "explain"), "CaseResult": ("checks.runner", "CaseResult"),
    "check_derivatives": ("checks.derivatives", "check_derivatives"),
    "explain_hessian": ("entrypoints", "explain_hessian"), "explain_jacobian": ("entrypoints", "explain_jacobian"),
    "HessianExplanation": ("views.hessian_steps", "HessianExplanation"),
    "explain_derivatives": ("entrypoints", "explain_derivatives"),
    "DerivativeExplanation": ("views.derivative_steps", "DerivativeExplanation"),
}

__all__ = ["load", "evaluate", "grad", "function", "Function", "constant", "Target", "Runner", "Limits", "RunResult",
           "GradResult", "bind_inputs", "run_target", "check_output", "seed_for", "looks_like_file",
           "split_top_level", "SourceError", "use_device", "device_scope", "current_device", "release_buffers",
           *_LAZY]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module
    module, attr = _LAZY[name]
    value = getattr(import_module(f"{__package__}.{module}"), attr)
    if not isinstance(value, type):
        value = _taking_device(value, owning=name not in _CALLERS_DATA)
    globals()[name] = value                # looked up once
    return value


def gpu_unavailable(exc: backend.DeviceUnavailable) -> SourceError:
    """The engine's refusal as the user's error: what is missing, and what to install."""
    return SourceError("no gpu", exc.message, None, backend.GPU_INSTALL_HINT)


def use_device(device: str) -> None:
    """Run what follows on "cpu" or "gpu"; a missing cupy or CUDA device is a SourceError saying
    what to install."""
    if device not in backend.DEVICES:
        raise SourceError("bad input", f"{option('device')} must be cpu or gpu, not {device!r}")
    try:
        backend.select_device(device)
    except backend.DeviceUnavailable as exc:
        raise gpu_unavailable(exc) from None


def current_device() -> str:
    """"cpu" or "gpu": where the engine runs now (the JSON documents say it)."""
    return backend.device()


@contextmanager
def device_scope(device: str | None):
    """Run a block on `device` (None: the current one), then go back to the device before it."""
    if device is None:
        yield
        return
    before = backend.device()
    use_device(device)
    try:
        yield
    finally:
        backend.select_device(before)


# the data readers hand out the caller's own data (a .npy's copy-on-write mapping of its file,
# read as it is touched), not results: copying them would read every page at once
_CALLERS_DATA = ("load_data", "load_inputs")


def _taking_device(fn, owning=True):
    """An entry point of the API: fn with a `device=` keyword (it runs on that device), every
    array it returns the caller's alone (core/ownership.py) where `owning`."""
    @functools.wraps(fn)
    def on_device(*args, device=None, **kwargs):
        with device_scope(device):
            result = fn(*args, **kwargs)
        return owned(result) if owning else result
    return on_device


def _finite_floats(values) -> bool:
    """Plain finite floats need no NaN provenance (nor its import, on the scalar start-up path);
    an array is for provenance to test (views/provenance.not_finite: a fused region's adjoint is
    known finite there without a second pass)."""
    return all(v.__class__ is float for v in values) and all_finite(values)


def function(source_or_path, fn=None, of=None) -> Function:
    """A target compiled once, to evaluate and differentiate at many points (see Function)."""
    return Function(source_or_path, fn, of)


# Functions already compiled in this process, so repeated calls parse nothing: by the Target
# object the caller loaded, or by the expression text (a file is read again: it may change).
_COMPILED: dict = {}
_COMPILED_MAX = 64


def compiled(source, fn=None, of=None, target=None) -> Function:
    """The process's Function for a target (or for the text of an expression)."""
    if target is not None:
        key = ("target", id(target))
    elif isinstance(source, str) and not looks_like_file(source):
        key = ("text", source, fn, of)
    else:
        return Function(source, fn, of)
    entry = _COMPILED.get(key)
    if entry is not None and (target is None or entry[0] is target):
        return entry[1]
    made = Function(source, fn, of, target=target)
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.pop(next(iter(_COMPILED)))             # the oldest goes
    _COMPILED[key] = (target, made)                      # the target kept: its id stays its own
    return made


def release_buffers() -> int:
    """Let go of the buffers the engine keeps between calls for large arrays (the fused regions'
    pool: at most 1 GiB); the bytes it freed. Results handed out stay their holders'."""
    return buffer_pool.release()


@functools.partial(_taking_device, owning=False)      # Function's methods own what they return
def evaluate(source, at=None, fn=None, of=None, dtype_name="float64", limits=None, target=None) -> RunResult:
    """Evaluate the target at a point (no derivatives)."""
    compiled_fn = compiled(source, fn, of, target)
    result = compiled_fn.evaluate_result(at, dtype_name, limits)
    if not _finite_floats([result.value]):
        from .views.provenance import diagnose_run     # only when the value may be non-finite
        diagnose_run(result, compiled_fn.target, dtype_name, limits)
    return result


@functools.partial(_taking_device, owning=False)      # Function's methods own what they return
def grad(source, at=None, wrt=None, seed=None, fn=None, of=None, dtype_name="float64", limits=None,
         target=None, keep_tape=False, mode="reverse") -> GradResult:
    """The gradient of the target at a point. A non-scalar output is summed (the seeds'
    convention) unless `seed` gives v for vᵀJ. `mode="forward"` gives the same by forward mode."""
    if mode == "forward":                                # replayed where it can be (diff/replay_higher.py)
        return compiled(source, fn, of, target).forward_grad_result(at, wrt, seed, dtype_name, limits)
    if keep_tape:                                        # the graph views read this run's own tape
        target = target or load(source, fn, of)
        result = owned(_reverse_grad(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=target,
                                     keep_tape=True))
    else:
        compiled_fn = compiled(source, fn, of, target)
        target = compiled_fn.target
        result = compiled_fn.grad_result(at, wrt, seed, dtype_name, limits)
    if not _finite_floats([result.value, *result.gradient.values()]):
        from .views.provenance import diagnose_grad    # only when a number may be non-finite
        diagnose_grad(result, source, at, wrt, seed, target, dtype_name, limits)
    return result


def emit(source, fn=None, of=None, wrt=None, mode="adjoint", explain=False, target=None, tool_version="",
         at=None) -> str:
    """The text of a Python module (numpy only) computing the target and its adjoint and/or
    tangent as source code (engine/emit): a SourceError names what is not emitted yet.
    `tool_version` goes into the header (the CLI gives its own). `at` (name -> value): where it
    holds an array, the derivatives are written at the shapes the program's values take there."""
    from .emit.module import emit_module
    target = target or load(source, fn, of)
    return emit_module(target, wrt, mode, explain, tool_version, at)


def validate_emitted(path, target, values: dict, wrt=None, seed=0) -> list:
    """The checks of an emitted module (written at `path`) at a point (engine/checks/emitted.py)."""
    from .checks.emitted import validate
    from .emit.module import program_functions
    _, name, _ = program_functions(target)
    params = list(target.inputs)
    from .core.complexes import is_integer_data
    wrt = list(wrt or [p for p in params if not is_integer_data(values.get(p))])    # integer data: constants
    from .lang.names import loaded_names

    def ad(cotangent=None):         # asked only where the module has an adjoint
        if cotangent is None:
            return grad(None, values, wrt, target=target).gradient
        from .diff.complex_derivatives import hermitian_adjoint      # a complex output: J^H v of its Jacobian
        blocks = __getattr__("jacobian")(None, values, wrt, target=target)     # the facade's own, lazily
        return hermitian_adjoint(blocks.jacobian, blocks.value, blocks.inputs, cotangent)
    from .lang.builtins import STOP_GRADIENT
    detached = bool(set(STOP_GRADIENT) & set(loaded_names(target.node)))
    return validate(path, name, params, wrt, values, ad, seed, detached)


def symbolic(target, wrt=None, form="simplified", values=None) -> tuple:
    """({name: formula}, [decisions assumed]): each partial derivative of the target as a formula
    (engine/emit/symbolic.py; SymPy, an extra). A target that branches or loops gets the formula
    of the path it takes at `values`, with the decisions that path assumed."""
    from .emit.symbolic import branches, path_partials, symbolic_partials
    if values is not None and branches(target):
        return path_partials(target, values, wrt, form)
    return symbolic_partials(target, wrt, form), []
