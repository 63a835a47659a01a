"""The one writer of the files a command makes: `--out`, `--junit`, `plot -o`.

An OutputFile is checked before any work: its folder must exist and take a new file (a probe
file is made beside PATH and removed at once, so nothing is left behind while the work runs),
PATH must not be a directory or any other file that is not a regular file (a device such as
/dev/null, a named pipe, a socket: writing a temporary file and renaming it over one would
replace it, for the whole machine when run as root), and it must not be one of the files the
command reads (a check file, a program, a data file). It is written atomically at the end: a
temporary file beside PATH, flushed to disk, renamed over PATH, so a reader never sees half a
file and a full disk leaves the old file as it was. A symlink is followed: the file it names is
replaced, the link kept. A stale temporary of a killed run has a name of its own: it never
stands in the way of the next run.
"""
from __future__ import annotations

import os
import stat
import tempfile

from ..parser.errors import SourceError
from ..parser.files import file_kind

# temporary files being written now: an interrupt that ends the process at once (a second
# Ctrl-C, cli/main.py) removes them first
WRITING: set = set()


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (symlinks resolved; hard links by their inode)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


class OutputFile:
    """Where a command writes PATH (`flag` names the option in messages); `inputs` maps each
    file the command reads to how it was named (`"--at w=@in.npz"`)."""

    def __init__(self, path: str, flag: str, inputs: dict | None = None):
        self.path, self.flag = path, flag
        self.real = os.path.realpath(path)
        self.refuse_inputs(inputs or {})
        folder = os.path.dirname(self.real) or "."
        if not os.path.isdir(folder):
            raise self.error(f"no such folder {os.path.dirname(path) or '.'}")
        self.refuse_special()
        fd, probe = self._temporary()
        os.close(fd)
        os.unlink(probe)

    def error(self, fault: str, hint: str | None = None) -> SourceError:
        return SourceError("bad file", f"cannot write {self.flag} {self.path}: {fault}", None, hint)

    def refuse_inputs(self, inputs: dict) -> None:
        """Refuse PATH when it is one of `inputs` (the files the command reads)."""
        for source, named in inputs.items():
            if same_file(self.path, source):
                raise SourceError("bad file", f"{self.flag} {self.path} is {named}: it would be overwritten",
                                  None, "write the output to another file")

    def refuse_special(self) -> None:
        """Refuse PATH when it exists and is not a regular file."""
        try:
            mode = os.stat(self.real).st_mode
        except FileNotFoundError:
            return
        except OSError as e:
            raise self.error(e.strerror or str(e)) from None
        if stat.S_ISDIR(mode):
            raise self.error("it is a directory")
        if not stat.S_ISREG(mode):
            raise self.error(f"it is {file_kind(mode)}",
                             "name a regular file (an output is written whole to a temporary file, which is then "
                             "renamed over PATH)")

    def _temporary(self):
        folder = os.path.dirname(self.real) or "."
        try:
            return tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(self.real)}.", suffix=".tmp")
        except OSError as e:
            raise self.error(e.strerror or str(e)) from None

    def write(self, fill) -> None:
        """Replace PATH with what `fill(fh)` writes to a binary file; a SourceError (the
        temporary file removed, PATH as it was) if that fails."""
        fd, temporary = self._temporary()
        WRITING.add(temporary)
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)     # as open() would make it, not mkstemp's 0600
            with os.fdopen(fd, "wb") as fh:
                fill(fh)
                fh.flush()
                os.fsync(fh.fileno())
            self.refuse_special()            # again: PATH may have been replaced since the start
            os.replace(temporary, self.real)
            WRITING.discard(temporary)
        except OSError as e:
            raise self.error(e.strerror or str(e)) from None
        finally:
            remove_unfinished()      # whatever ended the write (an error, an interrupt)

    def write_text(self, text: str) -> None:
        self.write(lambda fh: fh.write(text.encode("utf-8")))


def remove_unfinished() -> None:
    """Remove the temporary files still being written (none once a write has ended)."""
    for temporary in list(WRITING):
        try:
            os.unlink(temporary)
        except OSError:
            pass
        WRITING.discard(temporary)
