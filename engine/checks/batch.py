"""Batched finite differences: run the target once on many perturbed points stacked along a leading
axis, instead of once per point, when the program allows it.

Inputs become `Batched` arrays (an ndarray subclass: indexing skips the batch axis) and the
builtins that reduce or reshape (sum, mean, norm, dot, len, ...) act on each row. Whatever the
program does that the batch cannot follow (a condition on a batched value, a loop over one, a list
built from them) either raises, changes the control-flow signature or changes the numbers, so a
batch is trusted only after its unperturbed row and two perturbed rows match one-at-a-time runs;
otherwise `BatchUnsupported` sends the caller back to the loop."""
from __future__ import annotations

from ..core.backend import np, on_device
from ..lang.builtins import is_axis
from ..lang.target import Runner
from .one_hot import close


class BatchUnsupported(Exception):
    pass


_Batched = None


def batched_class():
    global _Batched
    if _Batched is None:
        ndarray = np().ndarray

        class Batched(ndarray):
            """Row r is point r. Indexing applies to each row."""

            def __getitem__(self, index):
                if not isinstance(index, tuple):
                    index = (index,)
                return ndarray.__getitem__(self, (slice(None),) + index)

        _Batched = Batched
    return _Batched


def _plain(a):
    return a.view(np().ndarray) if isinstance(a, batched_class()) else a


def _wrap(a):
    a = np().asarray(a)
    return a.view(batched_class())


def _axis(axis, ndim):
    """A row's axis as the batch's: None is every axis but the batch's; the others move by one."""
    if axis is None:
        return tuple(range(1, ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, ndim) for a in axis)
    a = int(axis)
    return a + 1 if a >= 0 else a


def _reduction(name):
    """sum/mean/max/min over a row's axes, with every keyword the builtin takes: `axis` and
    `keepdims` act on each row; max(a, b) (elementwise) and keywords other than those go to the
    builtin as they are, or row by row."""
    per_row = _per_row(name)

    def reduce(x, *rest, **kw):
        if not isinstance(x, batched_class()):
            return _ORIGINAL[name](x, *rest, **kw)
        if len(rest) > 1 or (rest and name in ("max", "min") and not is_axis(rest[0])):
            return _ORIGINAL[name](x, *rest, **kw)          # max(a, b, ...): elementwise, row-aligned
        axis = rest[0] if rest else kw.pop("axis", None)
        keepdims = bool(kw.pop("keepdims", False))
        if kw:
            return per_row(x, axis=axis, keepdims=keepdims, **kw)
        p = _plain(x)
        if p.ndim == 1:                      # a batch of scalars: reducing a scalar is the identity
            return x if name != "mean" else x * 1.0
        fn = {"sum": np().sum, "mean": np().mean, "max": np().max, "min": np().min}[name]
        return _wrap(fn(p, axis=_axis(axis, p.ndim), keepdims=keepdims))
    return reduce


def _per_row(name):
    """Apply the original builtin to each row, keywords included (correct for anything; one call
    per row)."""
    def apply(*args, **kw):
        B = batched_class()
        rows = next((a.shape[0] for a in (*args, *kw.values()) if isinstance(a, B)), None)
        if rows is None:
            return _ORIGINAL[name](*args, **kw)

        def row(a, r):
            return _plain(a)[r] if isinstance(a, B) else a
        out = [_ORIGINAL[name](*[row(a, r) for a in args], **{k: row(v, r) for k, v in kw.items()})
               for r in range(rows)]
        return _wrap(np().stack([np().asarray(o) for o in out]))
    return apply


def _len(x):
    if isinstance(x, batched_class()):
        return float(x.shape[1]) if x.ndim > 1 else _ORIGINAL["len"](1.0)
    return _ORIGINAL["len"](x)


_ORIGINAL: dict = {}
REDUCTIONS = ("sum", "mean", "max", "min")
PER_ROW = ("prod", "norm", "dot", "matmul", "transpose", "reshape", "any", "all")


