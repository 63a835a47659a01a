"""JUnit XML for CI systems: one <testsuite> per check file, one <testcase> per case, the failing
point and numbers in the failure message. The file is written by cli/outfile.py."""
from __future__ import annotations

import os
from xml.etree import ElementTree

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
