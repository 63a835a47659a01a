"""`autodiff check` and `autodiff grad --check`: output, exit codes, JSON, JUnit, jobs and shards."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render

HERE = os.path.dirname(__file__)
WRONG = os.path.join(HERE, "data", "wrong_gradient.grad.toml")
SAMPLES = os.path.join(HERE, "..", "samples", "checks")


def cli(capsys, *args):
    render._consoles.clear()            # the consoles bind to the stream they first saw
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# ---- autodiff check ----------------------------------------------------------------------------

def test_wrong_hand_gradient_exits_1_and_names_the_entry(capsys):
    code, out, _ = cli(capsys, "check", WRONG)
    assert code == 1
    assert "wrong: forgot the + 1 in df/dy" in out
    assert "point 1 (x=3, y=4), y: fail: hand-derived 9 vs AD 10" in out
    assert out.rstrip().splitlines()[-1] == "1 passed, 1 failed"


def test_samples_exit_0_with_the_closing_line(capsys):
    files = sorted(os.path.join(SAMPLES, f) for f in os.listdir(SAMPLES) if f.endswith(".toml"))
    code, out, _ = cli(capsys, "check", *files)
    assert code == 0
    last = out.rstrip().splitlines()[-1]
    assert last.startswith(f"21 passed, 0 failed") and "with warnings" in last     # 19 + data.toml's 2


def test_invalid_file_exits_2_with_file_line_column(capsys, tmp_path):
    path = write(tmp_path, '[[case]]\nf = "x"\nat = { x = 1 }\ngrad = { x = 1 }\ntolerence = 3\n')
    code, out, err = cli(capsys, "check", path)
    assert code == 2 and out == ""
    assert f"{path}:5:1" in err and "'tolerence'" in err and "Traceback" not in err


def test_toml_syntax_error_exits_2(capsys, tmp_path):
    path = write(tmp_path, '[[case]]\nf = "x\n')
    code, _, err = cli(capsys, "check", path)
    assert code == 2 and f"{path}:2:" in err and "invalid TOML" in err


def test_missing_file_exits_2(capsys, tmp_path):
    code, _, err = cli(capsys, "check", str(tmp_path / "nope.toml"))
    assert code == 2 and "cannot read" in err


def test_a_case_error_is_reported_and_counted_failed(capsys, tmp_path):
    path = write(tmp_path, '[[case]]\nname = "broken"\nf = "x +* 1"\nat = {x=1}\n'
                           '[[case]]\nname = "fine"\nf = "x*x"\nat = {x=1}\n')
    code, out, _ = cli(capsys, "check", path)
    assert code == 1 and "ERROR" in out and "broken" in out and "unexpected" in out
    assert out.rstrip().splitlines()[-1] == "1 passed, 1 failed"


def test_skipped_follows_on_the_closing_line(capsys, tmp_path):
    path = write(tmp_path, '[[case]]\nf = "x"\nat = {x=1}\n[[case]]\nf = "x"\nat = {x=2}\nskip = true\n')
    code, out, _ = cli(capsys, "check", path)
    assert code == 0 and out.rstrip().splitlines()[-1] == "1 passed, 0 failed, 1 skipped"


def test_json_is_one_document(capsys):
    code, out, _ = cli(capsys, "check", WRONG, "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["summary"]["passed"] == 1 and doc["summary"]["failed"] == 1
    wrong = doc["cases"][1]
    assert wrong["status"] == "failed" and wrong["failures"][0]["entry"] == "y"
    assert wrong["failures"][0]["claimed"] == 9.0 and wrong["failures"][0]["reference"] == 10.0


def test_junit_is_valid_with_one_testcase_per_case(capsys, tmp_path):
    report = tmp_path / "junit.xml"
    code, _, _ = cli(capsys, "check", WRONG, "--junit", str(report))
    assert code == 1
    root = ET.parse(report).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["right: Hands-on ML D-1", "wrong: forgot the + 1 in df/dy"]
    failure = cases[1].find("failure")
    # the message names the case's worst failure, the entry the table's "where" shows (issue 29 item 7)
    assert "point 2 (x=-1, y=0.5), y: fail: hand-derived 1 vs AD 2" in failure.get("message")
    assert "claimed 9.0, reference 10.0" in failure.text


def test_junit_reports_errors_and_skips(capsys, tmp_path):
    path = write(tmp_path, '[[case]]\nname="e"\nf = "x +"\nat = {x=1}\n[[case]]\nname="s"\nf = "x"\nat = {x=1}\nskip = "later"\n')
    report = tmp_path / "j.xml"
    cli(capsys, "check", path, "--junit", str(report))
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite.get("errors") == "1" and suite.get("skipped") == "1"
    assert suite.find("testcase/error") is not None and suite.find("testcase/skipped").get("message") == "later"


def test_shards_split_the_suite(capsys, tmp_path):
    path = write(tmp_path, "".join(f'[[case]]\nname = "c{i}"\nf = "x**{i}"\nat = {{x = 2}}\n' for i in range(1, 8)))
    names = []
    for k in (1, 2, 3):
        code, out, _ = cli(capsys, "check", path, "--shard", f"{k}/3", "--json")
        assert code == 0
        names.append([c["name"] for c in json.loads(out)["cases"]])
    assert sorted(sum(names, [])) == sorted(f"c{i}" for i in range(1, 8)) and all(names)


@pytest.mark.parametrize("bad", ["0/3", "4/3", "x", "1/0"])
def test_bad_shard_exits_2(capsys, bad):
    code, _, err = cli(capsys, "check", WRONG, "--shard", bad)
    assert code == 2 and "--shard" in err


def test_jobs_run_in_processes_with_the_same_outcome(capsys):
    code1, out1, _ = cli(capsys, "check", WRONG, "--json")
    code2, out2, _ = cli(capsys, "check", WRONG, "--json", "--jobs", "2")
    strip = lambda doc: [(c["name"], c["status"], c["failures"]) for c in json.loads(doc)["cases"]]  # noqa: E731
    assert code1 == code2 == 1 and strip(out1) == strip(out2)


def test_fast_flag_checks_projections(capsys, tmp_path):
    path = write(tmp_path, '[[case]]\nname="v"\nf = "sum(x**3)"\nat = { x = "linspace(0, 1, 40)" }\n')
    code, out, _ = cli(capsys, "check", path, "--check", "fast", "--seed", "4", "--json")
    case = json.loads(out)["cases"][0]
    assert code == 0 and case["mode"] == "fast" and case["seed"] == 4


def test_piped_output_has_no_progress_bar():
    env = dict(os.environ, PYTHONPATH="")
    proc = subprocess.run([sys.executable, "-m", "autodiff", "check", WRONG], capture_output=True, text=True, env=env)
    assert proc.returncode == 1 and proc.stderr == ""
    assert proc.stdout.rstrip().splitlines()[-1] == "1 passed, 1 failed"


# ---- autodiff grad --check -----------------------------------------------------------------------

def test_grad_check_table(capsys):
    code, out, _ = cli(capsys, "grad", "x**2*y + y + 2", "--at", "x=3,y=4", "--check")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("entry"))
    for column in ("AD", "FD", "abs err", "rel err", "FD err est", "tolerance", "verdict"):
        assert column in header
    assert "check passed" in out


def test_grad_check_kink_shows_slopes_and_convention(capsys):
    code, out, _ = cli(capsys, "grad", "abs(x)", "--at", "x=0", "--check")
    assert code == 0
    assert "kink: x: one-sided slopes differ: -1 (left) vs 1 (right)" in out and "abs at 0" in out


def test_grad_check_non_finite_exits_1(capsys):
    code, out, _ = cli(capsys, "grad", "sqrt(x)", "--at", "x=0", "--check")
    assert code == 1 and "non-finite" in out and "check failed" in out


def test_grad_check_fast_prints_and_honours_the_seed(capsys):
    code, out, _ = cli(capsys, "grad", "sum(sin(x))", "--at", "x=linspace(0,1,100)", "--check", "fast",
                       "--seed", "42")
    assert code == 0 and "seed 42" in out and "--seed 42" in out and "--check-seed" not in out
    code, out, _ = cli(capsys, "grad", "sum(sin(x))", "--at", "x=linspace(0,1,100)", "--check", "fast", "--json")
    doc = json.loads(out)
    assert doc["check"]["mode"] == "fast" and isinstance(doc["check"]["seed"], int)
    assert doc["check"]["projection"]["verdict"] == "pass" and doc["check"]["evaluations"] == 5


def test_grad_check_json_branch(capsys):
    code, out, _ = cli(capsys, "grad", "x*x if x < 1 else 3*x - 2", "--at", "x=1", "--check", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["check"]["entries"][0]["verdict"] == "branch"
    assert doc["check"]["verdict"] == "branch" and doc["check"]["passed"] is True


def test_an_erroring_case_names_the_flag_in_its_hint(capsys, tmp_path):
    # the check runner keeps the settings' placeholders; the CLI spells them as its flags
    path = write(tmp_path, '[[case]]\nname = "huge"\nf = "zeros(10**12) + x"\nat = { x = 1 }\ngrad = { x = 1 }\n')
    code, out, err = cli(capsys, "check", path)
    assert code == 1
    assert "raise the limit with --max-elements" in out + err
    assert "Limits(" not in out + err and "{opt:" not in out + err


def test_check_case_errors_spell_settings_as_keywords_through_the_api(tmp_path):
    from autodiff.engine import api
    path = write(tmp_path, '[[case]]\nname = "huge"\nf = "zeros(10**12) + x"\nat = { x = 1 }\ngrad = { x = 1 }\n')
    [case] = api.load_check_file(path)
    result = api.run_check_case(case)
    from autodiff.parser.errors import spell_options
    assert "Limits(elements=...)" in spell_options(result.message)


# ---- issue 29, item 6: `autodiff check DIR`, and one invalid file among several ----------------

GOOD = '[[case]]\nname = "good"\nf = "x**2"\nat = { x = 3 }\ngrad = { x = "2*x" }\n'
WRONG_HAND = '[[case]]\nname = "wrong"\nf = "x**2"\nat = { x = 3 }\ngrad = { x = "3*x" }\n'
INVALID = '[[case]]\nname = "bad"\nf = "x**2"\nat = { x = 3 }\nbogus = 1\n'


def test_a_folder_runs_every_grad_toml_below_it_in_path_order(capsys, tmp_path):
    for rel, text in (("b.grad.toml", GOOD), ("a/z.grad.toml", GOOD), ("a/y/w.grad.toml", WRONG_HAND),
                      ("plain.toml", WRONG_HAND), (".hidden/h.grad.toml", WRONG_HAND),
                      ("venv/v.grad.toml", WRONG_HAND), ("build/b.grad.toml", WRONG_HAND)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    code, out, err = cli(capsys, "check", str(tmp_path), "--json")
    doc = json.loads(out)
    assert code == 1 and err == ""
    assert doc["files"] == [str(tmp_path / p) for p in ("a/y/w.grad.toml", "a/z.grad.toml", "b.grad.toml")]
    assert [(c["file"], c["status"]) for c in doc["cases"]] == [
        (str(tmp_path / "a/y/w.grad.toml"), "failed"), (str(tmp_path / "a/z.grad.toml"), "passed"),
        (str(tmp_path / "b.grad.toml"), "passed")]


def test_a_folder_without_check_files_is_a_usage_error(capsys, tmp_path):
    (tmp_path / "c.toml").write_text(GOOD)
    code, out, err = cli(capsys, "check", str(tmp_path))
    assert code == 2 and out == ""
    assert f"the folder {tmp_path} holds no *.grad.toml file" in err and "Traceback" not in err


def test_one_invalid_file_among_several_is_an_errored_case_in_the_report(capsys, tmp_path):
    good, bad, wrong = (write(tmp_path, t, n) for t, n in ((GOOD, "a.grad.toml"), (INVALID, "b.grad.toml"),
                                                          (WRONG_HAND, "c.grad.toml")))
    report = tmp_path / "j.xml"
    code, out, err = cli(capsys, "check", str(tmp_path), "--junit", str(report))
    assert code == 2                      # an invalid file is a user's mistake, after the others ran
    assert f"ERROR {bad}:5 invalid check file" in out and f"{bad}:5:1: unknown key 'bogus' in [[case]]" in out
    assert out.rstrip().splitlines()[-1] == "1 passed, 2 failed"
    root = ET.parse(report).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == [good, bad, wrong]
    [case] = suites[bad].findall("testcase")
    assert (case.get("name"), case.get("line")) == ("invalid check file", "5")
    assert "unknown key 'bogus' in [[case]]" in case.find("error").get("message")
    code, out, err = cli(capsys, "check", good, bad, "--json")
    assert code == 2 and f"{bad}:5:1: unknown key 'bogus'" in err
    assert [(c["name"], c["status"]) for c in json.loads(out)["cases"]] == [("good", "passed"),
                                                                           ("invalid check file", "error")]
