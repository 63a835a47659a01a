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


CRASHING_RUN = """
import os, sys
from autodiff.engine.checks import runner
plain = runner.run_case
def run_case(case, **options):
    if case.name == "crash":
        os.abort()              # what a fatal error of the interpreter ends with
    return plain(case, **options)
runner.run_case = run_case
from autodiff.cli.main import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_case_that_aborts_the_interpreter_is_its_error_and_the_others_report(tmp_path, jobs):
    path = tmp_path / "crash.toml"
    path.write_text('[[case]]\nname = "first"\nf = "x*x"\nat = { x = 2 }\n\n'
                    '[[case]]\nname = "crash"\nf = "x*x"\nat = { x = 2 }\n\n'
                    '[[case]]\nname = "last"\nf = "sin(x)"\nat = { x = 1 }\n')
    run = subprocess.run([sys.executable, "-c", CRASHING_RUN, "check", str(path), "--jobs", jobs, "--json"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    import json
    cases = {c["name"]: c for c in json.loads(run.stdout)["cases"]}
    assert cases["first"]["status"] == cases["last"]["status"] == "passed"
    assert cases["crash"]["status"] == "error" and "was killed by SIGABRT" in cases["crash"]["message"]


def test_check_file_runs_in_process_unless_asked_to_isolate(tmp_path, monkeypatch):
    import autodiff
    from autodiff.engine.checks import runner
    path = tmp_path / "two.toml"
    path.write_text('[[case]]\nname = "a"\nf = "x*x"\nat = { x = 2 }\n\n[[case]]\nname = "b"\nf = "x"\nat = { x = 1 }\n')
    log = tmp_path / "pids"
    plain = runner.run_case

    def spy(case, **options):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return plain(case, **options)
    monkeypatch.setattr(runner, "run_case", spy)
    assert [r.status for r in autodiff.check_file(str(path))] == ["passed", "passed"]
    assert log.read_text().split() == [str(os.getpid())] * 2
    log.unlink()
    assert [r.status for r in autodiff.check_file(str(path), isolate=True)] == ["passed", "passed"]
    worker = log.read_text().split()
    assert len(worker) == 2 and str(os.getpid()) not in worker
    assert multiprocessing.active_children() == []


def _slow_suite(tmp_path):
    path = tmp_path / "slow.toml"
    path.write_text("".join(f'[[case]]\nname = "slow {i}"\nf = "sum(x*x)"\n'
                            f'random = {{ count = 20000, x = {{ range = [0, 1], shape = [30] }} }}\n'
                            for i in range(4)))
    return path


def _leftovers(folder):
    return [p for p in os.listdir(folder) if p.endswith(".tmp")]


@pytest.mark.parametrize("signals", [(signal.SIGINT, signal.SIGINT), (signal.SIGTERM,), (signal.SIGKILL,)])
def test_no_junit_temporary_is_left_after_a_hard_stop(tmp_path, signals):
    report = tmp_path / "report.xml"
    run = subprocess.Popen([sys.executable, "-m", "autodiff", "check", str(_slow_suite(tmp_path)),
                            "--junit", str(report)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    for sig in signals:
        run.send_signal(sig)
        time.sleep(0.05)
    run.communicate(timeout=30)
    assert run.returncode in (130, -signal.SIGKILL)
    time.sleep(0.5)                       # a killed parent's workers notice and end
    assert _leftovers(tmp_path) == [] and not report.exists()


def test_a_stale_junit_temporary_does_not_break_the_next_run(tmp_path):
    report = tmp_path / "report.xml"
    (tmp_path / ".report.xml.stale1234.tmp").write_text("<half a report")   # a SIGKILL'd write
    path = tmp_path / "ok.toml"
    path.write_text('[[case]]\nname = "a"\nf = "x*x"\nat = { x = 2 }\n')
    run = subprocess.run([sys.executable, "-m", "autodiff", "check", str(path), "--junit", str(report)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert 'tests="1"' in report.read_text()


def test_a_check_in_a_worker_prints_no_raw_numpy_warning(tmp_path):
    """Issue 27 item 20: finite differences take sqrt of negative numbers near 0; the verdict says
    f is not finite at x-h, and no `RuntimeWarning: invalid value encountered in sqrt` leaks from
    the worker's thread (numpy's error state is per thread)."""
    case = tmp_path / "s.grad.toml"
    case.write_text('[[case]]\nf = "sum(sqrt(x))"\nat = { x = [1e-9, 1.0] }\n')
    run = subprocess.run([sys.executable, "-m", "autodiff", "check", str(case)], capture_output=True, text=True)
    assert run.returncode == 1 and "f is not finite at x-h, x-2h" in run.stdout
    assert "Warning" not in run.stdout + run.stderr, run.stderr
