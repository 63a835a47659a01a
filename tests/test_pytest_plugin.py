"""The pytest plugin: *.grad.toml files become test items (one per case), only when asked for."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(__file__)
WRONG = os.path.join(HERE, "data", "wrong_gradient.grad.toml")


def pytest_in(path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=path, capture_output=True, text=True, env=env, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_plugin_is_opt_in_and_collects_one_item_per_case(tmp_path):
    shutil.copy(WRONG, tmp_path / "hand.grad.toml")
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    code, out = pytest_in(tmp_path)
    assert code == 0 and "1 passed" in out                 # not asked for: the file is ignored
    code, out = pytest_in(tmp_path, "--autodiff-check")
    assert code == 1 and "1 failed, 2 passed" in out
    assert "point 1 (x=3, y=4), y: fail: hand-derived 9 vs AD 10" in out
    assert "wrong: forgot the + 1 in df/dy" in out


def test_ini_option_enables_it_and_invalid_files_are_collection_errors(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nautodiff_check_files = true\n")
    (tmp_path / "ok.grad.toml").write_text('[[case]]\nname = "square"\nf = "x**2"\nat = { x = 3 }\n'
                                           'grad = { x = "2*x" }\n[[case]]\nname = "kink"\nf = "abs(x)"\n'
                                           'at = { x = 0 }\n')
    (tmp_path / "bad.grad.toml").write_text('[[case]]\nf = "x"\nat = { x = 1 }\ngrad_x = 2\n')
    code, out = pytest_in(tmp_path, "--continue-on-collection-errors")
    assert "2 passed" in out and "1 error" in out and code != 0 and "Traceback" not in out
    assert "grad_x" in out and "bad.grad.toml:4:1" in out


def test_checks_beside_src_in_a_work_tree_run_from_pytest_and_the_command_alike(tmp_path):
    # issue 29 item 6: checks/ names ../src/ (the work tree is the project); the command runs the folder
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "checks").mkdir()
    (tmp_path / "src" / "model.py").write_text("def loss(w):\n    return (w * w).sum()\n")
    (tmp_path / "checks" / "model.grad.toml").write_text(
        '[[case]]\nname = "right"\nprogram = "../src/model.py"\nfn = "loss"\nat = { w = [1, 2] }\n'
        'grad = { w = "2*w" }\n[[case]]\nname = "wrong"\nprogram = "../src/model.py"\nfn = "loss"\n'
        'at = { w = [1, 2] }\ngrad = { w = "w" }\n')
    code, out = pytest_in(tmp_path, "--autodiff-check", "checks")
    assert code == 1 and "1 failed, 1 passed" in out and "outside" not in out
    proc = subprocess.run([sys.executable, "-m", "autodiff", "check", "checks"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] == "1 passed, 1 failed"


def test_a_hand_function_of_the_program_from_pytest_names_the_missed_term(tmp_path):
    # issue 29 items 4 and 5: `hand = "loss_grad"` names the program's backprop; its failure, the term it misses
    (tmp_path / "model.py").write_text(
        "import numpy as np\n\ndef loss(w):\n    return np.sum(np.sin(w) * w)\n\n"
        "def loss_grad(w):\n    return np.cos(w) * w\n\ndef loss_grad_right(w):\n    return np.cos(w) * w + np.sin(w)\n")
    (tmp_path / "model.grad.toml").write_text(
        '[[case]]\nname = "right"\nprogram = "model.py"\nfn = "loss"\nhand = "loss_grad_right"\nat = { w = [2.0] }\n'
        '[[case]]\nname = "wrong"\nprogram = "model.py"\nfn = "loss"\nhand = "loss_grad"\nat = { w = [2.0] }\n')
    code, out = pytest_in(tmp_path, "--autodiff-check")
    assert code == 1 and "1 failed, 1 passed" in out
    assert "the claim equals the term through `np.sin(w)` at 4:19 (-0.832) and misses the term through `*` at " \
           "4:29 (0.909)" in " ".join(out.split())
