"""Compile once, run many: `Function` loads a target once (parse, resolve, compile) and evaluates
or differentiates it at any number of points; `ReplayRunner` is the same for the checks'
repeated plain runs (perturbed points, hand formulas, check-file values).

The first run at a given input signature (shapes, dtypes, working dtype, limits) is a plain
interpreted run; the second is interpreted with the inputs watched, and its tape kept as a trace
(diff/replay.py), with a guard for every read of a traced value as a plain number the run made
(diff/replay_guards.py); later runs with the same signature replay the trace. A run that reads
something no guard can state keeps no trace (`Unkept`, its reason counted at each later run in
`Function.fallbacks` and given by `Function.blocker`), as does a program that takes derivatives
itself for every run but its gradient in every input. A run whose replay falls back is
interpreted (diff/fallbacks.py: each fallback is an exception of the engine's own, counted by
reason). A replayed step that raises is confirmed by the interpreter: its located error is the
answer if it fails too; if it does not, the replay's error propagates (a bug, never a silent
slowdown). A program whose guards read traced values keeps a few paths per signature
(diff/replay_paths.py): a replay that meets a read none of them made is interpreted, and its
run recorded as one more path."""
from __future__ import annotations

from contextlib import contextmanager
from importlib import import_module

from dataclasses import replace

from ...parser.errors import SourceError
from ..core import lazy, ops
from ..core.errors import EngineError
from ..core.numbers import all_finite
from ..core.notes import NOTES, reset as reset_notes, traced_only
from ..core.ownership import handing_out, owned
from ..core.tape import Tape, Var, strip
from ..lang.recorded_decisions import recording_decisions
from ..lang.transforms import nested_derivatives
from ..lang.target import Runner, bind_inputs, check_output, load
from ..lang.values import floats_only, set_dtype, shape_of
from . import large_trace, reverse
from .common import check_wrt, hosted, ones_like_output, seed_for
from .fallbacks import (CONFIRMED_ERRORS, Fallback, LoweringRefused, NonFinite, PathChanged,
                        StepFailed, StrictFallback, Unsupported, count, differs, strict)
from .large_trace import FUSES_LESS, OVER_BUDGET, TRACE_MAX_BYTES, fit_for_replay, holds_large_arrays
from .trace_cache import MAX_TRACES, NOT_REPLAYABLE, Unkept, input_signature, keep_trace, large_inputs, plain_run


class OnFirstUse:
    """The names of the trace-and-replay modules, each imported when a run first records or
    replays a trace: a single plain run (the CLI's) never loads them, nor start-up."""
    WHERE = {"same_bits": "bits", "PathChanged": "replay_guards", "live_kinks": "replay_sweep",
             **dict.fromkeys(("record_trace", "replay_adjoints", "replay_output", "replay_values"), "replay"),
             **dict.fromkeys(("filed", "new_path", "refused", "replay_entry"), "replay_paths"),
             "whole_run_bytes": "replay_release",
             **dict.fromkeys(("compiled_grad", "compiled_output", "compiled_value", "latest", "same_results"),
                             "replay_results")}

    def __getattr__(self, name):
        module = import_module(f"{__package__}.{self.WHERE[name]}")
        value = getattr(module, name)
        setattr(self, name, value)          # a plain attribute from then on
        return value


replaying = OnFirstUse()


PLAIN = object()        # a signature's first run: a plain interpreted one, no fallback


