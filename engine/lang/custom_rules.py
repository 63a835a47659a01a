"""User derivative rules in JAX's spelling: `custom_vjp(f)` with `f.defvjp(fwd, bwd)`, and
`custom_jvp(f)` with `f.defjvp(jvp)` (parser/decorators.py reads `@jax.custom_vjp` and
`@f.defjvp` as these calls).

Each such function is an entry of the program's own rules table (`Interpreter.rules`), made by
the one `defprim` as the table's primitives are; nothing is registered for other programs. Its
forward is the primal function, interpreted; its rules are the user's functions, interpreted on
whatever boxes the outer levels carry, so they are differentiable (Hessians and n-th derivatives
differentiate the rule itself):
- custom_vjp: the VJP runs fwd(*args) for the residuals and bwd(res, g) for one cotangent per
  argument (None: zero); forward mode is an error that says so (as in JAX);
- custom_jvp: the JVP of argument i is the rule's tangent output with every other tangent zero;
  the VJP transposes that linear map: the reverse sweep of the rule in its tangent argument,
  seeded with g, on a tape of its own.
The tape, forward mode, the views and the checks see one entry per call, as of any primitive;
each evaluation of a rule is noted (NOTES.rules, a RuleUse) for the checks (engine/checks/rules.py),
which verify the rule there."""
from __future__ import annotations

import weakref

from ...parser.errors import SourceError
from ..core import ops
from ..core.backend import is_array
from ..core.notes import NOTES
from ..core.primitives import PerPosition, defprim, shape, variadic_op
from ..core.tape import BOXES, Tape, Var, backward, strip
from .callables import Builtin, UserFunction
from .keywords import complete_arguments
from .values import describe

RULE_METHODS = ("defvjp", "defjvp")      # the methods of a CustomFunction that state its rule
# nested evaluations of one function's rule (a rule that calls itself, through a derivative of
# its own function, without end) past which the run stops with a located error
RULE_DEPTH = 64


class RuleUse:
    """One evaluation of a user rule, for the checks (engine/checks/rules.py): the function, its
    arguments' values, and the seed: the cotangent g of a VJP (`position` None: every argument's
    cotangent), or the tangent t of argument `position` of a JVP. `nested`: the rule ran on an
    outer level's boxes (a Hessian or a higher derivative went through it)."""
    __slots__ = ("function", "mode", "args", "position", "seed", "nested")

    def __init__(self, function, mode, args, position, seed):
        self.function, self.mode, self.position = function, mode, position
        self.nested = any(a.__class__ in BOXES for a in (*args, seed))
        self.args = tuple(strip(a) for a in args)
        self.seed = strip(seed)


def _zero(x):
    return ops.zeros_like(x) * 1.0


def _span(fn):
    node = getattr(fn, "node", None)
    return getattr(node, "span", None)


