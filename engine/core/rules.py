"""THE derivative table. Each primitive's forward, VJP and JVP stand together.

Forward rules (`impl`) compute on raw values: Python floats take a fast path through `math`,
arrays go to the backend's module. VJP rules map the output's adjoint `g` to one argument's
adjoint; JVP rules map one argument's tangent `t` to the output's tangent. Both are written in
engine ops (`O.cos(x)`, `g * y`, `O.div`: Python's own `/` and `**` raise on floats where IEEE
gives inf or nan), never on raw arrays, so the reverse sweep can be recorded
and differentiated again. Rules get (g or t, ans, *args, **params); `ans` is None unless the
primitive declares `needs_ans`, and args are `Shape` stand-ins unless it declares `needs_args`.

Kink conventions (README, "Non-differentiable points"): abs'(0)=0, relu'(0)=0, sign'=0, ties in
max/min/maximum/minimum split the gradient evenly, comparisons carry no gradient, sqrt'(0)=+inf,
norm of a zero vector has gradient 0. Each kink or tie evaluated is noted with its source span.
"""
from __future__ import annotations

import math

from .backend import np, xp
from .notes import NOTES

TABLE: dict = {}


class NotImplementedRule:
    """Marks an argument whose derivative the engine refuses rather than gets wrong."""

    def __init__(self, why):
        self.why = why

    def __call__(self, *a, **k):
        raise NotImplementedError(self.why)


class Primitive:
    __slots__ = ("name", "impl", "vjps", "jvps", "needs_args", "needs_ans", "nondiff", "kink")

    def __init__(self, name, impl, vjps=(), jvps=(), needs_args=True, needs_ans=False, nondiff=False, kink=None):
        self.name = name
        self.impl = impl
        self.vjps = tuple(vjps)
        self.jvps = tuple(jvps)
        self.needs_args = needs_args
        self.needs_ans = needs_ans
        self.nondiff = nondiff
        self.kink = kink          # the convention applied at this primitive's kinks, for reports

    def __repr__(self):
        return f"<primitive {self.name}>"


def defprim(name, impl, vjp=(), jvp=(), **kw) -> Primitive:
    prim = Primitive(name, impl, vjp, jvp, **kw)
    TABLE[name] = prim
    return prim


def nondiff(name, impl) -> Primitive:
    """A primitive whose output carries no derivative (comparisons, sign, masks)."""
    return defprim(name, impl, nondiff=True)


# ---- helpers ----------------------------------------------------------------------------------

def shape(v) -> tuple:
    c = v.__class__
    if c is float or c is int or c is bool:
        return ()
    while c is O.Var or c is O.Dual:
        v = v.value if c is O.Var else v.primal
        c = v.__class__
    return getattr(v, "shape", ())


def ndim(v) -> int:
    return len(shape(v))


def unbroadcast(g, target):
    """Undo numpy broadcasting: sum g down to the shape of `target` (the one helper for it)."""
    if g.__class__ is float and target.__class__ is float:
        return g
    ts = shape(target)
    if shape(g) == ts:
        return g
    return O.sum_to(g, ts)


def bcast(t, ans):
    """A tangent broadcast up to the output's shape (forward mode's counterpart of unbroadcast)."""
    s = shape(ans)
    if shape(t) == s:
        return t
    return O.broadcast_to(t, s)


def _scalar(r):
    """numpy float64 scalars become Python floats, so scalar code stays on the fast path."""
    return float(r) if r.__class__ is np().float64 else r


def _float_fallback(npfn, *args):
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
                return _float_fallback(getattr(np(), npname), x)
        return _scalar(getattr(xp(), npname)(x))
    impl.__name__ = npname
    return impl


# ---- arithmetic -------------------------------------------------------------------------------

def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def _mul(x, y):
    return x * y


def _div(x, y):
    try:
        return x / y
    except ZeroDivisionError:                   # Python floats: follow IEEE like numpy
        return _float_fallback(np().true_divide, x, y)


def _pow(x, y):
    try:
        r = x ** y
    except (ZeroDivisionError, OverflowError):
        return _float_fallback(np().power, x, y)
    if r.__class__ is complex:                  # (-8) ** (1/3): nan, as in numpy
        return math.nan
    return r


def _neg(x):
    return -x


