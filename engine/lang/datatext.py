"""Input data in text: tables (.csv, .tsv, .txt) and JSON, read from a bounded stream (a data
file or standard input, datastream.CappedStream) with the element limit checked as they are read.

A message about data that is not numbers says where (the line and column, the entry) and what
kind of thing is there, never the text itself: a file named by mistake (a key file, an
environment dump) must not end up in a log or a JUnit report.
"""
from __future__ import annotations

import array
import json

from ..core.backend import np
from .datastream import CHUNK_BYTES, bad_file, check_size, element_limit, text_lines, too_many_elements

NONFINITE_WORDS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
NUMBER_HINT = "a cell holds a number such as 3, -1.5e-3, nan or inf; a first row of column names is allowed"


def _cell(text: str):
    """A float, or None for a cell that is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def _split_row(line: str, fmt: str) -> list:
    if fmt == "csv":
        return [c.strip() for c in line.split(",")]
    if fmt == "tsv":
        return [c.strip() for c in line.split("\t")]
    return line.replace(",", " ").split()          # .txt: whitespace (numpy.savetxt), or commas


def read_table(stream, where: str, fmt: str, limit: int):
    """Numbers in rows and columns; an optional first row of column names; `#` comments.
    One row or one column is a vector (as numpy.loadtxt reads it); several of each, a matrix.
    Read line by line: a row that would pass the element limit is refused before it is kept."""
    try:
        return _table_lines(text_lines(stream), where, fmt, limit)
    except UnicodeDecodeError:
        raise bad_file(where, "is not UTF-8 text; a binary file needs the .npy or .npz format") from None


def _table_lines(lines, where: str, fmt: str, limit: int):
    flat, columns, rows = array.array("d"), None, 0
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = _split_row(line, fmt)
        if (rows + 1) * len(cells) > limit:
            check_size((rows + 1, len(cells)), where, limit)
        values = [_cell(c) for c in cells]
        if columns is None and rows == 0 and all(v is None for v in values):
            columns = len(cells)                     # a header of column names
            continue
        for col, (c, v) in enumerate(zip(cells, values), 1):
            if v is None:
                raise bad_file(where, f"line {number}, column {col} is {'not a number' if c else 'empty'}",
                               NUMBER_HINT)
        if columns is None:
            columns = len(cells)
        elif len(cells) != columns:
            fault = f"column {columns} is missing" if len(cells) < columns else f"column {columns + 1} is extra"
            raise bad_file(where, f"line {number} has {len(cells)} column{'s' * (len(cells) != 1)}, "
                           f"the rows above have {columns}: {fault} (a ragged table)")
        rows += 1
        flat.extend(values)
    if not rows:
        raise bad_file(where, "holds no numbers")
    a = np().frombuffer(flat, dtype=np().float64).copy() if len(flat) else np().zeros(0)
    if rows == 1 and columns == 1:
        return float(a[0])
    return a if rows == 1 or columns == 1 else a.reshape(rows, columns)


def read_json(stream, where: str, limit: int):
    """A number or nested lists of numbers. In such a document every separator stands between
    two elements (n of them have n - 1 commas), so the element limit is checked on the commas
    as the bytes arrive, before anything is parsed."""
    chunks, commas = [], 0
    while True:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            break
        commas += chunk.count(b",")
        if commas >= limit:
            raise too_many_elements(where, limit)
        chunks.append(chunk)
    try:
        text = b"".join(chunks).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise bad_file(where, f"is not UTF-8 text (byte {e.start}); a binary file needs the .npy or .npz "
                       "format") from None
    return from_nested(parse_json(text, where), where, limit)


def parse_json(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise bad_file(where, f"is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        raise bad_file(where, "is not valid data: its lists are nested too deeply") from None
    except ValueError:                     # an integer of more digits than Python converts
        raise bad_file(where, "holds a whole number of more than 4,300 digits", "write it as a float (1e5000)") \
            from None


def from_nested(doc, where: str, limit: int | None = None):
    """A number or rectangular nested lists of numbers (nan/inf also as the strings "nan", "inf",
    "-inf", as --json writes them) as a float or an array."""
    shape = _nested_shape(doc, where, "")
    check_size(shape, where, limit if limit is not None else element_limit(None))
    if not shape:
        return _leaf(doc, where, "")
    return np().array(_leaves(doc, where), dtype=np().float64).reshape(shape)


def _kind_of(v) -> str:
    """What a JSON value that is not a number is, in words (never its text)."""
    if isinstance(v, bool):
        return "true/false"
    if v is None:
        return "null"
    if isinstance(v, str):
        return "text"
    return "an object" if isinstance(v, dict) else "a list"


def _leaf(v, where: str, path: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)) or \
            isinstance(v, str) and v not in NONFINITE_WORDS:
        raise bad_file(where, f"{'entry ' + path if path else 'the value'} is {_kind_of(v)}, not a number",
                       'numbers are written as numbers, or as "nan", "inf" and "-inf"')
    return NONFINITE_WORDS[v] if isinstance(v, str) else float(v)


def _nested_shape(v, where: str, path: str) -> tuple:
    if not isinstance(v, list):
        return ()
    if not v:
        raise bad_file(where, f"{'entry ' + path if path else 'the value'} is an empty list")
    first = _nested_shape(v[0], where, f"{path}[0]")
    for k in range(1, len(v)):
        other = _nested_shape(v[k], where, f"{path}[{k}]")
        if other != first:
            raise bad_file(where, f"ragged lists: {path}[{k}] has shape {other}, {path}[0] has shape {first}")
    return (len(v),) + first


def _leaves(v, where: str) -> list:
    out, stack = [], [(v, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, list):
            stack.extend((x, f"{path}[{k}]") for k, x in reversed(list(enumerate(item))))
        else:
            out.append(_leaf(item, where, path))
    return out
