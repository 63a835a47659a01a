"""Every command's --json output validates against docs/json-schema.json (issue 13, item 9), and
errors under --json are one JSON document too, with the exit code unchanged."""
import json
import os
import pathlib
import re

import pytest

from autodiff.cli import main as climain
from autodiff.cli.render import common as render

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "json-schema.json").read_text())
SAMPLE_CHECKS = os.path.join(ROOT, "samples", "checks", "verdicts.toml")

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def problems(doc, schema, where="$") -> list:
    """The ways `doc` breaks `schema` (the subset of JSON Schema that docs/json-schema.json uses:
    $ref to a shared definition, type, enum, required, properties, additionalProperties, items)."""
    if "$ref" in schema:
        return problems(doc, SCHEMA["$defs"][schema["$ref"].removeprefix("#/$defs/")], where)
    out = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(doc, k) for k in kinds):
            return [f"{where}: {type(doc).__name__} is not {kinds}"]
    if "enum" in schema and doc not in schema["enum"]:
        out.append(f"{where}: {doc!r} is not one of {schema['enum']}")
    if isinstance(doc, dict):
        out += [f"{where}: no {key!r}" for key in schema.get("required", ()) if key not in doc]
        for key, value in doc.items():
            sub = schema.get("properties", {}).get(key, schema.get("additionalProperties"))
            if isinstance(sub, dict):
                out += problems(value, sub, f"{where}.{key}")
    if isinstance(doc, list) and "items" in schema:
        for i, item in enumerate(doc):
            out += problems(item, schema["items"], f"{where}[{i}]")
    return out


def _is(value, kind):
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[kind])


def cli(capsys, *args):
    render._consoles.clear()
    code = climain.invoke(list(args))
    out, err = capsys.readouterr()
    return int(code), out, err


RUNS = [
    ("run", ["run", "x*2", "--at", "x=1"]),
    ("run", ["run", "log(x)", "--at", "x=0"]),
    ("grad", ["grad", "x**2*y", "--at", "x=3,y=4"]),
    ("grad", ["grad", "x**2*y", "--at", "x=3,y=4", "--mode", "forward"]),
    ("grad", ["grad", "sqrt(x)", "--at", "x=0"]),
    ("grad", ["grad", "sum(detach(x*x)*x)", "--at", "x=[0,1,2,3]", "--check"]),
    ("grad", ["grad", "x*2", "--at", "x=1", "--dtype", "float32"]),
    ("jacobian", ["jacobian", "[r*cos(t), r*sin(t)]", "--at", "r=2,t=0.5"]),
    ("jacobian", ["jacobian", "[x, x*2]", "--at", "x=1", "--check"]),
    ("jacobian", ["jacobian", "[sqrt(x), x*y]", "--at", "x=0,y=1"]),
    ("hessian", ["hessian", "x**2*y + y + 2", "--at", "x=3,y=4"]),
    ("hessian", ["hessian", "x**2*y", "--at", "x=3,y=4", "--check"]),
    ("hessian", ["hessian", "x**1.5 + y*y", "--at", "x=0,y=1"]),
    ("derivative", ["derivative", "exp(x**2)", "--at", "x=0.7", "--order", "3"]),
    ("derivative", ["derivative", "sqrt(x)", "--at", "x=0", "--order", "2"]),
    ("derivative", ["derivative", "sqrt(x)", "--at", "x=0", "--order", "2", "--mode", "forward"]),
    ("graph", ["graph", "x*2 + sin(x)", "--at", "x=1"]),
    ("graph", ["graph", "x*y", "--at", "x=1,y=2", "--format", "json"]),
    ("plot", ["plot", "sin(x)", "--range", "x=0:1"]),
    ("plot", ["plot", "sin(x)*y", "--range", "x=0:1", "--at", "y=2", "--order", "2"]),
    ("check", ["check", SAMPLE_CHECKS]),
    ("explain", ["grad", "x**2*y", "--at", "x=3,y=4", "--explain"]),
    ("explain", ["grad", "x**2*y", "--at", "x=3,y=4", "--explain", "--mode", "forward"]),
    ("derivative", ["derivative", "x*x*y", "--at", "x=1,y=2", "--wrt", "x", "--order", "2", "--check"]),
    ("hessian_explain", ["hessian", "x**2*y", "--at", "x=3,y=4", "--explain"]),
    ("jacobian_explain", ["jacobian", "[x*y, x+y]", "--at", "x=1,y=2", "--explain"]),
    ("jacobian_explain", ["jacobian", "[x*y, x+y]", "--at", "x=1,y=2", "--explain", "--mode", "forward"]),
    ("derivative_explain", ["derivative", "sin(x)*x", "--at", "x=0.5", "--order", "3", "--explain"]),
    ("derivative_explain", ["derivative", "x*x*y", "--at", "x=1,y=2", "--wrt", "x", "--explain", "--mode",
                            "forward"]),
]


