"""Run autodiff as a real process on a pseudo-terminal, as a person's shell would (colour on,
the terminal's width), and read back everything it wrote."""
import os
import re
import subprocess
import sys

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_in_terminal(args, env_extra=None, timeout=120) -> tuple[int, str]:
    """(exit code, what the terminal showed, escape codes kept) of `python -m autodiff ARGS`."""
    import pty
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update({"TERM": "xterm-256color", **(env_extra or {})})
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "autodiff", *args], stdin=follower, stdout=follower,
                            stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:                   # the process closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    code = proc.wait(timeout=timeout)
    os.close(leader)
    return code, b"".join(chunks).decode("utf-8", "replace")


def screen_lines(text) -> list:
    """The lines as shown, without escape codes; a progress bar's redraws after \\r split too."""
    return re.split(r"\r?\n|\r", ANSI.sub("", text))