class Function:
    """A target compiled once. Inputs come as a dict, as keywords, or both; results are numbers
    and numpy arrays, the caller's alone (the methods that make them are `handing_out`).
    `evaluate_result` and `grad_result` give the full results the commands use; every method
    goes through `run(kind, inputs)`. `fallbacks`: {reason: count} of the runs a replay handed
    to the interpreter or to a slower lowering (diff/fallbacks.py)."""

    def __init__(self, source_or_path=None, fn=None, of=None, target=None):
        self.target = target if target is not None else load(source_or_path, fn, of)
        self.inputs = list(self.target.inputs)
        self.names = tuple(self.inputs)
        # a program that takes derivatives itself replays only its gradient in every input: a
        # plain run sweeps its inner tapes on plain numbers (the rules' shortcuts for those), a
        # gradient's on the boxes its trace recorded. Which kinds of run may replay is known
        # before any run (the program names grad or value_and_grad); a recording run that takes
        # a derivative under another name keeps no trace (`kept`)
        self.gradient_only = nested_derivatives(self.target.node)
        self.traces: dict = {}
        # per signature not recorded yet: the most elements a plain run at it ran inside core/lazy.py's
        # regions (its recording's fit_for_replay compares its trace's regions with them)
        self.fused_lazily: dict = {}
        # this Function's own counts; `replays`, `interpreted` and `fallbacks` add its variants'
        self.own_replays = 0        # runs answered by a replay (for tests and benchmarks)
        self.own_interpreted = 0    # runs made by the interpreter
        self.own_fallbacks: dict = {}   # {reason: count}
        self.variants: dict = {}    # per defaulted parameters or integer data given: their own Function (own traces)

    @property
    def replays(self) -> int:
        """Runs answered by a replay, this Function's and its variants' (`given`) together."""
        return self.own_replays + sum(v.replays for v in self.variants.values())

    @property
    def interpreted(self) -> int:
        """Runs made by the interpreter, this Function's and its variants' together."""
        return self.own_interpreted + sum(v.interpreted for v in self.variants.values())

    @property
    def fallbacks(self) -> dict:
        """{reason: count} of the runs a replay handed on, this Function's and its variants' together."""
        return with_variants(self.own_fallbacks, self.variants)

    @property
    def blocker(self) -> str | None:
        """Why runs of this program are not replayed, as its recording runs found it: the reason
        the latest signature whose recorded run could not be kept gives (a read no guard can
        state, a tape too large...), or None where every run recorded so far was kept."""
        return _unkept_reason(self.traces, self.variants)

    def given(self, at) -> "Function":
        """The Function whose inputs are this one's and the defaulted parameters `at` gives
        (itself where it gives none): a run with `k` given and one with its default never
        share a trace."""
        target = self.target.given(at or {})
        if target is self.target:
            return self
        return variant_of(self.variants, target, lambda given: Function(target=given))

    def __repr__(self):
        return f"<autodiff.Function {self.target.describe()}>"

    # ---- the Python API: numbers in, numbers out ----
    def __call__(self, at=None, /, **inputs):
        return self.evaluate_result(_merge(at, inputs)).value

    def grad(self, at=None, /, *, wrt=None, seed=None, **inputs) -> dict:
        """The gradient as {input name: number or array}."""
        return self.grad_result(_merge(at, inputs), wrt, seed).gradient

    def value_and_grad(self, at=None, /, *, wrt=None, seed=None, **inputs) -> tuple:
        result = self.grad_result(_merge(at, inputs), wrt, seed)
        return result.value, result.gradient

    def jacobian(self, at=None, /, *, wrt=None, mode="auto", **inputs) -> dict:
        """{input name: array of shape output.shape + input.shape}: replayed in the mode chosen
        (reverse: one sweep per output element; forward: stacked tangents), else interpreted."""
        if mode not in ("auto", "forward", "reverse"):
            raise ValueError(f"mode must be auto, forward or reverse, not {mode!r}")
        return self.run("jacobian " + mode, _merge(at, inputs), wrt)

    def hessian(self, at=None, /, *, wrt=None, **inputs) -> dict:
        """{a: {b: array of shape a.shape + b.shape}}: replayed (diff/replay_higher.py) or interpreted."""
        return self.run("hessian", _merge(at, inputs), wrt)

    def forward_grad_result(self, at, wrt=None, seed=None, dtype_name="float64", limits=None):
        """The gradient by forward mode, as diff/forward.py's `gradient` gives it: replayed with
        stacked tangents where the trace allows, else interpreted."""
        return self.run("forward grad", at, wrt, seed, dtype_name, limits)

    def derivatives(self, at=None, /, *, order=1, method="reverse", wrt=None, **inputs) -> list:
        """[f', f'', ..., f^(order)] of a scalar function in its one scalar input (or in `wrt`)."""
        return self.derivatives_result(_merge(at, inputs), order, method, wrt).derivatives

    def derivatives_result(self, at, order=1, method="reverse", wrt=None, dtype_name="float64", limits=None):
        """diff/higher.py's `derivatives`: replayed with nested tapes or duals over the trace
        where it allows (diff/replay_derivatives.py), else interpreted."""
        from .higher import derivatives, varied_input      # n-th derivatives load only when asked for
        self = self.given(at)
        try:
            name = varied_input(self.target, wrt)
        except SourceError:                 # the driver's error, raised where it raises it
            self.own_interpreted += 1
            return owned(derivatives(None, at, order, method, dtype_name=dtype_name, limits=limits,
                                            target=self.target, wrt=wrt))
        return self.run("derivatives", at, [name], (order, method), dtype_name, limits)

    def evaluate_result(self, at, dtype_name="float64", limits=None) -> reverse.RunResult:
        return self.run("value", at, None, None, dtype_name, limits)

    def grad_result(self, at, wrt=None, seed=None, dtype_name="float64", limits=None) -> reverse.GradResult:
        """The reverse-mode gradient, as `api.grad` gives it (for any inputs in `wrt`: the replay
        sweeps only the steps that depend on them, as the interpreter's tape would hold)."""
        return self.run("grad", at, wrt, seed, dtype_name, limits)

    # ---- the one path ----
    @handing_out
    def run(self, kind: str, at, wrt=None, seed=None, dtype_name="float64", limits=None):
        """One run of `kind` ("value", "grad", "forward grad", "hessian", "jacobian auto",
        "jacobian forward", "jacobian reverse", "derivatives": `seed` (order, method)) at the
        inputs `at`: replayed from the trace kept for their signature; where there is none yet,
        recorded; where the replay falls back, the fallback counted by reason and interpreted."""
        if self.target.defaulted or not floats_only((at or {}).values()):
            self = self.given(at)           # defaulted parameters or integer data given: their own Function
        replay, interpret, record = KINDS[kind]
        set_dtype(dtype_name)
        inputs = bind_inputs(self.target, at or {})            # read only: no copy
        checked = None if kind == "value" else check_wrt(self.target, wrt)
        key = input_signature(inputs, dtype_name, limits) + (self.names,)
        entry = PLAIN
        try:
            entry = self._entry(key, kind, checked)
            if entry is not PLAIN and entry is not None:
                result = replay(self, entry, inputs, checked, seed)
                self.own_replays += 1
                return hosted(result)
        except PathChanged as change:       # a path not kept: recorded below, or a tie: interpreted
            count(self.own_fallbacks, change)
            if replaying.new_path(entry, change):
                entry = None
        except Fallback as fallback:
            count(self.own_fallbacks, fallback)
            if fallback.__class__ is NonFinite and strict():
                self.own_interpreted += 1
                whole = interpret(self, kind, at, inputs, wrt, checked, seed, dtype_name, limits, whole=True)
                return _answer(kind, _not_finite_either(fallback, whole))
        except StrictFallback:
            raise
        except CONFIRMED_ERRORS as error:   # a replayed step raised: the interpreter must as well
            self.own_interpreted += 1
            confirm(error, self.own_fallbacks,
                    lambda: interpret(self, kind, at, inputs, wrt, checked, seed, dtype_name, limits))
        if entry is None:
            return record(self, kind, at, inputs, key, wrt, checked, seed, dtype_name, limits)
        self.own_interpreted += 1
        if entry is PLAIN:
            return first_run(self.traces, key, interpret, self, kind, at, inputs, wrt, checked, seed, dtype_name,
                             limits, fused_lazily=self.fused_lazily)
        return interpret(self, kind, at, inputs, wrt, checked, seed, dtype_name, limits)

    def _entry(self, key, kind, wrt):
        """What the traces keep for `key`: a trace (or paths) to replay, None (record one now) or
        PLAIN (the signature's first run); Unsupported where no run of this kind replays."""
        if self.gradient_only and (kind != "grad" or wrt != self.inputs):
            raise Unsupported("a derivative inside the program: only its gradient in every input replays")
        entry = self.traces.get(key, PLAIN)
        if entry is PLAIN:
            keep_trace(self.traces, key, None)
        elif entry.__class__ is Unkept:
            raise Unsupported(entry.reason)
        elif entry is not None and entry.grads_interpreted and kind != "value":
            raise Unsupported(FUSES_LESS)
        elif entry is not None and entry.undifferentiated and kind != "value" and \
                any(self.inputs.index(name) in entry.undifferentiated for name in wrt):
            raise Unsupported("a derivative in an input read as a count (the interpreter refuses it)")
        return entry

    # ---- per kind: replay, interpret, record ----
    def _replay_value(self, entry, inputs, wrt, seed):
        fast = compiled(replaying.compiled_value, entry, inputs, self.own_fallbacks)
        if fast is not None:
            return fast
        notes = reset_notes()
        trace, values = replaying.replay_entry(entry, list(inputs.values()), release=())     # no sweep follows
        if trace.untraced_kinks:
            raise Unsupported("a kink noted outside the trace")
        value = _output(trace, values)
        return reverse.RunResult(value=value, inputs=inputs, signature=list(trace.signature),
                                 kinks=list(notes.kinks), steps=trace.run_steps)

    def _interpret_value(self, kind, at, inputs, wrt, checked, seed, dtype_name, limits, whole=False):
        return reverse.evaluate(None, inputs, dtype_name=dtype_name, limits=limits, target=self.target)

    def _record_value(self, kind, at, inputs, key, wrt, checked, seed, dtype_name, limits):
        """A value by a recording run, with a plain run's notes: watching the inputs notes ties of
        comparisons on traced values (`s <= 2` at s == 2), which a plain run does not make."""
        result = self._try_record(inputs, key, limits)
        if result.__class__ is Unkept or result.kinks:
            plain = reverse.evaluate(None, inputs, dtype_name=dtype_name, limits=limits, target=self.target)
            self._file_refused(key, result)
            return plain
        return hosted(result)

    def _try_record(self, inputs, key, limits):
        """The recording run, or Unkept where watching the inputs makes it raise: the caller
        files it (`_file_refused`) once a plain run at these inputs gives its value, gradient or
        matrix; where the plain run raises as well, its error is the answer and the signature
        keeps what it kept (a value no path may take, as `ones(n)` at n = 2.5, spoils none)."""
        try:
            return self._record_evaluate(inputs, key, limits)
        except (SourceError, EngineError) as error:
            return Unkept(f"a recording run raised where a plain run does not ({error})")

    def _file_refused(self, key, recorded) -> None:
        """File `recorded`, a recording run's Unkept (`_try_record`), for `key`: nothing otherwise."""
        if recorded.__class__ is Unkept:
            file_trace(self.traces, key, recorded)

    def _interpret_grad(self, kind, at, inputs, wrt, checked, seed, dtype_name, limits, whole=False):
        return reverse.grad(None, inputs, checked, seed, dtype_name=dtype_name, limits=limits, target=self.target)

    def _record_gradient(self, kind, at, inputs, key, wrt, checked, seed, dtype_name, limits):
        # this gradient's tape is not the one to keep, or (large inputs) its sweep is the fused one
        if checked != self.inputs or large_inputs(key):
            self.own_interpreted += 1
            with fusing(self.fused_lazily, key):
                result = reverse.grad(None, inputs, checked, seed, dtype_name=dtype_name, limits=limits,
                                      target=self.target)
            recorded = self._try_record(inputs, key, limits)
            self._file_refused(key, recorded)
            if recorded.__class__ is not Unkept and checked == self.inputs:
                self._check_replayed_grad(key, inputs, checked, seed, result)
            return result
        return self._record_grad(inputs, checked, seed, key, dtype_name, limits)

    def _replay_matrix(self, entry, inputs, wrt, seed, what):
        """A derivative from the trace: `what` is "hessian", "gradient" (forward mode, `seed` its
        seed), "derivatives" (`seed`: the order and the method) or a Jacobian's mode
        (diff/replay_higher.py's `replayed_derivative`; a trace holding complex values, its
        drivers' complex forms: diff/replay_complex.py; n-th derivatives, both forms:
        diff/replay_derivatives.py). Each loads only when asked for."""
        if replaying.whole_run_bytes(entry) > large_trace.TRACE_MAX_BYTES:
            raise Unsupported("a trace whose every value is more than a trace may hold (it replays values and "
                              "gradients, which release them)")
        if what == "derivatives":
            from .replay_derivatives import replayed_derivatives as replayed
        else:
            from .replay_higher import replayed_derivative as replayed
        trace, values = replaying.replay_entry(entry, list(inputs.values()))
        if trace.complex_values and what != "derivatives":
            from .replay_complex import replayed_complex as replayed
        result = replayed(what, trace, values, inputs, wrt, [self.inputs.index(w) for w in wrt], self.target, seed)
        if result is None:
            raise Unsupported(f"the replayed {what} declines these values (a note, a non-finite number)")
        return result

    def _interpret_matrix(self, kind, at, inputs, wrt, checked, seed, dtype_name, limits, whole=False):
        """The interpreted driver's answer (`whole`: its whole result, the value beside the matrix)."""
        at = dict(at or {})
        if kind == "hessian":
            from .higher import hessian         # Hessians load only when asked for
            result = hessian(None, at, wrt, target=self.target)
        elif kind == "derivatives":
            from .higher import derivatives
            return derivatives(None, at, *seed, dtype_name=dtype_name, limits=limits, target=self.target, wrt=wrt)
        elif kind == "forward grad":
            from .forward import gradient       # forward mode loads only when asked for
            return gradient(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=self.target)
        else:
            from .forward import jacobian
            result = jacobian(None, at, wrt, kind.split()[1], target=self.target)
        return result if whole else _answer(kind, result)

    def _record_matrix(self, kind, at, inputs, key, wrt, checked, seed, dtype_name, limits):
        recorded = self._try_record(inputs, key, limits)    # counted as the interpreted run
        result = self._interpret_matrix(kind, at, inputs, wrt, checked, seed, dtype_name, limits)
        self._file_refused(key, recorded)
        return result

    # ---- recording ----
    def _record_evaluate(self, inputs, key, limits):
        """An interpreted run with every input watched; its tape becomes the trace for `key`."""
        self.own_interpreted += 1
        notes = reset_notes()
        tape = Tape(persistent=True, keep_values=True)    # a trace reads its values' types
        with recording_decisions(watching=tape) as logged:      # compiled to log its decisions
            runner = Runner(self.target, limits)
            out = runner.run({k: tape.watch(v) for k, v in inputs.items()})
        check_output(out, self.target)
        interp = runner.interp
        result = reverse.RunResult(value=reverse.in_working_dtype(strip(out)), inputs=inputs,
                                   signature=interp.signature, kinks=list(notes.kinks), steps=interp.steps)
        trace = kept(replaying.record_trace(tape, out, interp.signature, interp.steps, logged), self.gradient_only)
        refusal = self._refusal(trace, inputs, result) if trace else None   # replayed where recorded
        self._file_checked(key, fit_for_replay(trace, tape, self.fused_lazily.pop(key, 0)), refusal)
        notes.kinks = list(result.kinks)            # as the interpreted run left them
        return result

    def _file_checked(self, key, trace, refusal) -> None:
        """Keep `trace` for `key`, as refused where its replay at the recording was (`_refusal`);
        a tie (PathChanged) keeps nothing: the path is recorded at the next call."""
        if refusal.__class__ is not PathChanged:
            file_trace(self.traces, key, trace if refusal is None else _refused(self.traces, key, trace, refusal))

    def _refusal(self, trace, inputs, result):
        """Why `trace`, replayed at once where it was recorded, is refused (counted), or None where
        it agrees with the interpreted run `result`: a tie met (the interpreter decides there), a
        kink note or a number that differs (fallbacks.differs). A value's replay (release=()):
        it keeps what a later step reads, not a second copy of the recorded run's values."""
        notes = reset_notes()
        try:
            value = _output(trace, replaying.replay_values(trace, list(inputs.values()), release=()))
        except PathChanged as change:               # a tie: this path is not kept
            count(self.own_fallbacks, change)
            return change
        if replaying.same_bits(value, result.value) and notes.kinks == result.kinks:
            return None
        refusal = differs(replaying.same_bits(value, result.value), "value", self.gradient_only)
        count(self.own_fallbacks, refusal)
        return refusal

    def _record_grad(self, inputs, wrt, seed, key, dtype_name, limits):
        self.own_interpreted += 1
        with recording_decisions() as logged:
            result = reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits,
                                  target=self.target, keep_tape=True)
        tape, index = result.tape, result.output_index
        out = tape.entries[index] if index is not None else None
        output = Var(out.value, tape, index, tape.level) if out is not None else result.value
        result.tape = result.output_index = result.seed = None     # as a plain gradient leaves them
        untraced = len(traced_only(NOTES.kinks)) != len(NOTES.kinks)
        trace = kept(replaying.record_trace(tape, output, result.signature, result.steps, logged), self.gradient_only)
        if holds_large_arrays(tape):    # the lean tape fuses what this one ran op by op: the plain run's numbers
            with fusing(self.fused_lazily, key):
                result = reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits,
                                      target=self.target)
        trace = fit_for_replay(trace, tape, self.fused_lazily.pop(key, 0))
        if trace and trace.grads_interpreted:      # its values alone replay: checked as a value's recording is
            trace.untraced_kinks = untraced
            self._file_checked(key, trace, self._refusal(trace, inputs, result))
            return result
        if trace:                                   # replayed at once where it was recorded: must agree
            trace.untraced_kinks = untraced
            try:
                again = self._replay_grad(trace, inputs, wrt, seed)
            except PathChanged:                     # a tie: this path is not kept
                return result
            except Fallback as fallback:            # a nan here: record at the next call
                count(self.own_fallbacks, fallback)
                return _not_finite_either(fallback, result)
            if not replaying.same_results(hosted(again), result):
                refusal = _gradient_differs(hosted(again), result, self.gradient_only)
                count(self.own_fallbacks, refusal)
                trace = _refused(self.traces, key, trace, refusal)
        file_trace(self.traces, key, trace)
        return result

    def _check_replayed_grad(self, key, inputs, wrt, seed, result) -> None:
        """A trace recorded apart from its gradient is kept only if its replay gives that gradient."""
        entry = self.traces.get(key)
        if not entry or entry.grads_interpreted:  # (its derivatives are interpreted: its value was checked)
            return
        try:
            again = self._replay_grad(entry, inputs, wrt, seed)
        except PathChanged:                         # a tie: the trace stays, as _record_grad's does
            return
        except Fallback as fallback:                # a nan here: the trace stays
            count(self.own_fallbacks, fallback)
            _not_finite_either(fallback, result)
            return
        if not replaying.same_results(hosted(again), result):    # the path that answered is refused
            refusal = _gradient_differs(hosted(again), result, self.gradient_only)
            count(self.own_fallbacks, refusal)
            self.traces[key] = _refused(self.traces, key, replaying.latest(entry), refusal)

    def _replay_grad(self, entry, inputs, wrt, seed):
        """The gradient from a replay; NonFinite where a number is not finite (its provenance:
        the interpreter's run traces it), PathChanged where the inputs take a path not kept."""
        if seed is None and wrt == self.inputs:
            fast = compiled(replaying.compiled_grad, entry, inputs, self.own_fallbacks)
            if fast is not None:
                return fast
        notes = reset_notes()
        watched = [self.inputs.index(w) for w in wrt]
        trace, values = replaying.replay_entry(entry, list(inputs.values()), release=watched)   # what its sweep reads
        value = _output(trace, values)
        if value.__class__ is not float:                # (a float is no complex loss: no call)
            reverse.refuse_complex_loss(value, seed, self.target)
        if seed is not None:
            seed_value, reduced = seed_for(seed, value), "seed"
        else:
            seed_value, reduced = ones_like_output(value), ("sum" if shape_of(value) else None)
        forward_notes, detached = len(notes.kinks), len(notes.detached)
        # its all_finite below tests a generated sweep's adjoints
        length, adjoints = replaying.replay_adjoints(trace, values, seed_value, watched, True, self.own_fallbacks)
        gradient, unconnected = reverse.reported_gradients(wrt, adjoints, inputs, trace.complex_values)
        if not all_finite([value, *gradient.values()]):
            # the generated sweep skips the strong zero's per-product tests: the checked sweep's
            # numbers, and where they are not finite either, the interpreter's (their provenance)
            del notes.kinks[forward_notes:], notes.detached[detached:]
            length, adjoints = replaying.replay_adjoints(trace, values, seed_value, watched, False, self.own_fallbacks)
            gradient, unconnected = reverse.reported_gradients(wrt, adjoints, inputs, trace.complex_values)
            if not all_finite([value, *gradient.values()]):
                raise NonFinite()
        kinks = replaying.live_kinks(trace, watched, notes.kinks, forward_notes)   # those wrt's derivative meets
        if kinks is None:
            raise Unsupported("a kink the replay cannot place (steps on both sides of it)")
        return reverse.GradResult(value=value, gradient=gradient, inputs=inputs, unconnected=unconnected,
                                  reduced=reduced, signature=list(trace.signature), kinks=kinks,
                                  tape_length=length, steps=trace.run_steps)


