"""Input data from files and standard input: .npy, .npz (one array by key), .csv/.tsv/.txt and .json.

The one reader of input data: the CLI (`--at NAME=@PATH`, `@-`, `--inputs PATH`) and check files
(`at = { w = "@w.npy" }`, `points = "@points.npz"`) both come here. Every fault is a SourceError
that names the file and what is wrong with it. The element limit is checked before the data is
read: from the header of .npy and .npz members, and row by row while a text file is parsed.
.npy files are memory-mapped copy-on-write (never written back) and loaded with allow_pickle=False.
"""
from __future__ import annotations

import io
import json
import os

from ...parser.errors import SourceError, option
from ..core.backend import np
from .limits import Limits

FORMATS = ("npy", "npz", "csv", "tsv", "txt", "json")
STDIN = "-"
NONFINITE_WORDS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def bad_file(where: str, fault: str, hint: str | None = None) -> SourceError:
    return SourceError("bad file", f"{where}: {fault}", None, hint)


def split_reference(ref: str) -> tuple:
    """`data/w.npz:w` -> ("data/w.npz", "w"); a key follows only a .npz path or `-`."""
    head, colon, key = ref.rpartition(":")
    if colon and key and (head.lower().endswith(".npz") or head == STDIN):
        return head, key
    return ref, None


def format_of(path: str) -> str:
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise bad_file(path, f"unknown extension {'.' + ext if ext else '(none)'}",
                       "input data is read from .npy, .npz, .csv, .tsv, .txt or .json files")
    return ext


def element_limit(limits: Limits | None) -> int:
    return (limits or Limits()).elements


def check_size(shape, where: str, limit: int) -> None:
    count = 1
    for d in shape:
        count *= int(d)
    if count > limit:
        raise SourceError("too large", f"{where}: the data has shape {tuple(shape)} ({count:,} elements), "
                          f"more than the limit of {limit:,}", None, f"raise the limit with {option('max_elements')}")


def load_reference(ref: str, limits: Limits | None = None, base: str | None = None,
                   stdin_format: str = "json", stdin=None):
    """The value `@REF` names: a file (relative to `base`, a folder, when given), or `-` for
    standard input in `stdin_format`. A number or an array of floats."""
    path, key = split_reference(ref)
    if path == STDIN:
        return read_stream(stdin if stdin is not None else _stdin_bytes(), stdin_format, "standard input",
                           limits, key)
    if base and not os.path.isabs(path):
        path = os.path.join(base, path)
    return load_file(path, limits, key)


def _stdin_bytes():
    import sys
    return sys.stdin.buffer.read()


