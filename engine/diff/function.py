"""Compile once, run many: `Function` loads a target once (parse, resolve, compile) and evaluates
or differentiates it at any number of points; `ReplayRunner` is the same for the checks'
repeated plain runs (perturbed points, hand formulas, check-file values).

The first run at a given input signature (shapes, dtypes, working dtype, limits) is a plain
interpreted run; the second is interpreted with the inputs watched, and its tape kept as a trace
(diff/replay.py); later runs with the same signature replay the trace. A program whose constants
may depend on its inputs, or whose control flow does other than through decisions a guard
checks (if/while conditions, conditional expressions, a for loop's range(): lang/replayable.py
says why), is always interpreted, as is any run whose replay fails: the
interpreter then reports the error with its line and column, as it always does. A program whose
guarded decisions read traced values keeps a few paths per signature (diff/replay_paths.py):
a replay that meets a decision none of them took is interpreted, and its run recorded as one
more path."""
from __future__ import annotations

from ..core import ops
from ..core.notes import NOTES, reset as reset_notes, traced_only
from ..core.ownership import handing_out
from ..core.tape import Tape, Var, strip
from ..lang.recorded_decisions import recording_decisions
from ..lang.replayable import nested_derivatives, replay_blocker
from ..lang.target import Runner, bind_inputs, check_output, load
from ..lang.values import set_dtype, shape_of
from . import reverse
from .common import check_wrt, hosted, ones_like_output, seed_for
from .large_trace import RegionCheck, fit_for_replay, holds_large_arrays
from .trace_cache import NOT_REPLAYABLE, input_signature, keep_trace, large_inputs, plain_run


class OnFirstUse:
    """diff/replay_machinery.py's names, imported when a run first records or replays a trace."""

    def __getattr__(self, name):
        from . import replay_machinery      # lazy: a single plain run (the CLI's) never needs it
        value = getattr(replay_machinery, name)
        setattr(self, name, value)          # a plain attribute from then on
        return value


replaying = OnFirstUse()