def batch_builtins(builtins: dict) -> None:
    """Replace, in an interpreter's builtins table, those that must act on each row."""
    from ..lang.callables import Builtin
    from ..lang.keywords import accepted_keywords
    for name in REDUCTIONS + PER_ROW + ("len",):
        b = builtins.get(name)
        if not isinstance(b, Builtin):
            continue
        _ORIGINAL[name] = b.fn
        fn = _reduction(name) if name in REDUCTIONS else (_len if name == "len" else _per_row(name))
        if fn is not _len:                   # the batch takes every keyword the plain run takes
            fn.accepted_keywords = accepted_keywords(b.fn)
        builtins[name] = Builtin(name, fn, b.min_args, b.max_args, b.not_of_numbers)


class BatchEvaluator:
    """f at many points per run. `rows(values_per_row)` -> the objective per row."""

    def __init__(self, target, limits, output_seed, sig0):
        try:
            self.runner = Runner(target, limits, customize=batch_builtins)
        except Exception as e:      # the plain run compiled: whatever the batch cannot, the loop can
            raise BatchUnsupported(f"the program does not compile batched: {e}") from None
        self.output_seed = output_seed
        self.sig0 = sig0

    def __call__(self, batched: dict, rows: int):
        B = batched_class()
        try:
            with on_device("cpu"):      # Batched is a numpy subclass: batches run on the host's numpy
                out = self.runner({k: v.view(B) if hasattr(v, "view") else v for k, v in batched.items()})
        except Exception as e:
            raise BatchUnsupported(f"the program does not run batched: {e}") from None
        if self.runner.signature != self.sig0:
            raise BatchUnsupported("the batched run took another path")
        a = np().asarray(out.view(np().ndarray) if isinstance(out, B) else out)
        if a.ndim == 0 or a.shape[0] != rows:
            raise BatchUnsupported("the output has no batch axis")
        shape = a.shape[1:]
        a = a.reshape(rows, -1).astype(np().float64)
        if self.output_seed is None:
            return a.sum(axis=1)
        v = np().broadcast_to(np().asarray(self.output_seed, dtype=np().float64), shape)
        return a @ v.ravel()


def batched_differences(target, limits, objective, inputs: dict, names, steps, f0, sig0, chunk=None):
    """f(x ± h e_k) and f(x ± 2h e_k) for every entry k of the inputs `names`, computed in batches.
    Returns a list of (fp1, fm1, fp2, fm2) per entry, or raises BatchUnsupported."""
    xp = np()
    if not all(hasattr(inputs[n], "shape") and inputs[n].ndim >= 1 for n in inputs):
        raise BatchUnsupported("batching needs array inputs")
    evaluator = BatchEvaluator(target, limits, objective.output_seed, sig0)
    entries = [(n, k) for n in names for k in range(inputs[n].size)]
    flat = {n: xp.asarray(inputs[n]).reshape(-1) for n in names}
    offsets = (1.0, -1.0, 2.0, -2.0)
    results = []
    if chunk is None:            # rows per run: keep a batch of every input near 16k numbers (in cache)
        size = sum(int(inputs[n].size) for n in inputs)
        chunk = max(4, min(64, 16384 // max(size, 1)))
    per_chunk = max(1, chunk // 4)
    first = True
    for start in range(0, len(entries), per_chunk):
        part = entries[start:start + per_chunk]
        rows = 4 * len(part) + (1 if first else 0)
        stacked = {n: xp.broadcast_to(inputs[n], (rows,) + inputs[n].shape).copy() for n in inputs}
        views = {n: stacked[n].reshape(rows, -1) for n in inputs}
        r = 1 if first else 0
        for i, (n, k) in enumerate(part):
            x, h = flat[n][k], steps[start + i]
            for j, t in enumerate(offsets):
                views[n][r + 4 * i + j, k] = x + t * h
        values = evaluator(stacked, rows)
        if first:
            _validate(values, f0, objective, inputs, stacked, r)
            values = values[1:]
            first = False
        results.extend(values.reshape(-1, 4).tolist())
    objective.count += 4 * len(entries) + 1
    return results


def _validate(values, f0, objective, inputs, stacked, r):
    """The batch must agree with one-at-a-time runs: its unperturbed row and two perturbed rows."""
    if not close(float(values[0]), f0):
        raise BatchUnsupported("the batched run disagrees with the recorded run")
    for row in (r, len(values) - 1):
        point = {n: stacked[n][row].copy() for n in inputs}
        saved = objective.count
        single = objective(point)
        objective.count = saved
        if not close(float(values[row]), single):
            raise BatchUnsupported("the batched run disagrees with single runs")
