"""Bounded reading of input data: the faults every data format shares, the element limit and the
byte budgets it implies, and a byte stream that stops at its budget.

A data file is opened by parser/files.open_regular (a regular file only: a FIFO, a device or a
directory is refused at once) and sized before it is read; standard input cannot be sized, so it
is read through a CappedStream, which raises as soon as more bytes arrive than the element limit
can need. The element limit itself is checked as the data is read (from the header of .npy and
.npz members, row by row for tables, separator by separator for JSON): memory is never spent on
data that will be refused.
"""
from __future__ import annotations

import io

from ...parser.errors import SourceError, option
from .limits import Limits

# A number in a text table or JSON takes at most some 26 bytes ("-1.2345678901234567e-300, ");
# 64 leaves room for spaces, comments and column names. Binary data takes at most 16 bytes an
# element (float128). Both get a megabyte for headers and archive directories.
TEXT_BYTES_PER_ELEMENT = 64
BINARY_BYTES_PER_ELEMENT = 16
SLACK_BYTES = 1 << 20
CHUNK_BYTES = 1 << 20


def bad_file(where: str, fault: str, hint: str | None = None) -> SourceError:
    return SourceError("bad file", f"{where}: {fault}", None, hint)


def element_limit(limits: Limits | None) -> int:
    return (limits or Limits()).elements


def byte_budget(limit: int, binary: bool) -> int:
    """The most bytes data of at most `limit` elements can take in a text or a binary format."""
    return (BINARY_BYTES_PER_ELEMENT if binary else TEXT_BYTES_PER_ELEMENT) * limit + SLACK_BYTES


def too_many_bytes(where: str, budget: int, limit: int, size: int | None = None) -> SourceError:
    said = f"is {size:,} bytes" if size is not None else f"more than {budget:,} bytes arrived"
    budget_said = f" ({budget:,} bytes)" if size is not None else ""
    return SourceError("too large", f"{where}: {said}, more than data of at most {limit:,} elements can take"
                       f"{budget_said}", None,
                       f"raise the limit with {option('max_elements')}, or save large arrays as .npy")


def check_size(shape, where: str, limit: int) -> None:
    """Refuse a shape of more than `limit` elements, or one with a negative dimension (a
    corrupt .npy header), before any of the data is read."""
    count = 1
    for d in shape:
        if int(d) < 0:
            raise bad_file(where, f"its header gives the shape {tuple(shape)}, with a negative dimension",
                           "save it again with numpy.save")
        count *= int(d)
    if count > limit:
        raise SourceError("too large", f"{where}: the data has shape {tuple(shape)} ({count:,} elements), "
                          f"more than the limit of {limit:,}", None, f"raise the limit with {option('max_elements')}")


def too_many_elements(where: str, limit: int) -> SourceError:
    """The error for data found, while it is read, to hold more than `limit` elements."""
    return SourceError("too large", f"{where}: the data has more elements than the limit of {limit:,}", None,
                       f"raise the limit with {option('max_elements')}")


class CappedStream(io.RawIOBase):
    """The bytes of `raw` (a binary stream, never closed here), refused with a "too large"
    SourceError as soon as more than `budget` of them have arrived."""

    def __init__(self, raw, budget: int, where: str, limit: int):
        super().__init__()
        self.raw, self.budget, self.where, self.limit = raw, budget, where, limit
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if not len(buffer):
            return 0
        n = self.raw.readinto(memoryview(buffer)[:self.budget + 1 - self.total]) or 0
        self.total += n
        if self.total > self.budget:
            raise too_many_bytes(self.where, self.budget, self.limit)
        return n

    def read_exactly(self, count: int) -> bytes:
        """`count` bytes, or fewer where the stream ends first."""
        out = bytearray()
        while len(out) < count:
            chunk = self.read(min(count - len(out), CHUNK_BYTES))
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def read_all(self) -> bytes:
        out = bytearray()
        while True:
            chunk = self.read(CHUNK_BYTES)
            if not chunk:
                return bytes(out)
            out += chunk


def text_lines(stream: CappedStream):
    """The lines of a UTF-8 stream (a byte-order mark dropped), decoded as they are read."""
    return io.TextIOWrapper(io.BufferedReader(stream, CHUNK_BYTES), encoding="utf-8-sig", newline=None)
