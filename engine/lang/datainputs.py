"""Several inputs from one file (`--inputs`), shapes from file headers, and the warning for input
data that holds nan or inf. The formats themselves are read by datafiles."""
from __future__ import annotations

import json
import os

from ..core.backend import np
from .datafiles import (bad_file, element_limit, format_of, from_nested, load_file, load_reference, npy_header,
                        npz_array, split_reference)
from .limits import Limits


def load_inputs(path: str, limits: Limits | None = None) -> dict:
    """Every input from one file: an .npz (one array per name) or a .json/.toml object of names
    to values (numbers, nested lists, or "@FILE" relative to this file)."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".npz", ".json", ".toml"):
        raise bad_file(path, f"unknown extension {ext or '(none)'}: inputs are read from an .npz archive "
                       "or a .json or .toml table of names to values")
    if os.path.isdir(path) or not os.path.exists(path):
        raise bad_file(path, "is a directory, not a file" if os.path.isdir(path) else "no such file")
    limit = element_limit(limits)
    if ext == ".npz":
        return {name: npz_array(path, path, name, limit) for name in _npz_names(path)}
    table = _table_file(path, ext)
    base = os.path.dirname(path)
    out = {}
    for name, v in table.items():
        if not name.isidentifier():
            raise bad_file(path, f"{name!r} is not an input name")
        where = f"{path} ({name})"
        if isinstance(v, str) and v.startswith("@"):
            out[name] = load_reference(v[1:], limits, base)
        else:
            out[name] = from_nested(v, where, limit)
    return out


def _npz_names(path: str) -> list:
    import zipfile
    try:
        with np().load(path, allow_pickle=False) as archive:
            names = list(archive.files)
    except (ValueError, OSError, AttributeError, zipfile.BadZipFile) as e:
        raise bad_file(path, f"is not a valid .npz archive ({e})") from None
    for name in names:
        if not name.isidentifier():
            raise bad_file(path, f"holds an array named {name!r}, which is not an input name")
    return names


def _table_file(path: str, ext: str) -> dict:
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise bad_file(path, f"cannot read it: {getattr(e, 'strerror', None) or e}") from None
    if ext == ".json":
        try:
            table = json.loads(text)
        except json.JSONDecodeError as e:
            raise bad_file(path, f"is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    else:
        import tomllib
        try:
            table = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise bad_file(path, f"is not valid TOML: {e}") from None
    if not isinstance(table, dict):
        raise bad_file(path, "must hold an object of input names to values, like {\"x\": 3, \"w\": [1, 2]}")
    return table


def data_shape(path: str, limits: Limits | None = None) -> tuple:
    """The shape of the data in a file; from the header alone for .npy and .npz."""
    file, key = split_reference(path)
    if format_of(file) == "npy" and os.path.isfile(file):
        try:
            with open(file, "rb") as fh:
                return tuple(npy_header(fh, file)[0])
        except OSError as e:
            raise bad_file(file, f"cannot read it: {e.strerror or e}") from None
    return tuple(np().shape(load_file(file, limits, key)))


def first_nonfinite(value):
    """(word, index) of the first nan or inf entry of a number or an array, else None."""
    a = np().asarray(value)
    if a.dtype.kind != "f" or np().isfinite(a.sum()):      # a finite sum: every entry is finite (one pass, no mask)
        return None
    finite = np().isfinite(a)
    if finite.all():                                        # the sum overflowed
        return None
    flat = int(np().argmin(finite.ravel()))
    index = tuple(int(i) for i in np().unravel_index(flat, a.shape))
    entry = float(a.ravel()[flat])
    return ("nan" if entry != entry else "inf" if entry > 0 else "-inf"), index


def nonfinite_warning(name: str, value, where: str) -> str | None:
    """The warning for an input whose data holds nan or inf (it still runs)."""
    found = first_nonfinite(value)
    if found is None:
        return None
    word, index = found
    at = f" at index [{', '.join(map(str, index))}]" if index else ""
    return f"input {name} from {where} holds {word}{at}: the results may not be finite"
