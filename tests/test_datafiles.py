"""Data in and out (issue 10): inputs from .npy/.npz/.csv/.tsv/.txt/.json files, standard input and
--inputs files, results to --out .npz/.json, check files that name data files, every data-file
error (exit 2, the file and the fault named), the nan/inf warning, and big arrays summarized."""
import inspect
import json
import os
import pathlib
import sys
import threading

import numpy as np
import pytest
from click.testing import CliRunner

from autodiff.cli.main import main

ROOT = pathlib.Path(__file__).resolve().parent.parent


def cli(*args, stdin=None):
    """(exit code, stdout, stderr) of the real entry point in click's isolation."""
    kw = {"mix_stderr": False} if "mix_stderr" in inspect.signature(CliRunner).parameters else {}
    runner = CliRunner(**kw)
    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    try:
        with runner.isolation(input=stdin) as streams:
            try:
                main([str(a) for a in args])
                code = 0
            except SystemExit as exit_:
                code = exit_.code
            out, err = streams[0].getvalue(), streams[1].getvalue()
    finally:
        sys.setrecursionlimit(limit)
        threading.stack_size(stack)
    return code, out.decode(), err.decode()


def grad_json(*args, stdin=None) -> dict:
    code, out, err = cli("grad", *args, "--json", stdin=stdin)
    assert code == 0, err
    return json.loads(out)


def bad(*args, stdin=None, kind="bad file") -> str:
    """The error text of a command that must exit 2 with a located message and no traceback."""
    code, out, err = cli(*args, stdin=stdin)
    assert code == 2, (out, err)
    assert err.startswith(f"error: {kind}"), err
    assert "Traceback" not in err
    return err


W = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.5]])


# ---- each format round-trips -----------------------------------------------------------------

def write_all_formats(folder: pathlib.Path) -> dict:
    np.save(folder / "w.npy", W)
    np.savez(folder / "w.npz", w=W, other=np.zeros(2))
    np.savetxt(folder / "w.csv", W, delimiter=",", header="a,b,c", comments="")
    np.savetxt(folder / "w.tsv", W, delimiter="\t")
    np.savetxt(folder / "w.txt", W)
    (folder / "w.json").write_text(json.dumps(W.tolist()))
    return {"npy": "w.npy", "npz": "w.npz:w", "csv": "w.csv", "tsv": "w.tsv", "txt": "w.txt", "json": "w.json"}


@pytest.mark.parametrize("fmt", ["npy", "npz", "csv", "tsv", "txt", "json"])
def test_each_format_round_trips(tmp_path, fmt):
    ref = write_all_formats(tmp_path)[fmt]
    doc = grad_json("sum(w*w*w)", "--at", f"w=@{tmp_path / ref}")
    assert np.allclose(doc["gradient"]["w"], 3 * W * W, rtol=0, atol=1e-12)
    assert doc["inputs"]["w"] == W.tolist()


@pytest.mark.parametrize("fmt", ["json", "csv", "tsv", "txt", "npy", "npz"])
def test_standard_input_in_each_format(tmp_path, fmt):
    ref = write_all_formats(tmp_path)[fmt]
    data = (tmp_path / ref.split(":")[0]).read_bytes()
    ref = "w=@-:w" if fmt == "npz" else "w=@-"
    doc = grad_json("sum(w*w)", "--at", ref, "--stdin-format", fmt, stdin=data)
    assert doc["gradient"]["w"] == (2 * W).tolist()


def test_one_row_or_one_column_is_a_vector_and_one_cell_a_number(tmp_path):
    (tmp_path / "row.csv").write_text("1,2,3\n")
    (tmp_path / "col.csv").write_text("y\n1\n2\n3\n")
    (tmp_path / "one.txt").write_text("# a comment\n2.5\n")
    for name in ("row.csv", "col.csv"):
        assert grad_json("sum(w*w)", "--at", f"w=@{tmp_path / name}")["gradient"]["w"] == [2.0, 4.0, 6.0]
    assert grad_json("x*x", "--at", f"x=@{tmp_path / 'one.txt'}")["gradient"]["x"] == 5.0


