"""What reverse mode, forward mode, Jacobians, Hessians and n-th derivatives share: loading and
binding a target, choosing the inputs to differentiate, basis tangents, seeds, a located sweep,
and turning derivatives into host arrays."""
from __future__ import annotations

from ...parser.errors import SourceError, option
from ..core.backend import np, to_host, to_host_value, xp
from ..core.complexes import is_complex
from ..core.notes import NOTES, traced_only
from ..core.lazy import force_all
from ..core.rules.complexes import complex_output_error
from ..core.tape import Dual, backward, strip
from ..lang.interp import Interpreter
from ..lang.limits import Limits
from ..lang.target import bind, check_output, load, run_target
from ..lang.values import as_input, dtype, set_dtype, shape_of


def prepare(source, at, fn, of, dtype_name, target, complex_inputs=False):
    """Load the target and bind its inputs (the first steps of every command). Complex inputs
    are refused unless the caller handles them (`complex_inputs`: a value, a reverse gradient)."""
    set_dtype(dtype_name)
    target, inputs = bind(target or load(source, fn, of), dict(at or {}))
    if not complex_inputs:
        for name, v in inputs.items():
            if is_complex(v):
                raise not_for_complex(f"input {name} is complex")
    return target, inputs


def not_for_complex(what: str) -> SourceError:
    """The refusal of a view or derivative that handles real values only so far (derivative
    --explain, a forward gradient contracted with a cotangent): never a real part silently kept."""
    return SourceError("not implemented", f"{what}: this handles real values only so far; `autodiff grad`, "
                       "`derivative`, `jacobian` and `hessian` take complex inputs (without --explain)")


def real_values(a):
    """A derivative of real values that met complex ones on the way (x * 1j): its real part, the
    part a real input's derivative has (core/complexes.py); a real array as it is."""
    return a.real if getattr(getattr(a, "dtype", None), "kind", None) == "c" else a


def refuse_complex_output(value) -> None:
    """A gradient or a Hessian needs a real output (a loss)."""
    if is_complex(value):
        raise SourceError("bad output", complex_output_error("the output"), None,
                          "for a complex output, `autodiff jacobian` gives the real 2x2 blocks (or, with "
                          f"{option('holomorphic')}, the complex Jacobian)")


def check_wrt(target, wrt) -> list:
    """The inputs to differentiate (all but the integer ones by default), each checked to be an
    input that is not integer data."""
    integers = target.integers
    if not wrt and not integers:        # every input (none integer data): each passes the tests below
        return list(target.inputs)
    wrt = list(wrt) if wrt else [n for n in target.inputs if n not in integers]
    if not wrt and target.inputs:
        raise SourceError("bad input", f"every input is integer data ({', '.join(target.integers)}): integer "
                          "data, as class labels or indices, is a constant of the run and has no derivative", None,
                          "give an input to differentiate in as floats (numpy.save(path, x.astype(float)))")
    for w in wrt:
        if w in target.integers:
            raise integer_wrt(w)
        if w in target.defaulted and w not in target.inputs:
            raise SourceError("unknown input", f"{option('wrt')} {w}: a parameter with a default is an input only "
                              "when given", None, f"give it with {option('at')} {w}=...")
        if w not in target.inputs:
            raise SourceError("unknown input", f"{option('wrt')} {w}: not an input (the inputs: "
                              f"{', '.join(target.inputs) or 'none'})")
    return wrt


def integer_wrt(name: str) -> SourceError:
    """The error of differentiating in an input given integer data."""
    return SourceError("bad input", f"{option('wrt')} {name}: {name} is an integer input (integer data, as class "
                       "labels or indices, is a constant of the run): it has no derivative", None,
                       f"leave {name} out of {option('wrt')}, or give it as floats to differentiate in it")


def check_result_elements(what: str, count: int, limits) -> None:
    """A Jacobian or Hessian of `count` elements, refused before its passes run if over the
    element limit (out × in for a Jacobian, in² for a Hessian)."""
    limit = (limits or Limits()).elements
    if count > limit:
        raise SourceError("too large", f"the {what} would have {count:,} elements, more than the limit of "
                          f"{limit:,}", None, f"raise the limit with {option('max_elements')}")


def unit(value, k: int):
    """The k-th basis vector in the space of `value` (1.0 for a scalar), in the working dtype."""
    shp = shape_of(value)
    if not shp:
        return as_input(1.0)
    u = xp().zeros(shp, dtype=dtype())
    u.reshape(-1)[k] = 1.0
    return u


def host(v, shp):
    """A derivative as a host numpy array of shape `shp` (None, a symbolic zero, becomes zeros)."""
    a = np().zeros(shp, dtype=dtype())
    if v is not None:
        a[...] = real_values(to_host(strip(v)))
        a += 0.0                       # -0.0 (a zero times a negative number) prints as 0
    return a


