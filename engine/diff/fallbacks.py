"""Fallbacks: why a `Function` run (diff/function.py) was not answered by its replay, each an
exception of the engine's own, counted by reason in `Function.fallbacks`.

- `PathChanged`: the inputs take a decision no kept path took (or meet a tie): documented;
- `Unsupported(reason)`: the program, or this run, is one a replay does not follow (a read of a
  traced value no guard can state, as its recording run found it, a derivative inside the
  program, large inputs of a fusing program, a tape that could not be kept, a kink noted outside
  the trace, a replayed derivative that declines these values): documented;
- `NonFinite`: a replayed result is not finite: the interpreter traces its provenance (the
  notes of where a nan or inf came from are the interpreter's alone): documented, and checked
  under AUTODIFF_STRICT=1: the interpreter's result must not be finite either;
- `LoweringRefused(reason)`: a lowering (compiled code, a generated sweep) could not run at
  these values and a slower form answered; documented where the compiled float code raises
  where numpy gives inf or nan (`1.0 / 0.0`, `math.log(0.0)`, `math.exp(1000.0)`);
- `ReplayDiffers(reason)`: a replay at the inputs it was recorded at disagrees with the
  interpreter (its trace is not kept);
- `StepFailed(reason)`: a replayed step raised and the interpreter, run in its place, raised
  too (its located error is the one the caller sees).

Any other exception out of a replay is a bug: it propagates (diff/function.py confirms a
replay's error by the interpreter, which must fail as well). Under `AUTODIFF_STRICT=1` a
fallback that is not documented raises `StrictFallback`, naming its reason."""
from __future__ import annotations

import os

from ...parser.errors import SourceError
from ..core.errors import EngineError


class Fallback(Exception):
    """A replay that hands the run to a slower way; `reason` is what `fallbacks` counts."""
    documented = False          # whether AUTODIFF_STRICT=1 lets it through

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class PathChanged(Fallback):
    """A replay met a decision that differs from the recorded one: guard number `index`, with
    `outcome` on the new values (None: a tie, which the interpreter reports)."""
    documented = True

    def __init__(self, index: int, outcome):
        super().__init__("path changed" if outcome is not None else "a decision for the interpreter (a tie, a range refused)")
        self.index = index
        self.outcome = outcome


class Unsupported(Fallback):
    documented = True


class NonFinite(Fallback):
    documented = True           # the interpreter traces its provenance (checked under strict)

    def __init__(self, reason: str = "non-finite result"):
        super().__init__(reason)


class LoweringRefused(Fallback):
    def __init__(self, reason: str, documented: bool = False):
        super().__init__(reason)
        self.documented = documented


class ReplayDiffers(Fallback):
    pass


class StepFailed(Fallback):
    documented = True           # the interpreter raised as well: its error is the answer


class StrictFallback(RuntimeError):
    """AUTODIFF_STRICT=1 and a fallback that is neither a changed path nor a documented
    unsupported construct."""


# the errors compiled float code raises where the rules' numpy forms give inf or nan
# (math.log(0.0), 1.0 / 0.0, math.exp(1000.0)): the lowering refuses those values
LOWERED_CODE_ERRORS = (ArithmeticError, ValueError)


# what a replayed step may raise at values where the interpreter raises it too, located: a
# user's mistake the values reveal, a refused size, or what float code raises
STEP_ERRORS = (SourceError, EngineError, *LOWERED_CODE_ERRORS)

# what a replayed step may raise that the interpreter, run in its place, must raise as well
# (diff/function.py confirms it: where the interpreter does not fail, the replay's error is
# raised as a bug); numpy's index and type errors on values included, which the interpreter
# reports located. Any other exception out of a replay propagates as it is.
CONFIRMED_ERRORS = (*STEP_ERRORS, LookupError, TypeError)


# the reasons a replay's lowering gives for complex values (issue 32 item 2): a scalar trace
# holding complex numbers is compiled as a float one is (diff/replay_compiled.py), and where its
# compiled code was refused (it did not give the step replay's numbers to the bit, or could not
# be made) the step replay answers, counted
COMPLEX_FLOAT_CODE = "complex values (the compiled code of this scalar trace was refused: the step replay's)"


def differs(same_numbers: bool, what: str, nested: bool = False) -> Fallback:
    """Why a trace replayed where it was recorded is not kept: its numbers are the interpreter's
    and only the notes differ (documented: in a program that takes a derivative itself, a kink a
    rule of that derivative notes, which the replay does not make, as norm's VJP at the zero
    vector; else a kink of a constant part of the program, which only the interpreter runs), or
    the numbers differ (a bug: AUTODIFF_STRICT=1 raises)."""
    if same_numbers and nested:
        return Unsupported("a kink noted by a rule of a derivative inside the program (the replay does not note it)")
    if same_numbers:
        return Unsupported("a kink noted by a constant part of the program (only the interpreter runs those)")
    return ReplayDiffers(f"a replayed {what} differs from the interpreter's")


def strict() -> bool:
    return os.environ.get("AUTODIFF_STRICT", "") == "1"


def count(fallbacks: dict, fallback: Fallback) -> None:
    """Count `fallback` by its reason in `fallbacks`; raise under AUTODIFF_STRICT=1 unless it is
    documented."""
    reason = fallback.reason
    fallbacks[reason] = fallbacks.get(reason, 0) + 1
    if not fallback.documented and strict():
        raise StrictFallback(f"AUTODIFF_STRICT=1: a replay fell back ({type(fallback).__name__}): {reason}") \
            from fallback
