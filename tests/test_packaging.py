"""The distribution holds every package of the tree: pyproject.toml lists its packages by name
(the repository root is the package `autodiff`), so a new folder of modules must be listed there,
or an installed autodiff lacks it (engine/emit was missing: `autodiff emit` failed, installed, with
"No module named 'autodiff.engine.emit'", while the editable checkout worked)."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_the_tree_is_in_the_distribution():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    skip = {"tests", "benchmarks", "samples", "docs", "build"}
    found = {"autodiff"}
    for init in ROOT.rglob("__init__.py"):
        parts = init.parent.relative_to(ROOT).parts
        if parts and parts[0] not in skip and not any(p.startswith(".") or p.endswith(".egg-info") for p in parts):
            found.add(".".join(("autodiff",) + parts))
    assert found - listed == set(), f"pyproject.toml does not list {sorted(found - listed)}"
