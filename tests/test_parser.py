"""The expression grammar: precedence, literals, lists, indexing, aliases, and the errors."""
import dataclasses

import pytest

import autodiff
from autodiff.parser import SourceError, Span, parse_expression, parse_program
from autodiff.parser import nodes


def parse(text):
    return parse_expression(text).body


def shape(node):
    """The tree as nested tuples of kinds and values, without spans (for comparing structure)."""
    if isinstance(node, nodes.Num):
        return node.value
    if isinstance(node, nodes.Name):
        return node.id
    if isinstance(node, nodes.UnaryOp):
        return (node.op, shape(node.operand))
    if isinstance(node, nodes.Power):
        return ("**", shape(node.base), shape(node.exponent))
    if isinstance(node, nodes.BinChain):
        out = shape(node.operands[0])
        for op, x in zip(node.ops, node.operands[1:]):
            out = (op, out, shape(x))
        return out
    if isinstance(node, nodes.Call):
        return ("call", shape(node.func), *map(shape, node.args))
    if isinstance(node, nodes.ListExpr):
        return ["list", *map(shape, node.elts)]
    if isinstance(node, nodes.Subscript):
        return ("[]", shape(node.value), *map(shape, node.index))
    if isinstance(node, nodes.Slice):
        return ("slice", *(None if p is None else shape(p) for p in (node.lower, node.upper, node.step)))
    raise AssertionError(f"unexpected node {node!r}")


def error_of(text, program=False):
    with pytest.raises(SourceError) as info:
        (parse_program if program else parse_expression)(text)
    return info.value


# ---- precedence and associativity --------------------------------------------------------------

@pytest.mark.parametrize("text, tree", [
    ("-x**2", ("-", ("**", "x", 2.0))),                     # -(x**2), as in Python
    ("2**3**2", ("**", 2.0, ("**", 3.0, 2.0))),              # right associative
    ("2**-1", ("**", 2.0, ("-", 1.0))),
    ("-2**-x**2", ("-", ("**", 2.0, ("-", ("**", "x", 2.0))))),
    ("a - b - c", ("-", ("-", "a", "b"), "c")),             # left associative
    ("a / b * c", ("*", ("/", "a", "b"), "c")),
    ("a + b * c", ("+", "a", ("*", "b", "c"))),
    ("(a + b) * c", ("*", ("+", "a", "b"), "c")),
    ("a @ b + c", ("+", ("@", "a", "b"), "c")),
    ("-a * b", ("*", ("-", "a"), "b")),
    ("+-x", ("+", ("-", "x"))),
    ("x**2*y+y+2", ("+", ("+", ("*", ("**", "x", 2.0), "y"), "y"), 2.0)),
    ("f(x)**2", ("**", ("call", "f", "x"), 2.0)),
    ("x[0]**2", ("**", ("[]", "x", 0.0), 2.0)),
])
def test_precedence_follows_python(text, tree):
    assert shape(parse(text)) == tree


@pytest.mark.parametrize("text, value", [
    ("-x**2", -9.0), ("2**3**2", 512.0), ("2**-1", 0.5), ("-2**2", -4.0), ("(-2)**2", 4.0),
    ("10 - 4 - 3", 3.0), ("2 / 4 * 8", 4.0), ("7 // 2", 3.0), ("7 % 4", 3.0),
])
def test_precedence_in_values(text, value):
    assert autodiff.evaluate(text, at={"x": 3.0} if "x" in text else None).value == value


# ---- literals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("3", 3.0), ("3.25", 3.25), ("1e3", 1000.0), ("1E-3", 0.001), ("2.5e+2", 250.0), (".5", 0.5),
    ("5.", 5.0), ("1_000", 1000.0), ("1_000.000_1", 1000.0001), ("0", 0.0), ("007", 7.0),
])
def test_number_literals_are_floats(text, value):
    node = parse(text)
    assert isinstance(node, nodes.Num) and node.value == value and type(node.value) is float


@pytest.mark.parametrize("text", ["1__0", "1_", "0x10", "1e", "1.2.3", "3x"])
def test_malformed_numbers_are_syntax_errors(text):
    err = error_of(text)
    assert err.kind == "syntax error" and err.span is not None


