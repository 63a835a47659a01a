"""Cases in supervised worker processes: one case that crashes its process (a fatal error of the
interpreter, a SIGKILL, the OOM killer) is that case's error; the other cases still run, in a
replacement worker. An interruption (STOP set, by the CLI on Ctrl-C) kills every worker and
raises Interrupted with the results that finished. The number of workers is capped at the number
of cases and of CPUs."""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time

from ..core.backend import quiet_thread

STOP = threading.Event()        # set from another thread to end a batch early (Ctrl-C)
POLL_SECONDS = 0.01             # how often the supervisor looks at STOP and at its workers (cheap)
PARENT_POLL_SECONDS = 0.25      # how often a worker looks whether its supervisor is still there


class Interrupted(Exception):
    """The batch was stopped: `results` holds the cases that finished, in order."""

    def __init__(self, results: list):
        super().__init__("interrupted")
        self.results = results


def worker_count(jobs: int, cases: int) -> int:
    return max(1, min(jobs, cases, os.cpu_count() or 1))


def _worker(cases, tasks, results, run_one, current, slot):
    """In a worker process: run the cases it is given, in a thread with a large stack (deep
    programs), writing each one's index into shared memory before it starts (at once, unlike a
    queue's buffered message: a crash is blamed on the right case)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C reaches the whole group: the supervisor decides
    threading.Thread(target=_end_with_parent, args=(os.getppid(),), daemon=True).start()
    sys.setrecursionlimit(100_000)
    threading.stack_size(256 * 1024 * 1024)

    def loop():
        quiet_thread()      # numpy's error state is per thread: the cases report non-finite values themselves
        while True:
            i = tasks.get()
            if i is None:
                return
            current[slot] = i
            results.put((i, run_one(cases[i])))
    runner = threading.Thread(target=loop)
    runner.start()
    runner.join()


def _end_with_parent(parent: int) -> None:
    """In a worker: end when the supervising process is gone (killed by SIGKILL, it could not
    kill its workers), instead of running the rest of the batch as an orphan."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _why(process) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"ended with exit code {code}"


class Supervisor:
    """The worker processes of one batch and what each is running."""

    def __init__(self, cases, jobs, run_one, crashed):
        """`run_one(case)` gives a case's result (in a worker); `crashed(case, why)` the error
        result of a case whose worker died."""
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.context = multiprocessing.get_context(method)
        self.cases, self.run_one, self.crashed = cases, run_one, crashed
        # results through a SimpleQueue: its put writes at once, where a Queue's buffered message
        # dies with a killed worker
        self.tasks, self.results = self.context.Queue(), self.context.SimpleQueue()
        for i in range(len(cases)):
            self.tasks.put(i)
        self.jobs = worker_count(jobs, len(cases))
        for _ in range(self.jobs):
            self.tasks.put(None)
        self.workers = {}                    # slot -> process
        self.current = self.context.Array("i", [-1] * self.jobs, lock=False)   # slot -> its case
        self.out = [None] * len(cases)
        self.done = 0                        # how many of out are results (counted: no scan per result)
        for slot in range(self.jobs):
            self.start_worker(slot)

    def start_worker(self, slot):
        self.current[slot] = -1
        process = self.context.Process(target=_worker, daemon=True, args=(
            self.cases, self.tasks, self.results, self.run_one, self.current, slot))
        process.start()
        self.workers[slot] = process

    def finished(self) -> int:
        return self.done

    def record(self, i, result, progress):
        if self.out[i] is None:
            self.out[i] = result
            self.done += 1
            if progress:
                progress(result)

    def reap(self, progress) -> None:
        """Blame each dead worker's case and start a replacement, while cases remain."""
        for slot, process in list(self.workers.items()):
            if process.is_alive():
                continue
            if not self.results.empty():     # it may have sent its result just before it ended
                return
            process.join()
            del self.workers[slot]
            i = self.current[slot]
            if i >= 0 and self.out[i] is None:
                self.record(i, self.crashed(self.cases[i], _why(process)), progress)
                if self.finished() < len(self.cases):
                    self.start_worker(slot)  # its sentinel is still queued, for the replacement
        if not self.workers and self.finished() < len(self.cases):
            for i, r in enumerate(self.out):    # nothing left to run them
                if r is None:
                    self.record(i, self.crashed(self.cases[i], "ended before it ran"), progress)

    def run(self, progress) -> list:
        try:
            while self.finished() < len(self.cases):
                if STOP.is_set():
                    raise Interrupted([r for r in self.out if r is not None])
                if self.results.empty():
                    self.reap(progress)
                    time.sleep(POLL_SECONDS)
                    continue
                index, result = self.results.get()
                self.record(index, result, progress)
            return self.out
        finally:
            self.stop()

    def stop(self) -> None:
        """Every worker ends: none is left orphaned, whatever ended the batch."""
        for process in self.workers.values():
            if process.is_alive():
                process.kill()
        for process in self.workers.values():
            process.join(5)
        self.tasks.cancel_join_thread()


def run_supervised(cases: list, jobs: int, run_one, crashed, progress=None) -> list:
    """Results in the order of `cases`, each case in a supervised worker process."""
    return Supervisor(cases, jobs, run_one, crashed).run(progress)


def run_in_process(cases: list, run_one, progress=None) -> list:
    """One case after another in this process, stopping between cases when STOP is set."""
    out = []
    for case in cases:
        if STOP.is_set():
            raise Interrupted(out)
        result = run_one(case)
        out.append(result)
        if progress:
            progress(result)
    return out
