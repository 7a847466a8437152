"""Issue descriptions: Markdown to HTML, then sanitised, so nothing a member types can run."""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

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


def render_markdown(text: str | None) -> Markup:
    """Safe HTML for a Markdown text (links open with ``rel="noopener noreferrer nofollow"``)."""
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
    return Markup(clean)
