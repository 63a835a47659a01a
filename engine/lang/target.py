"""A target of differentiation: an expression or a program, loaded from text, with its inputs
bound and run once (`run_target`) or many times (`Runner`) by the interpreter."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from ...parser import nodes, parse_expression, parse_program
from ...parser.errors import SourceError, option
from ...parser.files import read_text
from ..core.backend import xp
from ..core.errors import EngineError
from ..core.sequences import as_array
from ..core.tape import strip
from .builtins import builtin_names
from .callables import UserFunction
from .errors import unknown_name
from .interp import Interpreter
from .keywords import complete_arguments
from .limits import Limits
from .names import assigned_names, loaded_names, walk
from .reach import reached_module
from .spellings import foreign_library_use, misspelt_submodule_hint, unknown_module_name
from .values import as_input, describe, floats_only, is_integer_input


@dataclass
class Target:
    """Something to differentiate: its source, its inputs, and how to run it on given inputs."""
    source: str
    filename: str | None
    kind: str                      # "expression", "function" or "script"
    inputs: list
    node: object = None
    fn_name: str | None = None
    output_name: str | None = None
    functions: list = field(default_factory=list)
    defaulted: list = field(default_factory=list)   # a function's parameters with defaults
    integers: tuple = ()           # inputs given integer data: constants of the run, no derivative
    program: object = None         # a program file as read (parser/lenient.FileProgram)

    def reaching(self, names) -> nodes.Module:
        """The program's statements that this function target and the functions `names` reach
        (another function of the file, as a hand gradient is): those are compiled, the rest not."""
        program = self.program
        try:
            return reached_module(program.module, program.unread, [self.fn_name, *names])
        except SourceError as err:
            raise err.with_source(self.source, self.filename) from None

    def given(self, names) -> "Target":
        """This target with the defaulted parameters among `names` as inputs too (after the
        others, in parameter order); itself where none is given. A defaulted parameter not given
        keeps its default and is a constant. Where `names` is a dict of values, the inputs it gives
        integer data (values.is_integer_input) are the target's `integers`: like a defaulted
        parameter left out, a constant of the run, never differentiated."""
        if not self.defaulted and not self.integers and isinstance(names, dict) and floats_only(names.values()):
            return self                         # the per-call fast path: numbers and float arrays only
        target = self
        if self.defaulted:
            extra = [d for d in self.defaulted if d in names and d not in self.inputs]
            if extra:
                required = [p for p in self.inputs if p not in self.defaulted]
                chosen = [d for d in self.defaulted if d in names or d in self.inputs]
                target = replace(self, inputs=required + chosen)
        if not isinstance(names, dict):
            return target
        integers = tuple(n for n, v in names.items() if v.__class__ is not float and n in target.inputs
                         and is_integer_input(v))
        if integers and integers != tuple(n for n in target.inputs if n in integers):
            integers = tuple(n for n in target.inputs if n in integers)     # in parameter order
        return target if integers == target.integers else replace(target, integers=integers)

    def describe(self) -> str:
        if self.kind == "function":
            return f"{self.fn_name}({', '.join(self.inputs)})"
        return "expression" if self.kind == "expression" else "script"


def looks_like_file(text: str) -> bool:
    """A program path: an existing `.py` file, or an existing file given as a path from `./`,
    `../` or `/`. A bare `x` or `x/y` is an expression (a division) even if a file of that name
    happens to exist."""
    if "\n" in text or not os.path.isfile(text):
        return False
    return text.endswith(".py") or text.startswith(("./", "../", "/", "." + os.sep, ".." + os.sep))


def load(text: str, fn: str | None = None, of: str | None = None, filename: str | None = None) -> Target:
    """Load TARGET: a path to a .py program, or an expression."""
    if filename is None and looks_like_file(text):
        filename = text
        text = _read(filename)
    elif filename is None and text.endswith(".py") and "\n" not in text and " " not in text:
        raise SourceError("bad file", f"no such file: {text}")
    if filename is not None:
        return _load_program(text, filename, fn, of)
    if fn is not None or of is not None:
        raise SourceError("usage", f"{option('fn')} and {option('of')} apply to programs (.py files), "
                          "not to expressions")
    node = parse_expression(text)
    names = builtin_names()
    inputs = [v for v in loaded_names(node) if v not in names]
    _refuse_unknown_functions(node, names, text)
    return Target(source=text, filename=None, kind="expression", inputs=inputs, node=node)


def _read(filename: str) -> str:
    return read_text(filename, "program")


def _refuse_unknown_functions(node, builtins, text):
    """A called name that is no builtin is a misspelt function, not an input to ask for."""
    for x in walk(node):
        foreign = foreign_library_use(x)            # torch.exp(x): numpy's is exp(x)
        if foreign is not None:
            raise foreign.with_source(text)
        if isinstance(x, nodes.Call) and isinstance(x.func, nodes.Name) and x.func.id not in builtins:
            if x.func.module:
                raise unknown_module_name(x.func.id, x.func.module, x.func.span, builtins).with_source(text)
            err = unknown_name(x.func.id, x.func.span, [b for b in builtins if b.isalpha()])
            err.kind, err.message = "unknown function", f"`{x.func.id}` is not a function of the language"
            raise err.with_source(text)
        if isinstance(x, nodes.Name) and x.id not in builtins and x.span.end_line == x.span.line \
                and x.span.end_column - x.span.column != len(x.id):
            # written as np.NAME or math.NAME (the parser keeps the whole span): must be a builtin
            raise SourceError("unknown name", f"`{x.id}` is not a builtin, so it cannot be named through "
                              "np. or math.", x.span, misspelt_submodule_hint(x.id) or f"write {x.id} alone for an input",
                              source=text)


def _load_program(text, filename, fn, of) -> Target:
    """A file as written: only what the target reaches must be in the language (parser/lenient.py,
    reach.py). A script (a file of no functions) reaches all of itself."""
    from ...parser.lenient import parse_file        # files only: an expression never loads it (start-up)
    program = parse_file(text, filename, parse_program)
    module = program.module
    defs = [s for s in module.body if isinstance(s, nodes.FunctionDef)]
    if defs or any(r.is_def for r in program.unread):
        return _load_functions(program, defs, text, filename, fn, of)
    if program.unread:
        raise program.unread[0].error
    if fn is not None:
        raise SourceError("usage", f"{option('fn')} {fn}: the program defines no functions (it is a script)",
                          None, source=text, filename=filename)
    return _load_script(module, text, filename, of)


def _load_functions(program, defs, text, filename, fn, of) -> Target:
    """A program of functions: the one chosen by name, else `f`, else the only one."""
    spans = sorted([(d.span.line, d.name) for d in defs] + [(r.span.line, r.names[0]) for r in program.unread
                                                           if r.is_def])
    names = list(dict.fromkeys(name for _, name in spans))
    if of is not None:
        raise SourceError("usage", f"{option('of')} names the output of a script; this file defines functions "
                          f"(choose one with {option('fn')})", None, source=text, filename=filename)
    if fn is not None:
        if fn not in names:
            raise SourceError("unknown name", f"{option('fn')} {fn}: the program defines no function {fn!r} "
                              f"(it defines {', '.join(names)})", None, source=text, filename=filename)
        chosen = fn
    elif "f" in names:
        chosen = "f"
    elif len(names) == 1:
        chosen = names[0]
    else:
        raise SourceError("ambiguous function", f"the program defines several functions ({', '.join(names)}) "
                          "and none is called f", None, f"choose one with {option('fn')} NAME", source=text,
                          filename=filename)
    try:
        module = reached_module(program.module, program.unread, [chosen])
    except SourceError as err:
        raise err.with_source(text, filename) from None
    node = [d for d in module.body if isinstance(d, nodes.FunctionDef) and d.name == chosen][-1]
    required = node.params[:len(node.params) - len(node.defaults)]     # the others: inputs when given
    return Target(source=text, filename=filename, kind="function", inputs=list(required), node=module,
                  fn_name=chosen, output_name=None, functions=names,
                  defaulted=list(node.params[len(required):]), program=program)


def _load_script(module, text, filename, of) -> Target:
    """A script: its inputs are the names it reads before assigning; its output a variable or its
    last expression statement."""
    assigned = set(assigned_names(module.body))
    builtins = builtin_names()
    inputs = [v for v in loaded_names(module) if v not in assigned and v not in builtins]
    if of is not None and of not in assigned:
        raise SourceError("unknown name", f"{option('of')} {of}: the script assigns no variable {of!r}", None,
                          source=text, filename=filename)
    if of is None and not any(isinstance(s, nodes.ExprStmt) for s in module.body):
        raise SourceError("no output", "the script has no expression statement to take as its output",
                          None, f"end it with an expression, or name a variable with {option('of')} NAME",
                          source=text, filename=filename)
    return Target(source=text, filename=filename, kind="script", inputs=inputs, node=module,
                  fn_name=None, output_name=of, functions=[])


def run_target(target: Target, values: dict, interp: Interpreter):
    """Run the target once on `values` (possibly boxed) in `interp`; returns the raw output."""
    return Runner(target, interp=interp).run(values)


def split_top_level(text: str) -> list:
    """Split `x=3,y=[1,2]` at commas outside brackets and parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in (q.strip() for q in parts) if p]


