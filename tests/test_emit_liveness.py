"""engine/emit/liveness.py (issue 31 item 3, "no dead adjoints"): the emitted adjoint has no zero
start an accumulation overwrites at once (`b_b = 0.0` then `b_b = b_b + a_b` is `b_b = a_b`) and no
store that no path reads; a zero store a later loop iteration or another branch reads stays; the
numbers are the engine's to the bit."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import autodiff
from autodiff.engine import api
from autodiff.engine.emit.liveness import Store, tidied

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "samples" / "programs"
PAD, INNER = "    ", "        "


def emitted(tmp_path, name, at):
    out = tmp_path / "emitted.py"
    out.write_text(api.emit(None, mode="adjoint", target=api.load(str(PROGRAMS / name)), at=at))
    spec = importlib.util.spec_from_file_location(f"emitted_{Path(name).stem}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return out.read_text(), module


def reverse_sweep(text) -> list:
    """f_vjp's statements after its seed, without their `# line` tags."""
    vjp = text[text.index("def f_vjp("):].split("\n\n\n")[0]
    return [line.split("  # line ")[0] for line in vjp[vjp.index("_out_b = "):].splitlines()[1:]]


def test_fibonaccis_adjoint_has_no_zero_start_overwritten_at_once_and_no_dead_store(tmp_path):
    text, module = emitted(tmp_path, "fibonacci.py", {"x": 1.5})
    assert reverse_sweep(text) == [
        "    b_b = 0.0",                # the first iteration reads it (_v1_b = b_b)
        "    a_b = _out_b",
        "    for i in reversed(_stack.pop()):",
        "        _v1_b = b_b",          # was `_v1_b = _v1_b + b_b` after `_v1_b = 0.0` (the loop's end)
        "        b_b = a_b",            # was `b_b = 0.0` then `b_b = b_b + a_b`
        "        a_b = _v1_b",
        "        b_b = b_b + _v1_b",
        "    x_b = b_b",                # no `b_b = 0.0`, `a_b = 0.0` after the last read
        "    return _out, (x_b,)"]
    for x in (1.5, -0.25, 2.0):
        value, (g,) = module.f_vjp(x)
        expected = autodiff.grad(str(PROGRAMS / "fibonacci.py"), at={"x": x})
        assert value == expected.value and g == expected.gradient["x"] == 55.0


def test_a_zero_store_the_next_iteration_reads_stays_and_the_numbers_are_the_engines(tmp_path):
    """loop_over_array: `v_b = 0.0` at the end of the loop's body is read by the next iteration's
    `else` (which adds nothing to v_b): it stays; the zero starts the branch overwrites go."""
    text, module = emitted(tmp_path, "loop_over_array.py", {"x": np.array([1.0, -2.0, 3.0])})
    sweep = reverse_sweep(text)
    assert "        v_b = 0.0" in sweep and "            v_b = np.where(_t8, _t3, _t7)" in sweep
    assert "            _v6_b = total_b" in sweep and "            total_b = _v6_b" in sweep
    assert not any(line.strip() in ("_v5_b = 0.0", "_v6_b = 0.0", "total_b = 0.0") for line in sweep)
    for x in ([1.0, -2.0, 3.0], [-1.0, 2.0, -3.0], [0.5, -0.0, np.inf, -1.0]):
        x = np.array(x)
        value, (g,) = module.f_vjp(x)
        expected = autodiff.grad(str(PROGRAMS / "loop_over_array.py"), at={"x": x})
        assert value == expected.value
        assert g.tobytes() == np.asarray(expected.gradient["x"], dtype=float).tobytes()
    assert module.f_vjp(np.array([1.0, -2.0, 3.0]))[1][0].tolist() == [3.0, 0.0, 27.0]


def test_a_zero_read_when_the_loop_does_not_run_stays():
    lines = [Store(PAD, "a_b", None), f"{PAD}for i in r:", Store(INNER, "a_b", "g", accumulates=True),
             f"{INNER}h = a_b * 2.0", Store(INNER, "a_b", None, 7), f"{PAD}return a_b, h"]
    assert tidied(lines) == [f"{PAD}a_b = 0.0", f"{PAD}for i in r:", f"{INNER}a_b = g", f"{INNER}h = a_b * 2.0",
                             f"{INNER}a_b = 0.0  # line 7", f"{PAD}return a_b, h"]


def test_a_zero_one_branch_reads_stays_and_a_branch_left_empty_passes():
    lines = [Store(PAD, "c_b", None), f"{PAD}if t:", Store(INNER, "c_b", "e", accumulates=True), f"{PAD}else:",
             f"{INNER}u = c_b", Store(PAD, "c_b", None, 3), f"{PAD}return u"]
    assert tidied(lines) == [f"{PAD}c_b = 0.0", f"{PAD}if t:", f"{INNER}pass", f"{PAD}else:", f"{INNER}u = c_b",
                             f"{PAD}return u"]


def test_an_array_written_in_place_keeps_its_sum_and_a_statement_not_followed_keeps_all():
    written_into = [Store(PAD, "a_b", None), Store(PAD, "a_b", "g", accumulates=True),
                    f"{PAD}np.add.at(a_b, 0, 1.0)", f"{PAD}return a_b"]
    assert tidied(written_into) == written_into
    jumps = [Store(PAD, "a_b", None), f"{PAD}while t:", f"{INNER}break", Store(PAD, "a_b", None), f"{PAD}return 1"]
    assert tidied(jumps) == jumps
