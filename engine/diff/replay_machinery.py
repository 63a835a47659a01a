"""What diff/function.py needs to record and replay traces, in one module it imports on first
use (`function.replaying`): a single plain run, as from the command line, needs none of it, and
start-up does not load it."""
from __future__ import annotations

from .bits import all_finite, same_bits  # noqa: F401
from .replay import record_trace, replay_adjoints, replay_output, replay_values  # noqa: F401
from .replay_guards import PathChanged  # noqa: F401
from .replay_paths import filed, new_path, replay_entry  # noqa: F401
from .replay_results import compiled_grad, compiled_output, compiled_value, same_results  # noqa: F401
from .replay_sweep import live_kinks  # noqa: F401
