"""Data files named in check files: `at = { w = "@data/w.npy" }`, `points = "@points.npz"` and
`random = { w = { range = [-1, 1], shape = "@w.npy" } }`, paths relative to the check file.

Whether each file exists, is a regular file and lies in the check file's project (the git work
tree that holds it, else its folder tree; symlinks resolved, as for programs) is checked with the file: a bad path is an invalid check file, with its
line. The data is read when the case runs, by engine/lang/datafiles.py, confined again (a symlink
may have moved since).
"""
from __future__ import annotations

import os

from ...parser.errors import SourceError
from ...parser.files import confined_path, open_regular
from ..lang.datafiles import load_reference, split_reference
from ..lang.datainputs import data_shape, load_inputs


def is_reference(v) -> bool:
    return isinstance(v, str) and v.startswith("@")


def resolve(check_file: str, ref: str) -> str:
    """`@data/w.npy` in `suite/c.toml` -> `@suite/data/w.npy` (a key after `:` is kept)."""
    path = ref[1:].strip()
    if os.path.isabs(path):
        return "@" + path
    return "@" + os.path.join(os.path.dirname(check_file), path)


def existing(check_file: str, ref: str, fail) -> str:
    """`ref` resolved against the check file's folder; `fail(fault, hint)` unless a regular file
    is there, inside the check file's project (parser/files.project_root)."""
    shown = split_reference(ref[1:].strip())[0]
    ref = resolve(check_file, ref)
    path = file_of(ref)
    missing = False
    try:
        confined_path(check_file, path, shown, "data file")
        missing = not os.path.lexists(path)
        if not missing:
            os.close(open_regular(path, "data file", None))
    except SourceError as e:
        fail(e.message, e.hint)
    if missing:
        fail(f"no such file: {path}")
    return ref


def file_of(ref: str) -> str:
    """The file a resolved `@PATH[:KEY]` names."""
    return split_reference(ref[1:])[0]


def shape_from(ref: str) -> tuple:
    """The shape of the data a resolved `@PATH` names (from the header of .npy files)."""
    return data_shape(ref[1:])


def value_of(check_file: str, ref: str, limits=None):
    """The data of one input of a case of `check_file`."""
    return load_reference(ref[1:], limits, confine_to=check_file)


def points_of(check_file: str, ref: str, limits=None) -> list:
    """`points = "@points.npz"` (or .json/.toml): one array per input, whose first axis runs over
    the points; every input's first axis must have the same length."""
    path = file_of(ref)
    columns = load_inputs(confined_path(check_file, path, path, "data file"), limits, confine_to=check_file)
    counts = {name: (v.shape[0] if getattr(v, "ndim", 0) else None) for name, v in columns.items()}
    if not columns or any(c is None for c in counts.values()) or len(set(counts.values())) != 1:
        shown = ", ".join(f"{n}: {'a number' if c is None else f'{c} rows'}" for n, c in counts.items())
        raise SourceError("bad file", f"{path}: points need one array per input with the same number of "
                          f"rows, one row per point ({shown or 'no arrays'})")
    count = next(iter(counts.values()))
    return [{name: _row(v[k]) for name, v in columns.items()} for k in range(count)]


def _row(v):
    return float(v) if getattr(v, "ndim", 0) == 0 else v


def nonfinite_warnings(case, points: list) -> list:
    """A warning for each input read from a file whose data holds nan or inf (the case still runs)."""
    from ..lang.datainputs import nonfinite_warning
    sources = {}
    if case.points_file is not None:
        sources = {name: case.points_file[1:] for name in (points[0] if points else {})}
    for p in case.points or ():
        sources.update({name: v[1:] for name, v in p.items() if is_reference(v)})
    out = []
    for k, point in enumerate(points):
        for name, where in sources.items():
            message = nonfinite_warning(name, point[name], where) if name in point else None
            if message:
                out.append(message if len(points) == 1 else f"point {k + 1}: {message}")
    return out