def first_run(traces: dict, key, interpret, *call, fused_lazily=None):
    """The first, plain run at a signature: `interpret(*call)`. Its fused regions give the bits of
    the op-by-op run, as a replay's do (core/lazy.py); where the values its regions never made
    come to more than a trace may hold, a recording run (which keeps every value) would not fit:
    the signature keeps no trace, and no call pays for recording one (OVER_BUDGET). The equations
    its regions ran go to `fused_lazily` (`fusing`), for the signature's recording."""
    pending = lazy.PENDING_BYTES[0]
    with fusing(fused_lazily, key):
        out = interpret(*call)
    if lazy.PENDING_BYTES[0] - pending > TRACE_MAX_BYTES and traces.get(key) is None:
        keep_trace(traces, key, OVER_BUDGET)
    return out


@contextmanager
def fusing(fused_lazily: dict, key):
    """Keep in `fused_lazily[key]` the most elements a plain run at `key` ran inside its regions
    (core/lazy.py's FUSED): large_trace.fit_for_replay interprets the gradients of a trace whose
    regions hold fewer, whichever kind of run records it (None: nothing kept)."""
    if fused_lazily is None:
        yield
        return
    before = lazy.FUSED[0]
    yield
    fused = lazy.FUSED[0] - before
    if fused > fused_lazily.get(key, 0):
        if key not in fused_lazily and len(fused_lazily) >= MAX_TRACES:
            fused_lazily.pop(next(iter(fused_lazily)))      # (signatures never recorded: the oldest goes)
        fused_lazily[key] = fused


