"""Input fields shared by every schema of both services: bounded, strict and clean.

Every text input is a ``Text`` (with a maximum length), every list a ``List``
(with a maximum number of items), every integer an ``Integer`` (with a range),
so each limit shows in the OpenAPI document as ``maxLength``, ``maxItems``,
``minimum`` and ``maximum``.

- Text refuses control characters (``\\t``, ``\\n`` and ``\\r`` are allowed in
  multi-line text) and lone surrogates, which PostgreSQL cannot store (NUL) or
  UTF-8 cannot encode; it is trimmed before its length is checked, so a name of
  only spaces is refused instead of stored blank.
- Parsed JSON bodies are typed: integers there must be JSON integers (no
  ``1.5``, no ``"3"``) and booleans JSON booleans (no ``"yes"``). Query
  strings and HTML forms carry text by nature, so the same fields parse their
  text there. The API's argument parser marks JSON bodies (``json_body()``).
- Lists refuse too many items before looking at any, so an oversized list
  costs one length check and one error, not one per item.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from marshmallow import fields, utils
from marshmallow.validate import Length, OneOf, Range, Regexp

# C0 and C1 control characters, DEL, and surrogates (only lone ones survive JSON decoding).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
# The same, but tab, line feed and carriage return are part of multi-line text.
CONTROL_MULTILINE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
CONTROL_MESSAGE = "Must not contain control characters or invalid Unicode."
# CONTROL and CONTROL_MULTILINE as JSON Schema patterns, for the OpenAPI documents. Lone
# surrogates are left out: no valid JSON text holds one, and many regex engines (Rust's,
# ECMAScript's without the `u` flag) cannot name them in a class.
SINGLE_LINE_ALLOWED = "[^\\u0000-\\u001f\\u007f-\\u009f]"
EMAIL_MAX_LENGTH = 254
EMAIL_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*\\.[^\\u0000-\\u001f\\u007f-\\u009f.]{2,}$"
MULTILINE_ALLOWED = "[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]"

# Base-10 digits as text (no "1_000", no "١٢"); longer ones cannot pass any range here.
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]{1,30}")

_json_body: ContextVar[bool] = ContextVar("json_body", default=False)


@contextmanager
def json_body() -> Iterator[None]:
    """While loading a parsed JSON body: numbers and booleans must carry their JSON types."""
    token = _json_body.set(True)
    try:
        yield
    finally:
        _json_body.reset(token)


def _validators(first: list, extra: Any) -> list:
    if extra is None:
        return first
    return first + (list(extra) if isinstance(extra, list | tuple) else [extra])


def text_pattern(multiline: bool, *, not_blank: bool) -> str:
    """The characters a text may hold; with ``not_blank``, at least one that is not white space
    (the text is trimmed before its minimum length is checked)."""
    allowed = MULTILINE_ALLOWED if multiline else SINGLE_LINE_ALLOWED
    if not not_blank:
        return f"^{allowed}*$"
    # U+FEFF is no space to ``str.strip``, though ECMAScript's ``\\s`` counts it.
    visible = "(?:" + allowed.replace("[^", "[^\\s", 1) + "|\\ufeff)"
    return f"^{allowed}*{visible}{allowed}*$"


def _documented_pattern(validators: list) -> str | None:
    """A ``Regexp`` validator's rule as a JSON Schema pattern (ECMAScript has no ``\\Z``), so a
    client knows it in advance. Such rules (slugs, keys, colours) hold no control character,
    so this pattern says all the field's default one does."""
    for validator in validators:
        if isinstance(validator, Regexp):
            core = validator.regex.pattern.removeprefix("^").removesuffix("\\Z").removesuffix("$")
            return f"^(?:{core})$"
    return None


