"""Reading the retailer's CSV files: the columns of each kind, the records in column order, and
each field checked and parsed. A bad field raises ``ImportRejected`` for its line; the importer
collects those in ``ImportErrors`` and goes on reading, so a rejected file names every bad line
(up to ``MAX_REPORTED_ERRORS``) in one pass.

``services.stock.importer`` writes what this module reads.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

KINDS = ("stores", "products", "stock", "sales", "campaigns")

COLUMNS: dict[str, tuple[str, ...]] = {
    "stores": ("codigo", "nome", "cidade", "lat", "lng", "is_cd", "bloqueada"),
    "products": ("sku", "nome", "marca", "categoria", "colecao", "cor", "tamanhos", "imagem"),
    "stock": ("loja", "sku", "tamanho", "qtd"),
    "sales": ("data", "loja", "sku", "tamanho", "qtd"),
    "campaigns": ("sku", "loja", "inicio", "fim"),
}

# The database column is a 32-bit integer.
MAX_QTD = 2_147_483_647
SIZE_SEPARATOR = "|"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_BOOLEANS = {"true": True, "false": False}
# Report parsing progress every this many bytes.
_PROGRESS_STEP = 1 << 20

# A rejected file lists at most this many bad lines, then how many more there are.
MAX_REPORTED_ERRORS = 100

Progress = Callable[[int], None]


@dataclass(frozen=True)
class LineError:
    """One bad line: ``line`` is 1-based, the header being line 1."""

    line: int
    reason: str


class ImportRejected(Exception):
    """A file that cannot be imported. Raised for one line by the parsers; the importer raises
    it once more at the end with ``errors``, every bad line it found (the first
    ``MAX_REPORTED_ERRORS``), and ``more``, how many further lines were bad. ``line`` and
    ``reason`` are the first error's."""

    def __init__(self, line: int, reason: str, errors: Sequence[LineError] = (), more: int = 0):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason
        self.errors: tuple[LineError, ...] = tuple(errors) or (LineError(line, reason),)
        self.more = more

    def lines(self) -> list[str]:
        """One text line per bad line of the file, then how many more there were."""
        text = [f"line {e.line}: {e.reason}" for e in self.errors]
        if self.more:
            text.append(f"... and {self.more:,} more line(s) with errors")
        return text


class ImportErrors:
    """The bad lines of one file, collected while it is read; at most one error per line."""

    def __init__(self, cap: int = MAX_REPORTED_ERRORS):
        self.cap = cap
        self.kept: list[LineError] = []
        self.more = 0
        self._last_line = 0

    def __bool__(self) -> bool:
        return bool(self.kept)

    def add(self, error: ImportRejected) -> None:
        # The first problem found on a line explains it; the rest would only repeat it. A
        # line's errors arrive together (its bytes, then its fields), so remembering the
        # last line is enough, and memory stays flat however many lines are bad.
        if error.line == self._last_line:
            return
        self._last_line = error.line
        if len(self.kept) < self.cap:
            self.kept.append(LineError(error.line, error.reason))
        else:
            self.more += 1

    def rejection(self) -> ImportRejected:
        kept = sorted(self.kept, key=lambda e: e.line)
        return ImportRejected(kept[0].line, kept[0].reason, kept, self.more)

    def raise_if_any(self) -> None:
        if self.kept:
            raise self.rejection()

    def fatal(self, error: ImportRejected) -> ImportRejected:
        """The rejection to raise when reading cannot go on (a bad header, broken quoting)."""
        self.add(error)
        return self.rejection()


# --------------------------------------------------------------------------- reading


def _decoded_lines(handle, progress: Progress | None, errors: ImportErrors) -> Iterator[str]:
    """Lines of a binary file decoded as UTF-8, reporting bytes read as it goes. A line that is
    not UTF-8 is an error of its own; it is still handed on (with replacement characters) so
    the CSV structure around it holds, and its row's own errors are not reported twice.

    The file is read and decoded a block of lines at a time; only a block holding a bad
    line is decoded line by line, so each bad line is reported when it is reached."""
    number = 0
    while lines := handle.readlines(_PROGRESS_STEP):
        if progress is not None:
            progress(sum(map(len, lines)))
        try:
            decoded = list(map(bytes.decode, lines))
        except UnicodeDecodeError:
            decoded = _decoded_one_by_one(lines, number, errors)
        else:
            if number == 0 and decoded[0].startswith("\ufeff"):
                decoded[0] = decoded[0][1:]
        number += len(lines)
        yield from decoded