def _matrix(what):
    return lambda f, entry, inputs, wrt, seed: f._replay_matrix(entry, inputs, wrt, seed, what)


# kind: (replay, interpret, record)
KINDS = {
    "value": (Function._replay_value, Function._interpret_value, Function._record_value),
    "grad": (Function._replay_grad, Function._interpret_grad, Function._record_gradient),
    "forward grad": (_matrix("gradient"), Function._interpret_matrix, Function._record_matrix),
    "hessian": (_matrix("hessian"), Function._interpret_matrix, Function._record_matrix),
    "derivatives": (_matrix("derivatives"), Function._interpret_matrix, Function._record_matrix),
    **{"jacobian " + mode: (_matrix(mode), Function._interpret_matrix, Function._record_matrix)
       for mode in ("auto", "forward", "reverse")},
}


def _gradient_differs(replayed, interpreted, nested: bool) -> Fallback:
    return differs(replaying.same_results(replace(replayed, kinks=interpreted.kinks), interpreted), "gradient", nested)


def _refused(traces: dict, key, trace, refusal: Fallback):
    """What `key` keeps after `trace`'s replay where it was recorded was refused for `refusal`: a
    guarded trace becomes a refused path of the signature's paths (diff/replay_paths.py: the
    kept paths keep replaying; calls that take it are interpreted, counted with its reason);
    an unguarded one, the signature's only path, makes it not replayable (its refusals: a replay
    that differs, which a call at other values cannot be trusted to avoid, or a kink noted by a
    constant part, which every call notes). A tie is no refusal of a path: it holds at one
    point only, so the path is not kept and is recorded when a call takes it again."""
    if trace.__class__ is Unkept:
        return trace
    return replaying.refused(traces.get(key), trace, refusal.reason) or NOT_REPLAYABLE