def test_lists_and_nesting():
    assert shape(parse("[1, 2, 3]")) == ["list", 1.0, 2.0, 3.0]
    assert shape(parse("[[1,2],[3,4]]")) == ["list", ["list", 1.0, 2.0], ["list", 3.0, 4.0]]
    assert shape(parse("[x, 2*x,]")) == ["list", "x", ("*", 2.0, "x")]
    r = autodiff.evaluate("[[1,2],[3,4]]")
    assert r.value.shape == (2, 2) and r.value.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_a_list_of_traced_scalars_is_stacked_and_differentiable():
    r = autodiff.grad("sum([x, 2*x, x*y])", at={"x": 3.0, "y": 4.0})
    assert r.value == 3 + 6 + 12 and r.gradient == {"x": 1 + 2 + 4.0, "y": 3.0}


# ---- indexing and slicing ---------------------------------------------------------------------

@pytest.mark.parametrize("text, tree", [
    ("x[0]", ("[]", "x", 0.0)),
    ("x[1:]", ("[]", "x", ("slice", 1.0, None, None))),
    ("x[:-1]", ("[]", "x", ("slice", None, ("-", 1.0), None))),
    ("x[::2]", ("[]", "x", ("slice", None, None, 2.0))),
    ("x[:]", ("[]", "x", ("slice", None, None, None))),
    ("A[i][j]", ("[]", ("[]", "A", "i"), "j")),
    ("A[i, j]", ("[]", "A", "i", "j")),
    ("A[0, 1:]", ("[]", "A", 0.0, ("slice", 1.0, None, None))),
])
def test_indexing_and_slicing_parse(text, tree):
    assert shape(parse(text)) == tree


@pytest.mark.parametrize("text, value", [
    ("x[0]", 10.0), ("x[-1]", 13.0), ("x[1:]", [11.0, 12.0, 13.0]), ("x[:-1]", [10.0, 11.0, 12.0]),
    ("x[::2]", [10.0, 12.0]), ("A[1][0]", 3.0), ("A[1, 0]", 3.0), ("A[0, 1:]", [2.0]), ("A[:, 1]", [2.0, 4.0]),
])
def test_indexing_values(text, value):
    r = autodiff.evaluate(text, at={k: v for k, v in (("x", [10.0, 11.0, 12.0, 13.0]), ("A", [[1.0, 2.0], [3.0, 4.0]]))
                                    if k in text})
    v = r.value
    assert (v.tolist() if hasattr(v, "tolist") else v) == value


def test_indexing_gradients_scatter_back():
    r = autodiff.grad("x[0] * x[-1] + sum(x[1:])", at={"x": [2.0, 3.0, 5.0]})
    assert r.gradient["x"].tolist() == [5.0 + 0.0, 1.0, 2.0 + 1.0]
    r = autodiff.grad("A[1, 0] * A[0][1]", at={"A": [[1.0, 2.0], [3.0, 4.0]]})
    assert r.gradient["A"].tolist() == [[0.0, 3.0], [2.0, 0.0]]


# ---- np. and math. aliases; other attributes ---------------------------------------------------

@pytest.mark.parametrize("text, name", [("np.sin", "sin"), ("math.pi", "pi"), ("numpy.exp", "exp"),
                                        ("math.e", "e"), ("np.maximum", "maximum")])
def test_np_and_math_names_are_aliases(text, name):
    node = parse(text)
    assert isinstance(node, nodes.Name) and node.id == name


def test_aliases_evaluate_like_the_builtins():
    a = autodiff.grad("np.sin(x) * math.pi + np.dot(x, x)", at={"x": 0.5})
    b = autodiff.grad("sin(x) * pi + dot(x, x)", at={"x": 0.5})
    assert (a.value, a.gradient) == (b.value, b.gradient)


@pytest.mark.parametrize("text, hint", [("x.flat", ".T, .shape"), ("x.__class__", ".T, .shape"),
                                        ("(x+1).sum", "call it"), ("foo.bar", ".sum()"), ("x.tolist()", ".reshape()")])
