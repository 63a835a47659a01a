"""JUnit XML for CI systems: one <testsuite> per check file, one <testcase> per case, the failing
point and numbers in the failure message."""
from __future__ import annotations

import os
import tempfile
from xml.etree import ElementTree

from ...parser.errors import SourceError
from ..options import with_flags
from ..output import printable


def junit_xml(results) -> str:
    root = ElementTree.Element("testsuites", name="autodiff check")
    by_file = {}
    for r in results:
        by_file.setdefault(r.file, []).append(r)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for file, rs in by_file.items():
        counts = {"tests": len(rs), "failures": sum(r.status == "failed" for r in rs),
                  "errors": sum(r.status == "error" for r in rs), "skipped": sum(r.status == "skipped" for r in rs)}
        seconds = sum(r.seconds for r in rs)
        suite = ElementTree.SubElement(root, "testsuite", name=_clean(file), time=f"{seconds:.6f}",
                              **{k: str(v) for k, v in counts.items()})
        classname = os.path.splitext(os.path.basename(file))[0].replace(".", "_")
        for r in rs:
            case = ElementTree.SubElement(suite, "testcase", classname=_clean(classname), name=_clean(r.name), time=f"{r.seconds:.6f}",
                                 file=_clean(file), line=str(r.line))
            message = with_flags(r.message)
            if r.status == "failed":
                el = ElementTree.SubElement(case, "failure", message=_clean(message), type=r.verdict)
                el.text = _clean(_details(r))
            elif r.status == "error":
                first = message.splitlines()
                el = ElementTree.SubElement(case, "error", message=_clean(" ".join(s.strip() for s in first[:2])),
                                            type="error")
                el.text = _clean(message)
            elif r.status == "skipped":
                ElementTree.SubElement(case, "skipped", message=_clean(message))
            if r.warnings:
                out = ElementTree.SubElement(case, "system-out")
                out.text = _clean("\n".join(r.warnings))
        for k in totals:
            totals[k] += counts[k]
        total_time += seconds
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{total_time:.6f}")
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _details(r) -> str:
    lines = [f"{r.file}:{r.line}: {r.name}: {r.points} point(s), verdict {r.verdict}"]
    for row in r.rows:
        lines.append(f"{row['where']}, {row['entry']}: {row['verdict']}: claimed {row['claimed']!r}, "
                     f"reference {row['reference']!r}, abs err {row['abs_err']!r}, rel err {row['rel_err']!r}, "
                     f"error estimate {row['error_estimate']!r}, tolerance {row['tolerance']!r}")
    if r.seed is not None:
        lines.append(f"fast mode, seed {r.seed}")
    return "\n".join(lines)


def _clean(text: str) -> str:
    """XML 1.0 cannot hold most control characters: they are written as escapes (`\x00`)."""
    return printable(str(text))


class JunitFile:
    """Where --junit writes: checked before any case runs (a temporary file is made beside PATH
    now, so an unwritable folder fails up front), written atomically at the end (the temporary
    file, flushed to disk, is renamed over PATH: a reader never sees half a report), and never
    one of the check files being read."""

    def __init__(self, path: str, inputs):
        real = os.path.realpath(path)
        if any(os.path.realpath(p) == real for p in inputs):
            raise SourceError("bad file", f"--junit {path} is one of the check files being run: it would "
                              "be overwritten", None, "write the report to another file")
        if os.path.isdir(real):
            raise SourceError("bad file", f"cannot write --junit {path}: it is a directory")
        folder = os.path.dirname(real) or "."
        try:
            self.fd, self.temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(real)}.",
                                                       suffix=".tmp")
        except OSError as e:
            raise SourceError("bad file", f"cannot write --junit {path}: {e.strerror or e}") from None
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(self.fd, 0o666 & ~mask)     # as open() would make it, not mkstemp's 0600
        self.path = path
        self.real = real

    def write(self, text: str) -> None:
        """Replace PATH with `text`; a SourceError (the temporary file removed) if that fails."""
        try:
            with os.fdopen(self.fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(self.temporary, self.real)
        except OSError as e:
            self.discard()
            raise SourceError("bad file", f"cannot write --junit {self.path}: {e.strerror or e}") from None

    def discard(self) -> None:
        try:
            os.unlink(self.temporary)
        except OSError:
            pass
