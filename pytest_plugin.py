"""pytest plugin: collect `*.grad.toml` check files as test items, one per case.

Opt-in, so that installing autodiff never changes anyone's test run: enable it with the ini option
`autodiff_check_files = true` (pytest.ini / pyproject's [tool.pytest.ini_options]) or the command
line flag `--autodiff-check`. Registered under the `pytest11` entry point as `autodiff`.
"""
from __future__ import annotations

import pytest


def pytest_addoption(parser):
    parser.addini("autodiff_check_files", type="bool", default=False,
                  help="collect *.grad.toml files as gradient checks (autodiff)")
    parser.addoption("--autodiff-check", action="store_true", default=False,
                     help="collect *.grad.toml files as gradient checks (autodiff)")


def _enabled(config) -> bool:
    return bool(config.getoption("--autodiff-check") or config.getini("autodiff_check_files"))


def pytest_configure(config):
    """A check file named on the command line without the flag would be "not found": say why."""
    if _enabled(config):
        return
    named = [a for a in config.args if str(a).split("::")[0].endswith(".grad.toml")]
    if named:
        raise pytest.UsageError(f"{named[0]} is a gradient check file: add --autodiff-check to collect it "
                                "(or autodiff_check_files = true in the pytest ini)")


def pytest_collect_file(file_path, parent):
    if file_path.name.endswith(".grad.toml") and _enabled(parent.config):
        return GradFile.from_parent(parent, path=file_path)
    return None


class GradFile(pytest.File):
    def collect(self):
        from autodiff.engine import api      # the engine loads only when a check file is collected
        try:
            cases = api.load_check_file(str(self.path))
        except api.SourceError as e:
            raise self.CollectError(e.format()) from None
        for case in cases:
            yield GradItem.from_parent(self, name=case.name, case=case)


class CheckFailed(Exception):
    pass


class GradItem(pytest.Item):
    def __init__(self, *, case, **kwargs):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self):
        from autodiff.engine import api
        result = api.run_check_case(self.case)
        self.user_properties.append(("points", result.points))
        if result.status == "skipped":
            pytest.skip(result.message)       # a skip reason: written by the check file, no settings
        if result.failed:
            raise CheckFailed(result)
        for w in result.warnings:
            import warnings
            warnings.warn(f"{self.case.name}: {w}", stacklevel=1)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CheckFailed):
            r = excinfo.value.args[0]
            if r.status == "error":
                from autodiff.parser.errors import spell_options
                return f"{r.file}:{r.line}: {r.name}: error\n{spell_options(r.message)}"
            lines = [f"{r.file}:{r.line}: {r.name}: {r.verdict} ({r.points} point(s))"]
            for row in r.rows[:20]:
                lines.append(f"  {row['where']}, {row['entry']}: {row['verdict']}: {row['reason']}")
            if len(r.rows) > 20:
                lines.append(f"  … and {len(r.rows) - 20} more failing entries")
            if r.seed is not None:
                lines.append(f"  fast mode, seed {r.seed}")
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.case.line - 1, f"grad check: {self.case.name}"


