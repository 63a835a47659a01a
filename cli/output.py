"""Machine-readable output: JSON with non-finite numbers as strings, and value formatting.

The engine is imported inside the functions: a usage error is rendered (render.common imports this
module) without loading it.
"""
from __future__ import annotations

import json
import math
import re
import sys

from ..engine.core.numbers import finite, nonfinite_word, number_text


# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides: whatever
# could move a terminal's cursor, erase rows, recolour text or reorder it, or break XML
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffe\uffff]")


def printable(text: str) -> str:
    """User text (case names, messages, source lines) with control characters written as escapes
    (`\x1b`, `\x00`, `\u202e`), so it can neither drive a terminal nor break an XML file."""
    if not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                         else f"\\u{ord(m.group()):04x}", text)


STREAM_ELEMENTS = 100_000       # arrays larger than this are written to JSON in chunks


class StreamedArray:
    """A large array in a JSON document: written chunk by chunk by emit_json, never made into
    a Python list (1e8 elements as a list took more memory than the array by ten times)."""

    def __init__(self, array):
        self.array = array


def jsonable(v):
    """Floats, nested lists and dicts, with nan/inf as the strings "nan", "inf", "-inf"."""
    from ..engine.lang.values import to_python
    large = _large_array(v)
    if large is not None:
        return StreamedArray(large)
    v = to_python(v)
    return _clean(v)


def _large_array(v):
    """v as a host float64 array if it has more than STREAM_ELEMENTS elements, else None."""
    from ..engine.core.backend import is_array, np, to_host
    from ..engine.core.tape import strip
    v = strip(v)
    if not is_array(v) or getattr(v, "size", 0) <= STREAM_ELEMENTS or v.dtype.kind == "c":
        return None                     # (a complex array is written whole, its numbers as objects)
    return np().asarray(to_host(v), dtype=np().float64)


def _write_array(write, array) -> None:
    if array.ndim > 1:
        write("[")
        for i in range(array.shape[0]):
            if i:
                write(", ")
            _write_array(write, array[i])
        write("]")
        return
    write("[")
    for start in range(0, array.shape[0], 65_536):
        part = array[start:start + 65_536]
        chunk = part.tolist()
        if finite(part):                   # float repr is JSON's number text: no dumps per number
            text = ", ".join(map(float.__repr__, chunk))
        else:
            text = ", ".join(json.dumps(nonfinite_word(x) or x) for x in chunk)
        write((", " if start else "") + text)
    write("]")


def _clean(v):
    if isinstance(v, float):
        return nonfinite_word(v) or v
    if isinstance(v, complex):          # JSON has no complex numbers: {"real": r, "imag": i}
        return {"real": _clean(v.real), "imag": _clean(v.imag)}
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


def json_document(doc: dict, dtype: str | None = None) -> dict:
    """The document led by the keys every one has (docs/json.md): "version", "dtype" (the
    working dtype) and "device" (which one ran); the same for --json and --out."""
    from ..engine.core.backend import device
    if dtype is None:
        from ..engine.lang.values import dtype as working_dtype
        dtype = working_dtype()
    doc = {"version": version(), "dtype": doc.get("dtype", dtype), **doc}
    doc["device"] = doc.get("device", device())
    return doc


def json_text(doc: dict, dtype: str | None = None) -> str:
    """The JSON document as text (non-finite numbers as strings)."""
    return json.dumps(_clean(json_document(doc, dtype)), allow_nan=False,
                      default=lambda o: _clean(o.array.tolist()) if isinstance(o, StreamedArray) else None)


def emit_json(doc: dict, dtype: str | None = None) -> None:
    """Exactly one JSON document on stdout (never through rich, which wraps piped text); large
    arrays in it are streamed."""
    streamed = []
    import secrets                    # lazy: start-up stays cheap
    token = secrets.token_hex(8)      # no text in the document can spell the placeholder

    def placeholder(o):
        if isinstance(o, StreamedArray):
            streamed.append(o.array)
            return f"streamed {token} {len(streamed) - 1}"
        raise TypeError(f"not JSON: {type(o).__name__}")
    text = json.dumps(_clean(json_document(doc, dtype)), allow_nan=False, default=placeholder)
    write = sys.stdout.write
    for k, part in enumerate(re.split(f'"streamed {token} (\\d+)"', text)):
        if k % 2:
            _write_array(write, streamed[int(part)])
        else:
            write(part)
    write("\n")
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


def fmt_complex(z: complex, digits: int = 17) -> str:
    """A complex number as Python writes it without its parentheses: 2+4j, 1.5-0.5j, -2j."""
    re_text = number_text(float(f"{z.real:.{digits}g}"))
    im_text = number_text(float(f"{z.imag:.{digits}g}"))
    if z.real == 0.0 and not math.copysign(1.0, z.real) < 0:
        return f"{im_text}j"
    sign = "" if im_text.startswith("-") else "+"
    return f"{re_text}{sign}{im_text}j"


def _array_entry(f) -> str:
    # 15 significant digits: hides last-bit noise (0.30000000000000004) but never rounds a
    # small entry to 0 (1e-12 stays 1e-12); non-finite entries read inf/-inf/nan
    return number_text(float(f"{float(f):.15g}"))


def _summary_entry(f) -> str:
    # a summary is for reading: 6 significant digits, as numpy prints (--out keeps every digit)
    return number_text(float(f"{float(f):.6g}"))


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
        return number_text(p)
    if isinstance(p, complex):
        return fmt_complex(p)
    if isinstance(p, list):
        from ..engine.core.backend import np
        a = np().asarray(p)
        a = a if a.dtype.kind == "c" else np().asarray(p, dtype=float)
        text = np().array2string(a, separator=", ", precision=6, threshold=20,
                                 formatter={"float_kind": _array_entry,
                                            "complex_kind": lambda z: fmt_complex(complex(z), 15)},
                                 max_line_width=width)
        return text
    return str(p)


def non_finite(v) -> bool:
    from ..engine.core.tape import strip
    return not finite(strip(v))
