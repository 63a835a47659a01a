"""Symbolic partial derivatives (issue 31 item 5): the adjoint `emit` writes from the rules
table, read as formulas. `raw` substitutes the reverse sweep's statements into each other as
text (the chain-rule expression the sweep builds, swell included); `simplified` and `latex`
run the emitted module on SymPy symbols (numpy's names bound to SymPy's functions) and let
SymPy simplify and print. SymPy is imported only here (an extra, like cupy); no simplifier of
our own. Straight-line targets only: a branch on a symbol has no formula yet."""
from __future__ import annotations

import importlib.util
import os
import re
import tempfile

from ...parser.errors import SourceError
from ..core.rules import TABLE
from .module import emit_module, program_functions, real_only, same_shapes
from .sweeps import wrapped

FORMS = ("simplified", "raw", "latex")
INSTALL_HINT = "pip install 'autodiff[symbolic]' (SymPy)"
ASSIGNMENT = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*) = (.*?)(  # line [0-9]+)?$")
NAME = re.compile(r"\b[A-Za-z_][A-Za-z_0-9]*\b(?!\()")
# numpy's names in the emitted text -> SymPy's, where they differ
# numpy's names SymPy spells otherwise than the rules table's alias (arcsin's asin is its alias there)
SYMPY_NAMES = {"abs": "Abs", "absolute": "Abs", "remainder": "Mod", "negative": None, "power": "Pow"}


def sympy_module():
    try:
        import sympy
    except ImportError:
        raise SourceError("missing extra", "--symbolic needs SymPy, which is not installed", None,
                          INSTALL_HINT) from None
    return sympy


class SympyNumpy:
    """numpy's functions as the emitted module calls them (np.cos...), made SymPy's."""

    def __init__(self, sympy):
        self.sympy = sympy
        self.pi, self.e, self.inf = sympy.pi, sympy.E, sympy.oo

    @staticmethod
    def shape(value):               # a symbol stands for a number
        return ()

    @staticmethod
    def iscomplexobj(value):        # the symbols are real (emit/module.py's check of real inputs)
        return False

    @staticmethod
    def ndim(value):
        return 0

    def zeros(self, shape):
        return self.sympy.Integer(0)

    def __getattr__(self, name):
        target = SYMPY_NAMES[name] if name in SYMPY_NAMES else getattr(TABLE.get(name), "alias", None) or name
        if target is None or not hasattr(self.sympy, target):
            raise SourceError("not symbolic", f"--symbolic: numpy's {name} has no SymPy function here", None,
                              "leave out --symbolic")
        return getattr(self.sympy, target)


def straight_lines(text: str, name: str, params: list) -> list:
    """The statements of `name`_vjp, refused where it branches or loops."""
    body = text.split(f"def {name}_vjp(", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    # the checks of the inputs' shapes and realness, the very lines emit/module.py writes when
    # no point is given (symbols are numbers here)
    guard = set(same_shapes(params) + real_only(params))
    lines = [line for line in body if "_stack" not in line and line not in guard]
    if any(line.strip().startswith(("if ", "for ", "while ", "else")) for line in lines):
        raise SourceError("not symbolic", "--symbolic: the target branches or loops; only straight-line "
                          "targets get a formula yet", None, "leave out --symbolic")
    return lines


def raw_partials(text: str, name: str, wrt: list, params: list) -> dict:
    """Each adjoint as the reverse sweep builds it: every temporary written into its uses."""
    env = {"cotangent": "1"}
    for line in straight_lines(text, name, params):
        m = ASSIGNMENT.match(line)
        if not m:
            continue
        if m[1] == "_out_b":                # the seed: the cotangent, 1
            env["_out_b"] = "1"
            continue
        expr = NAME.sub(lambda n: env.get(n[0], n[0]), m[2]).replace("np.", "")
        env[m[1]] = wrapped(expr)
    return {w: _unwrapped(env.get(f"{w}_b", "0")) for w in wrt}


def _unwrapped(text: str) -> str:
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def symbolic_partials(target, wrt: list | None = None, form: str = "simplified") -> dict:
    """name -> the partial derivative's formula (`form`: simplified, raw or latex)."""
    sympy = sympy_module()
    _, name, _ = program_functions(target)
    params = list(target.inputs)
    wrt = list(wrt or params)
    text = emit_module(target, wrt, "adjoint")
    if form == "raw":
        return raw_partials(text, name, wrt, params)
    straight_lines(text, name, params)
    vjp = _loaded(text, name)
    symbols = [sympy.Symbol(p, real=True) for p in params]
    _, grads = vjp(*symbols, cotangent=sympy.Integer(1))
    out = {}
    for w, g in zip(wrt, grads):
        expr = sympy.simplify(sympy.nsimplify(g, rational=True))
        out[w] = sympy.latex(expr) if form == "latex" else str(expr)
    return out


def _loaded(text: str, name: str):
    """The emitted module's `name`_vjp with numpy's names bound to SymPy's (our generated text,
    imported from a file of its own)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "symbolic_emitted.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        spec = importlib.util.spec_from_file_location("_autodiff_symbolic", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    module.np = SympyNumpy(sympy_module())
    return getattr(module, f"{name}_vjp")


def branches(target) -> bool:
    """Whether the target's emitted adjoint branches or loops (its formula is a path's)."""
    _, name, _ = program_functions(target)
    try:
        straight_lines(emit_module(target, None, "adjoint"), name, list(target.inputs))
    except SourceError as exc:
        if exc.kind == "not symbolic":
            return True
        raise
    return False


# ---- the path taken: programs with control flow ----------------------------------------------

class Pathed:
    """A number with its formula: the formula in SymPy, the value as numpy computes it. The
    emitted module runs on these at the point: a decision takes the value's way and is noted
    with its formula (the assumption the derivative's formula holds under)."""
    __slots__ = ("expr", "value", "notes")

    def __init__(self, expr, value, notes):
        self.expr, self.value, self.notes = expr, value, notes

    def __bool__(self):
        return bool(self.value)

    def __index__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)


def _parts(v, notes, sympy):
    if type(v) is Pathed:
        return v.expr, v.value
    return sympy.nsimplify(v, rational=True) if v.__class__ is float else sympy.sympify(v), v


def _arithmetic(symbol):
    import operator
    py = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}[symbol]

    def forward(self, other):
        return _combine(py, self, other)

    def reflected(self, other):
        return _combine(py, other, self)
    return forward, reflected


