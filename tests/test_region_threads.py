"""core/region_threads.py's numexpr workers: two a core on a small machine, unless the host chose
a count; the numpy split pool keeps one thread a core whatever numexpr was given; a thread count
that is no number (numexpr's import raises on it) leaves the regions op by op."""
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from autodiff.engine.core import region_threads
from autodiff.engine.core.region_threads import HOST_SETTINGS, more_numexpr_workers, thread_count


class FakeNumexpr(SimpleNamespace):
    """What more_numexpr_workers reads and sets of numexpr: its count now, at import, its cap."""

    def get_num_threads(self):
        return self.now

    def set_num_threads(self, threads):
        self.calls.append(threads)
        self.now = threads


def fake(now, initial=None, cap=64):
    return FakeNumexpr(now=now, nthreads=now if initial is None else initial, MAX_THREADS=cap, calls=[])


@pytest.fixture(autouse=True)
def no_host_settings(monkeypatch):
    for name in HOST_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(region_threads, "KERNEL_CORES", [])


@pytest.mark.parametrize("cores", [2, 3, 4])
def test_a_small_machine_gets_two_workers_a_core_and_the_split_pool_one(cores):
    numexpr = fake(cores)
    more_numexpr_workers(numexpr)
    assert numexpr.calls == [2 * cores]
    assert thread_count() == cores          # the pool numpy's functions split over: one a core


@pytest.mark.parametrize("cores", [1, 5, 16])
def test_one_core_or_many_keep_numexprs_count(cores):
    numexpr = fake(cores)
    more_numexpr_workers(numexpr)
    assert numexpr.calls == [] and thread_count() == cores


@pytest.mark.parametrize("name", HOST_SETTINGS)
def test_a_count_the_environment_chose_is_kept(monkeypatch, name):
    monkeypatch.setenv(name, "2")
    numexpr = fake(2)
    more_numexpr_workers(numexpr)
    assert numexpr.calls == []


def test_an_empty_setting_is_no_choice(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "")          # numexpr reads "" as unset too
    numexpr = fake(2)
    more_numexpr_workers(numexpr)
    assert numexpr.calls == [4]


def test_a_count_the_host_set_before_the_first_kernel_is_kept():
    numexpr = fake(now=3, initial=2)                   # set_num_threads(3) by the host
    more_numexpr_workers(numexpr)
    assert numexpr.calls == [] and thread_count() == 3


def test_numexprs_cap_bounds_the_workers():
    numexpr = fake(4, cap=6)
    more_numexpr_workers(numexpr)
    assert numexpr.calls == [6]


def run_python(code, env_extra):
    """`code` in a fresh Python, with no thread count of the host's but `env_extra`'s."""
    env = {k: v for k, v in os.environ.items() if k not in HOST_SETTINGS}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def run_region(env_extra):
    code = ("import numpy as np, numexpr\nfrom autodiff.engine import api\n"
            "from autodiff.engine.core import region_threads\n"
            "before = numexpr.get_num_threads()\n"
            "api.grad('sum(exp(-x * x) * tanh(x) + sin(x) * x)', at={'x': np.linspace(-2, 2, 1 << 18)})\n"
            "print(before, numexpr.get_num_threads(), region_threads.WORKERS[1] if region_threads.WORKERS else 1)\n")
    out = run_python(code, env_extra)
    assert out.returncode == 0, out.stderr
    return [int(word) for word in out.stdout.split()]


def test_a_large_sweep_sets_numexprs_workers_once_it_loads_it():
    pytest.importorskip("numexpr")
    before, after, pool = run_region({})
    assert after == (2 * before if 1 < before <= region_threads.FEW_CORES else before)
    assert pool == before


def test_a_large_sweep_keeps_numexpr_num_threads():
    pytest.importorskip("numexpr")
    before, after, pool = run_region({"NUMEXPR_NUM_THREADS": "1"})
    assert before == after == pool == 1


@pytest.mark.parametrize("name", ["NUMEXPR_NUM_THREADS", "OMP_NUM_THREADS"])
def test_a_thread_count_that_is_no_number_runs_op_by_op(name):
    # numexpr's import raises ValueError on it; the regions run the table's rules instead
    code = ("import numpy as np\nfrom autodiff.engine import api\nfrom autodiff.engine.core import fused\n"
            "x = np.linspace(-2, 2, 1 << 17)\n"
            "r = api.grad('sum(exp(-x * x) * tanh(x) + sin(x) * x)', at={'x': x})\n"
            "expected = np.exp(-x * x) * (1 / np.cosh(x) ** 2 - 2 * x * np.tanh(x)) + np.cos(x) * x + np.sin(x)\n"
            "print(fused._numexpr is False, np.allclose(r.gradient['x'], expected, rtol=1e-12, atol=1e-15))\n")
    out = run_python(code, {name: "many"})
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout.split() == ["True", "True"]


def test_a_split_holds_no_array_once_it_returns(monkeypatch):
    # a worker sets its future's result before it drops its work item: the caller, woken, found
    # the arrays of the task's closure held still, and now and then gave no buffer back to the
    # pool (tests/test_buffer_pool.py's release test failed 2 runs in 3 after the threads test).
    # A pool whose workers keep their work item a while after the result shows it every time
    import threading
    import time
    from concurrent.futures import Future
    import numpy as np

    class SlowToForget:
        def submit(self, fn, *args):
            future = Future()

            def work():
                future.set_result(fn(*args))
                time.sleep(0.2)             # the work item (fn, args) still alive
            threading.Thread(target=work, args=()).start()
            return future
    monkeypatch.setattr(region_threads, "executor", lambda: (SlowToForget(), 2))
    a = np.ones(region_threads.MIN_SPLIT_ELEMENTS)
    before = sys.getrefcount(a)
    out = region_threads.apply_split(np.exp, a, np.empty_like(a))
    assert sys.getrefcount(a) == before
    assert np.array_equal(out, np.exp(np.ones(a.size)))