def constant(text: str, what: str, limits: Limits | None = None):
    """Evaluate a constant expression of the language (no free variables)."""
    node = parse_expression(text, filename=what)
    free = [v for v in loaded_names(node) if v not in builtin_names()]
    if free:
        unit = free[0] in ("i", "j", "I", "J")      # 1+j, 2i: the imaginary unit as maths writes it
        raise SourceError("bad input", f"{what}: a value must be a constant, but it uses {free[0]!r}",
                          node.span, "the imaginary unit is written as Python writes it, 1j: 1+1j, 2+3j, [1j, 2]"
                          if unit else "give numbers, like 3, -0.5, 1+2j or [1, 2]", source=text, filename=what)
    interp = Interpreter(limits)
    try:
        v = interp.compile_expression(node.body, [])(interp.globals)
        v = as_array(v) if v.__class__ is list else v      # a list literal numpy could not stack: why
    except EngineError as e:
        raise SourceError(e.kind, f"{what}: {e.message}", node.span, source=text, filename=what) from None
    except SourceError as e:
        raise e.with_source(text, what)
    if isinstance(v, tuple) or callable(v) or not isinstance(strip(v), (float, int, bool, complex)) \
            and not hasattr(v, "shape"):
        raise SourceError("bad input", f"{what}: the value is {describe(v)}, not a number or an array",
                          node.span, source=text, filename=what)
    if integer_spelling(node.body) and getattr(v, "ndim", 0) > 0:
        v = xp().asarray(v).astype(xp().int64)     # `[0, 2, 1].astype(int)`: integer data, as numpy's
    return as_input(v)