def test_other_attribute_access_is_an_error(text, hint):
    # issue 15: .T .shape .ndim .size and a fixed list of methods are the language's; nothing else
    with pytest.raises(SourceError) as info:
        autodiff.grad(text, at={"foo": 1.0} if "foo" in text else {"x": [1.0, 2.0]})
    err = info.value
    assert err.kind == "unsupported construct" and ("attribute" in err.message or "method" in err.message)
    assert err.span is not None and err.span.line == 1
    assert hint in (err.hint or err.message)


def test_np_name_of_something_that_is_not_a_builtin_is_refused():
    with pytest.raises(SourceError) as info:
        autodiff.grad("np.x + 1", at={"x": 1.0})
    assert info.value.kind == "unknown name" and info.value.span.column == 1


# ---- syntax errors: where, what was expected, a caret ------------------------------------------

def test_syntax_error_names_line_column_shows_caret_and_expected():
    err = error_of("x + * y")
    assert err.kind == "syntax error"
    assert (err.span.line, err.span.column) == (1, 5)
    assert "unexpected '*'" in err.message and "expected an expression" in err.message
    text = err.format()
    assert text.splitlines()[0] == "error: syntax error"
    assert "1:5:" in text
    line, caret = err.excerpt()
    assert line.endswith("x + * y")
    assert caret.index("^") == line.index("x + * y") + 4


@pytest.mark.parametrize("text, column", [("x +", 4), ("x**", 4), ("x +   ", 7)])
def test_end_of_input_errors_have_a_real_position(text, column):
    err = error_of(text)
    assert "the input ended" in err.message
    assert (err.span.line, err.span.column) == (1, column)
    assert err.span.line > 0 and err.excerpt(), "end-of-input errors point just past the text"


@pytest.mark.parametrize("text, line, column", [("sin(x,", 1, 4), ("(x", 1, 1), ("[1, 2", 1, 1),
                                                ("f(x, [1, 2]", 1, 2), ("(x +\n y", 1, 1), ("x + (y # (\n", 1, 5)])
def test_an_unclosed_bracket_is_reported_where_it_opens(text, line, column):
    err = error_of(text)
    assert err.message.startswith(f"{text_at(text, line, column)!r} was never closed: the input ended; expected")
    assert (err.span.line, err.span.column, err.span.end_column) == (line, column, column + 1)


def text_at(text, line, column):
    return text.split("\n")[line - 1][column - 1]


def test_end_of_input_in_a_program_points_at_its_last_line():
    err = error_of("y = 1\nz = (y +\n", program=True)
    assert "the input ended" in err.message and err.span.line == 2


@pytest.mark.parametrize("text, expected", [("sin(x,", "')'"), ("[1,", "']'"), ("(x y)", "')'"),
                                            ("x y", "an operator")])
def test_expected_tokens_are_said_in_words(text, expected):
    assert expected in error_of(text).message


def test_expected_lists_only_name_closers_of_open_brackets():
    assert "']'" not in error_of("(x y)").message
    assert "')'" not in error_of("x y").message


@pytest.mark.parametrize("text", ["x)", "[1, 2]]", "(x))"])
def test_unmatched_closing_bracket(text):
    err = error_of(text)
    assert err.message.startswith("unmatched") and err.span.column == len(text)


@pytest.mark.parametrize("text, column", [("@x", 1), ("  @ x", 3)])
def test_a_leading_at_in_an_expression_is_a_stray_matmul_not_a_decorator(text, column):
    # task D item 3: `autodiff grad "@x"` said "decorators are not part of the language"
    err = error_of(text)
    assert err.kind == "syntax error" and err.message.startswith("a stray `@`: `@` is matrix multiplication")
    assert (err.span.line, err.span.column) == (1, column) and err.hint == "write a @ b"
    assert "decorator" in error_of("@jit\ndef f(x):\n    return x\n", program=True).message   # a program keeps its message


