"""benchmarks/arrays.py and its workers (_reference_arrays.py): every engine's chain is warmed up
and then timed in turns, gradient then forward; counts below their least are refused. No times are
checked (it is a benchmark)."""
import sys

import pytest

from test_readme_tables import benchmark_script as load


def test_the_chain_is_warmed_up_and_then_timed_in_turns():
    workers = load("_reference_arrays")
    calls = []
    out = workers.timed_pair(lambda: calls.append("grad"), lambda: calls.append("forward"), repeats=3, warm_up=2)
    assert calls == ["grad", "forward"] * 5
    assert len(out["grad"]["samples"]) == len(out["forward"]["samples"]) == 3
    assert out["grad"]["min"] <= out["grad"]["median"] <= out["grad"]["max"]


def test_our_worker_times_the_chain_after_its_warm_up():
    workers = load("_reference_arrays")
    out = workers.ours("chain", 1 << 17, 2, 1)
    assert len(out["grad"]["samples"]) == len(out["forward"]["samples"]) == 2 and out["peak_bytes"] > 0


@pytest.mark.parametrize("flag, value", [("--rounds", "0"), ("--warm-up", "-1")])
def test_a_count_below_its_least_is_refused_with_a_usage_message(flag, value, capsys, monkeypatch):
    arrays = load("arrays")
    monkeypatch.setattr(sys, "argv", ["arrays.py", flag, value])
    with pytest.raises(SystemExit) as stopped:
        arrays.main()
    assert stopped.value.code == 2 and flag in capsys.readouterr().err