def _matmul(x, y):
    xs, ys = shape(x), shape(y)
    if not xs or not ys:
        raise ValueError("matmul needs arrays of at least one dimension; use * for scalars")
    if len(xs) > 2 or len(ys) > 2:
        raise ValueError("matmul supports vectors and matrices (at most 2 dimensions)")
    return _scalar(x @ y)


ADD = defprim("add", _add, needs_args=False,
              vjp=(lambda g, ans, x, y: unbroadcast(g, x),
                   lambda g, ans, x, y: unbroadcast(g, y)),
              jvp=(lambda t, ans, x, y: bcast(t, ans),
                   lambda t, ans, x, y: bcast(t, ans)))
SUB = defprim("sub", _sub, needs_args=False,
              vjp=(lambda g, ans, x, y: unbroadcast(g, x),
                   lambda g, ans, x, y: unbroadcast(-g, y)),
              jvp=(lambda t, ans, x, y: bcast(t, ans),
                   lambda t, ans, x, y: bcast(-t, ans)))
MUL = defprim("mul", _mul,
              vjp=(lambda g, ans, x, y: unbroadcast(g * y, x),
                   lambda g, ans, x, y: unbroadcast(x * g, y)),
              jvp=(lambda t, ans, x, y: bcast(t * y, ans),
                   lambda t, ans, x, y: bcast(x * t, ans)))
DIV = defprim("div", _div,
              vjp=(lambda g, ans, x, y: unbroadcast(O.div(g, y), x),
                   lambda g, ans, x, y: unbroadcast(O.div(-g * x, y * y), y)),
              jvp=(lambda t, ans, x, y: bcast(O.div(t, y), ans),
                   lambda t, ans, x, y: bcast(O.div(-t * x, y * y), ans)))
NEG = defprim("neg", _neg, needs_args=False,
              vjp=(lambda g, ans, x: -g,),
              jvp=(lambda t, ans, x: -t,))


def _pow_dy(g, ans, x, y):
    # d/dy x**y = x**y log x; at x == 0 the term is 0 (x**y is 0 there), not nan
    return g * ans * O.log(O.where(O.eq(x, 0.0), 1.0, x))


def _pow_dx(ans, x, y):
    # y x**(y-1); where y == 0 it is exactly 0 (x**0 is constant), also at x == 0 where
    # 0 * 0**-1 would be nan: the base is swapped for 1 there, so no nan reaches any order
    if y.__class__ is float:                    # the usual case, `x**2`: no where() needed
        return y * O.pow(x, y - 1.0) if y != 0.0 else O.zeros_like(x)
    return y * O.pow(O.where(O.eq(y, 0.0), 1.0, x), y - 1.0)


POW = defprim("pow", _pow, needs_ans=True,
              vjp=(lambda g, ans, x, y: unbroadcast(g * _pow_dx(ans, x, y), x),
                   lambda g, ans, x, y: unbroadcast(_pow_dy(g, ans, x, y), y)),
              jvp=(lambda t, ans, x, y: bcast(t * _pow_dx(ans, x, y), ans),
                   lambda t, ans, x, y: bcast(_pow_dy(t, ans, x, y), ans)))


def _matmul_vjp_x(g, ans, x, y):
    if ndim(x) == 1 and ndim(y) == 1:
        return g * y
    if ndim(y) == 1:                                        # (n,k) @ (k,) -> (n,)
        return O.reshape(g, (-1, 1)) * y
    if ndim(x) == 1:                                        # (k,) @ (k,m) -> (m,)
        return O.matmul(y, g)
    return O.matmul(g, O.transpose(y))


def _matmul_vjp_y(g, ans, x, y):
    if ndim(x) == 1 and ndim(y) == 1:
        return g * x
    if ndim(y) == 1:
        return O.matmul(O.transpose(x), g)
    if ndim(x) == 1:
        return O.reshape(x, (-1, 1)) * g
    return O.matmul(O.transpose(x), g)


MATMUL = defprim("matmul", _matmul,
                 vjp=(_matmul_vjp_x, _matmul_vjp_y),
                 jvp=(lambda t, ans, x, y: O.matmul(t, y),
                      lambda t, ans, x, y: O.matmul(x, t)))

# ---- elementwise functions --------------------------------------------------------------------

LN2, LN10 = math.log(2.0), math.log(10.0)


