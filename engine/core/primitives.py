"""What a table entry is: `Primitive`, and `defprim`, which files one in TABLE and returns the op
the rest of the engine calls. Also the helpers every rule module shares (shapes, the float forward
of an elementwise function).

Forward rules (`impl`) compute on raw values: Python floats take a fast path through `math`,
arrays go to the backend's module. VJP rules map the output's adjoint `g` to one argument's
adjoint; JVP rules map one argument's tangent `t` to the output's tangent. Both are written in
engine ops (the ops defprim returns, and `g * y` on boxes), never on raw arrays, so the reverse
sweep can be recorded and differentiated again. Rules get (g or t, ans, *args, **params); `ans`
is None unless the primitive declares `needs_ans`, and args are `Shape` stand-ins unless it
declares `needs_args`.

A rule with a quicker form for Python floats states it apart (`float_vjp=`, one per argument
position, None where there is none): the form the sweeps call when the adjoint `g` is a Python
float (its arguments may still be boxes of an outer level, never masked). The table, not the
rule, chooses between the two (`dispatching`): the rule bodies ask no value its type to pick
their path, so the tracer of the rules (core/rule_tracer.py) runs either form on plain stand-ins.

What the lowerings need of an entry (numexpr's and C's names, cost, taped VJP, plannable,
elementwise values, a guarded kink, why it gets no fused kernel) are its FACTS: fields with
defaults, so an entry states only what differs. The lowerings read them off TABLE when they load
(core/fused.py, region_program.py, region_pipeline.py, device_kernels.py, region_plan.py, stacked.py,
diff/hessian_plan.py, lang/transforms.py); tests/test_primitive_facts.py prints the table of
primitive x lowering and fails on an elementwise entry that fuses not and says not why.
"""
from __future__ import annotations

from .backend import np, xp
from .complexes import refuse_ordering
from .errors import EngineError, TooLarge
from .notes import NOTES
from .tape import PEEKS, Dual, Var, bind, record, strip

TABLE: dict = {}          # name -> Primitive, in the order the rule modules define them


class PerPosition:
    """Rules made per argument position on demand, for a primitive of any arity (stack)."""

    def __init__(self, make):
        self.make = make
        self.cache = {}

    def __getitem__(self, i):
        rule = self.cache.get(i)
        if rule is None:
            rule = self.cache[i] = self.make(i)
        return rule


# What the lowerings need to know of an entry (tests/test_primitive_facts.py prints them per
# primitive), with the defaults an entry leaves out: it states only what differs.
FACTS = {
    # numexpr's spelling of the numpy function (or operator) the forward applies: a fused kernel
    # (core/fused.py) may compute it; None: numexpr has it not (or not to numpy's bits)
    "numexpr": None,
    # the numpy ufuncs the forward applies, by __name__ (None: the entry's name)
    "ufuncs": None,
    # a binary ufunc (its first `ufuncs`) whose replayed step, where its recorded arguments are a
    # broadcast of short rows, copies the operand broadcast along a middle axis out and applies
    # the ufunc into the copy: numpy's bits, each array one run (core/rules/broadcast_rows.py)
    "broadcast_rows": False,
    # CUDA C's name of that function (core/device_kernels.py; None: numexpr's name, if one)
    "c_name": None,
    # dear to recompute (a transcendental function): a region's reverse reads the forward's value
    "dear": False,
    # where dear, whether a region runs it as a step of its own with numpy's vectorized loop
    # (None: dear); "probe": decided once per process by comparing numexpr's kernel of it with
    # numpy's loop on float64 values of every magnitude (core/fused_ir.py's probe_real): where
    # both are the same libm's (sin and cos, often), it stays in numexpr's kernels, with numpy's bits
    "numpy_loop": None,
    # a region's kernels compute it with numpy's own bits (core/program_regions.py fuses across a
    # Program only such equations): numexpr's IEEE arithmetic (+ - * / and negation: one rounding,
    # as numpy's) states it; None: where the kernels leave it to numpy's loop (numexpr, numpy_loop)
    "fused_bits": None,
    # numexpr's kernel of it computes numpy's bits on complex128 values too (issue 32): True where
    # both compute it componentwise with IEEE's one rounding each (+ - and negation, conj, real,
    # imag, == and !=); "probe": decided once per process by comparing numexpr with numpy's loop
    # (core/fused_ir.py's complex_refusal: a complex product, where numpy's SIMD loop fuses one
    # multiply-add (FMA) on CPUs that have it and numexpr rounds each product); False: numexpr's
    # complex kernel is its own (division, abs, powers, its own exp, sin...). A region runs a
    # `numpy_loop` function with numpy's own loop, complex values too
    "complex_bits": False,
    # its VJP rules, swept on an outer level's boxes, tape all they read (no mask, share or branch
    # made from a traced value): a nested derivative over it keeps its trace (lang/transforms.py)
    "taped_vjp": False,
    # its VJP rules make raw values from constants only: a replayed Hessian may plan it
    # (diff/hessian_plan.py)
    "plannable": False,
    # argument positions that must be constants (untraced numbers) for taped_vjp and plannable
    "constant_args": (),
    # output element i reads element i of each broadcast argument (the batched replay runs it
    # once over a stack of points; None: `elementwise`, which promises JVPs lifted too)
    "elementwise_values": None,
    # a kink whose impl asks `(x == 0).any()` before its note: a region traces it into a guard
    "guarded_kink": False,
    # why an elementwise primitive gets no fused kernel (tests/test_primitive_facts.py)
    "no_fusion": None,
    # whether its forward and rules hold for complex values (True: core/complexes.py's
    # convention); an entry that does not say so refuses them (no rule written for real numbers
    # answers for complex ones by accident); "ordering": it orders its arguments, and complex
    # numbers have no order (comparisons, max, min)
    "complex_values": False,
    # where complex_values: whether it is holomorphic (complex-differentiable) in its complex
    # arguments; False for real, imag, conj, angle and abs, whose complex derivative does not exist:
    # a holomorphic derivative (derivative, jacobian --holomorphic) or a complex step through one is
    # refused, naming it (diff/complex_derivatives.py, checks/complex_step.py)
    "holomorphic": True,
    # not elementwise, and its rules' text, traced at the operands' shapes, holds for every value of
    # those shapes: `emit` writes it (engine/emit/lower.py); an elementwise entry always may
    "emits_at_shapes": False,
    # where its rules decide on its first argument's values (a zero element: prod's; a singular
    # matrix: det's; the zero vector: norm's), that argument made to take the decision's other side
    # (a function of a stand-in array, giving a new one): `emit` writes both sides as an if
    # (engine/emit/rule_text.py), so the emitted derivative holds at such values too
    "other_side": None,
}