def _not_finite_either(fallback, result):
    """`result`, the interpreter's whole result (a gradient's, a Hessian's, a Jacobian's) where a
    replay's was not finite; under AUTODIFF_STRICT=1 it must not be finite either (its value or
    its derivative; else the replay differs: StrictFallback)."""
    if fallback.__class__ is NonFinite and strict() and all_finite(_numbers(result)):
        what = "n-th derivative" if _derivative(result) == "derivatives" else _derivative(result)
        raise StrictFallback(f"AUTODIFF_STRICT=1: a replayed {what} is not finite where the interpreter's is")
    return result


def _derivative(result) -> str:
    """Which derivative a whole result holds (a Hessian's holds its gradient too)."""
    return next(name for name in ("hessian", "jacobian", "gradient", "derivatives") if hasattr(result, name))


def _numbers(result) -> list:
    """A whole result's value and its derivative's arrays (a Hessian's blocks, each order's
    derivative)."""
    derivative = getattr(result, _derivative(result))
    if hasattr(result, "hessian"):
        return [result.value, *(block for row in derivative.values() for block in row.values())]
    return [result.value, *(derivative if isinstance(derivative, list) else derivative.values())]


def _answer(kind: str, result):
    """What `Function.run` gives of an interpreted driver's whole result: a Hessian's or a
    Jacobian's matrix alone, any other result as it is."""
    if kind == "hessian":
        return result.hessian
    return result.jacobian if kind.startswith("jacobian") else result


