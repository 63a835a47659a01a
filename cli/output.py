"""Machine-readable output: JSON with non-finite numbers as strings, and value formatting.

The engine is imported inside the functions: a usage error is rendered (render.common imports this
module) without loading it.
"""
from __future__ import annotations

import json
import math
import re
import sys

from ..engine.core.numbers import nonfinite_word


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


def emit_json(doc: dict) -> None:
    """Exactly one JSON document on stdout (never through rich, which wraps piped text)."""
    sys.stdout.write(json.dumps(_clean(doc), allow_nan=False) + "\n")
    sys.stdout.flush()


def fmt_number(x: float) -> str:
    if nonfinite_word(x):
        return nonfinite_word(x)
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def _array_entry(f) -> str:
    # 15 significant digits: hides last-bit noise (0.30000000000000004) but never rounds a
    # small entry to 0 (1e-12 stays 1e-12); non-finite entries read inf/-inf/nan
    return fmt_number(float(f"{float(f):.15g}"))


def fmt_value(v, width: int = 60) -> str:
    """A number, or an array shown by its values (short ones) or its shape and a preview."""
    from ..engine.lang.values import to_python
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
        return not bool(np().all(np().isfinite(np().asarray(v, dtype=float))))
    return False
