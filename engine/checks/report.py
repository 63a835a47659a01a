"""What a check reports: the verdicts, the tolerances per dtype, one row per checked entry
and the report with its overall verdict. Shared by the gradient, Jacobian and Hessian checks."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.backend import np
from ..core.numbers import nonfinite_word

PASS, FAIL, BRANCH, KINK, NONFINITE = "pass", "fail", "branch", "kink", "non-finite"
INCONCLUSIVE = "inconclusive"
DETACHED = "detached"              # AD and FD disagree, and the run cut its tape with stop_gradient
TRUSTED = "trusted"                # a user rule that is not the derivative, declared intended (checks/rules.py)
FAILING = frozenset({FAIL, NONFINITE})
WARNING = frozenset({TRUSTED, INCONCLUSIVE, KINK, DETACHED, BRANCH})
_SEVERITY = {PASS: 0, TRUSTED: 1, INCONCLUSIVE: 2, KINK: 3, DETACHED: 4, BRANCH: 5, FAIL: 6, NONFINITE: 7}
# Most severe first: how a batch of rows is summed up in one word.
SEVERITY_ORDER = sorted(_SEVERITY, key=_SEVERITY.__getitem__, reverse=True)

# An agreement is evidence only when FD is about as precise as the tolerance asks. When the FD error
# estimate exceeds the tolerance this many times (a step too large for the curvature, or f so large
# that its rounding swamps the differences), AD could be wrong by up to the estimate and still
# "agree": the verdict is `inconclusive` (a warning), not `pass`.
INCONCLUSIVE_RATIO = 100.0


@dataclass(frozen=True)
class Tolerance:
    """The numbers a check uses for one dtype. `step` is the relative FD step (about eps^(1/3),
    the optimum for central differences); `rtol` and `atol` bound what AD may differ from the
    reference beyond the reference's own error estimate."""
    eps: float
    step: float
    rtol: float
    atol: float


# float64: rtol 1e-6, atol 1e-9, a thousand times tighter than torch.autograd.gradcheck's
# (1e-3, 1e-5): the FD error estimate, not a blanket tolerance, absorbs the FD error.
# float32: FD in float32 is good to about eps^(2/3) ~ 2e-5 relative; rtol 1e-4 leaves room for AD's
# own float32 rounding, and the error estimate (rounding term with eps = 2^-23) does the rest.
TOLERANCES = {
    "float64": Tolerance(eps=2.0 ** -52, step=2.0 ** -17, rtol=1e-6, atol=1e-9),
    "float32": Tolerance(eps=2.0 ** -23, step=2.0 ** -8, rtol=1e-4, atol=1e-6),
}


def tolerance_for(dtype_name: str, rtol=None, atol=None, step=None, profile=None) -> Tolerance:
    base = TOLERANCES[profile or dtype_name]
    return Tolerance(base.eps, base.step if step is None else float(step),
                     base.rtol if rtol is None else float(rtol), base.atol if atol is None else float(atol))


@dataclass
class EntryCheck:
    """One entry of the gradient: the claimed value against the reference."""
    label: str                     # "x", "A[1, 2]"
    claimed: float                 # AD (or the hand-derived value being checked)
    reference: float               # FD (or AD, when a hand-derived gradient is checked)
    abs_err: float
    rel_err: float
    error_estimate: float          # of the reference (0 for AD)
    tolerance: float
    verdict: str
    reason: str = ""
    step: float | None = None
    left: float | None = None      # one-sided slopes, for kinks
    right: float | None = None
    index: tuple | None = None     # Jacobian/Hessian checks: (output entry, input entry) or (row, column)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILING


@dataclass
class CheckReport:
    """A check of a gradient, Jacobian or Hessian at one point: one row per entry (or the
    projection, in fast mode), the overall `verdict` and `passed`."""
    mode: str                      # "full" or "fast"
    claimed: str                   # "AD" or "hand"
    reference: str                 # "FD" or "AD"
    dtype: str
    tolerance: Tolerance
    value: object = None
    entries: list = field(default_factory=list)
    evaluations: int = 0
    seed: int | None = None
    projection: EntryCheck | None = None     # fast mode: the projected comparison
    full: "CheckReport | None" = None        # fast mode: the full recomputation after a failure
    conventions: list = field(default_factory=list)   # kinks the AD run applied a convention at
    batched: bool = False          # the perturbed runs were batched along a leading axis
    detached: list = field(default_factory=list)      # "line L, column C" where stop_gradient cut the tape
    kind: str = "gradient"         # what was checked: "gradient", "jacobian" or "hessian" (checkhigher.py)
    rules: list = field(default_factory=list)         # the user rules' rows where the run used them (checks/rules.py)

    @property
    def rows(self) -> list:
        """The rows that explain the outcome: per entry, or the projection (fast mode); then the
        rows of the user rules the run passed through."""
        if self.full is not None:
            return self.full.entries + self.rules
        return (self.entries if self.projection is None else [self.projection]) + self.rules

    @property
    def verdict(self) -> str:
        rows = self.rows
        if self.full is not None and self.projection is not None:
            rows = rows + [self.projection]
        if not rows:
            return PASS
        return max((r.verdict for r in rows), key=_SEVERITY.__getitem__)

    @property
    def passed(self) -> bool:
        return self.verdict not in FAILING

    def __bool__(self) -> bool:
        return self.passed

    @property
    def failures(self) -> list:
        return [r for r in self.rows if r.failed]


def fmt(x) -> str:
    """A number in a reason: 6 significant digits, or nan/inf/-inf."""
    return nonfinite_word(x) or f"{x:.6g}"


def entry_labels(name, shape):
    if not shape:
        return [name]
    if len(shape) == 1:
        return [f"{name}[{i}]" for i in range(shape[0])]
    idx = np().ndindex(*shape)
    return [f"{name}[{', '.join(map(str, i))}]" for i in idx]


def real_entries(v):
    """A float array of v's entries (flattened): for a complex v, its real and imaginary parts
    interleaved (a view where v is an array: setting an entry sets that part)."""
    a = np().asarray(v)
    if a.dtype.kind != "c":
        return a.astype(np().float64).reshape(-1)
    return a.reshape(-1).view(a.real.dtype)


def complex_labels(name, shape) -> list:
    """entry_labels of a complex input: each entry's real part, then its imaginary part."""
    return [f"{label}{part}" for label in entry_labels(name, shape) for part in (".real", ".imag")]


def as_float_array(v):
    return np().asarray(v, dtype=np().float64).reshape(-1)
