"""--device cpu|gpu, AUTODIFF_DEVICE, the API's device=, check files' device, and the strict CPU
stand-in for cupy (tests/strict_cupy.py) that proves the engine's array-module discipline on a
machine without a GPU: every command runs on it and gives the CPU's numbers."""
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from autodiff.engine import api
from autodiff.engine.core import backend
from autodiff.parser.errors import SourceError

from conftest import STANDIN, real_gpu_available
from test_cli_grad import run_cli

NO_GPU = not STANDIN and not real_gpu_available()
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="a GPU (or the stand-in) is there")


# ---- without a GPU: exit 2, saying what to install --------------------------------------------

@needs_no_gpu
@pytest.mark.parametrize("command", [["grad", "x*x", "--at", "x=1"], ["run", "x*x", "--at", "x=1"],
                                     ["jacobian", "x*x", "--at", "x=1"], ["hessian", "x*x", "--at", "x=1"],
                                     ["derivative", "x*x", "--at", "x=1"], ["graph", "x*x", "--at", "x=1"],
                                     ["plot", "x*x", "--range", "x=0:1", "--json"]])
def test_device_gpu_without_cupy_exits_2_with_what_to_install(command):
    r = run_cli(*command, "--device", "gpu")
    assert r.code == 2, r.err
    assert "no gpu" in r.err and "pip install 'autodiff[gpu]'" in r.err and "Traceback" not in r.err
    assert backend.device() == "cpu"


@needs_no_gpu
def test_autodiff_device_environment_variable_asks_for_the_gpu_and_the_flag_wins():
    r = run_cli("grad", "x*x", "--at", "x=3", env={"AUTODIFF_DEVICE": "gpu"})
    assert r.code == 2 and "pip install 'autodiff[gpu]'" in r.err
    r = run_cli("grad", "x*x", "--at", "x=3", "--device", "cpu", "--json", env={"AUTODIFF_DEVICE": "gpu"})
    assert r.code == 0 and json.loads(r.out)["device"] == "cpu"


def test_an_unknown_device_is_a_usage_error():
    r = run_cli("grad", "x*x", "--at", "x=3", "--device", "tpu")
    assert r.code == 2 and "--device" in r.err


def test_the_json_says_which_device_ran():
    r = run_cli("grad", "x*x", "--at", "x=3", "--json")
    assert r.code == 0 and json.loads(r.out)["device"] == backend.device()


@needs_no_gpu
def test_the_api_takes_device_and_says_what_to_install():
    with pytest.raises(SourceError) as info:
        api.grad("x*x", at={"x": 3}, device="gpu")
    assert "the GPU was asked for" in info.value.format() and "autodiff[gpu]" in info.value.hint
    with pytest.raises(SourceError):
        api.jacobian("x*x", at={"x": 3}, device="tpu")
    assert api.grad("x*x", at={"x": 3}, device="cpu").gradient == {"x": 6.0}


@needs_no_gpu
def test_a_check_file_asking_for_the_gpu_exits_2_and_device_cpu_overrides_it(tmp_path):
    path = tmp_path / "gpu.grad.toml"
    path.write_text('[defaults]\ndevice = "gpu"\n\n[[case]]\nname = "square"\nf = "x**2"\nat = { x = 3 }\n')
    r = run_cli("check", str(path))
    assert r.code == 2 and "pip install 'autodiff[gpu]'" in r.err
    r = run_cli("check", str(path), "--device", "cpu", "--json")
    assert r.code == 0 and json.loads(r.out)["summary"]["passed"] == 1


def test_a_check_file_device_must_be_cpu_or_gpu(tmp_path):
    path = tmp_path / "bad.grad.toml"
    path.write_text('[[case]]\nname = "square"\nf = "x**2"\nat = { x = 3 }\ndevice = "tpu"\n')
    r = run_cli("check", str(path))
    assert r.code == 2 and "device must be" in r.err and "bad.grad.toml:5" in r.err


# ---- the strict stand-in is strict --------------------------------------------------------------

def test_the_stand_in_refuses_implicit_conversion_and_mixing(standin_gpu):
    xp = standin_gpu
    a = xp.asarray(np.arange(3.0))
    with pytest.raises(TypeError):
        np.asarray(a)
    with pytest.raises(TypeError):
        a + np.ones(3)
    with pytest.raises(TypeError):
        np.ones(3) * a
    with pytest.raises(TypeError):
        xp.where(a > 0, a, np.zeros(3))
    assert xp.asnumpy(a * 2.0 + 1.0).tolist() == [1.0, 3.0, 5.0]
    assert isinstance(xp.sum(a), xp.ndarray) and isinstance(a[0], xp.ndarray)   # as cupy: 0-d arrays


# ---- every command on the stand-in gives the CPU's numbers --------------------------------------