def load_file(path: str, limits: Limits | None = None, key: str | None = None):
    """One input from a data file, by its extension."""
    if os.path.isdir(path):
        raise bad_file(path, "is a directory, not a data file")
    fmt = format_of(path)
    if key is not None and fmt != "npz":
        raise bad_file(path, f"a key (:{key}) applies to .npz files only")
    if not os.path.exists(path):
        raise bad_file(path, "no such file")
    limit = element_limit(limits)
    try:
        if fmt == "npy":
            return _npy_file(path, limit)
        if fmt == "npz":
            return npz_array(path, path, key, limit)
        if fmt == "json":
            with open(path, "rb") as fh:
                return read_stream(fh.read(), fmt, path, limits)
        with open(path, encoding="utf-8-sig", newline=None) as fh:      # line by line: stops at the limit
            return _table_lines(fh, path, fmt, limit)
    except OSError as e:
        raise bad_file(path, f"cannot read it: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise bad_file(path, "is not UTF-8 text; a binary file needs the .npy or .npz format") from None


def read_stream(data: bytes, fmt: str, where: str, limits: Limits | None = None, key: str | None = None):
    """One input from bytes (standard input, or a text file's contents) in the format named."""
    if fmt not in FORMATS:
        raise bad_file(where, f"unknown format {fmt!r} (the formats: {', '.join(FORMATS)})")
    limit = element_limit(limits)
    if fmt == "npy":
        return _npy_bytes(data, where, limit)
    if fmt == "npz":
        return npz_array(io.BytesIO(data), where, key, limit)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise bad_file(where, f"is not UTF-8 text (byte {e.start}); a binary file needs the .npy or .npz "
                       "format") from None
    if fmt == "json":
        return _json_text(text, where, limit)
    return _table_lines(text.splitlines(), where, fmt, limit)


# ---- numpy's formats ------------------------------------------------------------------------------

def npy_header(fh, where: str):
    """(shape, fortran_order, dtype) from a .npy header, without reading the data."""
    fmt = np().lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            return fmt.read_array_header_1_0(fh)
        if version == (2, 0):
            return fmt.read_array_header_2_0(fh)
    except ValueError as e:
        raise bad_file(where, f"is not a valid .npy file ({e})") from None
    raise bad_file(where, f"uses .npy format version {version[0]}.{version[1]}, which is not supported "
                   "(save it with numpy.save)")


def _check_dtype(dtype, where: str) -> None:
    if dtype.hasobject:
        raise bad_file(where, "holds pickled Python objects (dtype object), which are never loaded "
                       "(allow_pickle=False)", "save a numeric array: numpy.save(path, numpy.asarray(x, dtype=float))")
    if dtype.kind == "c":
        raise bad_file(where, f"holds complex numbers (dtype {dtype}); inputs are real")
    if dtype.kind not in "biuf":
        raise bad_file(where, f"holds non-numeric data (dtype {dtype})")


def _npy_file(path: str, limit: int):
    with open(path, "rb") as fh:
        shape, _, dtype = npy_header(fh, path)
        data_start = fh.tell()
    _check_dtype(dtype, path)
    check_size(shape, path, limit)
    count = int(np().prod(shape, dtype=np().int64)) if shape else 1
    if os.path.getsize(path) < data_start + count * dtype.itemsize:
        raise bad_file(path, f"is truncated: its header promises shape {tuple(shape)} of {dtype}, "
                       "but the file holds fewer bytes")
    if count == 0:
        return np().load(path, allow_pickle=False)
    # copy-on-write mapping: pages are read as the engine touches them, the file is never written
    return _as_number(np().asarray(np().load(path, mmap_mode="c", allow_pickle=False)))


def _npy_bytes(data: bytes, where: str, limit: int):
    fh = io.BytesIO(data)
    shape, fortran, dtype = npy_header(fh, where)
    _check_dtype(dtype, where)
    check_size(shape, where, limit)
    count = int(np().prod(shape, dtype=np().int64)) if shape else 1
    body = data[fh.tell():fh.tell() + count * dtype.itemsize]
    if len(body) < count * dtype.itemsize:
        raise bad_file(where, f"is truncated: its header promises shape {tuple(shape)} of {dtype}")
    flat = np().frombuffer(body, dtype=dtype, count=count)
    return _as_number(flat.reshape(shape, order="F" if fortran else "C"))


def npz_array(source, where: str, key: str | None, limit: int):
    """One array of an .npz archive: the one named by key, or the only one."""
    import zipfile
    try:
        archive = np().load(source, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        raise bad_file(where, f"is not a valid .npz archive ({e})") from None
    if not isinstance(archive, np().lib.npyio.NpzFile):
        raise bad_file(where, "is a .npy file, not an .npz archive: name it .npy")
    with archive:
        keys = list(archive.files)
        if key is None:
            if len(keys) != 1:
                spelled = STDIN if where == "standard input" else where
                raise bad_file(where, f"holds {len(keys)} arrays ({', '.join(keys)}): say which, as "
                               f"@{spelled}:KEY" if keys else "holds no arrays")
            key = keys[0]
        if key not in keys:
            raise bad_file(where, f"has no array {key!r} (its keys: {', '.join(keys) or 'none'})")
        return _npz_member(archive, key, f"{where}:{key}", limit)


def _npz_member(archive, key: str, where: str, limit: int):
    member = key if key in archive.zip.namelist() else key + ".npy"
    with archive.zip.open(member) as fh:
        shape, _, dtype = npy_header(fh, where)
    _check_dtype(dtype, where)
    check_size(shape, where, limit)
    try:
        return _as_number(archive[key])
    except ValueError as e:
        raise bad_file(where, f"cannot be read ({e})") from None


def _as_number(a):
    """A 0-d array as a Python float; any other array as it is (the binding converts the dtype)."""
    return float(a) if a.ndim == 0 else a


# ---- text formats ---------------------------------------------------------------------------------

def _cell(text: str):
    """A float, or None for a cell that is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def _split_row(line: str, fmt: str) -> list:
    if fmt == "csv":
        return [c.strip() for c in line.split(",")]
    if fmt == "tsv":
        return [c.strip() for c in line.split("\t")]
    return line.replace(",", " ").split()          # .txt: whitespace (numpy.savetxt), or commas


def _table_lines(lines, where: str, fmt: str, limit: int):
    """Numbers in rows and columns; an optional first row of column names; `#` comments.
    One row or one column is a vector (as numpy.loadtxt reads it); several of each, a matrix."""
    flat, columns, rows = [], None, 0
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = _split_row(line, fmt)
        values = [_cell(c) for c in cells]
        if columns is None and rows == 0 and all(v is None for v in values):
            columns = len(cells)                     # a header of column names
            continue
        for col, (c, v) in enumerate(zip(cells, values), 1):
            if v is None:
                raise bad_file(where, f"line {number}, column {col}: {c!r} is not a number"
                               if c else f"line {number}, column {col} is empty")
        if columns is None:
            columns = len(cells)
        elif len(cells) != columns:
            fault = f"column {columns} is missing" if len(cells) < columns else f"column {columns + 1} is extra"
            raise bad_file(where, f"line {number} has {len(cells)} column{'s' * (len(cells) != 1)}, "
                           f"the rows above have {columns}: {fault} (a ragged table)")
        rows += 1
        if rows * columns > limit:
            check_size((rows, columns), where, limit)
        flat.extend(values)
    if not rows:
        raise bad_file(where, "holds no numbers")
    a = np().array(flat, dtype=np().float64)
    if rows == 1 and columns == 1:
        return float(a[0])
    return a if rows == 1 or columns == 1 else a.reshape(rows, columns)


def _json_text(text: str, where: str, limit: int):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise bad_file(where, f"is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    return from_nested(doc, where, limit)


def from_nested(doc, where: str, limit: int | None = None):
    """A number or rectangular nested lists of numbers (nan/inf also as the strings "nan", "inf",
    "-inf", as --json writes them) as a float or an array."""
    shape = _nested_shape(doc, where, "")
    check_size(shape, where, limit if limit is not None else element_limit(None))
    if not shape:
        return _leaf(doc, where, "")
    return np().array(_leaves(doc, where), dtype=np().float64).reshape(shape)


def _leaf(v, where: str, path: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)) or \
            isinstance(v, str) and v not in NONFINITE_WORDS:
        shown = "true/false" if isinstance(v, bool) else json.dumps(v)[:40]
        raise bad_file(where, f"{'entry ' + path if path else 'the value'} is {shown}, not a number")
    return NONFINITE_WORDS[v] if isinstance(v, str) else float(v)


def _nested_shape(v, where: str, path: str) -> tuple:
    if not isinstance(v, list):
        return ()
    if not v:
        raise bad_file(where, f"{'entry ' + path if path else 'the value'} is an empty list")
    first = _nested_shape(v[0], where, f"{path}[0]")
    for k in range(1, len(v)):
        other = _nested_shape(v[k], where, f"{path}[{k}]")
        if other != first:
            raise bad_file(where, f"ragged lists: {path}[{k}] has shape {other}, {path}[0] has shape {first}")
    return (len(v),) + first


def _leaves(v, where: str) -> list:
    out, stack = [], [(v, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, list):
            stack.extend((x, f"{path}[{k}]") for k, x in reversed(list(enumerate(item))))
        else:
            out.append(_leaf(item, where, path))
    return out