def integer_spelling(e) -> bool:
    """Whether an input's text ends in `.astype(int)`: integer data (class labels, indices),
    a constant of the run, as numpy's int array is."""
    return (isinstance(e, nodes.Call) and isinstance(e.func, nodes.Attribute) and e.func.attr == "astype"
            and len(e.args) == 1 and isinstance(e.args[0], nodes.Name) and e.args[0].id == "int" and not e.keywords)


def bind(target: Target, values: dict) -> tuple:
    """(the target with the defaulted parameters `values` gives as inputs, its inputs bound)."""
    target = target.given(values)
    return target, bind_inputs(target, values)


def bind_inputs(target: Target, values: dict) -> dict:
    missing = [v for v in target.inputs if v not in values]
    if missing:
        raise SourceError("missing input", f"no value for {', '.join(missing)}: "
                          f"{'the inputs are' if len(target.inputs) > 1 else 'the input is'} "
                          f"{', '.join(target.inputs)}", None,
                          f"give it with {option('at')} " + ",".join(f"{m}=..." for m in missing))
    extra = [k for k in values if k not in target.inputs]
    if extra:
        known = ", ".join(target.inputs) if target.inputs else "none"
        optional = [d for d in target.defaulted if d not in target.inputs]
        if optional:
            known += f"; with defaults, inputs when given: {', '.join(optional)}"
        hint = (f"`{extra[0]}` is a builtin of the language, not a variable: name the variable otherwise"
                if extra[0] in builtin_names() else None)
        raise SourceError("unknown input", f"{option('at')} {extra[0]}: {target.describe()} has no input {extra[0]!r} "
                          f"(its inputs: {known})", None, hint)
    return {k: as_input(values[k]) for k in target.inputs}