class Text(fields.String):
    """A bounded string without control characters, trimmed unless ``strip=False``.

    ``multiline`` allows tab and line breaks; ``strip=False`` keeps the text as
    sent (passwords, Markdown whose leading indentation means something).
    """

    default_error_messages = {
        "control": CONTROL_MESSAGE,
        "blank": "Must not be blank.",
        "too_short": "Shorter than minimum length {min}.",
        "too_long": "Longer than maximum length {max}.",
    }

    def __init__(
        self,
        *,
        max_length: int,
        min_length: int | None = None,
        multiline: bool = False,
        strip: bool = True,
        validate: Any = None,
        **kwargs: Any,
    ):
        validators = _validators([Length(min=min_length, max=max_length)], validate)
        rule = _documented_pattern(validators)
        self.max_length = max_length
        self.min_length = min_length
        self.multiline = multiline
        # A value checked against a stated pattern is taken as sent: trimmed, " #aabbcc" would be
        # accepted though the document (and its maxLength) says otherwise.
        self.strip = strip and rule is None
        # The Length validator documents the bounds (minLength / maxLength); the checks run
        # in _deserialize, before any other validator (an e-mail pattern never scans a
        # megabyte). The refused characters are in the document too.
        metadata = kwargs.pop("metadata", None) or {}
        metadata.setdefault(
            "pattern", rule or text_pattern(multiline, not_blank=bool(min_length) and self.strip)
        )
        super().__init__(validate=validators, metadata=metadata, **kwargs)

    def _deserialize(self, value, attr, data, **kwargs) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        if (CONTROL_MULTILINE if self.multiline else CONTROL).search(text):
            raise self.make_error("control")
        raw_length = len(text)
        # The maximum holds for the text as sent, as the document's maxLength says; the minimum
        # for the text trimmed (white space alone is blank).
        if raw_length > self.max_length:
            raise self.make_error("too_long", max=self.max_length)
        if self.strip:
            text = text.strip()
        if self.min_length and len(text) < self.min_length:
            # Only spaces is not "too short" to the person who typed them.
            raise self.make_error("blank" if raw_length and not text else "too_short", min=self.min_length)
        return text


class Email(Text, fields.Email):
    """An e-mail address: trimmed, at most 254 characters, then checked.

    RFC 5321 caps a mail path at 256 octets with its angle brackets, so no longer address
    can receive the verification or reset mail (the 320 of 64 + 1 + 255 is not a limit
    any server applies)."""

    def __init__(self, *, max_length: int = EMAIL_MAX_LENGTH, **kwargs: Any):
        metadata = kwargs.pop("metadata", None) or {}
        # The checker wants a top-level domain of two or more characters ("a@b.c" is refused).
        metadata.setdefault("pattern", EMAIL_PATTERN)
        super().__init__(max_length=max_length, metadata=metadata, **kwargs)


def password_field(*, min_length: int, max_length: int = 256, **kwargs: Any) -> Text:
    """A password is kept exactly as typed (spaces included), bounded like any text."""
    return Text(min_length=min_length, max_length=max_length, strip=False, **kwargs)


def choice(values: tuple[str, ...] | list[str], **kwargs: Any) -> Text:
    """One of ``values``, documented as an enum with its longest length."""
    return Text(max_length=max(len(v) for v in values), validate=OneOf(values), **kwargs)


class Integer(fields.Integer):
    """An integer within ``[minimum, maximum]``: a JSON integer in bodies, base-10 digits in text."""

    def __init__(self, *, minimum: int, maximum: int, validate: Any = None, **kwargs: Any):
        bounds = Range(min=minimum, max=maximum)
        super().__init__(strict=True, validate=_validators([bounds], validate), **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, str) and not _json_body.get():
            if _INTEGER_TEXT.fullmatch(value.strip()) is None:
                raise self.make_error("invalid", input=value)
            value = int(value)
        # strict: a float is refused rather than truncated, and so is a bool.
        return super()._validated(value)


class Boolean(fields.Boolean):
    """``true`` or ``false`` in JSON bodies; the usual words ("true", "1", "on"...) in text."""

    def _deserialize(self, value, attr, data, **kwargs) -> bool:
        if _json_body.get() and value is not True and value is not False:
            raise self.make_error("invalid", input=value)
        return super()._deserialize(value, attr, data, **kwargs)


class List(fields.List):
    """A list of at most ``max_items``, refused before any item is looked at when longer."""

    default_error_messages = {"too_many": "Must have at most {max} items."}

    def __init__(
        self, inner: Any, *, max_items: int, min_items: int | None = None, validate: Any = None, **kwargs: Any
    ):
        self.max_items = max_items
        bounds = Length(min=min_items, max=max_items)
        super().__init__(inner, validate=_validators([bounds], validate), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs) -> list:
        if utils.is_collection(value) and len(value) > self.max_items:
            raise self.make_error("too_many", max=self.max_items)
        return super()._deserialize(value, attr, data, **kwargs)