def test_integers_stay_integers_and_dtype_follows_the_option(tmp_path):
    # issue 29 item 2: an .npy of ints is integer data (labels, indices): a constant, no derivative
    np.save(tmp_path / "i.npy", np.arange(3))
    code, out, err = cli("run", "w * w", "--at", f"w=@{tmp_path / 'i.npy'}", "--json")
    assert code == 0 and json.loads(out)["value"] == [0, 1, 4]
    code, out, err = cli("grad", "sum(w*w)", "--at", f"w=@{tmp_path / 'i.npy'}")
    assert code == 2 and "every input is integer data (w)" in err and "astype(float)" in err
    doc = grad_json("sum(x*w)", "--at", f"w=@{tmp_path / 'i.npy'},x=[1,2,3]")
    assert doc["gradient"] == {"x": [0.0, 1.0, 2.0]} and doc["integers"] == ["w"]
    np.save(tmp_path / "f.npy", np.array([0.1, 0.2]))
    doc = grad_json("sum(w*w)", "--at", f"w=@{tmp_path / 'f.npy'}", "--dtype", "float32")
    assert doc["inputs"]["w"] == [0.1, 0.2]          # float32's shortest digits
    assert doc["gradient"]["w"] == [0.2, 0.4]


def test_json_reads_the_non_finite_words_that_json_output_writes(tmp_path):
    (tmp_path / "v.json").write_text('[1, "inf", "nan"]')
    code, out, err = cli("run", "w", "--at", f"w=@{tmp_path / 'v.json'}", "--json")
    assert code == 0 and json.loads(out)["value"] == [1.0, "inf", "nan"]


def test_every_command_that_takes_at_reads_files(tmp_path):
    np.save(tmp_path / "w.npy", np.array([1.0, 2.0]))
    np.save(tmp_path / "a.npy", np.array(2.0))
    w, a = f"w=@{tmp_path / 'w.npy'}", f"a=@{tmp_path / 'a.npy'}"
    for args in (["run", "sum(w)", "--at", w], ["jacobian", "w*w", "--at", w], ["hessian", "sum(w*w)", "--at", w],
                 ["derivative", "x**3", "--at", f"x=@{tmp_path / 'a.npy'}"], ["graph", "sum(w*w)", "--at", w],
                 ["plot", "a*sin(x)", "--at", a, "--range", "0:1", "--points", "5"]):
        code, out, err = cli(*args, "--json")
        assert code == 0, (args, err)
    assert json.loads(cli("derivative", "x**3", "--at", f"x=@{tmp_path / 'a.npy'}", "--json")[1])["derivatives"] == [12.0]


# ---- --inputs ----------------------------------------------------------------------------------

def test_inputs_from_npz_json_and_toml_with_at_overriding(tmp_path):
    np.savez(tmp_path / "in.npz", w=np.array([1.0, 2.0]), a=np.array(3.0))
    (tmp_path / "in.json").write_text('{"w": [1, 2], "a": 3}')
    np.save(tmp_path / "w.npy", np.array([1.0, 2.0]))
    (tmp_path / "in.toml").write_text('a = 3\nw = "@w.npy"\n')        # relative to the inputs file
    for name in ("in.npz", "in.json", "in.toml"):
        doc = grad_json("a*sum(w*w)", "--inputs", tmp_path / name)
        assert doc["gradient"] == {"a": 5.0, "w": [6.0, 12.0]}, name
    doc = grad_json("a*sum(w*w)", "--inputs", tmp_path / "in.json", "--at", "a=10")
    assert doc["gradient"]["w"] == [20.0, 40.0]


def test_inputs_file_errors(tmp_path):
    (tmp_path / "in.json").write_text("[1, 2]")
    assert "must hold an object of input names" in bad("grad", "x", "--inputs", tmp_path / "in.json")
    (tmp_path / "in.yaml").write_text("x: 1")
    assert "unknown extension .yaml" in bad("grad", "x", "--inputs", tmp_path / "in.yaml")


# ---- --out -------------------------------------------------------------------------------------

