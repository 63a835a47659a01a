"""Check files: TOML with `[defaults]` and `[[case]]` tables, parsed and validated into Cases.

Every mistake in a file is a SourceError naming the file, line and column (TOML syntax errors,
unknown keys, values of the wrong type), so `autodiff check` can exit 2 before running anything.
Mistakes inside a case's formulas are found when the case runs and are reported on that case.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from ...parser.errors import SourceError
from ...parser.files import confined_path, read_text
from ...parser.nodes import Span
from .toml_places import TomlLocator
from . import datarefs
from ..lang.limits import Limits

OPTION_KEYS = {"rtol", "atol", "step", "dtype", "mode", "seed", "fn", "max_steps", "device", "rules"}
# the options that take one of two words (rules: the program's custom_vjp/custom_jvp rules checked or trusted)
CHOICES = {"dtype": ("float64", "float32"), "mode": ("full", "fast"), "rules": ("checked", "trusted"),
           "device": ("cpu", "gpu")}
CASE_KEYS = {"name", "f", "program", "fn", "of", "at", "points", "random", "grad", "value", "hessian",
             "wrt", "skip", "hand", "jacobian", "jvp", "vjp"} | OPTION_KEYS
# claims that name a function of the program (issue 29 item 4): the hand gradient, Jacobian,
# Hessian, tangent and adjoint, each taking the target's parameters
FUNCTION_CLAIMS = ("hand", "jacobian", "hessian", "jvp", "vjp")
TOP_KEYS = {"defaults", "case"}
MAX_RANDOM_POINTS = 100_000        # random points of one case: each is a full check
MAX_CHECK_FILE_BYTES = 64_000_000  # some 1,000,000 cases; read before anything is validated


@dataclass
class Case:
    name: str
    file: str                      # the check file, as given
    index: int                     # 0-based position in its file
    line: int                      # line of its [[case]] header
    f: str | None = None           # an expression, or
    program: str | None = None     # a program file (resolved against the check file's folder)
    fn: str | None = None
    of: str | None = None
    points: list | None = None     # explicit points: dicts of name -> number, list, constant text or "@FILE"
    points_file: str | None = None  # or "@FILE" holding one array per input, a row per point
    random: dict | None = None     # {"count": n, "ranges": {name: (lo, hi, shape)}}
    grad: dict | None = None
    value: object = None
    hessian: dict | None = None    # hand-derived entries; or
    functions: dict = field(default_factory=dict)  # FUNCTION_CLAIMS key -> a function of the program
    wrt: list | None = None
    skip: str | None = None        # the reason, when skipped
    options: dict = field(default_factory=dict)   # rtol, atol, step, dtype, mode, seed, max_steps
    data_files: list = field(default_factory=list)  # every data file the case names (resolved paths)


class _Checker:
    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.loc = TomlLocator(text)
        self.where = ("defaults", 0)
        self.data_files = []           # of the case being read

    def fail(self, message, path=(), hint=None):
        kind, index = self.where
        span = self.loc.key(kind, index, path) if path else self.loc.header(kind, index)
        raise SourceError("invalid check file", message, span, hint, source=self.text, filename=self.path)

    def unknown(self, table: dict, allowed, what, path=()):
        for key in table:
            if key not in allowed:
                import difflib
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                self.fail(f"unknown key {key!r} in {what}", path + (key,),
                          f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(sorted(allowed)))

    def number(self, v, what, path, positive=False):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(f"{what} must be a finite number, not {_show(v)}", path)
        if positive and v <= 0:
            self.fail(f"{what} must be positive, not {v}", path)
        return float(v)

    def value(self, v, what, path, allow_text=True):
        """A number, a (nested) array of numbers, or the text of a constant expression."""
        if isinstance(v, str):
            if not allow_text:
                self.fail(f"{what} must be a number or an array, not text", path)
            if not v.strip():
                self.fail(f"{what} is empty", path)
            return v
        if isinstance(v, bool) or isinstance(v, (int, float)):
            if isinstance(v, bool):
                self.fail(f"{what} must be a number, not {_show(v)}", path)
            return float(v)
        if isinstance(v, list):
            if not v:
                self.fail(f"{what} is an empty array", path)
            shape = _shape(v)
            if shape is None:
                self.fail(f"{what} must be a rectangular array of numbers", path)
            if len(shape) > 32:                   # numpy's limit is 64; no input needs more
                self.fail(f"{what} has {len(shape)} dimensions, more than 32", path)
            return v
        self.fail(f"{what} must be a number, an array or a formula, not {_show(v)}", path)

    def options(self, table: dict, path=()) -> dict:
        out = {}
        for key in ("rtol", "atol"):
            if key in table:
                v = self.number(table[key], key, path + (key,))
                if v < 0:
                    self.fail(f"{key} must not be negative", path + (key,))
                out[key] = v
        if "step" in table:
            out["step"] = self.number(table["step"], "step", path + ("step",), positive=True)
        for key, choices in CHOICES.items():
            if key in table:
                if table[key] not in choices:
                    self.fail(f"{key} must be \"{choices[0]}\" or \"{choices[1]}\", not {_show(table[key])}", path + (key,))
                out[key] = table[key]
        if "seed" in table:
            if isinstance(table["seed"], bool) or not isinstance(table["seed"], int) or table["seed"] < 0:
                self.fail(f"seed must be a whole number >= 0, not {_show(table['seed'])}", path + ("seed",))
            out["seed"] = table["seed"]
        if "max_steps" in table:
            v = table["max_steps"]
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                self.fail(f"max_steps must be a whole number >= 1, not {_show(v)}", path + ("max_steps",))
            out["max_steps"] = v
        if "fn" in table:
            if not isinstance(table["fn"], str) or not table["fn"].isidentifier():
                self.fail(f"fn must be a function name, not {_show(table['fn'])}", path + ("fn",))
            out["fn"] = table["fn"]
        return out

    def point(self, p, what, path) -> dict:
        if not isinstance(p, dict):
            self.fail(f"{what} must be a table of input values like {{ x = 3, y = 4 }}, not {_show(p)}", path)
        out = {}
        for name, v in p.items():
            if not name.isidentifier():
                self.fail(f"{what}: {name!r} is not an input name", path + (name,))
            out[name] = self.data(v, path + (name,)) if datarefs.is_reference(v) else \
                self.value(v, f"{what}.{name}", path + (name,))
        return out

    def data(self, ref: str, path) -> str:
        """A data file `@PATH`, resolved against this file's folder; it must exist."""
        resolved = datarefs.existing(self.path, ref, lambda fault, hint=None: self.fail(fault, path, hint))
        self.data_files.append(datarefs.file_of(resolved))
        return resolved

    def random(self, r, path) -> dict:
        if not isinstance(r, dict):
            self.fail("random must be a table like { count = 20, x = [-2, 2] }", path)
        if "count" not in r:
            self.fail("random needs a count (how many points to draw)", path)
        count = r["count"]
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_RANDOM_POINTS:
            self.fail(f"random.count must be a whole number from 1 to {MAX_RANDOM_POINTS:,}, not {_show(count)}",
                      path + ("count",))
        ranges = {}
        for name, spec in r.items():
            if name == "count":
                continue
            p = path + (name,)
            shape = ()
            if isinstance(spec, dict):
                self.unknown(spec, {"range", "shape"}, f"random.{name}", p)
                if datarefs.is_reference(spec.get("shape")):
                    spec = {**spec, "shape": list(datarefs.shape_from(self.data(spec["shape"], p + ("shape",))))}
                if "shape" in spec:
                    shape = spec["shape"]
                    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                              and d >= 1 for d in shape):
                        self.fail(f"random.{name}.shape must be a list of whole numbers >= 1", p + ("shape",))
                    shape = tuple(shape)
                    if math.prod(shape) > Limits().elements:      # drawn before any limit of the run applies
                        self.fail(f"random.{name}.shape {list(shape)} has {math.prod(shape):,} elements, more than "
                                  f"the limit of {Limits().elements:,}", p + ("shape",))
                if "range" not in spec:
                    self.fail(f"random.{name} needs a range = [low, high]", p)
                spec = spec["range"]
            if not (isinstance(spec, list) and len(spec) == 2):
                self.fail(f"random.{name} must be [low, high] or {{ range = [low, high], shape = [n] }}", p)
            lo = self.number(spec[0], f"random.{name} low", p)
            hi = self.number(spec[1], f"random.{name} high", p)
            if not lo < hi:
                self.fail(f"random.{name}: low ({spec[0]}) must be below high ({spec[1]})", p)
            ranges[name] = (lo, hi, shape)
        return {"count": count, "ranges": ranges}

    def case(self, i: int, table, defaults: dict) -> Case:
        self.where = ("case", i)
        if not isinstance(table, dict):
            self.fail("each [[case]] must be a table")
        self.unknown(table, CASE_KEYS, "[[case]]")
        header = self.loc.header("case", i)
        name = table.get("name", f"case {i + 1} (line {header.line})")
        if not isinstance(name, str) or not name.strip():
            self.fail(f"name must be text, not {_show(name)}", ("name",))
        case = Case(name=name, file=self.path, index=i, line=header.line)
        self.data_files = case.data_files
        self.function(case, table)
        self.points(case, table)
        self.claims(case, table)
        self.wrt_and_skip(case, table)
        case.options = {**defaults, **self.options(table)}
        if case.f is not None and "fn" in self.options(table):
            self.fail("fn applies to programs, not to expressions", ("fn",))
        if case.f is not None:
            case.options.pop("fn", None)
        case.fn = case.options.pop("fn", None)
        return case

    def function(self, case: Case, table) -> None:
        """What the case differentiates: `f` (an expression) or `program` (a .py file), and `of`."""
        has_f, has_program = "f" in table, "program" in table
        if has_f == has_program:
            self.fail("a case needs exactly one of f (an expression) and program (a .py file)",
                      ("f",) if has_f else ())
        if has_f:
            if not isinstance(table["f"], str) or not table["f"].strip():
                self.fail(f"f must be the text of an expression, not {_show(table['f'])}", ("f",))
            case.f = table["f"]
            for key in ("of",):
                if key in table:
                    self.fail(f"{key} applies to programs, not to expressions", (key,))
        else:
            prog = table["program"]
            if not isinstance(prog, str) or not prog.strip():
                self.fail(f"program must be a file name, not {_show(prog)}", ("program",))
            case.program = os.path.join(os.path.dirname(self.path), prog)
            try:
                confined_path(self.path, case.program, prog)
            except SourceError as e:
                self.fail(e.message, ("program",), e.hint)
            if "of" in table:
                if not isinstance(table["of"], str) or not table["of"].isidentifier():
                    self.fail(f"of must be a variable name, not {_show(table['of'])}", ("of",))
                case.of = table["of"]

    def points(self, case: Case, table) -> None:
        """Where the case is checked: `at`, `points` or `random` (one of them), else at no inputs."""
        given = [k for k in ("at", "points", "random") if k in table]
        if len(given) > 1:
            self.fail(f"give one of at, points and random, not {' and '.join(given)}", (given[1],))
        if "at" in table:
            case.points = [self.point(table["at"], "at", ("at",))]
        elif "points" in table:
            pts = table["points"]
            if datarefs.is_reference(pts):
                case.points_file = self.data(pts, ("points",))
                return
            if not isinstance(pts, list) or not pts:
                self.fail("points must be a non-empty array of tables like [{ x = 1 }, { x = 2 }]", ("points",))
            case.points = [self.point(p, f"points[{k}]", ("points",)) for k, p in enumerate(pts)]
        elif "random" in table:
            case.random = self.random(table["random"], ("random",))
        else:
            case.points = [{}]

    def claims(self, case: Case, table) -> None:
        """What the case claims beyond AD: a hand-derived `grad`, the `value`, the `hessian`; or
        functions of the program that compute them (`hand`, `jacobian`, `hessian`, `jvp`, `vjp`)."""
        self.function_claims(case, table)
        if "grad" in table:
            g = table["grad"]
            if not isinstance(g, dict) or not g:
                self.fail("grad must be a table like { x = \"2*x*y\", y = 3 }", ("grad",))
            case.grad = {k: self.value(v, f"grad.{k}", ("grad", k)) for k, v in g.items()}
        if "value" in table:
            case.value = self.value(table["value"], "value", ("value",))
        if "hessian" in table and "hessian" not in case.functions:
            h = table["hessian"]
            if not isinstance(h, dict) or not all(isinstance(row, dict) for row in h.values()):
                self.fail("hessian must be a table of tables like { x = { x = \"2*y\", y = \"2*x\" } }",
                          ("hessian",))
            case.hessian = {a: {b: self.value(v, f"hessian.{a}.{b}", ("hessian", a, b)) for b, v in row.items()}
                            for a, row in h.items()}

    def function_claims(self, case: Case, table) -> None:
        for key in FUNCTION_CLAIMS:
            v = table.get(key)
            if v is None or key == "hessian" and not isinstance(v, str):
                continue
            if not isinstance(v, str) or not v.isidentifier():
                self.fail(f"{key} must name a function of the program, like {key} = \"{_example(key)}\", "
                          f"not {_show(v)}", (key,))
            if case.program is None:
                self.fail(f"{key} = {v!r} names a function of a program, but this case differentiates an expression "
                          "(f)", (key,), "write the claim as formulas (grad = { x = \"...\" }), or check a program")
            case.functions[key] = v
        if "hand" in table and "grad" in table:
            self.fail("give one of grad and hand (a function of the program returning the gradient), not both",
                      ("hand",))

    def wrt_and_skip(self, case: Case, table) -> None:
        if "wrt" in table:
            w = table["wrt"]
            if isinstance(w, str):
                w = [w]
            if not isinstance(w, list) or not all(isinstance(x, str) and x.isidentifier() for x in w):
                self.fail("wrt must be an input name or a list of them", ("wrt",))
            case.wrt = w
        if "skip" in table:
            s = table["skip"]
            if isinstance(s, bool):
                case.skip = "skipped in the file" if s else None
            elif isinstance(s, str):
                case.skip = s or "skipped in the file"
            else:
                self.fail(f"skip must be true, false or a reason, not {_show(s)}", ("skip",))


