"""Functions made from the replays' own generated text (diff/replay_compiled.py's scalar traces,
diff/replay_arrays.py's array sweeps): the text is built from the rules table, never from the
user's, and is only passed to `compile()`; each function is made from its code object with
`types.FunctionType` in the namespace its names are bound in. Nothing goes to eval or exec."""
from __future__ import annotations

import types


def functions_of(text: str, namespace: dict, filename: str) -> dict:
    """The functions `text` defines at its top level, by name."""
    module = compile(text, filename, "exec")
    return {code.co_name: types.FunctionType(code, namespace) for code in module.co_consts
            if isinstance(code, types.CodeType)}