def compiled(run, entry, inputs, fallbacks):
    """`run(entry, inputs)`, a compiled replay's result (None where it declines), or None where its
    lowering is refused, that counted in `fallbacks` by its reason."""
    try:
        return run(entry, inputs)
    except LoweringRefused as refused:
        count(fallbacks, refused)
        return None


def _output(trace, values):
    """A replay's output as an interpreted run's result holds it: in the working dtype (a
    float32 run's constant output, as 1/3, is a float32, not the Python float it was made as)."""
    return reverse.in_working_dtype(strip(replaying.replay_output(trace, values)))


def _unkept_reason(traces: dict, variants: dict) -> str | None:
    """The reason of the latest signature not kept, else the latest such of a variant's."""
    for entry in reversed(traces.values()):
        if entry.__class__ is Unkept:
            return entry.reason
    for variant in reversed(variants.values()):
        if variant.blocker is not None:
            return variant.blocker
    return None


def variant_of(variants: dict, target, make):
    """The variant (`make(target)`, made once) kept in `variants` for `target`, a program given
    defaulted parameters or integer data: Function's and ReplayRunner's one key for it."""
    key = (tuple(target.inputs), target.integers)
    variant = variants.get(key)
    if variant is None:
        variant = variants[key] = make(target)
    return variant


