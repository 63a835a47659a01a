"""Machine-readable output: JSON with non-finite numbers as strings, and value formatting.

The engine is imported inside the functions: a usage error is rendered (render.common imports this
module) without loading it.
"""
from __future__ import annotations

import json
import math
import sys

from ..engine.core.numbers import nonfinite_word


def jsonable(v):
    """Floats, nested lists and dicts, with nan/inf as the strings "nan", "inf", "-inf"."""
    from ..engine.lang.values import to_python
    v = to_python(v)
    return _clean(v)


def _clean(v):
    if isinstance(v, float):
        return nonfinite_word(v) or v
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def version() -> str:
    from importlib.metadata import PackageNotFoundError, version as installed_version
    try:
        return installed_version("autodiff")
    except PackageNotFoundError:          # run from a checkout that is not installed
        return "unknown"


def json_text(doc: dict, dtype: str | None = None) -> str:
    """The JSON document as text (non-finite numbers as strings), led by the keys every document
    has (docs/json.md): "version", "dtype" (the working dtype) and "device" (which one ran); the
    same for --json and --out."""
    from ..engine.core.backend import device
    if dtype is None:
        from ..engine.lang.values import dtype as working_dtype
        dtype = working_dtype()
    doc = {"version": version(), "dtype": doc.get("dtype", dtype), **doc}
    doc["device"] = doc.get("device", device())
    return json.dumps(_clean(doc), allow_nan=False)


def emit_json(doc: dict, dtype: str | None = None) -> None:
    """Exactly one JSON document on stdout (never through rich, which wraps piped text)."""
    sys.stdout.write(json_text(doc, dtype) + "\n")
    sys.stdout.flush()


def error_json(err, dtype: str = "float64") -> None:
    """A SourceError as the one JSON document of a --json run: {"error": {kind, message, line, ...}}."""
    from .options import flag_spelling
    message, hint = err.spelled(flag_spelling)
    span = err.span
    emit_json({"error": {"kind": err.kind, "message": message, "file": err.filename,
                         "line": span.line if span else None, "column": span.column if span else None,
                         "hint": hint}}, dtype)


def usage_error_json(err, dtype: str = "float64") -> None:
    """A click usage error (an unknown option, a bad value) as the JSON error document."""
    emit_json({"error": {"kind": "usage", "message": err.format_message(), "file": None, "line": None,
                         "column": None, "hint": None}}, dtype)


def fmt_number(x: float) -> str:
    if nonfinite_word(x):
        return nonfinite_word(x)
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def _array_entry(f) -> str:
    # 15 significant digits: hides last-bit noise (0.30000000000000004) but never rounds a
    # small entry to 0 (1e-12 stays 1e-12); non-finite entries read inf/-inf/nan
    return fmt_number(float(f"{float(f):.15g}"))


def _summary_entry(f) -> str:
    # a summary is for reading: 6 significant digits, as numpy prints (--out keeps every digit)
    return fmt_number(float(f"{float(f):.6g}"))


def fmt_value(v, width: int = 60) -> str:
    """A number, or an array shown by its values (short ones) or its shape and a preview."""
    from ..engine.lang.values import to_python
    from .render.arrays import is_big
    if is_big(v):                   # summarized from the array itself: no list of a million floats
        from ..engine.core.backend import to_host
        from .render.arrays import summary
        return summary(to_host(v), _summary_entry, width)
    p = to_python(v)
    if isinstance(p, bool):
        return str(p)
    if isinstance(p, (int, float)):
        return fmt_number(p)
    if isinstance(p, list):
        from ..engine.core.backend import np
        a = np().asarray(p, dtype=float)
        text = np().array2string(a, separator=", ", precision=6, threshold=20,
                                 formatter={"float_kind": _array_entry},
                                 max_line_width=width)
        return text
    return str(p)


def non_finite(v) -> bool:
    from ..engine.core.backend import is_array, np
    from ..engine.core.tape import strip
    v = strip(v)
    if isinstance(v, (float, int)):
        return not math.isfinite(v)
    if is_array(v):
        a = np().asarray(v, dtype=float)
        # a finite sum means every entry is finite: one pass without a mask (big arrays, issue 10)
        return not np().isfinite(a.sum()) and not bool(np().all(np().isfinite(a)))
    return False