@pytest.mark.parametrize("text, hint", [("3x", "*"), ("sin x", "sin(x)"), ("x = 3", "==")])
def test_common_mistakes_get_hints(text, hint):
    assert hint in error_of(text).hint


@pytest.mark.parametrize("text, column, hint", [("x × y", 3, "*"), ("x²", 2, "x**2"), ("2*x² + 1", 4, "x**2"),
                                                ("√x", 1, "sqrt"), ("x − 1", 3, "-")])
def test_non_ascii_operators_are_named_with_a_hint(text, column, hint):
    err = error_of(text)
    assert err.kind == "syntax error" and "U+" in err.message
    assert err.span.column == column and hint in err.hint


def test_non_ascii_letters_are_names():
    assert shape(parse("α * β")) == ("*", "α", "β")
    r = autodiff.grad("α * β", at={"α": 2.0, "β": 5.0})
    assert r.gradient == {"α": 5.0, "β": 2.0}


@pytest.mark.parametrize("text, program", [("x^2", False), ("y = x ^ 2\n", True)])
def test_caret_is_not_power(text, program):
    err = error_of(text, program)
    assert err.message == "unexpected character '^'" and "**" in err.hint


@pytest.mark.parametrize("text, word, column, hint", [
    ("retrun y\n", "retrun", 1, "did you mean `return`?"),
    ("def f(x):\n    retrun x*x\n", "retrun", 5, "did you mean `return`?"),
    ("whiel x < 3:\n    x = x + 1\n", "whiel", 1, "did you mean `while`?"),
    ("a b\n", "a", 1, "write * to multiply"),
])
def test_a_name_followed_by_a_name_is_an_unknown_statement(text, word, column, hint):
    err = error_of(text, program=True)
    assert err.message == f"unknown statement {word!r}" and err.hint.startswith(hint)
    line = text[:text.index(word)].count("\n") + 1
    assert err.span == Span(line, column, line, column + len(word))


def test_two_names_in_an_expression_still_ask_for_an_operator():
    err = error_of("x y")
    assert err.message.startswith("unexpected 'y'") and "*" in err.hint


@pytest.mark.parametrize("text, kind", [("", "syntax error"), ("   ", "syntax error"), ("'abc'", "syntax error"),
                                        ("{1}", "unsupported construct"), ("lambda x: x", "unsupported construct"),
                                        ("import os", "unsupported construct"),
                                        ("x = 3", "syntax error"), ("x $ y", "syntax error")])
def test_things_that_are_not_expressions(text, kind):
    assert error_of(text).kind == kind


# ---- pathological input: a SourceError or a result, never a RecursionError -------------------

def test_five_thousand_nested_parentheses_parse():
    node = parse("(" * 5000 + "x" + ")" * 5000)
    assert node == nodes.Name("x", node.span)


def test_unclosed_parentheses_are_a_located_error():
    err = error_of("(" * 5000 + "x")
    assert (err.span.line, err.span.column) == (1, 5000) and "')'" in err.message        # the innermost


@pytest.mark.parametrize("text", ["-" * 5000 + "x", "sin(" * 3000 + "x" + ")" * 3000, "x**" * 3000 + "1",
                                  "[" * 3000 + "x" + "]" * 3000, "x" + "[0]" * 3000],
                         ids=["minus", "sin", "power", "lists", "index"])
def test_deep_nesting_never_raises_recursion_error(text):
    try:
        r = autodiff.grad(text, at={"x": 0.5})
    except SourceError as err:                  # the API in a small stack: a clean "too deep"
        assert err.kind in ("too deep", "index error", "shape mismatch")
    else:
        assert r.value is not None


def test_a_100000_character_expression():
    text = "+".join(["x*y"] * 33_333)
    assert len(text) >= 100_000
    r = autodiff.grad(text, at={"x": 2.0, "y": 3.0})
    assert r.value == 6.0 * 33_333 and r.gradient == {"x": 3.0 * 33_333, "y": 2.0 * 33_333}


def test_a_100000_character_syntax_error_shows_the_fault_in_a_short_excerpt():
    text = "+".join(["x"] * 50_000) + "+*x"
    err = error_of(text)
    assert err.span.column == len(text) - 1
    line, caret = err.excerpt()
    assert len(line) < 200 and line[caret.index("^")] == "*"


