#!/usr/bin/env bash
# The real-GPU check of issue 12, for a machine with an NVIDIA GPU, cupy and Python 3.12 but no lark:
#
#   benchmarks/gpu.sh [--dry-run]        (PYTHON=python3.12 to choose the interpreter,
#                                          WHEELS=DIR where the wheels lie; default: beside the checkout)
#
# 1. installs the wheels placed beside the checkout (lark-*.whl; pytest's and setuptools' too where the
#    machine lacks them) and the project, all with pip install --no-deps: nothing comes from the network;
# 2. runs the GPU-marked tests (tests/test_gpu.py: the seed examples, the rules table, a program with
#    control flow, a Hessian, a check file, each against the CPU's result);
# 3. benchmarks the 20-op elementwise chain's gradient at 1e6, 1e7 and 1e8 elements on numpy, cupy and
#    PyTorch-on-GPU where importable, medians side by side (benchmarks/gpu_chain.py); on the GPU our sweep
#    runs the fused path: each elementwise VJP one cupy ElementwiseKernel generated from its rule.
# --dry-run prints what it would install and run, says whether cupy and a CUDA device are there, and runs
# the benchmark's own dry run (1e3 elements): the script's logic, checked on any machine.
set -euo pipefail
cd "$(dirname "$0")/.."
dry=0
case "${1:-}" in
  --dry-run) dry=1 ;;
  "") ;;
  *) echo "usage: benchmarks/gpu.sh [--dry-run]" >&2; exit 2 ;;
esac
python=${PYTHON:-python3}
wheels_dir=${WHEELS:-..}
step() { echo "+ $*"; if [ "$dry" = 0 ]; then "$@"; fi; }

echo "== $($python --version 2>&1) at $(command -v "$python")"
$python - 2>/dev/null <<'PY' || echo "cupy or a CUDA device is missing: the GPU tests will be skipped, the GPU rows too"
import cupy
print(f"cupy {cupy.__version__}, {cupy.cuda.runtime.getDeviceCount()} CUDA device(s)")
PY

echo "== installing (pip install --no-deps, nothing from the network)"
shopt -s nullglob
wheels=("$wheels_dir"/*.whl)
if ! $python -c "import lark" 2>/dev/null; then
  lark=("$wheels_dir"/lark-*.whl)
  if [ ${#lark[@]} -eq 0 ]; then
    echo "lark is not installed and no lark-*.whl lies in $wheels_dir: put the wheel there (or set WHEELS)" >&2
    [ "$dry" = 1 ] || exit 2
  fi
fi
pip_install() { step "$python" -m pip install --no-deps --no-build-isolation --quiet "$@"; }
if [ ${#wheels[@]} -gt 0 ]; then pip_install "${wheels[@]}"; fi
if ! pip_install .; then
  # no setuptools to build with: the checkout itself, importable as `autodiff` through a link
  link_dir="$(mktemp -d)"
  ln -s "$PWD" "$link_dir/autodiff"
  export PYTHONPATH="$link_dir${PYTHONPATH:+:$PYTHONPATH}"
  echo "pip could not build the project: using the checkout through PYTHONPATH=$link_dir"
fi

echo "== the GPU tests"
if $python -c "import pytest" 2>/dev/null; then
  step "$python" -m pytest -q -p no:cacheprovider -m gpu -rs tests/test_gpu.py
else
  echo "pytest is not installed: put its wheels (pytest, pluggy, iniconfig, packaging) in $wheels_dir" >&2
  [ "$dry" = 1 ] || exit 2
fi

echo "== the benchmark"
if [ "$dry" = 1 ]; then
  "$python" benchmarks/gpu_chain.py --dry-run
else
  "$python" benchmarks/gpu_chain.py
fi
