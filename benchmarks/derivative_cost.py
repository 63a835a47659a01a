"""The table of docs/performance.md on how `derivative`'s nested tapes grow with the order
(section "How the cost of `derivative` grows with N"), generated so it cannot drift;
tests/test_readme_tables.py checks that docs/performance.md holds exactly this output.

    python benchmarks/derivative_cost.py            # the table, as docs/performance.md has it
    python benchmarks/derivative_cost.py --times    # and the time for all N orders (best of 3)
    python benchmarks/derivative_cost.py --json     # and the figures as one JSON line (with --times: the times too)

The tape entries are exact (the same on every machine); the times are a benchmark (they vary by
machine and load) and so are not in the table.
"""
from __future__ import annotations

import sys
import time

FUNCTIONS = ("sin(x)", "x**7-2*x**3+x", "exp(x**2)", "sin(x)*exp(x)", "tanh(x)")
ORDERS = 10
POINT = {"x": 0.5}
TIMED_ORDERS = (4, 6, 8, 10)


def tape_entries(text: str, order: int = ORDERS) -> list:
    """Entries of the tape swept for f^(k), k = 1..order."""
    from autodiff.engine.diff.higher import derivatives
    return derivatives(text, at=POINT, order=order).tape_entries


def table() -> str:
    """The markdown table of tape entries, one row per function."""
    lines = [f"| f | tape entries, k = 1..{ORDERS} |", "|---|---|"]
    for text in FUNCTIONS:
        lines.append(f"| `{text}` | {' '.join(str(n) for n in tape_entries(text))} |")
    return "\n".join(lines)


def best_of_3(text: str, order: int) -> float:
    from autodiff.engine.diff.higher import derivatives
    times = []
    for _ in range(3):
        start = time.perf_counter()
        derivatives(text, at=POINT, order=order)
        times.append(time.perf_counter() - start)
    return min(times)


def times_table(figures=None) -> str:
    head = "| f | " + " | ".join(f"N={n}" for n in TIMED_ORDERS) + " |"
    lines = [head, "|---|" + "---|" * len(TIMED_ORDERS)]
    for text in FUNCTIONS:
        times = [best_of_3(text, n) for n in TIMED_ORDERS]
        if figures is not None:
            figures.update({f"{text} N={n} best of 3 (ms)": {"median": t * 1e3, "unit": "ms"}
                            for n, t in zip(TIMED_ORDERS, times)})
        cells = [f"{t * 1000:.2g} ms" for t in times]
        lines.append(f"| `{text}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv) -> None:
    print(table())
    figures = {} if "--json" in argv else None
    if "--times" in argv:
        print()
        print(times_table(figures))
    if figures is not None:
        from _figures import print_figures
        for text in FUNCTIONS:
            figures[f"{text} tape entries k=1..{ORDERS}"] = {"median": float(sum(tape_entries(text))), "unit": "entries"}
        print_figures(figures)


if __name__ == "__main__":
    main(sys.argv[1:])
