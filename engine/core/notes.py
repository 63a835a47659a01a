"""What the engine notices while it runs: the source span of the op being executed (set by the
interpreter), the ties, kinks and equal comparisons it evaluated (reported by the CLI; a
derivative reports those met on traced values, `traced_only`), and the
places where a traced value went through stop_gradient (a check's finite differences see through
them, AD does not), and the uses of the program's own derivative rules (custom_vjp, custom_jvp:
a check verifies each rule at the points it was used at, engine/checks/rules.py)."""
from __future__ import annotations


# the evaluations of each user rule a run keeps for its checks (each holds its arguments' values;
# a check verifies the first few of each rule)
RULE_USES = 16


class Notes:
    __slots__ = ("span", "kinks", "detached", "limit", "traced", "rules", "placed")

    def __init__(self):
        self.span = None          # the span of the expression the interpreter is evaluating
        self.kinks = []           # (op, span, detail) for each kink or tie evaluated
        self.detached = []        # the span of each stop_gradient applied to a traced value
        self.limit = 10_000       # keep at most this many kink notes
        self.traced = {}          # id(note) -> note, for the kinks noted on traced values (traced_only)
        self.rules = []           # each evaluation of a user rule (lang/custom_rules.py's RuleUse)
        # id(note) -> (place, note): a kink noted after its op's turn (a pending value computed
        # later, core/lazy.py), and where the op-by-op run notes it (`in_run_order`)
        self.placed = {}

    def kink(self, op: str, detail: str) -> None:
        if len(self.kinks) < self.limit:
            self.kinks.append((op, self.span, detail))

    def traced_since(self, count: int) -> None:
        """The kinks noted since there were `count` were met by an op applied to a traced value (a
        box: core/tape.py's bind, the ops' float fast paths, a reverse sweep's rules)."""
        for note in self.kinks[count:]:
            self.traced[id(note)] = note

    def noted_at(self, count: int, place: tuple) -> None:
        """The kinks noted since there were `count` are an equation's whose turn came earlier: when
        there were place[0] notes, at tape position place[1] (core/lazy.py's pending values,
        computed when read). `in_run_order` puts them there."""
        for k, note in enumerate(self.kinks[count:]):
            self.placed[id(note)] = ((place[0], 0, place[1], k), note)

    def in_run_order(self) -> None:
        """The kinks in the order the op-by-op run notes them: each `noted_at` note after the notes
        there were at its turn and before the later ones, in tape order. Called only where no op
        is under way (core/lazy.py's force_all, at a run's end): a bind under way holds a count of
        the notes for `traced_since`, which a reordered list would no longer match."""
        placed = self.placed
        if not placed:
            return
        kinks = self.kinks

        def key(i):
            found = placed.get(id(kinks[i]))
            return found[0] if found is not None and found[1] is kinks[i] else (i, 1, 0, 0)
        kinks[:] = [kinks[i] for i in sorted(range(len(kinks)), key=key)]
        placed.clear()

    def rule_used(self, use) -> None:
        """Keep `use` (lang/custom_rules.py's RuleUse) unless its function's first RULE_USES are kept."""
        kept = sum(1 for u in self.rules if u.function is use.function)
        if kept < RULE_USES:
            self.rules.append(use)

    def detach(self) -> None:
        if len(self.detached) < self.limit:
            self.detached.append(self.span)


NOTES = Notes()          # the one record of the running computation (a run is single-threaded)


class Reads:
    """Who hears of a traced value read as a plain Python number: a branch's truth, a
    comparison, a loop's range, an index, int(), a composite's count, order, mask or shift
    (core/tape.py's `read`), a primitive without a derivative applied to a box. `hook` is None,
    or, while a run records a trace for replay, a callable told `(value, result, take, opname,
    tie)` at each such read: the box (or a tuple or list holding boxes) read, what the run took
    from it, `take(raw)` recomputing that from the raw value (None: the raw value itself), the
    comparison, "truth" or "range" where it is one, and `tie(raw)`: whether the raw values
    meet at a tie the interpreter notes (lang/recorded_decisions.py makes each a guard)."""
    __slots__ = ("hook",)

    def __init__(self):
        self.hook = None


READS = Reads()


def reset() -> Notes:
    NOTES.span = None
    NOTES.kinks = []
    NOTES.detached = []
    NOTES.traced = {}
    NOTES.rules = []
    NOTES.placed = {}
    return NOTES


def traced_only(kinks) -> list:
    """The kinks and ties a derivative reports, of those a run noted: the ones met by an op on a
    traced value, a value the derivative depends on (an input differentiated, or computed from
    one), in every mode alike. A tie among constants (`maximum(arange(3.0) - 1, 0)`) or inputs
    not differentiated (`minimum(y, 2.0)` with wrt x) is no kink of the function differentiated.
    Comparisons' notes (op "compare") are kept: a comparison notes only a tie of traced values."""
    traced = NOTES.traced
    return [k for k in kinks if k[0] == "compare" or traced.get(id(k)) is k]
