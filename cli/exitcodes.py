"""The process's exit codes (one enum, as in httpie's ExitStatus)."""
from enum import IntEnum


class Exit(IntEnum):
    OK = 0              # success
    CHECK_FAILED = 1    # a numerical check or a batch check failed
    USAGE = 2           # a usage or input error: syntax, unknown name, bad --at, bad file...
    INTERNAL = 70       # a bug in autodiff (EX_SOFTWARE): please report it with --debug output
    INTERRUPTED = 130   # Ctrl-C