def with_variants(own: dict, variants: dict) -> dict:
    """{reason: count}: a Function's (or ReplayRunner's) own fallbacks and its variants' (their
    own Functions for defaulted parameters or integer data given) added, the one figure a caller
    of the program reads."""
    total = dict(own)
    for variant in variants.values():
        for reason, times in variant.fallbacks.items():
            total[reason] = total.get(reason, 0) + times
    return total


def file_trace(traces: dict, key, trace) -> None:
    """Keep a recorded trace for `key` in `traces` (None: a path not to keep; Unkept: the tape
    could not be replayed, nor can any run at that signature, for its reason): Function's and
    ReplayRunner's one filing."""
    entry = traces.get(key)
    if trace is None:
        if entry is None:
            keep_trace(traces, key, NOT_REPLAYABLE)
        return
    keep_trace(traces, key, trace if trace.__class__ is Unkept else replaying.filed(entry, trace))


def confirm(error, fallbacks: dict, interpret):
    """Raise the answer to a run whose replay raised `error` (a step's error): the interpreter's
    own located error, where `interpret()` fails too (counted in `fallbacks` as a failed step);
    where it does not, `error` itself, noted as a bug in the replay. Function's and
    ReplayRunner's one way."""
    try:
        interpret()
    except CONFIRMED_ERRORS:
        count(fallbacks, StepFailed(f"a replayed step raised {type(error).__name__}"))
        raise
    error.add_note("autodiff: a replay raised this where the interpreter did not (a bug in the replay)")
    raise error


