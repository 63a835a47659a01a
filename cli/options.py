"""Options shared by the commands that take a TARGET and a point."""
from __future__ import annotations

import click


def target_options(f):
    """TARGET, --at, --fn, --of, --dtype, --json, limits, --debug."""
    decorators = [
        click.argument("target"),
        click.option("--at", "at", multiple=True, metavar="NAME=VALUE[,...]",
                     help="Input values, repeatable; a comma-separated list is split at the top level: "
                          "--at x=3,y=4  --at \"A=[[1,2],[3,4]]\"  --at x=arange(4.0)."),
        click.option("--fn", default=None, metavar="NAME", help="The function of a program to use "
                     "(default: f, else the only one defined)."),
        click.option("--of", default=None, metavar="NAME", help="For a script: the variable that is the output "
                     "(default: the last expression statement)."),
        click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64", show_default=True),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of tables."),
        click.option("--max-steps", type=click.IntRange(1), default=10_000_000, show_default=True,
                     help="Stop a program after this many executed steps."),
        click.option("--max-depth", type=click.IntRange(1), default=200, show_default=True,
                     help="Stop a program whose calls nest deeper than this (recursion)."),
        click.option("--max-elements", type=click.IntRange(1), default=250_000_000, show_default=True,
                     help="Refuse to create arrays with more elements than this."),
        click.option("--max-tape-entries", type=click.IntRange(1), default=5_000_000, show_default=True,
                     help="Stop a program that records more operations than this on its tapes."),
        click.option("--debug", is_flag=True, help="Show Python tracebacks for errors."),
    ]
    for d in reversed(decorators):
        f = d(f)
    return f


def flag_spelling(name: str) -> str:
    """How the command line spells a setting an engine error names (parser.errors.option)."""
    return "--" + name.replace("_", "-")


def limits_from(opts: dict):
    """The engine's Limits from the --max-* options."""
    from ..engine.api import Limits      # lazy: main imports this module, and start-up stays cheap
    return Limits(steps=opts["max_steps"], depth=opts["max_depth"], elements=opts["max_elements"],
                  tape_entries=opts["max_tape_entries"])


def parse_at(items, limits=None) -> dict:
    """`--at x=3,y=4 --at "A=[[1,2],[3,4]]"` -> {"x": 3.0, "y": 4.0, "A": array}."""
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
            values[name] = api.constant(expr.strip(), f"--at {name}", limits)
    return values


def with_flags(text):
    """An engine message or hint with the settings it names (parser.errors.option) spelled as flags."""
    from ..parser.errors import spell_options
    return spell_options(text, flag_spelling)