def test_out_npz_names_every_entry_at_full_precision(tmp_path):
    np.save(tmp_path / "w.npy", np.array([0.1, 1 / 3]))
    w = f"w=@{tmp_path / 'w.npy'}"
    cases = {
        "grad": (["grad", "x*sum(w*w)", "--at", f"{w},x=0.7"], {"value", "grad.w", "grad.x"}),
        "run": (["run", "sum(w)", "--at", w], {"value"}),
        "jacobian": (["jacobian", "w*x", "--at", f"{w},x=2"], {"value", "jacobian.w", "jacobian.x"}),
        "hessian": (["hessian", "x*sum(w*w)", "--at", f"{w},x=2"],
                    {"value", "grad.w", "grad.x", "hessian.w.w", "hessian.w.x", "hessian.x.w", "hessian.x.x"}),
        "derivative": (["derivative", "sin(x)", "--at", "x=0.5", "-n", "3"], {"value", "derivatives"}),
    }
    for name, (args, keys) in cases.items():
        out = tmp_path / f"{name}.npz"
        code, _, err = cli(*args, "--out", out)
        assert code == 0, err
        assert f"wrote {out}" in err
        assert set(np.load(out).files) == keys, name
    grad = np.load(tmp_path / "grad.npz")
    assert grad["grad.w"].tolist() == (2 * 0.7 * np.array([0.1, 1 / 3])).tolist()      # every bit
    assert np.load(tmp_path / "derivative.npz")["derivatives"].tolist() == [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)]


@pytest.mark.parametrize("command", ["grad", "run", "jacobian", "hessian", "derivative"])
def test_out_json_is_the_json_document(tmp_path, command):
    expr = "x*x" if command != "jacobian" else "[x, x*x]"
    code, printed, _ = cli(command, expr, "--at", "x=3", "--json")
    code, _, err = cli(command, expr, "--at", "x=3", "--out", tmp_path / "r.json")
    assert code == 0, err
    written, shown = json.loads((tmp_path / "r.json").read_text()), json.loads(printed)
    for doc in (written, shown):
        doc.get("cost", {}).pop("seconds", None)
        doc.get("cost", {}).pop("explanation", None)
    assert written == shown


def test_out_json_carries_the_check(tmp_path):
    code, _, err = cli("grad", "x*x", "--at", "x=3", "--check", "--out", tmp_path / "r.json")
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["check"]["passed"] is True


def test_out_path_is_checked_before_any_work(tmp_path):
    assert "unknown extension .csv" in bad("grad", "x", "--at", "x=1", "--out", tmp_path / "g.csv")
    assert "no such folder" in bad("grad", "x", "--at", "x=1", "--out", tmp_path / "no" / "g.npz")
    assert "is a directory" in bad("grad", "x", "--at", "x=1", "--out", tmp_path, kind="bad file")


# ---- errors: exit 2, the file and the fault named ------------------------------------------------

def test_missing_file_directory_and_unknown_extension(tmp_path):
    assert f"cannot read the data file {tmp_path / 'no.npy'}: No such file" in bad("grad", "sum(w)", "--at",
                                                                                 f"w=@{tmp_path / 'no.npy'}")
    assert f"the data file {tmp_path} is a directory" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path}")
    (tmp_path / "w.xlsx").write_text("1")
    err = bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'w.xlsx'}")
    assert "w.xlsx: unknown extension .xlsx" in err and ".npy, .npz, .csv" in err


def test_unreadable_file(tmp_path, monkeypatch):
    (tmp_path / "w.csv").write_text("1,2\n")
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).endswith("w.csv"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", refuse)
    assert f"cannot read the data file {tmp_path / 'w.csv'}: Permission denied" in bad("grad", "sum(w)", "--at",
                                                                                   f"w=@{tmp_path / 'w.csv'}")


def test_ragged_csv_names_the_row_and_non_numeric_cells_the_column(tmp_path):
    (tmp_path / "r.csv").write_text("a,b,c\n1,2,3\n4,5\n")
    assert "r.csv: line 3 has 2 columns, the rows above have 3: column 3 is missing" in bad("grad", "sum(w)", "--at",
                                                                         f"w=@{tmp_path / 'r.csv'}")
    (tmp_path / "n.csv").write_text("1,2,3\n4,five,6\n")
    assert "n.csv: line 2, column 2 is not a number" in bad("grad", "sum(w)", "--at",
                                                                       f"w=@{tmp_path / 'n.csv'}")
    (tmp_path / "x.csv").write_text("1,2\n3,4,5\n")
    assert "line 2 has 3 columns, the rows above have 2: column 3 is extra" in bad("grad", "sum(w)", "--at",
                                                                                   f"w=@{tmp_path / 'x.csv'}")
    (tmp_path / "e.csv").write_text("1,,3\n")
    assert "e.csv: line 1, column 2 is empty" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'e.csv'}")
    (tmp_path / "r.json").write_text("[[1, 2], [3]]")
    assert "ragged lists" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'r.json'}")
    (tmp_path / "s.json").write_text('[1, "two"]')
    assert 'entry [1] is text, not a number' in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 's.json'}")