def load_file(path: str) -> list:
    """Parse and validate one check file into its cases (SourceError on any mistake)."""
    return parse_text(read_text(path, "check file", MAX_CHECK_FILE_BYTES), path)


def _unquoted_formula_hint(text: str, span) -> str | None:
    """`f = x**2`, `grad = { x = 2*x }`: a formula TOML could not read because it is not quoted
    (the value of the last `key =` before the error is no TOML value); None otherwise."""
    import tomllib
    lines = text.split("\n")
    if not 1 <= span.line <= len(lines):
        return None
    line = lines[span.line - 1]
    keys = list(re.finditer(r"([A-Za-z_][\w-]*)\s*=\s*", line[:span.column]))
    if not keys:
        return None
    key = keys[-1]
    value = re.match(r"[^,}\]#\"']*", line[key.end():]).group().strip()
    if not value or not re.search(r"[A-Za-z_(*/+-]", value):
        return None
    try:
        tomllib.loads(f"v = {value}")
        return None                       # a TOML value after all: the error is elsewhere
    except tomllib.TOMLDecodeError:
        return f'a formula is a string in TOML: quote it, {key.group(1)} = "{value}"'


def parse_text(text: str, path: str = "<text>") -> list:
    import tomllib
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise SourceError("invalid TOML", "values are nested too deeply", None, filename=path) from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        span = None
        if m:
            line, col = int(m.group(1)), int(m.group(2))
            span = Span(line, col, line, col + 1)
            msg = msg[:m.start()].strip()
        elif "end of document" in msg:
            n = text.count("\n") + 1
            span = Span(n, 1, n, 2)
        hint = _unquoted_formula_hint(text, span) if span is not None else None
        raise SourceError("invalid TOML", msg, span, hint, source=text, filename=path) from None
    checker = _Checker(path, text)
    checker.unknown(doc, TOP_KEYS, "the file (top-level tables are [defaults] and [[case]])")
    defaults = {}
    if "defaults" in doc:
        d = doc["defaults"]
        if not isinstance(d, dict):
            checker.fail("defaults must be a table: [defaults]")
        checker.unknown(d, OPTION_KEYS, "[defaults]")
        defaults = checker.options(d)
    cases = doc.get("case", [])
    if not isinstance(cases, list):
        checker.fail("cases are written [[case]] (an array of tables), not [case]")
    if not cases:
        raise SourceError("invalid check file", f"{path} has no [[case]] tables", None,
                          "add one: [[case]]  f = \"x**2\"  at = { x = 3 }", source=text, filename=path)
    out = [checker.case(i, c, defaults) for i, c in enumerate(cases)]
    seen = {}
    for c in out:
        if c.name in seen:
            checker.where = ("case", c.index)
            checker.fail(f"two cases are named {c.name!r} (the other at line {seen[c.name]})", ("name",))
        seen[c.name] = c.line
    return out


def _shape(v):
    """The shape of a nested list of numbers, or None if ragged or not numbers."""
    if isinstance(v, list):
        if not v:
            return None
        shapes = [_shape(x) for x in v]
        if any(s is None for s in shapes) or any(s != shapes[0] for s in shapes):
            return None
        return (len(v),) + shapes[0]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return ()


def _example(key) -> str:
    return {"hand": "loss_grad", "jacobian": "jac_fn", "hessian": "hess_fn", "jvp": "f_jvp", "vjp": "f_vjp"}[key]


def _show(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    return repr(v)
