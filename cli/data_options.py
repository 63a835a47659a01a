"""Input data on the command line: `--at NAME=@PATH` (and `@-`, standard input, in the format of
`--stdin-format`), `--inputs PATH` (every input from one file, `--at` overriding single names), the
warning for data that holds nan or inf, and the shapes of file inputs named next to an error.

The files themselves are read by engine/lang/datafiles.py; this module only knows the flags.
Engine and rich imports sit inside the functions: start-up stays cheap.
"""
from __future__ import annotations

import click

STDIN_FORMATS = ("json", "npy", "npz", "csv", "tsv", "txt")

# Kinds of errors a run raises about the values it was given: next to them the CLI names the
# shapes of the inputs that came from files.
RUN_FAULTS = {"shape mismatch", "type error", "index error", "value error", "not a scalar", "not one input",
              "ambiguous condition", "bad output", "too large", "wrong arguments"}

# name -> (where the data came from, its shape), for the command being run (one per process)
file_inputs: dict = {}
# every file the command reads -> how it was named: no output may overwrite one (cli/outfile.py)
read_files: dict = {}


def input_options() -> list:
    """The click options of input data, added to every command that takes --at (target_options)."""
    return [
        click.option("--inputs", "inputs_file", default=None, metavar="PATH",
                     help="Every input from one file: an .npz (one array per name) or a .json/.toml "
                          "table of names to values; --at overrides single names."),
        click.option("--stdin-format", type=click.Choice(STDIN_FORMATS), default="json", show_default=True,
                     help="The format of --at NAME=@- (the value read from standard input)."),
    ]


def at_file_reader(options: dict, limits):
    """The reader parse_at calls for `NAME=@REF`: a file, or `-` (standard input, read once)."""
    stdin_format = options.get("stdin_format") or "json"
    stdin_users = []

    def read(name: str, ref: str):
        from ..engine.lang.datafiles import STDIN, load_reference, split_reference    # only when a file is named
        path = split_reference(ref)[0]
        if path == STDIN:
            if stdin_users:
                from ..engine.api import SourceError
                raise SourceError("bad input", f"--at {stdin_users[0]}=@- and --at {name}=@-: standard input "
                                  "can be read once", None, "give the other one from a file")
            stdin_users.append(name)
        value = load_reference(ref, limits, stdin_format=stdin_format)
        _remember(name, "standard input" if path == STDIN else ref, value)
        if path != STDIN:
            read_files.setdefault(path, f"an input of this command (--at {name}=@{ref})")
        return value
    return read


def inputs_from_file(options: dict, limits) -> dict:
    """The values of --inputs PATH, or {} without it."""
    path = options.get("inputs_file")
    if not path:
        return {}
    from ..engine.lang.datainputs import load_inputs
    opened = []
    values = load_inputs(path, limits, opened=opened)
    read_files.setdefault(path, f"an input of this command (--inputs {path})")
    for data_file in opened:
        read_files.setdefault(data_file, f"an input of this command (a data file named in --inputs {path})")
    for name, value in values.items():
        _remember(name, path, value)
    return values


def merged_inputs(from_file: dict, from_at: dict, options: dict) -> tuple:
    """(values, warnings): --inputs with --at over it, and a warning for each input from a file
    whose data holds nan or inf."""
    values = {**from_file, **from_at}
    for name in from_file:
        if name in from_at and file_inputs.get(name, ("",))[0] == options.get("inputs_file"):
            file_inputs.pop(name, None)           # overridden by a constant of --at
    if not file_inputs:
        return values, []
    from ..engine.lang.datainputs import nonfinite_warning
    warnings = [nonfinite_warning(name, values[name], where) for name, (where, _) in file_inputs.items()]
    return values, [w for w in warnings if w]


def _remember(name: str, where: str, value) -> None:
    shape = tuple(getattr(value, "shape", ()))
    file_inputs[name] = (where, shape)


def forget_file_inputs() -> None:
    """A new command: no inputs from files yet."""
    file_inputs.clear()
    read_files.clear()


def note_program(target) -> None:
    """The program file a command runs, among the files it reads (an expression reads none)."""
    if getattr(target, "filename", None):
        read_files.setdefault(target.filename, "the program this command runs")


def with_file_shapes(err) -> None:
    """Name the shapes of the inputs read from files in the message of an error about values."""
    if not file_inputs or err.kind not in RUN_FAULTS or "inputs read from files:" in err.message:
        return
    shapes = "; ".join(f"{name} has shape {shape} (from {where})" for name, (where, shape) in file_inputs.items())
    err.message = f"{err.message} (inputs read from files: {shapes})"
