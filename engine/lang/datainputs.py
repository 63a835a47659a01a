"""Several inputs from one file (`--inputs`), shapes from file headers, and the warning for input
data that holds nan or inf. The formats themselves are read by datafiles."""
from __future__ import annotations

import os

from ...parser.files import open_regular, read_text
from ..core.backend import np
from ..core.numbers import finite
from .datafiles import format_of, load_file, load_reference, npy_header, npz_member, open_npz, split_reference
from .datastream import bad_file, byte_budget, element_limit
from .datatext import from_nested, parse_json
from .limits import Limits


def load_inputs(path: str, limits: Limits | None = None, confine_to: str | None = None,
                opened: list | None = None) -> dict:
    """Every input from one file: an .npz (one array per name) or a .json/.toml object of names
    to values (numbers, nested lists, or "@FILE" relative to this file). With `confine_to` (a
    check file), every "@FILE" must lie in its folder tree too; `opened`, a list, gains the path
    of each "@FILE" read."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".npz", ".json", ".toml"):
        raise bad_file(path, f"unknown extension {ext or '(none)'}: inputs are read from an .npz archive "
                       "or a .json or .toml table of names to values")
    limit = element_limit(limits)
    if ext == ".npz":
        return _npz_inputs(path, limit)
    table = _table_file(path, ext, limit)
    base = os.path.dirname(path)
    out = {}
    for k, (name, v) in enumerate(table.items(), 1):
        if not name.isidentifier():
            raise bad_file(path, f"the name of entry {k} is not an input name",
                           "an input name is a letter or _, then letters, digits and _")
        where = f"{path} ({name})"
        if isinstance(v, str) and v.startswith("@"):
            out[name] = load_reference(v[1:], limits, base, confine_to=confine_to)
            if opened is not None:
                opened.append(os.path.join(base, split_reference(v[1:])[0]))
        else:
            out[name] = from_nested(v, where, limit)
    return out


def _npz_inputs(path: str, limit: int) -> dict:
    fd = open_regular(path, "inputs file", None)
    with os.fdopen(fd, "rb", buffering=0) as raw, open_npz(raw, path) as archive:
        names = list(archive.files)
        for name in names:
            if not name.isidentifier():
                raise bad_file(path, f"holds an array named {name!r}, which is not an input name")
        return {name: npz_member(archive, name, f"{path}:{name}", limit) for name in names}


def _table_file(path: str, ext: str, limit: int) -> dict:
    """The table of a .json or .toml inputs file, of at most the bytes its element limit needs."""
    text = read_text(path, "inputs file", byte_budget(limit, binary=False)).removeprefix("\ufeff")
    if ext == ".json":
        table = parse_json(text, path)
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
    if format_of(file) == "npy":
        fd = open_regular(file, "data file", None)
        with os.fdopen(fd, "rb", buffering=0) as raw:
            return tuple(npy_header(raw, file)[0])
    return tuple(np().shape(load_file(file, limits, key)))


def first_nonfinite(value):
    """(word, index) of the first nan or inf entry of a number or an array, else None."""
    a = np().asarray(value)
    if a.dtype.kind != "f" or finite(a):
        return None
    flat = int(np().argmin(np().isfinite(a).ravel()))
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
