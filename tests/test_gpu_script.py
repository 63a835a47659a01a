"""benchmarks/gpu.sh and benchmarks/gpu_chain.py, checked without a GPU: the script's dry run says
what it would install (with --no-deps) and run, and the benchmark's dry run times the chain on the
CPU, and on the strict stand-in where the GPU would be (its gradient equal to the CPU's)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_gpu_script_dry_run_installs_with_no_deps_then_tests_then_benchmarks(tmp_path):
    (tmp_path / "lark-1.2.2-py3-none-any.whl").write_text("")
    env = {**os.environ, "PYTHON": sys.executable, "WHEELS": str(tmp_path)}
    p = subprocess.run(["bash", str(ROOT / "benchmarks/gpu.sh"), "--dry-run"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    installs = [line for line in lines if line.startswith("+ ") and " pip install " in line]
    assert all("--no-deps" in line for line in installs) and len(installs) == 2
    assert "lark-1.2.2-py3-none-any.whl" in installs[0] and installs[1].endswith(" .")
    assert any(line.startswith("+ ") and "-m gpu" in line and "tests/test_gpu.py" in line for line in lines)
    assert lines.index("== the GPU tests") < lines.index("== the benchmark")
    assert any("ours, numpy (CPU)" in line for line in lines)


def test_gpu_script_refuses_unknown_arguments():
    p = subprocess.run(["bash", str(ROOT / "benchmarks/gpu.sh"), "--fast"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and "usage" in p.stderr


def test_benchmark_dry_run_on_the_stand_in_agrees_with_the_cpu():
    env = {**os.environ, "AUTODIFF_BENCH_STANDIN": "1"}
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks/gpu_chain.py"), "--dry-run"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "ours-cpu at 1e+03: " in p.stdout and "ours-gpu at 1e+03: " in p.stdout
    assert "skipped (" not in p.stdout.split("ours-gpu at 1e+03: ")[1].splitlines()[0]
    assert "1e+03 ours-gpu: first entries within 0.0e+00 (relative) of ours on the CPU" in p.stdout