class Primitive:
    __slots__ = ("name", "impl", "vjps", "float_vjps", "generic_vjps", "jvps", "needs_args", "needs_ans",
                 "nondiff", "kink", "side", "builtin", "alias", "arity", "op", "float_op", "reads", "reads_all",
                 "elementwise",
                 "custom", "exact") + tuple(FACTS)

    def __init__(self, name, impl, vjps=(), jvps=(), needs_args=True, needs_ans=False, nondiff=False,
                 kink=None, side=None, builtin=None, alias=None, arity=None, reads=None, elementwise=False,
                 float_vjps=None, custom=None, **facts):
        self.name = name
        self.impl = impl
        # generic_vjps: the rules as written (any g); float_vjps: what a sweep calls where g is a
        # Python float (a rule's float form, else its generic rule); vjps: either, chosen per call
        # by g's type where a float form exists (`dispatching`): what every other caller calls
        self.generic_vjps = vjps if isinstance(vjps, PerPosition) else tuple(vjps)
        if float_vjps is None or isinstance(vjps, PerPosition):
            self.float_vjps = self.vjps = self.generic_vjps
        else:
            forms = tuple(float_vjps) + (None,) * (len(self.generic_vjps) - len(float_vjps))
            self.float_vjps = tuple(v if f is None else f for f, v in zip(forms, self.generic_vjps))
            self.vjps = tuple(v if f is None or v is None else dispatching(f, v)
                              for f, v in zip(forms, self.generic_vjps))
        self.jvps = jvps if isinstance(jvps, PerPosition) else tuple(jvps)
        self.needs_args = needs_args
        self.needs_ans = needs_ans
        self.nondiff = nondiff
        self.kink = kink          # the convention applied at this primitive's kinks, for reports
        # what tells the two sides of its kink apart, for plots: "sign" (of the argument),
        # "difference" (of the two arguments), "condition", "argmax" or "argmin"
        self.side = side
        self.builtin = builtin    # the language's name for it, if the language exposes it as is
        self.alias = alias        # a second language name (math's asin for arcsin)
        self.arity = arity        # positional arguments; None for any number
        self.op = None            # the engine op that applies it (set by defprim)
        # the op again where it is a unary or binary op, whose float fast path records a level
        # over Python floats directly: what `bind` applies to the values one level down
        self.float_op = None
        # per argument position, what that position's VJP reads: (argument positions, reads ans).
        # An array tape keeps only what the traced positions read (tape.plain_entry).
        self.reads = None if reads is None else resolve_reads(reads, self.generic_vjps)
        # what the VJPs of every position read together (x * x: both arguments traced)
        self.reads_all = None if reads is None else (frozenset().union(*(r[0] for r in self.reads)),
                                                     any(r[1] for r in self.reads))
        # output element i depends on element i of each (broadcast) argument only: JVPs lift
        # over a stack of tangents by broadcasting (core/batch.py)
        self.elementwise = elementwise
        # a program's own entry: the function with the user's rule (lang/custom_rules.py) whose
        # forward and rules it runs; None for the table's primitives
        self.custom = custom
        self.set_facts(facts)
        if self.complex_values is not True:
            self.impl = real_only(self)

    def set_facts(self, facts: dict) -> None:
        """The lowerings' facts (FACTS), each stated or its default; the derived defaults resolved."""
        unknown = set(facts) - set(FACTS)
        if unknown:
            raise TypeError(f"{self.name}: no such fact {sorted(unknown)}")
        for fact, default in FACTS.items():
            setattr(self, fact, facts.get(fact, default))
        if self.ufuncs is None:
            self.ufuncs = (self.name,)
        if self.c_name is None and self.numexpr is not None and self.numexpr.isidentifier():
            self.c_name = self.numexpr
        if self.numpy_loop is None:
            self.numpy_loop = self.dear
        if self.fused_bits is None:
            self.fused_bits = self.numexpr is not None and bool(self.numpy_loop)
        # numpy's ufunc (`ufuncs`) gives numexpr's bits at every real value: the entries whose
        # kernels are numpy's bits by numexpr's own IEEE operation (+ - * / round once, negation and
        # abs not at all), not by a numpy loop; a region's pipeline makes an array function's real
        # argument with it, in place (core/region_pipeline.py; complex values: complex_bits)
        # (a probed one: not at every value; one numexpr has no name for, as sigmoid: several steps)
        self.exact = bool(self.fused_bits) and not self.numpy_loop and self.numexpr is not None
        if self.elementwise_values is None:
            self.elementwise_values = self.elementwise

    def __repr__(self):
        return f"<primitive {self.name}>"


