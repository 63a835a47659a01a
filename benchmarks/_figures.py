"""The one machine-readable form of a benchmark's figures, for benchmarks/compare_builds.py: with
`--json` a script prints, as its last line, {"figures": {name: {"median": m, "min": a, "max": b,
"unit": u}}} (min and max where the script measured a spread). Lower is better for every figure."""
from __future__ import annotations

import json
import statistics

MARK = '{"figures"'


def figure(median, low=None, high=None, unit="") -> dict:
    out = {"median": float(median), "unit": unit}
    if low is not None and high is not None:
        out.update(min=float(low), max=float(high))
    return out


def of_samples(samples, unit="", scale=1.0) -> dict:
    """A figure from samples: their median, min and max, each times `scale`."""
    xs = [x * scale for x in samples]
    return figure(statistics.median(xs), min(xs), max(xs), unit)


def print_figures(figures: dict, **extra) -> None:
    print(json.dumps({"figures": figures, **extra}), flush=True)


def read_figures(stdout: str):
    """The figures a script printed with --json (its last such line), or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line)["figures"]
    return None
