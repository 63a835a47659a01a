"""Bounds that turn runaway programs into errors, and the error they raise."""
from __future__ import annotations

from ...parser.errors import SourceError, option

FRAMES_PER_CALL = 50       # Python frames one call of the language may take, generously


class Limits:
    """Bounds that turn runaway programs into errors: executed steps, call depth, array size, the
    memory a run may add (`tape_mb`, its tape mostly: checked at loop trips) and the operations
    recorded on the tapes (an entry with its boxes takes some 400 bytes: 5,000,000 is about 2 GB)."""

    def __init__(self, steps: int = 10_000_000, depth: int = 200, elements: int = 250_000_000,
                 tape_mb: int = 1024, tape_entries: int = 5_000_000):
        self.steps = steps
        self.depth = depth
        self.elements = elements
        self.tape_mb = tape_mb
        self.tape_entries = tape_entries


class LimitError(SourceError):
    pass


def step_limit_error(steps: int, span) -> LimitError:
    return LimitError("step limit", f"the program ran more than {steps:,} steps (an endless loop?)", span,
                      f"raise the limit with {option('max_steps')}")


def tape_limit_error(tape_mb: int, span, what: str = "the loop") -> LimitError:
    """The limit, never the memory measured when it was found over it: the process's resident size
    drifts by a page or a buffer from run to run, and the message is the same each run."""
    where = f" (in {what} at line {span.line})" if span is not None else ""
    return LimitError("tape too large", f"the run added memory over the tape-memory limit of "
                      f"{tape_mb:,} MB{where}: a runaway loop under a derivative?", span,
                      f"raise the limit with {option('max_tape_mb')}")


def depth_limit_error(depth: int, fn_name: str, span) -> LimitError:
    return LimitError("recursion limit", f"recursion deeper than {depth} calls (in {fn_name})", span,
                      f"raise the limit with {option('max_depth')}")
