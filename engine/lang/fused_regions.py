"""Finding fused regions in an expression when it compiles, and running them (core/regions.py).

A region is a maximal subtree of one expression made only of elementwise table primitives
(`+ - * /`, unary minus, `**`, and calls of builtins such as sin, exp, sigmoid, sqrt) over names
and number literals, with at least MIN_REGION_OPS operations. It compiles to a closure that looks
at one leaf first (the name the region reads most): if that is a float (or a Var over one), the
ordinary op-by-op closure runs at once, so scalar code pays one check per region, never per op. Otherwise the leaves are read and core/regions.py decides (large float64 or complex128 arrays, a plain
tape); whatever it declines runs op by op, exactly as unfused code.
"""
from __future__ import annotations

import math

from ...parser import nodes
from ...parser.errors import SourceError
from ..core import fused
from ..core.region_plan import MAX_NODES, PlanBuilder, eligible
from ..core.rules import builtin_primitives
from ..core.tape import Var
from .values import literal

MIN_REGION_OPS = 3          # fewer operations gain nothing worth a closure of their own
MAX_REGION_OPS = MAX_NODES  # larger subtrees are split: their parts are regions of their own
ARITHMETIC = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
MAX_SMALL_SHAPES = 8
ROOTS = (nodes.BinChain, nodes.UnaryOp, nodes.Power, nodes.Call)
_CALLABLE: dict = {}        # builtin name -> its table entry, for the entries a region may hold


class NotRegion(Exception):
    """A node no region may contain."""


def callable_primitives() -> dict:
    if not _CALLABLE:
        for prim in builtin_primitives():
            if eligible(prim):
                for name in filter(None, (prim.builtin, prim.alias)):
                    _CALLABLE[name] = prim
    return _CALLABLE


class RegionFinder:
    """Walks a subtree into a region's Program (core/region_plan.py's PlanBuilder: its equations
    in the order the op-by-op closures evaluate them). `walk` gives ("const", number) or ("ref",
    the builder's reference) of each operand; `leaves`: name -> (leaf position, first Name node,
    its Name nodes)."""

    def __init__(self, builtins, scope):
        self.builtins, self.scope = builtins, scope
        self.builder, self.leaves = PlanBuilder(), {}
        self.entered = 0

    def enter(self, ops) -> None:
        """Count the nodes an operation will add before walking its operands: a subtree too big
        is refused at once, not after walking all of it (sin(sin(...)) 5000 deep was quadratic:
        each of its 5000 roots walked to the bottom)."""
        self.entered += ops
        if self.entered > MAX_REGION_OPS:
            raise NotRegion

    def add(self, name, operands, span):
        # (within MAX_REGION_OPS: every add is counted by an enter before its operands are walked)
        args = tuple(ref if kind == "const" else None for kind, ref in operands)
        refs = tuple((pos, ref) for pos, (kind, ref) in enumerate(operands) if kind == "ref")
        return ("ref", self.builder.add(name, args, refs, span))

    def operations(self) -> int:
        return self.builder.operations()

    def walk(self, e):
        c = e.__class__
        if c is nodes.Num:
            value = literal(e.value)
            if value.__class__ in (float, int):
                return ("const", value)
            if isinstance(value, complex):           # 2j in a float64 run (numpy's complex128 is a complex):
                return ("const", complex(value))     # a complex constant (issue 32)
            raise NotRegion                          # a float32 or complex64 literal: the unfused path
        if c is nodes.Name:
            leaf = self.leaves.get(e.id)
            if leaf is None:
                leaf = self.leaves[e.id] = (~self.builder.leaf(), e, [])
            leaf[2].append(e)
            return ("ref", ~leaf[0])
        if c is nodes.UnaryOp:
            if e.op != "+":
                self.enter(1)
            operand = self.walk(e.operand)
            if e.op == "+":
                return operand
            if operand[0] == "const":            # -3.0, a number (x ** -3.0: no adjoint of a negation)
                return ("const", -operand[1])
            return self.add("neg", (operand,), e.span)
        if c is nodes.BinChain:
            if any(op not in ARITHMETIC for op in e.ops):
                raise NotRegion
            self.enter(len(e.ops))
            left = self.walk(e.operands[0])
            for op, x, span in zip(e.ops, e.operands[1:], e.op_spans):
                left = self.add(ARITHMETIC[op], (left, self.walk(x)), span)
            return left
        if c is nodes.Power:
            self.enter(1)
            base = self.walk(e.base)
            return self.add("pow", (base, self.walk(e.exponent)), e.op_span)
        if c is nodes.Call:
            return self.call(e)
        raise NotRegion

    def call(self, e):
        func = e.func
        if func.__class__ is not nodes.Name or e.keywords or (not func.module and self.scope.find(func.id) is not None):
            raise NotRegion
        prim = callable_primitives().get(func.id)
        builtin = self.builtins.get(func.id)
        if prim is None or getattr(builtin, "name", None) != func.id or len(e.args) != prim.arity:
            raise NotRegion
        self.enter(1)
        return self.add(prim.name, [self.walk(a) for a in e.args], e.span)


