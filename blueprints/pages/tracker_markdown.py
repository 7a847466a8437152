"""Issue descriptions: Markdown to HTML, then sanitised, so nothing a member types can run."""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from services.tracker.comments import MENTION

# What Markdown can produce and a description may keep; everything else is stripped.
ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "img", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "th": {"align"},
    "td": {"align"},
    "ol": {"start"},
    "code": {"class"},
}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Raw HTML in the source is shown as text, never passed through.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
        ["table", "strikethrough"]
    )


def render_markdown(text: str | None, names: dict[str, str] | None = None) -> Markup:
    """Safe HTML for a Markdown text (links open with ``rel="noopener noreferrer nofollow"``).

    ``names`` (address -> name, lowercase addresses): an @mention of one of them reads as the
    person's name, the address in its title; code keeps what was typed."""
    if not text:
        return Markup("")
    html = _parser().render(text)
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    if names:
        clean = _named_mentions(clean, names)
    return Markup(clean)


# Code (inline or a block) and tags are kept as they are; mentions are read in the text between.
_KEPT = re.compile(r"(<pre>.*?</pre>|<code[^>]*>.*?</code>|<[^>]+>)", re.DOTALL)


def _named_mentions(html: str, names: dict[str, str]) -> str:
    def named(match: re.Match) -> str:
        address = match.group(1).rstrip(".")
        name = names.get(address.lower())
        if name is None:
            return match.group(0)
        rest = match.group(1)[len(address) :]
        return f'<span class="mention" title="{escape(address)}">@{escape(name)}</span>{rest}'

    parts = _KEPT.split(html)
    return "".join(part if i % 2 else MENTION.sub(named, part) for i, part in enumerate(parts))