def test_pickled_objects_are_refused(tmp_path):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    err = bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'o.npy'}")
    assert "o.npy: holds pickled Python objects" in err and "allow_pickle=False" in err


def test_npz_key_absent_lists_the_keys(tmp_path):
    np.savez(tmp_path / "d.npz", a=np.ones(2), b=np.ones(3))
    assert "d.npz: has no array 'c' (its keys: a, b)" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'd.npz'}:c")
    assert "holds 2 arrays (a, b)" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'd.npz'}")


def test_a_shape_the_program_rejects_names_the_input_and_its_shape(tmp_path):
    np.save(tmp_path / "w.npy", np.ones(3))
    err = bad("grad", "A @ w", "--at", f"A=[[1,2],[3,4]],w=@{tmp_path / 'w.npy'}", kind="shape mismatch")
    message = err.splitlines()[1]
    assert f"(inputs read from files: w has shape (3,) (from {tmp_path / 'w.npy'}))" in message
    (tmp_path / "x.csv").write_text("1,2,3,4\n5,6,7,8\n")
    err = bad("run", "sum(X @ w)", "--at", f"X=@{tmp_path / 'x.csv'},w=@{tmp_path / 'w.npy'}", kind="shape mismatch")
    assert "X has shape (2, 4)" in err and "w has shape (3,)" in err


def test_over_max_elements_is_refused_from_the_header_before_reading(tmp_path):
    np.save(tmp_path / "w.npy", np.ones(100))
    err = bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'w.npy'}", "--max-elements", "10", kind="too large")
    assert "w.npy: the data has shape (100,) (100 elements), more than the limit of 10" in err
    assert "--max-elements" in err
    # a header that promises 10**9 elements and holds no data: refused as too large, never read
    with open(tmp_path / "huge.npy", "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (10**9,)})
    assert "1,000,000,000 elements" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'huge.npy'}", kind="too large")
    assert "is truncated" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'huge.npy'}",
                                 "--max-elements", str(2 * 10**9))
    (tmp_path / "w.csv").write_text("1,2,3\n" * 10)
    assert "more than the limit of 10" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'w.csv'}",
                                              "--max-elements", "10", kind="too large")


def test_standard_input_once_and_bad_formats(tmp_path):
    err = bad("grad", "sum(a)+sum(b)", "--at", "a=@-,b=@-", stdin=b"[1]", kind="bad input")
    assert "standard input can be read once" in err
    assert "standard input: is not valid JSON" in bad("grad", "sum(w)", "--at", "w=@-", stdin=b"[1, 2")


# ---- nan and inf in input data ---------------------------------------------------------------

def test_nan_in_input_data_runs_with_a_warning(tmp_path):
    w = np.arange(6.0).reshape(2, 3)
    w[1, 1] = np.nan
    np.save(tmp_path / "w.npy", w)
    code, out, err = cli("run", "sum(where(w == w, w, 0))", "--at", f"w=@{tmp_path / 'w.npy'}", "--json")
    assert code == 0 and json.loads(out)["value"] == 11.0
    assert f"warning: input w from {tmp_path / 'w.npy'} holds nan at index [1, 1]" in err


# ---- big arrays in the terminal ----------------------------------------------------------------

def test_big_arrays_are_summarized_in_the_terminal(tmp_path):
    np.save(tmp_path / "w.npy", np.arange(100_000.0))
    code, out, err = cli("grad", "sum(w*w)", "--at", f"w=@{tmp_path / 'w.npy'}", "--out", tmp_path / "g.npz")
    assert code == 0, err
    assert len(out.splitlines()) < 15
    assert "..." in out and "shape (100000,)" in out and "min 0, max 199998" in out and "norm" in out
    assert np.load(tmp_path / "g.npz")["grad.w"].tolist() == (2 * np.arange(100_000.0)).tolist()


# ---- check files -------------------------------------------------------------------------------

