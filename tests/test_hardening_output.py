"""Issue 16, output: control characters escaped in every renderer, JUnit well-formed for any
input, --junit checked before the run, written atomically, never over an input file."""
import errno
import os
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings, strategies as st

from autodiff.cli import main as climain
from autodiff.cli.output import printable
from autodiff.cli.render import common as render
from autodiff.cli.render.junit import junit_xml
from autodiff.engine.checks.runner import CaseResult

EVIL = "evil\x1b[2J\x00\x07\u202e[bold]x[/]"


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def evil_file(tmp_path, name="evil.toml"):
    path = tmp_path / name
    path.write_text('[[case]]\nname = "evil\\u001b[2J\\u0000\\u0007\\u202e[bold]x[/]"\nf = "x*x"\n'
                    'at = { x = 1 }\ngrad = { x = "3*x" }\n')
    return str(path)


def test_printable_escapes_controls_and_keeps_text():
    assert printable("plain ∂f/∂x\tand\nlines") == "plain ∂f/∂x\tand\nlines"
    assert printable(EVIL) == "evil\\x1b[2J\\x00\\x07\\u202e[bold]x[/]"


def test_case_names_cannot_drive_the_terminal(tmp_path, capsys):
    code, out, err = cli(capsys, "check", evil_file(tmp_path))
    assert code == 1
    assert "\x1b" not in out + err and "\x00" not in out + err and "\u202e" not in out
    assert "evil\\x1b[2J" in out and "[bold]x[/]" in out          # shown, not obeyed as markup either


def test_source_lines_in_errors_are_escaped(capsys):
    code, _, err = cli(capsys, "grad", "x + \x1b[2J y", "--at", "x=1")
    assert code == 2 and "\x1b" not in err and "\\x1b" in err


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1), st.text())
def test_junit_is_well_formed_for_any_text(name, message):
    r = CaseResult(file=f"f{name}.toml", name=name, index=0, line=1, status="failed", mode="full")
    r.verdict, r.message, r.warnings = "fail", message, [message]
    e = CaseResult(file="g.toml", name=name, index=1, line=2, status="error", mode="full")
    e.message = message
    root = ET.fromstring(junit_xml([r, e]))
    assert [c.get("name") for c in root.iter("testcase")] == [printable(name)] * 2


def test_junit_parses_back_after_a_real_run(tmp_path, capsys):
    report = tmp_path / "report.xml"
    code, _, _ = cli(capsys, "check", evil_file(tmp_path), "--junit", str(report))
    assert code == 1
    [case] = ET.parse(report).getroot().iter("testcase")
    assert case.get("name").startswith("evil\\x1b[2J\\x00")
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_junit_never_overwrites_an_input_check_file(tmp_path, capsys):
    path = evil_file(tmp_path)
    before = open(path).read()
    code, out, err = cli(capsys, "check", path, "--junit", path)
    assert code == 2 and "one of the check files" in err and out == ""
    assert open(path).read() == before


def test_an_unwritable_junit_path_fails_before_any_case_runs(tmp_path, capsys, monkeypatch):
    import autodiff.engine.checks.runner as runner
    monkeypatch.setattr(runner, "run_case", lambda *a, **k: pytest.fail("a case ran"))
    code, out, err = cli(capsys, "check", evil_file(tmp_path), "--junit", str(tmp_path / "no" / "r.xml"))
    assert code == 2 and "cannot write --junit" in err and out == ""
    code, _, err = cli(capsys, "check", evil_file(tmp_path), "--junit", str(tmp_path))
    assert code == 2 and "directory" in err


def test_a_full_disk_still_prints_the_results(tmp_path, capsys, monkeypatch):
    report = tmp_path / "report.xml"
    report.write_text("old report")
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", full)
    code, out, err = cli(capsys, "check", evil_file(tmp_path), "--junit", str(report))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert code == 2 and "No space left on device" in err
    assert "0 passed, 1 failed" in out
    assert report.read_text() == "old report"                 # atomic: the old report is intact
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def _autodiff(*args, **kw):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True, **kw)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_full_stdout_is_an_error_not_a_bug(extra):
    with open("/dev/full", "w") as full:
        import subprocess
        import sys
        done = subprocess.run([sys.executable, "-m", "autodiff", "grad", "x*x", "--at", "x=1", *extra],
                              stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2
    assert "cannot write the output: No space left on device" in done.stderr and "bug" not in done.stderr


def test_a_closed_stdout_is_an_error_not_a_bug():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", "import os, sys; os.close(1); sys.stdout = None\n"
                           "from autodiff.cli.main import main; main(['grad', 'x*x', '--at', 'x=1'])"],
                          stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2 and "standard output is closed" in done.stderr


