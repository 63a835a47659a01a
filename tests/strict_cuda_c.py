"""The C the strict stand-in's ElementwiseKernel runs (tests/strict_cupy.py): a small interpreter
of the subset engine/core/device_kernels.py writes, on numpy arrays, so a wrong translation fails
on the CPU. One statement, `out = <expression>;`, with the ternary operator, comparisons, + - * /,
unary minus, C's math functions (asin, fabs, pow, ...), int and double literals, true/false and the
kernel's parameters, under C's arithmetic conversions (bool, then int, float, double; int / int
truncates). Anything else raises.
"""
import re

import numpy

_C_TOKEN = re.compile(r"\s*(?:(?P<double>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)"
                      r"|(?P<int>\d+)|(?P<name>[A-Za-z_]\w*)|(?P<op>[<>=!]=|[-+*/()?:,<>;=]))")
_C_MATH = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
           "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log", "log10": "log10",
           "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "fabs": "absolute", "pow": "power"}
_C_RANK = {"bool": 0, "int32": 1, "float32": 2, "float64": 3}
_C_EQUALITY = {"==": numpy.equal, "!=": numpy.not_equal}
_C_RELATIONAL = {"<": numpy.less, "<=": numpy.less_equal, ">": numpy.greater, ">=": numpy.greater_equal}


def c_tokens(text):
    tokens, at = [], 0
    while text[at:].strip():
        match = _C_TOKEN.match(text, at)
        if match is None:
            raise SyntaxError(f"the stand-in's C does not know {text[at:at + 12]!r}")
        tokens.append((match.lastgroup, match.group(match.lastgroup)))
        at = match.end()
    return tokens


def c_common(*values):
    """C's usual arithmetic conversions (bool promotes to int): every value as the widest type."""
    widest = max((str(v.dtype) for v in values), key=_C_RANK.__getitem__)
    widest = "int32" if widest == "bool" else widest
    return [v.astype(widest) for v in values]


class CExpression:
    """Reads and evaluates one C expression over the kernel's parameters (numpy arrays inside)."""

    def __init__(self, text, env):
        self.tokens, self.at, self.env = c_tokens(text), 0, env

    def peek(self):
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def take(self, expected=None):
        if self.at >= len(self.tokens) or (expected is not None and self.tokens[self.at][1] != expected):
            raise SyntaxError(f"the stand-in's C expected {expected or 'more'} at token {self.at}")
        self.at += 1
        return self.tokens[self.at - 1]

    def statement(self):
        """`out = expression;` and nothing else: the value assigned."""
        self.take("out"), self.take("=")
        value = self.conditional()
        self.take(";")
        if self.at != len(self.tokens):
            raise SyntaxError("the stand-in's C runs one assignment")
        return value

    def conditional(self):
        condition = self.relation()
        if self.peek() != "?":
            return condition
        self.take()
        yes = self.conditional()
        self.take(":")
        no = self.conditional()
        yes, no = c_common(yes, no)
        return numpy.where(condition.astype(bool), yes, no)

    def relation(self, ops=None):
        """C's equality operators, then (binding tighter) its relational ones, left to right."""
        inner = self.additive if ops else lambda: self.relation(_C_RELATIONAL)
        ops = ops or _C_EQUALITY
        left = inner()
        while self.peek() in ops:
            op = ops[self.take()[1]]
            left = op(*c_common(left, inner()))
        return left

    def additive(self):
        left = self.multiplicative()
        while self.peek() in ("+", "-"):
            op = numpy.add if self.take()[1] == "+" else numpy.subtract
            left = op(*c_common(left, self.multiplicative()))
        return left

    def multiplicative(self):
        left = self.unary()
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            a, b = c_common(left, self.unary())
            if op == "*":
                left = a * b
            elif a.dtype.kind == "i":
                if numpy.any(b == 0):
                    raise ZeroDivisionError("an int division by zero (undefined in C)")
                left = (numpy.sign(a) * numpy.sign(b) * (numpy.abs(a) // numpy.abs(b))).astype(a.dtype)
            else:
                left = a / b
        return left

    def unary(self):
        if self.peek() == "-":
            self.take()
            (value,) = c_common(self.unary())
            return -value
        return self.primary()

    def primary(self):
        kind, text = self.take()
        if kind == "double":
            return numpy.asarray(float(text))
        if kind == "int":
            return numpy.asarray(int(text), dtype="int32")
        if text == "(":
            value = self.conditional()
            self.take(")")
            return value
        if kind != "name":
            raise SyntaxError(f"the stand-in's C does not know {text!r} here")
        if text in ("true", "false"):
            return numpy.asarray(text == "true")
        if self.peek() != "(":
            if text not in self.env:
                raise NameError(f"{text} is no parameter of the kernel")
            return self.env[text]
        return self.call(text)

    def call(self, name):
        if name not in _C_MATH:
            raise NameError(f"the stand-in's C has no function {name}")
        self.take("(")
        args = [self.conditional()]
        while self.peek() == ",":
            self.take()
            args.append(self.conditional())
        self.take(")")
        if len(args) != (2 if name == "pow" else 1):
            raise TypeError(f"{name} takes {2 if name == 'pow' else 1} argument(s)")
        args = [a.astype("float64") if a.dtype.kind in "bi" else a for a in c_common(*args)]
        return getattr(numpy, _C_MATH[name])(*args)




def run_assignment(operation: str, env: dict):
    """The value `operation` (`out = ...;`) assigns, over the parameters `env` (name -> array)."""
    return CExpression(operation, env).statement()
