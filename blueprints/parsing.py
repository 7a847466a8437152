"""Request bodies parsed with bounded work, before any schema sees them.

``json.loads`` recurses once per nesting level (a body nested 1,000 deep is a
``RecursionError``), turns a digit string of any length into an int (the
conversion is quadratic and refused past 4,300 digits with a ``ValueError``
deep in the stack) and lets lone surrogates (``"\\udfff"``) through, which no
UTF-8 encoder accepts afterwards. ``load_body`` refuses all of these as
malformed JSON, which each service answers in its own dialect (422
``json_invalid`` on remanejamento, 400 ``VALIDATION_ERROR`` on the tracker).
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import flask
import flask_smorest
import marshmallow as ma
from webargs.flaskparser import FlaskParser, abort, is_json_request
from werkzeug.exceptions import UnsupportedMediaType

from extensions import MISSING_BODY
from schemas.fields import json_body

MAX_DEPTH = 32
MAX_MEMBERS = 1000  # keys of one object; no body of either API has more than a few dozen
MAX_NUMBER_LENGTH = 40  # characters of one number literal; every integer field is far shorter

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JSONBodyError(ValueError):
    """A body that is not JSON this application accepts; the message says why."""


def load_body(data: bytes | str) -> Any:
    """Parse a JSON request body within the bounds above, or raise ``ValueError``."""
    # Strict UTF-8: json.loads would decode bytes with "surrogatepass".
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    with _cyclic_gc_paused():
        try:
            document = json.loads(
                text,
                parse_int=_integer,
                parse_float=_float,
                parse_constant=_constant,
                object_pairs_hook=_object,
            )
        except RecursionError:
            # The C decoder gives up cleanly at the interpreter's recursion limit.
            raise JSONBodyError(f"nested deeper than {MAX_DEPTH} levels") from None
        # Fewer brackets than the limit cannot nest deeper than it: most bodies skip the walk.
        if text.count("[") + text.count("{") > MAX_DEPTH:
            _check_depth(document)
    # Surrogates only come from \\u escapes; paired ones decode to one character, lone
    # ones stay and make the UTF-8 encoding fail (keys included, at C speed).
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(document, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JSONBodyError("a string holds a lone UTF-16 surrogate escape") from None
    return document


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """A parsed body holds no reference cycles, yet a megabyte of tiny arrays makes the cyclic
    collector traverse them again and again (five times the parse itself); it waits instead."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _check_depth(document: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH, one level of containers at a time (no recursion)."""
    level = [document] if type(document) in (dict, list) else []
    for _ in range(MAX_DEPTH):
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) is dict or type(child) is list
        ]
        if not level:
            return
    raise JSONBodyError(f"nested deeper than {MAX_DEPTH} levels")


def _integer(literal: str) -> int:
    if len(literal) > MAX_NUMBER_LENGTH:
        raise JSONBodyError(f"a number is longer than {MAX_NUMBER_LENGTH} characters")
    return int(literal)


def _float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_LENGTH:
        raise JSONBodyError(f"a number is longer than {MAX_NUMBER_LENGTH} characters")
    return float(literal)


def _constant(name: str) -> Any:
    raise JSONBodyError(f"{name} is not a JSON value")


def _object(pairs: list[tuple[str, Any]]) -> dict:
    if len(pairs) > MAX_MEMBERS:
        raise JSONBodyError(f"an object has more than {MAX_MEMBERS} members")
    return dict(pairs)


class _BodyJSON:
    """What ``Request.get_json`` parses with (``json_module``)."""

    loads = staticmethod(load_body)
    dumps = staticmethod(flask.json.dumps)


class Request(flask.Request):
    """``request.get_json()`` within the same bounds as the API bodies (the sign-in
    throttle reads the e-mail before the schema does)."""

    @property
    def json_module(self):
        return _BodyJSON

    @json_module.setter
    def json_module(self, _provider) -> None:
        # Flask hands every request the app's JSON provider; bodies keep the bounded loader.
        pass


class Parser(FlaskParser):
    """webargs parser of both APIs: bodies as their documents declare them (JSON, and
    required), parsed within bounds, with typed values.

    A body in another media type answers 415 instead of being read as no body at
    all, and a missing (or empty) body fails validation at ``body`` like a missing
    field, instead of loading as ``{}``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._schemas: dict[type, ma.Schema] = {}

    def _get_schema(self, argmap, req) -> ma.Schema:
        # webargs builds a new instance of a schema class on every request, which copies every
        # declared field; loading keeps no state on the instance, so one per class serves all.
        if isinstance(argmap, type) and issubclass(argmap, ma.Schema):
            schema = self._schemas.get(argmap)
            if schema is None:
                schema = self._schemas[argmap] = argmap()
            return schema
        return super()._get_schema(argmap, req)

    def load_json(self, req: flask.Request, schema) -> Any:
        # Content-Length too: a form body may already have been read (the sign-in throttle's key).
        if not is_json_request(req) and (req.content_length or req.get_data(cache=True)):
            raise UnsupportedMediaType("Request bodies must be application/json")
        data = req.get_data(cache=True)
        if not data:
            # A schema whose body the document declares optional loads no body as {}.
            if getattr(schema, "OPTIONAL_BODY", False):
                return {}
            raise ma.ValidationError([MISSING_BODY])
        if isinstance(req, Request):
            # Parsed once per request: the sign-in throttle has often read it already.
            parsed = req.get_json(silent=True)
            if parsed is not None:
                return parsed
        try:
            # A refused body (or a literal null) is parsed again, for its reason.
            return load_body(data)
        except ValueError as exc:
            reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
            abort(400, exc=exc, messages={"json": [f"Invalid JSON body: {reason}."]})

    def parse(self, argmap, req=None, *, location: str | None = None, **kwargs) -> Any:
        if (location or self.location) != "json":
            return super().parse(argmap, req, location=location, **kwargs)
        with json_body():
            return super().parse(argmap, req, location=location, **kwargs)


class Blueprint(flask_smorest.Blueprint):
    """The API blueprints' base: arguments go through ``Parser``."""

    ARGUMENTS_PARSER = Parser()