def compile_region(compiler, e, scope):
    """The closure of a region rooted at `e`, or None if `e` roots none."""
    finder = RegionFinder(compiler.builtins, scope)
    try:
        finder.walk(e)
    except NotRegion:
        return None
    if finder.operations() < MIN_REGION_OPS or not finder.leaves:
        return None
    compiler.compiling_region = True
    try:
        unfused = getattr(compiler, "e_" + type(e).__name__)(e, scope)
        leaves = [compiler.expr(first, scope) for _, first, _ in finder.leaves.values()]
    finally:
        compiler.compiling_region = False
    probe = max(finder.leaves.values(), key=lambda leaf: (scope.find(leaf[1].id) == "local", len(leaf[2])))
    return region_closure(finder.builder, e.span, unfused, leaves, probe, scope)


def region_closure(builder, span, unfused, leaves, probe, scope):
    """The probe is a float (or a Var of one): the scalar path at once (numpy stays unimported).
    The region's plan (its Program) is made from `builder` when arrays first reach it: scalar code,
    which compiles many regions and runs none, never builds one."""
    small = set()                            # shapes of the probe that made too few elements
    made = []                                # the plan, once made

    def fused_or_not(frame, probe_value):
        c = probe_value.__class__
        if c is Var:
            probe_value = probe_value.value
            c = probe_value.__class__
        if c is float:                           # the scalar path
            return unfused(frame)
        shape = getattr(probe_value, "shape", None)
        # a loop over small arrays: one lookup, then op by op; no shape (a Dual, a box of a box: a
        # nested derivative's) is no leaf a kernel takes (regions.layouts), so no region either
        if shape is None or shape in small:
            return unfused(frame)
        try:
            values = [leaf(frame) for leaf in leaves]
        except SourceError:                  # the op-by-op run raises it at the place it meets first
            return unfused(frame)
        from ..core import regions    # lazy: only a region over arrays needs the kernels; start-up stays fast
        if not made:
            made.append(builder.plan(span))
        out = regions.run(made[0], values)
        if out is None:
            if shape is not None and math.prod(shape) < fused.FUSE_MIN_ELEMENTS and len(small) < MAX_SMALL_SHAPES:
                small.add(shape)
            return unfused(frame)
        return out

    if scope.find(probe[1].id) == "local":
        name = probe[1].id

        def local_region(frame):
            return fused_or_not(frame, frame.vars.get(name))
        return local_region
    load = leaves[probe[0]]

    def region(frame):
        try:
            v = load(frame)
        except SourceError:                  # a name not yet assigned: the op-by-op run says where
            return unfused(frame)
        return fused_or_not(frame, v)
    return region
