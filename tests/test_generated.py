"""diff/generated.py: the replays' generated text becomes functions through compile() alone, in
the namespace their names are bound in; no other module of the package calls eval, exec,
compile or __import__ (the README's promise: user text is never evaluated)."""
import ast
import pathlib

from autodiff.engine.diff.generated import functions_of

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("cli", "parser", "engine")


def test_the_functions_of_a_text_see_its_namespace():
    made = functions_of("def twice(x):\n    return k * x\ndef three():\n    return 3\n", {"k": 2.0}, "<test>")
    assert sorted(made) == ["three", "twice"] and made["twice"](1.5) == 3.0 and made["three"]() == 3


def test_only_generated_py_compiles_and_nothing_evaluates():
    calls = []
    sources = [*ROOT.glob("*.py"), *(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))]
    for path in sorted(sources):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("eval", "exec", "compile", "__import__"):
                calls.append((str(path.relative_to(ROOT)), node.func.id))
    assert calls == [("engine/diff/generated.py", "compile")]