@pytest.mark.parametrize("text", ["x\x00", "\x00", "1 +\x00 2"])
def test_nul_bytes_are_refused_cleanly(text):
    err = error_of(text)
    assert err.kind == "syntax error" and "NUL" in err.message


@pytest.mark.parametrize("text", ["x+\ufeff1", "x\u200b+1", "\U0001F600", "x + \udcff"])
def test_odd_unicode_is_a_clean_error(text):
    with pytest.raises(SourceError):
        parse_expression(text)


# ---- the AST -----------------------------------------------------------------------------------

def test_ast_nodes_are_frozen_dataclasses_with_spans():
    node = parse("sin(x) + 2")
    assert dataclasses.is_dataclass(node)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.ops = ("-",)
    assert node.span == Span(1, 1, 1, 11)
    call = node.operands[0]
    assert call.func.span == Span(1, 1, 1, 4) and call.args[0].span == Span(1, 5, 1, 6)
    assert node.op_spans[0] == Span(1, 8, 1, 9)


def test_long_chains_are_flat_nodes():
    node = parse("+".join("x" * 1000))
    assert isinstance(node, nodes.BinChain) and len(node.operands) == 1000


def test_multi_line_expression_spans():
    node = parse("(x +\n y)")
    assert node.operands[1].span == Span(2, 2, 2, 3)


def test_ast_nodes_compare_hash_copy_and_pickle_by_value():
    import copy
    import pickle
    a, b = parse("sin(x) + 2*y"), parse("sin(x) + 2*y")
    assert a == b and hash(a) == hash(b) and a != parse("sin(x) + 2*z")
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a
    call = a.operands[0]
    renamed = dataclasses.replace(call, func=nodes.Name("cos", call.func.span))
    assert renamed.func.id == "cos" and call.func.id == "sin"
    assert [f.name for f in dataclasses.fields(nodes.Span)] == ["line", "column", "end_line", "end_column"]
    assert not hasattr(nodes.Span(1, 1, 1, 2), "__dict__")                       # slotted
    assert repr(nodes.Span(1, 2, 3, 4)) == "Span(line=1, column=2, end_line=3, end_column=4)"
    with pytest.raises(TypeError):
        nodes.Span(1, 2, 3)
    match nodes.Span(1, 2, 3, 4):
        case nodes.Span(line, column, _, _):
            assert (line, column) == (1, 2)


# ---- program-level errors (the indenter) --------------------------------------------------------

@pytest.mark.parametrize("text, line, column, words", [
    ("def f(x):\nreturn x\n", 2, 1, "expected an indented block"),
    ("for i in range(3):\n", 1, 19, "the input ended; expected an indented block"),
    ("x = 1\n    y = 2\n", 2, 1, "unexpected indentation"),
    ("x = 1\n\n# note\n    y = 2\n", 4, 1, "unexpected indentation"),
    ("def f(x):\n    return x\n  y = 2\n", 3, 1, "unindent does not match"),
])
def test_indentation_errors_point_at_the_line(text, line, column, words):
    err = error_of(text, program=True)
    assert (err.span.line, err.span.column) == (line, column) and words in err.message
    assert err.excerpt()


@pytest.mark.parametrize("text", ["x\n+ y", "x\n  + y", "x +\n y"])
def test_an_expression_broken_over_lines_gets_the_parentheses_hint(text):
    assert "inside parentheses" in error_of(text).hint
    assert shape(parse("(" + text.replace("\n", "\n ") + ")")) == ("+", "x", "y")


def test_carets_count_wide_characters_as_two_cells():
    err = error_of("变量 + ＊ x")
    line, caret = err.excerpt()
    assert caret.index("^") == len("   1 | ") + len("变量 + ") + 2 and caret.endswith("^^")


def test_excerpt_lines_are_counted_like_lark_at_form_feeds():
    err = error_of("(x\f+ 1 +\n $)")
    assert err.span.line == 2 and err.excerpt()[0].endswith(" $)")