class Function:
    """A target compiled once. Inputs come as a dict, as keywords, or both; results are numbers
    and numpy arrays, the caller's alone (the methods that make them are `handing_out`).
    `evaluate_result` and `grad_result` give the full results the commands use."""

    def __init__(self, source_or_path=None, fn=None, of=None, target=None):
        self.target = target if target is not None else load(source_or_path, fn, of)
        self.inputs = list(self.target.inputs)
        # why the tape cannot be replayed (None: it can), decided once from the AST
        self.blocker = replay_blocker(self.target.node, self.inputs)
        # a program that takes derivatives itself replays only its gradient in every input: a
        # plain run sweeps its inner tapes on plain numbers (the rules' shortcuts for those), a
        # gradient's on the boxes its trace recorded
        self.gradient_only = self.blocker is None and nested_derivatives(self.target.node)
        self.traces: dict = {}
        self.fuses = RegionCheck(self.target)     # large inputs of a fusing program: interpreted
        self.replays = 0            # runs answered by a replay (for tests and benchmarks)
        self.interpreted = 0        # runs made by the interpreter
        self.variants: dict = {}    # per defaulted parameters given: their own Function (own traces)

    def given(self, at) -> "Function":
        """The Function whose inputs are this one's and the defaulted parameters `at` gives
        (itself where it gives none): a run with `k` given and one with its default never
        share a trace."""
        target = self.target.given(at or {})
        if target is self.target:
            return self
        key = tuple(target.inputs)
        if key not in self.variants:
            self.variants[key] = Function(target=target)
        return self.variants[key]

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

    @handing_out
    def jacobian(self, at=None, /, *, wrt=None, mode="auto", **inputs) -> dict:
        """{input name: array of shape output.shape + input.shape}: replayed in the mode chosen
        (reverse: one sweep per output element; forward: stacked tangents), else interpreted."""
        if mode not in ("auto", "forward", "reverse"):
            raise ValueError(f"mode must be auto, forward or reverse, not {mode!r}")
        merged = _merge(at, inputs)
        self = self.given(merged)
        replayed = self._replay_matrix(merged, wrt, mode)
        if replayed is not None:
            self.replays += 1
            return replayed
        self.interpreted += 1
        from .forward import jacobian      # forward mode loads only when asked for
        return jacobian(None, merged, wrt, mode, target=self.target).jacobian

    @handing_out
    def hessian(self, at=None, /, *, wrt=None, **inputs) -> dict:
        """{a: {b: array of shape a.shape + b.shape}}: replayed (diff/replay_higher.py) or interpreted."""
        merged = _merge(at, inputs)
        self = self.given(merged)
        replayed = self._replay_matrix(merged, wrt, "hessian")
        if replayed is not None:
            self.replays += 1
            return replayed
        self.interpreted += 1
        from .higher import hessian         # Hessians load only when asked for
        return hessian(None, merged, wrt, target=self.target).hessian

    @handing_out
    def forward_grad_result(self, at, wrt=None, seed=None, dtype_name="float64", limits=None):
        """The gradient by forward mode, as diff/forward.py's `gradient` gives it: replayed with
        stacked tangents where the trace allows, else interpreted."""
        self = self.given(at)
        result = self._replay_matrix(at, wrt, "gradient", dtype_name, limits, seed)
        if result is not None:
            self.replays += 1
            return result
        self.interpreted += 1
        from .forward import gradient       # forward mode loads only when asked for
        return gradient(None, at, wrt, seed, dtype_name=dtype_name, limits=limits, target=self.target)

    def derivatives(self, at=None, /, *, order=1, method="reverse", wrt=None, **inputs) -> list:
        """[f', f'', ..., f^(order)] of a scalar function in its one scalar input (or in `wrt`)."""
        return self.derivatives_result(_merge(at, inputs), order, method, wrt).derivatives

    @handing_out
    def derivatives_result(self, at, order=1, method="reverse", wrt=None, dtype_name="float64", limits=None):
        """diff/higher.py's `derivatives`: replayed with nested tapes or duals over the trace
        where it allows (diff/replay_derivatives.py), else interpreted."""
        from .higher import derivatives, varied_input      # n-th derivatives load only when asked for
        self = self.given(at)
        try:
            name = varied_input(self.target, wrt)
        except Exception:                   # the driver's error, raised where it raises it
            name = None
        result = None if name is None else \
            self._replay_matrix(at, [name], "derivatives", dtype_name, limits, (order, method))
        if result is not None:
            self.replays += 1
            return result
        self.interpreted += 1
        return derivatives(None, at, order, method, dtype_name=dtype_name, limits=limits, target=self.target, wrt=wrt)

    def _replay_matrix(self, at, wrt, what, dtype_name="float64", limits=None, seed=None):
        """A derivative from the trace at these inputs' signature (recording one as evaluate_result
        does), or None where it is to be interpreted; `what`: "hessian", "gradient" (forward
        mode, `seed` its seed), "derivatives" (`seed`: the order and the method) or a Jacobian's
        mode (diff/replay_higher.py's `replayed_derivative`)."""
        set_dtype(dtype_name)
        inputs = bind_inputs(self.target, dict(at or {}))
        wrt = check_wrt(self.target, wrt)
        key = input_signature(inputs, dtype_name, limits) + (tuple(self.inputs),)
        if self.blocker is not None or self.gradient_only or plain_run(self.traces, key, self.fuses):
            return None
        entry = self.traces.get(key)
        if entry is None:
            self._record_evaluate(inputs, key, limits)
            self.interpreted -= 1                   # counted by the interpreted driver
            return None
        if what == "derivatives":           # these load only when asked for
            from .replay_derivatives import replayed_derivatives as replayed_derivative
        else:
            from .replay_higher import replayed_derivative
        try:
            trace, values = replaying.replay_entry(entry, list(inputs.values()))
            return hosted(replayed_derivative(what, trace, values, inputs, wrt, [self.inputs.index(w) for w in wrt],
                                              self.target, seed))
        except replaying.PathChanged as change:       # a path not kept: recorded for the next call, or a tie
            if replaying.new_path(entry, change):
                self._record_evaluate(inputs, key, limits)
                self.interpreted -= 1
            return None
        except Exception:                   # a failing step: the interpreter's answer, located
            return None

    # ---- full results ----
    @handing_out
    def evaluate_result(self, at, dtype_name="float64", limits=None) -> reverse.RunResult:
        self = self.given(at)
        set_dtype(dtype_name)
        inputs = bind_inputs(self.target, dict(at or {}))
        key = input_signature(inputs, dtype_name, limits) + (tuple(self.inputs),)   # shared with grads
        if self.blocker is not None or self.gradient_only or plain_run(self.traces, key, self.fuses):
            self.interpreted += 1
            return reverse.evaluate(None, inputs, dtype_name=dtype_name, limits=limits, target=self.target)
        entry = self.traces.get(key)
        if entry is not None:
            fast = replaying.compiled_value(entry, inputs)
            if fast is not None:
                self.replays += 1
                return hosted(fast)
            notes = reset_notes()
            try:
                trace, values = replaying.replay_entry(entry, list(inputs.values()))
                value = None if trace.untraced_kinks else _output(trace, values)
            except replaying.PathChanged as change:   # a path not kept: recorded, or a tie: interpreted
                if replaying.new_path(entry, change):
                    return self._recorded_value(inputs, key, dtype_name, limits)
                value = None
            except Exception:               # the interpreter reports it, located
                value = None
            if value is not None:
                self.replays += 1
                return hosted(reverse.RunResult(value=value, inputs=inputs, signature=list(trace.signature),
                                                kinks=list(notes.kinks), steps=trace.run_steps))
            self.interpreted += 1                   # the trace stays: the same path, a failing step
            return reverse.evaluate(None, inputs, dtype_name=dtype_name, limits=limits, target=self.target)
        return self._recorded_value(inputs, key, dtype_name, limits)

    def _recorded_value(self, inputs, key, dtype_name, limits) -> reverse.RunResult:
        """A value by a recording run, with a plain run's notes: watching the inputs notes ties of
        comparisons on traced values (`s <= 2` at s == 2), which a plain run does not make."""
        result = self._record_evaluate(inputs, key, limits)
        return reverse.evaluate(None, inputs, dtype_name=dtype_name, limits=limits, target=self.target) \
            if result.kinks else hosted(result)

    def _record_evaluate(self, inputs, key, limits):
        """An interpreted run with every input watched; its tape becomes the trace for `key`."""
        self.interpreted += 1
        notes = reset_notes()
        tape = Tape(persistent=True, keep_values=True)    # a trace reads its values' types
        with recording_decisions() as logged:             # compiled to log its decisions
            runner = Runner(self.target, limits)
            out = runner.run({k: tape.watch(v) for k, v in inputs.items()})
        check_output(out, self.target)
        interp = runner.interp
        result = reverse.RunResult(value=reverse.in_working_dtype(strip(out)), inputs=inputs,
                                   signature=interp.signature, kinks=list(notes.kinks), steps=interp.steps)
        trace = replaying.record_trace(tape, out, interp.signature, interp.steps, logged)
        if trace is not None:                       # replayed at once where it was recorded: must agree
            notes = reset_notes()
            try:
                value = _output(trace, replaying.replay_values(trace, list(inputs.values())))
            except replaying.PathChanged:                     # a tie: this path is not kept
                value = trace = None
            except Exception:
                value = None
            if trace is not None and (value is None or not (replaying.same_bits(value, result.value) and
                                                            notes.kinks == result.kinks)):
                trace = NOT_REPLAYABLE
        self._file(key, fit_for_replay(trace, tape, self.fuses))
        notes.kinks = list(result.kinks)            # as the interpreted run left them
        return result

    def _file(self, key, trace) -> None:
        """Keep a recorded trace for `key` (None: a path not to keep; NOT_REPLAYABLE: the tape
        could not be replayed, nor can any run at that signature)."""
        entry = self.traces.get(key)
        if trace is None:
            if entry is None:
                keep_trace(self.traces, key, NOT_REPLAYABLE)
            return
        keep_trace(self.traces, key, trace if trace is NOT_REPLAYABLE else replaying.filed(entry, trace))

    @handing_out
    def grad_result(self, at, wrt=None, seed=None, dtype_name="float64", limits=None) -> reverse.GradResult:
        """The reverse-mode gradient, as `api.grad` gives it (for any inputs in `wrt`: the replay
        sweeps only the steps that depend on them, as the interpreter's tape would hold)."""
        self = self.given(at)
        set_dtype(dtype_name)
        inputs = bind_inputs(self.target, dict(at or {}))
        wrt = check_wrt(self.target, wrt)
        key = input_signature(inputs, dtype_name, limits) + (tuple(self.inputs),)
        if self.blocker is not None or (self.gradient_only and wrt != self.inputs) or plain_run(self.traces, key, self.fuses):
            self.interpreted += 1
            return reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits, target=self.target)
        entry = self.traces.get(key)
        if entry is not None:
            try:
                result = self._replay_grad(entry, inputs, wrt, seed)
            except replaying.PathChanged as change:           # a path not kept: recorded below, or a tie
                result = None
                entry = None if replaying.new_path(entry, change) else entry
            if result is not None:
                self.replays += 1
                return hosted(result)
        if entry is not None:
            self.interpreted += 1                   # the trace stays: the same path, a nan or an error
            return reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits, target=self.target)
        # this gradient's tape is not the one to keep, or (large inputs) its sweep is the fused one
        if wrt != self.inputs or large_inputs(key):
            self.interpreted += 1
            result = reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits, target=self.target)
            self._record_evaluate(inputs, key, limits)
            if wrt == self.inputs:
                self._check_replayed_grad(key, inputs, wrt, seed, result)
            return result
        return self._record_grad(inputs, wrt, seed, key, dtype_name, limits)

    def _record_grad(self, inputs, wrt, seed, key, dtype_name, limits):
        self.interpreted += 1
        with recording_decisions() as logged:
            result = reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits,
                                  target=self.target, keep_tape=True)
        tape, index = result.tape, result.output_index
        out = tape.entries[index] if index is not None else None
        output = Var(out.value, tape, index, tape.level) if out is not None else result.value
        result.tape = result.output_index = result.seed = None     # as a plain gradient leaves them
        untraced = len(traced_only(NOTES.kinks)) != len(NOTES.kinks)
        trace = fit_for_replay(replaying.record_trace(tape, output, result.signature, result.steps, logged), tape,
                               self.fuses) or NOT_REPLAYABLE
        if holds_large_arrays(tape):    # the lean tape fuses what this one ran op by op: the plain run's numbers
            result = reverse.grad(None, inputs, wrt, seed, dtype_name=dtype_name, limits=limits, target=self.target)
        if trace is not NOT_REPLAYABLE:             # replayed at once where it was recorded: must agree
            trace.untraced_kinks = untraced
            try:
                again = self._replay_grad(trace, inputs, wrt, seed)
            except replaying.PathChanged:                     # a tie: this path is not kept
                return result
            if again is None:                       # a nan or an error here: record at the next call
                return result
            if not replaying.same_results(hosted(again), result):
                trace = NOT_REPLAYABLE
        self._file(key, trace)
        return result

    def _check_replayed_grad(self, key, inputs, wrt, seed, result) -> None:
        """A trace recorded apart from its gradient is kept only if its replay gives that gradient."""
        entry = self.traces.get(key)
        if not entry:
            return
        try:
            again = self._replay_grad(entry, inputs, wrt, seed)
        except replaying.PathChanged:                         # a tie: the trace stays, as _record_grad's does
            return
        if again is not None and not replaying.same_results(hosted(again), result):
            self.traces[key] = NOT_REPLAYABLE

    def _replay_grad(self, entry, inputs, wrt, seed):
        """The gradient from a replay, or None where it must be interpreted (an error, or a
        non-finite number whose provenance the interpreter's run traces); PathChanged where the
        inputs take a path not kept."""
        if seed is None and wrt == self.inputs:
            fast = replaying.compiled_grad(entry, inputs)
            if fast is not None:
                return fast
        notes = reset_notes()
        try:
            trace, values = replaying.replay_entry(entry, list(inputs.values()))
            value = _output(trace, values)
            if seed is not None:
                seed_value, reduced = seed_for(seed, value), "seed"
            else:
                seed_value, reduced = ones_like_output(value), ("sum" if shape_of(value) else None)
            watched, forward_notes = [self.inputs.index(w) for w in wrt], len(notes.kinks)
            # its all_finite below tests a generated sweep's adjoints (a nan: interpreted)
            length, adjoints = replaying.replay_adjoints(trace, values, seed_value, watched, caller_tests_finite=True)
            kinks = replaying.live_kinks(trace, watched, notes.kinks, forward_notes)   # those wrt's derivative meets
        except replaying.PathChanged:
            raise
        except Exception:
            return None
        gradient, unconnected = {}, []
        for name, g in zip(wrt, adjoints):
            if g is None:
                unconnected.append(name)
                g = ops.zeros_like(inputs[name])
            gradient[name] = strip(g)
        if kinks is None or not replaying.all_finite([value, *gradient.values()]):
            return None
        return reverse.GradResult(value=value, gradient=gradient, inputs=inputs, unconnected=unconnected,
                                  reduced=reduced, signature=list(trace.signature), kinks=kinks,
                                  tape_length=length, steps=trace.run_steps)


