"""URL converters whose failures become API errors instead of a bare 404."""

from __future__ import annotations

import uuid

from werkzeug.routing import BaseConverter


class InvalidPathValue(str):
    """A path segment that did not parse; the request is refused before the view runs."""


class LenientUUIDConverter(BaseConverter):
    """Matches any segment; a non-UUID becomes ``InvalidPathValue``.

    The stock spec answers a malformed uuid in the path with 422 and
    ``loc: ["path", name]``, which a strict converter (no route match -> 404)
    cannot express.
    """

    regex = r"[^/]+"

    def to_python(self, value: str):
        try:
            return uuid.UUID(value)
        except ValueError:
            return InvalidPathValue(value)

    def to_url(self, value) -> str:
        return str(value)


def uuid_converter_doc(_converter):
    return {"type": "string", "format": "uuid"}
