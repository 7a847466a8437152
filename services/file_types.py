"""What an uploaded file is, judged from its bytes (never from what the client says), and
a name for it that is safe to store and to send back.

Binary formats are recognised by their signatures (the ``filetype`` package, pure
Python). Text is told apart from binary, and HTML or SVG inside text is named as such,
as a browser sniffing it would: those are the types that run script when opened, so
they must be known to be served only as downloads.
"""

from __future__ import annotations

import unicodedata

import filetype

# Bytes of a file's start that decide its type.
HEAD_BYTES = 8192
OCTET_STREAM = "application/octet-stream"
# Raster images Pillow decodes safely enough for a thumbnail.
THUMBNAIL_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp"})
# Markup a browser would run (WHATWG MIME sniffing's HTML signatures, and more).
_HTML_MARKS = (
    "<!doctype html",
    "<html",
    "<head",
    "<body",
    "<script",
    "<iframe",
    "<style",
    "<title",
    "<table",
    "<div",
    "<img",
    "<a ",
    "<meta",
    "<object",
    "<embed",
    "<form",
    "<svg",
)
MAX_FILENAME_CHARS = 255
DEFAULT_FILENAME = "arquivo"


def _text(head: bytes) -> str | None:
    """The head as text when it reads as UTF-8 text (a character cut at the end is fine)."""
    if b"\x00" in head:
        return None
    for cut in range(4):
        try:
            text = head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        controls = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f")
        return text if controls <= len(text) // 100 else None
    return None


def sniff(head: bytes) -> str:
    """The MIME type of a file starting with ``head`` (its first ``HEAD_BYTES``)."""
    if not head:
        return OCTET_STREAM
    kind = filetype.guess(head)
    if kind is not None:
        return kind.mime
    text = _text(head.removeprefix(b"\xef\xbb\xbf"))
    if text is None:
        return OCTET_STREAM
    lowered = text.lower()
    start = lowered.lstrip()
    if "<svg" in lowered and (
        start.startswith("<?xml") or start.startswith("<svg") or "<!doctype svg" in lowered
    ):
        return "image/svg+xml"
    if any(mark in lowered for mark in _HTML_MARKS):
        return "text/html"
    if start.startswith("<?xml"):
        return "application/xml"
    return "text/plain"


def thumbnailable(content_type: str) -> bool:
    return content_type in THUMBNAIL_TYPES


def clean_filename(name: str | None) -> str:
    """The last segment of a client's file name, without control or format characters
    (bidirectional overrides included), leading dots or surrounding blanks, at most 255
    characters with its extension kept."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    name = "".join(" " if ch in "\t\n\r" else ch for ch in name)
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = " ".join(name.split()).lstrip(".").strip()
    if not name:
        return DEFAULT_FILENAME
    if len(name) > MAX_FILENAME_CHARS:
        stem, dot, extension = name.rpartition(".")
        if dot and 0 < len(extension) <= 16:
            name = stem[: MAX_FILENAME_CHARS - len(extension) - 1].rstrip() + "." + extension
        else:
            name = name[:MAX_FILENAME_CHARS].rstrip()
    return name
