"""Reading a file safely: only a regular file (not /dev/zero, a FIFO, a device, a directory or a
terminal, which would block or never end), only up to a size limit, and, for a program or a data
file named by a check file, only inside the check file's project: the git work tree that holds it,
else its own folder tree (symlinks resolved first).
Every refusal is a SourceError that names the path and quotes none of its content. Source files
(programs, check files) and input data are opened by the one helper here, `open_regular`."""
from __future__ import annotations

import os
import stat

from .errors import SourceError

# A program or check file larger than this is refused before it is read: the parser refuses
# sources over 1,000,000 characters, and a UTF-8 character is at most 4 bytes.
MAX_FILE_BYTES = 4_000_000

_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file that is not regular is, in words: `is {kind}`."""
    if stat.S_ISDIR(mode):
        return "a directory"
    named = next((name for test, name in _KINDS if test(mode)), "a special file")
    return f"not a regular file ({named})"


def open_regular(path: str, what: str = "file", limit: int | None = MAX_FILE_BYTES) -> int:
    """A read-only descriptor of `path`, refused at once unless it is a regular file of at most
    `limit` bytes (no limit when None). A FIFO does not block the open; nothing is read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))   # a FIFO must not block the open
    except OSError as e:
        raise SourceError("bad file", f"cannot read the {what} {path}: {e.strerror or e}") from None
    except ValueError:                                 # a NUL in the name
        raise SourceError("bad file", f"cannot read the {what} {path!r}: the name holds a NUL character") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError("bad file", f"the {what} {path} is {file_kind(info.st_mode)}", None,
                              f"name a regular file{_PIPE_HINT.get(what, '')}")
        if limit is not None and info.st_size > limit:
            raise too_large(what, path, limit, info.st_size)
    except BaseException:
        os.close(fd)
        raise
    return fd


_PIPE_HINT = {"data file": " (data from a pipe is read with @- and --stdin-format)"}


def too_large(what: str, path: str, limit: int, size: int | None = None) -> SourceError:
    """The error for a file over its size limit (its size when known, else: it grew while read)."""
    said = f"is {size:,} bytes" if size is not None else "grew while it was read, and is"
    return SourceError("too large", f"the {what} {path} {said} over the limit of {limit:,} bytes")


def read_bounded(fd: int, limit: int, what: str, path: str) -> bytes:
    """At most `limit` bytes from an open descriptor: a file that grew past it is refused."""
    chunks, total = [], 0
    while total <= limit:
        chunk = os.read(fd, min(limit + 1 - total, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise too_large(what, path, limit)
    return b"".join(chunks)


def read_text(path: str, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes."""
    fd = open_regular(path, what, limit)
    try:
        raw = read_bounded(fd, limit, what, path)
    finally:
        os.close(fd)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError("bad file", f"the {what} {path} is not UTF-8 text (byte {e.start})") from None


def project_root(base_file: str) -> tuple[str, str]:
    """(the folder a check file's programs and data must lie in, what it is called): the git work
    tree that holds the file, found without running git (the first folder, from the file's own
    upwards once symlinks are resolved, holding a `.git` entry: a folder, or a file as in a
    worktree), else the file's own folder."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(base_file)))
    here = folder
    while True:
        if os.path.isdir(os.path.join(here, ".git")) or os.path.isfile(os.path.join(here, ".git")):
            return here, "git work tree"
        up = os.path.dirname(here)
        if up == here:
            return folder, "folder"
        here = up


def confined_path(base_file: str, path: str, shown: str | None = None, what: str = "program") -> str:
    """`path` (relative to the working folder, as a check file's program is joined to the check
    file's folder) fully resolved; refused unless it lies inside the check file's project (see
    `project_root`) once every symlink is resolved. `shown` is how the file wrote it, for the message."""
    root, called = project_root(base_file)
    resolved = os.path.realpath(path)
    if os.path.commonpath([root, resolved]) != root:
        raise SourceError("bad file", f"the {what} {shown or path} is outside the check file's {called} "
                          f"({resolved} is not under {root})", None,
                          "a check file may name programs and data files in the git work tree that holds it, "
                          "or in its own folder or below when it is in none")
    return resolved
