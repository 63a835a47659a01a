"""Why a claimed gradient is wrong (issue 29 item 5): AD's adjoint of an input split into its
terms, one per use of the input in the recorded computation, and the claim matched against them.

The reverse sweep adds an input's adjoint up from the contributions of its consumers: `sin(x)*x`
reaches x through `sin` and through `*`, and ∂f/∂x = (term through sin) + (term through *). The
one sweep (core/tape.sweep) tells each contribution to `on_step`; the contributions into an
input's leaf, summed by the source place of the consumer (a use inside a loop is one use), are
the terms. A failing claim is then named as
- a part of the terms: "the claim equals the term through `sin(x)` at 1:1 (-0.832) and misses the
  term through `*` at 1:7 (0.909)" (a missing penalty term is one such);
- the whole gradient slipped: 2 or 1/2 times it, its sign flipped, its transpose;
- the terms with one of them counted twice or with its sign flipped.
Only an exact explanation (within the check's tolerances, at every entry of the input) is named.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..core.backend import np, to_host_value
from ..core.numbers import finite
from ..core.tape import strip
from ..diff import reverse
from .graph import adjoints

MAX_SUBSET_TERMS = 12        # 2^12 sums at most: beyond, only the whole-gradient slips are tried
MAX_SUBSET_WORK = 2 ** 26    # entries added up over all the sums tried (a large input: fewer terms tried)
MAX_TEXT = 40


@dataclass
class Use:
    """One use of an input: the source at the consumer and its term of the adjoint (the input's shape)."""
    text: str
    line: int
    column: int
    value: object


def terms_of(target, inputs: dict, wrt, output_seed=None, dtype_name="float64", limits=None) -> dict:
    """Input name -> its Uses in source order, from one recorded run and one reverse sweep."""
    result = reverse.grad(None, inputs, wrt, output_seed, dtype_name=dtype_name, limits=limits, target=target,
                          keep_tape=True)
    tape = result.tape
    names = list(result.gradient)            # watched first, in this order: the leaves 0, 1, ...
    sums = [{} for _ in names]                # per leaf: source place -> (span, summed term)

    def on_step(i, pos, j, g, contribution):
        if j >= len(names):
            return
        span = tape.entries[i].span
        key = None if span is None else (span.line, span.column, span.end_line, span.end_column)
        value = np().asarray(to_host_value(strip(contribution)), dtype=np().float64)
        before = sums[j].get(key)
        sums[j][key] = (span, value if before is None else before[1] + value)    # never added in place

    adjoints(tape, result.output_index, result.seed, on_step)
    lines = target.source.split("\n")
    out = {}
    for name, found in zip(names, sums):
        shape = np().shape(result.gradient[name])
        uses = [Use(_text(lines, span), span.line if span else 0, span.column if span else 0,
                    np().broadcast_to(value, shape)) for span, value in found.values()]
        out[name] = sorted(uses, key=lambda u: (u.line, u.column))
    return out


def _text(lines, span) -> str:
    if span is None or not 1 <= span.line <= len(lines):
        return "?"
    line = lines[span.line - 1]
    end = span.end_column - 1 if span.end_line == span.line else len(line)
    while end < len(line) and line.count("(", span.column - 1, end) > line.count(")", span.column - 1, end):
        end += 1                         # a call's span may stop before its closing parenthesis
    text = line[span.column - 1:end].strip() or "?"
    return text if len(text) <= MAX_TEXT and span.end_line == span.line else text[:MAX_TEXT - 1] + "…"


class Explanation:
    """What explains a claim of one input: `sentence(k)` words it at the input's entry k (flat)."""

    def __init__(self, kind, matched=(), missed=(), term=None, factor=None):
        self.kind, self.matched, self.missed, self.term, self.factor = kind, matched, missed, term, factor

    def sentence(self, name: str, k: int) -> str:
        if self.kind == "part":
            missed = f"misses {_listed(self.missed, k)}"
            if not self.matched:
                return f"the claim {missed}"
            equals = _listed(self.matched, k)
            return f"the claim equals {'the sum of ' if len(self.matched) > 1 else ''}{equals} and {missed}"
        if self.kind == "factor":
            return f"the claim is {self.factor} times AD's gradient of {name}"
        if self.kind == "sign":
            return f"the claim is AD's gradient of {name} with the sign flipped"
        if self.kind == "transpose":
            return f"the claim is the transpose of AD's gradient of {name}"
        if self.kind == "twice":
            return f"the claim adds {_listed([self.term], k)} once more"
        return f"the claim has the sign of {_listed([self.term], k)} flipped"


def _listed(uses, k) -> str:
    parts = [f"`{u.text}` at {u.line}:{u.column} ({_value(u.value, k)})" for u in uses]
    if len(parts) == 1:
        return f"the term through {parts[0]}"
    return f"the terms through {', '.join(parts[:-1])} and {parts[-1]}"


def _value(value, k) -> str:
    return f"{float(np().asarray(value).reshape(-1)[k]):.3g}"


def explain(claim, uses: list, ad, rtol: float, atol: float):
    """The Explanation of a claim (the input's shape) that AD's gradient `ad` split into `uses`
    explains exactly, else None."""
    xp = np()
    claim = xp.asarray(claim, dtype=xp.float64)
    ad = xp.asarray(ad, dtype=xp.float64)

    def same(a, b) -> bool:
        return a.shape == claim.shape and bool(xp.all(xp.abs(a - b) <= atol + rtol * xp.maximum(xp.abs(a), xp.abs(b))))

    if not uses or not finite(claim) or same(claim, ad):
        return None
    values = [xp.asarray(u.value) for u in uses]
    if len(uses) <= MAX_SUBSET_TERMS and 2 ** len(uses) * len(uses) * max(claim.size, 1) <= MAX_SUBSET_WORK:
        for size in range(len(uses) - 1, -1, -1):          # the largest part first: the fewest missed
            for chosen in itertools.combinations(range(len(uses)), size):
                total = sum((values[i] for i in chosen), xp.zeros_like(ad))
                if same(claim, total):
                    return Explanation("part", [uses[i] for i in chosen],
                                       [u for i, u in enumerate(uses) if i not in chosen])
    if not same(ad, xp.zeros_like(ad)):
        for factor, words in ((2.0, "2"), (0.5, "1/2")):
            if same(claim, factor * ad):
                return Explanation("factor", factor=words)
        if same(claim, -ad):
            return Explanation("sign")
        if ad.ndim == 2 and ad.shape[0] == ad.shape[1] and not same(ad, ad.T) and same(claim, ad.T):
            return Explanation("transpose")
    for use, v in zip(uses, values):
        if same(v, xp.zeros_like(v)):
            continue
        if same(claim, ad + v):
            return Explanation("twice", term=use)
        if same(claim, ad - 2 * v):
            return Explanation("flipped", term=use)
    return None
