"""Checks every browser test can run on the page it is on: axe-core (from the npm
registry, `node_modules/axe-core`) for accessibility, and the width the page scrolls to."""

from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
# Violations at these levels fail a test.
BLOCKING = ("serious", "critical")


def axe_violations(page) -> list[dict]:
    """The serious and critical axe-core violations of the page as it is now.

    The script is evaluated through the DevTools protocol, not added as a <script>:
    the page's Content-Security-Policy stays untouched."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ['violations']});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ')), count: v.nodes.length}));
        }"""
    )
    return [v for v in result if v["impact"] in BLOCKING]


def assert_accessible(page) -> None:
    violations = axe_violations(page)
    assert not violations, f"axe-core on {page.url}: {violations}"


def scroll_width(page) -> int:
    """How wide the document scrolls: more than the viewport means the page scrolls sideways."""
    return page.evaluate("() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")


def widest(page, limit: int) -> list[str]:
    """The elements that reach past ``limit`` pixels, to say why a page overflows."""
    return page.evaluate(
        """(limit) => Array.from(document.querySelectorAll('body *'))
            .filter(e => e.getBoundingClientRect().right > limit + 1 && e.offsetParent !== null
                     && !e.closest('.table-wrap, .board, dialog:not([open])'))
            .slice(0, 8)
            .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + Array.from(e.classList).join('.')
                 + ' ' + Math.round(e.getBoundingClientRect().right))""",
        limit,
    )