def test_check_files_read_at_points_and_random_shapes_from_files(tmp_path):
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "w.npy", np.array([1.0, 2.0, 3.0]))
    np.savez(tmp_path / "points.npz", x=np.linspace(0, 1, 4), w=np.ones((4, 3)))
    (tmp_path / "c.toml").write_text(
        '[[case]]\nname = "at"\nf = "sum(w*w)"\nat = { w = "@data/w.npy" }\ngrad = { w = "2*w" }\n\n'
        '[[case]]\nname = "points"\nf = "x*sum(w)"\npoints = "@points.npz"\ngrad = { x = "sum(w)" }\n\n'
        '[[case]]\nname = "random"\nf = "sum(w*w)"\n'
        'random = { count = 3, w = { range = [-1, 1], shape = "@data/w.npy" } }\n')
    code, out, err = cli("check", tmp_path / "c.toml", "--json")
    assert code == 0, out + err
    cases = {c["name"]: c for c in json.loads(out)["cases"]}
    assert [cases[n]["points"] for n in ("at", "points", "random")] == [1, 4, 3]


def test_check_file_naming_a_missing_data_file_is_invalid_with_its_line(tmp_path):
    (tmp_path / "c.toml").write_text('[[case]]\nf = "sum(w)"\nat = { w = "@nope.npy" }\n')
    err = bad("check", tmp_path / "c.toml", kind="invalid check file")
    assert "c.toml:3:" in err and "no such file" in err


def test_samples_check_file_with_data_passes():
    code, out, err = cli("check", ROOT / "samples" / "checks" / "data.toml")
    assert code == 0, out + err
    assert "2 passed, 0 failed" in out


# ---- the sample and the README -------------------------------------------------------------------

def readme_data_commands() -> list:
    """(command, standard input) of each example in the README's "Data in and out" section."""
    import shlex
    text = (ROOT / "README.md").read_text()
    section = text.split("## Data in and out", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.split("```")[1].splitlines():
        line = line.split("  #")[0].strip()
        stdin = None
        if line.startswith("echo ") and "| autodiff " in line:
            feed, line = line.split("|", 1)
            stdin = (shlex.split(feed)[1] + "\n").encode()
        if line.strip().startswith("autodiff "):
            out.append((shlex.split(line)[1:], stdin))
    return out


def test_readme_data_examples_run(tmp_path, monkeypatch):
    commands = readme_data_commands()
    assert len(commands) >= 6 and any(stdin for _, stdin in commands)
    monkeypatch.chdir(ROOT)
    np.save(tmp_path / "w.npy", np.linspace(-1, 1, 5))
    for args, stdin in commands:
        args = [a.replace("g.npz", str(tmp_path / "g.npz")).replace("w.npy", str(tmp_path / "w.npy"))
                for a in args]
        code, out, err = cli(*args, stdin=stdin)
        assert code == 0, (args, out, err)


def test_least_squares_sample_gradient():
    X = np.loadtxt(ROOT / "samples/data/X.csv", delimiter=",", skiprows=1)
    y = np.loadtxt(ROOT / "samples/data/y.csv", skiprows=1)
    doc = grad_json(ROOT / "samples/data/least_squares.py", "--at",
                    f"X=@{ROOT / 'samples/data/X.csv'},y=@{ROOT / 'samples/data/y.csv'},w=[0,0,0]", "--wrt", "w")
    assert doc["value"] == pytest.approx(np.mean(y * y), rel=1e-14)
    assert doc["gradient"]["w"] == pytest.approx((-2 / len(y) * X.T @ y).tolist(), rel=1e-14)
    assert doc["gradient"]["w"] == pytest.approx([-5.1625, -14.44375, 3.0875], rel=1e-14)


def test_the_python_api_reads_the_same_formats(tmp_path):
    from autodiff.engine import api
    np.savez(tmp_path / "d.npz", x=np.arange(3.0))
    assert api.load_data(str(tmp_path / "d.npz:x")).tolist() == [0.0, 1.0, 2.0]
    (tmp_path / "in.json").write_text('{"x": 2}')
    assert api.load_inputs(str(tmp_path / "in.json")) == {"x": 2.0}
    with pytest.raises(api.SourceError, match="more than the limit of 2"):
        api.load_data(str(tmp_path / "d.npz:x"), api.Limits(elements=2))
    r = api.grad("sum(x*x)", at={"x": api.load_data(str(tmp_path / "d.npz:x"))})
    assert r.gradient["x"].tolist() == [0.0, 2.0, 4.0]


def test_a_text_file_that_is_not_utf8(tmp_path):
    (tmp_path / "b.csv").write_bytes(b"a,b\n1,2\n\xff\xfe,3\n")
    assert "b.csv: is not UTF-8 text" in bad("grad", "sum(w)", "--at", f"w=@{tmp_path / 'b.csv'}")