def _elementwise(name, mathfn, npname, deriv, needs_ans=False, **kw):
    """deriv(ans, x) is f'(x) in engine ops; VJP and JVP are both g * f'(x)."""
    return defprim(name, unary(mathfn, npname), needs_ans=needs_ans,
                   vjp=(lambda g, ans, x: g * deriv(ans, x),),
                   jvp=(lambda t, ans, x: t * deriv(ans, x),), **kw)


SIN = _elementwise("sin", math.sin, "sin", lambda ans, x: O.cos(x))
COS = _elementwise("cos", math.cos, "cos", lambda ans, x: -O.sin(x))
TAN = _elementwise("tan", math.tan, "tan", lambda ans, x: 1.0 + ans * ans, needs_ans=True)
# (1 - x)(1 + x), not 1 - x*x: near |x| = 1 the subtraction is exact, the derivative keeps its digits
ARCSIN = _elementwise("arcsin", math.asin, "arcsin", lambda ans, x: O.div(1.0, O.sqrt((1.0 - x) * (1.0 + x))))
ARCCOS = _elementwise("arccos", math.acos, "arccos", lambda ans, x: O.div(-1.0, O.sqrt((1.0 - x) * (1.0 + x))))
ARCTAN = _elementwise("arctan", math.atan, "arctan", lambda ans, x: O.div(1.0, 1.0 + x * x))
SINH = _elementwise("sinh", math.sinh, "sinh", lambda ans, x: O.cosh(x))
COSH = _elementwise("cosh", math.cosh, "cosh", lambda ans, x: O.sinh(x))
TANH = _elementwise("tanh", math.tanh, "tanh", lambda ans, x: 1.0 - ans * ans, needs_ans=True)
EXP = _elementwise("exp", math.exp, "exp", lambda ans, x: ans, needs_ans=True)
LOG = _elementwise("log", math.log, "log", lambda ans, x: O.div(1.0, x))
LOG2 = _elementwise("log2", math.log2, "log2", lambda ans, x: O.div(1.0, x * LN2))
LOG10 = _elementwise("log10", math.log10, "log10", lambda ans, x: O.div(1.0, x * LN10))
SQRT = _elementwise("sqrt", math.sqrt, "sqrt", lambda ans, x: O.div(0.5, ans), needs_ans=True,
                    kink="sqrt'(0) = +inf")
_sqrt_value = SQRT.impl


def _sqrt(x):
    if (x == 0.0) if x.__class__ is float else bool((x == 0).any()):
        NOTES.kink("sqrt", "sqrt at 0: derivative taken as +inf")
    return _sqrt_value(x)


SQRT.impl = _sqrt


def _abs(x):
    if x.__class__ is float:
        if x == 0.0:
            NOTES.kink("abs", "abs at 0: derivative taken as 0")
        return abs(x)
    if (x == 0).any():
        NOTES.kink("abs", "abs at 0: derivative taken as 0")
    return _scalar(xp().abs(x))


ABS = defprim("abs", _abs, vjp=(lambda g, ans, x: g * O.sign(x),),
              jvp=(lambda t, ans, x: t * O.sign(x),), kink="abs'(0) = 0")


def _sign(x):
    if x.__class__ is float:
        return (x > 0.0) - (x < 0.0) + 0.0
    return _scalar(xp().sign(x))


SIGN = nondiff("sign", _sign)


def _step(x):
    """1 where x > 0, else 0: relu's derivative (relu'(0) = 0)."""
    if x.__class__ is float:
        return 1.0 if x > 0.0 else 0.0
    return _scalar((x > 0).astype(getattr(x, "dtype", float)) if hasattr(x, "astype") else float(x > 0))


STEP = nondiff("step", _step)


def _relu(x):
    if x.__class__ is float:
        if x == 0.0:
            NOTES.kink("relu", "relu at 0: derivative taken as 0")
        return x if x > 0.0 else 0.0
    if (x == 0).any():
        NOTES.kink("relu", "relu at 0: derivative taken as 0")
    return _scalar(xp().maximum(x, 0))


RELU = defprim("relu", _relu, vjp=(lambda g, ans, x: g * O.step(x),),
               jvp=(lambda t, ans, x: t * O.step(x),), kink="relu'(0) = 0")


