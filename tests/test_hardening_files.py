"""Issue 16, files: check-file programs confined to the check file's folder tree, files that are
not regular refused before reading, sizes bounded, and validation in linear time."""
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render
from autodiff.engine.checks.files import MAX_RANDOM_POINTS, load_file, parse_text
from autodiff.engine.checks.runner import run_case
from autodiff.parser.errors import SourceError
from autodiff.parser.files import project_root, read_text

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
    assert project_root(str(sub / "c.toml")) == (str(sub.resolve()), "folder")   # tmp_path is in no git tree
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


# ---- issue 29, item 6: the project a check file belongs to: its git work tree ----------------------

@pytest.fixture(params=["folder", "file"])
def project(tmp_path, request):
    """A work tree (a `.git` folder, or a `.git` file as a worktree has) with checks/ beside src/
    and data/, and a secret beside the work tree."""
    (tmp_path / ".env").write_text(SECRET + "\n")
    root = tmp_path / "proj"
    (root / "checks").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "data").mkdir()
    if request.param == "folder":
        (root / ".git").mkdir()
    else:
        (root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/proj\n")
    (root / "src" / "model.py").write_text("def f(x):\n    return x * x\n")
    (root / "data" / "w.txt").write_text("1 2 3\n")
    return root


def test_a_check_file_names_programs_and_data_anywhere_in_its_work_tree(project, capsys):
    path = project / "checks" / "c.toml"
    path.write_text('[[case]]\nprogram = "../src/model.py"\nat = { x = 3 }\ngrad = { x = "2*x" }\n'
                    '[[case]]\nf = "sum(w**2)"\nat = { w = "@../data/w.txt" }\ngrad = { w = "2*w" }\n')
    assert project_root(str(path)) == (str(project.resolve()), "git work tree")
    code, out, err = cli(capsys, "check", str(path))
    assert code == 0 and err == "", out + err
    assert "2 passed, 0 failed" in out


@pytest.mark.parametrize("ref", ["../../.env", "/etc/hostname", "link.py"])
def test_outside_the_work_tree_programs_and_data_are_refused(project, capsys, ref):
    os.symlink(project.parent / ".env", project / "checks" / "link.py")
    path = project / "checks" / "c.toml"
    for text, what in ((f'[[case]]\nprogram = "{ref}"\nat = {{ x = 1 }}\n', "program"),
                       (f'[[case]]\nf = "sum(w)"\nat = {{ w = "@{ref}" }}\n', "data file")):
        path.write_text(text)
        code, out, err = cli(capsys, "check", str(path))
        assert code == 2, out + err
        assert f"the {what} {ref} is outside the check file's git work tree" in err
        assert f"is not under {project.resolve()})" in err
        assert "ghp_secret" not in out + err


def test_a_symlink_moved_out_of_the_work_tree_after_validation_is_refused_when_read(project):
    path = project / "checks" / "c.toml"
    path.write_text('[[case]]\nprogram = "../src/model.py"\nat = { x = 1 }\n')
    [case] = load_file(str(path))
    os.remove(project / "src" / "model.py")
    os.symlink(project.parent / ".env", project / "src" / "model.py")
    result = run_case(case)
    assert result.status == "error" and "outside the check file's git work tree" in result.message
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
        # a folder is `autodiff check DIR`: every *.grad.toml below it (issue 29 item 6)
        assert code == 2 and (kind if kind != "a directory" else "holds no *.grad.toml file") in err
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


# ---- issue 27, item 15: data reads are bounded --------------------------------------------------

def bounded_run(*args, stdin=subprocess.DEVNULL, timeout=90):
    """The CLI in a process of at most 2 GB of address space and `timeout` seconds: a read that
    never ends fails the test (MemoryError, exit 70, or TimeoutExpired) instead of hanging it."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    return subprocess.run([sys.executable, "-m", "autodiff", *map(str, args)], stdin=stdin, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit)


@pytest.fixture
def specials(tmp_path):
    """Data-file names that are not regular files: links to /dev/zero, a FIFO, a directory."""
    for name in ("z.txt", "z.csv", "z.json", "z.npy"):
        os.symlink("/dev/zero", tmp_path / name)
    os.mkfifo(tmp_path / "pipe.csv")
    (tmp_path / "folder.npy").mkdir()
    return tmp_path


@pytest.mark.parametrize("name, kind", [("z.txt", "a character device"), ("z.csv", "a character device"),
                                        ("z.json", "a character device"), ("z.npy", "a character device"),
                                        ("pipe.csv", "a named pipe"), ("folder.npy", "a directory")])
def test_data_files_that_are_not_regular_are_refused_at_once(specials, name, kind):
    run = bounded_run("run", "sum(w)", "--at", f"w=@{specials / name}")
    assert run.returncode == 2, run.stderr
    assert f"the data file {specials / name} is" in run.stderr and kind in run.stderr
    if kind != "a directory":
        assert "not a regular file" in run.stderr and "@- and --stdin-format" in run.stderr


def test_check_file_data_that_is_not_regular_is_an_invalid_check_file(specials):
    path = specials / "c.toml"
    path.write_text('[[case]]\nf = "sum(w)"\nat = { w = "@pipe.csv" }\n')
    run = bounded_run("check", path)
    assert run.returncode == 2 and "c.toml:3:" in run.stderr and "not a regular file (a named pipe)" in run.stderr


def test_an_npy_header_with_a_negative_dimension_is_refused(tmp_path):
    with open(tmp_path / "neg.npy", "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (-1,)})
        fh.write(b"\0" * 24)
    run = bounded_run("run", "sum(w)", "--at", f"w=@{tmp_path / 'neg.npy'}")
    assert run.returncode == 2, run.stderr
    assert "neg.npy: its header gives the shape (-1,), with a negative dimension" in run.stderr


@pytest.mark.parametrize("fmt", ["json", "csv", "txt", "npz"])
def test_standard_input_stops_at_the_bytes_the_limit_needs(fmt):
    with open("/dev/zero", "rb") as zero:             # endless: only a bounded read ends
        run = bounded_run("run", "sum(w)", "--at", "w=@-", "--stdin-format", fmt, "--max-elements", "10", stdin=zero)
    assert run.returncode == 2, run.stderr
    assert "error: too large" in run.stderr
    assert "standard input: more than" in run.stderr and "bytes arrived, more than data of at most 10 elements" \
        in run.stderr


def test_standard_input_json_stops_at_the_element_limit():
    over = ("[" + ",".join(["1"] * 11) + "]").encode()
    done = subprocess.run([sys.executable, "-m", "autodiff", "run", "sum(w)", "--at", "w=@-", "--max-elements", "10"],
                          input=over, capture_output=True, timeout=90)
    assert done.returncode == 2
    assert b"standard input: the data has more elements than the limit of 10" in done.stderr
    done = subprocess.run([sys.executable, "-m", "autodiff", "run", "sum(w)", "--at", "w=@-", "--max-elements", "10",
                           "--json"], input=over[:-3] + b"]", capture_output=True, timeout=90)
    assert done.returncode == 0 and json.loads(done.stdout)["value"] == 10.0


def test_a_text_data_file_over_the_bytes_its_limit_needs_is_refused_unread(tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:
        fh.truncate(50_000_000)                       # sparse: nothing is written, and nothing may be read
    run = bounded_run("run", "sum(w)", "--at", f"w=@{big}", "--max-elements", "10")
    assert run.returncode == 2, run.stderr
    assert f"{big}: is 50,000,000 bytes, more than data of at most 10 elements can take (1,049,216 bytes)" \
        in run.stderr


def test_a_json_integer_of_too_many_digits_is_a_data_error(tmp_path):
    (tmp_path / "w.json").write_text("[" + "1" * 5000 + "]")
    run = bounded_run("run", "sum(w)", "--at", f"w=@{tmp_path / 'w.json'}")
    assert run.returncode == 2, run.stderr
    assert "w.json: holds a whole number of more than 4,300 digits" in run.stderr


# ---- issue 27, item 17: check files read data only in their folder, and never echo it -----------

@pytest.mark.parametrize("ref", ["../.env.txt", "/etc/hostname.txt", "environ.txt", "inside/../../.env.txt"])
def test_check_file_data_outside_the_folder_tree_is_refused(tree, capsys, ref):
    (tree.parent / ".env.txt").write_text(SECRET + "\n1\n" + SECRET + "\n")
    os.symlink("/proc/self/environ", tree / "environ.txt")
    path = tree / "c.toml"
    path.write_text(f'[[case]]\nf = "sum(w)"\nat = {{ w = "@{ref}" }}\n')
    report = tree / "report.xml"
    code, out, err = cli(capsys, "check", str(path), "--junit", str(report))
    assert code == 2 and "c.toml:3:" in err
    assert f"the data file {ref} is outside the check file's folder" in err
    assert "ghp_secret" not in out + err and not report.exists()


def test_data_named_inside_a_points_file_is_confined_too(tree, capsys):
    (tree.parent / ".env.txt").write_text("1\n" + SECRET + "\n")
    (tree / "points.json").write_text('{"w": "@../.env.txt"}')
    path = tree / "c.toml"
    path.write_text('[[case]]\nf = "sum(w)"\npoints = "@points.json"\n')
    report = tree / "report.xml"
    code, out, err = cli(capsys, "check", str(path), "--junit", str(report))
    assert code == 1 and "is outside the check file's folder" in out
    assert "ghp_secret" not in out + err + report.read_text()


def test_a_data_symlink_moved_after_validation_is_refused_when_read(tree):
    (tree / "inside" / "w.txt").write_text("1 2 3\n")
    path = tree / "c.toml"
    path.write_text('[[case]]\nf = "sum(w)"\nat = { w = "@inside/w.txt" }\n')
    [case] = load_file(str(path))
    (tree.parent / ".env.txt").write_text("1\n" + SECRET + "\n")
    os.remove(tree / "inside" / "w.txt")
    os.symlink(tree.parent / ".env.txt", tree / "inside" / "w.txt")
    result = run_case(case)
    assert result.status == "error" and "outside the check file's folder" in result.message
    assert "ghp_secret" not in result.message


@pytest.mark.parametrize("name, text, fault", [
    ("s.csv", f"1,2\n3,{SECRET}\n", "line 2, column 2 is not a number"),
    ("s.txt", f"1 2\n{SECRET} 3\n", "line 2, column 1 is not a number"),
    ("s.json", f'[1, "{SECRET}"]', "entry [1] is text, not a number"),
    ("s.json", f'{{"{SECRET}": 1}}', "the value is an object, not a number")])
def test_a_data_error_never_quotes_the_data(tmp_path, capsys, name, text, fault):
    (tmp_path / name).write_text(text)
    code, out, err = cli(capsys, "run", "sum(w)", "--at", f"w=@{tmp_path / name}")
    assert code == 2 and f"{tmp_path / name}: {fault}" in err
    assert "ghp_secret" not in out + err
