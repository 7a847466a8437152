"""Files uploaded as ``multipart/form-data``, read as they arrive and sent back as downloads.

The request body is decoded from ``request.stream`` a chunk at a time (werkzeug's sans-IO
multipart decoder), so a file goes straight to where it is kept and never sits whole in a
worker's memory or in a temporary file. A body already parsed by werkzeug (a plain
form that carried its CSRF token as a field) is read from its spooled file, in chunks too.
A body that ends before the file does (a dropped connection) is refused, and so nothing
is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

from flask import Response, current_app, request
from werkzeug.http import parse_options_header
from werkzeug.sansio.multipart import Data, Epilogue, File, MultipartDecoder, NeedData

from services.tracker.attachments import Download, IncompleteUpload, Upload, missing_file

READ_BYTES = 64 * 1024
# What the decoder may hold at once (the chunk read and a boundary's worth left over): other
# form fields are skipped, never kept.
DECODER_BUFFER_BYTES = 4 * READ_BYTES
MAX_PARTS = 16
# The envelope around the file (boundaries, part headers, a CSRF field): a request body may be
# this much larger than the largest file.
MULTIPART_SLACK = 256 * 1024
# Downloads run nothing: no script, no plugin, no same-origin access, even if opened.
DOWNLOAD_CSP = "sandbox; default-src 'none'"


def body_limit() -> int:
    """The largest request body an upload route takes."""
    return current_app.config["MAX_ATTACHMENT_BYTES"] + MULTIPART_SLACK


def declared_file_bytes() -> int:
    """About how large the file is, from the declared body length (0 when not declared)."""
    return max(0, (request.content_length or 0) - MULTIPART_SLACK)


def file_upload(field: str = "file") -> Upload:
    """The request's file ``field``: the client's name for it and its bytes, as they arrive."""
    if "files" in request.__dict__:  # werkzeug parsed the form already
        stored = request.files.get(field)
        if stored is None or not stored.filename:
            raise missing_file(field)
        return Upload(stored.filename, iter(lambda: stored.stream.read(READ_BYTES), b""))
    mimetype, options = parse_options_header(request.headers.get("Content-Type", ""))
    boundary = options.get("boundary", "")
    if mimetype != "multipart/form-data" or not boundary:
        raise missing_file(field)
    events = _events(boundary.encode("latin-1", "replace"))
    for event in events:
        if isinstance(event, File) and event.name == field:
            return Upload(event.filename, _file_data(events))
    raise missing_file(field)


def _events(boundary: bytes) -> Iterator:
    decoder = MultipartDecoder(boundary, max_form_memory_size=DECODER_BUFFER_BYTES, max_parts=MAX_PARTS)
    stream = request.stream
    while True:
        data = stream.read(READ_BYTES)
        decoder.receive_data(data or None)
        event = _next(decoder)
        while not isinstance(event, NeedData):
            if isinstance(event, Epilogue):
                return
            yield event
            event = _next(decoder)
        if not data:
            raise IncompleteUpload()


def _next(decoder: MultipartDecoder):
    try:
        return decoder.next_event()
    except ValueError:  # the body ended (or broke off) inside a part
        raise IncompleteUpload() from None


def _file_data(events: Iterator) -> Iterator[bytes]:
    for event in events:
        if not isinstance(event, Data):
            break
        if event.data:
            yield event.data
        if not event.more_data:
            return
    raise IncompleteUpload()


def content_disposition(filename: str) -> str:
    """``attachment`` with the name as ASCII and, for any other character, RFC 6266's
    ``filename*`` (RFC 5987 UTF-8)."""
    ascii_name = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\' else "_" for ch in filename)
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


def download_response(download: Download, *, inline_image: bool = False) -> Response:
    """The file's bytes as they are read from the storage, never rendered by the browser as a
    page: an attachment (or a thumbnail the server made itself), no type sniffing, sandboxed."""
    response = Response(download.chunks, mimetype=download.content_type, direct_passthrough=True)
    if download.size_bytes is not None:
        response.content_length = download.size_bytes
    response.headers["Content-Disposition"] = (
        "inline" if inline_image else content_disposition(download.filename)
    )
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = DOWNLOAD_CSP
    response.headers["Cache-Control"] = "private, no-cache"
    return response
