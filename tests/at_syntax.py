"""`--at` inputs in the tests, the way the command line reads them (`x=3,y=4`, `A=[[1,2],[3,4]]`):
the tests need the syntax without depending on where the CLI keeps its parser."""
from autodiff.engine import api


def parse_at(items) -> dict:
    values = {}
    for item in items:
        for part in api.split_top_level(item):
            name, _, expr = part.partition("=")
            values[name.strip()] = api.constant(expr.strip(), f"--at {name.strip()}")
    return values