def check_output(value, target):
    v = strip(value)
    if isinstance(v, (float, int, bool, complex)) or hasattr(v, "shape"):
        return
    raise SourceError("bad output", f"the output is {describe(value)}, not a number or an array", None,
                      source=target.source, filename=target.filename)



class Runner:
    """Compile a target once and run it on many points cheaply (finite differences, the checks' points).

    Calling it returns the raw output; `signature` is that run's control-flow signature as a tuple.
    Inputs are not copied: the language has value semantics, so a run never mutates them."""

    def __init__(self, target: Target, limits: Limits | None = None, interp=None):
        self.target = target
        self.interp = interp = interp if interp is not None else Interpreter(limits)
        self.signature = ()
        self._runs = 0
        with _located(target):
            if target.kind == "expression":
                self._body = interp.compile_expression(target.node.body, target.inputs)
            elif target.kind == "script":
                self._body = interp.compile_module(target.node, target.inputs)
            else:
                interp.compile_module(target.node)(interp.globals)     # defines the functions
                fn = interp.globals.vars[target.fn_name]
                if not isinstance(fn, UserFunction):
                    raise SourceError("type error", f"{target.fn_name} is not a function", None)
                self._fn = fn

    def run(self, values: dict):
        """One run; the output as computed (boxed if the inputs were), a list the array numpy
        makes of it."""
        out = self._run(values)
        return out if out.__class__ is not list else output_array(out, self.target)

    def _run(self, values: dict):
        interp = self.interp
        if self._runs:                      # a fresh count per run; the first keeps the top level's
            interp.signature.clear()        # the compiled closures hold this very list
            interp.restart_count()
        self._runs += 1
        target = self.target
        with _located(target):
            if target.kind == "function":
                # parameters with defaults not given keep their defaults
                fn = self._fn
                given = {p: values[p] for p in fn.params if p in values}
                return interp.call_user(fn, complete_arguments(fn, [], given, fn.node.span), fn.node.span)
            g = interp.globals.vars
            g.clear()
            g.update(values)
            if target.kind == "expression":
                return self._body(interp.globals)
            interp.last_value = None
            self._body(interp.globals)
            return g[target.output_name] if target.output_name is not None else interp.last_value

    @property
    def parameters(self) -> list:
        """A function target's parameters in order (what a hand function is called with by position)."""
        return list(self._fn.params) if self.target.kind == "function" else []

    def __call__(self, values: dict):
        out = self.run(values)
        self.signature = tuple(self.interp.signature)
        check_output(out, self.target)
        return strip(out)


def output_array(out: list, target):
    """A list output as the array numpy makes of it; a list numpy makes none of is the user's
    error (a ragged list: both shapes; too many dimensions), never an internal one."""
    try:
        return as_array(out)
    except EngineError as exc:
        raise SourceError(exc.kind, f"the output: {exc.message}", None, source=target.source,
                          filename=target.filename) from None
    except (ValueError, IndexError) as exc:            # numpy's limit of 64 dimensions
        raise SourceError("bad output", f"the output is a list numpy makes no array of: {exc}", None,
                          source=target.source, filename=target.filename) from None


class _located:
    """Errors of a run, placed in the target's source; Python's recursion limit as our error."""

    def __init__(self, target):
        self.target = target

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        t = self.target
        if isinstance(err, SourceError):
            err.with_source(t.source, t.filename)
        elif isinstance(err, RecursionError):
            raise SourceError("too deep", "the expression or the calls are nested too deeply for the "
                              "interpreter", None, source=t.source, filename=t.filename) from None
        return False