def _sigmoid(x):
    # exp of a non-positive number only (no overflow), and no 1 - (nearly 1) on the negative
    # tail: sigmoid(-30) keeps all its digits (0.5 * (1 + tanh(x/2)) kept three)
    if x.__class__ is float:
        if x >= 0.0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)
    m = xp()
    e = m.exp(-m.abs(x))
    return _scalar(m.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)))


# sigmoid' = sigmoid(x) sigmoid(-x): accurate on both tails, unlike ans * (1 - ans) for x >> 0
SIGMOID = defprim("sigmoid", _sigmoid, needs_ans=True,
                  vjp=(lambda g, ans, x: g * (ans * O.sigmoid(-x)),),
                  jvp=(lambda t, ans, x: t * (ans * O.sigmoid(-x)),))


def _softplus(x):
    if x.__class__ is float:                  # log(1 + e^x) without overflow
        return max(x, 0.0) + math.log1p(math.exp(-abs(x)))
    m = xp()
    return _scalar(m.maximum(x, 0) + m.log1p(m.exp(-m.abs(x))))


SOFTPLUS = defprim("softplus", _softplus,
                   vjp=(lambda g, ans, x: g * O.sigmoid(x),),
                   jvp=(lambda t, ans, x: t * O.sigmoid(x),))


def _share(x, y):
    """x's share of max(x, y): 1 where x > y, 1/2 at a tie, 0 where x < y."""
    if x.__class__ is float and y.__class__ is float:
        return 1.0 if x > y else (0.5 if x == y else 0.0)
    m = xp()
    r = m.where(x > y, 1.0, m.where(x == y, 0.5, 0.0))
    dt = m.result_type(x, y)
    if dt.kind == "f" and r.dtype != dt:           # keep float32 gradients float32
        r = r.astype(dt)
    return _scalar(r[()] if r.ndim == 0 else r)


SHARE = nondiff("share", _share)


def _note_ties(name, x, y):
    tie = (x == y) if (x.__class__ is float and y.__class__ is float) else bool(xp().any(x == y))
    if tie:
        NOTES.kink(name, f"{name} with equal arguments: the gradient is split evenly")


def _maximum(x, y):
    _note_ties("maximum", x, y)
    if x.__class__ is float and y.__class__ is float:
        return x if x >= y else y
    return _scalar(xp().maximum(x, y))


def _minimum(x, y):
    _note_ties("minimum", x, y)
    if x.__class__ is float and y.__class__ is float:
        return x if x <= y else y
    return _scalar(xp().minimum(x, y))


MAXIMUM = defprim("maximum", _maximum, kink="ties split the gradient evenly",
                  vjp=(lambda g, ans, x, y: unbroadcast(g * O.share(x, y), x),
                       lambda g, ans, x, y: unbroadcast(g * O.share(y, x), y)),
                  jvp=(lambda t, ans, x, y: bcast(t * O.share(x, y), ans),
                       lambda t, ans, x, y: bcast(t * O.share(y, x), ans)))
MINIMUM = defprim("minimum", _minimum, kink="ties split the gradient evenly",
                  vjp=(lambda g, ans, x, y: unbroadcast(g * O.share(y, x), x),
                       lambda g, ans, x, y: unbroadcast(g * O.share(x, y), y)),
                  jvp=(lambda t, ans, x, y: bcast(t * O.share(y, x), ans),
                       lambda t, ans, x, y: bcast(t * O.share(x, y), ans)))


def _where(c, x, y):
    if c.__class__ is bool and x.__class__ is float and y.__class__ is float:
        return x if c else y
    return _scalar(xp().where(c, x, y))


WHERE = defprim("where", _where,
                vjp=(None,
                     lambda g, ans, c, x, y: unbroadcast(O.where(c, g, 0.0), x),
                     lambda g, ans, c, x, y: unbroadcast(O.where(c, 0.0, g), y)),
                jvp=(None,
                     lambda t, ans, c, x, y: bcast(O.where(c, t, 0.0), ans),
                     lambda t, ans, c, x, y: bcast(O.where(c, 0.0, t), ans)))

# ---- comparisons (no gradient) ----------------------------------------------------------------


def _compare(name, fn):
    def impl(x, y):
        r = fn(x, y)
        return r if r.__class__ is bool else _scalar(r)
    impl.__name__ = name
    return nondiff(name, impl)