COMMANDS = [
    ["grad", "x**2*y + y + 2", "--at", "x=3,y=4"],
    ["grad", "sum(sin(x)*x)", "--at", "x=[1,2,3]", "--mode", "forward"],
    ["grad", "sum(sin(x)*x)", "--at", "x=[1,2,3]", "--check"],
    ["grad", "sum(log(x))", "--at", "x=[-1,2,3]"],
    ["grad", "sum(sin(x)*x)", "--at", "x=[1,2,3]", "--dtype", "float32", "--check", "fast", "--seed", "3"],
    ["grad", "sum(maximum(x, 1.0) * A @ x)", "--at", "x=[1,2],A=[[1,2],[3,4]]", "--explain"],
    ["grad", "samples/programs/control.py", "--at", "a=0.37"],
    ["run", "samples/programs/loop_over_array.py", "--at", "x=[1,2,3]"],
    ["jacobian", "sin(x)*x", "--at", "x=[1,2,3]", "--check"],
    ["jacobian", "x[0] * x", "--at", "x=[1,2,3]", "--mode", "forward"],
    ["hessian", "sum(x**3) * y", "--at", "x=[1,2],y=2", "--check"],
    ["derivative", "sin(x)", "--at", "x=1", "--order", "3"],
    ["graph", "sum(sin(x)*x)", "--at", "x=[1,2,3]"],
    ["plot", "sum(sin(x)*y)", "--range", "x=-1:1", "--at", "y=[1,2]", "--points", "21"],
    ["check", "samples/checks/seeds.toml"],
]


def _without_timing(doc):
    if isinstance(doc, dict):
        return {k: _without_timing(v) for k, v in doc.items() if k not in ("device", "seconds", "explanation")}
    if isinstance(doc, list):
        return [_without_timing(v) for v in doc]
    return doc


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_every_command_on_the_stand_in_gives_the_cpus_numbers(command, standin_gpu):
    cpu = run_cli(*command, "--json", "--device", "cpu")
    gpu = run_cli(*command, "--json", "--device", "gpu")
    assert cpu.code == gpu.code == 0, gpu.err
    cpu_doc, gpu_doc = json.loads(cpu.out), json.loads(gpu.out)
    assert cpu_doc["device"] == "cpu" and gpu_doc["device"] == "gpu"
    assert _without_timing(gpu_doc) == _without_timing(cpu_doc)


def test_the_api_runs_on_the_device_asked_for_and_returns_host_results(standin_gpu):
    x = np.linspace(-1, 1, 5)
    before = backend.device()
    r = api.grad("sum(tanh(x) * x)", at={"x": x}, device="gpu")
    assert isinstance(r.gradient["x"], np.ndarray) and isinstance(r.value, float)
    np.testing.assert_allclose(r.gradient["x"], api.grad("sum(tanh(x) * x)", at={"x": x}).gradient["x"],
                               rtol=1e-15)
    assert backend.device() == before         # device= holds for that call only


def test_a_condition_synchronizes_once_per_decision(standin_gpu, tmp_path):
    program = tmp_path / "halve.py"
    program.write_text("def f(x):\n    while sum(x * x) > 1:\n        x = x / 2\n    return sum(x)\n")
    api.use_device("gpu")
    standin_gpu.SYNCS[0] = 0
    r = api.grad(str(program), at={"x": np.array([3.0, 4.0])})
    decisions = 4                                  # |x| = 5, 2.5, 1.25, 0.625: four tests of the condition
    results = 3                                    # the value, the gradient and the input come back once each
    assert standin_gpu.SYNCS[0] == decisions + results
    assert r.value == pytest.approx(0.875)


def test_the_benchmark_chain_synchronizes_only_to_bring_results_back(standin_gpu, tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpu_chain", Path(__file__).parent.parent / "benchmarks/gpu_chain.py")
    chain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chain)
    program = tmp_path / "chain.py"
    program.write_text(chain.CHAIN)
    x = np.linspace(-2.0, 2.0, 1000)
    cpu = api.grad(str(program), at={"x": x}, device="cpu")
    standin_gpu.SYNCS[0] = 0
    gpu = api.grad(str(program), at={"x": x}, device="gpu")
    # value, gradient and input come back once each; of the 20 ops only sqrt waits on the host, for
    # the one bool of its kink note (sqrt at 0); elementwise ops otherwise never synchronize
    assert standin_gpu.SYNCS[0] == 3 + 1
    np.testing.assert_array_equal(gpu.gradient["x"], cpu.gradient["x"])


# ---- the README's GPU section runs -------------------------------------------------------------

def _readme_gpu_section() -> str:
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    return text.split("## The GPU: `--device gpu`")[1].split("\n## ")[0]


def _readme_gpu_commands():
    block = _readme_gpu_section().split("```")[1]
    for line in block.splitlines():
        words = shlex.split(line.split("  #")[0])
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):          # VAR=value before the command
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        if words and words[0] == "autodiff":
            yield env, words[1:]


def test_readme_gpu_commands_run_on_the_stand_in_as_on_the_cpu(standin_gpu):
    commands = list(_readme_gpu_commands())
    assert len(commands) == 3
    for env, args in commands:
        gpu = run_cli(*args, env=env)
        cpu_args = [a for a in args if a not in ("--device", "gpu")]
        cpu = run_cli(*cpu_args, env={k: "cpu" for k in env})
        assert gpu.code == cpu.code == 0, (args, gpu.err)
        if "--json" in args:
            assert _without_timing(json.loads(gpu.out)) == _without_timing(json.loads(cpu.out))
        else:
            assert gpu.out == cpu.out


@needs_no_gpu
def test_readme_gpu_error_is_what_the_command_prints():
    """The README tells the no-GPU error in a sentence: exit 2, `error: no gpu`, the install hint."""
    section = " ".join(_readme_gpu_section().split())
    assert "usage error (exit 2, `error: no gpu`" in section and "`pip install 'autodiff[gpu]'`" in section
    r = run_cli("grad", "x*x", "--at", "x=1", "--device", "gpu")
    lines = r.err.strip().splitlines()
    assert r.code == 2 and lines[0] == "error: no gpu"
    assert lines[-1].startswith("hint: pip install 'autodiff[gpu]'")
