"""How the commands read their words: a TARGET that starts with '-' (`-x**2`, `-1`) is not taken
for an option, unknown options get click's "Did you mean ...?", and a mistyped command name gets
the closest command.

Click's `ignore_unknown_options` once let such targets through, but it also swallowed every
mistyped option as an extra argument (`--jsno`); here a word that cannot be an option is moved
after `--` instead, and click's own option matching does the rest.
"""
from __future__ import annotations

import re

import click

# What an option looks like: -x, --name, --name=value. Anything else starting with '-' is a value.
OPTION_WORD = re.compile(r"-{1,2}[A-Za-z][A-Za-z0-9_-]*(=.*)?\Z", re.S)


def options_taking_values(command: click.Command) -> set:
    """The spellings of the options that take the next word as their value."""
    out = set()
    for param in command.params:
        if isinstance(param, click.Option) and not param.is_flag and not param.count \
                and not getattr(param, "_flag_needs_value", False):
            out.update(param.opts + param.secondary_opts)
    return out


def values_after_dashes(command: click.Command, args: list) -> list:
    """`args` with every word that starts with '-' but cannot be an option (nor an option's value)
    moved after `--`, where click reads it as an argument."""
    takes_value = options_taking_values(command)
    kept, moved, after = [], [], []
    previous_takes_value = False
    for i, word in enumerate(args):
        if word == "--":
            after = args[i + 1:]
            break
        if not previous_takes_value and word.startswith("-") and len(word) > 1 and not OPTION_WORD.match(word):
            moved.append(word)
        else:
            kept.append(word)
        previous_takes_value = word in takes_value
    if not moved and not after and "--" not in args:
        return list(args)
    return kept + ["--"] + moved + after


class TargetCommand(click.Command):
    """A command with a TARGET argument that may start with '-'."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, values_after_dashes(self, list(args)))
        except click.NoSuchOption as err:
            # click offers every option that shares a few letters; one close spelling reads better
            spellings = [opt for param in self.get_params(ctx) for opt in param.opts + param.secondary_opts]
            import difflib                    # only for a mistyped option: start-up stays cheap
            err.possibilities = difflib.get_close_matches(err.option_name, spellings, n=1, cutoff=0.6)
            raise


def closest_command(name: str, names) -> str | None:
    import difflib                        # only for a mistyped command: start-up stays cheap
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
    return close[0] if close else None
