"""Markdown for the browser: the one place skill text becomes HTML (docs/contract.md §11).

Two layers, so a mistake in one is caught by the other:

1. markdown-it-py ("commonmark" + tables + strikethrough) with raw HTML *disabled*: a ``<script>``
   or ``<img onerror=…>`` in a skill body comes out as escaped text, and markdown-it's own link
   validation drops ``javascript:``/``vbscript:``/``file:`` targets.
2. nh3 (ammonia) with a strict allowlist of exactly the tags markdown-it produces: no ``style``
   or event attributes, URLs limited to http, https, mailto and relative ones, and every link
   gets ``rel="noopener noreferrer nofollow"``.

The console also sends a Content-Security-Policy without inline scripts, so even a sanitizer
bypass could not run script in a reviewer's browser.
"""

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
