"""Every `autodiff ...` command in the code blocks of the README and of docs/*.md runs as written
(exit 0, or the error it shows), so no example can go stale; and the README, the user's manual,
stays at most 500 lines (internals live in docs/design.md, dated benchmark runs in
docs/performance.md). Commands that need a GPU, standard input or a 10-million-element data file
are run by tests/test_device.py and tests/test_datafiles.py."""
import re
import shlex
from pathlib import Path

import pytest

from autodiff.cli.main import invoke
from autodiff.cli.render import common as render

ROOT = Path(__file__).resolve().parent.parent
OTHER_TESTS = ("--device gpu", "AUTODIFF_DEVICE", "@w.npy", "@-")
EXPECTED_ERRORS = {'autodiff grad "x + y" --at x=[1,2,3],y=[1,2]': 2,   # the README's error example
                   'autodiff grad "sin(x)*x" --at x=2 --hand "x=cos(x)*x"': 1}   # a wrong hand gradient
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 500


def readme_commands(documents=DOCUMENTS) -> list:
    commands = []
    for path in documents:
        text = path.read_text(encoding="utf-8")
        for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S):
            if lang:                                # python blocks: tests/test_api_surface.py
                continue
            for line in block.splitlines():
                line = line.strip().removeprefix("$ ")
                if line.startswith("autodiff ") and not any(mark in line for mark in OTHER_TESTS):
                    commands.append(line)
    return commands


COMMANDS = readme_commands()


def test_the_readme_has_its_examples():
    assert len(readme_commands([ROOT / "README.md"])) >= 35


def test_the_readme_is_a_manual_of_at_most_500_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move internals to docs/"
    assert (ROOT / "docs" / "design.md").is_file() and (ROOT / "docs" / "performance.md").is_file()


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs_as_shown(command, tmp_path, monkeypatch, capsys):
    (tmp_path / "samples").symlink_to(ROOT / "samples")     # outputs (--out) land in tmp_path
    monkeypatch.chdir(tmp_path)
    render._consoles.clear()
    argv = shlex.split(command, comments=True)[1:]
    code = invoke(argv)
    out, err = capsys.readouterr()
    assert int(code) == EXPECTED_ERRORS.get(command.split("  #")[0].strip(), 0), (command, out[-2000:], err[-2000:])
    assert "Traceback" not in err


def test_the_readmes_emitted_adjoint_is_what_emit_writes(capsys):
    """The emit section shows samples/programs/fibonacci.py beside the adjoint `autodiff emit`
    writes for it (its input checks left out, as the README says): both columns are the real
    texts, line for line (regenerate the block when emit's output changes)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(def f\(x\):.*?)```", text, flags=re.S).group(1).splitlines()
    left = [line[:44].rstrip() for line in block if line[:44].strip()]
    right = [line[44:] for line in block]
    source = (ROOT / "samples/programs/fibonacci.py").read_text(encoding="utf-8").splitlines()
    assert left == [line for line in source if line and not line.startswith("#")]
    render._consoles.clear()
    assert invoke(["emit", str(ROOT / "samples/programs/fibonacci.py"), "--at", "x=1.5"]) == 0
    emitted = capsys.readouterr().out.split("def f_vjp(", 1)[1].split("\n\n", 1)[0].splitlines()
    emitted = ["def f_vjp(" + emitted[0]] + emitted[1:]
    checks = [i for i, line in enumerate(emitted) if line.lstrip().startswith(("if any(np.iscomplexobj", "if tuple(np.ndim"))]
    kept = [line for i, line in enumerate(emitted) if not any(i in (c, c + 1) for c in checks)]
    assert right == kept