def test_large_results_stream_to_json_and_print_a_preview(capsys, monkeypatch):
    import json

    from autodiff.cli import output
    monkeypatch.setattr(output, "STREAM_ELEMENTS", 10)
    listed = []
    real_to_python = __import__("autodiff.engine.lang.values", fromlist=["to_python"]).to_python
    monkeypatch.setattr("autodiff.engine.lang.values.to_python",
                        lambda v: listed.append(getattr(v, "size", 1)) or real_to_python(v))
    code, out, _ = cli(capsys, "run", "reshape(x * 2, 5, 6)", "--at", "x=arange(30.0)", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["value"] == [[2.0 * (6 * i + j) for j in range(6)] for i in range(5)]
    assert doc["inputs"]["x"] == list(range(30))
    assert all(size <= 10 for size in listed)          # no 30-element array became a Python list
    code, out, _ = cli(capsys, "run", "x * 2", "--at", "x=arange(30.0)")
    assert code == 0 and "..." in out


def test_streaming_keeps_json_numbers_exact(capsys, monkeypatch):
    import json

    from autodiff.cli import output
    monkeypatch.setattr(output, "STREAM_ELEMENTS", 3)
    code, out, _ = cli(capsys, "run", "x / 3", "--at", "x=[1,2,3,4,5,nan]", "--json")
    assert json.loads(out)["value"] == [1 / 3, 2 / 3, 1.0, 4 / 3, 5 / 3, "nan"]


def test_a_large_json_array_is_written_in_chunks_of_text(monkeypatch):
    """1e8 numbers took 286 s with one json.dumps per number: finite chunks are one join of float
    reprs (JSON's own number text), and the writer holds one chunk at a time, never a list of all."""
    import json
    import tracemalloc

    import numpy as np

    from autodiff.cli import output
    from autodiff.engine.core import backend
    backend.np()
    values = np.random.default_rng(16).standard_normal(1_000_000)
    values[[5, 700_000]] = [np.nan, -np.inf]
    calls = [0]
    real_dumps = json.dumps
    monkeypatch.setattr(output.json, "dumps", lambda *a, **k: calls.__setitem__(0, calls[0] + 1) or real_dumps(*a, **k))
    written, sizes = [], []
    tracemalloc.start()
    output._write_array(lambda text: sizes.append(len(text)) or written.append(text), values)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    monkeypatch.setattr(output.json, "dumps", real_dumps)
    assert calls[0] <= 2 * 65_536                      # only the two chunks holding a non-finite number
    assert peak < sum(sizes) * 1.1 + 10e6               # the text, and one chunk's list at a time (all: +32 MB)
    got = json.loads("".join(written))
    assert got[5] == "nan" and got[700_000] == "-inf"
    assert [x for i, x in enumerate(got) if i not in (5, 700_000)] == \
        [x for i, x in enumerate(values.tolist()) if i not in (5, 700_000)]


# ---- issue 27, item 14: an output never replaces a device node or a FIFO -------------------------

def _bounded(*args, timeout=90):
    """The CLI in its own process: a write that blocks on a FIFO fails the test, not hangs it."""
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "autodiff", *map(str, args)], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def _specials(folder):
    """A FIFO and, where this process may make one, a character device like /dev/null (1, 3):
    our own node in a temporary folder, never the machine's /dev/null."""
    import stat
    made = {"fifo": (folder / "pipe", stat.S_ISFIFO)}
    os.mkfifo(made["fifo"][0])
    try:
        os.mknod(folder / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        made["device"] = (folder / "null", stat.S_ISCHR)
    except (PermissionError, OSError):
        pass
    return made


def test_junit_refuses_a_device_or_a_fifo_and_leaves_it_alone(tmp_path, capsys):
    check = evil_file(tmp_path)
    for what, (path, is_kind) in _specials(tmp_path).items():
        code, out, err = cli(capsys, "check", check, "--junit", str(path))
        assert code == 2 and out == "", what
        assert f"cannot write --junit {path}: it is not a regular file" in err
        assert is_kind(os.lstat(path).st_mode), f"the {what} was replaced"
        link = tmp_path / f"link-{what}.xml"
        os.symlink(path, link)
        code, _, err = cli(capsys, "check", check, "--junit", str(link))
        assert code == 2 and "not a regular file" in err and is_kind(os.lstat(path).st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_out_and_plot_images_refuse_a_device_or_a_fifo(tmp_path):
    for what, (path, is_kind) in _specials(tmp_path).items():
        for args in (["grad", "x*x", "--at", "x=1", "--out"], ["plot", "x*x", "--range", "0:1", "-o"]):
            suffix = ".json" if "--out" in args else ".png"
            link = tmp_path / f"{what}{suffix}"
            if not link.exists():
                os.symlink(path, link)
            run = _bounded(*args, link)
            assert run.returncode == 2, (what, args, run.stderr)
            assert "it is not a regular file" in run.stderr and is_kind(os.lstat(path).st_mode)


# ---- issue 27, item 16: --out never overwrites an input, and is written atomically ---------------

def test_out_refuses_the_files_the_command_reads(tmp_path, capsys):
    import numpy as np
    np.savez(tmp_path / "in.npz", w=np.array([1.0, 2.0]))
    (tmp_path / "f.json").write_text('{"x": 3}')
    (tmp_path / "g.json").write_text('{"x": 3, "w": "@in.npz"}')
    os.symlink(tmp_path / "in.npz", tmp_path / "link.npz")
    before = {p: (tmp_path / p).read_bytes() for p in ("in.npz", "f.json", "g.json")}
    for args, out, named in (
            (["sum(w*w)", "--at", f"w=@{tmp_path / 'in.npz'}"], "in.npz", "(--at w=@"),
            (["sum(w*w)", "--at", f"w=@{tmp_path / 'in.npz'}"], "link.npz", "(--at w=@"),
            (["x*x", "--inputs", tmp_path / "f.json"], "f.json", "(--inputs "),
            (["x*sum(w)", "--inputs", tmp_path / "g.json"], "in.npz", "(a data file named in --inputs ")):
        code, stdout, err = cli(capsys, "grad", *map(str, args), "--out", str(tmp_path / out))
        assert code == 2 and stdout == "", (args, out, err)
        assert f"--out {tmp_path / out} is an input of this command {named}" in err and "overwritten" in err
    assert {p: (tmp_path / p).read_bytes() for p in before} == before


def test_a_failed_out_write_leaves_the_old_file(tmp_path, capsys, monkeypatch):
    import numpy as np
    good = tmp_path / "g.npz"
    np.savez(good, value=np.array(1.0))
    before = good.read_bytes()

    def full_disk(fh, **arrays):
        fh.write(b"PK\x03\x04 half an archive")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(np, "savez", full_disk)
    code, _, err = cli(capsys, "grad", "sum(x*x)", "--at", "x=[1,2]", "--out", str(good))
    assert good.read_bytes() == before             # not truncated, not half an archive
    assert code == 2 and f"cannot write --out {good}: No space left on device" in err
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_junit_refuses_the_programs_and_data_files_of_the_cases(tmp_path, capsys):
    (tmp_path / "f.py").write_text("def f(x):\n    return x * x\n")
    (tmp_path / "w.txt").write_text("1 2 3\n")
    (tmp_path / "s.txt").write_text("4 5\n")
    path = tmp_path / "c.toml"
    path.write_text('[[case]]\nname = "p"\nprogram = "f.py"\nat = { x = 2 }\n\n'
                    '[[case]]\nname = "d"\nf = "sum(w)"\nat = { w = "@w.txt" }\n\n'
                    '[[case]]\nname = "r"\nf = "sum(w)"\nrandom = { count = 2, w = { range = [0, 1], shape = "@s.txt" } }\n')
    before = {p: (tmp_path / p).read_text() for p in ("f.py", "w.txt", "s.txt")}
    for target, named in (("f.py", "the program of a case in"), ("w.txt", "a data file of a case in"),
                          ("s.txt", "a data file of a case in")):
        code, out, err = cli(capsys, "check", str(path), "-k", "p", "--junit", str(tmp_path / target))
        assert code == 2 and out == "", err
        assert f"--junit {tmp_path / target} is {named} {path}: it would be overwritten" in err
    assert {p: (tmp_path / p).read_text() for p in before} == before
