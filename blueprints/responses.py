"""JSON responses written by orjson: the app's JSON provider and the hot lists' direct responses.

A view that returns a ``Response`` skips flask-smorest's dump (its ``@blp.response``
still documents the body); the hot lists use ``json_response`` with rows shaped by
``schemas.fast.RowDumper``, and a whole batch streams with ``json_array_stream``.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from flask import Response, current_app, stream_with_context
from flask.json.provider import JSONProvider

MIMETYPE = "application/json"


def _default(value: Any) -> Any:
    # What orjson leaves out and Flask's own provider handled: decimals, sets, objects
    # that know their JSON (``__html__`` markup).
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, set | frozenset):
        return list(value)
    if hasattr(value, "__html__"):
        return str(value.__html__())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps_bytes(obj: Any, sort_keys: bool = False) -> bytes:
    option = orjson.OPT_SORT_KEYS if sort_keys else 0
    try:
        return orjson.dumps(obj, default=_default, option=option)
    except TypeError:
        # What orjson refuses and JSON allows (an integer past 64 bits, echoed back in a
        # validation error): the standard library writes it.
        text = json.dumps(
            obj, default=_default, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False
        )
        return text.encode()


class OrjsonProvider(JSONProvider):
    """Flask's JSON through orjson; keys stay sorted and output compact, as Flask's provider gives."""

    sort_keys = True

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return dumps_bytes(obj, sort_keys=kwargs.get("sort_keys", self.sort_keys)).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        obj = self._prepare_response_obj(args, kwargs)
        return self._app.response_class(dumps_bytes(obj, sort_keys=self.sort_keys), mimetype=MIMETYPE)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A body already in its wire shape, encoded once (no schema dump)."""
    return current_app.response_class(dumps_bytes(body), status=status, headers=headers, mimetype=MIMETYPE)


def json_array_stream(
    chunks: Iterable[list[dict[str, Any]] | bytes],
    prefix: bytes = b"",
    suffix: bytes = b"",
    status: int = 200,
) -> Response:
    """A JSON array written chunk by chunk while the rows are read: memory holds one chunk.

    A chunk is a list of values to encode, or ``bytes`` already encoded: array members joined
    by commas, as the database writes them. ``prefix`` and ``suffix`` wrap the array when it
    is a member of an object (``b'{"id": ..., "recomendacoes":'`` and ``b"}"``).
    """

    def generate() -> Iterator[bytes]:
        first = True
        yield prefix + b"["
        for chunk in chunks:
            if not chunk:
                continue
            encoded = chunk if isinstance(chunk, bytes) else dumps_bytes(chunk)[1:-1]
            yield encoded if first else b"," + encoded
            first = False
        yield b"]" + suffix

    return current_app.response_class(stream_with_context(generate()), status=status, mimetype=MIMETYPE)


def json_object_stream(
    head: dict[str, Any], member: str, chunks: Iterable[list[dict[str, Any]] | bytes]
) -> Response:
    """The object ``head`` with one more member, the array ``member``, streamed from ``chunks``."""
    opening = dumps_bytes(head)[:-1] + (b"," if head else b"") + dumps_bytes(member) + b":"
    return json_array_stream(chunks, prefix=opening, suffix=b"}")
