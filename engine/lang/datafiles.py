"""Input data from files and standard input: .npy, .npz (one array by key), .csv/.tsv/.txt and .json.

The one reader of input data: the CLI (`--at NAME=@PATH`, `@-`, `--inputs PATH`) and check files
(`at = { w = "@w.npy" }`, `points = "@points.npz"`) both come here. Every fault is a SourceError
that names the file and what is wrong with it. A data file gets the source files' rules
(parser/files.open_regular: a regular file only, sized before it is read); a check file's data
file must also lie in the check file's project (its git work tree, else its folder tree). The
element limit is checked before the data is read: from the header of .npy and .npz members, and
as a text table or JSON is read (datatext); standard input stops at the bytes the limit can need (datastream).
.npy files are memory-mapped copy-on-write (never written back) and loaded with allow_pickle=False.
"""
from __future__ import annotations

import io
import os

from ...parser.files import confined_path, open_regular
from ..core.backend import np
from .datastream import CappedStream, bad_file, byte_budget, check_size, element_limit, too_many_bytes
from .datatext import read_json, read_table
from .limits import Limits

FORMATS = ("npy", "npz", "csv", "tsv", "txt", "json")
STDIN = "-"


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


def load_reference(ref: str, limits: Limits | None = None, base: str | None = None,
                   stdin_format: str = "json", stdin=None, confine_to: str | None = None):
    """The value `@REF` names: a file (relative to `base`, a folder, when given), or `-` for
    standard input (`stdin`, a binary stream, or the process's) in `stdin_format`. A number or
    an array of floats. With `confine_to` (a check file), the file must lie in its project
    (parser/files.project_root)."""
    path, key = split_reference(ref)
    if path == STDIN:
        if confine_to is not None:
            raise bad_file(confine_to, "a check file cannot read standard input (@-)", "name a data file")
        return read_stream(stdin if stdin is not None else _stdin(), stdin_format, "standard input",
                           limits, key)
    if base and not os.path.isabs(path):
        path = os.path.join(base, path)
    if confine_to is not None:
        path = confined_path(confine_to, path, path, "data file")
    return load_file(path, limits, key)


def _stdin():
    import sys
    return sys.stdin.buffer


def load_file(path: str, limits: Limits | None = None, key: str | None = None):
    """One input from a data file, by its extension: a regular file only, opened once, sized
    before it is read."""
    fd = open_regular(path, "data file", None)
    with os.fdopen(fd, "rb", buffering=0) as raw:
        fmt = format_of(path)
        if key is not None and fmt != "npz":
            raise bad_file(path, f"a key (:{key}) applies to .npz files only")
        limit = element_limit(limits)
        size = os.fstat(raw.fileno()).st_size
        try:
            if fmt == "npy":
                return _npy_file(raw, path, limit, size)
            if fmt == "npz":
                return npz_array(raw, path, key, limit)
            budget = byte_budget(limit, binary=False)
            if size > budget:
                raise too_many_bytes(path, budget, limit, size)
            return read_stream(raw, fmt, path, limits)
        except OSError as e:
            raise bad_file(path, f"cannot read it: {e.strerror or e}") from None


def read_stream(stream, fmt: str, where: str, limits: Limits | None = None, key: str | None = None):
    """One input from a binary stream (standard input, or an open data file) in the format named,
    read no further than the element limit needs. `stream` may also be bytes."""
    if fmt not in FORMATS:
        raise bad_file(where, f"unknown format {fmt!r} (the formats: {', '.join(FORMATS)})")
    if isinstance(stream, (bytes, bytearray)):
        stream = io.BytesIO(stream)
    limit = element_limit(limits)
    capped = CappedStream(stream, byte_budget(limit, binary=fmt in ("npy", "npz")), where, limit)
    if fmt == "npy":
        return _npy_stream(capped, where, limit)
    if fmt == "npz":
        return npz_array(io.BytesIO(capped.read_all()), where, key, limit)
    if fmt == "json":
        return read_json(capped, where, limit)
    return read_table(capped, where, fmt, limit)


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
    if dtype.kind not in "biufc":                # complex: as the run's paired dtype (core/complexes.py)
        raise bad_file(where, f"holds non-numeric data (dtype {dtype})")


def _npy_file(raw, path: str, limit: int, size: int):
    """An .npy file from its open descriptor: the header checked, then the data mapped."""
    shape, fortran, dtype = npy_header(raw, path)
    data_start = raw.tell()
    _check_dtype(dtype, path)
    check_size(shape, path, limit)
    count = int(np().prod(shape, dtype=np().int64)) if shape else 1
    if size < data_start + count * dtype.itemsize:
        raise bad_file(path, f"is truncated: its header promises shape {tuple(shape)} of {dtype}, "
                       "but the file holds fewer bytes")
    if count == 0:
        return np().zeros(shape, dtype=dtype)
    # copy-on-write mapping of the descriptor already checked: pages are read as the engine
    # touches them, the file is never written
    mapped = np().memmap(raw, dtype=dtype, mode="c", shape=tuple(shape), order="F" if fortran else "C",
                         offset=data_start)
    return _as_number(np().asarray(mapped))


def _npy_stream(stream, where: str, limit: int):
    shape, fortran, dtype = npy_header(stream, where)
    _check_dtype(dtype, where)
    check_size(shape, where, limit)
    count = int(np().prod(shape, dtype=np().int64)) if shape else 1
    body = stream.read_exactly(count * dtype.itemsize)
    if len(body) < count * dtype.itemsize:
        raise bad_file(where, f"is truncated: its header promises shape {tuple(shape)} of {dtype}")
    flat = np().frombuffer(body, dtype=dtype, count=count)
    return _as_number(flat.reshape(shape, order="F" if fortran else "C"))


def open_npz(source, where: str):
    """The archive in a seekable binary stream, its directory read and no array yet."""
    import zipfile
    head = source.read(6)
    source.seek(0)
    if head.startswith(b"\x93NUMPY"):
        raise bad_file(where, "is a .npy file, not an .npz archive: name it .npy")
    try:
        archive = np().load(source, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise bad_file(where, f"is not a valid .npz archive ({e})") from None
    if not isinstance(archive, np().lib.npyio.NpzFile):
        raise bad_file(where, "is not a valid .npz archive")
    return archive


def npz_array(source, where: str, key: str | None, limit: int):
    """One array of an .npz archive: the one named by key, or the only one."""
    with open_npz(source, where) as archive:
        keys = list(archive.files)
        if key is None:
            if len(keys) != 1:
                spelled = STDIN if where == "standard input" else where
                raise bad_file(where, f"holds {len(keys)} arrays ({', '.join(keys)}): say which, as "
                               f"@{spelled}:KEY" if keys else "holds no arrays")
            key = keys[0]
        if key not in keys:
            raise bad_file(where, f"has no array {key!r} (its keys: {', '.join(keys) or 'none'})")
        return npz_member(archive, key, f"{where}:{key}", limit)


def npz_member(archive, key: str, where: str, limit: int):
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