def _combine(op, a, b):
    notes = a.notes if type(a) is Pathed else b.notes
    sympy = sympy_module()
    (ea, va), (eb, vb) = _parts(a, notes, sympy), _parts(b, notes, sympy)
    with np_errors():
        value = op(np_float(va), np_float(vb))
    return Pathed(op(ea, eb), value, notes)


def _comparison(symbol):
    import operator
    py = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
          "!=": operator.ne}[symbol]

    def compare(self, other):
        sympy = sympy_module()
        (ea, va), (eb, vb) = _parts(self, self.notes, sympy), _parts(other, self.notes, sympy)
        outcome = bool(py(va, vb))
        relation = f"{sympy.simplify(ea)} {symbol} {sympy.simplify(eb)}"
        self.notes.append(relation if outcome else f"not ({relation})")
        return outcome
    return compare


for _symbol, _name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "truediv"), ("**", "pow")):
    _f, _r = _arithmetic(_symbol)
    setattr(Pathed, f"__{_name}__", _f)
    setattr(Pathed, f"__r{_name}__", _r)
for _symbol, _name in (("<", "lt"), ("<=", "le"), (">", "gt"), (">=", "ge"), ("==", "eq"), ("!=", "ne")):
    setattr(Pathed, f"__{_name}__", _comparison(_symbol))
Pathed.__neg__ = lambda self: Pathed(-self.expr, -self.value, self.notes)
Pathed.__pos__ = lambda self: self
Pathed.__hash__ = object.__hash__


def np_float(v):
    from ..core.backend import np
    return np().float64(v) if v.__class__ in (int, float) else v


def np_errors():
    from ..core.backend import np
    return np().errstate(all="ignore")


class PathedNumpy(SympyNumpy):
    """numpy's functions on Pathed numbers: SymPy's for the formula, numpy's for the value (of a
    number, sum is the number and a norm its absolute value)."""

    @property
    def linalg(self):
        return self

    def sum(self, x):
        return x

    def norm(self, x):
        return self.absolute(x)

    def __getattr__(self, name):
        from ..core.backend import np
        formula, numeric = super().__getattr__(name), getattr(np(), name)

        def apply(*args):
            notes = next((a.notes for a in args if type(a) is Pathed), [])
            parts = [_parts(a, notes, self.sympy) for a in args]
            with np_errors():
                value = numeric(*[np_float(v) for _, v in parts])
            return Pathed(formula(*[e for e, _ in parts]), value, notes)
        return apply


def path_partials(target, values: dict, wrt: list | None = None, form: str = "simplified") -> tuple:
    """({name: formula}, [the decisions assumed]) of the path the program takes at `values`
    (numbers): the emitted adjoint run on numbers carrying their formulas."""
    sympy = sympy_module()
    _, name, _ = program_functions(target)
    params = list(target.inputs)
    wrt = list(wrt or params)
    text = emit_module(target, wrt, "adjoint")
    vjp = _loaded(text, name)
    vjp.__globals__["np"] = PathedNumpy(sympy)
    notes: list = []
    args = []
    for p in params:
        if getattr(values[p], "ndim", 0):
            raise SourceError("not symbolic", f"--symbolic: {p} is an array; formulas are for numbers yet", None,
                              "leave out --symbolic")
        args.append(Pathed(sympy.Symbol(p, real=True), float(values[p]), notes))
    _, grads = vjp(*args, cotangent=Pathed(sympy.Integer(1), 1.0, notes))
    out = {}
    for w, g in zip(wrt, grads):
        expr = g.expr if type(g) is Pathed else sympy.nsimplify(g, rational=True)
        expr = expr if form == "raw" else sympy.simplify(expr)
        out[w] = sympy.latex(expr) if form == "latex" else str(expr)
    return out, list(dict.fromkeys(notes))
