"""Options shared by the commands that take a TARGET and a point."""
from __future__ import annotations

import click

from .data_options import input_options


def select_device(ctx, param, value):
    """--device (or AUTODIFF_DEVICE): the engine runs there from now on; absent, it stays as it is
    (the CPU). A GPU that is not there is a usage error (exit 2) saying what to install."""
    if value is not None:
        from ..engine import api      # lazy: main imports this module, and start-up stays cheap
        api.use_device(value)
    return value


DEVICE_CHOICE = click.Choice(["cpu", "gpu"])
DEVICE = click.option("--device", type=DEVICE_CHOICE, default=None, envvar="AUTODIFF_DEVICE",
                      expose_value=False, callback=select_device,
                      help="Run on the CPU (numpy, the default) or the GPU (cupy: pip install 'autodiff[gpu]'). "
                           "Also AUTODIFF_DEVICE.")


def complete_files(ctx, param, incomplete):
    """Shell completion of a file name (the shell lists the files; click's "file" completion)."""
    from click.shell_completion import CompletionItem    # only when a shell asks for completions
    return [CompletionItem(incomplete, type="file")]


def target_options(f):
    """TARGET, --at, --fn, --of, --dtype, --device, --json, limits, --debug."""
    decorators = [
        click.argument("target", shell_complete=complete_files),
        click.option("--at", "at", multiple=True, metavar="NAME=VALUE[,...]",
                     help="Input values, repeatable; a comma-separated list is split at the top level: "
                          "--at x=3,y=4  --at \"A=[[1,2],[3,4]]\"  --at x=arange(4.0); from a file: --at w=@w.npy "
                          "(.npy, .npz:KEY, .csv, .tsv, .txt, .json), from standard input: --at w=@-."),
        *input_options(),
        click.option("--fn", default=None, metavar="NAME", help="The function of a program to use "
                     "(default: f, else the only one defined)."),
        click.option("--of", default=None, metavar="NAME", help="For a script: the variable that is the output "
                     "(default: the last expression statement)."),
        click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
                     help="The floating-point type of inputs, constants and every computed value."),
        DEVICE,
        click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of tables."),
        click.option("--max-steps", type=click.IntRange(1), default=10_000_000, show_default=True,
                     help="Stop a program after this many executed steps."),
        click.option("--max-depth", type=click.IntRange(1), default=200, show_default=True,
                     help="Stop a program whose calls nest deeper than this (recursion)."),
        click.option("--max-elements", type=click.IntRange(1), default=250_000_000, show_default=True,
                     help="Refuse to create arrays with more elements than this."),
        click.option("--max-tape-mb", type=click.IntRange(1), default=1024, show_default=True,
                     help="Stop a program whose run adds more memory than this (its tape, mostly), "
                          "checked at loop trips."),
        click.option("--max-tape-entries", type=click.IntRange(1), default=5_000_000, show_default=True,
                     help="Stop a program that records more operations than this on its tapes."),
        click.option("--debug", is_flag=True, help="Show Python tracebacks for errors."),
    ]
    for d in reversed(decorators):
        f = d(f)
    return f


# Settings whose flag is not the engine's name for them: one name per idea across the commands.
FLAG_NAMES = {"seed": "--cotangent", "method": "--mode", "dtype_name": "--dtype"}


def flag_spelling(name: str) -> str:
    """How the command line spells a setting an engine error names (parser.errors.option)."""
    return FLAG_NAMES.get(name) or "--" + name.replace("_", "-")


# Deprecation warnings of this run, written to stderr when it ends (main.invoke): after the
# output or the error, so an error's first line is still `error: ...`. Never on stdout, so a
# --json document stays one document.
PENDING_WARNINGS: list = []


def warn_later(message: str) -> None:
    """Say `message` on stderr when the command ends, once however often it is asked."""
    if message not in PENDING_WARNINGS:
        PENDING_WARNINGS.append(message)


def deprecated(old: str, new: str):
    """The callback of a hidden option kept under its old spelling: it still works, and says the
    new one on stderr."""
    def warn(ctx, param, value):
        if value is not None and value is not False:
            warn_later(f"warning: {old} is deprecated: use {new}")
        return value
    return warn


COTANGENT = click.option("--cotangent", default=None, metavar="V",
                         help="For an array output: compute vᵀJ with this v instead of the gradient of the sum.")
COTANGENT_WARNING = "--seed V for vᵀJ is deprecated: use --cotangent V (--seed N is now the random seed)"


class OldCotangent(str):
    """The text of a `--seed V` that is not a random seed: the cotangent under its old name."""


