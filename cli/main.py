"""The `autodiff` command: a click group whose commands load lazily (start-up stays cheap).

Every run goes through `main()`, which maps outcomes to exit codes: 0 ok, 1 a check failed,
2 a usage or input error (no traceback unless --debug), 70 an internal error, 130 Ctrl-C.
"""
from __future__ import annotations

import sys

import click

from .exitcodes import Exit
from .options import limits_from, target_options

# Commands defined in other modules, imported only when invoked.
LAZY = {
    "jacobian": ("autodiff.cli.commands.higher", "jacobian"),
    "hessian": ("autodiff.cli.commands.higher", "hessian"),
    "derivative": ("autodiff.cli.commands.higher", "derivative"),
    "graph": ("autodiff.cli.commands.views", "graph"),
    "plot": ("autodiff.cli.commands.views", "plot"),
    "check": ("autodiff.cli.commands.checks", "check"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(LAZY))

    def get_command(self, ctx, name):
        if name in LAZY:
            import importlib
            module, attr = LAZY[name]
            try:
                return getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                return None
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="autodiff", prog_name="autodiff")
def cli():
    """Differentiate math: expressions and small Python-like programs, exactly.

    \b
      autodiff grad "x**2*y + y + 2" --at x=3,y=4
      autodiff grad control.py --at a=0.37
      autodiff run program.py --at x=[1,2,3]
    """


@cli.command(context_settings={"ignore_unknown_options": True})
@target_options
@click.option("--wrt", default=None, metavar="NAMES", help="Differentiate with respect to these inputs only "
              "(comma-separated).")
@click.option("--seed", default=None, metavar="V", help="For an array output: compute vᵀJ with this v "
              "instead of the gradient of the sum.")
@click.option("--mode", type=click.Choice(["reverse", "forward"]), default="reverse", show_default=True,
              help="reverse: one sweep of the tape; forward: one forward pass of dual numbers per input element.")
@click.option("--explain", is_flag=True, help="Show the sweep step by step: the chain rule node by node "
              "(reverse), or the dual numbers (with --mode forward).")
@click.option("--check", "check_mode", type=click.Choice(["full", "fast"]), is_flag=False, flag_value="full",
              default=None, help="Check the gradient against finite differences: full (every entry, with an "
              "error estimate) or fast (one random projection). A failed check exits 1.")
@click.option("--check-seed", type=click.IntRange(0), default=None, metavar="N",
              help="Seed of --check fast's random direction (default: a fresh one, printed).")
def grad(target, at, fn, of, dtype, as_json, wrt, seed, debug, mode, explain, check_mode=None, check_seed=None,
         **limits):
    """Value and gradient of TARGET (an expression or a .py program) at a point."""
    from ..engine import api
    lim = limits_from(limits)
    tgt = api.load(target, fn, of)
    values = api.parse_at(at, lim)
    seed_value = api.constant(seed, "--seed", lim) if seed is not None else None
    wrt_names = [w.strip() for w in wrt.split(",") if w.strip()] if wrt else None
    if explain:
        if check_mode is not None:
            from ..parser.errors import SourceError
            raise SourceError("usage", "--explain and --check are separate views: use one at a time")
        from .commands.views import explain_grad
        return explain_grad(tgt, values, wrt_names, seed_value, mode, dtype, lim, as_json)
    result = api.grad(None, values, wrt_names, seed_value, dtype_name=dtype, limits=lim, target=tgt, mode=mode)
    report = None
    if check_mode is not None:
        from .commands.checks import grad_check
        report = grad_check(tgt, result, check_mode, check_seed, dtype, lim, seed_value, wrt_names)
    if as_json:
        from .output import emit_json
        from .render.common import notes_for
        from ..engine.lang.values import shape_of
        doc = {"value": _j(result.value), "gradient": {k: _j(v) for k, v in result.gradient.items()},
               "inputs": {k: _j(v) for k, v in result.inputs.items()},
               "output_shape": list(shape_of(result.value)), "reduced": result.reduced,
               "unconnected": result.unconnected, "notes": notes_for(result),
               "kinks": [_kink(k) for k in result.kinks], "tape_length": result.tape_length,
               "mode": result.mode, "nonfinite": result.nonfinite}
        if report is not None:
            from .commands.checks import report_json
            doc["check"] = report_json(report)
        emit_json(doc)
    else:
        from .render import common as render
        render.grad_result(tgt, result)
        if mode == "forward":
            from .render.higher import forward_note
            forward_note(result)
        if report is not None:
            from .render.checks import gradient_check
            gradient_check(report)
    return Exit.CHECK_FAILED if report is not None and not report.passed else Exit.OK


@cli.command(context_settings={"ignore_unknown_options": True})
@target_options
def run(target, at, fn, of, dtype, as_json, debug, **limits):
    """Evaluate TARGET at a point without differentiating."""
    from ..engine import api
    lim = limits_from(limits)
    tgt = api.load(target, fn, of)
    result = api.evaluate(None, api.parse_at(at, lim), dtype_name=dtype, limits=lim, target=tgt)
    if as_json:
        from .output import emit_json
        from .render.common import notes_for
        emit_json({"value": _j(result.value), "inputs": {k: _j(v) for k, v in result.inputs.items()},
                   "steps": result.steps, "notes": notes_for(result)})
    else:
        from .render import common as render
        render.run_result(tgt, result)
    return Exit.OK


def _j(v):
    from .output import jsonable
    return jsonable(v)


def _kink(k):
    op, span, detail = k
    return {"op": op, "line": span.line if span else None, "column": span.column if span else None,
            "detail": detail}


def _invoke(args) -> int:
    """Run the click command; return the exit code. Errors are rendered here."""
    debug = "--debug" in args
    from ..parser.errors import SourceError
    try:
        rv = cli.main(args=args, prog_name="autodiff", standalone_mode=False)
        return int(rv) if isinstance(rv, int) else Exit.OK
    except SourceError as err:
        if debug:
            import traceback
            traceback.print_exc()
        from .render import common as render
        render.error(err)
        return Exit.USAGE
    except click.exceptions.Abort:
        return Exit.INTERRUPTED
    except click.ClickException as err:
        err.show()
        return Exit.USAGE
    except click.exceptions.Exit as e:
        return e.exit_code
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
    except BrokenPipeError:
        return Exit.OK
    except Exception:
        import traceback
        if debug:
            traceback.print_exc()
        else:
            exc = sys.exc_info()[1]
            sys.stderr.write(f"internal error: {type(exc).__name__}: {exc}\n"
                             "this is a bug in autodiff; please rerun with --debug and report the output\n")
        return Exit.INTERNAL


def main(argv=None) -> None:
    """Entry point. Runs the command in a thread with a large stack, so deeply nested input and
    deep recursion end in our own limits, not in a crash of the interpreter."""
    import threading
    args = list(sys.argv[1:] if argv is None else argv)
    result = [Exit.INTERNAL]

    def work():
        from ..engine.core.backend import quiet_thread
        quiet_thread()            # numpy's error state is per thread: this one reports non-finite values itself
        try:
            result[0] = _invoke(args)
        except SystemExit:        # rich's answer to a closed pipe (`| head`): the reader left, not an error
            result[0] = Exit.OK

    from ..engine.core import backend
    backend.tune_allocator_on_load = True     # our own process: see backend.tune_allocator
    sys.setrecursionlimit(100_000)
    threading.stack_size(512 * 1024 * 1024)
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.25)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        import os
        os._exit(Exit.INTERRUPTED)
    sys.stdout.flush()
    sys.exit(int(result[0]))
