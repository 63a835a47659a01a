"""Reading a source file safely: only a regular file (not /dev/zero, a FIFO, a directory or a
terminal, which would block or never end), only up to a size limit, and, for a program named by
a check file, only inside the check file's folder tree (symlinks resolved first). Every refusal
is a SourceError that names the path and quotes none of its content."""
from __future__ import annotations

import os
import stat

from .errors import SourceError

# A program or check file larger than this is refused before it is read: the parser refuses
# sources over 1,000,000 characters, and a UTF-8 character is at most 4 bytes.
MAX_FILE_BYTES = 4_000_000


def read_text(path: str, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))   # a FIFO must not block the open
    except OSError as e:
        raise SourceError("bad file", f"cannot read the {what} {path}: {e.strerror or e}") from None
    except ValueError:                                 # a NUL in the name
        raise SourceError("bad file", f"cannot read the {what} {path!r}: the name holds a NUL character") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise SourceError("bad file", f"the {what} {path} is {kind}")
        if info.st_size > limit:
            raise SourceError("too large", f"the {what} {path} is {info.st_size:,} bytes, over the limit of "
                              f"{limit:,} bytes")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, limit + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        raw = b"".join(chunks)
    finally:
        os.close(fd)
    if len(raw) > limit:                               # it grew while being read
        raise SourceError("too large", f"the {what} {path} is over the limit of {limit:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError("bad file", f"the {what} {path} is not UTF-8 text (byte {e.start})") from None


def confined_path(base_file: str, path: str, shown: str | None = None) -> str:
    """`path` (relative to the working folder, as a check file's program is joined to the check
    file's folder) fully resolved; refused unless it lies inside the folder tree of `base_file`
    once every symlink is resolved. `shown` is how the file wrote it, for the message."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(base_file)))
    resolved = os.path.realpath(path)
    if os.path.commonpath([folder, resolved]) != folder:
        raise SourceError("bad file", f"the program {shown or path} is outside the check file's folder "
                          f"({resolved} is not under {folder})", None,
                          "a check file may name programs in its own folder or below it")
    return resolved