def real_only(prim):
    """prim's forward, refusing complex arguments (an entry whose complex_values is not True)."""
    impl, ordering = prim.impl, prim.complex_values == "ordering"
    spelled = f"`{prim.numexpr}`" if prim.numexpr and not prim.numexpr.isidentifier() else f"{prim.builtin or prim.name}()"

    def forward(*args, **params):
        for a in args:
            if a.__class__ is complex or getattr(getattr(a, "dtype", None), "kind", None) == "c":
                if ordering:
                    refuse_ordering(spelled, a)
                raise EngineError("complex values", f"{spelled} does not take complex values (its rules are for "
                                  "real numbers); apply it to real(z), imag(z) or abs(z)")
        return impl(*args, **params)
    forward.__name__ = getattr(impl, "__name__", prim.name)
    forward.__wrapped__ = impl
    return forward


def dispatching(float_form, generic):
    """A VJP that runs `float_form` where the adjoint is a Python float and `generic` otherwise:
    the table's choice of a rule's form, for the callers that do not choose once per step
    themselves (core/tape.py's _sweep and diff/replay_sweep.py's planned sweep take
    `float_vjps` for a float adjoint)."""
    def vjp(g, ans, *args, **params):
        if g.__class__ is float:
            return float_form(g, ans, *args, **params)
        return generic(g, ans, *args, **params)
    return vjp


def defprim(name, impl, vjp=(), jvp=(), *, float_impl=None, float_vjp=None, make_op=None, table=None, **kw):
    """File a primitive in TABLE (or in `table`: a program's own rules table, where its
    custom_vjp and custom_jvp functions are entries, lang/custom_rules.py) and return its engine
    op. `float_impl` is the forward for two (or one) Python floats where it agrees exactly with
    `impl` (Python's own operator: the scalar loop saves a call); `float_vjp` the VJPs' forms for
    a Python float adjoint (per position, None where a rule has none); `make_op(prim)` builds an
    op with parameters (axis, shape...)."""
    if "arity" not in kw:
        kw["arity"] = len(vjp) if vjp else impl.__code__.co_argcount
    prim = Primitive(name, impl, vjp, jvp, float_vjps=float_vjp, **kw)
    (TABLE if table is None else table)[name] = prim
    if make_op is not None:
        op = make_op(prim)
    elif prim.arity == 1:
        op = prim.float_op = unary_op(prim, float_impl or impl)
    elif prim.arity == 2:
        op = prim.float_op = binary_op(prim, float_impl or impl)
    else:
        op = variadic_op(prim)
    op.__name__ = name
    op.primitive = prim
    op.float_impl = float_impl or impl
    prim.op = op
    return op


