"""Issue 16, files: check-file programs confined to the check file's folder tree, files that are
not regular refused before reading, sizes bounded, and validation in linear time."""
import os
import time

import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.files import MAX_RANDOM_POINTS, load_file, parse_text
from autodiff.engine.checks.runner import run_case
from autodiff.parser.errors import SourceError
from autodiff.parser.files import read_text

SECRET = "GITHUB_TOKEN=ghp_secret_value_0123456789"


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def case_file(folder, program, extra=""):
    path = folder / "c.toml"
    path.write_text(f'[[case]]\nprogram = "{program}"\nat = {{ x = 1 }}\nof = "GITHUB_TOKEN"\n{extra}')
    return str(path)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / ".env").write_text(SECRET + "\n")
    sub = tmp_path / "checks"
    sub.mkdir()
    (sub / "inside").mkdir()
    (sub / "inside" / "ok.py").write_text("def f(x):\n    return x * x\n")
    os.symlink(tmp_path / ".env", sub / "link.py")
    return sub


@pytest.mark.parametrize("program", ["/etc/passwd", "../.env", "../../x/.env", "link.py", "inside/../../.env"])
def test_programs_outside_the_folder_tree_are_refused(tree, capsys, program):
    code, out, err = cli(capsys, "check", case_file(tree, program))
    assert code == 2
    assert "outside the check file's folder" in err and program in err
    assert "ghp_secret" not in out + err


def test_programs_inside_the_folder_tree_run(tree, capsys):
    path = tree / "c.toml"
    path.write_text('[[case]]\nprogram = "inside/ok.py"\nat = { x = 3 }\ngrad = { x = "2*x" }\n')
    code, out, _ = cli(capsys, "check", str(path))
    assert code == 0, out


def test_a_symlink_moved_after_validation_is_refused_when_read(tree):
    (tree / "inside" / "later.py").write_text("def f(x):\n    return x\n")
    [case] = load_file(case_file(tree, "inside/later.py"))
    os.remove(tree / "inside" / "later.py")
    os.symlink(tree.parent / ".env", tree / "inside" / "later.py")
    result = run_case(case)
    assert result.status == "error" and "outside the check file's folder" in result.message
    assert "ghp_secret" not in result.message


def test_not_regular_files_are_refused_before_reading(tmp_path, capsys):
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    (tmp_path / "folder.py").mkdir()
    for path, kind in ((str(fifo), "not a regular file"), (str(tmp_path / "folder.py"), "a directory"),
                       ("/dev/zero", "not a regular file")):
        with pytest.raises(SourceError, match=kind):
            read_text(path, "program")
        code, _, err = cli(capsys, "check", path)
        assert code == 2 and kind in err
    code, out, _ = cli(capsys, "check", case_file(tmp_path, "pipe.py"))
    assert code == 1 and "not a regular file" in out


def test_a_program_over_the_size_limit_is_refused_unread(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as fh:
        fh.truncate(50_000_000)                       # sparse: nothing is written or read
    with pytest.raises(SourceError, match="over the limit"):
        read_text(str(big), "program")


def test_random_count_and_shape_are_bounded():
    with pytest.raises(SourceError, match=f"from 1 to {MAX_RANDOM_POINTS:,}"):
        parse_text('[[case]]\nf = "x"\nrandom = { count = 100000000, x = [0, 1] }\n')
    with pytest.raises(SourceError, match="from 1 to"):
        parse_text('[[case]]\nf = "x"\nrandom = { count = 1e8, x = [0, 1] }\n')
    with pytest.raises(SourceError, match="10,000,000,000 elements"):
        parse_text('[[case]]\nf = "sum(x)"\nrandom = { count = 1, x = { range = [0, 1], shape = [100000, 100000] } }\n')


def test_deeply_nested_values_are_errors():
    with pytest.raises(SourceError, match="nested too deeply"):
        parse_text('[[case]]\nf = "x"\nat = { x = ' + "[" * 100_000 + "]" * 100_000 + " }\n")
    with pytest.raises(SourceError, match="100 dimensions"):
        parse_text('[[case]]\nf = "x"\nat = { x = ' + "[" * 100 + "1" + "]" * 100 + " }\n")


def _cases(n):
    return "".join(f'[[case]]\nname = "c{i}"\nf = "x*x"\nat = {{ x = {i} }}\n' for i in range(n))


def test_validation_is_linear_in_the_number_of_cases():
    small, large = _cases(2_000), _cases(20_000)
    start = time.perf_counter()
    assert len(parse_text(small)) == 2_000
    t_small = time.perf_counter() - start
    start = time.perf_counter()
    assert len(parse_text(large)) == 20_000
    t_large = time.perf_counter() - start
    assert t_large < 25 * t_small + 0.5              # quadratic would be about 100 times