class CustomFunction:
    """A function of the program with the user's derivative rule: called, it applies its entry
    of the program's rules table (`prim`) to its arguments."""
    __slots__ = ("kind", "fn", "interp", "name", "fwd", "bwd", "jvp", "prim", "op", "depth",
                 "_last")

    def __init__(self, kind, fn, interp):
        if not isinstance(fn, UserFunction):
            raise SourceError("type error", f"{kind}() takes a function of the program, not {describe(fn)}")
        self.kind, self.fn, self.interp, self.name = kind, fn, interp, fn.name
        self.fwd = self.bwd = self.jvp = None
        self.prim = self.op = None
        self.depth = 0                # nested evaluations of its rule now
        self._last = None             # (g, args, cotangents) of the last custom_vjp rule run

    def __repr__(self):
        return f"<{self.kind} function {self.name}>"

    @property
    def params(self):
        return self.fn.params

    @property
    def rule(self):
        """The user's function that states the derivative (bwd, or jvp), for messages."""
        return self.bwd if self.kind == "custom_vjp" else self.jvp

    def where(self) -> str:
        """The rule, its kind and line (the views' label of its entry): custom_vjp clip_gradient_bwd, line 9."""
        span = _span(self.rule)
        return f"{self.kind} {self.rule.name}" + (f", line {span.line}" if span is not None else "")

    # ---- defining the rule ----
    def defvjp(self, fwd, bwd, span=None):
        if self.kind != "custom_vjp":
            raise SourceError("type error", f"defvjp on `{self.name}`, a custom_jvp function", span,
                              f"a custom_jvp function takes its rule with @{self.name}.defjvp")
        for what, f in (("fwd", fwd), ("bwd", bwd)):
            if not isinstance(f, UserFunction):
                raise SourceError("type error", f"{self.name}.defvjp: {what} must be a function of the program, "
                                  f"not {describe(f)}", span)
        self.fwd, self.bwd = fwd, bwd
        self._make_entry()

    def defjvp(self, jvp, span=None):
        if self.kind != "custom_jvp":
            raise SourceError("type error", f"defjvp on `{self.name}`, a custom_vjp function", span,
                              f"a custom_vjp function takes its rule with {self.name}.defvjp(fwd, bwd)")
        if not isinstance(jvp, UserFunction):
            raise SourceError("type error", f"{self.name}.defjvp takes a function of the program, not "
                              f"{describe(jvp)}", span)
        self.jvp = jvp
        self._make_entry()
        return jvp

    def _make_entry(self):
        """This function's entry in the program's rules table (a fresh one per definition)."""
        if self.kind == "custom_vjp":
            vjp, jvp = PerPosition(self._vjp_rule), PerPosition(self._no_forward_mode)
        else:
            vjp, jvp = PerPosition(self._transposed_rule), PerPosition(self._jvp_rule)
        self.op = defprim(f"{self.kind} {self.name}", self._forward, vjp, jvp, make_op=variadic_op,
                          table=self.interp.rules, arity=len(self.fn.params), custom=self)
        self.prim = self.op.primitive

    # ---- calling ----
    def __call__(self, *args, span=None):
        if self.op is None:
            how = f"{self.name}.defvjp(fwd, bwd)" if self.kind == "custom_vjp" else f"@{self.name}.defjvp"
            raise SourceError("type error", f"`{self.name}` is a {self.kind} function with no rule yet", span,
                              f"define its rule with {how} before calling it")
        if len(args) != len(self.fn.params):
            args = complete_arguments(self.fn, args, None, span)      # its def's defaults, or the error
        for a in args:
            v = strip(a)
            if not (v.__class__ in (float, int, bool) or is_array(v)):
                raise SourceError("type error", f"{self.name}(): the arguments of a {self.kind} function are "
                                  f"numbers or arrays, not {describe(a)}", span)
        NOTES.span = span                 # the entry's place: the call (its rule's line: `where`)
        return self.op(*args)

    def _forward(self, *args):
        span = NOTES.span
        try:
            out = self.interp.call(self.fn, list(args), _span(self.fn))
        finally:
            NOTES.span = span

        v = strip(out)
        if not (v.__class__ in (float, int, bool) or is_array(v)):
            raise SourceError("type error", f"{self.name}, a {self.kind} function, must return a number or an "
                              f"array; it returned {describe(out)}", _span(self.fn))
        return out

    def _call_rule(self, f, args):
        self.depth += 1
        try:
            if self.depth > RULE_DEPTH:
                raise SourceError("too deep", f"the {self.kind} rule `{f.name}` of `{self.name}` calls itself "
                                  f"without end ({RULE_DEPTH} nested evaluations)", _span(f),
                                  f"the rule must not need a derivative of `{self.name}` itself")
            return self.interp.call(f, list(args), _span(f))
        finally:
            self.depth -= 1

    def rerun_kept(self, args, g=None) -> Tape:
        """A tape keeping every value of the primal function (g None) or of the rule (g: the
        cotangent it was given) run again on `args`: where a nan or inf arose inside it (the
        views' provenance, views/provenance.py)."""
        tape = Tape(persistent=True, keep_values=True)
        watched = [tape.watch(strip(a)) for a in args]
        if g is None:
            self._forward(*watched)
        elif self.kind == "custom_vjp":
            self.cotangents(watched, tape.watch(strip(g)), noted=False)
        else:
            self.tangent_out(watched, [tape.watch(ops.zeros_like(strip(a)) + 1.0) for a in args])
        return tape

    # ---- custom_vjp ----
    def _no_forward_mode(self, i):
        def rule(t, ans, *args):
            raise SourceError("not differentiable", f"`{self.name}` is a custom_vjp function: it has a reverse-mode "
                              "rule only, so forward mode (jvp, hessian, forward-mode derivatives) cannot go through "
                              "it (as in JAX)", _span(self.fn),
                              "take its derivative in reverse mode (grad, vjp), or define it with custom_jvp")
        return rule

    def _vjp_rule(self, i):
        def rule(g, ans, *args):
            last = self._last
            if last is not None and last[0] is g and len(last[1]) == len(args) and \
                    all(a is b for a, b in zip(last[1], args)):
                return last[2][i]                       # the other positions of the same entry
            cotangents = self.cotangents(args, g)
            self._last = (g, args, cotangents)
            return cotangents[i]
        return rule

    def cotangents(self, args, g, noted=True) -> tuple:
        """bwd(res, g) after fwd(*args): one cotangent per argument, checked (None: zero)."""
        if noted:
            NOTES.rule_used(RuleUse(self, "vjp", args, None, g))
        out = self._call_rule(self.fwd, args)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise SourceError("type error", f"the fwd rule `{self.fwd.name}` of `{self.name}` must return a pair "
                              f"(output, residuals); it returned {describe(out)}", _span(self.fwd),
                              "write `return out, (what bwd needs, ...)`")
        cts = self._call_rule(self.bwd, (out[1], g))
        n = len(args)
        if not isinstance(cts, tuple) or len(cts) != n:
            got = f"{len(cts)} values" if isinstance(cts, tuple) else describe(cts)
            raise SourceError("wrong arguments", f"the bwd rule `{self.bwd.name}` of `{self.name}` must return a "
                              f"tuple of {n} cotangent{'s' if n != 1 else ''}, one per argument of `{self.name}`; "
                              f"it returned {got}", _span(self.bwd),
                              f"return one cotangent for each of {', '.join(self.params)} (None for zero)"
                              if n > 1 else "return a 1-tuple: (ct,)")
        return tuple(self._checked(ct, a, k, self.bwd) for k, (ct, a) in enumerate(zip(cts, args)))

    def _checked(self, ct, arg, k, rule):
        if ct is None:
            return _zero(arg)
        if shape(ct) != shape(arg):
            raise SourceError("shape mismatch", f"the {self.kind} rule `{rule.name}` of `{self.name}` returned a "
                              f"{'cotangent' if rule is self.bwd else 'tangent'} of shape {shape(ct)} for "
                              f"`{self.params[k]}`, which has shape {shape(arg)}", _span(rule),
                              "a cotangent has its argument's shape")
        return ct

    # ---- custom_jvp ----
    def tangent_out(self, args, tangents):
        """The rule's tangent output at `args` for `tangents` (one per argument), checked."""
        out = self._call_rule(self.jvp, (tuple(args), tuple(tangents)))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise SourceError("type error", f"the custom_jvp rule `{self.jvp.name}` of `{self.name}` must return a "
                              f"pair (output, tangent output); it returned {describe(out)}", _span(self.jvp),
                              f"write `return {self.name}(...), tangent`")
        primal, tangent = out
        if tangent is None:
            return _zero(primal)
        if shape(tangent) != shape(primal):
            if shape(tangent) == ():
                return ops.broadcast_to(tangent, shape(primal))
            raise SourceError("shape mismatch", f"the custom_jvp rule `{self.jvp.name}` of `{self.name}` returned a "
                              f"tangent of shape {shape(tangent)} for an output of shape {shape(primal)}",
                              _span(self.jvp), "the tangent output has the output's shape")
        return tangent

    def _jvp_rule(self, i):
        def rule(t, ans, *args):
            NOTES.rule_used(RuleUse(self, "jvp", args, i, t))
            tangents = [t if k == i else _zero(a) for k, a in enumerate(args)]
            return self.tangent_out(args, tangents)
        return rule

    def _transposed_rule(self, i):
        def rule(g, ans, *args):
            NOTES.rule_used(RuleUse(self, "vjp", args, i, g))
            return self.transposed(args, i, g)
        return rule

    def transposed(self, args, i, g):
        """The VJP of argument i: the transpose of the rule's (linear) tangent map, applied to g,
        by the reverse sweep of the rule in its tangent argument on a tape of its own."""
        tape = Tape(persistent=False)
        t = tape.watch(_zero(args[i]))
        tangents = [t if k == i else _zero(a) for k, a in enumerate(args)]
        out = self.tangent_out(args, tangents)
        if out.__class__ is not Var or out.tape is not tape:
            return _zero(args[i])                       # the tangent output does not depend on it
        seed = g if shape(g) == shape(out) else ops.broadcast_to(g, shape(out))
        ct = backward(tape, out, seed)[t.index]
        return _zero(args[i]) if ct is None else ct


def rule_builtins(interp) -> dict:
    """custom_vjp and custom_jvp, the builtins that make a function of the program a CustomFunction."""
    if interp is not None:
        interp = weakref.proxy(interp)

    def custom_vjp(f):
        return CustomFunction("custom_vjp", f, interp)

    def custom_jvp(f):
        return CustomFunction("custom_jvp", f, interp)
    return {"custom_vjp": Builtin("custom_vjp", custom_vjp, 1, 1, "makes a function with a derivative rule"),
            "custom_jvp": Builtin("custom_jvp", custom_jvp, 1, 1, "makes a function with a derivative rule")}