def resolve_reads(reads, vjps) -> tuple:
    """`reads=("y", "x ans")` (names as the VJPs spell their arguments after g and ans) ->
    ((frozenset of argument positions, reads ans), ...) per position."""
    resolved = []
    for pos, names in enumerate(reads):
        if vjps[pos] is None:                   # no derivative there (where's condition): reads nothing
            resolved.append((frozenset(), False))
            continue
        code = vjps[pos].__code__
        arg_names = code.co_varnames[2:code.co_argcount]
        words = names.split()
        resolved.append((frozenset(arg_names.index(w) for w in words if w != "ans"), "ans" in words))
    return tuple(resolved)


def nondiff(name, impl, **kw):
    """A primitive whose output carries no derivative (comparisons, sign, masks)."""
    return defprim(name, impl, nondiff=True, **kw)


# ---- the ops: raw values go straight to the forward rule, boxes through `bind` ---------------

def traced_float(prim, fimpl):
    """The float forward the ops' fast paths call on a traced value's float: a kink it notes is
    met on a traced value (core/notes.py's traced_only), as bind marks it. Only where the
    primitive has a kink: the others' fast paths pay nothing."""
    if prim.kink is None:
        return fimpl

    def traced(*args):
        noted = len(NOTES.kinks)
        r = fimpl(*args)
        if len(NOTES.kinks) != noted:
            NOTES.traced_since(noted)
        return r
    return traced


def unary_op(prim, fimpl):
    impl = prim.impl
    traced = traced_float(prim, fimpl)
    if prim.nondiff or prim.vjps[0] is None:
        def op(x):
            c = x.__class__
            if c is Var or c is Dual:
                return bind(prim, (x,), None)
            return impl(x)
        return op

    def op(x):
        c = x.__class__
        if c is Var:
            xv = x.value
            if xv.__class__ is float:           # fast path: one reverse level over a float
                return record(prim, x.tape, x.level, ((0, x.index),), (xv,), traced(xv))
            return bind(prim, (x,), None)
        if c is Dual:
            return bind(prim, (x,), None)
        return fimpl(x) if c is float else impl(x)
    PEEKS.add(op.__code__)              # a pending x (core/lazy.py) is no float: it goes to bind
    return op


def binary_op(prim, fimpl):
    """Traced Python floats under one reverse-mode level (the scalar loop) are recorded here
    directly; every other boxed case goes through `bind`."""
    impl = prim.impl
    traced = traced_float(prim, fimpl)
    if prim.nondiff or prim.vjps[0] is None or prim.vjps[1] is None:
        def op(x, y):
            cx, cy = x.__class__, y.__class__
            if cx is float or cy is float:
                return bind(prim, (x, y), None) if (cx is Var or cx is Dual or cy is Var or cy is Dual) \
                    else impl(x, y)
            check_result_size(prim, x, y)
            if cx is Var or cx is Dual or cy is Var or cy is Dual:
                return bind(prim, (x, y), None)
            return impl(x, y)
        return op

    def op(x, y):
        cx, cy = x.__class__, y.__class__
        if cx is Var:
            xv = x.value
            if xv.__class__ is float:
                if cy is float:
                    parents, yv = ((0, x.index),), y
                elif cy is Var and y.level == x.level and y.value.__class__ is float:
                    parents, yv = ((0, x.index), (1, y.index)), y.value
                else:
                    return _bind_checked(prim, x, y)
                return record(prim, x.tape, x.level, parents, (xv, yv), traced(xv, yv))
            return _bind_checked(prim, x, y)
        if cy is Var:
            yv = y.value
            if cx is float and yv.__class__ is float:
                return record(prim, y.tape, y.level, ((1, y.index),), (x, yv), traced(x, yv))
            return _bind_checked(prim, x, y)
        if cx is float and cy is float:
            return fimpl(x, y)
        if cx is Dual or cy is Dual:
            return _bind_checked(prim, x, y)
        if cx is not float and cy is not float:
            check_result_size(prim, x, y)
        return impl(x, y)
    PEEKS.add(op.__code__)              # a pending x or y (core/lazy.py) is no float: it goes to bind
    return op


def _bind_checked(prim, x, y):
    if x.__class__ is not float and y.__class__ is not float:
        check_result_size(prim, x, y)
    return bind(prim, (x, y), None)


