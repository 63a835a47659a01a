"""The generated tables of docs/performance.md (dated benchmark runs, moved there from the README)
equal the output of the scripts that generate them."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def benchmark_script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _between_markers(text, name):
    start = text.index(f"<!-- {name}.py -->\n") + len(f"<!-- {name}.py -->\n")
    return text[start:text.index(f"<!-- /{name}.py -->", start)].rstrip("\n")


def test_the_tape_entry_table_is_the_scripts_output():
    performance = (ROOT / "docs" / "performance.md").read_text()
    assert _between_markers(performance, "derivative_cost") == benchmark_script("derivative_cost").table()


def test_the_table_has_the_measured_rows_of_issue_13():
    table = benchmark_script("derivative_cost").table()
    assert "| `x**7-2*x**3+x` | 6 14 21 28 " in table
    assert "| `exp(x**2)` | 3 7 19 48 107 " in table