LT = _compare("lt", lambda x, y: x < y)
LE = _compare("le", lambda x, y: x <= y)
GT = _compare("gt", lambda x, y: x > y)
GE = _compare("ge", lambda x, y: x >= y)
EQ = _compare("eq", lambda x, y: x == y)
NE = _compare("ne", lambda x, y: x != y)
FLOOR = nondiff("floor", lambda x: float(math.floor(x)) if x.__class__ is float and math.isfinite(x)
                else _scalar(xp().floor(x)))          # floor(inf) is inf, floor(nan) nan, as numpy

# ---- reductions -------------------------------------------------------------------------------


def _restore(g, x, axis):
    """Broadcast a reduction's adjoint back over the reduced axis."""
    if axis is not None:
        g = O.expand_dims(g, axis)
    return O.broadcast_to(g, shape(x))


def _sum(x, axis=None):
    if x.__class__ is float:
        return x
    return _scalar(xp().sum(x, axis=axis))


SUM = defprim("sum", _sum, needs_args=False,
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis),),
              jvp=(lambda t, ans, x, axis=None: O.sum(t, axis),))


def _extreme(name, fn):
    def impl(x, axis=None):
        if x.__class__ is float:
            return x
        r = fn(x, axis=axis)
        ties = xp().sum(x == (r if axis is None else xp().expand_dims(r, axis)), axis=axis)
        if bool(xp().any(ties > 1)):
            NOTES.kink(name, f"{name} with a tie: the gradient is split evenly among the tied elements")
        return _scalar(r)
    return impl


def _extreme_share(ans, x, axis):
    """Each element's share of a max/min: ties split evenly (a mask over the count)."""
    full = ans if axis is None else O.expand_dims(ans, axis)
    equal = O.eq(x, full)
    dt = getattr(O.strip(x), "dtype", None)
    mask = equal.astype(dt) if dt is not None else equal * 1.0      # float32 stays float32
    return O.div(mask, O.sum(mask, axis) if axis is None else O.expand_dims(O.sum(mask, axis), axis))


MAX = defprim("max", _extreme("max", lambda x, axis: xp().max(x, axis=axis)), needs_ans=True,
              kink="ties split the gradient evenly",
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis) * _extreme_share(ans, x, axis),),
              jvp=(lambda t, ans, x, axis=None: O.sum(t * _extreme_share(ans, x, axis), axis),))
MIN = defprim("min", _extreme("min", lambda x, axis: xp().min(x, axis=axis)), needs_ans=True,
              kink="ties split the gradient evenly",
              vjp=(lambda g, ans, x, axis=None: _restore(g, x, axis) * _extreme_share(ans, x, axis),),
              jvp=(lambda t, ans, x, axis=None: O.sum(t * _extreme_share(ans, x, axis), axis),))


def _prod(x):
    return x if x.__class__ is float else _scalar(xp().prod(x))


def _prod_except(x):
    """For each element, the product of all the others (exact with zeros, no division)."""
    m = xp()
    flat = m.ravel(x)
    left = m.concatenate([m.ones(1, flat.dtype), m.cumprod(flat)[:-1]])
    right = m.concatenate([m.cumprod(flat[::-1])[:-1][::-1], m.ones(1, flat.dtype)])
    return m.reshape(left * right, m.shape(x))


PROD_EXCEPT = defprim("prod_except", _prod_except,
                      vjp=(NotImplementedRule("the second derivative of prod at a point where an element "
                                              "is 0 is not implemented"),),
                      jvp=(NotImplementedRule("the second derivative of prod at a point where an element "
                                              "is 0 is not implemented"),))


def _prod_vjp(g, ans, x):
    if x.__class__ is float:
        return g
    if bool(xp().all(O.strip(x) != 0)):
        return O.div(g * ans, x)            # written in ops: differentiable to any order
    return g * O.prod_except(x)


PROD = defprim("prod", _prod, needs_ans=True,
               vjp=(_prod_vjp,),
               jvp=(lambda t, ans, x: O.sum(_prod_vjp(t, ans, x)),))


def _norm(x):
    if x.__class__ is float:
        return abs(x)
    return _scalar(xp().sqrt(xp().sum(x * x)))


def _norm_vjp(g, ans, x):
    # x / |x|, with the zero vector's gradient taken as 0 (DESIGN convention)
    if O.strip(ans) == 0:
        NOTES.kink("norm", "norm of a zero vector: gradient taken as 0")
        return g * O.zeros_like(x)
    return O.div(g * x, ans)