def _decoded_one_by_one(lines: list[bytes], before: int, errors: ImportErrors) -> Iterator[str]:
    for number, raw in enumerate(lines, start=before + 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            errors.add(ImportRejected(number, "the file is not valid UTF-8"))
            line = raw.decode("utf-8", errors="replace")
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield line


def _records(lines: Iterable[str], kind: str, errors: ImportErrors) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields in the documented column order) for every non-blank row with the
    right number of fields; a row with another number is added to ``errors`` and skipped. A
    bad header or broken quoting ends the reading: what follows cannot be trusted."""
    expected = COLUMNS[kind]
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise errors.fatal(
                ImportRejected(1, f"the file is empty; expected the header {','.join(expected)}")
            )
        names = [h.strip().lower() for h in header]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise errors.fatal(ImportRejected(1, f"column {name!r} appears more than once"))
            seen.add(name)
        missing = [c for c in expected if c not in seen]
        unknown = [n for n in names if n not in expected]
        if missing or unknown:
            problems = []
            if missing:
                problems.append("missing column(s): " + ", ".join(missing))
            if unknown:
                problems.append("unknown column(s): " + ", ".join(repr(u) for u in unknown))
            raise errors.fatal(ImportRejected(1, "; ".join(problems) + f" (expected: {','.join(expected)})"))
        width = len(names)
        order = [names.index(c) for c in expected]
        in_order = order == list(range(width))
        strip = str.strip
        for fields in reader:
            # Every kind has several columns, so a blank row never has ``width`` fields.
            if len(fields) != width:
                if fields and not (len(fields) == 1 and not fields[0].strip()):
                    errors.add(
                        ImportRejected(reader.line_num, f"expected {width} fields, found {len(fields)}")
                    )
                continue
            if in_order:
                yield reader.line_num, list(map(strip, fields))
            else:
                yield reader.line_num, [strip(fields[i]) for i in order]
    except csv.Error as exc:
        raise errors.fatal(
            ImportRejected(reader.line_num or 1, f"malformed CSV ({exc}); the lines after it were not read")
        ) from None


def read_file(
    kind: str, path: str | Path, errors: ImportErrors, progress: Progress | None = None
) -> Iterator[tuple[int, list[str]]]:
    """Records of a CSV file on disk, streamed; bad lines met while reading go to ``errors``."""
    with open(path, "rb") as handle:
        yield from _records(_decoded_lines(handle, progress, errors), kind, errors)


# --------------------------------------------------------------------------- field parsing


def parse_text(value: str, line: int, column: str, *, max_len: int, required: bool = True) -> str | None:
    if not value:
        if required:
            raise ImportRejected(line, f"{column} is empty")
        return None
    if len(value) > max_len:
        raise ImportRejected(line, f"{column} is longer than {max_len} characters")
    return value


def parse_qtd(value: str, line: int, column: str = "qtd") -> int:
    if not (value.isascii() and value.isdigit()):
        raise ImportRejected(line, f"{column} must be a whole number >= 0, got {value!r}")
    qtd = int(value)
    if qtd > MAX_QTD:
        raise ImportRejected(line, f"{column} {value} is too large")
    return qtd


def parse_date(value: str, line: int, column: str) -> date:
    if not _ISO_DATE.fullmatch(value):
        raise ImportRejected(line, f"{column} must be an ISO date YYYY-MM-DD, got {value!r}")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ImportRejected(line, f"{column} {value!r} is not a calendar date") from None


def parse_coordinate(value: str, line: int, column: str, limit: float) -> float | None:
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ImportRejected(line, f"{column} must be a number, got {value!r}") from None
    if not math.isfinite(number) or not -limit <= number <= limit:
        raise ImportRejected(line, f"{column} {value} is outside [-{limit:g}, {limit:g}]")
    return number


def parse_boolean(value: str, line: int, column: str) -> bool:
    parsed = _BOOLEANS.get(value.lower())
    if parsed is None:
        raise ImportRejected(line, f"{column} must be true or false, got {value!r}")
    return parsed


def parse_sizes(value: str, line: int) -> list[str]:
    if not value:
        raise ImportRejected(line, "tamanhos is empty")
    sizes = [s.strip() for s in value.split(SIZE_SEPARATOR)]
    for size in sizes:
        if not size:
            raise ImportRejected(line, f"tamanhos {value!r} has an empty size")
        if len(size) > 20:
            raise ImportRejected(line, f"size {size!r} is longer than 20 characters")
    duplicated = sorted({s for s in sizes if sizes.count(s) > 1})
    if duplicated:
        raise ImportRejected(line, f"tamanhos repeats {', '.join(duplicated)}")
    return sizes
