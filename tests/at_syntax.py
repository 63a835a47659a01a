"""`--at` inputs in the tests, the way the command line reads them (`x=3,y=4`, `A=[[1,2],[3,4]]`,
`X=@samples/data/X.csv`): the tests need the syntax without depending on where the CLI keeps its
parser. Data files are found from the repository's root, where the samples' commands run."""
import pathlib

from autodiff.engine import api
from autodiff.engine.lang.datafiles import load_reference

ROOT = pathlib.Path(__file__).resolve().parent.parent


def parse_at(items) -> dict:
    values = {}
    for item in items:
        for part in api.split_top_level(item):
            name, _, expr = part.partition("=")
            expr = expr.strip()
            values[name.strip()] = load_reference(expr[1:], base=str(ROOT)) if expr.startswith("@") else \
                api.constant(expr, f"--at {name.strip()}")
    return values
