"""Markdown for the browser: the one place skill text becomes HTML (docs/contract.md §11).

Two layers, so a mistake in one is caught by the other: markdown-it-py with raw HTML disabled
(a ``<script>`` comes out as text; ``javascript:`` links are dropped), then nh3 with an
allowlist of exactly the tags markdown-it makes (no ``style`` or event attributes; http, https,
mailto and relative URLs; ``rel="noopener noreferrer nofollow"`` on every link). The console's
Content-Security-Policy allows no inline script besides."""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = frozenset(
    {
        "a", "blockquote", "br", "code", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "img",
        "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "code": {"class"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def render_markdown(text: str) -> str:
    """Sanitized HTML for ``text``; safe to mark as safe in a template."""
    html = _parser().render(text)
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(attrs) for tag, attrs in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        strip_comments=True,
    )