def seed_or_old_cotangent(ctx, param, value):
    """--seed N: a plain non-negative integer is the random seed; anything else (a vector, a
    float, an expression) is the cotangent of vᵀJ under its old name, with a warning."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit() and text.isascii():
        return int(text)
    warn_later("warning: " + COTANGENT_WARNING)
    return OldCotangent(value)


def old_cotangent_only(ctx, param, value):
    """graph draws nothing at random: its hidden --seed is always the old cotangent."""
    if value is None:
        return None
    warn_later("warning: " + COTANGENT_WARNING)
    return OldCotangent(value)


def split_seed(seed, cotangent):
    """(random seed, cotangent text) from --seed and --cotangent: --cotangent wins over the old
    spelling of it."""
    if isinstance(seed, OldCotangent):
        return None, cotangent if cotangent is not None else str(seed)
    return seed, cotangent


SEED_HELP = "The random seed of --check fast's projection (default: a fresh one, printed); reruns it exactly."
SEED = click.option("--seed", "seed", default=None, metavar="N", callback=seed_or_old_cotangent,
                    help=SEED_HELP + " (--seed V for vᵀJ is now --cotangent V; a non-integer V still works, warned.)")
INT_SEED = click.option("--seed", "seed", type=click.IntRange(0), default=None, metavar="N", help=SEED_HELP)
OLD_CHECK_SEED = click.option("--check-seed", "old_check_seed", type=click.IntRange(0), default=None, hidden=True,
                              callback=deprecated("--check-seed", "--seed"))
OLD_SEED = click.option("--seed", "old_seed", default=None, hidden=True, callback=old_cotangent_only)


def tolerance_value(minimum_exclusive: bool):
    """A callback checking --rtol/--atol/--step: a finite number, positive (--step) or not negative."""
    def check(ctx, param, value):
        if value is None:
            return None
        import math                     # only when the option is given: start-up stays cheap
        flag = param.opts[0]
        if not math.isfinite(value) or value < 0 or (minimum_exclusive and value == 0):
            need = "a positive finite number" if minimum_exclusive else "a finite number, 0 or more"
            raise click.BadParameter(f"must be {need}, not {value!r}", param_hint=flag)
        return value
    return check


def tolerance_options(what: str):
    """--rtol, --atol and --step of a check: they override the dtype's defaults (`what`: of what)."""
    return [
        click.option("--rtol", type=float, default=None, metavar="R", callback=tolerance_value(False),
                     help=f"Relative tolerance {what} (default: 1e-6 in float64, 1e-4 in float32)."),
        click.option("--atol", type=float, default=None, metavar="A", callback=tolerance_value(False),
                     help=f"Absolute tolerance {what} (default: 1e-9 in float64, 1e-6 in float32)."),
        click.option("--step", type=float, default=None, metavar="H", callback=tolerance_value(True),
                     help=f"Relative finite-difference step {what} (default: 2^-17 in float64, 2^-8 in "
                          "float32; rounded to a power of two times max(|x|, 1))."),
    ]


def tolerances(f):
    """--rtol/--atol/--step for a command's --check."""
    for option in reversed(tolerance_options("of --check")):
        f = option(f)
    return f


def no_random_seed_used(seed, check_mode) -> None:
    """--seed was given but nothing is drawn at random: say so (it was once the cotangent)."""
    if seed is not None and check_mode != "fast":
        warn_later(f"warning: --seed {seed} is the random seed of --check fast, and this run draws nothing "
                   "at random (the v of vᵀJ is --cotangent V)")


def limits_from(opts: dict):
    """The engine's Limits from the --max-* options."""
    from ..engine.api import Limits      # lazy: main imports this module, and start-up stays cheap
    return Limits(steps=opts["max_steps"], depth=opts["max_depth"], elements=opts["max_elements"],
                  tape_mb=opts["max_tape_mb"], tape_entries=opts["max_tape_entries"])


def parse_at(items, limits=None, read_file=None) -> dict:
    """`--at x=3,y=4 --at "A=[[1,2],[3,4]]"` -> {"x": 3.0, "y": 4.0, "A": array}; `w=@PATH` is
    read by `read_file(name, PATH)` (data_options.at_file_reader)."""
    from ..engine import api      # lazy: main imports this module, and start-up stays cheap
    values = {}
    for item in items:
        for part in api.split_top_level(item):
            name, eq, expr = part.partition("=")
            name = name.strip()
            if not eq or not name.isidentifier() or not expr.strip():
                raise api.SourceError("bad input", f"--at expects NAME=VALUE, got {part!r}", None,
                                      "e.g. --at x=3,y=4 or --at \"A=[[1,2],[3,4]]\"")
            if name in values:
                raise api.SourceError("bad input", f"--at gives {name} twice")
            text = expr.strip()
            if read_file is not None and text.startswith("@"):
                values[name] = read_file(name, text[1:])
            else:
                values[name] = api.constant(text, f"--at {name}", limits)
    return values


def with_flags(text):
    """An engine message or hint with the settings it names (parser.errors.option) spelled as flags."""
    from ..parser.errors import spell_options
    return spell_options(text, flag_spelling)
