"""What a compiled program runs in and calls: frames, user functions, builtins, and the signals
a compiled statement returns. Plain classes with no imports, so every module of the language
can name them."""
from __future__ import annotations

# What a compiled statement returns when control leaves it early (None: carry on).
BREAK, CONTINUE, RETURN = 1, 2, 3


class Frame:
    """The variables of one call (or of the module), the enclosing frame, the returned value."""
    __slots__ = ("vars", "parent", "ret")

    def __init__(self, vars, parent):
        self.vars = vars
        self.parent = parent
        self.ret = None


class UserFunction:
    __slots__ = ("name", "params", "body", "closure", "node", "interp", "defaults")

    def __init__(self, name, params, body, closure, node, interp, defaults=()):
        self.name, self.params, self.body, self.closure, self.node, self.interp = (
            name, params, body, closure, node, interp)
        self.defaults = defaults          # the values of the last len(defaults) parameters' defaults

    def __call__(self, *args, span=None):
        return self.interp.call_user(self, args, span or self.node.span)

    def __repr__(self):
        return f"<function {self.name}>"


class Builtin:
    __slots__ = ("name", "fn", "min_args", "max_args", "not_of_numbers")

    def __init__(self, name, fn, min_args, max_args, not_of_numbers=None):
        self.name, self.fn, self.min_args, self.max_args = name, fn, min_args, max_args
        # None for a function of its arguments' numbers; else what it does instead (it reads
        # them as a count or a shape, or makes what a for loop takes): grad(f) refuses it
        self.not_of_numbers = not_of_numbers

    def __call__(self, *args, span=None):
        return self.fn(*args)

    def __repr__(self):
        return f"<builtin {self.name}>"
