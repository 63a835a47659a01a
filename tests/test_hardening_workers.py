"""Issue 16, batches: a case that kills its worker is that case's error, the others still run;
STOP (Ctrl-C) ends every worker and keeps what finished; --jobs is capped."""
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from autodiff.engine.checks import workers

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")


def kill_on_three(case):
    if case == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return ("ran", case)


def crashed(case, why):
    return ("crashed", case, why)


def slow(case):
    time.sleep(30)
    return ("ran", case)


def test_a_killed_worker_is_that_cases_error_and_the_others_run():
    results = workers.run_supervised(list(range(8)), 2, kill_on_three, crashed)
    assert results[3] == ("crashed", 3, "was killed by SIGKILL")
    assert [r for i, r in enumerate(results) if i != 3] == [("ran", i) for i in range(8) if i != 3]
    assert multiprocessing.active_children() == []


def test_stop_ends_every_worker_and_keeps_what_finished():
    workers.STOP.clear()
    timer = threading.Timer(1.0, workers.STOP.set)
    timer.start()
    try:
        with pytest.raises(workers.Interrupted) as stopped:
            workers.run_supervised(list(range(4)), 2, slow, crashed)
    finally:
        workers.STOP.clear()
    assert stopped.value.results == []
    assert multiprocessing.active_children() == []


def test_jobs_are_capped_at_the_cases_and_the_cpus():
    assert workers.worker_count(64, 3) == min(3, os.cpu_count())
    assert workers.worker_count(1000, 10_000) == os.cpu_count()
    assert workers.worker_count(0, 5) == 1


def test_ctrl_c_prints_what_finished_and_exits_130(tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text("".join(f'[[case]]\nname = "slow {i}"\nf = "sum(x*x)"\n'
                            f'random = {{ count = 20000, x = {{ range = [0, 1], shape = [30] }} }}\n'
                            for i in range(4)))
    run = subprocess.Popen([sys.executable, "-m", "autodiff", "check", str(path), "--jobs", "2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=30)
    assert run.returncode == 130
    assert "interrupted: 0 of 4 cases finished" in err and "0 passed, 0 failed" in out
