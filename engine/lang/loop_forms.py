"""Tuple targets of `for` loops and comprehensions (`for a, b in pairs`, `for i, x in
enumerate(xs)`) and the two builtins that make pairs to loop over, `enumerate` and `zip`.

Unpacking has value semantics: each name is bound to an item of the row (an engine getitem
where the row carries a derivative), never to a view that a later assignment could change."""
from __future__ import annotations

from ...parser.errors import SourceError
from .values import describe, iterate, shape_of


def unpacking(items, names: tuple, variables: dict, span):
    """The items of a loop, each unpacked into `names` of `variables` before it is handed on."""
    count = len(names)
    for item in items:
        if not isinstance(item, (tuple, list)) and not shape_of(item):
            raise SourceError("type error", f"cannot unpack {describe(item)} into {count} names", span)
        parts = tuple(iterate(item, span))
        if len(parts) != count:
            raise SourceError("value error", f"cannot unpack {len(parts)} values into {count} names", span,
                              "loop over an array whose rows have as many items as there are names")
        for name, part in zip(names, parts):
            variables[name] = part
        yield item


def enumerate_items(seq, start=0.0):
    """enumerate(xs): the pairs (index, item) of a range, a tuple or an array's rows, as a tuple."""
    first = float(start)
    return tuple((first + index, item) for index, item in enumerate(iterate(seq, None)))


def zip_items(*seqs):
    """zip(a, b, ...): the tuples of the items at one position in each, as far as the shortest."""
    return tuple(zip(*(iterate(seq, None) for seq in seqs)))