@pytest.mark.parametrize("command,args", RUNS, ids=[" ".join(a) for _, a in RUNS])
def test_every_command_validates_against_the_schema(capsys, command, args):
    code, out, err = cli(capsys, *args, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert problems(doc, SCHEMA["$defs"][command]) == []
    assert list(doc)[:2] == ["version", "dtype"]


ERRORS = [
    (["grad", "x**", "--at", "x=1"], "syntax error", 1),
    (["grad", "x", "--at", "x=1", "--jsno"], "usage", None),
    (["jacobian", "[x, y]", "--at", "x=1"], None, None),
    (["derivative", "x*y", "--at", "x=1,y=2"], "not one input", None),
    (["check", "no-such-file.toml"], "bad file", None),
]


@pytest.mark.parametrize("args,kind,line", ERRORS, ids=[" ".join(a) for a, _, _ in ERRORS])
def test_errors_are_one_json_document_and_exit_2(capsys, args, kind, line):
    code, out, err = cli(capsys, *args, "--json")
    assert code == 2
    doc = json.loads(out)                  # exactly one document: json.loads rejects trailing text
    assert problems(doc, SCHEMA["$defs"]["error"]) == []
    if kind:
        assert doc["error"]["kind"] == kind
    if line:
        assert doc["error"]["line"] == line
    assert "--" not in doc["error"]["message"] or kind == "usage" or "--" in " ".join(args)


def test_the_error_document_carries_the_dtype_asked_for(capsys):
    code, out, _ = cli(capsys, "run", "x +", "--dtype", "float32", "--json")
    assert code == 2 and json.loads(out)["dtype"] == "float32"


def test_without_json_errors_stay_text(capsys):
    code, out, err = cli(capsys, "grad", "x**", "--at", "x=1")
    assert code == 2 and out == "" and err.startswith("error: syntax error")


# ---- the same idea has one key (issue 13, item 9) ------------------------------------------------

COMMAND_DEFS = ["run", "grad", "jacobian", "hessian", "derivative", "graph", "plot", "check", "explain"]
# spellings retired for one key each: the point is "inputs", the AD mode "mode" (never "method"),
# the differentiated inputs "wrt" (never "input"), the tape's size "tape_entries"
RETIRED = {"at", "point", "method", "input", "tape_length", "output", "provenance", "nan_provenance"}


def test_keys_several_documents_share_are_defined_once():
    """A key in two commands' documents means one thing: both refer to the same shared definition
    (named as the key; the --check block's is "check_report", "check" being the command's)."""
    defs = SCHEMA["$defs"]
    seen = {}
    for command in COMMAND_DEFS:
        for key, sub in defs[command]["properties"].items():
            seen.setdefault(key, []).append((command, sub))
    shared = {key: uses for key, uses in seen.items() if len(uses) > 1}
    assert {"version", "dtype", "device", "value", "inputs", "wrt", "mode", "notes", "kinks", "nonfinite",
            "check", "passes", "order"} <= set(shared)
    for key, uses in shared.items():
        name = {"check": "check_report"}.get(key, key)
        assert all(sub == {"$ref": f"#/$defs/{name}"} for _, sub in uses), (key, uses)


def _keys(doc) -> set:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


@pytest.mark.parametrize("command,args", RUNS, ids=[" ".join(a) for _, a in RUNS])
def test_one_key_for_one_idea(capsys, command, args):
    code, out, err = cli(capsys, *args, "--json")
    doc = json.loads(out)
    assert _keys(doc) & RETIRED == set()
    if "--at" in args and command != "plot":       # the point, under "inputs", whatever the command
        names = set(re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=", args[args.index("--at") + 1]))
        assert set(doc["inputs"]) == names
    if command in ("grad", "jacobian", "hessian", "explain"):  # what was differentiated, under "wrt"
        assert doc["wrt"] == list(doc[command if command in ("jacobian", "hessian") else "gradient"])
    if command in ("derivative", "derivative_explain", "plot"):
        assert doc["wrt"] == ["x"]
    if command in ("run", "grad", "jacobian", "hessian", "derivative", "derivative_explain"):
        assert isinstance(doc["nonfinite"], list) and isinstance(doc["kinks"], list)


def test_a_check_case_carries_its_worst_point_under_inputs(capsys):
    # the point is "inputs" in every document: a check case's is the point of its worst entry
    seeds = os.path.join(ROOT, "samples", "checks", "seeds.toml")
    code, out, _ = cli(capsys, "check", seeds, "-k", "Hands-on ML D-1", "--json")
    case = json.loads(out)["cases"][0]
    assert code == 0 and case["inputs"] == {"x": 3.0, "y": 4.0} and case["entry"] in ("x", "y")
    assert case["where"].endswith(case["entry"])
