"""render_markdown: what a skill body can never smuggle into a reviewer's browser."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from skills_app.domain.markdown import ALLOWED_TAGS, render_markdown

HOSTILE = """# Title

<script>window.__xss = 1</script>
<img src=x onerror="window.__xss = 2">
<a href="javascript:window.__xss=3">raw link</a>
<iframe src="https://example.com"></iframe>
<div style="position:fixed" onclick="x()">raw div</div>

[md link](javascript:alert(1)) [upper](JaVaScRiPt:alert(1))
[data](data:text/html,<script>x</script>)
[vb](vbscript:msgbox) [entity](&#106;avascript:alert(1)) ![img](javascript:alert(1))
<svg><script>alert(1)</script></svg> <!-- comment -->
"""


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _tags(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Collect()
    parser.feed(html)
    return parser.tags


def test_hostile_markup_is_inert() -> None:
    html = render_markdown(HOSTILE)
    tags = _tags(html)
    assert {tag for tag, _ in tags} <= ALLOWED_TAGS
    assert "script" not in {tag for tag, _ in tags}
    for tag, attrs in tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert name != "style"
            if name in ("href", "src"):
                assert value is not None
                assert value.split(":", 1)[0].lower() in ("http", "https", "mailto") or (
                    ":" not in value.split("/", 1)[0]
                ), value
    # The raw HTML survives only as visible, escaped text.
    assert "&lt;script&gt;" in html
    assert "<!--" not in html


def test_ordinary_markdown_renders() -> None:
    html = render_markdown(
        "## Steps\n\n1. **Check** `ci`\n"
        "2. See [docs](https://example.com/x) and [local](notes.md)\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~\n\n```sh\necho hi\n```\n"
    )
    assert "<h2>Steps</h2>" in html
    assert "<strong>Check</strong>" in html
    assert "<table>" in html
    assert "<td>1</td>" in html
    assert "<s>old</s>" in html
    assert '<code class="language-sh">' in html
    assert 'href="https://example.com/x"' in html
    assert 'href="notes.md"' in html


@pytest.mark.parametrize("href", ["https://example.com", "mailto:a@example.com", "/w/x/"])
def test_links_get_a_safe_rel(href: str) -> None:
    html = render_markdown(f"[x]({href})")
    assert f'href="{href}"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
