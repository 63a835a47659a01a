"""The `autodiff` command: a click group whose commands load lazily (start-up stays cheap).

Every run goes through `main()`, which maps outcomes to exit codes: 0 ok, 1 a check failed,
2 a usage or input error (no traceback unless --debug), 70 an internal error, 130 Ctrl-C (or SIGTERM).
"""
from __future__ import annotations

import importlib
import errno
import os
import signal
import sys
import threading

import click

from .exitcodes import Exit

# Commands defined in other modules, imported only when invoked.
LAZY = {
    "grad": ("autodiff.cli.commands.evaluate", "grad"),
    "run": ("autodiff.cli.commands.evaluate", "run"),
    "jacobian": ("autodiff.cli.commands.higher", "jacobian"),
    "hessian": ("autodiff.cli.commands.higher", "hessian"),
    "derivative": ("autodiff.cli.commands.higher", "derivative"),
    "graph": ("autodiff.cli.commands.views", "graph"),
    "plot": ("autodiff.cli.commands.plot", "plot"),
    "check": ("autodiff.cli.commands.checks", "check"),
    "emit": ("autodiff.cli.commands.emit", "emit"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(LAZY))

    def get_command(self, ctx, name):
        if name in LAZY:
            module, attr = LAZY[name]
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                return None
        return super().get_command(ctx, name)

    def resolve_command(self, ctx, args):
        name = args[0] if args else ""
        known = self.list_commands(ctx)
        if name not in known and not name.startswith("-"):
            from .parsing import closest_command
            close = closest_command(name, known)
            raise click.UsageError(f"No such command {name!r}." + (f" Did you mean {close!r}?" if close else
                                   f" The commands: {', '.join(known)}."), ctx)
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="autodiff", prog_name="autodiff")
def cli():
    """Differentiate math: expressions and small Python-like programs, exactly.

    \b
      autodiff grad "x**2*y + y + 2" --at x=3,y=4
      autodiff grad control.py --at a=0.37
      autodiff run program.py --at x=[1,2,3]
    """


def invoke(args) -> int:
    """Run the click command; return the exit code. Errors are rendered here, then the warnings
    of deprecated spellings."""
    from .options import PENDING_WARNINGS
    try:
        return run_command(args)
    finally:
        for warning in PENDING_WARNINGS:
            sys.stderr.write(warning + "\n")
        PENDING_WARNINGS.clear()


def run_command(args) -> int:
    """Run the click command; return the exit code. Errors are rendered here."""
    debug = "--debug" in args
    as_json = "--json" in args[:args.index("--")] if "--" in args else "--json" in args
    from ..parser.errors import SourceError     # lazy, as every engine module: start-up stays cheap
    try:
        rv = cli.main(args=args, prog_name="autodiff", standalone_mode=False)
        return int(rv) if isinstance(rv, int) else Exit.OK
    except SourceError as err:
        if debug:
            import traceback      # only for --debug: start-up stays cheap
            traceback.print_exc()
        from .data_options import with_file_shapes
        with_file_shapes(err)          # a shape the program rejects: name the inputs read from files
        if as_json:
            from .output import error_json
            error_json(err, dtype_asked(args))
        from .render.common import error
        error(err)
        return Exit.USAGE
    except click.exceptions.Abort:
        return Exit.INTERRUPTED
    except click.ClickException as err:
        if as_json:
            from .output import usage_error_json
            usage_error_json(err, dtype_asked(args))
        err.show()
        return Exit.USAGE
    except click.exceptions.Exit as e:
        return e.exit_code
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
    except BrokenPipeError:
        return Exit.OK
    except OSError as exc:
        if exc.errno not in OUTPUT_ERRNOS:
            raise
        _output_failed(exc)
        return Exit.USAGE
    except Exception:
        if as_json:
            from .output import emit_json
            exc = sys.exc_info()[1]
            emit_json({"error": {"kind": "internal error", "message": f"{type(exc).__name__}: {exc}", "file": None,
                                 "line": None, "column": None, "hint": "this is a bug in autodiff; please report it"}},
                      dtype_asked(args))
        if debug:
            import traceback      # only for --debug: start-up stays cheap
            traceback.print_exc()
        else:
            exc = sys.exc_info()[1]
            sys.stderr.write(f"internal error: {type(exc).__name__}: {exc}\n"
                             "this is a bug in autodiff; please rerun with --debug and report the output\n")
        return Exit.INTERNAL