NORM = defprim("norm", _norm, needs_ans=True, kink="norm'(0) = 0",
               vjp=(_norm_vjp,),
               jvp=(lambda t, ans, x: O.sum(_norm_vjp(t, ans, x)),))

# ---- shapes -----------------------------------------------------------------------------------


def _reshape(x, shape_):
    return xp().reshape(x, shape_)


RESHAPE = defprim("reshape", _reshape, needs_args=False,
                  vjp=(lambda g, ans, x, shape_: O.reshape(g, shape(x)),),
                  jvp=(lambda t, ans, x, shape_: O.reshape(t, shape_),))
TRANSPOSE = defprim("transpose", lambda x: x if x.__class__ is float else xp().transpose(x),
                    needs_args=False,
                    vjp=(lambda g, ans, x: O.transpose(g),),
                    jvp=(lambda t, ans, x: O.transpose(t),))
EXPAND_DIMS = defprim("expand_dims", lambda x, axis: xp().expand_dims(x, axis), needs_args=False,
                      vjp=(lambda g, ans, x, axis: O.reshape(g, shape(x)),),
                      jvp=(lambda t, ans, x, axis: O.expand_dims(t, axis),))


def _broadcast_to(x, shape_):
    return xp().broadcast_to(x, shape_)


def _sum_to(x, shape_):
    """Sum x down to shape_ (the inverse of broadcasting)."""
    if x.__class__ is float:
        return x
    m = xp()
    lead = len(x.shape) - len(shape_)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape_) if n == 1 and x.shape[lead + i] != 1)
    r = m.sum(x, axis=axes, keepdims=True) if axes else x
    return _scalar(m.reshape(r, shape_)) if shape_ else _scalar(m.sum(r))


BROADCAST_TO = defprim("broadcast_to", _broadcast_to, needs_args=False,
                       vjp=(lambda g, ans, x, shape_: unbroadcast(g, x),),
                       jvp=(lambda t, ans, x, shape_: O.broadcast_to(t, shape_),))
SUM_TO = defprim("sum_to", _sum_to, needs_args=False,
                 vjp=(lambda g, ans, x, shape_: O.broadcast_to(g, shape(x)),),
                 jvp=(lambda t, ans, x, shape_: O.sum_to(t, shape_),))


def _getitem(x, index):
    return _scalar(x[index])


def _untake(g, index, shape_):
    """Scatter-add g into zeros of shape_ at index: the adjoint of indexing."""
    m = xp()
    out = m.zeros(shape_, dtype=getattr(g, "dtype", None) or m.float64)
    m.add.at(out, index, g)
    return out


GETITEM = defprim("getitem", _getitem, needs_args=False,
                  vjp=(lambda g, ans, x, index: O.untake(g, index, shape(x)),),
                  jvp=(lambda t, ans, x, index: O.getitem(t, index),))
UNTAKE = defprim("untake", _untake, needs_args=False,
                 vjp=(lambda g, ans, x, index, shape_: O.getitem(g, index),),
                 jvp=(lambda t, ans, x, index, shape_: O.untake(t, index, shape_),))


def _stack(*xs):
    return xp().stack([xp().asarray(v) for v in xs])


def _stack_vjp(i):
    return lambda g, ans, *xs: O.getitem(g, i)


def _stack_jvp(i):
    def jvp(t, ans, *xs):
        s = shape(ans)[1:]
        return O.untake(t if shape(t) == s else O.broadcast_to(t, s), i, shape(ans))
    return jvp


class _StackRules:
    """stack takes any number of arguments: its rules are made per position on demand."""

    def __init__(self, make):
        self.make = make
        self.cache = {}

    def __getitem__(self, i):
        rule = self.cache.get(i)
        if rule is None:
            rule = self.cache[i] = self.make(i)
        return rule


STACK = defprim("stack", _stack, needs_args=False)
STACK.vjps = _StackRules(_stack_vjp)
STACK.jvps = _StackRules(_stack_jvp)

# Every primitive above has a rule for each differentiable argument or is declared nondiff;
# tests/test_rules.py walks TABLE and fails on a primitive that has neither.

# Last, because ops builds its functions from the primitives above: importing either module
# first must work (the rules only look O.<op> up when they run).
from . import ops as O  # noqa: E402
