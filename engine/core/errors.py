"""The engine's own errors. The core knows no source text and no front end: an error names the
setting at fault (`max_elements`), and the language turns it into a located SourceError
(lang/errors.py:runtime_error), which the CLI or the API spells in its own way."""
from __future__ import annotations


class EngineError(Exception):
    """A refusal by the engine: `kind` as in SourceError ("too large"...), the message, and the
    setting that would lift it, if any."""

    def __init__(self, kind: str, message: str, setting: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.setting = setting


class TapeTooLong(EngineError):
    """The tapes being recorded hold more entries than the tape-entry limit allows."""

    def __init__(self, message: str):
        super().__init__("tape limit", message, "max_tape_entries")


class TooLarge(EngineError):
    """An array op would make more elements than the element limit allows."""

    def __init__(self, message: str):
        super().__init__("too large", message, "max_elements")