def kept(trace, gradient_only: bool):
    """A recorded trace as a signature may keep it: Unkept where its run took a derivative inside
    the program that the program does not name (grad under another name: its value and other
    derivatives would replay a sweep made on boxes, where a plain run's is made on numbers)."""
    if trace and trace.nested and not gradient_only:
        return Unkept("a derivative inside the program under another name than grad or value_and_grad")
    return trace


def _merge(at, inputs) -> dict:
    merged = dict(at or {})
    merged.update(inputs)
    return merged


class ReplayRunner:
    """`lang.target.Runner`'s interface (call it on raw values: the raw output; `signature`),
    replaying the trace of its first run at each input signature."""

    def __init__(self, target, limits=None):
        self.target = target
        self.runner = Runner(target, limits)
        self.interp = self.runner.interp
        self.limits = limits
        # a program that takes derivatives itself: only Function's gradients replay it
        self.nested = nested_derivatives(target.node)
        self.traces: dict = {}
        self.variants: dict = {}        # per defaulted parameters given (Function.given's reason)
        self.signature = ()
        self.own_fallbacks: dict = {}   # {reason: count}, as Function's (`fallbacks` adds its variants')

    @property
    def fallbacks(self) -> dict:
        return with_variants(self.own_fallbacks, self.variants)

    @property
    def blocker(self) -> str | None:
        """As Function.blocker (a program that takes derivatives itself: that)."""
        if self.nested:
            return "a derivative inside the program (only Function's gradients replay it)"
        return _unkept_reason(self.traces, self.variants)

    def __call__(self, values: dict):
        target = self.target.given(values)
        if target is not self.target:       # defaulted parameters given: their own runner and traces
            variant = variant_of(self.variants, target, lambda given: ReplayRunner(given, self.limits))
            out = variant(values)
            self.signature = variant.signature
            return out
        key = input_signature(values, "", None)
        first = key not in self.traces
        if self.nested or plain_run(self.traces, key):
            out = first_run(self.traces, key, self.runner, values) if first else self.runner(values)
            self.signature = self.runner.signature
            return out
        entry = self.traces.get(key)
        if entry is not None:
            try:
                out = self._replayed(entry, [values[k] for k in self.target.inputs])
            except PathChanged as change:   # a path not kept: recorded below, or a tie
                count(self.own_fallbacks, change)
                out = None
                entry = None if replaying.new_path(entry, change) else entry
            except Fallback as fallback:
                count(self.own_fallbacks, fallback)
                out = None
            except StrictFallback:
                raise
            except CONFIRMED_ERRORS as error:  # a replayed step raised: the interpreter must as well
                confirm(error, self.own_fallbacks, lambda: self.runner(values))
            if out is not None:
                return out
        if entry is not None:
            out = self.runner(values)               # the trace stays: the same path, a failing step
            self.signature = self.runner.signature
            return out
        tape = Tape(persistent=True, keep_values=True)    # a trace reads its values' types
        with recording_decisions(watching=tape) as logged:      # compiled to log its decisions
            runner = Runner(self.target, self.limits)
            out = runner.run({k: tape.watch(values[k]) for k in self.target.inputs})
        self.signature = tuple(runner.interp.signature)
        check_output(out, self.target)
        trace = fit_for_replay(kept(replaying.record_trace(tape, out, self.signature, runner.interp.steps, logged),
                                    False), tape)
        file_trace(self.traces, key, trace)
        return strip(out)

    def _replayed(self, entry, leaves: list):
        """The replayed output (the signature set), or a Fallback."""
        fast = compiled(replaying.compiled_output, entry, leaves, self.own_fallbacks)
        if fast is not None:
            self.signature = fast[0].signature
            return fast[1]
        trace, replayed = replaying.replay_entry(entry, leaves, release=())     # its output alone is read
        out = strip(replaying.replay_output(trace, replayed))
        self.signature = trace.signature
        return out

