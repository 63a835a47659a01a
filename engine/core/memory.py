"""How much memory the process holds now, for the tape-memory bound (`max_tape_mb`).

Read at loop checkpoints only (every few thousand steps), never per op: a runaway `while True`
under `grad` grows its tape by about 250 MB a second, so the bound is felt within seconds."""
from __future__ import annotations

import os

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_mb() -> float:
    """The process's resident memory in MB (Linux /proc; elsewhere the peak, from getrusage)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE / 1e6
    except (OSError, IndexError, ValueError):
        import resource                      # lazy: the fallback of non-Linux systems only
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 1e6 if os.uname().sysname == "Darwin" else peak / 1e3
