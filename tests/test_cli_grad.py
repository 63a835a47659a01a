"""`autodiff grad` end to end: through click's test runner, and a few real processes."""
import inspect
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

import autodiff
from autodiff.cli.main import main


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def json(self):
        return json.loads(self.out)


def run_cli(*args, env=None) -> Outcome:
    """Run the real entry point (`main`, which maps errors to exit codes) in click's isolation."""
    kw = {"mix_stderr": False} if "mix_stderr" in inspect.signature(CliRunner).parameters else {}
    runner = CliRunner(**kw)
    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    try:
        with runner.isolation(env=env) as streams:
            try:
                main(list(args))
                code = 0
            except SystemExit as exit_:
                code = exit_.code
            out, err = streams[0].getvalue(), streams[1].getvalue()
    finally:                                    # main() widens both for its worker thread
        sys.setrecursionlimit(limit)
        threading.stack_size(stack)
    return Outcome(code, out.decode(), err.decode())


def run_process(*args, timeout=60) -> Outcome:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}
    p = subprocess.run([sys.executable, "-m", "autodiff", *args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    return Outcome(p.returncode, p.stdout, p.stderr)


def assert_clean_error(r: Outcome, kind: str | None = None):
    assert r.code == 2, (r.out, r.err)
    assert r.err.startswith("error: "), r.err
    if kind:
        assert r.err.splitlines()[0] == f"error: {kind}"
    assert "Traceback" not in r.err and "Traceback" not in r.out
    assert "\x1b[" not in r.err


# ---- success: the table and the JSON document -------------------------------------------------

def test_the_readme_command_prints_value_and_partials():
    r = run_cli("grad", "x**2*y + y + 2", "--at", "x=3,y=4")
    assert r.code == 0 and r.err == ""
    lines = [line.split() for line in r.out.splitlines()]
    assert ["42"] in lines
    assert ["x", "24"] in lines and ["y", "10"] in lines


def test_no_ansi_escape_codes_when_output_is_not_a_terminal():
    for args in (["grad", "x**2*y+y+2", "--at", "x=3,y=4"], ["grad", "abs(x)", "--at", "x=0"],
                 ["grad", "x +", "--at", "x=1"]):
        r = run_cli(*args)
        assert "\x1b[" not in r.out and "\x1b[" not in r.err


def test_json_is_exactly_one_document_with_the_schema():
    r = run_cli("grad", "x**2*y+y+2", "--at", "x=3,y=4", "--json")
    assert r.code == 0 and r.err == ""
    assert r.out.count("\n") == 1 and r.out.endswith("\n")
    doc = r.json
    assert doc["value"] == 42.0 and doc["gradient"] == {"x": 24.0, "y": 10.0}
    assert doc["inputs"] == {"x": 3.0, "y": 4.0}


def test_json_arrays_are_nested_lists():
    import numpy as np
    doc = run_cli("grad", "sum(A @ A)", "--at", "A=[[1,2],[3,4]]", "--json").json
    A, ones = np.array([[1.0, 2.0], [3.0, 4.0]]), np.ones((2, 2))
    assert doc["value"] == (A @ A).sum() == 7 + 10 + 15 + 22
    assert doc["gradient"]["A"] == (ones @ A.T + A.T @ ones).tolist()     # d sum(AA)/dA = 1Aᵀ + Aᵀ1


@pytest.mark.parametrize("expr, at, value, grad", [
    ("log(x)", "x=0", "-inf", "inf"),
    ("log(x)", "x=-1", "nan", -1.0),
    ("1/x", "x=0", "inf", "-inf"),
    ("sqrt(x)", "x=0", 0.0, "inf"),
])
def test_non_finite_numbers_are_strings_in_json_and_noted(expr, at, value, grad):
    r = run_cli("grad", expr, "--at", at, "--json")
    assert r.code == 0
    doc = r.json
    assert doc["value"] == value and doc["gradient"]["x"] == grad
    assert any("not finite" in note for note in doc["notes"]) or doc["kinks"]


@pytest.mark.parametrize("expr", ["log(x)", "1/x"])
def test_domain_errors_end_cleanly_with_a_note(expr):
    r = run_cli("grad", expr, "--at", "x=0")
    assert r.code == 0 and "Traceback" not in r.err
    assert "note:" in r.out and "not finite" in r.out


def test_non_scalar_output_is_summed_and_says_so():
    r = run_cli("grad", "x*x", "--at", "x=arange(4.0)", "--json")
    doc = r.json
    assert doc["value"] == [0.0, 1.0, 4.0, 9.0] and doc["gradient"]["x"] == [0.0, 2.0, 4.0, 6.0]
    assert doc["reduced"] == "sum" and any("sum of its elements" in n for n in doc["notes"])
    table = run_cli("grad", "x*x", "--at", "x=arange(4.0)")
    assert "sum" in table.out and "[0, 2, 4, 6]" in table.out


# ---- --at forms ----------------------------------------------------------------------------------

@pytest.mark.parametrize("ats, expected", [
    (["x=3,y=4"], {"x": 3.0, "y": 4.0}),
    (["x=3", "y=4"], {"x": 3.0, "y": 4.0}),
    (["x=[0,1,2,3]", "y=1"], {"x": [0.0, 1.0, 2.0, 3.0], "y": 1.0}),
    (["x=arange(4.0),y=2**3"], {"x": [0.0, 1.0, 2.0, 3.0], "y": 8.0}),
    (["x=linspace(0, 1, 3), y = -1e-3"], {"x": [0.0, 0.5, 1.0], "y": -0.001}),
    (["x=[1,2],y=sin(0)"], {"x": [1.0, 2.0], "y": 0.0}),
])
def test_at_forms(ats, expected):
    args = ["grad", "sum(x*y)"]
    for a in ats:
        args += ["--at", a]
    doc = run_cli(*args, "--json").json
    assert doc["inputs"] == expected


def test_at_matrix_with_commas_inside_brackets():
    doc = run_cli("grad", "sum(A)*b", "--at", "A=[[1,2],[3,4]],b=2", "--json").json
    assert doc["inputs"]["A"] == [[1.0, 2.0], [3.0, 4.0]]
    assert doc["gradient"] == {"A": [[2.0, 2.0], [2.0, 2.0]], "b": 10.0}


# ---- --wrt, --seed, --dtype -----------------------------------------------------------------------

def test_wrt_restricts_the_gradient():
    doc = run_cli("grad", "x**2*y+y+2", "--at", "x=3,y=4", "--wrt", "y", "--json").json
    assert doc["gradient"] == {"y": 10.0}
    doc = run_cli("grad", "x**2*y+y+2", "--at", "x=3,y=4", "--wrt", "y,x", "--json").json
    assert doc["gradient"] == {"y": 10.0, "x": 24.0}


def test_cotangent_gives_vector_jacobian_product():
    doc = run_cli("grad", "x*x", "--at", "x=[1,2,3]", "--cotangent", "[1,0,2]", "--json").json
    assert doc["gradient"]["x"] == [2.0, 0.0, 12.0] and doc["reduced"] == "seed"
    doc = run_cli("grad", "A @ x", "--at", "A=[[1,2],[3,4]],x=[1,1]", "--cotangent", "[1,-1]", "--json").json
    assert doc["gradient"]["x"] == [1.0 - 3.0, 2.0 - 4.0]
    assert doc["gradient"]["A"] == [[1.0, 1.0], [-1.0, -1.0]]


def test_dtype_float32():
    doc = run_cli("grad", "x**2*y+y+2", "--at", "x=3,y=4", "--dtype", "float32", "--json").json
    assert doc["value"] == 42.0 and doc["gradient"] == {"x": 24.0, "y": 10.0}
    r = autodiff.grad("x*x", at={"x": [0.1, 0.2]}, dtype_name="float32")
    assert str(r.value.dtype) == "float32" and str(r.gradient["x"].dtype) == "float32"
    autodiff.grad("x", at={"x": 1.0})                     # back to float64 for the other tests


# ---- errors: exit 2, a message, no traceback ---------------------------------------------------------

@pytest.mark.parametrize("args, kind", [
    (["x +", "--at", "x=1"], "syntax error"),
    (["foo(x)", "--at", "x=1"], "unknown function"),
    (["sinn(x)", "--at", "x=1"], "unknown function"),
    (["np.y * x", "--at", "x=1"], "unknown name"),
    (["x*y", "--at", "x=1"], "missing input"),
    (["x*y"], "missing input"),
    (["x", "--at", "x="], "bad input"),
    (["x", "--at", "3=4"], "bad input"),
    (["x", "--at", "x=[1,2"], "syntax error"),
    (["x", "--at", "x=y"], "bad input"),
    (["x", "--at", "x=1", "--at", "x=2"], "bad input"),
    (["x", "--at", "x=1,y=2"], "unknown input"),
    (["x+y", "--at", "x=[1,2,3],y=[1,2,3,4]"], "shape mismatch"),
    (["A @ x", "--at", "A=[[1,2],[3,4]],x=[1,2,3]"], "shape mismatch"),
    (["x*x", "--at", "x=[1,2,3]", "--cotangent", "[1,2]"], "shape mismatch"),
    (["x*x", "--at", "x=[1,2,3]", "--cotangent", "[1,"], "syntax error"),
    (["x*x", "--at", "x=[1,2,3]", "--cotangent", "v"], "bad input"),
    (["x*x", "--at", "x=[1,2,3]", "--seed", "[1,2]"], "shape mismatch"),      # the old spelling, too
    (["x*y", "--at", "x=1,y=2", "--wrt", "z"], "unknown input"),
])
def test_user_errors_exit_2_with_a_message_and_no_traceback(args, kind):
    assert_clean_error(run_cli("grad", *args), kind)


def test_a_builtin_given_as_an_input_is_explained():
    r = run_cli("grad", "e*x", "--at", "e=2,x=1")
    assert_clean_error(r, "unknown input")
    assert "hint: `e` is a builtin" in r.err


def test_error_names_the_place_with_a_caret():
    r = run_cli("grad", "x+y", "--at", "x=[1,2,3],y=[1,2,3,4]")
    lines = r.err.splitlines()
    assert "1:2:" in lines[1] and "(3,)" in lines[1] and "(4,)" in lines[1]
    assert lines[2].endswith("x+y") and lines[3].index("^") == lines[2].index("x+y") + 1


@pytest.mark.parametrize("args", [["grad", "x", "--at", "x=1", "--dtype", "float16"], ["grad"],
                                  ["grad", "x", "--nope"], ["nosuchcommand"]])
def test_click_usage_errors_exit_2(args):
    r = run_cli(*args)
    assert r.code == 2 and "Traceback" not in r.err


def test_debug_shows_the_traceback():
    r = run_cli("grad", "x +", "--at", "x=1", "--debug")
    assert r.code == 2 and "Traceback" in r.err and "error: syntax error" in r.err


def test_pathological_inputs_end_cleanly_in_the_cli():
    deep = "(" * 5000 + "x" + ")" * 5000
    assert run_cli("grad", deep, "--at", "x=2", "--json").json["gradient"] == {"x": 1.0}
    nested = "sin(" * 5000 + "x" + ")" * 5000
    r = run_cli("grad", nested, "--at", "x=2", "--json")
    assert r.code in (0, 2) and "Traceback" not in r.err
    assert_clean_error(run_cli("grad", "[" * 100 + "x" + "]" * 100, "--at", "x=1"))
    assert_clean_error(run_cli("grad", "x\x00", "--at", "x=1"), "syntax error")
    r = run_cli("grad", "x × y", "--at", "x=1,y=2")
    assert_clean_error(r, "syntax error")
    assert "hint: use * for multiplication" in r.err


# ---- real processes ---------------------------------------------------------------------------

def test_python_m_autodiff_version():
    r = run_process("--version")
    assert r.code == 0 and autodiff.__version__ in r.out


def test_process_success_and_error_exit_codes():
    ok = run_process("grad", "x**2*y+y+2", "--at", "x=3,y=4", "--json")
    assert ok.code == 0 and json.loads(ok.out)["gradient"] == {"x": 24.0, "y": 10.0}
    bad = run_process("grad", "x**", "--at", "x=3")
    assert bad.code == 2 and bad.err.startswith("error: syntax error") and "Traceback" not in bad.err
    assert "\x1b[" not in bad.err and "\x1b[" not in ok.out


def test_process_pathological_input_never_crashes():
    long_expr = "+".join(["x*y"] * 25_001)           # 100,003 characters (one argv entry: < 128 KiB)
    r = run_process("grad", long_expr, "--at", "x=2,y=3", "--json", timeout=120)
    assert r.code == 0 and json.loads(r.out)["gradient"] == {"x": 3.0 * 25_001, "y": 2.0 * 25_001}
    r = run_process("grad", "-" * 5000 + "x", "--at", "x=2", "--json")
    assert r.code == 0 and json.loads(r.out)["gradient"] == {"x": 1.0}


def test_table_shows_non_finite_and_tiny_array_entries_as_numbers():
    r = run_cli("grad", "log(x)", "--at", "x=[0,1]")
    assert r.code == 0
    assert "[-inf, 0]" in r.out and "[inf, 1]" in r.out          # not swallowed as rich markup
    assert "np.float64" not in r.out
    r = run_cli("grad", "x*1e-12", "--at", "x=[1,2]")
    assert "[1e-12, 1e-12]" in r.out                             # small entries are not rounded to 0


# ---- start-up: what the command loads (behaviour, not timing) ------------------------------------

def modules_loaded_by(*args) -> set:
    code = ("import sys\nfrom autodiff.cli.main import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(' '.join(sorted(sys.modules)))\n" % (list(args),))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return set(p.stderr.split())


def test_the_scalar_path_never_imports_numpy():
    for extra in ([], ["--json"]):
        loaded = modules_loaded_by("grad", "x**2*y+y+2", "--at", "x=3,y=4", *extra)
        assert "autodiff.engine.api" in loaded and "numpy" not in loaded


def test_a_single_gradient_never_loads_the_replay_machinery():
    # one plain run per process: traces are recorded at a signature's second call (diff/function.py)
    for source, at in (("x**2*y+y+2", "x=3,y=4"), ("sum(x*x)", "x=[1,2]")):
        loaded = modules_loaded_by("grad", source, "--at", at, "--json")
        assert "autodiff.engine.diff.function" in loaded
        assert not {"autodiff.engine.diff.replay", "autodiff.engine.diff.replay_paths",
                    "autodiff.engine.diff.replay_sweep", "autodiff.engine.diff.replay_compiled",
                    "autodiff.engine.diff.rule_tracer", "autodiff.engine.diff.program_fusion",
                    "autodiff.engine.core.rule_tracer", "autodiff.engine.core.program_regions"} & loaded


def test_a_small_gradient_never_loads_the_regions_threads():
    # concurrent.futures and the regions' thread policy cost start-up 6 ms; the first large kernel loads them
    for source, at in (("x**2*y+y+2", "x=3,y=4"), ("sum(x*x)", "x=[1,2]")):
        loaded = modules_loaded_by("grad", source, "--at", at, "--json")
        assert "autodiff.engine.core.fused" in loaded
        assert not {"autodiff.engine.core.region_threads", "concurrent.futures"} & loaded


def test_json_output_never_imports_rich_and_arrays_do_import_numpy():
    loaded = modules_loaded_by("grad", "sum(x*x)", "--at", "x=[1,2]", "--json")
    assert "numpy" in loaded and "rich" not in loaded


def test_lark_is_loaded_without_the_optional_regex_module():
    assert "regex" not in modules_loaded_by("grad", "x", "--at", "x=1", "--json")


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_reader_that_goes_away_is_not_an_error(extra):
    p = subprocess.Popen([sys.executable, "-m", "autodiff", "grad", "x*x", "--at", "x=arange(50.0)", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()                                # like `| head -0`: every write meets a closed pipe
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=60) == 0 and "Traceback" not in err and "internal error" not in err


def test_float32_json_numbers_have_float32_digits():
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "autodiff", "grad", "sum(x*3)", "--at", "x=[0.1,0.2]",
                          "--dtype", "float32", "--json"], capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    assert doc["inputs"]["x"] == [0.1, 0.2] and doc["value"] == 0.90000004


def test_parse_at_splits_at_the_top_level_and_names_the_flag_in_errors():
    from autodiff.cli.options import parse_at
    from autodiff.parser.errors import SourceError
    values = parse_at(["x=3,y=4", "A=[[1,2],[3,4]]"])
    assert values["x"] == 3.0 and values["y"] == 4.0
    assert values["A"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(SourceError, match="--at expects NAME=VALUE"):
        parse_at(["x"])
    with pytest.raises(SourceError, match="--at gives x twice"):
        parse_at(["x=1", "x=2"])


def test_engine_messages_spell_settings_as_flags():
    from autodiff.cli.options import with_flags
    from autodiff.parser.errors import option
    assert with_flags(f"raise {option('max_elements')}") == "raise --max-elements"
    assert with_flags(None) is None


@pytest.mark.parametrize("args, key, expected", [
    (("grad", "sum(x**2) + y", "--at", "x=[],y=2", "--json"), "gradient", {"x": [], "y": 1.0}),
    (("jacobian", "x * 2", "--at", "x=[]", "--json"), "jacobian", {"x": []}),
    (("jacobian", "sum(x) * y", "--at", "x=[],y=[1,2]", "--json"), "jacobian", {"x": [[], []], "y": [[0.0, 0.0], [0.0, 0.0]]}),
])
def test_an_empty_input_is_numpys_empty_array(args, key, expected):
    """issue 29 item 2: --at x=[] is an array of shape (0,), its derivatives empty (no crash)."""
    r = run_cli(*args)
    assert r.code == 0, r.err
    assert r.json[key] == expected
    assert run_cli(*args[:-1], "--check").code == 0