def on_host(v):
    """A result (a value, or a dict or tuple of them) on the host, as the CPU path gives it: what
    ran on the GPU comes back once, at the end; identity on the CPU."""
    if v.__class__ is dict:
        return {k: on_host(x) for k, x in v.items()}
    if v.__class__ is tuple:
        return tuple(on_host(x) for x in v)
    return to_host_value(v)


RESULT_FIELDS = ("value", "gradient", "inputs", "jacobian", "hessian", "derivatives")


def hosted(result):
    """A replayed or recording run's result (a result dataclass, a dict of arrays) as the
    interpreted drivers give it: on the host. Identity on the CPU, at the cost of one check."""
    if xp() is np():
        return result
    if not hasattr(result, "__dataclass_fields__"):
        return on_host(result)
    from dataclasses import replace         # only on a GPU run
    changes = {}
    for name in RESULT_FIELDS:
        if hasattr(result, name):
            v = getattr(result, name)
            changes[name] = [on_host(x) for x in v] if v.__class__ is list else on_host(v)
    return replace(result, **changes)


def finish(a):
    """A 0-d result becomes a plain number."""
    return float(a) if np().ndim(a) == 0 and dtype() == "float64" else (a[()] if np().ndim(a) == 0 else a)


def run(target, values, limits):
    """Run the target on (possibly boxed) values; returns (output, interpreter)."""
    interp = Interpreter(limits)
    out = run_target(target, values, interp)
    check_output(out, target)
    return out, interp


def watched_run(target, inputs, wrt, limits, tape):
    """Run the target with the inputs in `wrt` watched on `tape`: (output, boxed inputs, interpreter)."""
    boxed = dict(inputs)
    for name in wrt:
        boxed[name] = tape.watch(inputs[name])
    out, interp = run(target, boxed, limits)
    force_all(tape, out)            # values nothing read are computed too, as numpy's run does
    return out, boxed, interp


def first_or_plain_run(first, target, inputs, limits):
    """(value, interpreter) of the first derivative pass, or of a plain run when no input element
    needed a pass (nothing to differentiate: just evaluate)."""
    if first is not None:
        return first
    out, interp = run(target, inputs, limits)
    return strip(out), interp


def sweep(tape, out, seed, target):
    """A reverse sweep, with the engine's refusals turned into located errors."""
    return located(backward, (tape, out, seed), target)


def located(run, args: tuple, target):
    """run(*args) (a reverse sweep), with the engine's refusals turned into located errors."""
    try:
        return run(*args)
    except NotImplementedError as e:
        raise SourceError("not implemented", str(e), NOTES.span, source=target.source,
                          filename=target.filename) from None
    except SourceError as e:
        raise e.with_source(target.source, target.filename)


def unique_kinks(kinks) -> list:
    """The kinks a derivative made of several passes reports: those met on traced values
    (core/notes.py's traced_only, as a gradient's), once per place: repeated passes note them again."""
    seen, out = set(), []
    for op, span, detail in traced_only(kinks):
        key = (op, span.line if span else None, span.column if span else None, detail)
        if key not in seen:
            seen.add(key)
            out.append((op, span, detail))
    return out


def detached_places(spans) -> list:
    """The places (spans) where the run cut a traced value with stop_gradient, once each."""
    seen, out = set(), []
    for span in spans:
        key = (span.line, span.column) if span else None
        if key not in seen:
            seen.add(key)
            out.append(span)
    return out


def tangent_of(out, level, shp):
    """The output's tangent at `level`, broadcast to the output's shape (None: no dependence)."""
    if out.__class__ is not Dual or out.level != level:
        return None
    t = strip(out.tangent)
    if shape_of(t) != tuple(shp):
        t = xp().broadcast_to(t, shp)
    return t


def seed_for(seed, value):
    """The seed V as an array of the output's shape (broadcast if it fits): the v of vᵀJ."""
    s = as_input(seed)
    out_shape = shape_of(value)
    if shape_of(s) != out_shape:
        try:
            s = as_input(xp().broadcast_to(s, out_shape))
        except ValueError:
            raise SourceError("shape mismatch", f"{option('seed')} has shape {shape_of(s)} but the output has "
                              f"shape {out_shape}") from None
    return s


def ones_like_output(value):
    """The seed of a plain gradient: ones in the output's shape (a sum of an array output)."""
    v = strip(value)
    if dtype() == "float64" and isinstance(v, (float, int, bool)):
        return 1.0
    return xp().ones_like(xp().asarray(v, dtype=dtype()))[()] if shape_of(v) == () else \
        xp().ones_like(v, dtype=dtype())