def variadic_op(prim):
    def op(*args):
        return bind(prim, args, None)
    return op


def params_op(*names, optional=(), shapes=()):
    """make_op for a primitive with parameters after its one array argument: `names` in order,
    left out when None if `optional`, made tuples if in `shapes`."""
    def make(prim):
        def op(x, *values):
            params = {}
            for name, value in zip(names, values):
                if value is None and name in optional:
                    continue
                params[name] = tuple(value) if name in shapes else value
            c = x.__class__
            if c is not Var and c is not Dual:          # a raw value (a rule's own step): bind's answer
                return prim.impl(x, **params) if params else prim.impl(x)
            return bind(prim, (x,), params or None)
        return op
    return make


# The most elements an array op may create (the `max_elements` setting), set by the interpreter
# for a run. Checked before numpy allocates, on the array paths only: scalars never pay for it.
element_limit = [None]

# The run's float dtype (set with the language's dtype), which a comparison's boolean mask takes
# when a math function is applied to it: exp(x > 0) is e, not float16's 2.71875.
run_dtype = ["float64"]


def check_elements(dims, what: str) -> None:
    """Refuse, before anything is allocated, an array of shape `dims` over the element limit
    (--max-elements): the builtins that make arrays from counts (tile, repeat, eye, full, pad,
    broadcast_to) ask here first."""
    limit = element_limit[0]
    if limit is None:
        return
    count = 1
    for d in dims:
        count *= max(int(d), 0)
    if count > limit:
        raise TooLarge(f"{what} would make an array of shape {tuple(int(d) for d in dims)} "
                       f"({count:,} elements), more than the limit of {limit:,}")


def check_result_size(prim, x, y):
    limit = element_limit[0]
    if limit is None:
        return
    sx, sy = shape(x), shape(y)
    if not sx or not sy:
        return                                  # a scalar with an array: no larger than the array
    if prim.name == "matmul":
        result = tuple(sx[:-1]) + tuple(sy[1:]) if len(sy) > 1 else tuple(sx[:-1])
    else:
        try:
            result = broadcast_shape(sx, sy)
        except ValueError:
            return                              # the op itself reports the mismatch
    count = 1
    for d in result:
        count *= d
    if count > limit:
        raise TooLarge(f"{prim.name} would make an array of shape {tuple(result)} "
                       f"({count:,} elements), more than the limit of {limit:,}")


# ---- helpers ----------------------------------------------------------------------------------

def broadcast_shape(*shapes) -> tuple:
    """numpy's broadcast_shapes of host shape tuples (works for any device's arrays), without its
    call where they are all one shape (the usual case: numpy's takes a few microseconds)."""
    first = shapes[0]
    for s in shapes:
        if s != first:
            return np().broadcast_shapes(*shapes)
    return first


def shape(v) -> tuple:
    """The shape of a value, boxed or not (() for a number): the one shape helper."""
    c = v.__class__
    if c is float or c is int or c is bool:
        return ()
    while c is Var or c is Dual:
        v = v.value if c is Var else v.primal
        c = v.__class__
    s = getattr(v, "shape", ())
    return s if s.__class__ is tuple else tuple(s)      # an array's shape is a tuple already


PEEKS.add(shape.__code__)               # a pending value's shape is its equation's: not forced


def ndim(v) -> int:
    return len(shape(v))


def size(v) -> int:
    count = 1
    for d in shape(v):
        count *= d
    return count


def plain_scalar(r):
    """numpy float64 scalars become Python floats, so scalar code stays on the fast path."""
    return float(r) if r.__class__ is np().float64 else r


def float_fallback(npfn, *args):
    """A float function through numpy, for IEEE results where Python raises (1/0, exp(1000))."""
    with np().errstate(all="ignore"):
        return float(npfn(*(np().float64(a) for a in args)))


def unary(mathfn, npname):
    """Forward of an elementwise function: `math` for floats (numpy semantics on domain errors:
    log(-1) is nan, exp(1000) is inf), the backend otherwise."""
    def impl(x):
        if x.__class__ is float:
            try:
                return mathfn(x)
            except (ValueError, OverflowError, ZeroDivisionError):
                return float_fallback(getattr(np(), npname), x)
        if getattr(x, "dtype", None) == bool:     # a comparison's mask: numpy would make float16
            x = x.astype(run_dtype[0])
        return plain_scalar(getattr(xp(), npname)(x))
    impl.__name__ = npname
    return impl


def zeros_like(x):
    v = strip(x)
    return 0.0 if v.__class__ is float else xp().zeros_like(v)