def _output(trace, values):
    """A replay's output as an interpreted run's result holds it: in the working dtype (a
    float32 run's constant output, as 1/3, is a float32, not the Python float it was made as)."""
    return reverse.in_working_dtype(strip(replaying.replay_output(trace, values)))


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
        self.blocker = replay_blocker(target.node, target.inputs)
        if self.blocker is None and nested_derivatives(target.node):
            self.blocker = "a derivative inside the program (only Function's gradients replay it)"
        self.traces: dict = {}
        self.variants: dict = {}        # per defaulted parameters given (Function.given's reason)
        self.fuses = RegionCheck(target)
        self.signature = ()

    def __call__(self, values: dict):
        target = self.target.given(values)
        if target is not self.target:       # defaulted parameters given: their own runner and traces
            variant = self.variants.get(tuple(target.inputs))
            if variant is None:
                variant = self.variants[tuple(target.inputs)] = ReplayRunner(target, self.limits)
            out = variant(values)
            self.signature = variant.signature
            return out
        key = input_signature(values, "", None)
        if self.blocker is not None or plain_run(self.traces, key, self.fuses):
            out = self.runner(values)
            self.signature = self.runner.signature
            return out
        entry = self.traces.get(key)
        if entry is not None:
            fast = replaying.compiled_output(entry, [values[k] for k in self.target.inputs])
            if fast is not None:
                self.signature = fast[0].signature
                return fast[1]
            try:
                trace, replayed = replaying.replay_entry(entry, [values[k] for k in self.target.inputs])
                out = strip(replaying.replay_output(trace, replayed))
            except replaying.PathChanged as change:   # a path not kept: recorded below, or a tie
                out = None
                entry = None if replaying.new_path(entry, change) else entry
            except Exception:               # the interpreter reports it, located
                out = None
            if out is not None:
                self.signature = trace.signature
                return out
        if entry is not None:
            out = self.runner(values)               # the trace stays: the same path, a failing step
            self.signature = self.runner.signature
            return out
        tape = Tape(persistent=True, keep_values=True)    # a trace reads its values' types
        with recording_decisions() as logged:             # compiled to log its decisions
            runner = Runner(self.target, self.limits)
            out = runner.run({k: tape.watch(values[k]) for k in self.target.inputs})
        self.signature = tuple(runner.interp.signature)
        check_output(out, self.target)
        trace = fit_for_replay(replaying.record_trace(tape, out, self.signature, runner.interp.steps, logged), tape,
                               self.fuses) or NOT_REPLAYABLE
        entry = self.traces.get(key)
        keep_trace(self.traces, key, trace if trace is NOT_REPLAYABLE else replaying.filed(entry, trace))
        return strip(out)
