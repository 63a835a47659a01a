"""Where keys stand in a TOML text (tomllib gives no positions), so a check file's mistakes are
reported at their line and column."""
from __future__ import annotations

import re

from ...parser.nodes import Span


class TomlLocator:
    """Line and column of keys in a TOML text (tomllib gives none): headers split the text into
    regions; a key is searched for in its case's region."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.by_kind = {"case": [], "defaults": [], "other": []}   # kind -> [(start, end)] in order
        starts = []
        for i, line in enumerate(self.lines):
            s = line.strip()
            if re.match(r"\[\[\s*case\s*\]\]", s):
                starts.append((i, "case"))
            elif re.match(r"\[\s*defaults\s*\]", s):
                starts.append((i, "defaults"))
            elif s.startswith("["):
                starts.append((i, "other"))
        # each region ends at the next header: found once, so 100,000 cases validate in linear time
        for k, (start, kind) in enumerate(starts):
            end = starts[k + 1][0] if k + 1 < len(starts) else len(self.lines)
            self.by_kind[kind].append((start, end))

    def region(self, kind: str, index: int = 0):
        found = self.by_kind[kind]
        if index >= len(found):
            return 0, len(self.lines)
        return found[index]

    def header(self, kind: str, index: int = 0) -> Span:
        start, _ = self.region(kind, index)
        text = self.lines[start] if start < len(self.lines) else ""
        col = len(text) - len(text.lstrip()) + 1
        return Span(start + 1, col, start + 1, len(text) + 1)

    def key(self, kind: str, index: int, path) -> Span:
        """The span of the last key of `path` (nested keys found in order), else the header's."""
        start, end = self.region(kind, index)
        line, col = start, 0
        found = None
        for key in path:
            pat = re.compile(r'(?<![\w."\'-])("?)' + re.escape(str(key)) + r'\1\s*=')
            hit = None
            for i in range(line, end):
                m = pat.search(self.lines[i], col if i == line else 0)
                if m:
                    hit = (i, m.start())
                    break
            if hit is None:
                break
            found = hit
            line, col = hit[0], hit[1] + 1
        if found is None:
            return self.header(kind, index)
        i, c = found
        key = str(path[-1]) if found else ""
        return Span(i + 1, c + 1, i + 1, c + 1 + len(key))
