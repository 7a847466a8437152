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

import json
import re
from typing import Any

import flask
import flask_smorest
from webargs import core
from webargs.flaskparser import FlaskParser, abort, is_json_request

from schemas.fields import json_body

MAX_DEPTH = 32
MAX_MEMBERS = 1000  # keys of one object; no body of either API has more than a few dozen
MAX_NUMBER_LENGTH = 40  # characters of one number literal; every integer field is far shorter

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class JSONBodyError(ValueError):
    """A body that is not JSON this application accepts; the message says why."""


def load_body(data: bytes | str) -> Any:
    """Parse a JSON request body within the bounds above, or raise ``ValueError``."""
    # Strict UTF-8: json.loads would decode bytes with "surrogatepass".
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    _check_depth(text)
    document = json.loads(
        text,
        parse_int=_integer,
        parse_float=_float,
        parse_constant=_constant,
        object_pairs_hook=_object,
    )
    # Surrogates only come from \\u escapes; paired ones decode to one character.
    if _SURROGATE_ESCAPE.search(text):
        _check_surrogates(document)
    return document


def _check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH without recursing: strip the strings, keep the
    brackets, and peel the innermost pairs off MAX_DEPTH times (each pass is one C loop)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    # UTF-8 never uses ASCII bytes inside a multi-byte character, so dropping every other
    # byte leaves exactly the brackets outside strings.
    brackets = _STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKET)
    for _ in range(MAX_DEPTH):
        # Pairs become a placeholder first, so "{[]}" loses one level per pass, not two.
        peeled = brackets.replace(b"[]", b".").replace(b"{}", b".").replace(b".", b"")
        if peeled == brackets:
            break
        brackets = peeled
    else:
        if brackets:
            raise JSONBodyError(f"nested deeper than {MAX_DEPTH} levels")
        return
    if brackets:
        raise JSONBodyError("brackets do not balance")


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


def _check_surrogates(document: Any) -> None:
    pending = [document]
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                raise JSONBodyError("a string holds a lone UTF-16 surrogate escape")
        elif isinstance(node, dict):
            pending.extend(node.keys())
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


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
    """webargs parser of both APIs: bounded JSON, and typed values in JSON bodies."""

    def load_json(self, req: flask.Request, schema) -> Any:
        if not is_json_request(req):
            return core.missing
        data = req.get_data(cache=True)
        if not data:
            return core.missing
        try:
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
