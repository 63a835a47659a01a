"""A fused region lowered into a small program of named steps, and that program scheduled into
kernels (core/regions.py runs them).

The table's own forward impls and VJP rules are recorded by the one rule tracer and their
equations lowered (core/fusion.py) with a `RegionBuilder` (not core/program.py's Program), which makes each node one
named step instead of nesting it: equal steps are one step (`g == 0.0`, asked by each masked
product, is computed once), and each step knows what it costs. `schedule` then decides which steps become arrays of their own — a step used
more than once that is dear to recompute, or one whose inlined text would grow too big — and
inlines the rest into the expressions of those arrays, so no kernel grows without bound and no
subexpression is recomputed at great cost. Each kernel's expression is a tree of the fused IR
(its steps inlined), from which numexpr's text and the device's CUDA source are printed.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .fused_ir import Expression, Unfusable, complex_constant, complex_refusal, is_constant, is_number, probe_real
from .fusion import REAL_PARTS, Fused
from .rules import TABLE

# The numexpr functions of the table's `dear` entries (transcendental): dear to recompute, so the
# reverse reads the forward's values of them. Those also `numpy_loop`: numpy's own loops for them
# are vectorized (SIMD) and beat numexpr's (which calls libm per element unless built with VML),
# and numexpr's rounds apart from them: each is a step of its own, run by the array module, in
# place where its argument is a temporary. An entry whose `numpy_loop` is "probe" (sin, cos) is
# one only where this process's probe finds numexpr's kernel of it not numpy's bits
# (fused_ir.probe_real); where both are libm's it stays in the numexpr kernels, like the
# arithmetic around them. Read off the table (and probed) once, here.
DEAR_FUNCTIONS = frozenset(prim.numexpr for prim in TABLE.values() if prim.dear and prim.numexpr)
NUMPY_LOOPS = frozenset(prim.numexpr for prim in TABLE.values()
                        if prim.dear and prim.numexpr and (prim.numpy_loop is True or
                                                           prim.numpy_loop == "probe" and probe_real(prim.numexpr)))


def template_of(prim) -> str:
    """The fused IR's template of an elementwise entry's equation: "({} * {})", "(-{})", "sin({})"."""
    spelling = prim.numexpr
    if spelling.isidentifier():
        return spelling + "({})"
    return "(-{})" if prim.arity == 1 else "({} " + spelling + " {})"


# a step's template -> numpy's ufunc of it (the table's `ufuncs`): where numexpr's complex kernel
# of an equation is not numpy's bits (`complex_bits`), or it has a complex constant (numexpr's
# kernels take real ones), a region runs numpy's own loop for it as a step of its own (issue 32:
# numpy's complex product fuses multiply-adds where the CPU has them). Not a power (numpy's complex
# power takes its own paths by the exponent), not abs (a kink)
NUMPY_UFUNCS = {template_of(prim): prim.ufuncs[0] for prim in TABLE.values()
                if prim.numexpr is not None and prim.complex_values is True and prim.elementwise
                and prim.kink is None and prim.name != "pow"}
COMMUTATIVE = frozenset(("({} * {})", "({} + {})"))
FLIPPED = {"({} >= {})": "({} <= {})", "({} <= {})": "({} >= {})", "({} > {})": "({} < {})",
           "({} < {})": "({} > {})", "({} == {})": "({} == {})", "({} != {})": "({} != {})"}
# numexpr evaluates each distinct subexpression of a kernel once (it collapses equal subtrees),
# so a step read twice within one kernel costs nothing more, while an array of its own costs a
# kernel call and a pass over memory: a step becomes an array when several kernels would each
# compute it at this much cost (measured on the chain: reading t59 and t72 as arrays, the old
# rule, was 1.5x slower than their one kernel)
REPEAT_OPS = 16
MAX_KERNEL_OPS = 64        # the distinct work of one kernel (numexpr's registers are bytes)
MAX_TEXT_OPS = 512         # a kernel's text, which grows with every repeat of a subexpression
MAX_KERNEL_READS = 24      # arrays one kernel reads (numpy's iterator takes a bounded number)


def negated_number(text) -> str:
    value = -float(text)
    return repr(value if value != 0.0 else 0.0)      # x <= -0.0 is x <= 0.0


def called(template) -> str | None:
    """The function a step calls ("tanh({})" -> "tanh"), or None."""
    return template[:-4] if template.endswith("({})") else None


def function_of(template) -> str | None:
    """The array function a step of its own applies, or None (numexpr's part)."""
    name = called(template)
    return name if name in NUMPY_LOOPS else None


def complex_numpy_bits(prim) -> bool:
    """Whether a region computes an elementwise entry over complex values with numpy's bits:
    numexpr's kernel where its `complex_bits` says so, else numpy's own loop (`NUMPY_UFUNCS`:
    not a power, not a kink)."""
    return prim.complex_values is True and prim.numexpr is not None and prim.kink is None and (
        prim.complex_bits is True or template_of(prim) in NUMPY_UFUNCS)


def constant(text):
    """A numpy step's operand: a number's value (a float, a complex), else the name as it is."""
    value = complex_constant(text)
    return value if value is not None else float(text) if is_number(text) else text


def spelling_of(template) -> str:
    """numexpr's spelling of a step's operation: "*" of "({} * {})", "-" of "(-{})", "sin" of
    "sin({})"."""
    name = called(template)
    if name is not None:
        return name
    if template == "(-{})":
        return "-"
    return template[4:-4] if template.startswith("({} ") and template.endswith(" {})") else None


def numpy_ufunc(spelling) -> str | None:
    """numpy's ufunc that a region runs for a complex step of `spelling`, or None."""
    return next((ufunc for template, ufunc in NUMPY_UFUNCS.items() if spelling_of(template) == spelling), None)


def is_dear(template) -> bool:
    return called(template) in DEAR_FUNCTIONS


def step_cost(template) -> int:
    """Rough cost of one step: transcendental functions, a power (pow: core/fused.py writes numpy's
    x ** 2.0, x ** 0.5 and x ** -1.0 as x * x, sqrt(x) and 1 / x) and a division are dear."""
    if is_dear(template) or "**" in template:
        return 8
    return 3 if " / " in template else 1


class RegionBuilder:
    """The steps traced so far: name -> (template, operand texts, cost, boolean), in order."""

    def __init__(self):
        self.steps: dict = {}
        self.memo: dict = {}
        self.guards: list = []       # conditions an impl or rule asked `.any()` of (a kink's note)
        self.held: dict = {}         # leaves and steps that are no array of the region's elements
        self.complex: set = set()    # leaves and steps that hold complex128 values
        self.numpy_steps: dict = {}  # complex steps numpy's own ufunc runs -> its name (`NUMPY_UFUNCS`)

    def symbol(self, name, shape, holds="array", complex=False) -> Fused:
        """A leaf (of the region's shape, whatever it broadcasts from) that `holds` a number
        (a Python float), one element, or an array (core/fusion.py's Tree.holds); complex128
        where `complex`."""
        if holds != "array":
            self.held[name] = holds
        if complex:
            self.complex.add(name)
        return Fused(name, shape, complex=complex)

    def value(self, text, shape, boolean=False) -> Fused:
        """The Fused of a leaf's or step's name (or a number)."""
        return Fused(text, shape, boolean, self.is_complex(text))

    def is_complex(self, text) -> bool:
        """Whether a leaf, step or constant holds complex values."""
        return text in self.complex or complex_constant(text) is not None

    @staticmethod
    def complex_refusal(spelling) -> str | None:
        """Why a region's step of `spelling` over complex values is not numpy's bits (None: it
        is): numexpr's where the entry's `complex_bits` says it is numpy's, else numpy's own loop
        (a `numpy_loop` function, or a step numpy's ufunc runs: `numpy_ufunc`); a power stays
        op by op (numpy's complex power takes its own paths by the exponent)."""
        if spelling in NUMPY_LOOPS or complex_refusal(spelling) is None:
            return None
        return None if numpy_ufunc(spelling) is not None else complex_refusal(spelling)

    def function(self, name) -> str | None:
        """The array function a step of its own applies (numpy's loop), or None (numexpr's part)."""
        return self.numpy_steps.get(name) or function_of(self.steps[name][0])

    def holds(self, value) -> str:
        """What a value of the lowering holds (a builder's answer, core/fusion.py)."""
        return self.holds_text(value.expr)

    def holds_text(self, text) -> str:
        return "number" if is_constant(text) else self.held.get(text, "array")

    def guard(self, condition) -> None:
        """`condition.any()` asked before a kink's note (sqrt's): taken as False, and the
        condition kept as a guard. The results are made nan where it holds, so such a region
        runs op by op, where the note is made."""
        self.guards.append(condition)

    def derive(self, template, operands, shape, boolean=False) -> Fused:
        return self.add(template, operands, shape, boolean)

    def add(self, template, operands, shape, boolean) -> Fused:
        texts = tuple(operand.expr for operand in operands)
        if template == "where({}, {}, {})" and texts[1] == "0.0" and self.vanishes_where_zero(texts[0], texts[2]):
            return self.value(texts[2], shape)
        if template == "where({}, {}, {})" and texts[1] == texts[2]:
            return self.value(texts[1], shape)        # the strong zero's where(r == r, r, r)
        inner = self.steps.get(texts[0]) if len(texts) == 1 else None
        if inner is not None and inner[0] == "(-{})" and template in ("abs({})", "(-{})"):
            # abs(-x) is abs(x), -(-x) is x, exactly: sigmoid(-x) in sigmoid's VJP then reuses
            # the forward's exp(-abs(x))
            texts = inner[1]
            if template == "(-{})":
                return self.value(texts[0], shape, boolean)
        if self.by_numpy(template, texts):
            return self.numpy_step(template, texts, shape)
        if any(complex_constant(text) is not None for text in texts):
            raise Unfusable("a complex constant in numexpr's kernel (they take real ones)")
        if template in ("({} * {})", "({} / {})") and all(self.negated(text) for text in texts):
            texts = tuple(self.steps[text][1][0] for text in texts)     # (-a) * (-b) is a * b exactly
        elif template in ("({} * {})", "({} / {})") and any(map(self.negated, texts)):
            moved = self.negation_outside(template, texts, shape, boolean)
            if moved is not None:
                return moved
        if template in FLIPPED and is_number(texts[1]) and self.negated(texts[0]):
            # (-x) >= c is x <= -c, exactly (nan: False both ways): sigmoid(-x)'s test, one op less
            template, texts = FLIPPED[template], (self.steps[texts[0]][1][0], negated_number(texts[1]))
        elif template == "({} + {})":
            template, texts = self.as_difference(texts)
        elif template == "({} - {})" and self.negated(texts[1]):
            template, texts = "({} + {})", (texts[0], self.steps[texts[1]][1][0])     # x - (-y) is x + y
        if template in COMMUTATIVE:
            if texts[0] > texts[1]:
                texts = (texts[1], texts[0])         # a * b is b * a exactly: one step for both
            if template == "({} + {})" and texts[0] == texts[1] and not self.is_complex(texts[0]):
                template, texts = "({} * {})", ("2.0", texts[0])     # s + s is 2 s exactly (a real s)
        key = template.format(*texts)
        name = self.memo.get(key)
        if name is None:
            name = self.memo[key] = f"t{len(self.steps)}"
            self.steps[name] = (template, texts, step_cost(template), boolean)
            held = {self.holds_text(text) for text in texts}
            if "array" not in held:
                self.held[name] = "number" if held == {"number"} else "one"
            if not boolean and template not in REAL_PARTS and any(map(self.is_complex, texts)):
                self.complex.add(name)
        return self.value(name, shape, boolean)

    def by_numpy(self, template, texts) -> bool:
        """Whether a step over complex values is numpy's ufunc's (its template's `NUMPY_UFUNCS`):
        where numexpr's complex kernel is not numpy's bits, or a complex constant is an operand."""
        if template not in NUMPY_UFUNCS or not any(map(self.is_complex, texts)):
            return False
        if any(complex_constant(text) is not None for text in texts):
            return True
        spelling = spelling_of(template)
        return spelling not in NUMPY_LOOPS and complex_refusal(spelling) is not None

    def numpy_step(self, template, texts, shape) -> Fused:
        """A complex step that numpy's own ufunc runs (its operands as traced: no rewrite, as
        numpy's fused complex product is not commutative to the bit)."""
        key = template.format(*texts)
        name = self.memo.get(key)
        if name is None:
            name = self.memo[key] = f"t{len(self.steps)}"
            self.steps[name] = (template, texts, 8, False)
            self.complex.add(name)
            self.numpy_steps[name] = NUMPY_UFUNCS[template]
        return self.value(name, shape)

    def negation_outside(self, template, texts, shape, boolean):
        """(-a) * b as -(a * b), the same for a quotient: the same bits (IEEE rounds symmetrically),
        and the negation moves out to where a sum absorbs it (the chain's reverse: tanh's adjoint
        then reaches sin's and cos's terms with no negation at all)."""
        plain = [self.value(self.steps[text][1][0] if self.negated(text) else text, shape) for text in texts]
        return self.add("(-{})", (self.add(template, plain, shape, boolean),), shape, boolean)

    def as_difference(self, texts) -> tuple:
        """x + (-y) as x - y: the same bits (IEEE's x - y is x + (-y)), one negation less."""
        for first, second in (texts, texts[::-1]):
            if self.negated(second):
                return "({} - {})", (first, self.steps[second][1][0])
        return "({} + {})", texts

    def negated(self, text) -> bool:
        step = self.steps.get(text)
        return step is not None and step[0] == "(-{})"

    def vanishes_where_zero(self, condition, value) -> bool:
        """Whether `value` is already 0 wherever `condition` (t == 0.0) holds, if it is finite:
        a product with t as a factor, a quotient of such a product, its negation. The strong
        zero's inner mask (rules.comparisons.strong_zero's where(t == 0.0, 0.0, t * y), taken
        only where t * y is nan) then changes nothing a region gives out: a region whose
        gradient is not finite runs op by op with the mask."""
        step = self.steps.get(condition)
        if step is None or step[0] != "({} == {})" or step[1][1] != "0.0":
            return False
        factor = step[1][0]
        if self.negated(factor) and not self.has_factor(value, factor):
            factor = self.steps[factor][1][0]     # -x == 0.0 where x == 0.0: (-x) * (-y) became x * y
        return self.has_factor(value, factor)

    def has_factor(self, text, factor) -> bool:
        if text == factor:
            return True
        step = self.steps.get(text)
        if step is None:
            return False
        template, texts = step[0], step[1]
        if template == "({} * {})":
            return any(self.has_factor(t, factor) for t in texts)
        if template in ("({} / {})", "(-{})"):
            return self.has_factor(texts[0], factor)
        return False


@dataclass
class Kernel:
    """One array computed by one call: numexpr's (or the device's) of `expr`, or the array
    module's `function` of the one array it reads (or, a pipeline, of the argument its `steps`
    make from the arrays it reads); the arrays it reads, and those it is the last to read (freed
    once it has run)."""
    name: str
    expr: Expression | None
    function: str | None
    reads: tuple
    frees: tuple
    boolean: bool = False
    steps: tuple = ()           # a pipeline's ufunc calls that make the function's argument
    argument: Expression | None = None     # (core/region_pipeline.py), and that argument's expression
    check: bool = False         # no array made: a guard's zero check of `name` (core/regions.py)
    complex: bool = False       # it makes complex128 values (no float64 buffer of the pool)
    operands: tuple = ()        # a numpy step's (RegionBuilder.numpy_steps): its ufunc's operands, names and numbers


def schedule(program: RegionBuilder, outputs, available, force=frozenset()) -> list:
    """The kernels that compute `outputs` (step names) from `available` (names bound already:
    the leaves, the seed, arrays an earlier phase left), in order; the steps in `force` that
    they need are arrays of their own. Frees are added per phase by `with_frees`."""
    steps = program.steps
    uses = use_counts(steps, outputs, available)
    arrays = set(outputs) | set(available) | (set(force) & set(uses))
    for name in steps:
        if name in uses and name not in available and program.function(name):
            arrays.add(name)                           # its arguments: arrays to apply it to
            arrays.update(text for text in steps[name][1] if not is_constant(text))
    closures = bound_kernels(steps, uses, available, arrays)
    arrays |= shared_by_kernels(steps, uses, available, arrays, closures)
    kernels = []
    for name, (template, texts, _, _) in steps.items():
        if name not in arrays or name in available or name not in uses:
            continue
        function = program.function(name)
        if name in program.numpy_steps:
            kernels.append(Kernel(name=name, expr=None, function=function, frees=(), complex=True,
                                  reads=tuple(dict.fromkeys(text for text in texts if not is_constant(text))),
                                  operands=tuple(constant(text) for text in texts)))
            continue
        if function is not None:
            kernels.append(Kernel(name=name, expr=None, function=function, reads=(texts[0],), frees=(),
                                  complex=name in program.complex))
            continue
        reads: list = []
        expr = Expression((template, *(render(text, steps, arrays, reads) for text in texts)))
        kernels.append(Kernel(name=name, expr=expr, function=None, reads=tuple(dict.fromkeys(reads)), frees=(),
                              boolean=steps[name][3], complex=name in program.complex))
    return kernels


def bound_kernels(steps, uses, available, arrays) -> dict:
    """Make arrays of the steps whose kernels would grow too big (adds to `arrays`): numexpr
    evaluates each distinct subexpression of a kernel once, so a kernel's work is the cost of
    the distinct steps it inlines (MAX_KERNEL_OPS), while its text grows with every repeat
    (MAX_TEXT_OPS). Returns each step's closure: the steps its kernel text would inline."""
    closures: dict = {}
    text_cost: dict = {}
    for name, (template, texts, cost, boolean) in steps.items():
        if name in available or name not in uses:
            continue
        closure = {name}.union(*(closures.get(text, ()) for text in texts))
        total = cost + sum(text_cost.get(text, 0) for text in texts)
        if name not in arrays and (total > MAX_TEXT_OPS or closure_cost(steps, closure) > MAX_KERNEL_OPS
                                   or len(closure_reads(steps, closure)) > MAX_KERNEL_READS):
            arrays.add(name)
        closures[name] = closure
        if name in arrays:
            closures[name], text_cost[name] = frozenset(), 0
        else:
            text_cost[name] = total
    return closures


def closure_cost(steps, closure) -> int:
    return sum(steps[name][2] for name in closure)


def closure_reads(steps, closure) -> set:
    """The names a kernel inlining `closure` reads: the operands outside it (numbers aside)."""
    return {text for name in closure for text in steps[name][1] if text not in closure and text.isidentifier()}


def shared_by_kernels(steps, uses, available, arrays, closures) -> set:
    """The steps that two or more kernels would each compute, at a cost worth an array of their
    own (an extra pass over memory): readers come after what they read, so going backwards the
    kernels that inline a step are known when it is decided. Identical step text computes
    identical bits, so reading the array instead of recomputing changes no result."""
    shared = set()
    owners: dict = {}
    for name in reversed(list(steps)):
        if name not in uses or name in available:
            continue
        template, texts, cost, boolean = steps[name]
        mine = owners.get(name, set())
        if name in arrays:
            mine = {name}
        elif not boolean and len(mine) > 1:
            inlined = set(closures.get(name, ())) | {name}
            if closure_cost(steps, inlined) * (len(mine) - 1) >= REPEAT_OPS:
                shared.add(name)
                mine = {name}
        for text in texts:
            owners.setdefault(text, set()).update(mine)
    return shared


def use_counts(steps, outputs, available) -> dict:
    """How often each step is read by the steps the outputs need (and by the outputs), down to
    the available names."""
    uses = dict.fromkeys(outputs, 1)
    needed = set(outputs)
    for name in reversed(list(steps)):
        if name in needed and name not in available:
            for text in steps[name][1]:
                uses[text] = uses.get(text, 0) + 1
                needed.add(text)
    return uses


def render(text, steps, arrays, reads):
    """A step's tree with every step that is not an array of its own inlined."""
    if text in arrays or text not in steps:
        if text in arrays or text.isidentifier():
            reads.append(text)
        return text
    template, texts, _, _ = steps[text]
    return (template, *(render(t, steps, arrays, reads) for t in texts))


def with_frees(kernels, kept) -> list:
    """Each kernel with the arrays it reads last (not kept): freeing them bounds the peak."""
    last: dict = {}
    for i, kernel in enumerate(kernels):
        for name in kernel.reads:
            last[name] = i
    out = []
    for i, kernel in enumerate(kernels):
        frees = tuple(name for name in kernel.reads if last[name] == i and name not in kept)
        out.append(replace(kernel, frees=frees))
    return out


def depends_on(program: RegionBuilder, root: str) -> set:
    """The steps whose value depends on the input `root` (the seed g: the reverse sweep's)."""
    found = set()
    for name, (template, texts, cost, boolean) in program.steps.items():
        if any(text == root or text in found for text in texts):
            found.add(name)
    return found
