"""Which check files `autodiff check` runs: a file named is run as named; a folder, every
`*.grad.toml` below it, as the pytest plugin collects them (the folders pytest skips by default are
skipped: hidden ones, build/, dist/, node_modules/, venv/, virtual environments...), sorted by path so
that every run (and every --shard of it) sees the same cases in the same order."""
from __future__ import annotations

import fnmatch
import os

from ...parser.errors import SourceError

SUFFIX = ".grad.toml"
# pytest's default norecursedirs
SKIPPED_FOLDERS = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")


def _skipped(folder: str, name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in SKIPPED_FOLDERS) \
        or os.path.isfile(os.path.join(folder, name, "pyvenv.cfg"))      # a virtual environment


def files_below(top: str) -> list[str]:
    """Every `*.grad.toml` below the folder `top`, sorted; symlinked folders are not followed."""
    found = []
    for folder, subfolders, names in os.walk(top):
        subfolders[:] = [d for d in subfolders if not _skipped(folder, d)]
        found.extend(os.path.join(folder, n) for n in names if n.endswith(SUFFIX))
    return sorted(found)


def check_files(paths) -> list[str]:
    """The check files the paths name, each once, in the order given (a folder's in path order)."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            below = files_below(path)
            if not below:
                raise SourceError("no check files", f"the folder {path} holds no *{SUFFIX} file", None,
                                  f"name check files NAME{SUFFIX} (as the pytest plugin collects them), "
                                  "or name a check file itself")
            out.extend(below)
        else:
            out.append(path)
    return list(dict.fromkeys(out))