def dtype_asked(args) -> str:
    """The --dtype of the command line (for the JSON error document), float64 by default."""
    for i, word in enumerate(args):
        if word == "--dtype" and i + 1 < len(args):
            return args[i + 1]
        if word.startswith("--dtype="):
            return word.split("=", 1)[1]
    return "float64"


# Writing the output failed (a full disk, /dev/full, a closed descriptor): an error of the
# environment, said as such, not a bug in autodiff
OUTPUT_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EBADF, errno.EDQUOT, errno.EFBIG}


def _output_failed(exc) -> None:
    try:
        sys.stderr.write(f"error: cannot write the output: {exc.strerror or exc}\n")
        sys.stderr.flush()
    except (OSError, AttributeError):       # stderr gone too: the exit status says it
        pass


def _stop_batch() -> bool:
    """Ask a running batch of checks to stop (kill its workers, return what finished); False if
    no batch runs. Read from sys.modules: an interrupt must not import the engine."""
    workers = sys.modules.get(__name__.rsplit(".", 2)[0] + ".engine.checks.workers")
    if workers is None:
        return False
    workers.STOP.set()
    return True


def _terminated(signum, frame):
    """SIGTERM ends a run as Ctrl-C does: workers killed, what finished printed, no file left."""
    raise KeyboardInterrupt


def _interrupted(finished, result) -> None:
    """Ctrl-C (or SIGTERM): a batch of checks stops, prints what finished and returns here to
    exit 130; anything else, or a second Ctrl-C, ends the process at once, removing the temporary
    file of an output (--junit, --out, plot -o) first if one is being written."""
    if _stop_batch():                   # `check`: its workers end, and what finished is printed
        try:
            finished.wait(10)
        except KeyboardInterrupt:       # a second Ctrl-C: no more waiting
            pass
    if finished.is_set() and result[0] == Exit.INTERRUPTED:
        if threading.current_thread() is threading.main_thread():
            # the batch has stopped and printed: another Ctrl-C before the exit must not end
            # the process with a KeyboardInterrupt instead of 130
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return
    outfile = sys.modules.get(__name__.rsplit(".", 1)[0] + ".outfile")
    if outfile is not None:
        outfile.remove_unfinished()
    sys.stderr.write("interrupted\n")
    sys.stderr.flush()
    os._exit(Exit.INTERRUPTED)


def main(argv=None) -> None:
    """Entry point. Runs the command in a thread with a large stack, so deeply nested input and
    deep recursion end in our own limits, not in a crash of the interpreter."""
    args = list(sys.argv[1:] if argv is None else argv)
    result = [Exit.INTERNAL]
    finished = threading.Event()    # not worker.is_alive(): a join that Ctrl-C interrupts can leave it wrong
    if sys.stdout is None:                  # started with stdout closed (`autodiff ... >&-`)
        _output_failed(OSError(errno.EBADF, "standard output is closed"))
        sys.exit(Exit.USAGE)

    def work():
        from ..engine.core.backend import quiet_thread    # lazy: importing cli.main stays engine-free
        quiet_thread()            # numpy's error state is per thread: this one reports non-finite values itself
        try:
            result[0] = invoke(args)
        except SystemExit:        # rich's answer to a closed pipe (`| head`): the reader left, not an error
            result[0] = Exit.OK
        finally:
            finished.set()

    from ..engine.core import backend     # lazy: importing cli.main stays engine-free
    backend.tune_allocator_on_load = True     # our own process: see backend.tune_allocator
    sys.setrecursionlimit(100_000)
    threading.stack_size(512 * 1024 * 1024)
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if on_main_thread else None
    try:
        while worker.is_alive():
            worker.join(0.25)
    except KeyboardInterrupt:
        _interrupted(finished, result)
    finally:
        if on_main_thread:                  # main() called in a test's process: its handler again
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    try:
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno not in OUTPUT_ERRNOS and not isinstance(exc, BrokenPipeError):
            raise
        if not isinstance(exc, BrokenPipeError):
            _output_failed(exc)
            result[0] = Exit.USAGE
        try:
            sys.stdout = None               # nothing more to flush at exit
        except AttributeError:
            pass
    sys.exit(int(result[0]))
